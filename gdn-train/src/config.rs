//! What a tape is built for: the layer's sizes, the batch layout and the tape's options.

use crate::{Error, Family, Precision, Result};

/// Sizes of one Gated DeltaNet layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerConfig {
    /// Key heads.
    pub nk: usize,
    /// Value heads, a multiple of `nk`.
    pub nv: usize,
    /// Key head dim.
    pub dk: usize,
    /// Value head dim.
    pub dv: usize,
    /// Causal conv taps.
    pub kk: usize,
    /// ε of the gated RMSNorm (Qwen: 1e-6).
    pub rms_eps: f32,
}

impl LayerConfig {
    /// A layer with the RMSNorm ε of every Qwen model, 1e-6.
    pub fn new(nk: usize, nv: usize, dk: usize, dv: usize, kk: usize) -> Self {
        Self { nk, nv, dk, dv, kk, rms_eps: 1e-6 }
    }

    /// Checks the sizes; head dims are checked against the generated grid by the tape.
    pub fn validate(&self) -> Result<()> {
        for (name, value) in [("nk", self.nk), ("nv", self.nv), ("kk", self.kk)] {
            if value == 0 {
                return Err(Error::Config { name, reason: "must be at least 1".into() });
            }
        }
        if !self.nv.is_multiple_of(self.nk) {
            return Err(Error::Config {
                name: "nv",
                reason: format!(
                    "{} is not a multiple of nk = {}: each key head serves nv/nk value heads",
                    self.nv, self.nk
                ),
            });
        }
        // The kernels index channels, conv weights and head widths with u32.
        let fits = |n: Option<usize>| n.filter(|&n| n <= u32::MAX as usize);
        let keys = fits(self.nk.checked_mul(self.dk).and_then(|n| n.checked_mul(2)));
        let values = fits(self.nv.checked_mul(self.dv));
        let channels = keys.zip(values).and_then(|(k, v)| fits(k.checked_add(v)));
        let too_large = |name, what: &str| Error::Config {
            name,
            reason: format!(
                "{what} of nk = {}, nv = {}, dk = {}, dv = {}, kk = {} exceed the kernels' u32 indices",
                self.nk, self.nv, self.dk, self.dv, self.kk
            ),
        };
        if keys.is_none() {
            return Err(too_large("nk", "the key channels 2·nk·dk"));
        }
        let Some(channels) = channels else {
            return Err(too_large("nv", "the channels 2·nk·dk + nv·dv"));
        };
        if fits(channels.checked_mul(self.kk)).is_none() {
            return Err(too_large("kk", "the conv weights C·kk"));
        }
        if !(self.rms_eps.is_finite() && self.rms_eps > 0.0) {
            return Err(Error::Config {
                name: "rms_eps",
                reason: format!("must be finite and positive, got {}", self.rms_eps),
            });
        }
        Ok(())
    }

    /// Channels of the raw qkv projection, `2·nk·dk + nv·dv`.
    pub fn channels(&self) -> usize {
        2 * self.nk * self.dk + self.nv * self.dv
    }

    /// Width of `z` and `out`, `nv·dv`.
    pub fn value_width(&self) -> usize {
        self.nv * self.dv
    }

    /// Elements of one head's state, `dk·dv`.
    pub fn state_size(&self) -> usize {
        self.dk * self.dv
    }
}

/// How a batch's tokens split into sequences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch {
    /// `b` sequences of `t` tokens; tensors are `[b, t, …]`.
    Fixed {
        /// Sequences.
        b: usize,
        /// Tokens per sequence.
        t: usize,
    },
    /// Sequences packed in one row; sequence `n` owns tokens `cu_seqlens[n]..cu_seqlens[n + 1]`.
    Packed {
        /// Offsets `[0, …, Ttot]`, strictly increasing.
        cu_seqlens: Vec<usize>,
    },
}

impl Batch {
    /// Tokens of the batch, before any offsets are laid out: `B·T` (checked) or the packed batch's
    /// last offset.
    pub(crate) fn tokens(&self) -> Result<usize> {
        match self {
            Batch::Fixed { b, t } => b
                .checked_mul(*t)
                .ok_or_else(|| Error::Config { name: "batch", reason: format!("B·T = {b} · {t} overflows usize") }),
            Batch::Packed { cu_seqlens } => Ok(cu_seqlens.last().copied().unwrap_or(0)),
        }
    }

    /// Validated offsets `[0, …, tokens]` of the sequences.
    pub fn offsets(&self) -> Result<Vec<usize>> {
        match self {
            Batch::Fixed { b, t } => {
                if *b == 0 || *t == 0 {
                    return Err(Error::Config {
                        name: "batch",
                        reason: format!("B = {b} and T = {t} must be at least 1"),
                    });
                }
                Ok((0..=*b).map(|n| n * t).collect())
            }
            Batch::Packed { cu_seqlens } => {
                let bad = |reason: &str| Err(Error::Offsets { got: cu_seqlens.clone(), reason: reason.into() });
                if cu_seqlens.len() < 2 {
                    return bad("need at least [0, Ttot]: one sequence");
                }
                if cu_seqlens[0] != 0 {
                    return bad("must start at 0");
                }
                if cu_seqlens.windows(2).any(|w| w[1] <= w[0]) {
                    return bad("must strictly increase (every sequence needs at least one token)");
                }
                Ok(cu_seqlens.clone())
            }
        }
    }
}

/// Options of a tape, fixed at its creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapeOptions {
    /// Room for an initial state `h0` per sequence (and its gradient `dh0`).
    pub initial_state: bool,
    /// Room for a gradient `dhT` arriving at the final state.
    pub final_state_grad: bool,
    /// The kernel family that computes the delta rule, with its knobs; `None` (the default) takes
    /// the one measured fastest on the adapter for the passes the tape records ([`Family::picked`]). Either way the tape fits the knob to its
    /// batch ([`Family::fitted`]); [`crate::Tape::family`] says what runs.
    pub family: Option<Family>,
    /// The arithmetic of the chunked family's matrix products: f32 (the default), or f16 operands
    /// on tensor cores where the adapter has them ([`crate::Context::supports`]).
    pub precision: Precision,
    /// Room for a conv state per sequence: its last `kk − 1` raw qkv tokens before this call,
    /// `[sequences, kk − 1, C]` token-major ([`crate::TapeBuffer::ConvState`]), read where the conv
    /// reaches before a sequence's start; the final window after the call
    /// ([`crate::TapeBuffer::FinalConvState`]); the gradient arriving at it and `dconv_state`.
    pub conv_state: bool,
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
        }
    }
}
