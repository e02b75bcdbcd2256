//! Head sizes: which `(dk, dv)` pairs are generated, and the error for the others.

/// Head dims the kernels are generated and validated for, in each of `dk` and `dv`.
pub const SUPPORTED_SIZES: [u32; 12] = [8, 16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256];

/// Key and value head dims of one kernel variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeadDims {
    /// Key head dim: rows of the state.
    pub dk: u32,
    /// Value head dim: columns of the state.
    pub dv: u32,
}

/// A head size outside [`SUPPORTED_SIZES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name} = {value} has no generated kernels; generated head sizes are {SUPPORTED_SIZES:?} (any pair of them)")]
pub struct UnsupportedDims {
    /// `"dk"` or `"dv"`.
    pub name: &'static str,
    /// The size asked for.
    pub value: usize,
}

impl HeadDims {
    /// A generated pair, or the first of the two sizes that is not generated.
    pub fn new(dk: usize, dv: usize) -> Result<Self, UnsupportedDims> {
        let check = |name, value: usize| {
            u32::try_from(value).ok().filter(|v| SUPPORTED_SIZES.contains(v)).ok_or(UnsupportedDims { name, value })
        };
        Ok(Self { dk: check("dk", dk)?, dv: check("dv", dv)? })
    }

    /// Every generated pair.
    pub fn all() -> impl Iterator<Item = HeadDims> {
        SUPPORTED_SIZES.into_iter().flat_map(|dk| SUPPORTED_SIZES.into_iter().map(move |dv| HeadDims { dk, dv }))
    }
}

impl std::fmt::Display for HeadDims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "dk = {}, dv = {}", self.dk, self.dv)
    }
}
