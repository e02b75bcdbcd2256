//! Real checkpoints: one Gated DeltaNet layer's tensors read from a Hugging Face safetensors file
//! of Qwen3.5 or Qwen3-Next, by their names, into the operator's layouts — so that a layer of a
//! released model runs here (and is compared with transformers) without a conversion script.
//!
//! [`LayerWeights::load`] finds the layer's tensors under a prefix (`model.layers.{i}.linear_attn.`,
//! [`HF_PREFIX`]) in either naming scheme ([`Scheme`]), checks every shape against the sizes
//! ([`HfLayerConfig`], given or read from `config.json` beside the file), widens bf16 / f16 / f32
//! to f32, and re-orders what is stored in another order:
//!
//! | Hugging Face tensor | shape in the file | here |
//! | --- | --- | --- |
//! | `A_log`, `dt_bias` | `[nv]` | [`LayerWeights::a_log`], [`LayerWeights::dt_bias`] as is |
//! | `norm.weight` | `[dv]` | [`LayerWeights::norm`], as is (the gated norm multiplies by `w`, not `1 + w`) |
//! | `conv1d.weight` | `[C, 1, kk]` | [`LayerWeights::conv`] `[C, kk]`: the channels are already `[q \| k \| v]` |
//! | `in_proj_qkv.weight` (3.5) | `[C, hidden]` | [`Projections::qkv`] as is |
//! | `in_proj_z`, `_b`, `_a` (3.5) | `[nv·dv \| nv \| nv, hidden]` | [`Projections::z`], `b`, `a` as is |
//! | `in_proj_qkvz.weight` (Next) | `[C + nv·dv, hidden]`, grouped per key head | un-grouped into [`Projections::qkv`], `z` |
//! | `in_proj_ba.weight` (Next) | `[2·nv, hidden]`, grouped per key head | un-grouped into [`Projections::b`], `a` |
//! | `out_proj.weight` | `[hidden, nv·dv]` | [`Projections::out`] as is |
//!
//! Qwen3-Next's grouping (module `grouped`): key head `g`'s rows of `in_proj_qkvz` are
//! `q_g, k_g, v` of its `rep` value heads, `z` of them; of `in_proj_ba`, `b` then `a` of them.
//!
//! Every mistake in the file is an [`crate::Error::Checkpoint`] naming the tensor by its full
//! name and what was expected ([`CheckpointProblem`]); nothing in a file makes the loader panic.

mod dtype;
mod file;
mod grouped;
mod hf_config;
mod names;
mod problem;
mod shapes;

pub use hf_config::HfLayerConfig;
pub use names::{HF_PREFIX, Scheme};
pub use problem::CheckpointProblem;

use crate::{Error, LayerConfig, Params, Result};
use file::SafetensorsFile;
use names::Names;
use shapes::Shapes;
use std::path::Path;

/// One linear-attention layer of a checkpoint, in the operator's layouts (row-major f32).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerWeights {
    /// The sizes the tensors were checked against.
    pub config: LayerConfig,
    /// The model's hidden size.
    pub hidden_size: usize,
    /// The naming scheme found in the file.
    pub scheme: Scheme,
    /// `[nv]`.
    pub a_log: Vec<f32>,
    /// `[nv]`.
    pub dt_bias: Vec<f32>,
    /// `[dv]`.
    pub norm: Vec<f32>,
    /// `[C, kk]`, channels `[q | k | v]`.
    pub conv: Vec<f32>,
    /// The input and output projections, for a caller who runs them.
    pub projections: Projections,
}

/// A layer's projections, each a Hugging Face linear weight `[out_features, in_features]` (so
/// `y = W x` per token), with the output rows in the operator's channel order.
#[derive(Debug, Clone, PartialEq)]
pub struct Projections {
    /// `[C, hidden]`: rows `[q of key heads 0…nk−1 | k of them | v of value heads 0…nv−1]`, each
    /// head's `dk` (or `dv`) rows consecutive — the operator's `qkv` channels.
    pub qkv: Vec<f32>,
    /// `[nv·dv, hidden]`, value-head-major: the operator's `z`.
    pub z: Vec<f32>,
    /// `[nv, hidden]`: the operator's `b` (write-strength logits).
    pub b: Vec<f32>,
    /// `[nv, hidden]`: the operator's `a` (decay logits).
    pub a: Vec<f32>,
    /// `[hidden, nv·dv]`: `out_proj`, input columns value-head-major like the operator's `out`.
    pub out: Vec<f32>,
}

