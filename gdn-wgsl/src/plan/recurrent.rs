//! The recurrent family: the state recurrence serial in time, checkpointed every
//! `checkpoint_interval` steps, the backward replaying one interval at a time
//! (`templates/recurrent/`). This module knows which buffers the family needs beyond the
//! layer's own and which kernels it dispatches over which grid: for batches of few heads, kernels
//! that spread each head's state columns over several workgroups.

use super::buffer::{BufferSpec, Work};
use super::geometry::Geometry;
use super::{PlanError, Stages};
use crate::{Kernel, LaneLayout, RECURRENT_CHUNK, Tiling};

/// Words of the column-block backward's scratch and of its dq̂/dk̂ partials above which a batch of
/// few heads keeps the one-workgroup-per-head backward: 128 MiB each, what lavapipe binds.
pub(crate) const MAX_COLUMN_BACKWARD_WORDS: usize = 1 << 25;

/// Workgroups of the per-token forward (`Kernel::RecurrenceForward`): (sequence, value head, block
/// of 16 columns). Below [`FEW_HEADS_WORKGROUPS`] of them a batch has few heads.
fn token_jobs(g: &Geometry) -> usize {
    let columns = LaneLayout::recurrent_forward(g.dims).columns() as usize;
    g.sequences() * g.config.nv * g.config.dv.div_ceil(columns)
}

/// Whether the batch has few heads: the kernels for few heads spread each head's columns over
/// workgroups of one column a warp, solving chunks of [`RECURRENT_CHUNK`] tokens.
pub(crate) fn few_heads(g: &Geometry) -> bool {
    token_jobs(g) < FEW_HEADS_WORKGROUPS
}

/// Workgroups of the chunk-solved forward for few heads (`Kernel::RecurrenceForwardChunks`):
/// (sequence, value head, block of `LaneLayout::recurrent_forward_chunks`' columns).
fn chunk_jobs(g: &Geometry) -> usize {
    let columns = LaneLayout::recurrent_forward_chunks(g.dims).columns() as usize;
    g.sequences() * g.config.nv * g.config.dv.div_ceil(columns)
}

/// Column blocks a head is spread over by the column-block backward:
/// `LaneLayout::recurrent_backward_columns`' columns each.
fn column_blocks(g: &Geometry) -> usize {
    g.config.dv.div_ceil(LaneLayout::recurrent_backward_columns(g.dims).columns() as usize)
}

/// Its workgroups: (sequence, value head, column block).
fn column_jobs(g: &Geometry) -> usize {
    g.sequences() * g.config.nv * column_blocks(g)
}

/// Words of the column-block backward's scratch: per column and chunk of an interval, the state's
/// column entering the chunk (`templates/recurrent/recurrence_backward_columns.wgsl`).
fn column_scratch_words(g: &Geometry) -> usize {
    let columns = column_jobs(g) * LaneLayout::recurrent_backward_columns(g.dims).columns() as usize;
    let chunks = g.family.state_interval().div_ceil(RECURRENT_CHUNK as usize);
    columns.saturating_mul(chunks).saturating_mul(g.config.dk)
}

/// Whether the backward spreads each head's columns over workgroups
/// (`Kernel::RecurrenceBackwardColumns`): where the forward does too (few heads: one workgroup per
/// (sequence, head) leaves most of a GPU idle: S4's 4 workgroups, BENCHMARKS.md, S4), and where its
/// scratch and its dq̂/dk̂ partials (a row per column block) stay within
/// [`MAX_COLUMN_BACKWARD_WORDS`].
pub(crate) fn backward_in_columns(g: &Geometry) -> bool {
    let partials = 2usize.saturating_mul(g.tokens()).saturating_mul(g.config.nv * column_blocks(g) * g.config.dk);
    few_heads(g) && partials <= MAX_COLUMN_BACKWARD_WORDS && column_scratch_words(g) <= MAX_COLUMN_BACKWARD_WORDS
}

