// The chunked family, forward step 3, parallel over (chunk, value head): the chunk's outputs from the
// state entering it (ckpt, written by chunk_state) and U (chunk_work), with P = QK ⊙ M:
//   O = [diag(d) Q | P] [S; U].
// Nothing here depends on another chunk, so it runs after the serial pass instead of inside it.
// Writes o (before the norm) for the chunk's valid rows.
// Grid: folded, chunk slots · nv workgroups.

const OP_O: u32 = 0u;

fn a_column_major(op: u32, k0: u32) -> bool {
    return false;
}

fn b_column_major(op: u32, k0: u32) -> bool {
    return false;
}

fn load_a(op: u32, r: u32, k: u32) -> f32 {
    if (k < DK) {
        return ck_d[r] * chunk_q(r, k);
    }
    let s = k - DK;
    if (s > r) {
        return 0.0;
    }
    return chunk_work[fwd_m(r, s)] * chunk_work[fwd_qk(r, s)];
}

fn load_b(op: u32, k: u32, c: u32) -> f32 {
    if (k < DK) {
        return ckpt[chunk_state_at(ck_slot) + k * DV + c];
    }
    return chunk_work[fwd_u(k - DK, c)];
}

fn store_c(op: u32, r: u32, c: u32, value: f32) {
    if (r < ck_len) {
        o[chunk_o_at(r, c)] = value;
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
    mm(OP_O, c, DV, DK + c, tid);
}
