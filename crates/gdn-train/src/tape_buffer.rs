//! [`TapeBuffer`]: the buffers of a tape that a caller reads or writes, by name.

/// The tape's buffers a caller reads or writes, for chaining with its own device work.
///
/// Token-major tensors are `[tokens, …]` row-major, f32: `tokens = B·T` (or `Ttot`); states are
/// `[sequences, nv, dk, dv]`.
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
}

impl TapeBuffer {
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
        }
    }
}
