//! The Gated DeltaNet layer in f64: the oracle of the workspace.
//!
//! This crate computes, sequentially and in double precision, exactly the operator of
//! `shared/spec/operator.md` — the linear-attention layer of Qwen3-Next and Qwen3.5 without its
//! input and output projections:
//!
//! 1. causal depthwise convolution + SiLU over the raw `qkv` projection,
//! 2. L2-normalised `q`/`k` (with `1/√dk` folded into `q`),
//! 3. the decay gate `g = exp(−exp(a_log)·softplus(a + dt_bias))` and write strength `β = σ(b)`,
//! 4. the gated delta rule `S ← g·S; S += k̂ (β(v − Sᵀk̂))ᵀ; o = Sᵀq̂`, value heads sharing key heads,
//! 5. gated RMSNorm, norm before gate: `out = o·rsqrt(mean o² + ε)·norm·silu(z)`.
//!
//! [`Layer::backward`] is written by hand (no autodiff) and returns the gradients of the four input
//! streams, of the initial states, and of the layer's parameters (`a_log`, `dt_bias`, `norm`, `conv`).
//! Batches are either `B` sequences of `T` tokens or packed variable-length sequences described by
//! `cu_seqlens` offsets, each sequence with its own state. A sequence continues across calls through
//! two states: the recurrent state (`h0` in, `hT` out) and the conv window (`conv_state` in and out:
//! its last `kk − 1` raw qkv tokens, see [`LayerInputs`] for the layout and how it maps to Hugging
//! Face's `conv_states` cache); both have gradients.
//!
//! [`CoreOp`] is the gated delta rule alone (step 4's recurrence with `q`, `k`, `v` and the gates
//! given), in flash-linear-attention's `chunk_gated_delta_rule` convention: the decay as `ln g`
//! or the layer's logits, `β` or its logits, an optional in-op q/k L2 norm and a `scale` on q,
//! forward and hand-written backward. It runs the layer's own recurrence, L2 norm and gate code, so
//! kernels of the core op alone are judged by the same oracle.
//!
//! Every GPU kernel in the workspace is judged against this crate, so it favours obviousness over
//! speed: it keeps every state of a (sequence, head) in memory during the backward, and it is proven
//! by finite differences in its own test suite. [`sample`] draws the spec's test inputs and
//! [`compare`] implements the spec's error metric, so that every consumer measures the same way.
//!
//! ```
//! use gdn_ref::{Layer, LayerConfig, sample::{Regime, Sampler}};
//!
//! let config = LayerConfig::new(2, 4, 8, 6, 4)?; // nk, nv, dk, dv, kk
//! let mut sampler = Sampler::new(7);
//! let layer = Layer::new(config, sampler.params(&config, Regime::Typical))?;
//! let inputs = sampler.inputs(&config, &gdn_ref::Batch::Fixed { b: 2, t: 5 }, true, Regime::Typical);
//! let fwd = layer.forward(&inputs)?;
//! assert_eq!(fwd.out.shape(), &[2, 5, 4 * 6]);
//! let grads = layer.backward(&inputs, &gdn_ref::OutputGrads::new(fwd.out.mapv(|_| 1.0)))?;
//! assert!(grads.dh0.is_some());
//! # Ok::<(), gdn_ref::Error>(())
//! ```
#![forbid(unsafe_code)]
// The stages index several tensors with the same subscripts, as the spec's equations do.
#![allow(clippy::needless_range_loop)]

mod arrays;
mod backward;
mod batch;
pub mod compare;
mod config;
mod core_op;
mod error;
mod forward;
mod gates;
mod io;
mod l2norm;
mod layer;
mod parallel;
mod params;
mod recurrence;
mod rows;
pub mod sample;
mod scalar;
mod tensor;
mod window;

pub use batch::{Batch, Sequences};
pub use config::{L2_EPS, LayerConfig};
pub use core_op::{
    BetaGrad, BetaInput, CoreConfig, CoreForward, CoreGradients, CoreInputs, CoreOp, CoreOutputGrads, DecayGrad,
    DecayInput,
};
pub use error::Error;
pub use io::{ForwardResult, Gradients, LayerInputs, OutputGrads};
pub use layer::Layer;
pub use params::LayerParams;
pub use tensor::{Presence, Role, Tensor};
