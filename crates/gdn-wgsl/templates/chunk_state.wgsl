// The chunked family, step 2: the pass over chunks, serial in time and parallel over (sequence,
// value head, block of CB state columns). With S the state entering a chunk (h0 or 0 for the first),
// e₁ = e^{γ_0} and G = e^{γ_{C−1}}:
//   U = Ũ − e₁ W¹ S;   O = [diag(d) Q | P] [S; U] with P = QK ⊙ M;   S ← G S + Kᵀ diag(λ) U.
// Writes the state at every chunk start into ckpt (the backward's only record of the forward), U into
// chunk_fwd, o (before the norm) and hT. Columns of the state are independent, so each workgroup keeps
// its CB columns; the state lives in ckpt itself, each phase separated by a storage barrier.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

const OP_U: u32 = 0u;
const OP_O: u32 = 1u;
const OP_S: u32 = 2u;

var<private> last_chunk: bool;

// How the operands lie: Kᵀ (the A of the state update) is contiguous along its rows.
fn a_column_major(op: u32, k0: u32) -> bool {
    return op == OP_S;
}

fn b_column_major(op: u32, k0: u32) -> bool {
    return false;
}

fn load_a(op: u32, r: u32, k: u32) -> f32 {
    switch op {
        case OP_U: {
            return chunk_fwd[fwd_w1(r, k)];
        }
        case OP_O: {
            if (k < DK) {
                return ck_d[r] * chunk_q(r, k);
            }
            let s = k - DK;
            if (s > r) {
                return 0.0;
            }
            return chunk_fwd[fwd_m(r, s)] * chunk_fwd[fwd_qk(r, s)];
        }
        default: {
            return chunk_k(k, r);
        }
    }
}

fn load_b(op: u32, k: u32, c: u32) -> f32 {
    switch op {
        case OP_U: {
            return ckpt[chunk_state_at(ck_slot) + k * DV + col0 + c];
        }
        case OP_O: {
            if (k < DK) {
                return ckpt[chunk_state_at(ck_slot) + k * DV + col0 + c];
            }
            return chunk_fwd[fwd_u(k - DK, col0 + c)];
        }
        default: {
            return ck_lam[k] * chunk_fwd[fwd_u(k, col0 + c)];
        }
    }
}

fn store_c(op: u32, r: u32, c: u32, value: f32) {
    let col = col0 + c;
    switch op {
        case OP_U: {
            chunk_fwd[fwd_u(r, col)] = chunk_fwd[fwd_ut(r, col)] - chunk_first_decay() * value;
        }
        case OP_O: {
            if (r < ck_len) {
                o[chunk_o_at(r, col)] = value;
            }
        }
        default: {
            let at = chunk_state_at(ck_slot) + r * DV + col;
            let next = chunk_decay() * ckpt[at] + value;
            if (last_chunk) {
                ht[(chunk_sequence(ck_slot) * layer.nv + ck_h) * DK * DV + r * DV + col] = next;
            } else {
                ckpt[at + layer.nv * DK * DV] = next;
            }
        }
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

    let start_at = (first * layer.nv + h) * DK * DV;
    for (var e = tid; e < DK * width; e = e + MM_THREADS) {
        let at = (e / width) * DV + col0 + e % width;
        var s = 0.0;
        if (layer.has_h0 != 0u) {
            s = h0[(n * layer.nv + h) * DK * DV + at];
        }
        ckpt[start_at + at] = s;
    }
    storageBarrier();
    for (var chunk = 0u; chunk < chunks; chunk = chunk + 1u) {
        chunk_begin(first + chunk, h, tid);
        last_chunk = chunk + 1u == chunks;
        mm(OP_U, c, width, DK, tid);
        storageBarrier();
        mm(OP_O, c, width, DK + c, tid);
        mm(OP_S, DK, width, c, tid);
        storageBarrier();
    }
}
