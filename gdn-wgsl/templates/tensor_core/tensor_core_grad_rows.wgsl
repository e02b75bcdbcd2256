// What tensor_core_grad_queries and tensor_core_grad_keys share: the chunk's context, the staging and the
// per-token dot products of staged blocks with k̂ or q̂. Both compute a c × DK gradient by groups of
// GK blocks of a block row (units), from operands of the forward and the backward so far; S₀ and dS_L
// (s_half, ds_half) are scaled per block of CB state columns, so their products run by column block.

var<workgroup> stage: array<f32, OWNERS * BLOCK_ELEMENTS>;

const SUM_Q_DQ: u32 = 0u;
const SUM_K_DX: u32 = 1u;
const SUM_K_DKS: u32 = 2u;

// The chunk's context: where its operands start, and their scales.
struct Grad {
    nb: u32,
    key: u32,
    values: u32,
    square: u32,
    state: u32,
    scales: u32,
    dy_scale: f32,
    dqk_scale: f32,
    h_scale: f32,
    do_scale: f32,
    k_groups: u32,
    units: u32,
}

// Enters the chunk of workgroup `job`.
fn grad_enter(job: u32, tid: u32, subgroup: u32) -> Grad {
    tensor_core_enter(subgroup);
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    load_record(tid);
    clear_sums(tid);
    let nb = chunk_size() / BLOCK;
    let terms = gate_terms_at();
    let k_groups = groups_across(DK, GK);
    return Grad(
        nb,
        key_rows() * DK,
        head_rows() * DV,
        head_rows() * CMAX,
        state_rows() * DV,
        state_scales(),
        gate_terms[terms + SUMS * CMAX],
        gate_terms[terms + SUMS * CMAX + 1u],
        gate_terms[terms + SUMS * CMAX + 2u],
        do_scale[ck_slot * layer.nv + ck_h],
        k_groups,
        nb * k_groups,
    );
}

fn dq_at(t: u32, i: u32) -> u32 {
    return ((ck_t0 + t) * layer.nv + ck_h) * DK + i;
}

fn dk_at(t: u32, i: u32) -> u32 {
    return ((layer.tokens + ck_t0 + t) * layer.nv + ck_h) * DK + i;
}

// Stages each owner's block; element_row and element_column give the token row and key column of an
// invocation's element of owner ow's block (group g of its unit, `units` units of k_groups groups per
// block row).
fn stage_block(acc: Acc) {
    coopStoreT(acc, &stage[owner * BLOCK_ELEMENTS], BLOCK);
    workgroupBarrier();
}

fn element_row(ow: u32, round: u32, units: u32, k_groups: u32, tid: u32) -> u32 {
    return (owned(ow, round, units) / k_groups) * BLOCK + tid / BLOCK;
}

fn element_column(ow: u32, round: u32, units: u32, k_groups: u32, g: u32, tid: u32) -> u32 {
    return ((owned(ow, round, units) % k_groups) * GK + g) * BLOCK + tid % BLOCK;
}

// Multiplies every owner's staged element by the chunk's k̂ (or q̂) there and gathers the rows into
// token_sums[which].
fn gather_dots(which: u32, with_queries: bool, round: u32, units: u32, k_groups: u32, g: u32, tid: u32) {
    let key = key_rows() * DK;
    var rows: array<u32, OWNERS>;
    for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
        rows[ow] = unit_line(ow, round, units, owned(ow, round, units) / k_groups);
        let at = key + element_row(ow, round, units, k_groups, tid) * DK
            + element_column(ow, round, units, k_groups, g, tid);
        var factor = f32(k_half[at]);
        if (with_queries) {
            factor = f32(q_half[at]) / 16.0;
        }
        stage[ow * BLOCK_ELEMENTS + tid] = factor * stage[ow * BLOCK_ELEMENTS + tid];
    }
    gather_rows(which, rows, tid);
}
