//! The Gated DeltaNet layer — the linear attention of Qwen3-Next and Qwen3.5 — forward and
//! backward on any GPU that wgpu reaches (Vulkan, Metal, DX12, WebGPU), with no CUDA.
//!
//! - [`Context`] picks an adapter (`WGPU_BACKEND`, `WGPU_ADAPTER_NAME`, else the most capable),
//!   asks for everything it offers, and caches one compiled pipeline per kernel variant.
//! - [`Tape`] holds every device buffer of one layer for one batch shape — allocated once and
//!   reused by every training step — with forward and backward recorded against them.
//!   [`Tape::encode_forward`] / [`Tape::encode_backward`] record into the caller's encoder, so a
//!   training loop chains the layer with its own device work without a host round trip;
//!   [`Tape::run_forward`] / [`Tape::run_backward`] upload from and read back to host slices.
//! - [`WindowedTape`] runs a batch too large for one tape's buffers (over the device's binding
//!   limit, inside its memory) as a chain of tapes over windows of tokens, through the host.
//! - [`Decoder`] runs the forward for inference a step at a time — a few new tokens for each of
//!   many sequences — reading and updating their recurrent and conv states in place in a
//!   caller-owned [`StatePool`], addressed by slot (continuous batching), one fused kernel a step.
//! - Everything [`gdn_ref`](https://docs.rs/gdn-ref) computes is here: `h0`/`hT`, `dh0`/`dhT`,
//!   the conv window carried across calls ([`TapeOptions::conv_state`]: its last `kk − 1` raw qkv
//!   tokens in and out, its gradient in and out), the gradients of the four inputs and of the
//!   parameters (`a_log`, `dt_bias`, `norm`, `conv`), and packed variable-length batches
//!   ([`Batch::Packed`]).
//! - [`checkpoint`] reads one layer of a Qwen3.5 or Qwen3-Next safetensors checkpoint into the
//!   operator's layouts ([`checkpoint::LayerWeights`], [`checkpoint::LayerWeights::params`]).
//!
//! The kernels are `gdn_wgsl`'s; a [`Family`] decides how the delta rule runs. The recurrent family
//! runs the state recurrence serially in time with the state in registers, checkpointed; the
//! chunked family turns it into matrix products over chunks of tokens, for long sequences.
//!
//! The rules a caller meets live on the items they concern: which family runs on
//! [`TapeOptions::family`] and [`Context::picked_family_for_batch`]; tensor cores on
//! [`TapeOptions::precision`] and [`Context::supports`]; half-precision activations on
//! [`TapeOptions::storage`]; storage buffers per stage and an engine's own device on [`Context`]
//! and [`Context::from_wgpu`]; subgroups on [`Context::has_wide_subgroups`]; batches past the
//! binding limit on [`WindowedTape`]; software adapters' known limits on [`Context::is_software`].
//!
//! ```no_run
//! use gdn_train::{Batch, Context, Inputs, LayerConfig, Params, Tape, TapeOptions};
//!
//! let ctx = Context::new()?;
//! let config = LayerConfig::new(16, 32, 128, 128, 4)?;
//! let tape = Tape::new(&ctx, config, Batch::Fixed { b: 2, t: 1024 }, TapeOptions::default())?;
//! # let (a_log, dt_bias, norm, conv) = (vec![0.0; 32], vec![0.0; 32], vec![1.0; 128], vec![0.0; config.channels() * 4]);
//! # let tokens = 2 * 1024;
//! # let (qkv, z, a, b) = (vec![0.0; tokens * config.channels()], vec![0.0; tokens * 4096], vec![0.0; tokens * 32], vec![0.0; tokens * 32]);
//! tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv })?;
//! let fwd = tape.run_forward(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: None, conv_state: None })?;
//! let grads = tape.run_backward(&fwd.out, None)?;
//! # Ok::<(), gdn_train::Error>(())
//! ```

/// The README's Rust example, compiled by `cargo test -p gdn-train --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

mod buffers;
pub mod checkpoint;
mod config;
mod context;
mod decode;
mod error;
mod halves;
mod host;
mod loop_budget;
mod pipelines;
mod placement;
mod plan;
mod progress;
mod state_pool;
mod tape;
mod timestamps;
mod timing;
mod windowed;

pub use config::TapeOptions;
pub use context::{BoundsChecks, Context, ContextOptions, UNADVERTISED_TENSOR_CORES};
pub use decode::{DecodeBuffer, DecodeCapacity, DecodeInputs, Decoder, decode_kernel};
pub use error::{Error, Result};
pub use gdn_ref::{Batch, LayerConfig, Tensor};
pub use gdn_wgsl::plan::{Family, PlanError, Storage};
pub use gdn_wgsl::{Kernel, MAX_DECODE_TOKENS, NoVariant, Precision, UnsupportedDims};
pub use host::{Gradients, Inputs, Outputs, Params};
pub use loop_budget::LAVAPIPE_CHUNKED_TOKENS;
pub use pipelines::overridden as kernel_override;
pub use placement::CallerBuffer;
pub use state_pool::{SlotState, StatePool};
pub use tape::Tape;
pub use timing::{Clock, Pass};
pub use wgpu;
pub use windowed::WindowedTape;
