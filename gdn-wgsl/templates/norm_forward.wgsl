// Gated RMSNorm, norm before gate: rstd = 1 / sqrt(mean_j o_j² + ε), out_j = o_j·rstd·norm_j·silu(z_j).
// One workgroup of VEC threads per (token, value head), thread tid owning elements j = tid + VEC·i.
// Every load is issued before any is used, none under a branch (a load there is waited for before
// the branches join): one load latency a row, not one for each pass over it.

const PER_THREAD: u32 = (DV + VEC - 1u) / VEC;

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = folded(wg, nwg);
    if (row >= layer.tokens * layer.nv) {
        return;
    }
    // This thread's o, z and norm (elements past DV read element DV − 1; their o is masked to 0).
    var ov: array<f32, PER_THREAD>;
    var zv: array<f32, PER_THREAD>;
    var gain: array<f32, PER_THREAD>;
    for (var i = 0u; i < PER_THREAD; i = i + 1u) {
        let j = min(tid + VEC * i, DV - 1u);
        ov[i] = select(0.0, o[row * DV + j], tid + VEC * i < DV);
        zv[i] = z[row * DV + j];
        gain[i] = norm[j];
    }
    var sq = 0.0;
    for (var i = 0u; i < PER_THREAD; i = i + 1u) {
        sq = sq + ov[i] * ov[i];
    }
    let r = 1.0 / sqrt(row_sum2(tid, vec2<f32>(sq, 0.0)).x / f32(DV) + layer.rms_eps);
    for (var i = 0u; i < PER_THREAD; i = i + 1u) {
        let j = tid + VEC * i;
        if (j < DV) {
            out[row * DV + j] = ov[i] * r * gain[i] * silu(zv[i]);
        }
    }
    if (tid == 0u) {
        rstd[row] = r;
    }
}
