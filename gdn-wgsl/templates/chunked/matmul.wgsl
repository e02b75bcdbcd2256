// One workgroup's matrix product in f32, the building block of the chunked family's f32 kernels:
//   for r < m, c < n:  store_c(op, r, c, Σ_{k < depth} load_a(op, r, k) · load_b(op, k, c)).
// The kernel that includes this defines load_a, load_b and store_c, each a switch over its op codes:
// an op names the operands (buffer, layout, transposition, masks and scalings applied as elements are
// read) and what becomes of the result. No element outside the product is read. It also says, per op
// and depth tile, how each operand lies in memory — a_column_major (consecutive rows r of A are
// adjacent) and b_column_major (consecutive depths k of B are adjacent) — so that neighbouring
// invocations stage neighbouring elements and global reads coalesce.
// MM_THREADS threads as 16 × 16 cover a 64 × 64 output tile, a 4 × 4 block each; operands are staged
// through workgroup memory MM_DEPTH deep, the next depth tile read from memory while the current one
// is multiplied. m, n and depth must be uniform over the workgroup. The
// accumulators are four vec4 variables, never indexed at run time, so that they stay in registers.

const MM_TILE: u32 = 64u;
const MM_DEPTH: u32 = 16u;
const MM_THREADS: u32 = 256u;

// [k][group of 4 rows (a) or columns (b)], each depth row padded by one vec4 against bank conflicts.
const MM_STRIDE: u32 = 17u;
var<workgroup> mm_a: array<vec4<f32>, MM_DEPTH * MM_STRIDE>;
var<workgroup> mm_b: array<vec4<f32>, MM_DEPTH * MM_STRIDE>;

fn mm(op: u32, m: u32, n: u32, depth: u32, tid: u32) {
    let tx = tid % 16u;
    let ty = tid / 16u;
    for (var r0 = 0u; r0 < m; r0 = r0 + MM_TILE) {
        for (var c0 = 0u; c0 < n; c0 = c0 + MM_TILE) {
            var acc0 = vec4<f32>();
            var acc1 = vec4<f32>();
            var acc2 = vec4<f32>();
            var acc3 = vec4<f32>();
            var next_a = mm_fetch_a(op, r0, 0u, m, depth, tid);
            var next_b = mm_fetch_b(op, c0, 0u, n, depth, tid);
            for (var k0 = 0u; k0 < depth; k0 = k0 + MM_DEPTH) {
                mm_stage(op, k0, tid, next_a, next_b);
                workgroupBarrier();
                // The next tile's global reads are in flight while this one is multiplied.
                if (k0 + MM_DEPTH < depth) {
                    next_a = mm_fetch_a(op, r0, k0 + MM_DEPTH, m, depth, tid);
                    next_b = mm_fetch_b(op, c0, k0 + MM_DEPTH, n, depth, tid);
                }
                for (var k = 0u; k < MM_DEPTH; k = k + 1u) {
                    let a = mm_a[k * MM_STRIDE + ty];
                    let b = mm_b[k * MM_STRIDE + tx];
                    acc0 = acc0 + a.x * b;
                    acc1 = acc1 + a.y * b;
                    acc2 = acc2 + a.z * b;
                    acc3 = acc3 + a.w * b;
                }
                workgroupBarrier();
            }
            let r = r0 + ty * 4u;
            let c = c0 + tx * 4u;
            mm_store_row(op, r, c, acc0, m, n);
            mm_store_row(op, r + 1u, c, acc1, m, n);
            mm_store_row(op, r + 2u, c, acc2, m, n);
            mm_store_row(op, r + 3u, c, acc3, m, n);
        }
    }
}

// Stages one element of A at (row, depth) `a_at` and one of B at (column, depth) `b_at`.
fn mm_put(a_at: vec2<u32>, a: f32, b_at: vec2<u32>, b: f32) {
    mm_a[a_at.y * MM_STRIDE + a_at.x / 4u][a_at.x % 4u] = a;
    mm_b[b_at.y * MM_STRIDE + b_at.x / 4u][b_at.x % 4u] = b;
}

// Hands the four results of `values` (row r, columns c … c + 3) that fall inside the product to store_c.
fn mm_store_row(op: u32, r: u32, c: u32, values: vec4<f32>, m: u32, n: u32) {
    if (r >= m) {
        return;
    }
    if (c < n) {
        store_c(op, r, c, values.x);
    }
    if (c + 1u < n) {
        store_c(op, r, c + 1u, values.y);
    }
    if (c + 2u < n) {
        store_c(op, r, c + 2u, values.z);
    }
    if (c + 3u < n) {
        store_c(op, r, c + 3u, values.w);
    }
}
