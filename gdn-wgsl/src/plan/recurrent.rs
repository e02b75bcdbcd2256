//! The recurrent family: the state recurrence serial in time, checkpointed every
//! `checkpoint_interval` steps, the backward replaying one interval at a time
//! (`templates/recurrence_*.wgsl`). This module knows which buffers the family needs beyond the
//! layer's own and which kernels it dispatches over which grid.

use super::buffer::{BufferSpec, Work};
use super::geometry::Geometry;
use super::{PlanError, Stages};
use crate::{HeadDims, Kernel, LaneLayout, Tiling};

/// The backward writes one `dℓ`/`dβ` partial per column group of its thread tiling.
pub(crate) fn gate_parts(dims: HeadDims) -> usize {
    Tiling::backward(dims).tx as usize
}

/// The family's own buffers: checkpoints, the backward's scratch, the dℓ/dβ partials.
/// The scratch holds, per (sequence, head), the states of one checkpoint interval but its last
/// (kept in registers) and the interval's kv rows: with the interval fitted to the longest
/// sequence, what the batch's replay needs (saturated where it overflows, for the allocation to
/// refuse).
pub(crate) fn buffers(g: &Geometry) -> Vec<BufferSpec> {
    let config = g.config;
    let back = Tiling::backward(g.dims);
    let heads = g.sequences() * config.nv;
    let interval = g.family.state_interval();
    let states = heads.saturating_mul(interval - 1).saturating_mul((back.ry * back.rx * back.threads()) as usize);
    let kv_rows = heads.saturating_mul(interval).saturating_mul(back.columns() as usize);
    vec![
        BufferSpec::f32(Work::Ckpt, g.stored_states() * config.nv * config.state_size()),
        BufferSpec::f32(Work::Scratch, states.saturating_add(kv_rows)),
        BufferSpec::f32(Work::GateGradParts, 2 * g.tokens() * config.nv * gate_parts(g.dims)),
    ]
}

/// Workgroups of the per-token forward below which the forward solves chunks instead
/// (`Kernel::RecurrenceForwardChunks`): with fewer, most of a GPU's cores idle and each waits on its
/// own serial chain, which the chunked form shortens four-fold; with more, the per-token form's
/// fewer instructions win (H200: S4's 32 workgroups 0.080 ms token by token, 0.048 chunked; S1's
/// 2 048: 1.85 ms token by token, 3.59 chunked).
pub(crate) const FEW_HEADS_WORKGROUPS: usize = 256;

/// The forward recurrence: one workgroup per (sequence, head, column block), solved token by token
/// or, for few heads, chunk by chunk; its sums are subgroup shuffles where the device has them.
pub(crate) fn forward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    let layout = LaneLayout::recurrent_forward(g.dims);
    debug_assert_eq!(layout.columns(), LaneLayout::recurrent_chunks(g.dims).columns());
    let workgroups = g.sequences() * g.config.nv * g.config.dv.div_ceil(layout.columns() as usize);
    let kernel = match (workgroups < FEW_HEADS_WORKGROUPS, g.options.subgroups) {
        (true, true) => Kernel::RecurrenceForwardChunks,
        (true, false) => Kernel::RecurrenceForwardChunksPortable,
        (false, true) => Kernel::RecurrenceForward,
        (false, false) => Kernel::RecurrenceForwardPortable,
    };
    stages.push(kernel, workgroups)
}

/// The backward recurrence: one workgroup per (sequence, head).
pub(crate) fn backward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    stages.push(Kernel::RecurrenceBackward, g.sequences() * g.config.nv)
}
