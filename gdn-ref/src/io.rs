//! What the forward and backward take and give back.

use crate::params::{check_finite, check_shape};
use crate::{Batch, Error, LayerConfig, Sequences};
use ndarray::{Array1, Array2, Array3, Array4};

/// Inputs of one forward: the four streams of the input projection, the optional initial states
/// (recurrent and conv) and, for a packed batch, the sequence offsets.
///
/// Token-major tensors are `[B, T, …]`, or `[1, Ttot, …]` when `cu_seqlens` is given.
///
/// # Conv state
///
/// `conv_state[n, i, c]` is raw `qkv` channel `c` of the token `kk − 1 − i` places before sequence
/// `n`'s first token in this call (slot `kk − 2` is the token just before it): token-major like
/// `qkv`, oldest first, `[N, kk − 1, C]` (`[N, 0, C]` when `kk = 1`). The conv at a position before
/// the sequence's start reads it instead of zero. [`ForwardResult::conv_state`] is the same window
/// after the call, to pass to the next call of the same sequences.
///
/// Hugging Face's cache (`modeling_qwen3_next.py`, `cache_params.conv_states[layer]`) keeps the
/// window channel-major and `kk` wide, `[N, C, kk]`: the prefill stores
/// `F.pad(mixed_qkv, (kk − T, 0))`, the last `kk` raw tokens, and the decode step
/// (`causal_conv1d_update`) never reads its oldest column. So
/// `conv_state[n, i, c] = conv_states[n, c, i + 1]`; in PyTorch, ours is
/// `conv_states[:, :, 1:].transpose(1, 2)` and HF's is `F.pad(ours.transpose(1, 2), (1, 0))`
/// (column 0 is never read). A cache that keeps `kk − 1` columns (`[N, C, kk − 1]`) maps by the
/// transpose alone.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerInputs {
    /// Raw qkv projection before the conv, `[B, T, C]`: q of all key heads, k, then v.
    pub qkv: Array3<f64>,
    /// Output-gate logits, `[B, T, nv·dv]`.
    pub z: Array3<f64>,
    /// Decay logits, `[B, T, nv]`.
    pub a: Array3<f64>,
    /// Write-strength logits, `[B, T, nv]`.
    pub b: Array3<f64>,
    /// Initial state per sequence, `[N, nv, dk, dv]`; zero when absent.
    pub h0: Option<Array4<f64>>,
    /// The last `kk − 1` raw qkv tokens before each sequence, `[N, kk − 1, C]` (see above); zero
    /// when absent.
    pub conv_state: Option<Array3<f64>>,
    /// Offsets of packed sequences, `[0, …, Ttot]`; `None` for `B` sequences of `T` tokens.
    pub cu_seqlens: Option<Vec<usize>>,
}

impl LayerInputs {
    /// The batch layout these inputs describe.
    pub fn batch(&self) -> Batch {
        match &self.cu_seqlens {
            Some(cu_seqlens) => Batch::Packed { cu_seqlens: cu_seqlens.clone() },
            None => Batch::Fixed { b: self.qkv.shape()[0], t: self.qkv.shape()[1] },
        }
    }

    /// Checks every shape against `config` and the batch, and returns the sequences.
    pub fn validate(&self, config: &LayerConfig) -> Result<Sequences, Error> {
        let [b, t] = [self.qkv.shape()[0], self.qkv.shape()[1]];
        if self.cu_seqlens.is_some() && b != 1 {
            return Err(Error::Shape {
                name: "qkv",
                expected: vec![1, t, config.channels()],
                got: self.qkv.shape().to_vec(),
            });
        }
        let sequences = Sequences::new(&self.batch(), Some(b * t))?;
        check_shape("qkv", self.qkv.shape(), &[b, t, config.channels()])?;
        check_shape("z", self.z.shape(), &[b, t, config.value_width()])?;
        check_shape("a", self.a.shape(), &[b, t, config.nv])?;
        check_shape("b", self.b.shape(), &[b, t, config.nv])?;
        check_finite("qkv", self.qkv.iter())?;
        check_finite("z", self.z.iter())?;
        check_finite("a", self.a.iter())?;
        check_finite("b", self.b.iter())?;
        if let Some(h0) = &self.h0 {
            check_shape("h0", h0.shape(), &config.heads().state_shape(sequences.len()))?;
            check_finite("h0", h0.iter())?;
        }
        if let Some(state) = &self.conv_state {
            check_shape("conv_state", state.shape(), &conv_state_shape(config, sequences.len()))?;
            check_finite("conv_state", state.iter())?;
        }
        Ok(sequences)
    }
}

