// The chunked family on tensor cores, forward step 1, parallel over (chunk, value head): the chunk's
// operands in f16, chunk-major with rows of a constant stride, so that cooperative loads read them
// straight from storage; rows past the chunk's valid tokens are zero (chunks.wgsl's padding):
//   q_half = 16 q̂ and k_half = k̂ of the key head (written by its first value head),
//   qd_half = 16 diag(d¹) q̂,   x_half = σ_β diag(β d¹) k̂ (X¹),   y_half = σ_β diag(β) v (Y)   of the value head,
// σ_β = range_scale(max β) (coop.wgsl), recomputed from β by every kernel that reads x_half or y_half.
// (q̂'s entries are about dk⁻¹: ×16 keeps them clear of f16's subnormals.)
// Grid: folded, chunk slots · nv workgroups.

// The work of workgroup `job` (every workgroup of the grid but its overhang).
fn pack_chunk(job: u32, tid: u32) {
    chunk_begin(job / layer.nv, job % layer.nv, tid);
    let c = chunk_size();
    let beta_scale = range_scale(chunk_beta_bound());
    let key = key_rows() * DK;
    let head = head_rows() * DK;
    let first_of_key = ck_h % layer.rep == 0u;
    for (var e = tid; e < c * DK; e = e + THREADS) {
        let t = e / DK;
        let i = e % DK;
        let q = chunk_q(t, i);
        let k = chunk_k(t, i);
        qd_half[head + e] = f16(16.0 * ck_d1[t] * q);
        x_half[head + e] = f16(beta_scale * ck_beta[t] * ck_d1[t] * k);
        if (first_of_key) {
            q_half[key + e] = f16(16.0 * q);
            k_half[key + e] = f16(k);
        }
    }
    let values = head_rows() * DV;
    for (var e = tid; e < c * DV; e = e + THREADS) {
        let t = e / DV;
        y_half[values + e] = f16(beta_scale * ck_beta[t] * chunk_v(t, e % DV));
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        pack_chunk(job, tid);
    }
}
