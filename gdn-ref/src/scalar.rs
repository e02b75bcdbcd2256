//! The scalar functions of the operator, in forms that stay finite at the extremes training hits.

/// Logistic sigmoid.
pub(crate) fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `x·σ(x)`.
pub(crate) fn silu(x: f64) -> f64 {
    x * sigmoid(x)
}

/// `d silu / dx = σ(x)(1 + x(1 − σ(x)))`.
pub(crate) fn silu_grad(x: f64) -> f64 {
    let s = sigmoid(x);
    s * (1.0 + x * (1.0 - s))
}

/// `ln(1 + eˣ)` without overflow.
pub(crate) fn softplus(x: f64) -> f64 {
    if x > 30.0 { x + (-x).exp() } else { x.exp().ln_1p() }
}
