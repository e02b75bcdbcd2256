// From the family's partials of dℓ and dβ (layer.gate_parts of each per token and head):
// da = dℓ·(−exp(a_log))·σ(arg) (in log space), db = dβ·β(1 − β) with 1 − β = σ(−b) (1 − β cancels
// in f32 when β → 1), and the per-element terms of the parameter gradients, dlog_term = dℓ·ℓ (summed into
// da_log; ddt_bias sums da). dℓ = dg·g: the families never divide by g, which underflows.
// gate_lanes() invocations per (token, value head) add its partials, each at most four in one round
// of loads in flight together, and the first of them adds their sums in a fixed order (workgroup
// memory) and writes the gradients: a short batch's 32 partials a head are one load latency, not
// eight. ELEMENTS invocations a workgroup, the grid folded.

// Invocations per (token, value head): a power of two, at most 32, at least a quarter of its
// partials. The host sizes the grid by the same rule (gdn-wgsl's plan/shared.rs).
fn gate_lanes() -> u32 {
    var lanes = 1u;
    while (lanes < 32u && 4u * lanes < layer.gate_parts) {
        lanes = 2u * lanes;
    }
    return lanes;
}

var<workgroup> gate_sums: array<vec2<f32>, ELEMENTS>;

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let lanes = gate_lanes();
    let e = (folded(wg, nwg) * ELEMENTS + lid) / lanes;
    let lane = lid % lanes;
    let live = e < layer.tokens * layer.nv;
    // This lane's partials lane + lanes·i, four a round into separate sums.
    let parts = layer.gate_parts;
    var ells = vec4<f32>(0.0);
    var betas = vec4<f32>(0.0);
    if (live) {
        let ell_at = layer.gate_parts_base + e * parts;
        let beta_at = layer.gate_parts_base + (layer.tokens * layer.nv + e) * parts;
        for (var p = lane; p < parts; p = p + 4u * lanes) {
            let at = vec4<u32>(p) + vec4<u32>(0u, 1u, 2u, 3u) * lanes;
            let ok = at < vec4<u32>(parts);
            let ell = vec4<u32>(ell_at) + min(at, vec4<u32>(parts - 1u));
            let beta = vec4<u32>(beta_at) + min(at, vec4<u32>(parts - 1u));
            ells = ells + select(vec4<f32>(0.0), vec4<f32>(gate_grad_parts[ell.x], gate_grad_parts[ell.y], gate_grad_parts[ell.z], gate_grad_parts[ell.w]), ok);
            betas = betas + select(vec4<f32>(0.0), vec4<f32>(gate_grad_parts[beta.x], gate_grad_parts[beta.y], gate_grad_parts[beta.z], gate_grad_parts[beta.w]), ok);
        }
    }
    gate_sums[lid] = vec2<f32>(ells.x + ells.y + ells.z + ells.w, betas.x + betas.y + betas.z + betas.w);
    workgroupBarrier();
    if (!live || lane != 0u) {
        return;
    }
    var d = vec2<f32>(0.0);
    for (var l = 0u; l < lanes; l = l + 1u) {
        d = d + gate_sums[lid + l];
    }
    let dell = d.x;
    let dbeta = d.y;
    let h = e % layer.nv;
    let arg = a[e] + dt_bias[h];
    let bt = gate_beta(e);
    // ∂ℓ/∂arg = −exp(a_log + ln σ(arg)), whose exponent is at most ℓ's (σ ≤ softplus), so finite
    // below the cap; at the cap ℓ is constant and both its derivatives are 0 (and dℓ = dg·g is 0).
    let open = log_decay_exponent(a_log[h], arg) < LOG_DECAY_CAP;
    da[e] = select(0.0, -dell * exp(a_log[h] - softplus(-arg)), open);
    db[e] = dbeta * bt * sigmoid(-b[e]);
    dlog_term[e] = select(0.0, dell * gate_log_decay(e), open);
}
