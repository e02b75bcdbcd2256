//! The layer's learnable parameters.

use crate::{Error, LayerConfig};
use ndarray::{Array1, Array2};

/// Parameters of one layer; `a_log`, `dt_bias`: `[nv]`, `norm`: `[dv]` (used as is, not `1 + w`),
/// `conv`: `[C, kk]` depthwise taps.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerParams {
    /// Log of the decay rate per value head.
    pub a_log: Array1<f64>,
    /// Bias added to the `a` logits per value head.
    pub dt_bias: Array1<f64>,
    /// Gated-RMSNorm weight, shared by all heads.
    pub norm: Array1<f64>,
    /// Causal conv taps, `conv[c, j]` multiplies `x[t − (kk − 1) + j, c]`.
    pub conv: Array2<f64>,
}

impl LayerParams {
    /// Checks every shape against `config`.
    pub fn validate(&self, config: &LayerConfig) -> Result<(), Error> {
        check_shape("a_log", self.a_log.shape(), &[config.nv])?;
        check_shape("dt_bias", self.dt_bias.shape(), &[config.nv])?;
        check_shape("norm", self.norm.shape(), &[config.dv])?;
        check_shape("conv", self.conv.shape(), &[config.channels(), config.kk])?;
        check_finite("a_log", self.a_log.iter())?;
        check_finite("dt_bias", self.dt_bias.iter())?;
        check_finite("norm", self.norm.iter())?;
        check_finite("conv", self.conv.iter())
    }
}

/// `Err(Error::Shape)` unless `got == expected`.
pub(crate) fn check_shape(name: &'static str, got: &[usize], expected: &[usize]) -> Result<(), Error> {
    if got == expected { Ok(()) } else { Err(Error::Shape { name, expected: expected.to_vec(), got: got.to_vec() }) }
}

/// `Err(Error::NotFinite)` at the first NaN or infinity.
pub(crate) fn check_finite<'a>(name: &'static str, values: impl Iterator<Item = &'a f64>) -> Result<(), Error> {
    match values.enumerate().find(|(_, v)| !v.is_finite()) {
        Some((index, &value)) => Err(Error::NotFinite { name, index, value }),
        None => Ok(()),
    }
}
