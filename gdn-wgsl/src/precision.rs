//! The arithmetic of the chunked family's matrix products: f32 everywhere, or f16 operands on
//! cooperative matrices (tensor cores) with f32 accumulation. Only the kernels built on
//! `templates/matmul.wgsl` have the second form; the state, every accumulation, every decay and every
//! element-wise step stay f32 in both.

use crate::dims::HeadDims;

/// How the chunked family's matrix products are computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum Precision {
    /// f32 operands and accumulation, tiled through workgroup memory; needs no extension.
    #[default]
    F32,
    /// f16 operands on 16 × 16 × 16 cooperative matrices with f32 accumulators (wgpu's
    /// `EXPERIMENTAL_COOPERATIVE_MATRIX` and `SHADER_F16`, subgroups of 32).
    TensorCore,
}

impl Precision {
    /// Every precision.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::TensorCore];

    /// Its name: `f32` or `tensor-core`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::TensorCore => "tensor-core",
        }
    }

    /// The fewest tokens per chunk the chunked family accepts in this precision. Tensor-core
    /// products round the state and its gradient to f16 as operands once per chunk, so their error
    /// grows as chunks shrink (1e-2 on `dqkv` at one token per chunk, dk = 8); below one 16-token tile
    /// the tensor cores would also idle. f32 takes any chunk.
    pub fn min_chunk(self) -> u32 {
        match self {
            Precision::F32 => 1,
            Precision::TensorCore => 16,
        }
    }

    /// Whether heads of `dims` compute their products in this precision; where not, in f32.
    /// Tensor cores need keys at least 16 wide: at dk = 8 the layer's key and query gradients
    /// amplify the core's relative error about 15× (seen in f32 as well), which turns f16
    /// operands' 5e-4 into 1.26e-2 on `dqkv` on realistic inputs (BENCHMARKS.md), over the
    /// spec's 1e-2; such narrow products gain nothing from tensor cores either.
    pub fn suits(self, dims: HeadDims) -> bool {
        match self {
            Precision::F32 => true,
            Precision::TensorCore => dims.dk >= 16,
        }
    }

    /// By name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}
