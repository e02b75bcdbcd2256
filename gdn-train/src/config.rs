//! A tape's options: what it has room for, the family and precision of its delta rule, and
//! whether it records the backward. The layer's sizes and the batch layout are gdn-ref's
//! ([`crate::LayerConfig`], [`crate::Batch`]), one definition for every crate.

use crate::{Family, Precision, Storage};

/// Options of a tape, fixed at its creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapeOptions {
    /// Room for an initial state `h0` per sequence (and its gradient `dh0`).
    pub initial_state: bool,
    /// Room for a gradient `dhT` arriving at the final state.
    pub final_state_grad: bool,
    /// The kernel family that computes the delta rule, with its knobs; `None` (the default) takes
    /// the one measured fastest on the adapter for the passes the tape records
    /// ([`crate::Context::picked_family_for_batch`]: the recurrent family to train short batches
    /// of few heads in f32 on a GPU, else [`crate::Context::picked_family`]'s with its chunk set
    /// for the batch by [`Family::for_batch`], 32 tokens where 64 would leave few jobs), or, where
    /// that family's buffers would pass the device's binding or buffer limits at this batch,
    /// another family that fits. Either way the
    /// tape fits the knob to its batch ([`Family::fitted`]); [`crate::Tape::family`] says what
    /// runs.
    pub family: Option<Family>,
    /// The arithmetic of the chunked family's matrix products: f32 (the default), or f16 operands
    /// on tensor cores where the adapter has them ([`crate::Context::supports`]).
    pub precision: Precision,
    /// Room for a conv state per sequence: its last `kk − 1` raw qkv tokens before this call,
    /// `[sequences, kk − 1, C]` token-major ([`crate::Tensor::ConvState`]), read where the conv
    /// reaches before a sequence's start; the final window after the call
    /// ([`crate::Tensor::FinalConvState`]); the gradient arriving at it and `dconv_state`.
    pub conv_state: bool,
    /// How the caller's activations and their gradients (qkv, z, a, b, out and their gradients)
    /// are stored: f32 (the default), bf16 or f16, two halves to a word. The kernels compute in
    /// f32 from copies widened before each pass; the states, the parameters and their gradients
    /// stay f32. The host calls take and give f32, rounding to the storage (to nearest, ties to
    /// even) on the way in.
    pub storage: Storage,
    /// Record the backward too (the default). `false` makes a forward-only tape for inference: no
    /// gradient, no backward scratch, and [`crate::Tape::backward`] refuses.
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
