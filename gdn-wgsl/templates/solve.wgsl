// The triangular inverse of the chunked family's WY form, shared by chunk_prepare and coop_prepare:
// T = (I + A)⁻¹ for A strictly lower (CMAX × CMAX in `solve`, rows and columns past the chunk zero),
// in place, by 256 invocations. It is stable without pivoting (|T_ts| ≤ 1 since ‖k̂‖ = 1).

var<workgroup> solve: array<f32, CMAX * CMAX>;

// T = (I + A)⁻¹ in place over A (strictly lower, CMAX × CMAX in `solve`), by SOLVE_BLOCK × SOLVE_BLOCK
// blocks, in three steps with a workgroup barrier after each:
// 1. the diagonal blocks T_ii = (I + A_ii)⁻¹, one column per invocation held in registers, by
//    forward substitution t_r = δ_rj − Σ_{s<r} A_rs t_s (no barrier inside: A is only read);
// 2. every B_ik = T_ii A_ik (k < i) at once, into the free upper block triangle (B_ik transposed
//    at block (k, i)), so that nothing below is overwritten while it is read;
// 3. the rows of blocks in order, every block j < i of a row at once (one element per invocation
//    each): T_ij = −Σ_{j ≤ k < i} B_ik T_kj, reading only rows already final;
// then the upper block triangle is cleared. |T_ts| ≤ 1 (‖k̂‖ = 1): no pivoting is needed.
const SOLVE_BLOCK: u32 = 16u;
const SOLVE_BLOCKS: u32 = CMAX / SOLVE_BLOCK;

fn solve_at(row: u32, col: u32) -> u32 {
    return row * CMAX + col;
}

// Where element (r, c) of B_ik is kept: transposed, in the upper block (k, i).
fn solve_b_at(i: u32, k: u32, r: u32, c: u32) -> u32 {
    return solve_at(k * SOLVE_BLOCK + c, i * SOLVE_BLOCK + r);
}

// Column `j` of (I + A_oo)⁻¹ for the diagonal block starting at row `o`, by forward substitution.
fn solve_diagonal_column(o: u32, j: u32) -> array<f32, SOLVE_BLOCK> {
    var t: array<f32, SOLVE_BLOCK>;
    for (var r = 0u; r < SOLVE_BLOCK; r = r + 1u) {
        var acc = select(0.0, 1.0, r == j);
        for (var s = 0u; s < r; s = s + 1u) {
            acc = acc - solve[solve_at(o + r, o + s)] * t[s];
        }
        t[r] = acc;
    }
    return t;
}

// Element (r, c) of B_ik = T_ii A_ik (T_ii lower).
fn solve_b(i: u32, k: u32, r: u32, c: u32) -> f32 {
    let o = i * SOLVE_BLOCK;
    var acc = 0.0;
    for (var m = 0u; m <= r; m = m + 1u) {
        acc = acc + solve[solve_at(o + r, o + m)] * solve[solve_at(o + m, k * SOLVE_BLOCK + c)];
    }
    return acc;
}

// Element (r, c) of T_ij = −Σ_{j ≤ k < i} B_ik T_kj.
fn solve_t(i: u32, j: u32, r: u32, c: u32) -> f32 {
    var acc = 0.0;
    for (var k = j; k < i; k = k + 1u) {
        for (var m = 0u; m < SOLVE_BLOCK; m = m + 1u) {
            acc = acc + solve[solve_b_at(i, k, r, m)] * solve[solve_at(k * SOLVE_BLOCK + m, j * SOLVE_BLOCK + c)];
        }
    }
    return -acc;
}

fn solve_inverse(tid: u32) {
    // 1. Diagonal blocks: invocation tid < CMAX owns column tid % SOLVE_BLOCK of block tid / SOLVE_BLOCK.
    let o = (tid / SOLVE_BLOCK) * SOLVE_BLOCK;
    let j = tid % SOLVE_BLOCK;
    var column: array<f32, SOLVE_BLOCK>;
    if (tid < CMAX) {
        column = solve_diagonal_column(o, j);
    }
    workgroupBarrier();
    if (tid < CMAX) {
        for (var r = 0u; r < SOLVE_BLOCK; r = r + 1u) {
            solve[solve_at(o + r, o + j)] = column[r];
        }
    }
    workgroupBarrier();
    // 2. B_ik for every k < i: SOLVE_BLOCK² invocations, one element of each block.
    let r = tid / SOLVE_BLOCK;
    let c = tid % SOLVE_BLOCK;
    for (var i = 1u; i < SOLVE_BLOCKS; i = i + 1u) {
        for (var k = 0u; k < i; k = k + 1u) {
            solve[solve_b_at(i, k, r, c)] = solve_b(i, k, r, c);
        }
    }
    workgroupBarrier();
    // 3. Rows of blocks in order.
    for (var i = 1u; i < SOLVE_BLOCKS; i = i + 1u) {
        for (var jb = 0u; jb < i; jb = jb + 1u) {
            solve[solve_at(i * SOLVE_BLOCK + r, jb * SOLVE_BLOCK + c)] = solve_t(i, jb, r, c);
        }
        workgroupBarrier();
    }
    for (var i = 1u; i < SOLVE_BLOCKS; i = i + 1u) {
        for (var k = 0u; k < i; k = k + 1u) {
            solve[solve_b_at(i, k, r, c)] = 0.0;
        }
    }
    workgroupBarrier();
}
