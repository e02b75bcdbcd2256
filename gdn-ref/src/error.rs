//! The one error type of the crate: every rejected argument is named, with what was expected.

/// An argument that does not fit the layer or the batch.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A tensor whose shape differs from the one the layer and batch require.
    #[error("{name}: expected shape {expected:?}, got {got:?}")]
    Shape {
        /// The argument, as the API names it (`qkv`, `h0`, `conv`, …).
        name: &'static str,
        /// The shape it must have.
        expected: Vec<usize>,
        /// The shape it has.
        got: Vec<usize>,
    },
    /// A size that must be at least one.
    #[error("{name} must be at least 1, got 0")]
    Empty {
        /// The size (`nk`, `dk`, `B`, …).
        name: &'static str,
    },
    /// Value heads that cannot be split evenly among key heads.
    #[error("nv ({nv}) must be a multiple of nk ({nk}): each key head serves nv/nk value heads")]
    HeadRatio {
        /// Key heads.
        nk: usize,
        /// Value heads.
        nv: usize,
    },
    /// A scalar outside its domain.
    #[error("{name} must be finite and positive, got {value}")]
    NotPositive {
        /// The scalar.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// Offsets of a packed batch that do not describe non-empty sequences covering the tokens.
    #[error("cu_seqlens {got:?}: {reason}")]
    Offsets {
        /// The offsets given.
        got: Vec<usize>,
        /// What is wrong with them.
        reason: String,
    },
    /// A size whose arithmetic overflows.
    #[error("{name}: {reason}")]
    TooLarge {
        /// The size (`batch`, …).
        name: &'static str,
        /// What overflows.
        reason: String,
    },
    /// A non-finite value in an input tensor.
    #[error("{name}: element {index} is not finite ({value})")]
    NotFinite {
        /// The tensor.
        name: &'static str,
        /// Flat index of the first offending element.
        index: usize,
        /// Its value.
        value: f64,
    },
}
