// How the tensor-core passes over chunks (coop_state, coop_state_backward) hold their block of CB
// state columns (chunk_columns.wgsl's col0 on): in 16 × 16 blocks, STATE_PER of them in each owner's
// accumulators; and how they keep it at every chunk: f32 in `states`, and in f16 in `state_local`
// for the pass's own products and in `states_half` for later kernels, scaled by the power of two of
// the block's largest magnitude (`states_scale`, one per block of columns). The passes bind those
// roles to their own buffers (ckpt, s_half, s_scale; dckpt, ds_half, ds_scale).

const STATE_BLOCKS: u32 = (DK / BLOCK) * (CB / BLOCK);
const STATE_PER: u32 = (STATE_BLOCKS + OWNERS - 1u) / OWNERS;

// Element offset of state block `b` (of the block's columns) in a [DK][DV] state.
fn state_block(b: u32) -> u32 {
    return (b / (CB / BLOCK)) * BLOCK * DV + col0 + (b % (CB / BLOCK)) * BLOCK;
}

var<workgroup> state_local: array<f16, DK * CB>;

// Keeps the owners' blocks `acc` of the chunk whose state starts at element `state`, and returns
// its scale. The f32 blocks are read back for their largest magnitude before the f16 rounding.
fn keep_states(acc: array<Acc, STATE_PER>, state: u32, tid: u32) -> f32 {
    for (var i = 0u; i < STATE_PER; i = i + 1u) {
        coopStoreT(acc[i], &states[state + state_block(owned(owner, i, STATE_BLOCKS))], DV);
    }
    storageBarrier();
    workgroupBarrier();
    var largest = 0.0;
    for (var e = tid; e < DK * CB; e = e + THREADS) {
        largest = max(largest, abs(states[state + (e / CB) * DV + col0 + e % CB]));
    }
    publish_max(0u, largest);
    workgroupBarrier();
    let scale = range_scale(seen(0u));
    for (var e = tid; e < DK * CB; e = e + THREADS) {
        let at = state + (e / CB) * DV + col0 + e % CB;
        let value = f16(scale * states[at]);
        state_local[e] = value;
        states_half[at] = value;
    }
    if (tid == 0u) {
        states_scale[state_scales() + col0 / CB] = scale;
    }
    workgroupBarrier();
    forget_max(0u, tid);
    return scale;
}
