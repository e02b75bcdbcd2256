// The gates of value head h at token t from the raw a, b, a_log and dt_bias: ℓ = ln g =
// −exp(a_log)·softplus(a + dt_bias) (in log space, capped: math.wgsl's log_decay), β = σ(b), and
// their derivatives for the backward, stored as gate_values.wgsl lays them out. The q/k norms'
// dispatch computes them for every family; the chunk-solved recurrent forward that computes its own
// inputs (stage_inputs_conv.wgsl) computes them where it reads them.

struct GateTerms {
    ell: f32,
    beta: f32,
    // ∂β/∂b, ∂ℓ/∂(a + dt_bias), ∂ℓ/∂a_log.
    beta_slope: f32,
    arg_slope: f32,
    a_log_slope: f32,
}

fn gate_terms(t: u32, h: u32) -> GateTerms {
    let e = t * layer.nv + h;
    let arg = a[e] + dt_bias[h];
    let ell = log_decay(a_log[h], arg);
    let beta = sigmoid(b[e]);
    // ∂ℓ/∂arg = −exp(a_log + ln σ(arg)), whose exponent is at most ℓ's (σ ≤ softplus), so finite
    // below the cap; at the cap ℓ is constant and both its derivatives are 0. 1 − β is σ(−b), which
    // does not cancel in f32 when β → 1.
    let open = log_decay_exponent(a_log[h], arg) < LOG_DECAY_CAP;
    return GateTerms(ell, beta, beta * sigmoid(-b[e]), select(0.0, -exp(a_log[h] - softplus(-arg)), open), select(0.0, ell, open));
}

fn store_gate_terms(t: u32, h: u32, x: GateTerms) {
    let e = t * layer.nv + h;
    let n = layer.tokens * layer.nv;
    gates[e] = x.ell;
    gates[n + e] = x.beta;
    gates[2u * n + e] = x.beta_slope;
    gates[3u * n + e] = x.arg_slope;
    gates[4u * n + e] = x.a_log_slope;
}
