// The chunked family, forward step 3, parallel over (chunk, value head): the chunk's outputs from the
// state entering it (ckpt, written by chunk_state) and U (chunk_fwd), with P = QK ⊙ M:
//   O = [diag(d) Q | P] [S; U].
// Nothing here depends on another chunk, so it runs after the serial pass instead of inside it.
// The largest magnitude of S and U bounds the second operand for mm_operand_scales (the tensor-core
// matmul; f32 ignores it). Writes o (before the norm) for the chunk's valid rows.
// Grid: folded, chunk slots · nv workgroups.

const OP_O: u32 = 0u;

// The bound, as the bits of a non-negative f32 (which order as u32 do), in [0]. Four words: every
// workgroup variable is a multiple of 16 bytes, so that the tensor-core matmul's staging stays
// 16-byte aligned (as cooperative loads need) in whatever order a driver lays the variables out.
var<workgroup> operand_max: array<atomic<u32>, 4>;

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
    return chunk_fwd[fwd_m(r, s)] * chunk_fwd[fwd_qk(r, s)];
}

fn load_b(op: u32, k: u32, c: u32) -> f32 {
    if (k < DK) {
        return ckpt[chunk_state_at(ck_slot) + k * DV + c];
    }
    return chunk_fwd[fwd_u(k - DK, c)];
}

fn store_c(op: u32, r: u32, c: u32, value: f32) {
    if (r < ck_len) {
        o[chunk_o_at(r, c)] = value;
    }
}

// The largest magnitude of the entering state and of U, over the workgroup (1 where the matmul
// ignores bounds, so that f32 reads neither twice).
fn operand_bound(tid: u32) -> f32 {
    if (!MM_USES_BOUNDS) {
        return 1.0;
    }
    var seen = 0.0;
    for (var e = tid; e < DK * DV; e = e + MM_THREADS) {
        seen = max(seen, abs(ckpt[chunk_state_at(ck_slot) + e]));
    }
    for (var e = tid; e < chunk_size() * DV; e = e + MM_THREADS) {
        seen = max(seen, abs(chunk_fwd[fwd_u(e / DV, e % DV)]));
    }
    atomicMax(&operand_max[0], bitcast<u32>(seen));
    workgroupBarrier();
    return bitcast<f32>(atomicLoad(&operand_max[0]));
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
    mm_operand_scales(chunk_q_bound(), operand_bound(tid));
    mm(OP_O, c, DV, DK + c, tid);
}
