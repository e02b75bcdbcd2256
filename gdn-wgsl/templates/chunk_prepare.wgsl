// The chunked family, step 1, parallel over (chunk, value head): everything of a chunk that does not
// depend on the state (see chunks.wgsl for the chunk and its padding):
//   M_ts = e^{γ_t − γ_s} for s ≤ t (1 on the diagonal, 0 above), one running sum of ℓ per row;
//   QK = Q Kᵀ;  KK = K Kᵀ;  A = diag(β) (KK ⊙ M⁻), strictly lower;  T = (I + A)⁻¹;
//   W¹ = T diag(β d¹) K;  Ũ = T diag(β) V.
// T comes from inverting I + A in workgroup memory, in place over A, by blocks of 16 (solve_inverse);
// it is stable without pivoting (|T_ts| ≤ 1 since ‖k̂‖ = 1).
// Writes M, QK, KK, T, W¹ and Ũ into the chunk's region of chunk_fwd.
// Grid: folded, chunk slots · nv workgroups.

var<workgroup> solve: array<f32, CMAX * CMAX>;

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
            chunk_fwd[fwd_qk(r, c)] = value;
        }
        case OP_KK: {
            chunk_fwd[fwd_kk(r, c)] = value;
            var a = 0.0;
            if (c < r) {
                a = ck_beta[r] * chunk_fwd[fwd_m(r, c)] * value;
            }
            solve[r * CMAX + c] = a;
        }
        case OP_W1: {
            chunk_fwd[fwd_w1(r, c)] = value;
        }
        default: {
            chunk_fwd[fwd_ut(r, c)] = value;
        }
    }
}

// T = (I + A)⁻¹ in place over A (strictly lower, CMAX × CMAX in `solve`), by SOLVE_BLOCK × SOLVE_BLOCK
// blocks: first the diagonal blocks side by side, by forward substitution row by row,
//   T_tj = −(A_tj + Σ_{j<s<t} A_ts T_sj);
// then each row of blocks i in order, every block j < i at once (one element per invocation each):
//   X_ij = Σ_{j ≤ k < i} A_ik T_kj  (over elements),  T_ij = −T_ii X_ij,
// reading only diagonal blocks and rows of blocks already final. The longest chain is 15 steps of
// substitution and three rows of products, where substitution over all CMAX rows takes 63 steps.
const SOLVE_BLOCK: u32 = 16u;

fn solve_at(row: u32, col: u32) -> u32 {
    return row * CMAX + col;
}

// Element (r, col) of X_ij = Σ_{k} A_ik T_kj, k over rows of blocks j … i − 1.
fn solve_x(i: u32, j: u32, r: u32, col: u32) -> f32 {
    var acc = 0.0;
    for (var k = j * SOLVE_BLOCK; k < i * SOLVE_BLOCK; k = k + 1u) {
        acc = acc + solve[solve_at(i * SOLVE_BLOCK + r, k)] * solve[solve_at(k, j * SOLVE_BLOCK + col)];
    }
    return acc;
}

// Element (r, col) of T_ii X_ij, with X_ij where T_ij will be.
fn solve_tx(i: u32, j: u32, r: u32, col: u32) -> f32 {
    let o = i * SOLVE_BLOCK;
    var acc = 0.0;
    for (var m = 0u; m <= r; m = m + 1u) {
        acc = acc + solve[solve_at(o + r, o + m)] * solve[solve_at(o + m, j * SOLVE_BLOCK + col)];
    }
    return acc;
}

// Sets block (i, j) element (r, col) when j < i.
fn solve_put(i: u32, j: u32, r: u32, col: u32, value: f32) {
    if (j < i) {
        solve[solve_at(i * SOLVE_BLOCK + r, j * SOLVE_BLOCK + col)] = value;
    }
}

fn solve_inverse(tid: u32) {
    let o = (tid / SOLVE_BLOCK) * SOLVE_BLOCK;
    let j = tid % SOLVE_BLOCK;
    for (var t = 1u; t < SOLVE_BLOCK; t = t + 1u) {
        let substitutes = tid < CMAX && j < t;
        var acc = 0.0;
        if (substitutes) {
            acc = solve[solve_at(o + t, o + j)];
            for (var s = j + 1u; s < t; s = s + 1u) {
                acc = acc + solve[solve_at(o + t, o + s)] * solve[solve_at(o + s, o + j)];
            }
        }
        workgroupBarrier();
        if (substitutes) {
            solve[solve_at(o + t, o + j)] = -acc;
        }
        workgroupBarrier();
    }
    if (tid < CMAX) {
        solve[solve_at(tid, tid)] = 1.0;
    }
    workgroupBarrier();
    // One element (r, col) of every block of the row: MM_THREADS = SOLVE_BLOCK².
    let r = tid / SOLVE_BLOCK;
    let col = tid % SOLVE_BLOCK;
    for (var i = 1u; i < CMAX / SOLVE_BLOCK; i = i + 1u) {
        // Blocks j < i, at most three of them (CMAX = 4 · SOLVE_BLOCK).
        var x = vec3<f32>();
        x.x = solve_x(i, 0u, r, col);
        if (i > 1u) {
            x.y = solve_x(i, 1u, r, col);
        }
        if (i > 2u) {
            x.z = solve_x(i, 2u, r, col);
        }
        workgroupBarrier();
        solve_put(i, 0u, r, col, x.x);
        solve_put(i, 1u, r, col, x.y);
        solve_put(i, 2u, r, col, x.z);
        workgroupBarrier();
        var y = vec3<f32>();
        y.x = solve_tx(i, 0u, r, col);
        if (i > 1u) {
            y.y = solve_tx(i, 1u, r, col);
        }
        if (i > 2u) {
            y.z = solve_tx(i, 2u, r, col);
        }
        workgroupBarrier();
        solve_put(i, 0u, r, col, -y.x);
        solve_put(i, 1u, r, col, -y.y);
        solve_put(i, 2u, r, col, -y.z);
        workgroupBarrier();
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
            chunk_fwd[fwd_m(tid, s)] = m;
        }
    }
    storageBarrier();
    mm_operand_scales(chunk_q_bound(), 1.0);
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
        chunk_fwd[fwd_t(e / c, e % c)] = solve[(e / c) * CMAX + e % c];
    }
    let beta_bound = chunk_beta_bound();
    mm_operand_scales(1.0, beta_bound);
    mm(OP_W1, c, DK, c, tid);
    mm_operand_scales(1.0, beta_bound);
    mm(OP_UT, c, DV, c, tid);
}
