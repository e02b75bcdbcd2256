//! What can be wrong with a checkpoint, one variant per kind of mistake, each naming the tensor
//! (by its full Hugging Face name) or the config key and what was expected — so that
//! [`crate::Error::Checkpoint`] says exactly what to fix without the caller opening the file.

/// Why a checkpoint (or the config.json beside it) cannot give a layer's tensors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointProblem {
    /// The file cannot be opened or read.
    #[error("cannot read the file: {reason}")]
    Io {
        /// The operating system's message.
        reason: String,
    },
    /// The file is not a well-formed safetensors file (or config.json is not JSON).
    #[error("not a valid {format} file: {reason}")]
    Format {
        /// `safetensors` or `config.json`.
        format: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// Neither naming scheme's input projection is in the file under the prefix, or both are.
    #[error("{reason}")]
    Scheme {
        /// Which names were looked for and what was found.
        reason: String,
    },
    /// A tensor the scheme needs is not in the file.
    #[error("{tensor}: missing (expected shape {expected:?})")]
    Missing {
        /// Its full Hugging Face name.
        tensor: String,
        /// The shape it would have.
        expected: Vec<usize>,
    },
    /// A tensor whose shape differs from the one the layer's sizes imply.
    #[error("{tensor}: expected shape {expected:?}, got {got:?}")]
    Shape {
        /// Its full Hugging Face name.
        tensor: String,
        /// The shape the sizes imply.
        expected: Vec<usize>,
        /// The shape in the file.
        got: Vec<usize>,
    },
    /// A tensor of a dtype the loader does not widen to f32.
    #[error("{tensor}: dtype {got}; the loader reads BF16, F16 and F32")]
    Dtype {
        /// Its full Hugging Face name.
        tensor: String,
        /// The dtype in the file, as safetensors spells it.
        got: String,
    },
    /// A key of config.json that is absent with no default, or not of the type the size needs.
    #[error("config key {key}: {reason}")]
    ConfigKey {
        /// The key (`linear_num_key_heads`, `text_config.hidden_size`, …).
        key: String,
        /// What is wrong, and what was expected.
        reason: String,
    },
}
