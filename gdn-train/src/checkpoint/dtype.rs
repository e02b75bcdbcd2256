//! Widens a tensor's raw little-endian bytes to f32. Checkpoints store the layer in bf16 (Qwen's
//! releases), f16 or f32 — often mixed within one file (`A_log` is f32 in Qwen3-Next's) — while
//! the kernels and the oracle take f32, which holds every bf16 and f16 value exactly.

use safetensors::Dtype;

/// The bytes of one element of `dtype`, when the loader reads it.
pub(crate) fn element_bytes(dtype: Dtype) -> Option<usize> {
    match dtype {
        Dtype::BF16 | Dtype::F16 => Some(2),
        Dtype::F32 => Some(4),
        _ => None,
    }
}

/// `bytes` (a whole number of elements of `dtype`, which [`element_bytes`] reads) as f32.
pub(crate) fn widen(dtype: Dtype, bytes: &[u8]) -> Vec<f32> {
    match dtype {
        Dtype::BF16 => bytes.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::F16 => bytes.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
        Dtype::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        _ => Vec::new(),
    }
}
