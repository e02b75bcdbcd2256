// The chunked family, step 1, parallel over (chunk, value head): everything of a chunk that does not
// depend on the state (see chunks.wgsl for the chunk and its padding):
//   M_ts = e^{γ_t − γ_s} for s ≤ t (1 on the diagonal, 0 above), one running sum of ℓ per row;
//   QK = Q Kᵀ;  KK = K Kᵀ;  A = diag(β) (KK ⊙ M⁻), strictly lower;  T = (I + A)⁻¹;
//   W¹ = T diag(β d¹) K;  Ũ = T diag(β) V.
// T comes from inverting I + A in workgroup memory (solve.wgsl).
// Writes M, QK, KK, T, W¹ and Ũ into the chunk's forward region of chunk_work.
// Grid: folded, chunk slots · nv workgroups.

const OP_QK: u32 = 0u;
const OP_KK: u32 = 1u;
const OP_W1: u32 = 2u;
const OP_UT: u32 = 3u;

// How the operands lie: K read as Kᵀ (the B of Q Kᵀ and K Kᵀ) is contiguous along the depth.
fn a_column_major(op: u32, k0: u32) -> bool {
    return false;
}

fn b_column_major(op: u32, k0: u32) -> bool {
    return op == OP_QK || op == OP_KK;
}

fn load_a(op: u32, r: u32, k: u32) -> f32 {
    switch op {
        case OP_QK: {
            return chunk_q(r, k);
        }
        case OP_KK: {
            return chunk_k(r, k);
        }
        default: {
            return solve[r * CMAX + k];
        }
    }
}

fn load_b(op: u32, k: u32, c: u32) -> f32 {
    switch op {
        case OP_QK, OP_KK: {
            return chunk_k(c, k);
        }
        case OP_W1: {
            return ck_beta[k] * ck_d1[k] * chunk_k(k, c);
        }
        default: {
            return ck_beta[k] * chunk_v(k, c);
        }
    }
}

fn store_c(op: u32, r: u32, c: u32, value: f32) {
    switch op {
        case OP_QK: {
            chunk_work[fwd_qk(r, c)] = value;
        }
        case OP_KK: {
            chunk_work[fwd_kk(r, c)] = value;
            var a = 0.0;
            if (c < r) {
                a = ck_beta[r] * chunk_work[fwd_m(r, c)] * value;
            }
            solve[r * CMAX + c] = a;
        }
        case OP_W1: {
            chunk_work[fwd_w1(r, c)] = value;
        }
        default: {
            chunk_work[fwd_ut(r, c)] = value;
        }
    }
}

@compute @workgroup_size(MM_THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job >= chunk_slots() * layer.nv) {
        return;
    }
    chunk_begin(job / layer.nv, job % layer.nv, tid);
    let c = chunk_size();

    if (tid < c) {
        var span = 0.0;
        for (var back = 0u; back < c; back = back + 1u) {
            let s = c - 1u - back;
            var m = 0.0;
            if (s == tid) {
                m = 1.0;
            } else if (s < tid) {
                span = span + ck_ell[s + 1u];
                m = exp(span);
            }
            chunk_work[fwd_m(tid, s)] = m;
        }
    }
    storageBarrier();
    mm(OP_QK, c, c, DK, tid);
    if (c < CMAX) {
        // The inverse runs over CMAX × CMAX: rows and columns past the chunk stay zero in A.
        for (var e = tid; e < CMAX * CMAX; e = e + MM_THREADS) {
            solve[e] = 0.0;
        }
        workgroupBarrier();
    }
    mm(OP_KK, c, c, DK, tid);
    workgroupBarrier();

    solve_inverse(tid);
    for (var e = tid; e < c * c; e = e + MM_THREADS) {
        chunk_work[fwd_t(e / c, e % c)] = solve[(e / c) * CMAX + e % c];
    }
    mm(OP_W1, c, DK, c, tid);
    mm(OP_UT, c, DV, c, tid);
}
