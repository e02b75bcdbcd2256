// Gated RMSNorm, norm before gate: rstd = 1 / sqrt(mean_j o_j² + ε), out_j = o_j·rstd·norm_j·silu(z_j).
// One workgroup of VEC threads per (token, value head), NORM_PER elements a thread.

const NORM_PER: u32 = (DV + VEC - 1u) / VEC;

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = folded(wg, nwg);
    if (row >= layer.tokens * layer.nv) {
        return;
    }
    // Every load of the row (o and z) issued before the reduction, so that they wait once.
    var ov: array<f32, NORM_PER>;
    var zv: array<f32, NORM_PER>;
    var sq = 0.0;
    for (var l = 0u; l < NORM_PER; l = l + 1u) {
        let e = row * DV + min(tid + l * VEC, DV - 1u);
        ov[l] = o[e];
        zv[l] = z[e];
    }
    for (var l = 0u; l < NORM_PER; l = l + 1u) {
        sq = sq + select(0.0, ov[l] * ov[l], tid + l * VEC < DV);
    }
    let r = 1.0 / sqrt(row_sum2(tid, vec2<f32>(sq, 0.0)).x / f32(DV) + layer.rms_eps);
    for (var l = 0u; l < NORM_PER; l = l + 1u) {
        let j = tid + l * VEC;
        if (j < DV) {
            out[row * DV + j] = ov[l] * r * norm[j] * silu(zv[l]);
        }
    }
    if (tid == 0u) {
        rstd[row] = r;
    }
}
