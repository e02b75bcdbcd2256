// From the family's partials of dℓ and dβ (layer.gate_parts of each per token and head):
// da = dℓ·(−exp(a_log))·σ(arg) (in log space), db = dβ·β(1 − β) with 1 − β = σ(−b) (1 − β cancels
// in f32 when β → 1), and the per-element terms of the parameter gradients, dlog_term = dℓ·ℓ (summed into
// da_log; ddt_bias sums da). dℓ = dg·g: the families never divide by g, which underflows.
// One thread per (token, value head).

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = folded(wg, nwg) * ELEMENTS + lid;
    if (e >= layer.tokens * layer.nv) {
        return;
    }
    let h = e % layer.nv;
    // The partials, four a round into separate sums so that a round's loads are in flight together.
    let parts = layer.gate_parts;
    let ell_at = layer.gate_parts_base + e * parts;
    let beta_at = layer.gate_parts_base + (layer.tokens * layer.nv + e) * parts;
    var ells = vec4<f32>(0.0);
    var betas = vec4<f32>(0.0);
    var p = 0u;
    for (; p + 4u <= parts; p = p + 4u) {
        let at = vec4<u32>(p, p + 1u, p + 2u, p + 3u);
        let ell = vec4<u32>(ell_at) + at;
        let beta = vec4<u32>(beta_at) + at;
        ells = ells + vec4<f32>(gate_grad_parts[ell.x], gate_grad_parts[ell.y], gate_grad_parts[ell.z], gate_grad_parts[ell.w]);
        betas = betas + vec4<f32>(gate_grad_parts[beta.x], gate_grad_parts[beta.y], gate_grad_parts[beta.z], gate_grad_parts[beta.w]);
    }
    var dell = ells.x + ells.y + ells.z + ells.w;
    var dbeta = betas.x + betas.y + betas.z + betas.w;
    for (; p < parts; p = p + 1u) {
        dell = dell + gate_grad_parts[ell_at + p];
        dbeta = dbeta + gate_grad_parts[beta_at + p];
    }
    let arg = a[e] + dt_bias[h];
    let bt = gate_beta(e);
    // ∂ℓ/∂arg = −exp(a_log + ln σ(arg)), whose exponent is at most ℓ's (σ ≤ softplus), so finite
    // below the cap; at the cap ℓ is constant and both its derivatives are 0 (and dℓ = dg·g is 0).
    let open = log_decay_exponent(a_log[h], arg) < LOG_DECAY_CAP;
    da[e] = select(0.0, -dell * exp(a_log[h] - softplus(-arg)), open);
    db[e] = dbeta * bt * sigmoid(-b[e]);
    dlog_term[e] = select(0.0, dell * gate_log_decay(e), open);
}
