//! The gates, forward and backward: the decay `g` (from `ln g` as fla takes it, or from the
//! layer's logits `ln g = −exp(a_log)·softplus(a + dt_bias)`) and the write strength `β = σ(b)`.
//! The layer uses the logit forms; the core op either form, through the same functions.

use crate::scalar::{sigmoid, softplus};
use ndarray::ArrayView1;

/// Decay per (token, value head), `[N, nv]`.
pub(crate) struct Decay {
    /// `ln g`, kept directly so that `g → 0` stays finite.
    pub ln_g: Vec<f64>,
    /// `g`.
    pub g: Vec<f64>,
}

/// Gradients of the decay logits.
pub(crate) struct LogitGrads {
    /// `[N, nv]`.
    pub da: Vec<f64>,
    /// `[nv]`.
    pub da_log: Vec<f64>,
    /// `[nv]`.
    pub ddt_bias: Vec<f64>,
}

impl Decay {
    /// `g = exp(ln g)`.
    pub fn from_log(ln_g: Vec<f64>) -> Self {
        Self { g: ln_g.iter().map(|l| l.exp()).collect(), ln_g }
    }

    /// The layer's parameterisation over `a` (`[N, nv]`, `nv = a_log.len()`): returns
    /// `arg = a + dt_bias` and the decay of `ln g = −exp(a_log)·softplus(arg)`.
    pub fn from_logits(a: &[f64], a_log: ArrayView1<f64>, dt_bias: ArrayView1<f64>) -> (Vec<f64>, Self) {
        let nv = a_log.len();
        let arg: Vec<f64> = a.iter().enumerate().map(|(e, &a)| a + dt_bias[e % nv]).collect();
        let ln_g = arg.iter().enumerate().map(|(e, &x)| -a_log[e % nv].exp() * softplus(x)).collect();
        (arg, Self::from_log(ln_g))
    }

    /// `d ln g = dg·g`, for `dg` arriving at `g`.
    pub fn log_grad(&self, dg: &[f64]) -> Vec<f64> {
        dg.iter().zip(&self.g).map(|(d, g)| d * g).collect()
    }

    /// For `dln_g` arriving at `ln g` of [`Decay::from_logits`]: `da = dln_g·(−exp(a_log))·σ(arg)`,
    /// `ddt_bias = Σ da`, `da_log = Σ dln_g·ln g`, the sums over tokens.
    pub fn logits_backward(&self, a_log: ArrayView1<f64>, arg: &[f64], dln_g: &[f64]) -> LogitGrads {
        let nv = a_log.len();
        let mut grads = LogitGrads { da: vec![0.0; dln_g.len()], da_log: vec![0.0; nv], ddt_bias: vec![0.0; nv] };
        for (e, &d) in dln_g.iter().enumerate() {
            let h = e % nv;
            grads.da[e] = d * -a_log[h].exp() * sigmoid(arg[e]);
            grads.ddt_bias[h] += grads.da[e];
            grads.da_log[h] += d * self.ln_g[e];
        }
        grads
    }
}

/// `β = σ(b)`.
pub(crate) fn write_strength(b: &[f64]) -> Vec<f64> {
    b.iter().map(|&b| sigmoid(b)).collect()
}

/// `db = dβ·β(1 − β)`.
pub(crate) fn write_strength_backward(beta: &[f64], dbeta: &[f64]) -> Vec<f64> {
    dbeta.iter().zip(beta).map(|(d, &beta)| d * beta * (1.0 - beta)).collect()
}
