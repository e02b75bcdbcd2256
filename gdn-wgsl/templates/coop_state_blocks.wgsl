// How the tensor-core passes over chunks (coop_state, coop_state_backward) hold their block of CB
// state columns (chunk_columns.wgsl's col0 on): in 16 × 16 blocks, STATE_PER of them in each owner's
// accumulators.

const STATE_BLOCKS: u32 = (DK / BLOCK) * (CB / BLOCK);
const STATE_PER: u32 = (STATE_BLOCKS + OWNERS - 1u) / OWNERS;

// Element offset of state block `b` (of the block's columns) in a [DK][DV] state.
fn state_block(b: u32) -> u32 {
    return (b / (CB / BLOCK)) * BLOCK * DV + col0 + (b % (CB / BLOCK)) * BLOCK;
}
