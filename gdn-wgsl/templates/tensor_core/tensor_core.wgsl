// What the chunked family's tensor-core kernels (tensor_core_*.wgsl) share. Their products run on 16 × 16
// cooperative matrices with f16 operands and f32 accumulators, loaded straight from storage (the
// operands packed chunk-major, rows of a constant stride) or from workgroup memory.
//
// Work is split by output block among the first OWNERS subgroups of a workgroup, in rounds: unit
// `owner + OWNERS · round`. Cooperative operations need control flow uniform within a subgroup: an
// owner past the last unit repeats the last one (clamped: computed twice and written twice with the
// same values) where a round holds barriers every invocation must reach, and skips the round where
// it holds none (the products run at the rate of their loads, so a repeated unit costs as much as
// a real one). Where subgroups have fewer than 32 invocations, as on a software rasteriser, the
// subgroups past the first OWNERS repeat an owner's work in the same way. A unit of
// a product with many columns is a group of GK (or GV) blocks of one block row (gdn-wgsl's
// TensorCoreTiling: two), so that an owner keeps that many independent accumulators and loads each A
// block once for all of them. A result that needs element-wise work leaves its accumulators through
// the staging (each owner one 16 × 16 f32 block of `stage`), where every invocation then handles one
// element of every owner's block.
//
// f16 keeps its relative precision only between 2⁻¹⁴ and 65 504: every operand is scaled by a power
// of two chosen from a bound of its magnitudes before it is rounded (range_scale), and the product
// is scaled back in f32, exactly. Factors that only shrink an operand's rows or columns (decays, β)
// are folded into it before the rounding; what this costs small rows is small against the tile.

// OWNERS (the subgroups of 32 that own blocks) comes from gdn-wgsl (kernels/tensor_core.rs).
const BLOCK: u32 = 16u;
const BLOCK_ELEMENTS: u32 = 256u;
const THREADS: u32 = 32u * OWNERS;

alias Acc = coop_mat16x16<f32, C>;
alias OperandA = coop_mat16x16<f16, A>;
alias OperandB = coop_mat16x16<f16, B>;

var<private> owner: u32;

// The owner index of subgroup `subgroup`; every kernel sets it first.
fn tensor_core_enter(subgroup: u32) {
    owner = subgroup % OWNERS;
}

// Unit `owner_index + OWNERS · round` of `units`, the last one for an owner past the end.
fn owned(owner_index: u32, round: u32, units: u32) -> u32 {
    return min(owner_index + OWNERS * round, units - 1u);
}

// Rounds for `units` units.
fn rounds(units: u32) -> u32 {
    return (units + OWNERS - 1u) / OWNERS;
}

// Groups of `group` blocks in a row of `width` columns.
fn groups_across(width: u32, group: u32) -> u32 {
    return width / (BLOCK * group);
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

// The chunk's record, written once per (chunk, value head) by tensor_core_pack and read by every later
// kernel instead of recomputing the decays: β, d¹ = e^{γ_t − γ_0}, λ = e^{γ_{C−1} − γ_t},
// the span tables (sums of log-gates within each 16-token block, from its start to t and from after t
// to its end, and per block: every span sum of the chunk is a sum of these terms, all of one sign),
// then e₁ = e^{γ_0}, G = e^{γ_{C−1}} and σ_β = range_scale(max β).
const REC_BETA: u32 = 0u;
const REC_D1: u32 = CMAX;
const REC_LAM: u32 = 2u * CMAX;
const REC_HEAD: u32 = 3u * CMAX;
const REC_TAIL: u32 = 4u * CMAX;
const REC_BLOCKS: u32 = 5u * CMAX;
const REC_E1: u32 = 5u * CMAX + 4u;
const REC_G: u32 = 5u * CMAX + 5u;
const REC_BETA_SCALE: u32 = 5u * CMAX + 6u;
const RECORD: u32 = 5u * CMAX + 16u;

var<workgroup> rec: array<f32, RECORD>;

// Loads the record of the chunk entered (chunk_locate) into `rec`.
fn load_record(tid: u32) {
    workgroupBarrier();
    for (var e = tid; e < RECORD; e = e + THREADS) {
        rec[e] = record[(ck_slot * layer.nv + ck_h) * RECORD + e];
    }
    workgroupBarrier();
}

fn rec_beta(t: u32) -> f32 {
    return rec[REC_BETA + t];
}

fn rec_d1(t: u32) -> f32 {
    return rec[REC_D1 + t];
}

fn rec_lam(t: u32) -> f32 {
    return rec[REC_LAM + t];
}

fn rec_e1() -> f32 {
    return rec[REC_E1];
}

fn rec_decay() -> f32 {
    return rec[REC_G];
}

fn rec_beta_scale() -> f32 {
    return rec[REC_BETA_SCALE];
}

// Σ_{s < u ≤ t} ℓ_u for s ≤ t, from the span tables: across blocks the tail of s's block, the blocks
// between and the head of t's block (terms of one sign); within one block the difference of two
// sums from the block's start, off by a few ulps of those sums (2·10⁻⁵ of relative decay after a −200
// gate, beneath f16's rounding of the operands the decays scale).
fn span(s: u32, t: u32) -> f32 {
    let bs = s / BLOCK;
    let bt = t / BLOCK;
    if (bs == bt) {
        return rec[REC_HEAD + t] - rec[REC_HEAD + s];
    }
    var x = rec[REC_TAIL + s] + rec[REC_HEAD + t];
    for (var b = bs + 1u; b < bt; b = b + 1u) {
        x = x + rec[REC_BLOCKS + b];
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
// value head (every other), in rows; a row holds DK, DV or CMAX elements as the tensor's does.
fn key_rows() -> u32 {
    return (ck_slot * layer.nk + ck_h / layer.rep) * chunk_size();
}

fn head_rows() -> u32 {
    return (ck_slot * layer.nv + ck_h) * chunk_size();
}

// Start of the chunk's state in ckpt-shaped buffers, and of its column-block scales.
fn state_rows() -> u32 {
    return (ck_slot * layer.nv + ck_h) * DK;
}

fn state_scales() -> u32 {
    return (ck_slot * layer.nv + ck_h) * (DV / CB);
}
