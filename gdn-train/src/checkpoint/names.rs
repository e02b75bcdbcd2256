//! The Hugging Face names of one layer's linear-attention tensors, and which of the two naming
//! schemes a file uses: Qwen3.5's separate input projections or Qwen3-Next's merged, per-key-head
//! grouped ones. The rest (conv, gates, norm, output projection) is named alike in both.

use super::CheckpointProblem;
use super::file::SafetensorsFile;
use crate::Result;

/// The prefix of a decoder layer's linear attention in both models' `…ForCausalLM` checkpoints,
/// `{i}` standing for the layer index. Qwen3.5's image-text checkpoints nest the text model:
/// `model.language_model.layers.{i}.linear_attn.`.
pub const HF_PREFIX: &str = "model.layers.{i}.linear_attn.";

/// How a checkpoint names and lays out the input projections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Qwen3.5: `in_proj_qkv` (rows `[q | k | v]`, already the operator's order), `in_proj_z`,
    /// `in_proj_b`, `in_proj_a`.
    Qwen35,
    /// Qwen3-Next: `in_proj_qkvz` and `in_proj_ba`, their rows grouped per key head (see
    /// [`super::LayerWeights`] for the order).
    Qwen3Next,
}

/// Suffixes under the layer's prefix.
pub(crate) const QKV: &str = "in_proj_qkv.weight";
pub(crate) const Z: &str = "in_proj_z.weight";
pub(crate) const B: &str = "in_proj_b.weight";
pub(crate) const A: &str = "in_proj_a.weight";
pub(crate) const QKVZ: &str = "in_proj_qkvz.weight";
pub(crate) const BA: &str = "in_proj_ba.weight";
pub(crate) const CONV: &str = "conv1d.weight";
pub(crate) const DT_BIAS: &str = "dt_bias";
pub(crate) const A_LOG: &str = "A_log";
pub(crate) const NORM: &str = "norm.weight";
pub(crate) const OUT: &str = "out_proj.weight";

/// The full names of one layer's tensors.
pub(crate) struct Names {
    prefix: String,
}

impl Names {
    /// The names under `template` with every `{i}` replaced by `layer` (a template without `{i}`
    /// is the prefix itself).
    pub(crate) fn new(template: &str, layer: usize) -> Self {
        Self { prefix: template.replace("{i}", &layer.to_string()) }
    }

    /// The full name of the tensor `suffix` (one of this module's constants).
    pub(crate) fn of(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.prefix)
    }

    /// The scheme of `file` for this layer, by which input projection it holds; neither or both
    /// is [`CheckpointProblem::Scheme`].
    pub(crate) fn scheme(&self, file: &SafetensorsFile) -> Result<Scheme> {
        let (qkv, qkvz) = (self.of(QKV), self.of(QKVZ));
        match (file.contains(&qkv), file.contains(&qkvz)) {
            (true, false) => Ok(Scheme::Qwen35),
            (false, true) => Ok(Scheme::Qwen3Next),
            (found, _) => {
                let reason = if found {
                    format!("both {qkv} (Qwen3.5) and {qkvz} (Qwen3-Next) are in the file: which one is the layer's?")
                } else {
                    format!(
                        "neither {qkv} (Qwen3.5) nor {qkvz} (Qwen3-Next) is in the file: not a linear-attention \
                         layer, or another prefix"
                    )
                };
                Err(file.error(CheckpointProblem::Scheme { reason }))
            }
        }
    }
}
