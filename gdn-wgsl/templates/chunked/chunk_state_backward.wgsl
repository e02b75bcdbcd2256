// The chunked family, backward step 1: the reverse pass over chunks, serial in time and parallel over
// (sequence, value head, block of CB columns), from dS = dhT (or 0). For each chunk, last to first,
// with dS the gradient of the state leaving it:
//   dU = [Pᵀ | diag(λ) K] [dO; dS];   dS ← G dS + e₁ [Qᵀ diag(d¹) | −W¹ᵀ] [dO; dU].
// Writes the gradient of the state leaving every chunk into dckpt (slot by slot, like ckpt), dU into
// chunk_work's backward region, and dh0 (when h0 was given). Columns are independent, as in the forward.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

const OP_DU: u32 = 0u;
const OP_DS: u32 = 1u;

var<private> first_chunk: bool;

// How the operands lie: Pᵀ, Qᵀ and W¹ᵀ are contiguous along their rows; diag(λ) K is not.
fn a_column_major(op: u32, k0: u32) -> bool {
    return op == OP_DS || k0 < chunk_size();
}

fn b_column_major(op: u32, k0: u32) -> bool {
    return false;
}

fn load_a(op: u32, r: u32, k: u32) -> f32 {
    let c = chunk_size();
    if (op == OP_DU) {
        if (k >= c) {
            return ck_lam[r] * chunk_k(r, k - c);
        }
        if (r > k) {
            return 0.0;
        }
        return chunk_work[fwd_m(k, r)] * chunk_work[fwd_qk(k, r)];
    }
    if (k < c) {
        return chunk_q(k, r) * ck_d1[k];
    }
    return -chunk_work[fwd_w1(k - c, r)];
}

fn load_b(op: u32, k: u32, col: u32) -> f32 {
    let c = chunk_size();
    if (k < c) {
        return chunk_do(k, col0 + col);
    }
    if (op == OP_DU) {
        return dckpt[chunk_state_at(ck_slot) + (k - c) * DV + col0 + col];
    }
    return chunk_work[bwd_du(k - c, col0 + col)];
}

fn store_c(op: u32, r: u32, c: u32, value: f32) {
    let col = col0 + c;
    if (op == OP_DU) {
        chunk_work[bwd_du(r, col)] = value;
        return;
    }
    let leaving = dckpt[chunk_state_at(ck_slot) + r * DV + col];
    let entering = chunk_decay() * leaving + chunk_first_decay() * value;
    if (first_chunk) {
        dh0[(chunk_sequence(ck_slot) * layer.nv + ck_h) * DK * DV + r * DV + col] = entering;
    } else {
        dckpt[chunk_state_at(ck_slot) - layer.nv * DK * DV + r * DV + col] = entering;
    }
}

@compute @workgroup_size(MM_THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job >= column_jobs()) {
        return;
    }
    let j = column_job(job);
    let n = j.n;
    let h = j.h;
    let width = j.width;
    let first = j.first;
    let chunks = j.chunks;
    let c = chunk_size();

    let end_at = ((first + chunks - 1u) * layer.nv + h) * DK * DV;
    for (var e = tid; e < DK * width; e = e + MM_THREADS) {
        let at = (e / width) * DV + col0 + e % width;
        var ds = 0.0;
        if (layer.has_dht != 0u) {
            ds = dht[(n * layer.nv + h) * DK * DV + at];
        }
        dckpt[end_at + at] = ds;
    }
    storageBarrier();
    for (var back = 0u; back < chunks; back = back + 1u) {
        let chunk = chunks - 1u - back;
        chunk_begin(first + chunk, h, tid);
        first_chunk = chunk == 0u;
        mm(OP_DU, c, width, c + DK, tid);
        storageBarrier();
        if (chunk > 0u || layer.has_h0 != 0u) {
            mm(OP_DS, DK, width, 2u * c, tid);
            storageBarrier();
        }
    }
}
