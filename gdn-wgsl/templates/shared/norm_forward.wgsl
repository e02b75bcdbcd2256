// Gated RMSNorm, norm before gate: rstd = 1 / sqrt(mean_j o_j² + ε), out_j = o_j·rstd·norm_j·silu(z_j).
// One workgroup of VEC threads per (token, value head).

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = folded(wg, nwg);
    if (row >= layer.tokens * layer.nv) {
        return;
    }
    var sq = 0.0;
    for (var j = tid; j < DV; j = j + VEC) {
        let v = o[row * DV + j];
        sq = sq + v * v;
    }
    let r = 1.0 / sqrt(row_sum2(tid, vec2<f32>(sq, 0.0)).x / f32(DV) + layer.rms_eps);
    for (var j = tid; j < DV; j = j + VEC) {
        let e = row * DV + j;
        out[e] = o[e] * r * norm[j] * silu(z[e]);
    }
    if (tid == 0u) {
        rstd[row] = r;
    }
}
