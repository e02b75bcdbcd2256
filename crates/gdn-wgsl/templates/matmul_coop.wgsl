// One workgroup's matrix product on cooperative matrices (tensor cores): the same contract as the
// f32 matmul (mm(op, m, n, depth, tid) hands Σ_k load_a(op, r, k)·load_b(op, k, c) to store_c), with
// the operands rounded to f16 as they are staged and every accumulation in f32. A 64 × 64 output tile
// is 4 × 4 blocks of 16 × 16; each of the 8 subgroups of 32 invocations owns one block row and two
// block columns and keeps their accumulators across the depth, staged MM_DEPTH at a time. The f32
// results pass through workgroup memory to store_c, element by element.

const MM_TILE: u32 = 64u;
const MM_DEPTH: u32 = 32u;
const MM_THREADS: u32 = 256u;
const MM_SUBGROUP: u32 = 32u;

// Staged operands, row-major, each row padded by 8 halves (16 bytes, as cooperative loads need)
// against bank conflicts: A is [row][depth], B [depth][column].
const MM_A_STRIDE: u32 = MM_DEPTH + 8u;
const MM_B_STRIDE: u32 = MM_TILE + 8u;
var<workgroup> mm_a: array<f16, MM_TILE * MM_A_STRIDE>;
var<workgroup> mm_b: array<f16, MM_DEPTH * MM_B_STRIDE>;
var<workgroup> mm_c: array<f32, MM_TILE * MM_TILE>;

fn mm(op: u32, m: u32, n: u32, depth: u32, tid: u32) {
    let group = tid / MM_SUBGROUP;
    let block_row = group % 4u;
    let block_col = (group / 4u) * 2u;
    for (var r0 = 0u; r0 < m; r0 = r0 + MM_TILE) {
        for (var c0 = 0u; c0 < n; c0 = c0 + MM_TILE) {
            var acc0 = coop_mat16x16<f32, C>();
            var acc1 = coop_mat16x16<f32, C>();
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
                    mm_a[a_r * MM_A_STRIDE + a_k] = f16(a);
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
                    mm_b[b_k * MM_B_STRIDE + b_c] = f16(b);
                }
                workgroupBarrier();
                for (var k = 0u; k < MM_DEPTH; k = k + 16u) {
                    let a = coopLoadT<coop_mat16x16<f16, A>>(&mm_a[block_row * 16u * MM_A_STRIDE + k], MM_A_STRIDE);
                    let b0 = coopLoadT<coop_mat16x16<f16, B>>(&mm_b[k * MM_B_STRIDE + block_col * 16u], MM_B_STRIDE);
                    let b1 =
                        coopLoadT<coop_mat16x16<f16, B>>(&mm_b[k * MM_B_STRIDE + block_col * 16u + 16u], MM_B_STRIDE);
                    acc0 = coopMultiplyAdd(a, b0, acc0);
                    acc1 = coopMultiplyAdd(a, b1, acc1);
                }
                workgroupBarrier();
            }
            coopStoreT(acc0, &mm_c[block_row * 16u * MM_TILE + block_col * 16u], MM_TILE);
            coopStoreT(acc1, &mm_c[block_row * 16u * MM_TILE + block_col * 16u + 16u], MM_TILE);
            workgroupBarrier();
            for (var e = tid; e < MM_TILE * MM_TILE; e = e + MM_THREADS) {
                let r = r0 + e / MM_TILE;
                let c = c0 + e % MM_TILE;
                if (r < m && c < n) {
                    store_c(op, r, c, mm_c[e]);
                }
            }
            workgroupBarrier();
        }
    }
}
