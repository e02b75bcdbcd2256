//! The q/k L2 norm with its scale folded in, forward and backward: `x̂ = x·scale / sqrt(Σx² + ε₂)`
//! per head. The layer applies it to the conv output (`scale = 1/√dk` for q, 1 for k), the core op
//! to its q and k when asked to (fla's `use_qk_l2norm_in_kernel`), through the same two functions.

use crate::L2_EPS;
use crate::rows::HeadRows;

/// A normalised tensor and what its backward needs.
pub(crate) struct Normalized {
    /// `x̂`, `[N, heads, width]`.
    pub hat: Vec<f64>,
    /// `Σx² + ε₂`, `[N, heads]`.
    pub ss: Vec<f64>,
}

/// `x̂ = x · scale / sqrt(Σx² + ε₂)` for every token and each of `heads` heads of `x` at `rows`.
pub(crate) fn normalize(x: &[f64], rows: HeadRows, tokens: usize, heads: usize, scale: f64) -> Normalized {
    let width = rows.width;
    let mut hat = vec![0.0; tokens * heads * width];
    let mut ss = vec![0.0; tokens * heads];
    for t in 0..tokens {
        for i in 0..heads {
            let x = rows.row(x, t, i);
            let sum = x.iter().map(|v| v * v).sum::<f64>() + L2_EPS;
            let inv = scale / sum.sqrt();
            for (dst, &v) in hat[(t * heads + i) * width..][..width].iter_mut().zip(x) {
                *dst = v * inv;
            }
            ss[t * heads + i] = sum;
        }
    }
    Normalized { hat, ss }
}

/// `dx = inv·dx̂ − x·(Σ_m dx̂_m x_m)·inv / (Σx² + ε₂)`, `inv = scale / sqrt(Σx² + ε₂)`, for `d_hat`
/// (`[N, heads, width]`) arriving at the `x̂` that [`normalize`] made of `x` with the same `rows`,
/// `heads` and `scale`; writes `dx` into `dx` at `rows`.
pub(crate) fn normalize_backward(
    x: &[f64],
    rows: HeadRows,
    heads: usize,
    ss: &[f64],
    d_hat: &[f64],
    scale: f64,
    dx: &mut [f64],
) {
    let width = rows.width;
    for (row, &sum) in ss.iter().enumerate() {
        let (t, i) = (row / heads, row % heads);
        let x = rows.row(x, t, i);
        let dx_hat = &d_hat[row * width..][..width];
        let inv = scale / sum.sqrt();
        let dot: f64 = dx_hat.iter().zip(x).map(|(d, x)| d * x).sum();
        for (m, dst) in rows.row_mut(dx, t, i).iter_mut().enumerate() {
            *dst = inv * dx_hat[m] - x[m] * dot * inv / sum;
        }
    }
}
