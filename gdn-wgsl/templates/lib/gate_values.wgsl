// gates packs ℓ = ln g, β, then for the backward ∂β/∂b = β(1 − β), ∂ℓ/∂(a + dt_bias) and
// ∂ℓ/∂a_log, each [tokens, nv] (qk_norm_gates_forward writes them, and the q/k norms' sums after
// them: qk_rows.wgsl's qk_ss_at); gate_grad_parts packs
// layer.gate_parts partials of dℓ per (token, head), then as many of dβ. ℓ is kept rather than g: g
// underflows to 0 long before ℓ leaves f32's range, and the chunked family's decays are sums of ℓ.

fn gate_log_decay(e: u32) -> f32 {
    return gates[e];
}

fn gate_decay(e: u32) -> f32 {
    return exp(gates[e]);
}

fn gate_beta(e: u32) -> f32 {
    return gates[layer.tokens * layer.nv + e];
}

fn gate_beta_slope(e: u32) -> f32 {
    return gates[2u * layer.tokens * layer.nv + e];
}

fn gate_arg_slope(e: u32) -> f32 {
    return gates[3u * layer.tokens * layer.nv + e];
}

fn gate_a_log_slope(e: u32) -> f32 {
    return gates[4u * layer.tokens * layer.nv + e];
}
