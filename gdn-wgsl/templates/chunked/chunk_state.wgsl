// The chunked family, step 2: the pass over chunks, serial in time and parallel over (sequence,
// value head, block of CB state columns). With S the state entering a chunk (h0 or 0 for the first),
// e₁ = e^{γ_0} and G = e^{γ_{C−1}}:
//   U = Ũ − e₁ W¹ S;   S ← G S + Kᵀ diag(λ) U.
// Writes the state at every chunk start into ckpt (the backward's only record of the forward and what
// chunk_output computes the outputs from), U into chunk_work, and hT. Columns of the state are
// independent, so each workgroup keeps its CB columns; the state lives in ckpt itself, each phase
// separated by a storage barrier.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

const OP_U: u32 = 0u;
const OP_S: u32 = 1u;

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
            return chunk_work[fwd_w1(r, k)];
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
        default: {
            return ck_lam[k] * chunk_work[fwd_u(k, col0 + c)];
        }
    }
}

fn store_c(op: u32, r: u32, c: u32, value: f32) {
    let col = col0 + c;
    switch op {
        case OP_U: {
            let u = chunk_work[fwd_ut(r, col)] - chunk_first_decay() * value;
            chunk_work[fwd_u(r, col)] = u;
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
        workgroupBarrier();
        mm(OP_S, DK, width, c, tid);
        storageBarrier();
        workgroupBarrier();
    }
}
