// Gated RMSNorm backward: dz_j = dout_j·o_j r·norm_j·silu'(z_j); the per-element term of dnorm,
// dout_j·o_j r·silu(z_j); and do_j = r·norm_j·silu(z_j)·dout_j − o_j·r³·(1/DV)·Σ_m dout_m norm_m silu(z_m) o_m.
// One workgroup of VEC threads per (token, value head).

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = folded(wg, nwg);
    if (row >= layer.tokens * layer.nv) {
        return;
    }
    var partial_dot = 0.0;
    for (var j = tid; j < DV; j = j + VEC) {
        let e = row * DV + j;
        partial_dot = partial_dot + dout[e] * norm[j] * silu(z[e]) * o[e];
    }
    let dot = row_sum2(tid, vec2<f32>(partial_dot, 0.0)).x;
    let r = rstd[row];
    for (var j = tid; j < DV; j = j + VEC) {
        let e = row * DV + j;
        let s = silu(z[e]);
        dz[e] = dout[e] * o[e] * r * norm[j] * silu_grad(z[e]);
        dnorm_term[e] = dout[e] * o[e] * r * s;
        d_o[e] = r * norm[j] * s * dout[e] - o[e] * r * r * r * dot / f32(DV);
    }
}
