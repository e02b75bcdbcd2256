//! The one error type of the crate. Every variant names what was wrong and what was expected.

/// What went wrong in a device operation or with its arguments.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No adapter matched, or none exists.
    #[error(
        "no GPU adapter found{filter}. Install a Vulkan driver; with no GPU, Mesa's software one works: \
         `apt-get install mesa-vulkan-drivers libvulkan1` (Debian/Ubuntu). WGPU_BACKEND and WGPU_ADAPTER_NAME \
         choose among adapters"
    )]
    NoAdapter {
        /// The filters in force, as text (empty when none).
        filter: String,
    },
    /// An environment variable whose value the crate cannot use.
    #[error("{variable}={value:?}: {reason}")]
    Environment {
        /// The variable (`WGPU_BACKEND`, …).
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is wrong, and what would do.
        reason: String,
    },
    /// The adapter refused the device.
    #[error("the adapter {adapter} refused to create a device: {reason}")]
    RequestDevice {
        /// Adapter name.
        adapter: String,
        /// wgpu's message.
        reason: String,
    },
    /// The layer's sizes or the batch are invalid (gdn-ref's checks, one text per mistake).
    #[error(transparent)]
    Layer(#[from] gdn_ref::Error),
    /// A size or knob that is invalid.
    #[error("{name}: {reason}")]
    Config {
        /// The size or knob (`checkpoint_interval`, `chunk`, `kk`, `slots`, …).
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Head dims without generated kernels.
    #[error(transparent)]
    UnsupportedDims(#[from] gdn_wgsl::UnsupportedDims),
    /// A kernel asked for at head dims it is not generated for.
    #[error(transparent)]
    NoVariant(#[from] gdn_wgsl::NoVariant),
    /// A host slice of the wrong length.
    #[error("{name}: expected {expected} elements, got {got}")]
    Length {
        /// The argument.
        name: &'static str,
        /// Elements the tape's layer and batch require.
        expected: usize,
        /// Elements given.
        got: usize,
    },
    /// A finite value the tensor's storage cannot hold: past f16's ±65 504, where f16 storage
    /// would make it infinite.
    #[error("{name}[{index}] = {value}: {reason}")]
    Range {
        /// The tensor.
        name: &'static str,
        /// The first element out of range.
        index: usize,
        /// Its value.
        value: f32,
        /// What the storage holds.
        reason: String,
    },
    /// An optional tensor given to a tape created without room for it, or missing from one
    /// created with it.
    #[error("{name}: {reason}")]
    Presence {
        /// The tensor.
        name: &'static str,
        /// What the tape expects.
        reason: String,
    },
    /// A caller's buffer that cannot hold a tensor where it was given: misaligned, too short,
    /// missing a usage, or the tensor given twice.
    #[error("{name}: {reason}")]
    Placement {
        /// The tensor.
        name: &'static str,
        /// What is wrong, and what is needed.
        reason: String,
    },
    /// A pass or a read before the pass it depends on has run on the tape: a backward before any
    /// forward, an output before any forward, a gradient before any backward.
    #[error("{name}: {reason}")]
    Order {
        /// The operation (`backward`) or the buffer read (`out`, `dqkv`, …).
        name: &'static str,
        /// What has not run.
        reason: String,
    },
    /// An option the adapter cannot serve: a feature it lacks, or a combination the kernels do not
    /// have.
    #[error("{option}: {reason}")]
    Unsupported {
        /// The option (`precision`, …).
        option: &'static str,
        /// What is missing, by the feature's wgpu name.
        reason: String,
    },
    /// A device limit below what a kernel or buffer needs.
    #[error("{what} needs {limit} ≥ {needed}, but the device offers {available}")]
    Limit {
        /// The kernel or buffer that needs it.
        what: String,
        /// wgpu's name of the limit.
        limit: &'static str,
        /// What is needed.
        needed: u64,
        /// What the device offers.
        available: u64,
    },
    /// The device ran out of memory.
    #[error("out of device memory allocating {buffer} ({bytes} bytes)")]
    OutOfMemory {
        /// The buffer being allocated.
        buffer: String,
        /// Its size.
        bytes: u64,
    },
    /// A decode step beyond the sizes its decoder was built for (sequences, tokens per sequence).
    #[error("{name}: {got} exceeds the decoder's capacity of {capacity}")]
    Capacity {
        /// The argument.
        name: &'static str,
        /// What the decoder was built for.
        capacity: usize,
        /// What the call asked for.
        got: usize,
    },
    /// A state-pool slot index out of range, or given twice in one decode step.
    #[error("slot {slot}: {reason}")]
    Slot {
        /// The slot index.
        slot: usize,
        /// What is wrong.
        reason: String,
    },
    /// A checkpoint (or its config.json) that cannot give a layer: unreadable, malformed, or a
    /// tensor missing, of another shape than the sizes imply, or of a dtype the loader does not read
    /// (a new variant: the others name a `&'static str` argument, not a tensor of a file).
    #[error("{file}: {problem}")]
    Checkpoint {
        /// The file's path.
        file: String,
        /// What is wrong, naming the tensor or key.
        problem: crate::checkpoint::CheckpointProblem,
    },
    /// wgpu reported an error (a validation error is a bug of this crate: please report it).
    #[error("device error during {during}: {message}")]
    Device {
        /// The operation.
        during: String,
        /// wgpu's message.
        message: String,
    },
}

impl From<gdn_wgsl::plan::PlanError> for Error {
    fn from(e: gdn_wgsl::plan::PlanError) -> Self {
        use gdn_wgsl::plan::PlanError;
        match e {
            PlanError::Layer(e) => Error::Layer(e),
            PlanError::UnsupportedDims(e) => Error::UnsupportedDims(e),
            PlanError::NoVariant(e) => Error::NoVariant(e),
            PlanError::Knob { name, reason } | PlanError::TooLarge { name, reason } => Error::Config { name, reason },
            PlanError::Unsupported { option, reason } => Error::Unsupported { option, reason },
            e => Error::Device { during: "laying out the layer's plan".into(), message: e.to_string() },
        }
    }
}

/// Result with this crate's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;
