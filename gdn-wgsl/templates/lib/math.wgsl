// Scalar functions of the operator, in forms that stay finite and accurate at the extremes.

fn sigmoid(x: f32) -> f32 {
    return 1.0 / (1.0 + exp(-x));
}

fn silu(x: f32) -> f32 {
    return x * sigmoid(x);
}

// d silu / dx = σ(x)(1 + x(1 − σ(x))), with 1 − σ(x) = σ(−x) to avoid cancellation.
fn silu_grad(x: f32) -> f32 {
    return sigmoid(x) * (1.0 + x * sigmoid(-x));
}

// ln(1 + u) to a few ulps for small u (Goldberg's correction: the rounding of 1 + u is undone).
fn log1p(u: f32) -> f32 {
    let w = 1.0 + u;
    if (w == 1.0) {
        return u;
    }
    return log(w) * (u / (w - 1.0));
}

// ln(1 + eˣ) without overflow.
fn softplus(x: f32) -> f32 {
    if (x > 20.0) {
        return x;
    }
    return log1p(exp(x));
}

// ln softplus(x), finite for every finite x: x where softplus(x) = eˣ to f32's precision (below −20;
// softplus itself underflows to 0 below −104), ln x above 20.
fn log_softplus(x: f32) -> f32 {
    if (x < -20.0) {
        return x;
    }
    return log(softplus(x));
}

// The exponent of −ℓ = exp(a_log)·softplus(a + dt_bias), taken in log space so that neither
// exp(a_log) (a_log ≥ 89) nor the product overflows, nor 0·∞ (softplus underflowing) is NaN.
fn log_decay_exponent(a_log: f32, arg: f32) -> f32 {
    return a_log + log_softplus(arg);
}

// ℓ = ln g stops at −e^LOG_DECAY_CAP ≈ −200: g = e^ℓ is 0 in f32 already below −104, so nothing
// the layer computes changes, but ℓ and the chunked family's sums of up to 64 of them stay finite.
const LOG_DECAY_CAP: f32 = 5.3;

// ln g = −exp(a_log)·softplus(a + dt_bias): kept in log form so that g → 0 stays finite.
fn log_decay(a_log: f32, arg: f32) -> f32 {
    return -exp(min(log_decay_exponent(a_log, arg), LOG_DECAY_CAP));
}

// Linear workgroup index of a grid folded into x and y (x is capped at 65 535 workgroups).
fn folded(wg: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wg.x + wg.y * nwg.x;
}

// Component i (0 … 3) of v, by selects: a vector indexed at run time may leave the registers.
fn component(v: vec4<f32>, i: u32) -> f32 {
    return select(select(select(v.x, v.y, i == 1u), v.z, i == 2u), v.w, i == 3u);
}
