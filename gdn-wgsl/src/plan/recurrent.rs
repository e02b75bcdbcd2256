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

/// The forward recurrence: one workgroup per (sequence, head, column block), its column sums by
/// subgroup shuffles where the device has them.
pub(crate) fn forward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    let column_blocks = g.config.dv.div_ceil(LaneLayout::recurrent_forward(g.dims).columns() as usize);
    let kernel = if g.options.subgroups { Kernel::RecurrenceForward } else { Kernel::RecurrenceForwardPortable };
    stages.push(kernel, g.sequences() * g.config.nv * column_blocks)
}

/// The backward recurrence: one workgroup per (sequence, head).
pub(crate) fn backward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    stages.push(Kernel::RecurrenceBackward, g.sequences() * g.config.nv)
}
