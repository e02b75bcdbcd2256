//! What the core op takes and gives back, in fla's `chunk_gated_delta_rule` convention, and the
//! checks of every argument against the configuration and the batch.

use super::CoreConfig;
use crate::params::{check_finite, check_shape};
use crate::{Batch, Error, Sequences};
use ndarray::{Array1, Array3, Array4, ArrayViewD};

/// The decay, in either of its two forms.
#[derive(Debug, Clone, PartialEq)]
pub enum DecayInput {
    /// fla's `g`: `ln g` per (token, value head), `[B, T, nv]`.
    LogSpace(Array3<f64>),
    /// The layer's parameterisation, `ln g = −exp(a_log)·softplus(a + dt_bias)`.
    Logits {
        /// Decay logits, `[B, T, nv]`.
        a: Array3<f64>,
        /// `[nv]`.
        a_log: Array1<f64>,
        /// `[nv]`.
        dt_bias: Array1<f64>,
    },
}

/// The write strength, in either of its two forms.
#[derive(Debug, Clone, PartialEq)]
pub enum BetaInput {
    /// fla's `beta`: `β` per (token, value head), `[B, T, nv]`.
    Direct(Array3<f64>),
    /// The layer's logits `b`, `β = σ(b)`, `[B, T, nv]`.
    Logits(Array3<f64>),
}

/// Inputs of one core-op call: `q`, `k`, `v`, the gates, the optional initial states and, for a
/// packed batch, the sequence offsets.
///
/// Token-major tensors are `[B, T, …]`, or `[1, Ttot, …]` when `cu_seqlens` is given, as in fla.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreInputs {
    /// Queries, `[B, T, nk, dk]`.
    pub q: Array4<f64>,
    /// Keys, `[B, T, nk, dk]`.
    pub k: Array4<f64>,
    /// Values, `[B, T, nv, dv]`; value head `h` reads key head `h / (nv / nk)`.
    pub v: Array4<f64>,
    /// The decay `g`.
    pub decay: DecayInput,
    /// The write strength `β`.
    pub beta: BetaInput,
    /// Initial state per sequence, `[N, nv, dk, dv]` (`S[i][j]`, `i` over dk); zero when absent.
    pub h0: Option<Array4<f64>>,
    /// Offsets of packed sequences, `[0, …, Ttot]`; `None` for `B` sequences of `T` tokens.
    pub cu_seqlens: Option<Vec<usize>>,
}

/// Result of a core-op forward.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreForward {
    /// `o_t = S_tᵀ(scale·q̂_t)`, `[B, T, nv, dv]`.
    pub o: Array4<f64>,
    /// Final state of every sequence, `[N, nv, dk, dv]`.
    pub ht: Array4<f64>,
}

/// Gradients arriving at the core op's outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreOutputGrads {
    /// Gradient of `o`, `[B, T, nv, dv]`.
    pub d_o: Array4<f64>,
    /// Gradient of the final state `hT`, `[N, nv, dk, dv]`; zero when absent.
    pub dht: Option<Array4<f64>>,
}

/// Gradient of the decay, in the form the decay was given.
#[derive(Debug, Clone, PartialEq)]
pub enum DecayGrad {
    /// `d ln g`, `[B, T, nv]`.
    LogSpace(Array3<f64>),
    /// Gradients of the logits and of the two parameters.
    Logits {
        /// `[B, T, nv]`.
        da: Array3<f64>,
        /// `[nv]`.
        da_log: Array1<f64>,
        /// `[nv]`.
        ddt_bias: Array1<f64>,
    },
}

/// Gradient of the write strength, in the form it was given.
#[derive(Debug, Clone, PartialEq)]
pub enum BetaGrad {
    /// `dβ`, `[B, T, nv]`.
    Direct(Array3<f64>),
    /// `db`, `[B, T, nv]`.
    Logits(Array3<f64>),
}

