//! Finite-difference machinery shared by the gradient tests of the layer and of the core op:
//! the slope of a loss along one element of one tensor against the hand-written backward, and the
//! worst error per tensor over a set of cases against the spec's bar.

use gdn_ref::compare::relative_error_floored;
use std::collections::BTreeMap;
use std::fmt::Debug;

/// The spec's bar for the reference's gradients against finite differences.
pub const FD_BAR: f64 = 1e-6;

/// Steps tried by the five-point stencil (truncation O(h⁴), round-off O(1/h)). Gradients here span
/// curvature scales from 1e-3 (L2 norms of short heads) to 10 (saturated sigmoids), so each element
/// takes the step whose estimate agrees best with the next smaller one.
const STEPS: [f64; 8] = [1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5];

/// RMS below which a finite-difference gradient is round-off: the loss is a sum of O(1) terms
/// known to ~1e-15, divided by the step.
const FD_NOISE_RMS: f64 = 1e-10;

/// Relative error of `analytic` against the five-point slopes of `loss(e, offset)`, the loss with
/// element `e` of the differentiated tensor moved by `offset`.
pub fn fd_error(analytic: &[f64], loss: impl Fn(usize, f64) -> f64) -> f64 {
    let fd: Vec<f64> = (0..analytic.len())
        .map(|e| {
            let at = |offset: f64| loss(e, offset);
            let slopes: Vec<f64> =
                STEPS.iter().map(|&h| (8.0 * (at(h) - at(-h)) - (at(2.0 * h) - at(-2.0 * h))) / (12.0 * h)).collect();
            let best = (0..slopes.len() - 1)
                .min_by(|&i, &j| (slopes[i] - slopes[i + 1]).abs().total_cmp(&(slopes[j] - slopes[j + 1]).abs()))
                .expect("several steps");
            slopes[best + 1]
        })
        .collect();
    relative_error_floored(analytic, &fd, FD_NOISE_RMS)
}

/// Runs `check` (errors per tensor) on every case, prints the worst error per tensor, and fails on
/// any above the bar.
pub fn check_all<C: Debug, T: Ord + Copy + Debug>(title: &str, cases: &[C], check: impl Fn(&C) -> BTreeMap<T, f64>) {
    let mut worst: BTreeMap<T, (f64, usize)> = BTreeMap::new();
    for (n, case) in cases.iter().enumerate() {
        for (tensor, err) in check(case) {
            let entry = worst.entry(tensor).or_insert((0.0, n));
            if err.is_nan() || err > entry.0 {
                *entry = (err, n);
            }
        }
    }
    println!("{title}: worst relative error against finite differences over {} cases", cases.len());
    for (tensor, (err, n)) in &worst {
        println!("  {tensor:?}: {err:.2e} (case {n}: {:?})", cases[*n]);
    }
    for (tensor, (err, n)) in &worst {
        assert!(*err <= FD_BAR, "{tensor:?}: {err:.2e} > {FD_BAR:e} in case {:?}", cases[*n]);
    }
}
