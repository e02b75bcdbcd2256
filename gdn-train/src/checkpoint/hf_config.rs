//! The sizes of a checkpoint's linear-attention layers, read from the Hugging Face `config.json`
//! saved beside it — the tensors alone cannot tell `nk` from `dk` (only `nk·dk`) — or given by
//! the caller.
//!
//! The keys are transformers' (`linear_num_key_heads`, `linear_num_value_heads`,
//! `linear_key_head_dim`, `linear_value_head_dim`, `linear_conv_kernel_dim`, `rms_norm_eps`,
//! `hidden_size`), at the top level (Qwen3-Next, Qwen3.5 text-only) or under `text_config`
//! (Qwen3.5's image-text models). `save_pretrained` leaves out the values equal to the config
//! class's defaults, so a missing key takes transformers' default for `model_type` `qwen3_next`
//! or `qwen3_5_text` (4, 128, 128, 16, 32, 1e-6, and `hidden_size` 2048 or 4096); for any other
//! model type a missing key is an error.

use super::CheckpointProblem;
use crate::{Error, LayerConfig, Result};
use serde_json::Value;
use std::path::Path;

/// What the loader needs to know of the model: the layer's sizes and the model's width.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HfLayerConfig {
    /// The linear-attention layer's sizes (`rms_eps` is the model's `rms_norm_eps`).
    pub layer: LayerConfig,
    /// The model's hidden size: the input width of the input projections, the output width of
    /// `out_proj`.
    pub hidden_size: usize,
}

impl HfLayerConfig {
    /// Reads `path` (a `config.json`).
    pub fn from_config_json(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Checkpoint { file: file.clone(), problem: super::file::io_problem(e) })?;
        Self::parse(&text).map_err(|problem| Error::Checkpoint { file, problem }).and_then(|c| {
            c.layer.validate()?;
            Ok(c)
        })
    }

    /// Reads the text of a `config.json` (errors name the file `config.json`).
    pub fn from_json_str(text: &str) -> Result<Self> {
        let config = Self::parse(text).map_err(|problem| Error::Checkpoint { file: "config.json".into(), problem })?;
        config.layer.validate()?;
        Ok(config)
    }

    fn parse(text: &str) -> Result<Self, CheckpointProblem> {
        let root: Value = serde_json::from_str(text)
            .map_err(|e| CheckpointProblem::Format { format: "config.json", reason: e.to_string() })?;
        let (sizes, path) = match root.get("text_config") {
            Some(text_config) if text_config.is_object() => (text_config, "text_config."),
            _ => (&root, ""),
        };
        let defaults = Defaults::of(sizes.get("model_type").and_then(Value::as_str));
        let size = |key: &str, default: Option<usize>| -> Result<usize, CheckpointProblem> {
            let problem = |reason: String| CheckpointProblem::ConfigKey { key: format!("{path}{key}"), reason };
            match sizes.get(key) {
                None => default.ok_or_else(|| problem(format!("missing, and {} has no default", defaults.describe()))),
                Some(value) => value
                    .as_u64()
                    .and_then(|v| usize::try_from(v).ok())
                    .ok_or_else(|| problem(format!("expected a non-negative integer, got {value}"))),
            }
        };
        let defaults_on = defaults.known;
        let layer = LayerConfig {
            nk: size("linear_num_key_heads", defaults_on.then_some(16))?,
            nv: size("linear_num_value_heads", defaults_on.then_some(32))?,
            dk: size("linear_key_head_dim", defaults_on.then_some(128))?,
            dv: size("linear_value_head_dim", defaults_on.then_some(128))?,
            kk: size("linear_conv_kernel_dim", defaults_on.then_some(4))?,
            rms_eps: match sizes.get("rms_norm_eps") {
                None if defaults_on => 1e-6,
                None => {
                    return Err(CheckpointProblem::ConfigKey {
                        key: format!("{path}rms_norm_eps"),
                        reason: format!("missing, and {} has no default", defaults.describe()),
                    });
                }
                Some(value) => value.as_f64().ok_or_else(|| CheckpointProblem::ConfigKey {
                    key: format!("{path}rms_norm_eps"),
                    reason: format!("expected a number, got {value}"),
                })?,
            },
        };
        let hidden_size = size("hidden_size", defaults.hidden_size)?;
        Ok(Self { layer, hidden_size })
    }
}

/// transformers' defaults for the model types whose config classes this module knows.
struct Defaults<'a> {
    model_type: Option<&'a str>,
    known: bool,
    hidden_size: Option<usize>,
}

impl<'a> Defaults<'a> {
    fn of(model_type: Option<&'a str>) -> Self {
        let hidden_size = match model_type {
            Some("qwen3_next") => Some(2048),
            Some("qwen3_5_text") => Some(4096),
            _ => None,
        };
        Self { model_type, known: hidden_size.is_some(), hidden_size }
    }

    fn describe(&self) -> String {
        match self.model_type {
            Some(t) => format!("model_type {t:?}"),
            None => "a config without model_type".into(),
        }
    }
}
