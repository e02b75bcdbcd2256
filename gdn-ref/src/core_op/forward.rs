//! The core op's forward up to the recurrence: flat views of its inputs, `q̂` and `k̂` (scaled,
//! L2-normalised first when asked), and the gates in whichever form they came. The recurrence
//! itself is the layer's ([`crate::recurrence`]).

use super::{BetaInput, CoreConfig, CoreInputs, DecayInput};
use crate::arrays::flat;
use crate::gates::{Decay, write_strength};
use crate::l2norm::{Normalized, normalize, normalize_backward};
use crate::recurrence::Streams;
use crate::rows::HeadRows;
use ndarray::ArrayView1;
use std::borrow::Cow;

/// `q̂` or `k̂`: the input times its scale, L2-normalised first when the op does that.
pub(crate) struct Hat {
    /// `x̂ = x·scale / sqrt(Σx² + ε₂)`, or `x·scale` without the norm, `[N, nk, dk]`.
    pub values: Vec<f64>,
    /// `Σx² + ε₂` (`[N, nk]`) when normalised.
    ss: Option<Vec<f64>>,
    scale: f64,
}

impl Hat {
    /// `x̂` of `x`, `q` or `k` (`[N, nk, dk]`).
    fn new(config: &CoreConfig, x: &[f64], scale: f64) -> Self {
        let rows = HeadRows::dense(config.nk, config.dk);
        if config.qk_l2norm {
            let Normalized { hat, ss } = normalize(x, rows, x.len() / rows.stride, config.nk, scale);
            Self { values: hat, ss: Some(ss), scale }
        } else {
            Self { values: x.iter().map(|v| v * scale).collect(), ss: None, scale }
        }
    }

    /// `dx` for `d_hat` arriving at `x̂`, `x` being what this was made of.
    pub fn backward(&self, config: &CoreConfig, x: &[f64], d_hat: &[f64]) -> Vec<f64> {
        match &self.ss {
            Some(ss) => {
                let mut dx = vec![0.0; x.len()];
                let rows = HeadRows::dense(config.nk, config.dk);
                normalize_backward(x, rows, config.nk, ss, d_hat, self.scale, &mut dx);
                dx
            }
            None => d_hat.iter().map(|d| d * self.scale).collect(),
        }
    }
}

/// The decay logits' `arg = a + dt_bias` (`[N, nv]`) and `a_log`.
pub(crate) struct DecayLogits<'a> {
    pub arg: Vec<f64>,
    pub a_log: ArrayView1<'a, f64>,
}

/// Everything the core op's forward computes before the recurrence, and the flat inputs.
pub(crate) struct Prepared<'a> {
    /// `q`, `[N, nk, dk]`.
    pub q: Cow<'a, [f64]>,
    /// `k`, `[N, nk, dk]`.
    pub k: Cow<'a, [f64]>,
    /// `v`, `[N, nv, dv]`.
    pub v: Cow<'a, [f64]>,
    /// `h0`, `[N_seq, nv, dk, dv]`.
    pub h0: Option<Cow<'a, [f64]>>,
    /// `q̂ = scale·q` (normalised first when asked).
    pub q_hat: Hat,
    /// `k̂ = k` (normalised when asked).
    pub k_hat: Hat,
    /// What the decay's backward needs when the decay came as logits.
    pub logits: Option<DecayLogits<'a>>,
    /// `ln g` and `g`, `[N, nv]`.
    pub decay: Decay,
    /// `β`, `[N, nv]`.
    pub beta: Vec<f64>,
}

impl<'a> Prepared<'a> {
    /// Flattens `inputs` (already validated against `config`) and computes `q̂`, `k̂`, `g`, `β`.
    pub fn new(config: &CoreConfig, inputs: &'a CoreInputs) -> Self {
        let (q, k) = (flat(&inputs.q), flat(&inputs.k));
        let (logits, decay) = match &inputs.decay {
            DecayInput::LogSpace(g) => (None, Decay::from_log(flat(g).into_owned())),
            DecayInput::Logits { a, a_log, dt_bias } => {
                let (arg, decay) = Decay::from_logits(&flat(a), a_log.view(), dt_bias.view());
                (Some(DecayLogits { arg, a_log: a_log.view() }), decay)
            }
        };
        let beta = match &inputs.beta {
            BetaInput::Direct(beta) => flat(beta).into_owned(),
            BetaInput::Logits(b) => write_strength(&flat(b)),
        };
        Self {
            q_hat: Hat::new(config, &q, config.scale),
            k_hat: Hat::new(config, &k, 1.0),
            q,
            k,
            v: flat(&inputs.v),
            h0: inputs.h0.as_ref().map(flat),
            logits,
            decay,
            beta,
        }
    }

    /// What the recurrence reads.
    pub fn streams(&self, config: &CoreConfig) -> Streams<'_> {
        Streams {
            q_hat: &self.q_hat.values,
            k_hat: &self.k_hat.values,
            v: &self.v,
            v_rows: HeadRows::dense(config.nv, config.dv),
            g: &self.decay.g,
            beta: &self.beta,
        }
    }
}
