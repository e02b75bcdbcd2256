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

var<workgroup> mm_a: array<f16, MM_TILE * MM_DEPTH>;
var<workgroup> mm_b: array<f16, MM_DEPTH * MM_TILE>;
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
                for (var e = tid; e < MM_TILE * MM_DEPTH; e = e + MM_THREADS) {
                    let a_k = e % MM_DEPTH;
                    let a_r = e / MM_DEPTH;
                    var a = 0.0;
                    if (r0 + a_r < m && k0 + a_k < depth) {
                        a = load_a(op, r0 + a_r, k0 + a_k);
                    }
                    mm_a[a_r * MM_DEPTH + a_k] = f16(a);
                    let b_c = e % MM_TILE;
                    let b_k = e / MM_TILE;
                    var b = 0.0;
                    if (c0 + b_c < n && k0 + b_k < depth) {
                        b = load_b(op, k0 + b_k, c0 + b_c);
                    }
                    mm_b[b_k * MM_TILE + b_c] = f16(b);
                }
                workgroupBarrier();
                for (var k = 0u; k < MM_DEPTH; k = k + 16u) {
                    let a = coopLoadT<coop_mat16x16<f16, A>>(&mm_a[block_row * 16u * MM_DEPTH + k], MM_DEPTH);
                    let b0 = coopLoadT<coop_mat16x16<f16, B>>(&mm_b[k * MM_TILE + block_col * 16u], MM_TILE);
                    let b1 = coopLoadT<coop_mat16x16<f16, B>>(&mm_b[k * MM_TILE + block_col * 16u + 16u], MM_TILE);
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
