//! A tape's options: what it has room for, the family and precision of its delta rule, and
//! whether it records the backward. The layer's sizes and the batch layout are gdn-ref's
//! ([`crate::LayerConfig`], [`crate::Batch`]), one definition for every crate.

use crate::{Error, Family, LayerConfig, Precision, Result, Storage};

/// Options of a tape, fixed at its creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapeOptions {
    /// Room for an initial state `h0` per sequence (and its gradient `dh0`).
    pub initial_state: bool,
    /// Room for a gradient `dhT` arriving at the final state (a tape that records the backward only).
    pub final_state_grad: bool,
    /// The kernel family that computes the delta rule, with its knobs.
    ///
    /// | family | how | for |
    /// | --- | --- | --- |
    /// | [`Family::Recurrent`] `{ checkpoint_interval }` (32 by default) | token by token, the state in registers, checkpointed; the backward replays one interval at a time | forward-only use; training short batches of few heads; a few tokens a sequence in many heads; software adapters |
    /// | [`Family::Chunked`] `{ chunk }` (64 by default, 1–64; 16, 32, 48 or 64 on tensor cores) | the WY form: matrix products within a chunk, one pass carrying the state across chunks; the backward recomputes from the chunk starts | training on a GPU |
    ///
    /// `None` (the default) takes the one measured fastest on the adapter for what the tape
    /// records and its batch ([`crate::Context::picked_family_for_batch`] has the rule). Where that
    /// family's buffers would pass the device's binding or buffer limits at this batch, it takes
    /// another family that fits. Either way the tape fits the knob to its batch
    /// ([`Family::fitted`]); [`crate::Tape::family`] says what runs. Timings: BENCHMARKS.md.
    pub family: Option<Family>,
    /// The arithmetic of the chunked family's matrix products.
    ///
    /// [`Precision::F32`] (the default) runs everywhere. [`Precision::TensorCore`] takes f16
    /// operands and f32 accumulation on cooperative matrices where the adapter has them
    /// ([`crate::Context::supports`] says whether, and names what is missing). Each chunk's
    /// operands are packed in f16 once, each scaled by a power of two from a bound of its
    /// magnitudes (so `β → 0` keeps f16's precision) and scaled back in f32. The state, every
    /// accumulation, every decay and every element-wise step stay f32 under both. Heads whose dims
    /// are not multiples of 16 keep f32 products ([`Precision::suits`]).
    pub precision: Precision,
    /// Room for a conv state per sequence: its last `kk − 1` raw qkv tokens before this call,
    /// `[sequences, kk − 1, C]` token-major ([`crate::Tensor::ConvState`]), read where the conv
    /// reaches before a sequence's start; the final window after the call
    /// ([`crate::Tensor::FinalConvState`]); the gradient arriving at it and `dconv_state`.
    pub conv_state: bool,
    /// How the caller's activations and their gradients (qkv, z, a, b, out and their gradients)
    /// are stored: f32 (the default), bf16 or f16, two halves to a word.
    ///
    /// Four small kernels that need no extension widen them to f32 before each pass and round
    /// them back (to nearest, ties to even) after it. The states, the parameters and their
    /// gradients stay f32. The host calls take and give f32, rounding to the storage on the way in.
    /// Against gdn-ref on the same rounded inputs (`gdn-check/tests/half_storage.rs`):
    ///
    /// | storage | bar of every stored tensor |
    /// | --- | --- |
    /// | [`Storage::F32`] | the f32 bars |
    /// | [`Storage::Bf16`] | 4e-3 (a few times its rounding, 2⁻⁹) |
    /// | [`Storage::F16`] | 1e-3 (a few times its rounding, 2⁻¹²); gradients of the extreme gate regimes fall below its range and are reported, not judged |
    pub storage: Storage,
    /// Record the backward too (the default). `false` makes a forward-only tape for inference: no
    /// gradient, no backward scratch (a fraction of a full tape's memory), and
    /// [`crate::Tape::backward`] refuses with a typed error.
    pub backward: bool,
}

impl Default for TapeOptions {
    fn default() -> Self {
        Self {
            initial_state: false,
            final_state_grad: false,
            family: None,
            precision: Precision::F32,
            conv_state: false,
            backward: true,
            storage: Storage::F32,
        }
    }
}

/// Refuses an `rms_eps` that f32, the kernels' arithmetic, holds only as a subnormal or 0 (gdn-ref
/// takes any positive f64): a zero row would divide by it.
pub(crate) fn check_rms_eps(config: &LayerConfig) -> Result<()> {
    if (config.rms_eps as f32) < f32::MIN_POSITIVE {
        return Err(Error::Config {
            name: "rms_eps",
            reason: format!(
                "{:e} is below f32's smallest normal number ({:e}), the precision the kernels compute in",
                config.rms_eps,
                f32::MIN_POSITIVE
            ),
        });
    }
    Ok(())
}
