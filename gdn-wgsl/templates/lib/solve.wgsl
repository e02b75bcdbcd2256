// The triangular inverse of the chunked family's WY form, shared by chunk_prepare and tensor_core_prepare:
// T = (I + A)⁻¹ for A strictly lower (CMAX × CMAX in `solve`, rows and columns past the chunk zero),
// in place, by 256 invocations. It is stable without pivoting (|T_ts| ≤ 1 since ‖k̂‖ = 1).

// Rows past CMAX: the diagonal blocks' inverses, then X_ij, while the rows above are solved.
var<workgroup> solve: array<f32, (CMAX + SOLVE_BLOCK) * CMAX>;

// T = (I + A)⁻¹ in place over A, by SOLVE_BLOCK × SOLVE_BLOCK blocks, in eight barriers.
// First every diagonal block, one invocation a column, by forward substitution down its column:
//   T_tj = −(A_tj + Σ_{j<s<t} A_ts T_sj),
// into the rows past CMAX, since A's diagonal blocks are read by the other columns meanwhile. Then each
// row of blocks i in order, every block j < i at once (one element per invocation each):
//   X_ij = Σ_{j ≤ k < i} A_ik T_kj  (into the rows past CMAX),  T_ij = −T_ii X_ij,
// reading only diagonal blocks and rows of blocks already final.
const SOLVE_BLOCK: u32 = 16u;
const SOLVE_BLOCKS: u32 = CMAX / SOLVE_BLOCK;

fn solve_at(row: u32, col: u32) -> u32 {
    return row * CMAX + col;
}

// Element (t, j) of diagonal block b, in the rows past CMAX.
fn solve_diagonal_at(b: u32, t: u32, j: u32) -> u32 {
    return solve_at(CMAX + t, b * SOLVE_BLOCK + j);
}

// Column j of diagonal block b's inverse, into the rows past CMAX: each element read back is
// this invocation's own.
fn solve_diagonal_column(b: u32, j: u32) {
    let o = b * SOLVE_BLOCK;
    for (var t = 0u; t < SOLVE_BLOCK; t = t + 1u) {
        var value = select(0.0, 1.0, t == j);
        if (t > j) {
            var acc = solve[solve_at(o + t, o + j)];
            for (var s = j + 1u; s < t; s = s + 1u) {
                acc = acc + solve[solve_at(o + t, o + s)] * solve[solve_diagonal_at(b, s, j)];
            }
            value = -acc;
        }
        solve[solve_diagonal_at(b, t, j)] = value;
    }
}

// Element (r, col) of X_ij = Σ_{j ≤ k < i} A_ik T_kj (T_jj, the first term, already in place).
fn solve_product(i: u32, j: u32, r: u32, col: u32) -> f32 {
    let row = i * SOLVE_BLOCK + r;
    var acc = 0.0;
    for (var k = j * SOLVE_BLOCK; k < i * SOLVE_BLOCK; k = k + 1u) {
        acc = acc + solve[solve_at(row, k)] * solve[solve_at(k, j * SOLVE_BLOCK + col)];
    }
    return acc;
}

// Element (r, col) of −T_ii X_ij, X_ij in the rows past CMAX, block j.
fn solve_finish(i: u32, j: u32, r: u32, col: u32) -> f32 {
    let o = i * SOLVE_BLOCK;
    var acc = 0.0;
    for (var m = 0u; m <= r; m = m + 1u) {
        acc = acc + solve[solve_at(o + r, o + m)] * solve[solve_diagonal_at(j, m, col)];
    }
    return -acc;
}

fn solve_inverse(tid: u32) {
    if (tid < CMAX) {
        solve_diagonal_column(tid / SOLVE_BLOCK, tid % SOLVE_BLOCK);
    }
    workgroupBarrier();
    // The diagonal blocks into place: A's are no longer read (X_ij reads A_ik for k < i only).
    for (var e = tid; e < CMAX * SOLVE_BLOCK; e = e + SOLVE_BLOCK * SOLVE_BLOCK) {
        let t = e / CMAX;
        let col = e % CMAX;
        solve[solve_at((col / SOLVE_BLOCK) * SOLVE_BLOCK + t, col)] = solve[solve_at(CMAX + t, col)];
    }
    workgroupBarrier();
    // One element (r, col) of every block of the row: 256 = SOLVE_BLOCK² invocations.
    let r = tid / SOLVE_BLOCK;
    let col = tid % SOLVE_BLOCK;
    for (var i = 1u; i < SOLVE_BLOCKS; i = i + 1u) {
        for (var j = 0u; j < i; j = j + 1u) {
            solve[solve_diagonal_at(j, r, col)] = solve_product(i, j, r, col);
        }
        workgroupBarrier();
        // Block (i, i), the only one of the row read meanwhile, is not among those written.
        for (var j = 0u; j < i; j = j + 1u) {
            solve[solve_at(i * SOLVE_BLOCK + r, j * SOLVE_BLOCK + col)] = solve_finish(i, j, r, col);
        }
        workgroupBarrier();
    }
}
