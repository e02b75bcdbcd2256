//! The core op: the gated delta rule alone, in fla's `chunk_gated_delta_rule` convention, forward
//! and hand-written backward — the layer without its conv, its gate parameterisation (unless asked
//! for) and its RMSNorm.
//!
//! GPU kernels of the core op alone (fla's, ours) are checked against this, as the layer's are
//! against [`crate::Layer`]. It takes `q`, `k` `[B, T, nk, dk]` and `v` `[B, T, nv, dv]` (packed
//! `[1, Ttot, …]` with `cu_seqlens`), the decay as fla's `g = ln g` or as the layer's logits `a`
//! with `a_log`, `dt_bias`, the write strength as `β` or its logits `b`, an optional `h0`, and
//! computes, per sequence and value head `h` (key head `h / (nv/nk)`), from `S_0 = h0` (or zero):
//!
//! `q̂ = scale·q`, `k̂ = k` (each L2-normalised first when [`CoreConfig::qk_l2norm`] is on);
//! `S'_t = g_t·S_{t−1}`; `u_t = β_t (v_t − S'_tᵀk̂_t)`; `S_t = S'_t + k̂_t u_tᵀ`; `o_t = S_tᵀq̂_t`;
//! `hT = S_T`.
//!
//! The L2 norm, the gates and the recurrence are the layer's own code ([`crate::l2norm`],
//! [`crate::gates`], [`crate::recurrence`]), so with the in-op norm, the logit gates and
//! `scale = 1/√dk` the op applied to the layer's post-conv `q`, `k`, `v` gives the layer's
//! pre-norm `o` bit for bit (see the test in `layer_agreement`).
//!
//! ```
//! use gdn_ref::sample::{GateForm, Regime, Sampler};
//! use gdn_ref::{Batch, CoreConfig, CoreOp, CoreOutputGrads, DecayGrad};
//!
//! let config = CoreConfig::new(2, 4, 8, 6)?.with_qk_l2norm(true); // nk, nv, dk, dv
//! let batch = Batch::Packed { cu_seqlens: vec![0, 3, 8] };
//! let inputs = Sampler::new(7).core_inputs(&config, &batch, true, GateForm::Direct, Regime::Typical);
//! let op = CoreOp::new(config)?;
//! let fwd = op.forward(&inputs)?;
//! assert_eq!(fwd.o.shape(), &[1, 8, 4, 6]);
//! let grads = op.backward(&inputs, &CoreOutputGrads::new(fwd.o.mapv(|_| 1.0)))?;
//! assert!(matches!(grads.decay, DecayGrad::LogSpace(_)) && grads.dh0.is_some());
//! # Ok::<(), gdn_ref::Error>(())
//! ```

mod backward;
mod config;
mod forward;
mod io;
#[cfg(test)]
mod layer_agreement;

pub use config::CoreConfig;
pub use io::{BetaGrad, BetaInput, CoreForward, CoreGradients, CoreInputs, CoreOutputGrads, DecayGrad, DecayInput};

use crate::arrays::shaped;
use crate::{Error, recurrence};
use forward::Prepared;

/// The gated delta rule alone, with its configuration checked.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreOp {
    config: CoreConfig,
}

impl CoreOp {
    /// Checks `config`.
    pub fn new(config: CoreConfig) -> Result<Self, Error> {
        config.validate()?;
        Ok(Self { config })
    }

    /// The sizes and options.
    pub fn config(&self) -> &CoreConfig {
        &self.config
    }

    /// The forward: `o`, and the final state of every sequence.
    pub fn forward(&self, inputs: &CoreInputs) -> Result<CoreForward, Error> {
        let seqs = inputs.validate(&self.config)?;
        let x = Prepared::new(&self.config, inputs);
        let heads = self.config.heads();
        let out = recurrence::forward(&heads, &seqs, &x.streams(&self.config), x.h0.as_deref());
        Ok(CoreForward {
            o: shaped(inputs.v.raw_dim(), out.o),
            ht: shaped(ndarray::Dim(heads.state_shape(seqs.len())), out.ht),
        })
    }

    /// The backward for `grads` arriving at `o` (and `hT`): gradients of `q`, `k`, `v`, of the
    /// gates in the form they were given, and of `h0` when it was given.
    pub fn backward(&self, inputs: &CoreInputs, grads: &CoreOutputGrads) -> Result<CoreGradients, Error> {
        let seqs = inputs.validate(&self.config)?;
        grads.validate(&self.config, inputs, &seqs)?;
        Ok(backward::backward(&self.config, &seqs, inputs, grads))
    }
}
