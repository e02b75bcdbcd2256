//! The spec's error metric: relative RMS error `‖got − want‖₂ / ‖want‖₂`, where NaN or infinity
//! never passes.

/// Relative RMS error of `got` against `want`, with the denominator raised to `rms_floor·√n`:
/// values far below what the comparison can resolve (f32's normal range for a device kernel,
/// the round-off of a finite difference) count as zero instead of making the ratio meaningless.
///
/// Returns `+∞` when `got` holds a NaN or infinity, and `0` when both are exactly zero.
pub fn relative_error_floored(got: &[f64], want: &[f64], rms_floor: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "compared tensors differ in length");
    if got.iter().any(|g| !g.is_finite()) {
        return f64::INFINITY;
    }
    let diff = got.iter().zip(want).map(|(g, w)| (g - w) * (g - w)).sum::<f64>().sqrt();
    let norm = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    let denom = norm.max(rms_floor * (want.len() as f64).sqrt());
    if diff == 0.0 {
        0.0
    } else if denom == 0.0 {
        f64::INFINITY
    } else {
        diff / denom
    }
}

/// [`relative_error_floored`] for results computed in f32, with the floor at `√(f32 smallest
/// normal) ≈ 1.1e-19`: a tensor whose RMS is below it cannot have its own norm computed in f32 (the
/// squares underflow), and its values sit where f32 intermediates flush to zero. Such tensors
/// arise when `g → 0` (`da` ≈ 1e-35) and are compared absolutely at that scale, so a kernel cannot
/// fail on values it cannot represent, nor pass with a wrong value of any size f32 can carry.
pub fn relative_error_f32(got: &[f64], want: &[f64]) -> f64 {
    relative_error_floored(got, want, f64::from(f32::MIN_POSITIVE).sqrt())
}