/// Partial sums of `dℓ` and of `dβ` per (token, value head) the backward writes: one per column
/// block, or per column group of the one-workgroup backward's thread tiling.
pub(crate) fn gate_parts(g: &Geometry) -> usize {
    if backward_in_columns(g) { column_blocks(g) } else { Tiling::backward(g.dims).tx as usize }
}

/// Partial rows of `dq̂` and of `dk̂` per (token, value head) the backward writes: one per column
/// block, or one.
pub(crate) fn hat_parts(g: &Geometry) -> usize {
    if backward_in_columns(g) { column_blocks(g) } else { 1 }
}

/// The family's own buffers: checkpoints, the backward's scratch, the dℓ/dβ partials.
/// The one-workgroup backward's scratch holds, per (sequence, head), the states of one checkpoint
/// interval but its last (kept in registers) and the interval's kv rows; the column-block
/// backward's, per column, the state's column entering each chunk. With the interval fitted to
/// the longest sequence, what the batch's replay needs (saturated where it overflows, for the
/// allocation to refuse).
pub(crate) fn buffers(g: &Geometry) -> Vec<BufferSpec> {
    let config = g.config;
    let scratch = if backward_in_columns(g) {
        column_scratch_words(g)
    } else {
        let back = Tiling::backward(g.dims);
        let heads = g.sequences() * config.nv;
        let interval = g.family.state_interval();
        let states = heads.saturating_mul(interval - 1).saturating_mul((back.ry * back.rx * back.threads()) as usize);
        states.saturating_add(heads.saturating_mul(interval).saturating_mul(back.columns() as usize))
    };
    vec![
        BufferSpec::f32(Work::Ckpt, checkpoint_words(g)),
        BufferSpec::f32(Work::Scratch, scratch),
        BufferSpec::f32(Work::GateGradParts, 2 * g.tokens() * config.nv * gate_parts(g)),
    ]
}

/// Words of the checkpoint buffer: the stored states, then room for the forward's r where the
/// column-block backward replays from it (`templates/recurrent/residuals.wgsl`; the forward writes
/// it where there is room).
fn checkpoint_words(g: &Geometry) -> usize {
    let config = g.config;
    let residuals = if g.options.backward && backward_in_columns(g) { g.tokens() * config.nv * config.dv } else { 0 };
    g.stored_states() * config.nv * config.state_size() + residuals
}

/// Workgroups of the per-token forward below which the forward solves chunks instead
/// (`Kernel::RecurrenceForwardChunks`): with fewer, most of a GPU's cores idle and each waits on its
/// own serial chain, which the chunked form shortens four-fold; with more, the per-token form's
/// fewer instructions win (S4's 32 workgroups run faster chunked, S1's 2 048 token by token:
/// BENCHMARKS.md, S4 and S1 recurrent forward).
pub(crate) const FEW_HEADS_WORKGROUPS: usize = 256;

/// The forward recurrence: one workgroup per (sequence, head, column block), solved token by token
/// or, for few heads, chunk by chunk; its sums are subgroup shuffles where the device has them.
pub(crate) fn forward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    match (few_heads(g), g.options.subgroups) {
        (true, true) => stages.push(Kernel::RecurrenceForwardChunks, chunk_jobs(g)),
        (true, false) => stages.push(Kernel::RecurrenceForwardChunksPortable, chunk_jobs(g)),
        (false, true) => stages.push(Kernel::RecurrenceForward, token_jobs(g)),
        (false, false) => stages.push(Kernel::RecurrenceForwardPortable, token_jobs(g)),
    }
}

/// The backward recurrence: one workgroup per (sequence, head, column block) for few heads, its
/// sums subgroup shuffles where the device has them; else one per (sequence, head).
pub(crate) fn backward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    let jobs = column_jobs(g);
    match (backward_in_columns(g), g.options.subgroups) {
        (true, true) => stages.push(Kernel::RecurrenceBackwardColumns, jobs),
        (true, false) => stages.push(Kernel::RecurrenceBackwardColumnsPortable, jobs),
        (false, _) => stages.push(Kernel::RecurrenceBackward, g.sequences() * g.config.nv),
    }
}
