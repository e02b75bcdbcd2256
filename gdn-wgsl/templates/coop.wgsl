// What the chunked family's tensor-core kernels (coop_*.wgsl) share. Their products run on 16 × 16
// cooperative matrices with f16 operands and f32 accumulators, loaded straight from storage (the
// operands packed chunk-major by coop_pack, rows of a constant stride) or from workgroup memory.
//
// Work is split by output block: the first OWNERS subgroups of a workgroup each own blocks, in
// rounds (block = owner + OWNERS · round, the last clamped so that every subgroup runs the same
// cooperative operations, as they must in uniform control flow; a clamped block is computed twice
// and written twice with the same values). Where a subgroup has fewer than 32 invocations (a
// software rasteriser), the subgroups past the first OWNERS repeat an owner's work in the same way.
// A result that needs element-wise work leaves its accumulator through the workgroup's staging
// (each owner one 16 × 16 block of `stage`), where every invocation then handles one element of
// every owner's block.
//
// f16 keeps its relative precision only between 2⁻¹⁴ and 65 504: every operand is scaled by a power
// of two chosen from a bound of its magnitudes before it is rounded (range_scale), and the product
// is scaled back in f32, exactly. Factors that only shrink an operand's rows or columns (decays, β)
// are folded into it before the rounding; what this costs small rows is small against the tile.

const OWNERS: u32 = 8u;
const BLOCK: u32 = 16u;
const BLOCK_ELEMENTS: u32 = 256u;
const THREADS: u32 = 256u;

var<private> owner: u32;

// The owner index of subgroup `subgroup`; every kernel sets it first.
fn coop_enter(subgroup: u32) {
    owner = subgroup % OWNERS;
}

// Block `owner_index + OWNERS · round` of `blocks`, the last one for an owner past the end.
fn owned_block(owner_index: u32, round: u32, blocks: u32) -> u32 {
    return min(owner_index + OWNERS * round, blocks - 1u);
}

// Rounds for `blocks` blocks.
fn rounds(blocks: u32) -> u32 {
    return (blocks + OWNERS - 1u) / OWNERS;
}

// The power of two that brings `bound` into [1, 2) (clamped to 2^±60 so that the product of two
// stays a normal f32); 1 for a zero or non-finite bound.
fn range_scale(bound: f32) -> f32 {
    if (!(bound > 0.0) || bound > 3.0e38) {
        return 1.0;
    }
    return ldexp(1.0, clamp(1 - frexp(bound).exp, -60, 60));
}

// Pair `p` of the lower block triangle (row ≥ column) in row order: (row, column) of blocks.
fn lower_pair(p: u32) -> vec2<u32> {
    var row = 0u;
    while ((row + 1u) * (row + 2u) / 2u <= p) {
        row = row + 1u;
    }
    return vec2<u32>(row, p - row * (row + 1u) / 2u);
}

// The largest magnitude seen by the workgroup, as the bits of a non-negative f32 (which order as u32
// do). Four words: every workgroup variable of a tensor-core kernel is a multiple of 16 bytes.
var<workgroup> seen_max: array<atomic<u32>, 4>;

// Publishes `value` (a local maximum) into slot `slot`; read it after a barrier with seen(slot).
fn publish_max(slot: u32, value: f32) {
    atomicMax(&seen_max[slot], bitcast<u32>(abs(value)));
}

fn seen(slot: u32) -> f32 {
    return bitcast<f32>(atomicLoad(&seen_max[slot]));
}

fn forget_max(slot: u32, tid: u32) {
    if (tid == 0u) {
        atomicStore(&seen_max[slot], 0u);
    }
}

// Sums of log-gates over spans of the chunk, each a sum of terms of one sign (no difference of
// prefix sums, which would cost |γ|·2⁻²⁴ of the decay's relative accuracy): within each 16-token
// block, from its start to t (span_head) and from after s to its end (span_tail), and per block.
var<workgroup> span_head: array<f32, CMAX>;
var<workgroup> span_tail: array<f32, CMAX>;
var<workgroup> span_block: array<f32, 4>;

// Fills the span tables from ck_ell (after chunk_begin).
fn coop_spans(tid: u32) {
    let c = chunk_size();
    if (tid < c) {
        let start = (tid / BLOCK) * BLOCK;
        var head = 0.0;
        for (var u = start; u <= tid; u = u + 1u) {
            head = head + ck_ell[u];
        }
        span_head[tid] = head;
        var tail = 0.0;
        for (var u = tid + 1u; u < start + BLOCK; u = u + 1u) {
            tail = tail + ck_ell[u];
        }
        span_tail[tid] = tail;
    }
    if (tid < c / BLOCK) {
        var total = 0.0;
        for (var u = tid * BLOCK; u < (tid + 1u) * BLOCK; u = u + 1u) {
            total = total + ck_ell[u];
        }
        span_block[tid] = total;
    }
    workgroupBarrier();
}

// Σ_{s < u ≤ t} ℓ_u for s ≤ t.
fn span(s: u32, t: u32) -> f32 {
    let bs = s / BLOCK;
    let bt = t / BLOCK;
    var x = 0.0;
    if (bs == bt) {
        for (var u = s + 1u; u <= t; u = u + 1u) {
            x = x + ck_ell[u];
        }
        return x;
    }
    x = span_tail[s] + span_head[t];
    for (var b = bs + 1u; b < bt; b = b + 1u) {
        x = x + span_block[b];
    }
    return x;
}

// M_ts = e^{γ_t − γ_s} for s ≤ t, 0 above the diagonal.
fn decay_lower(t: u32, s: u32) -> f32 {
    if (s > t) {
        return 0.0;
    }
    return exp(span(s, t));
}

// Where the chunk's rows start in the packed operands: of its key head (q_half, k_half), and of its
// value head, with rows of DK (qd_half, x_half, w_half), DV (y_half, u_tilde, u_values, u_half,
// lu_half) or CMAX (t_half, km_half, p_half) elements.
fn key_rows() -> u32 {
    return (ck_slot * layer.nk + ck_h / layer.rep) * chunk_size();
}

fn head_rows() -> u32 {
    return (ck_slot * layer.nv + ck_h) * chunk_size();
}
