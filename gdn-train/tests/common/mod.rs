//! Helpers the gdn-train device tests share.

/// Deterministic, non-zero values of realistic size.
pub fn values(n: usize, scale: f32, offset: f32) -> Vec<f32> {
    (0..n).map(|i| offset + scale * ((i as f32) * 0.7311).sin()).collect()
}
