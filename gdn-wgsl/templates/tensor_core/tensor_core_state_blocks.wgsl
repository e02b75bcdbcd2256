// How the tensor-core passes over chunks (tensor_core_state, tensor_core_state_backward) hold their
// block of CB state columns (chunk_columns.wgsl's col0 on): in 16 × 16 blocks, STATE_PER of them in
// each owner's accumulators; and how they keep it at every chunk: f32 in `states`, and in f16 in
// `state_local` for the pass's own products and in `states_half` for later kernels, scaled by the
// power of two of the block's largest magnitude (`states_scale`, one per block of columns). The
// passes bind those roles to their own buffers (ckpt, s_half, s_scale; dckpt, ds_half, ds_scale),
// and `state_rows_half`, the A of their product with the block's state, to W¹ (forward: U's W¹ S)
// or K (backward: dU's K dS).

const STATE_BLOCKS: u32 = (DK / BLOCK) * (CB / BLOCK);
const STATE_PER: u32 = (STATE_BLOCKS + OWNERS - 1u) / OWNERS;

// The owner's state block `i`: every one of them in the owner's column of blocks (OWNERS is a
// multiple of CB / BLOCK), so that the passes' updates load their B operands once for all of them;
// past the last row of blocks, the last row's (computed twice, with the same values).
const_assert OWNERS % (CB / BLOCK) == 0u;
fn state_owned(i: u32) -> u32 {
    let per_row = CB / BLOCK;
    return min((owner + OWNERS * i) / per_row, DK / BLOCK - 1u) * per_row + owner % per_row;
}

// Element offset of state block `b` (of the block's columns) in a [DK][DV] state.
fn state_block(b: u32) -> u32 {
    return (b / (CB / BLOCK)) * BLOCK * DV + col0 + (b % (CB / BLOCK)) * BLOCK;
}

var<workgroup> state_local: array<f16, DK * CB>;
// The elements of the block's state each invocation reads back in keep_states.
const KEPT_PER: u32 = (DK * CB + THREADS - 1u) / THREADS;

// Keeps the owners' blocks `acc` of the chunk whose state starts at element `state`, and returns
// its scale. The f32 blocks are read back once, into registers (`kept`), for their largest
// magnitude before the f16 rounding.
fn keep_states(acc: array<Acc, STATE_PER>, state: u32, tid: u32) -> f32 {
    for (var i = 0u; i < STATE_PER; i = i + 1u) {
        coopStoreT(acc[i], &states[state + state_block(state_owned(i))], DV);
    }
    storageBarrier();
    workgroupBarrier();
    var kept: array<f32, KEPT_PER>;
    var largest = 0.0;
    for (var i = 0u; i < KEPT_PER; i = i + 1u) {
        let e = tid + i * THREADS;
        if (e < DK * CB) {
            kept[i] = states[state + (e / CB) * DV + col0 + e % CB];
            largest = max(largest, abs(kept[i]));
        }
    }
    publish_max(0u, largest);
    workgroupBarrier();
    let scale = range_scale(seen(0u));
    for (var i = 0u; i < KEPT_PER; i = i + 1u) {
        let e = tid + i * THREADS;
        if (e < DK * CB) {
            let at = state + (e / CB) * DV + col0 + e % CB;
            let value = f16(scale * kept[i]);
            state_local[e] = value;
            states_half[at] = value;
        }
    }
    if (tid == 0u) {
        states_scale[state_scales() + col0 / CB] = scale;
    }
    workgroupBarrier();
    forget_max(0u, tid);
    return scale;
}

// Block (row, col) of the c × CB product of `state_rows_half`'s chunk rows (from element `base`)
// with the block's state in state_local, the depth in two independent halves.
fn product_with_state(base: u32, row: u32, col: u32) -> Acc {
    var even = Acc();
    var odd = Acc();
    for (var kb = 0u; kb + 1u < DK / BLOCK; kb = kb + 2u) {
        let a0 = coopLoadT<OperandA>(&state_rows_half[base + row * BLOCK * DK + kb * BLOCK], DK);
        let b0 = coopLoadT<OperandB>(&state_local[kb * BLOCK * CB + col * BLOCK], CB);
        even = coopMultiplyAdd(a0, b0, even);
        let a1 = coopLoadT<OperandA>(&state_rows_half[base + row * BLOCK * DK + (kb + 1u) * BLOCK], DK);
        let b1 = coopLoadT<OperandB>(&state_local[(kb + 1u) * BLOCK * CB + col * BLOCK], CB);
        odd = coopMultiplyAdd(a1, b1, odd);
    }
    if ((DK / BLOCK) % 2u == 1u) {
        let last = DK / BLOCK - 1u;
        let a0 = coopLoadT<OperandA>(&state_rows_half[base + row * BLOCK * DK + last * BLOCK], DK);
        let b0 = coopLoadT<OperandB>(&state_local[last * BLOCK * CB + col * BLOCK], CB);
        even = coopMultiplyAdd(a0, b0, even);
    }
    return even + odd;
}
