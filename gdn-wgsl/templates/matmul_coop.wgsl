// One workgroup's matrix product on cooperative matrices (tensor cores): the same contract as the
// f32 matmul (mm(op, m, n, depth, tid) hands Σ_k load_a(op, r, k)·load_b(op, k, c) to store_c), with
// the operands rounded to f16 as they are staged and every accumulation in f32. A 64 × 64 output tile
// is 4 × 4 blocks of 16 × 16; each of the 8 subgroups of 32 invocations owns one block row and two
// block columns and keeps their accumulators across the depth, staged MM_DEPTH at a time, the next
// depth tile read from memory while the current one is multiplied. The f32
// results pass through workgroup memory to store_c, element by element.
// f16 keeps its relative precision only above 2⁻¹⁴: an operand whose entries are all small (β → 0
// makes W¹, Ũ, U and a state that started at zero all of the order of β) would lose it. A kernel that
// knows a bound of an operand's magnitudes passes it to mm_operand_scales before the product; the
// operand is scaled by the power of two that brings the bound into [1, 2) before rounding, and the
// f32 result is scaled back, exactly.

const MM_TILE: u32 = 64u;
const MM_DEPTH: u32 = 16u;
const MM_THREADS: u32 = 256u;
const MM_SUBGROUP: u32 = 32u;

// Staged operands, row-major, each row padded by 8 halves (16 bytes, as cooperative loads need)
// against bank conflicts: A is [row][depth], B [depth][column].
const MM_A_STRIDE: u32 = MM_DEPTH + 8u;
const MM_B_STRIDE: u32 = MM_TILE + 8u;
var<workgroup> mm_a: array<f16, MM_TILE * MM_A_STRIDE>;
var<workgroup> mm_b: array<f16, MM_DEPTH * MM_B_STRIDE>;
var<workgroup> mm_c: array<f32, MM_TILE * MM_TILE>;

// Whether mm_operand_scales uses its bounds (kernels skip gathering them where it does not).
const MM_USES_BOUNDS: bool = true;

// The next product's operand scales (powers of two, 1 unless mm_operand_scales set them).
var<private> mm_scale_a: f32 = 1.0;
var<private> mm_scale_b: f32 = 1.0;

// Scales the operands of the next mm call for magnitudes up to `a_bound` and `b_bound`.
fn mm_operand_scales(a_bound: f32, b_bound: f32) {
    mm_scale_a = mm_range_scale(a_bound);
    mm_scale_b = mm_range_scale(b_bound);
}

// The power of two that brings `bound` into [1, 2) when it is below 1 (at most 2⁶⁰, so that the
// product of two stays a normal f32); 1 for bounds of 1 or more and for a zero bound.
fn mm_range_scale(bound: f32) -> f32 {
    if (!(bound > 0.0) || bound >= 1.0) {
        return 1.0;
    }
    return ldexp(1.0, min(1 - frexp(bound).exp, 60));
}

fn mm(op: u32, m: u32, n: u32, depth: u32, tid: u32) {
    let group = tid / MM_SUBGROUP;
    let block_row = group % 4u;
    let block_col = (group / 4u) * 2u;
    let unscale = 1.0 / (mm_scale_a * mm_scale_b);
    for (var r0 = 0u; r0 < m; r0 = r0 + MM_TILE) {
        for (var c0 = 0u; c0 < n; c0 = c0 + MM_TILE) {
            var acc0 = coop_mat16x16<f32, C>();
            var acc1 = coop_mat16x16<f32, C>();
            var next_a = mm_fetch_a(op, r0, 0u, m, depth, tid);
            var next_b = mm_fetch_b(op, c0, 0u, n, depth, tid);
            for (var k0 = 0u; k0 < depth; k0 = k0 + MM_DEPTH) {
                mm_stage(op, k0, tid, next_a, next_b);
                workgroupBarrier();
                if (k0 + MM_DEPTH < depth) {
                    next_a = mm_fetch_a(op, r0, k0 + MM_DEPTH, m, depth, tid);
                    next_b = mm_fetch_b(op, c0, k0 + MM_DEPTH, n, depth, tid);
                }
                let a = coopLoadT<coop_mat16x16<f16, A>>(&mm_a[block_row * 16u * MM_A_STRIDE], MM_A_STRIDE);
                let b0 = coopLoadT<coop_mat16x16<f16, B>>(&mm_b[block_col * 16u], MM_B_STRIDE);
                let b1 = coopLoadT<coop_mat16x16<f16, B>>(&mm_b[block_col * 16u + 16u], MM_B_STRIDE);
                acc0 = coopMultiplyAdd(a, b0, acc0);
                acc1 = coopMultiplyAdd(a, b1, acc1);
                workgroupBarrier();
            }
            coopStoreT(acc0, &mm_c[block_row * 16u * MM_TILE + block_col * 16u], MM_TILE);
            coopStoreT(acc1, &mm_c[block_row * 16u * MM_TILE + block_col * 16u + 16u], MM_TILE);
            workgroupBarrier();
            for (var e = tid; e < MM_TILE * MM_TILE; e = e + MM_THREADS) {
                let r = r0 + e / MM_TILE;
                let c = c0 + e % MM_TILE;
                if (r < m && c < n) {
                    store_c(op, r, c, mm_c[e] * unscale);
                }
            }
            workgroupBarrier();
        }
    }
    mm_scale_a = 1.0;
    mm_scale_b = 1.0;
}

// Stages one element of A at (row, depth) `a_at` and one of B at (column, depth) `b_at`, in f16.
fn mm_put(a_at: vec2<u32>, a: f32, b_at: vec2<u32>, b: f32) {
    mm_a[a_at.x * MM_A_STRIDE + a_at.y] = f16(a * mm_scale_a);
    mm_b[b_at.y * MM_B_STRIDE + b_at.x] = f16(b * mm_scale_b);
}
