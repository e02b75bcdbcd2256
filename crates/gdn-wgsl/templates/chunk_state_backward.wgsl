// The chunked family, backward step 1: the reverse pass over chunks, serial in time and parallel over
// (sequence, value head, block of CB columns), from dS = dhT (or 0). For each chunk, last to first,
// with dS the gradient of the state leaving it:
//   dU = Pᵀ dO + diag(λ) K dS;   dS ← G dS + e₁ (Qᵀ diag(d¹) dO − W¹ᵀ dU).
// Writes the gradient of the state leaving every chunk into dckpt (slot by slot, like ckpt), dU into
// chunk_bwd, and dh0 (when h0 was given). Columns are independent, as in the forward.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

const OP_DU_P: u32 = 0u;
const OP_DU_S: u32 = 1u;
const OP_DS_Q: u32 = 2u;
const OP_DS_W: u32 = 3u;

var<private> col0: u32;
var<private> first_chunk: bool;

fn load_a(op: u32, r: u32, k: u32) -> f32 {
    switch op {
        case OP_DU_P: {
            if (r > k) {
                return 0.0;
            }
            return chunk_fwd[fwd_m(k, r)] * chunk_fwd[fwd_qk(k, r)];
        }
        case OP_DU_S: {
            return chunk_k(r, k);
        }
        case OP_DS_Q: {
            return chunk_q(k, r) * ck_d1[k];
        }
        default: {
            return chunk_fwd[fwd_w1(k, r)];
        }
    }
}

fn load_b(op: u32, k: u32, c: u32) -> f32 {
    switch op {
        case OP_DU_P, OP_DS_Q: {
            return chunk_do(k, col0 + c);
        }
        case OP_DU_S: {
            return dckpt[chunk_state_at(ck_slot) + k * DV + col0 + c];
        }
        default: {
            return chunk_bwd[bwd_du(k, col0 + c)];
        }
    }
}

// Where the gradient of the state entering the chunk goes: the previous slot, or dh0.
fn store_entering(r: u32, col: u32, value: f32, add: bool) {
    let at = r * DV + col;
    if (first_chunk) {
        let h0_at = (chunk_sequence(ck_slot) * layer.nv + ck_h) * DK * DV + at;
        dh0[h0_at] = select(0.0, dh0[h0_at], add) + value;
    } else {
        let prev = chunk_state_at(ck_slot) - layer.nv * DK * DV + at;
        dckpt[prev] = select(0.0, dckpt[prev], add) + value;
    }
}

fn store_c(op: u32, r: u32, c: u32, value: f32) {
    let col = col0 + c;
    switch op {
        case OP_DU_P: {
            chunk_bwd[bwd_du(r, col)] = value;
        }
        case OP_DU_S: {
            chunk_bwd[bwd_du(r, col)] = chunk_bwd[bwd_du(r, col)] + ck_lam[r] * value;
        }
        case OP_DS_Q: {
            let leaving = dckpt[chunk_state_at(ck_slot) + r * DV + col];
            store_entering(r, col, chunk_decay() * leaving + chunk_first_decay() * value, false);
        }
        default: {
            store_entering(r, col, -chunk_first_decay() * value, true);
        }
    }
}

@compute @workgroup_size(MM_THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let blocks = (DV + CB - 1u) / CB;
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nv * blocks) {
        return;
    }
    col0 = (job % blocks) * CB;
    let width = min(CB, DV - col0);
    let h = (job / blocks) % layer.nv;
    let n = job / (blocks * layer.nv);
    let first = ckpt_first(n);
    let chunks = ckpt_first(n + 1u) - first;
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
        mm(OP_DU_P, c, width, c, tid);
        mm(OP_DU_S, c, width, DK, tid);
        storageBarrier();
        if (chunk > 0u || layer.has_h0 != 0u) {
            mm(OP_DS_Q, DK, width, c, tid);
            mm(OP_DS_W, DK, width, c, tid);
            storageBarrier();
        }
    }
}
