// The triangular inverse of the chunked family's WY form, shared by chunk_prepare and tensor_core_prepare:
// T = (I + A)⁻¹ for A strictly lower (CMAX × CMAX in `solve`, rows and columns past the chunk zero),
// in place, by 256 invocations. It is stable without pivoting (|T_ts| ≤ 1 since ‖k̂‖ = 1).

var<workgroup> solve: array<f32, CMAX * CMAX>;

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
    // One element (r, col) of every block of the row: 256 = SOLVE_BLOCK² invocations.
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

