// The chunked family on tensor cores, forward step 1, parallel over (chunk, value head): the chunk's
// record (tensor_core.wgsl: β, its decays and span tables, computed once here for every later kernel) and
// its operands in f16, chunk-major with rows of a constant stride, so that cooperative loads read
// them straight from storage; rows past the chunk's valid tokens are zero:
//   q_half = 16 q̂ and k_half = k̂ of the key head (written by its first value head),
//   qd_half = 16 diag(d¹) q̂,  x_half = σ_β diag(β d¹) k̂ (X¹),  y_half = σ_β diag(β) v (Y)  of the
// value head. (q̂'s entries are about dk⁻¹: ×16 keeps them clear of f16's subnormals.)
// Grid: folded, chunk slots · nv workgroups.

fn pack_chunk(job: u32, tid: u32) {
    chunk_begin(job / layer.nv, job % layer.nv, tid);
    let c = chunk_size();
    let beta_scale = range_scale(chunk_beta_bound());
    let at = (ck_slot * layer.nv + ck_h) * RECORD;
    if (tid < c) {
        let start = (tid / BLOCK) * BLOCK;
        var head = 0.0;
        for (var u = start; u <= tid; u = u + 1u) {
            head = head + ck_ell[u];
        }
        var tail = 0.0;
        for (var u = tid + 1u; u < start + BLOCK; u = u + 1u) {
            tail = tail + ck_ell[u];
        }
        record[at + REC_BETA + tid] = ck_beta[tid];
        record[at + REC_D1 + tid] = ck_d1[tid];
        record[at + REC_LAM + tid] = ck_lam[tid];
        record[at + REC_HEAD + tid] = head;
        record[at + REC_TAIL + tid] = tail;
    }
    if (tid < c / BLOCK) {
        var total = 0.0;
        for (var u = tid * BLOCK; u < (tid + 1u) * BLOCK; u = u + 1u) {
            total = total + ck_ell[u];
        }
        record[at + REC_BLOCKS + tid] = total;
    }
    if (tid == 0u) {
        record[at + REC_E1] = chunk_first_decay();
        record[at + REC_G] = chunk_decay();
        record[at + REC_BETA_SCALE] = beta_scale;
    }

    // Four elements an invocation per pass, all loaded before any is stored, so that each invocation
    // has four loads in flight rather than one.
    let key = key_rows() * DK;
    let head = head_rows() * DK;
    let first_of_key = ck_h % layer.rep == 0u;
    let keys_end = c * DK;
    for (var e0 = tid; e0 < keys_end; e0 = e0 + 4u * THREADS) {
        var q: array<f32, 4>;
        var k: array<f32, 4>;
        for (var j = 0u; j < 4u; j = j + 1u) {
            let e = min(e0 + j * THREADS, keys_end - 1u);
            q[j] = chunk_q(e / DK, e % DK);
            k[j] = chunk_k(e / DK, e % DK);
        }
        for (var j = 0u; j < 4u; j = j + 1u) {
            let e = e0 + j * THREADS;
            if (e < keys_end) {
                let t = e / DK;
                qd_half[head + e] = f16(16.0 * ck_d1[t] * q[j]);
                x_half[head + e] = f16(beta_scale * ck_beta[t] * ck_d1[t] * k[j]);
                if (first_of_key) {
                    q_half[key + e] = f16(16.0 * q[j]);
                    k_half[key + e] = f16(k[j]);
                }
            }
        }
    }
    let values = head_rows() * DV;
    let values_end = c * DV;
    for (var e0 = tid; e0 < values_end; e0 = e0 + 4u * THREADS) {
        var v: array<f32, 4>;
        for (var j = 0u; j < 4u; j = j + 1u) {
            let e = min(e0 + j * THREADS, values_end - 1u);
            v[j] = chunk_v(e / DV, e % DV);
        }
        for (var j = 0u; j < 4u; j = j + 1u) {
            let e = e0 + j * THREADS;
            if (e < values_end) {
                y_half[values + e] = f16(beta_scale * ck_beta[e / DV] * v[j]);
            }
        }
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