impl LayerWeights {
    /// Reads layer `layer` from the safetensors file `path`: the tensors named
    /// `prefix` (every `{i}` replaced by `layer`, e.g. [`HF_PREFIX`]) + `in_proj_qkv.weight`, …
    /// in either [`Scheme`], each of the shape `config` implies.
    pub fn load(path: impl AsRef<Path>, prefix: &str, layer: usize, config: &HfLayerConfig) -> Result<Self> {
        let shapes = Shapes::new(&config.layer, config.hidden_size)?;
        let mut file = SafetensorsFile::open(path.as_ref())?;
        let names = Names::new(prefix, layer);
        let scheme = names.scheme(&file)?;
        let mut read = |suffix: &str, shape: &[usize]| file.read(&names.of(suffix), shape);
        let (layer, hidden) = (config.layer, config.hidden_size);
        let (qkv, z, b, a) = match scheme {
            Scheme::Qwen35 => (
                read(names::QKV, &shapes.qkv)?,
                read(names::Z, &shapes.z)?,
                read(names::B, &shapes.b)?,
                read(names::A, &shapes.a)?,
            ),
            Scheme::Qwen3Next => {
                let (qkv, z) = grouped::ungroup_qkvz(&layer, hidden, &read(names::QKVZ, &shapes.qkvz)?);
                let (b, a) = grouped::ungroup_ba(&layer, hidden, &read(names::BA, &shapes.ba)?);
                (qkv, z, b, a)
            }
        };
        Ok(Self {
            config: layer,
            hidden_size: hidden,
            scheme,
            conv: read(names::CONV, &shapes.conv)?,
            a_log: read(names::A_LOG, &shapes.heads)?,
            dt_bias: read(names::DT_BIAS, &shapes.heads)?,
            norm: read(names::NORM, &shapes.norm)?,
            projections: Projections { qkv, z, b, a, out: read(names::OUT, &shapes.out)? },
        })
    }

    /// Reads layer `layer` as [`LayerWeights::load`] does, with the sizes of the `config.json`
    /// in the file's folder ([`HfLayerConfig::from_config_json`]).
    pub fn load_beside_config(path: impl AsRef<Path>, prefix: &str, layer: usize) -> Result<Self> {
        let path = path.as_ref();
        let config = HfLayerConfig::from_config_json(path.with_file_name("config.json"))?;
        Self::load(path, prefix, layer, &config)
    }

    /// The parameters, borrowed, for [`crate::Tape::write_params`].
    pub fn params(&self) -> Params<'_> {
        Params { a_log: &self.a_log, dt_bias: &self.dt_bias, norm: &self.norm, conv: &self.conv }
    }

    /// The operator's inputs for the hidden states `hidden` (`[tokens, hidden_size]`, row-major,
    /// the layer's input after the model's norm): each projection `W x` per token, summed in f64.
    pub fn project(&self, hidden: &[f32]) -> Result<Projected> {
        let width = self.hidden_size;
        if width == 0 || !hidden.len().is_multiple_of(width) {
            let expected = hidden.len().div_ceil(width.max(1)) * width;
            return Err(Error::Length { name: "hidden", expected, got: hidden.len() });
        }
        let p = &self.projections;
        Ok(Projected {
            qkv: linear(&p.qkv, hidden, width),
            z: linear(&p.z, hidden, width),
            a: linear(&p.a, hidden, width),
            b: linear(&p.b, hidden, width),
        })
    }

    /// `out_proj` of the operator's `out` (`[tokens, nv·dv]`): the layer's output, `[tokens,
    /// hidden_size]`.
    pub fn output(&self, out: &[f32]) -> Result<Vec<f32>> {
        let width = self.config.value_width();
        if !out.len().is_multiple_of(width) {
            return Err(Error::Length { name: "out", expected: out.len().div_ceil(width) * width, got: out.len() });
        }
        Ok(linear(&self.projections.out, out, width))
    }
}

/// The operator's inputs a layer's projections give ([`LayerWeights::project`]), in its layouts:
/// `[tokens, C]`, `[tokens, nv·dv]`, `[tokens, nv]`, `[tokens, nv]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Projected {
    /// The raw `qkv` projection, before the conv.
    pub qkv: Vec<f32>,
    /// The output-gate logits.
    pub z: Vec<f32>,
    /// The decay logits.
    pub a: Vec<f32>,
    /// The write-strength logits.
    pub b: Vec<f32>,
}

/// `W x` for every token of `x` (`[tokens, inputs]`), `W` a Hugging Face linear weight
/// `[outputs, inputs]`.
fn linear(weight: &[f32], x: &[f32], inputs: usize) -> Vec<f32> {
    x.chunks_exact(inputs)
        .flat_map(|token| {
            weight
                .chunks_exact(inputs)
                .map(move |row| row.iter().zip(token).map(|(w, v)| f64::from(*w) * f64::from(*v)).sum::<f64>() as f32)
        })
        .collect()
}
