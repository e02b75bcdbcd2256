// One workgroup's matrix product, the building block of the chunked family:
//   for r < m, c < n:  store_c(op, r, c, Σ_{k < depth} load_a(op, r, k) · load_b(op, k, c)).
// The kernel that includes this defines load_a, load_b and store_c, each a switch over its op codes:
// an op names the operands (buffer, layout, transposition, masks and scalings applied as elements are
// read) and what becomes of the result. No element outside the product is read. It also says, per op
// and depth tile, how each operand lies in memory — a_column_major (consecutive rows r of A are
// adjacent) and b_column_major (consecutive depths k of B are adjacent) — so that neighbouring
// invocations stage neighbouring elements and global reads coalesce.
// MM_THREADS threads as 16 × 16 cover a 64 × 64 output tile, a 4 × 4 block each; operands are staged
// through workgroup memory MM_DEPTH deep. m, n and depth must be uniform over the workgroup. The
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
            for (var k0 = 0u; k0 < depth; k0 = k0 + MM_DEPTH) {
                let a_by_rows = a_column_major(op, k0);
                let b_by_depth = b_column_major(op, k0);
                for (var e = tid; e < MM_TILE * MM_DEPTH; e = e + MM_THREADS) {
                    var a_k = e % MM_DEPTH;
                    var a_r = e / MM_DEPTH;
                    if (a_by_rows) {
                        a_k = e / MM_TILE;
                        a_r = e % MM_TILE;
                    }
                    var a = 0.0;
                    if (r0 + a_r < m && k0 + a_k < depth) {
                        a = load_a(op, r0 + a_r, k0 + a_k);
                    }
                    mm_a[a_k * MM_STRIDE + a_r / 4u][a_r % 4u] = a;
                    var b_c = e % MM_TILE;
                    var b_k = e / MM_TILE;
                    if (b_by_depth) {
                        b_c = e / MM_DEPTH;
                        b_k = e % MM_DEPTH;
                    }
                    var b = 0.0;
                    if (c0 + b_c < n && k0 + b_k < depth) {
                        b = load_b(op, k0 + b_k, c0 + b_c);
                    }
                    mm_b[b_k * MM_STRIDE + b_c / 4u][b_c % 4u] = b;
                }
                workgroupBarrier();
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
