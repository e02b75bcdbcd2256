//! Sizes of one layer and the derived channel layout of its `qkv` projection.

use crate::Error;
use crate::recurrence::Heads;
use crate::rows::HeadRows;

/// ε of the q/k L2 norms, fixed by the operator (`q̂ = q / sqrt(Σq² + ε₂)`).
pub const L2_EPS: f64 = 1e-6;

/// Sizes of one Gated DeltaNet layer: head counts, head dims, conv taps and the RMSNorm ε.
///
/// Value head `h` reads key head `h / rep`, `rep = nv / nk`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerConfig {
    /// Key (and query) heads.
    pub nk: usize,
    /// Value heads, a multiple of `nk`.
    pub nv: usize,
    /// Key head dim (rows of the state).
    pub dk: usize,
    /// Value head dim (columns of the state).
    pub dv: usize,
    /// Causal conv taps.
    pub kk: usize,
    /// ε of the gated RMSNorm (Qwen: 1e-6).
    pub rms_eps: f64,
}

impl LayerConfig {
    /// A checked configuration with the RMSNorm ε of every Qwen model, 1e-6.
    pub fn new(nk: usize, nv: usize, dk: usize, dv: usize, kk: usize) -> Result<Self, Error> {
        let config = Self { nk, nv, dk, dv, kk, rms_eps: 1e-6 };
        config.validate()?;
        Ok(config)
    }

    /// Checks every size is positive, `nv % nk == 0` and `rms_eps` is positive.
    pub fn validate(&self) -> Result<(), Error> {
        self.heads().validate()?;
        if self.kk == 0 {
            return Err(Error::Empty { name: "kk" });
        }
        if !(self.rms_eps.is_finite() && self.rms_eps > 0.0) {
            return Err(Error::NotPositive { name: "rms_eps", value: self.rms_eps });
        }
        Ok(())
    }

    /// The head layout the recurrence needs.
    pub(crate) fn heads(&self) -> Heads {
        Heads { nk: self.nk, nv: self.nv, dk: self.dk, dv: self.dv }
    }

    /// Where q of each key head sits in a token of the conv output `[N, C]`.
    pub(crate) fn q_rows(&self) -> HeadRows {
        HeadRows { stride: self.channels(), first: self.q_channel(0), width: self.dk }
    }

    /// Where k of each key head sits in a token of the conv output.
    pub(crate) fn k_rows(&self) -> HeadRows {
        HeadRows { stride: self.channels(), first: self.k_channel(0), width: self.dk }
    }

    /// Where v of each value head sits in a token of the conv output.
    pub(crate) fn v_rows(&self) -> HeadRows {
        HeadRows { stride: self.channels(), first: self.v_channel(0), width: self.dv }
    }

    /// Elements of one head's state, `dk·dv`.
    pub fn state_size(&self) -> usize {
        self.dk * self.dv
    }

    /// Value heads per key head.
    pub fn rep(&self) -> usize {
        self.nv / self.nk
    }

    /// Width of the q (and of the k) block of the `qkv` channels: `nk·dk`.
    pub fn key_width(&self) -> usize {
        self.nk * self.dk
    }

    /// Width of the v block of `qkv`, and of `z` and `out`: `nv·dv`.
    pub fn value_width(&self) -> usize {
        self.nv * self.dv
    }

    /// Channels of the raw projection, `C = 2·nk·dk + nv·dv`.
    pub fn channels(&self) -> usize {
        2 * self.key_width() + self.value_width()
    }

    /// First channel of q of key head `i`.
    pub fn q_channel(&self, i: usize) -> usize {
        i * self.dk
    }

    /// First channel of k of key head `i`.
    pub fn k_channel(&self, i: usize) -> usize {
        self.key_width() + i * self.dk
    }

    /// First channel of v of value head `h`.
    pub fn v_channel(&self, h: usize) -> usize {
        2 * self.key_width() + h * self.dv
    }
}
