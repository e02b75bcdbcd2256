// From the recurrence's per-column-group partials of dg and dβ (DG_PARTS of each per token and
// head): da = dg·g·(−exp(a_log))·σ(arg), db = dβ·β(1 − β) with 1 − β = σ(−b) (1 − β cancels in
// f32 when β → 1), and the per-element terms of the
// parameter gradients, dlog_term = dg·g·ln g (summed into da_log; ddt_bias sums da).
// One thread per (token, value head).

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = folded(wg, nwg) * ELEMENTS + lid;
    if (e >= layer.tokens * layer.nv) {
        return;
    }
    let h = e % layer.nv;
    var dg = 0.0;
    var dbeta = 0.0;
    for (var p = 0u; p < DG_PARTS; p = p + 1u) {
        dg = dg + gate_grad_parts[e * DG_PARTS + p];
        dbeta = dbeta + gate_grad_parts[(layer.tokens * layer.nv + e) * DG_PARTS + p];
    }
    let arg = a[e] + dt_bias[h];
    let g = gate_decay(e);
    let bt = gate_beta(e);
    da[e] = dg * g * (-exp(a_log[h])) * sigmoid(arg);
    db[e] = dbeta * bt * sigmoid(-b[e]);
    dlog_term[e] = dg * g * log_decay(a_log[h], arg);
}
