//! The arithmetic of the chunked family's matrix products: f32 everywhere (the `Chunk*` kernels on
//! `templates/chunked/matmul.wgsl`), or f16 operands on cooperative matrices (tensor cores) with
//! f32 accumulation (the `TensorCore*` kernels); the state, every accumulation, every decay and
//! every element-wise step stay f32 in both.

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

    /// The fewest tokens per chunk the chunked family accepts in this precision, and what every
    /// chunk is a multiple of. Tensor-core kernels cut chunks into 16-token blocks; their products
    /// also round the state and its gradient to f16 as operands once per chunk, so their error grows
    /// as chunks shrink (1e-2 on `dqkv` at one token per chunk, dk = 8). f32 takes any chunk.
    pub fn min_chunk(self) -> u32 {
        match self {
            Precision::F32 => 1,
            Precision::TensorCore => 16,
        }
    }

    /// Whether heads of `dims` compute their products in this precision; where not, in f32.
    /// The tensor-core kernels tile the head dims by 16 × 16 blocks, so both must be multiples of
    /// 16 (dk = 8 would also miss the gradient bar: the layer's key and query gradients amplify the
    /// core's relative error about 15×, seen in f32 as well, which turned f16 operands' 5e-4 into
    /// 1.26e-2 on `dqkv` on realistic inputs, BENCHMARKS.md).
    pub fn suits(self, dims: HeadDims) -> bool {
        match self {
            Precision::F32 => true,
            Precision::TensorCore => dims.dk.is_multiple_of(16) && dims.dv.is_multiple_of(16),
        }
    }

    /// By name.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}
