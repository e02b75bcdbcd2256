//! Conversions between the ndarray tensors of the public API and the flat row-major buffers the
//! stages work on, for the layer and the core op alike.

use ndarray::{Array, ArrayBase, Data, Dimension};
use std::borrow::Cow;

/// The elements in row-major order, borrowed when the array already is.
pub(crate) fn flat<S: Data<Elem = f64>, D: Dimension>(array: &ArrayBase<S, D>) -> Cow<'_, [f64]> {
    match array.as_slice() {
        Some(slice) => Cow::Borrowed(slice),
        None => Cow::Owned(array.iter().copied().collect()),
    }
}

/// A row-major array of `dim` over `data`, whose length the stages guarantee.
pub(crate) fn shaped<D: Dimension>(dim: D, data: Vec<f64>) -> Array<f64, D> {
    Array::from_shape_vec(dim, data).expect("stage produced a buffer of the tensor's size")
}