/// Gradients of everything the core op reads.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreGradients {
    /// `[B, T, nk, dk]`.
    pub dq: Array4<f64>,
    /// `[B, T, nk, dk]`.
    pub dk: Array4<f64>,
    /// `[B, T, nv, dv]`.
    pub dv: Array4<f64>,
    /// The decay's gradient, in its input's form.
    pub decay: DecayGrad,
    /// The write strength's gradient, in its input's form.
    pub beta: BetaGrad,
    /// `[N, nv, dk, dv]`, present when the inputs had `h0`.
    pub dh0: Option<Array4<f64>>,
}

impl CoreOutputGrads {
    /// Gradient of `o` only.
    pub fn new(d_o: Array4<f64>) -> Self {
        Self { d_o, dht: None }
    }

    pub(crate) fn validate(&self, config: &CoreConfig, inputs: &CoreInputs, seqs: &Sequences) -> Result<(), Error> {
        let [b, t] = inputs.token_dims();
        check_shape("d_o", self.d_o.shape(), &[b, t, config.nv, config.dv])?;
        check_finite("d_o", self.d_o.iter())?;
        if let Some(dht) = &self.dht {
            check_shape("dht", dht.shape(), &config.heads().state_shape(seqs.len()))?;
            check_finite("dht", dht.iter())?;
        }
        Ok(())
    }
}

impl CoreInputs {
    /// The batch layout these inputs describe.
    pub fn batch(&self) -> Batch {
        match &self.cu_seqlens {
            Some(cu_seqlens) => Batch::Packed { cu_seqlens: cu_seqlens.clone() },
            None => Batch::Fixed { b: self.q.shape()[0], t: self.q.shape()[1] },
        }
    }

    /// Checks every shape against `config` and the batch, and every value is finite; returns the
    /// sequences.
    pub fn validate(&self, config: &CoreConfig) -> Result<Sequences, Error> {
        let [b, t] = self.token_dims();
        let (nk, dk) = (config.nk, config.dk);
        if self.cu_seqlens.is_some() && b != 1 {
            return Err(Error::Shape { name: "q", expected: vec![1, t, nk, dk], got: self.q.shape().to_vec() });
        }
        let seqs = Sequences::new(&self.batch(), Some(b * t))?;
        let tensors = self.tensors(config, seqs.len());
        for (name, tensor, expected) in &tensors {
            check_shape(name, tensor.shape(), expected)?;
        }
        for (name, tensor, _) in &tensors {
            check_finite(name, tensor.iter())?;
        }
        Ok(seqs)
    }

    /// Every tensor present, by its name, with the shape it must have.
    fn tensors(&self, config: &CoreConfig, sequences: usize) -> Vec<(&'static str, ArrayViewD<'_, f64>, Vec<usize>)> {
        let [b, t] = self.token_dims();
        let (nk, nv, dk, dv) = (config.nk, config.nv, config.dk, config.dv);
        let gates = vec![b, t, nv];
        let mut tensors = vec![
            ("q", self.q.view().into_dyn(), vec![b, t, nk, dk]),
            ("k", self.k.view().into_dyn(), vec![b, t, nk, dk]),
            ("v", self.v.view().into_dyn(), vec![b, t, nv, dv]),
        ];
        match &self.decay {
            DecayInput::LogSpace(g) => tensors.push(("g", g.view().into_dyn(), gates.clone())),
            DecayInput::Logits { a, a_log, dt_bias } => tensors.extend([
                ("a", a.view().into_dyn(), gates.clone()),
                ("a_log", a_log.view().into_dyn(), vec![nv]),
                ("dt_bias", dt_bias.view().into_dyn(), vec![nv]),
            ]),
        }
        tensors.push(match &self.beta {
            BetaInput::Direct(beta) => ("beta", beta.view().into_dyn(), gates),
            BetaInput::Logits(logits) => ("b", logits.view().into_dyn(), gates),
        });
        if let Some(h0) = &self.h0 {
            tensors.push(("h0", h0.view().into_dyn(), config.heads().state_shape(sequences).to_vec()));
        }
        tensors
    }

    /// The leading two dims of every token-major tensor, read off `q`.
    pub(crate) fn token_dims(&self) -> [usize; 2] {
        [self.q.shape()[0], self.q.shape()[1]]
    }
}
