// ℓ = ln g = −exp(a_log)·softplus(a + dt_bias) (in log space, capped: math.wgsl's log_decay), β = σ(b).
// One thread per (token, value head).

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = folded(wg, nwg) * ELEMENTS + lid;
    if (e >= layer.tokens * layer.nv) {
        return;
    }
    let h = e % layer.nv;
    gates[e] = log_decay(a_log[h], a[e] + dt_bias[h]);
    gates[layer.tokens * layer.nv + e] = sigmoid(b[e]);
}