/// `[N, kk − 1, C]`.
pub(crate) fn conv_state_shape(config: &LayerConfig, sequences: usize) -> [usize; 3] {
    [sequences, config.kk - 1, config.channels()]
}

/// Result of a forward.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardResult {
    /// Layer output, `[B, T, nv·dv]`.
    pub out: Array3<f64>,
    /// Final state of every sequence, `[N, nv, dk, dv]`.
    pub ht: Array4<f64>,
    /// Final conv state of every sequence, `[N, kk − 1, C]`: its last `kk − 1` raw qkv tokens,
    /// reaching into the input's conv state (or zero) when it has fewer (see [`LayerInputs`]).
    pub conv_state: Array3<f64>,
}

/// Gradients arriving at the layer's outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputGrads {
    /// Gradient of `out`, `[B, T, nv·dv]`.
    pub dout: Array3<f64>,
    /// Gradient of the final state `hT`, `[N, nv, dk, dv]`; zero when absent.
    pub dht: Option<Array4<f64>>,
    /// Gradient of the final conv state, `[N, kk − 1, C]`; zero when absent.
    pub dconv_state: Option<Array3<f64>>,
}

impl OutputGrads {
    /// Gradient of `out` only.
    pub fn new(dout: Array3<f64>) -> Self {
        Self { dout, dht: None, dconv_state: None }
    }

    pub(crate) fn validate(
        &self,
        config: &LayerConfig,
        inputs: &LayerInputs,
        sequences: &Sequences,
    ) -> Result<(), Error> {
        let [b, t] = [inputs.qkv.shape()[0], inputs.qkv.shape()[1]];
        check_shape("dout", self.dout.shape(), &[b, t, config.value_width()])?;
        check_finite("dout", self.dout.iter())?;
        if let Some(dht) = &self.dht {
            check_shape("dht", dht.shape(), &config.heads().state_shape(sequences.len()))?;
            check_finite("dht", dht.iter())?;
        }
        if let Some(d) = &self.dconv_state {
            check_shape("dconv_state", d.shape(), &conv_state_shape(config, sequences.len()))?;
            check_finite("dconv_state", d.iter())?;
        }
        Ok(())
    }
}

/// Gradients of everything the layer reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Gradients {
    /// `[B, T, C]`.
    pub dqkv: Array3<f64>,
    /// `[B, T, nv·dv]`.
    pub dz: Array3<f64>,
    /// `[B, T, nv]`.
    pub da: Array3<f64>,
    /// `[B, T, nv]`.
    pub db: Array3<f64>,
    /// `[N, nv, dk, dv]`, present when the inputs had `h0`.
    pub dh0: Option<Array4<f64>>,
    /// `[nv]`.
    pub da_log: Array1<f64>,
    /// `[nv]`.
    pub ddt_bias: Array1<f64>,
    /// `[dv]`.
    pub dnorm: Array1<f64>,
    /// `[C, kk]`.
    pub dconv: Array2<f64>,
    /// `[N, kk − 1, C]`, present when the inputs had `conv_state`.
    pub dconv_state: Option<Array3<f64>>,
    /// `[B, T, nv]`: not a gradient, the magnitude of the terms behind each `da`. `dℓ_t = g·⟨dS', S_{t−1}⟩`
    /// is a sum over the state's `dk·dv` elements; this is `da` with that sum taken over the
    /// terms' magnitudes `|dS'_ij S_{t−1,ij}|` (so `|da| ≤ da_terms`). Where the two differ by far,
    /// the sum cancels, and any arithmetic's rounding of the terms shows in `da` scaled by that
    /// ratio (gdn-check's bars for rounded operands read it).
    pub da_terms: Array3<f64>,
}
