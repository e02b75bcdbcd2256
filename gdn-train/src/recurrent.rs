//! The recurrent family: the state recurrence serial in time, checkpointed every
//! `checkpoint_interval` steps, the backward replaying one interval at a time. This module knows
//! which buffers the family needs beyond the layer's own tensors and which kernels it dispatches;
//! the kernels themselves are `gdn_wgsl`'s.

use crate::family::Geometry;
use crate::plan::{Plan, folded};
use crate::{Context, Result};
use gdn_wgsl::{HeadDims, Kernel, Tiling};

/// The backward writes one `dℓ`/`dβ` partial per column group of its thread tiling.
pub(crate) fn gate_parts(dims: HeadDims) -> usize {
    Tiling::backward(dims).tx as usize
}

/// Words of the family's own buffers: checkpoints, the backward's scratch, the dℓ/dβ partials.
/// The scratch holds, per (sequence, head), the states of one checkpoint interval but its last
/// (kept in registers) and the interval's kv rows: with the interval fitted to the longest
/// sequence, what the batch's replay needs (saturated where it overflows, for the allocation to
/// refuse).
pub(crate) fn buffer_words(g: &Geometry) -> Vec<(&'static str, usize)> {
    let config = g.config;
    let back = Tiling::backward(g.dims);
    let heads = g.sequences() * config.nv;
    let interval = g.family.state_interval();
    let states = heads.saturating_mul(interval - 1).saturating_mul((back.ry * back.rx * back.threads()) as usize);
    let kv_rows = heads.saturating_mul(interval).saturating_mul(back.columns() as usize);
    vec![
        ("ckpt", g.stored_states() * config.nv * config.state_size()),
        ("scratch", states.saturating_add(kv_rows)),
        ("gate_grad_parts", 2 * g.tokens() * config.nv * gate_parts(g.dims)),
    ]
}

/// The forward recurrence: one workgroup per (sequence, head, column block).
pub(crate) fn forward(ctx: &Context, g: &Geometry, plan: &mut Plan) -> Result<()> {
    let column_blocks = g.config.dv.div_ceil(Tiling::forward(g.dims).columns() as usize);
    let kernel = Kernel::RecurrenceForward;
    let grid = folded(ctx, kernel.name(), g.sequences() * g.config.nv * column_blocks)?;
    plan.push(ctx, kernel, g.dims, grid, &[])
}

/// The backward recurrence: one workgroup per (sequence, head).
pub(crate) fn backward(ctx: &Context, g: &Geometry, plan: &mut Plan) -> Result<()> {
    let kernel = Kernel::RecurrenceBackward;
    let grid = folded(ctx, kernel.name(), g.sequences() * g.config.nv)?;
    plan.push(ctx, kernel, g.dims, grid, &[])
}
