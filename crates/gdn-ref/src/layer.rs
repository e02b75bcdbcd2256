//! [`Layer`]: the public entry points, which check every argument and convert between ndarray
//! tensors and the flat buffers the stages work on.

use crate::backward::backward;
use crate::forward::{Activations, Flat};
use crate::io::state_shape;
use crate::{Error, ForwardResult, Gradients, LayerConfig, LayerInputs, LayerParams, OutputGrads};
use ndarray::{Array, Array1, ArrayBase, Data, Dimension};
use std::borrow::Cow;

/// One Gated DeltaNet layer: its sizes and parameters, checked against each other.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    config: LayerConfig,
    params: LayerParams,
}

impl Layer {
    /// Checks `params` against `config`.
    pub fn new(config: LayerConfig, params: LayerParams) -> Result<Self, Error> {
        config.validate()?;
        params.validate(&config)?;
        Ok(Self { config, params })
    }

    /// The sizes.
    pub fn config(&self) -> &LayerConfig {
        &self.config
    }

    /// The parameters.
    pub fn params(&self) -> &LayerParams {
        &self.params
    }

    /// The forward: `out` and the final state of every sequence.
    pub fn forward(&self, inputs: &LayerInputs) -> Result<ForwardResult, Error> {
        let seqs = inputs.validate(&self.config)?;
        let (qkv, z, a, b, h0) = flat_inputs(inputs);
        let x = Flat { qkv: &qkv, z: &z, a: &a, b: &b, h0: h0.as_deref() };
        let act = Activations::compute(&self.config, &self.params, &seqs, &x);
        let out = act.output(&self.config, &self.params, &z);
        Ok(ForwardResult {
            out: shaped(inputs.z.raw_dim(), out),
            ht: shaped(ndarray::Dim(state_shape(&self.config, seqs.len())), act.ht),
        })
    }

    /// The backward for `grads` arriving at `out` (and `hT`): gradients of the inputs, of `h0`
    /// when it was given, and of the parameters.
    pub fn backward(&self, inputs: &LayerInputs, grads: &OutputGrads) -> Result<Gradients, Error> {
        let seqs = inputs.validate(&self.config)?;
        grads.validate(&self.config, inputs, &seqs)?;
        let (qkv, z, a, b, h0) = flat_inputs(inputs);
        let x = Flat { qkv: &qkv, z: &z, a: &a, b: &b, h0: h0.as_deref() };
        let dout = flat(&grads.dout);
        let dht = grads.dht.as_ref().map(flat);
        let g = backward(&self.config, &self.params, &seqs, &x, &dout, dht.as_deref());
        let c = &self.config;
        Ok(Gradients {
            dqkv: shaped(inputs.qkv.raw_dim(), g.dqkv),
            dz: shaped(inputs.z.raw_dim(), g.dz),
            da: shaped(inputs.a.raw_dim(), g.da),
            db: shaped(inputs.b.raw_dim(), g.db),
            dh0: inputs.h0.as_ref().map(|h0| shaped(h0.raw_dim(), g.dh0)),
            da_log: Array1::from(g.da_log),
            ddt_bias: Array1::from(g.ddt_bias),
            dnorm: Array1::from(g.dnorm),
            dconv: shaped(ndarray::Ix2(c.channels(), c.kk), g.dconv),
        })
    }
}

type FlatInputs<'a> = (Cow<'a, [f64]>, Cow<'a, [f64]>, Cow<'a, [f64]>, Cow<'a, [f64]>, Option<Cow<'a, [f64]>>);

fn flat_inputs(inputs: &LayerInputs) -> FlatInputs<'_> {
    (flat(&inputs.qkv), flat(&inputs.z), flat(&inputs.a), flat(&inputs.b), inputs.h0.as_ref().map(flat))
}

/// The elements in row-major order, borrowed when the array already is.
fn flat<S: Data<Elem = f64>, D: Dimension>(array: &ArrayBase<S, D>) -> Cow<'_, [f64]> {
    match array.as_slice() {
        Some(slice) => Cow::Borrowed(slice),
        None => Cow::Owned(array.iter().copied().collect()),
    }
}

/// A row-major array of `dim` over `data`, whose length the stages guarantee.
fn shaped<D: Dimension>(dim: D, data: Vec<f64>) -> Array<f64, D> {
    Array::from_shape_vec(dim, data).expect("stage produced a buffer of the tensor's size")
}
