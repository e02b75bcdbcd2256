//! [`TapeBuffer`]: the buffers of a tape that a caller reads or writes, by name.

use crate::Pass;

/// The tape's buffers a caller reads or writes, for chaining with its own device work.
///
/// Token-major tensors are `[tokens, …]` row-major, f32: `tokens = B·T` (or `Ttot`); states are
/// `[sequences, nv, dk, dv]`; conv windows are `[sequences, kk − 1, C]`, token-major like qkv and
/// oldest first (slot `kk − 2` is the token just before the sequence's first), the layout of
/// `gdn_ref::LayerInputs::conv_state` (whose docs map it to Hugging Face's `conv_states`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TapeBuffer {
    /// Input: raw qkv projection, `[tokens, C]`.
    Qkv,
    /// Input: output-gate logits, `[tokens, nv·dv]`.
    Z,
    /// Input: decay logits, `[tokens, nv]`.
    A,
    /// Input: write-strength logits, `[tokens, nv]`.
    B,
    /// Input: initial states (tapes with `initial_state`).
    H0,
    /// Parameter `[nv]`.
    ALog,
    /// Parameter `[nv]`.
    DtBias,
    /// Parameter `[dv]`.
    Norm,
    /// Parameter `[C, kk]`.
    Conv,
    /// Output of the forward, `[tokens, nv·dv]`.
    Out,
    /// Final states written by the forward.
    Ht,
    /// Input of the backward: gradient of `out`.
    Dout,
    /// Input of the backward: gradient of the final states (tapes with `final_state_grad`).
    Dht,
    /// Gradient of `qkv`.
    Dqkv,
    /// Gradient of `z`.
    Dz,
    /// Gradient of `a`.
    Da,
    /// Gradient of `b`.
    Db,
    /// Gradient of `h0` (tapes with `initial_state`).
    Dh0,
    /// Gradient of `a_log`.
    DaLog,
    /// Gradient of `dt_bias`.
    DdtBias,
    /// Gradient of `norm`.
    Dnorm,
    /// Gradient of `conv`.
    Dconv,
    /// Input: the conv window before each sequence (tapes with `conv_state`).
    ConvState,
    /// Output of the forward: the conv window after each sequence (tapes with `conv_state`).
    FinalConvState,
    /// Input of the backward: gradient of the final conv window (tapes with `conv_state`; zero
    /// until written, then kept until overwritten).
    DfinalConvState,
    /// Gradient of the input conv window (tapes with `conv_state`).
    DconvState,
}

impl TapeBuffer {
    /// The pass whose kernels write it; `None` for a buffer the caller writes.
    pub(crate) fn computed_by(self) -> Option<Pass> {
        match self {
            TapeBuffer::Out | TapeBuffer::Ht | TapeBuffer::FinalConvState => Some(Pass::Forward),
            TapeBuffer::Dqkv
            | TapeBuffer::Dz
            | TapeBuffer::Da
            | TapeBuffer::Db
            | TapeBuffer::Dh0
            | TapeBuffer::DaLog
            | TapeBuffer::DdtBias
            | TapeBuffer::Dnorm
            | TapeBuffer::Dconv
            | TapeBuffer::DconvState => Some(Pass::Backward),
            TapeBuffer::Qkv
            | TapeBuffer::Z
            | TapeBuffer::A
            | TapeBuffer::B
            | TapeBuffer::H0
            | TapeBuffer::ALog
            | TapeBuffer::DtBias
            | TapeBuffer::Norm
            | TapeBuffer::Conv
            | TapeBuffer::Dout
            | TapeBuffer::Dht
            | TapeBuffer::ConvState
            | TapeBuffer::DfinalConvState => None,
        }
    }

    /// The binding name the kernels use for it.
    pub fn name(self) -> &'static str {
        match self {
            TapeBuffer::Qkv => "qkv",
            TapeBuffer::Z => "z",
            TapeBuffer::A => "a",
            TapeBuffer::B => "b",
            TapeBuffer::H0 => "h0",
            TapeBuffer::ALog => "a_log",
            TapeBuffer::DtBias => "dt_bias",
            TapeBuffer::Norm => "norm",
            TapeBuffer::Conv => "conv",
            TapeBuffer::Out => "out",
            TapeBuffer::Ht => "ht",
            TapeBuffer::Dout => "dout",
            TapeBuffer::Dht => "dht",
            TapeBuffer::Dqkv => "dqkv",
            TapeBuffer::Dz => "dz",
            TapeBuffer::Da => "da",
            TapeBuffer::Db => "db",
            TapeBuffer::Dh0 => "dh0",
            TapeBuffer::DaLog => "da_log",
            TapeBuffer::DdtBias => "ddt_bias",
            TapeBuffer::Dnorm => "dnorm",
            TapeBuffer::Dconv => "dconv",
            TapeBuffer::ConvState => "conv_state",
            TapeBuffer::FinalConvState => "final_conv_state",
            TapeBuffer::DfinalConvState => "dfinal_conv_state",
            TapeBuffer::DconvState => "dconv_state",
        }
    }
}
