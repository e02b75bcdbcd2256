// From the family's partials of dℓ and dβ (layer.gate_parts of each per token and head):
// da = dℓ·(−exp(a_log))·σ(arg), db = dβ·β(1 − β) with 1 − β = σ(−b) (1 − β cancels in f32 when
// β → 1), and the per-element terms of the parameter gradients, dlog_term = dℓ·ℓ (summed into
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
    let parts = layer.gate_parts;
    var dell = 0.0;
    var dbeta = 0.0;
    for (var p = 0u; p < parts; p = p + 1u) {
        dell = dell + gate_grad_parts[e * parts + p];
        dbeta = dbeta + gate_grad_parts[(layer.tokens * layer.nv + e) * parts + p];
    }
    let arg = a[e] + dt_bias[h];
    let bt = gate_beta(e);
    da[e] = dell * (-exp(a_log[h])) * sigmoid(arg);
    db[e] = dbeta * bt * sigmoid(-b[e]);
    dlog_term[e] = dell * gate_log_decay(e);
}
