// Gated RMSNorm backward: dz_j = dout_j·o_j r·norm_j·silu'(z_j); the per-element term of dnorm,
// dout_j·o_j r·silu(z_j); and do_j = r·norm_j·silu(z_j)·dout_j − o_j·r³·(1/DV)·Σ_m dout_m norm_m silu(z_m) o_m.
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
    // This thread's dout, o, z and norm (elements past DV read element DV − 1; their dout is
    // masked to 0).
    var dv: array<f32, PER_THREAD>;
    var ov: array<f32, PER_THREAD>;
    var zv: array<f32, PER_THREAD>;
    var gain: array<f32, PER_THREAD>;
    for (var i = 0u; i < PER_THREAD; i = i + 1u) {
        let j = min(tid + VEC * i, DV - 1u);
        dv[i] = select(0.0, dout[row * DV + j], tid + VEC * i < DV);
        ov[i] = o[row * DV + j];
        zv[i] = z[row * DV + j];
        gain[i] = norm[j];
    }
    let r = rstd[row];
    var partial_dot = 0.0;
    for (var i = 0u; i < PER_THREAD; i = i + 1u) {
        partial_dot = partial_dot + dv[i] * gain[i] * silu(zv[i]) * ov[i];
    }
    let dot = row_sum2(tid, vec2<f32>(partial_dot, 0.0)).x;
    for (var i = 0u; i < PER_THREAD; i = i + 1u) {
        let j = tid + VEC * i;
        if (j < DV) {
            let e = row * DV + j;
            let s = silu(zv[i]);
            dz[e] = dv[i] * ov[i] * r * gain[i] * silu_grad(zv[i]);
            dnorm_term[e] = dv[i] * ov[i] * r * s;
            d_o[e] = r * gain[i] * s * dv[i] - ov[i] * r * r * r * dot / f32(DV);
        }
    }
}
