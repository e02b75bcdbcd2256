//! The recurrent kernel family: the state recurrence serial in time, checkpointed every
//! `checkpoint_interval` steps, the backward replaying one interval at a time. This module knows
//! which buffers the family needs beyond the layer's own tensors and in which order its kernels
//! run; the kernels themselves are `gdn_wgsl`'s.

use crate::family::Geometry;
use crate::plan::{Named, Plan, folded};
use crate::{Context, Result};
use gdn_wgsl::{COLUMNS, ELEMENTS, Kernel, ReduceUniform, Tiling};

/// Slot of each sequence's first checkpoint (`[seqs + 1]`, the last the total): a sequence of `len`
/// tokens keeps `ceil(len / interval)` states, one at the start of each interval.
pub(crate) fn checkpoint_offsets(offsets: &[usize], interval: usize) -> Vec<usize> {
    let mut first = vec![0];
    for w in offsets.windows(2) {
        first.push(first.last().expect("non-empty") + (w[1] - w[0]).div_ceil(interval));
    }
    first
}

/// Words of the family's own buffers: checkpoints, the backward's scratch, the dg/dβ partials.
pub(crate) fn buffer_words(g: &Geometry) -> Vec<(&'static str, usize)> {
    let (config, tokens) = (g.config, g.tokens());
    let back = Tiling::backward(g.dims);
    let heads = g.sequences() * config.nv;
    let interval = g.options.checkpoint_interval;
    let checkpoints = *checkpoint_offsets(g.offsets, interval).last().expect("non-empty");
    let states = heads * interval * (back.ry * back.rx * back.threads()) as usize;
    let kv_rows = heads * interval * back.columns() as usize;
    vec![
        ("ckpt", checkpoints * config.nv * config.state_size()),
        ("scratch", states + kv_rows),
        ("gate_grad_parts", 2 * tokens * config.nv * back.tx as usize),
    ]
}

/// The parameter gradients that are plain column sums of a per-element term: (term, total).
const SUMS: [(&str, &str); 3] = [("dnorm_term", "dnorm"), ("dlog_term", "da_log"), ("da", "ddt_bias")];

/// Shape of each column sum of the backward, in the order of [`backward`]'s sums: dconv first.
pub(crate) fn reductions(g: &Geometry) -> [ReduceUniform; 4] {
    let (config, tokens) = (g.config, g.tokens());
    let shape = |rows: usize, cols: usize| {
        let rows_per_block = rows.div_ceil(1024).max(64);
        ReduceUniform {
            rows: rows as u32,
            cols: cols as u32,
            rows_per_block: rows_per_block as u32,
            blocks: rows.div_ceil(rows_per_block) as u32,
        }
    };
    [
        shape(tokens, config.channels() * config.kk),
        shape(tokens * config.nv, config.dv),
        shape(tokens, config.nv),
        shape(tokens, config.nv),
    ]
}

/// The forward: conv, q/k norms, gates, the recurrence, the gated norm.
pub(crate) fn forward(ctx: &Context, g: &Geometry, buffers: &Named) -> Result<Plan> {
    let (config, dims, tokens, seqs) = (g.config, g.dims, g.tokens(), g.sequences());
    let mut plan = Plan::default();
    let elements = |n: usize| n.div_ceil(ELEMENTS as usize);
    let column_blocks = config.dv.div_ceil(Tiling::forward(dims).columns() as usize);
    let steps = [
        (Kernel::ConvForward, elements(tokens * config.channels())),
        (Kernel::QkNormForward, tokens * config.nk),
        (Kernel::GatesForward, elements(tokens * config.nv)),
        (Kernel::RecurrenceForward, seqs * config.nv * column_blocks),
        (Kernel::NormForward, tokens * config.nv),
    ];
    for (kernel, count) in steps {
        plan.push(ctx, kernel, dims, folded(ctx, kernel.name(), count)?, buffers, &[])?;
    }
    Ok(plan)
}

/// The backward: norm, recurrence, gates, q/k norms, conv, then the parameter sums.
/// `reduce` holds the uniforms of [`reductions`], in order.
pub(crate) fn backward(
    ctx: &Context,
    g: &Geometry,
    buffers: &Named,
    reduce: &[(ReduceUniform, wgpu::Buffer); 4],
) -> Result<Plan> {
    let (config, dims, tokens, seqs) = (g.config, g.dims, g.tokens(), g.sequences());
    let mut plan = Plan::default();
    let elements = |n: usize| n.div_ceil(ELEMENTS as usize);
    let steps = [
        (Kernel::NormBackward, tokens * config.nv),
        (Kernel::RecurrenceBackward, seqs * config.nv),
        (Kernel::GatesBackward, elements(tokens * config.nv)),
        (Kernel::QkNormBackward, tokens * config.nk),
        (Kernel::ConvBackwardPre, elements(tokens * config.channels())),
        (Kernel::ConvBackwardInput, elements(tokens * config.channels())),
    ];
    for (kernel, count) in steps {
        plan.push(ctx, kernel, dims, folded(ctx, kernel.name(), count)?, buffers, &[])?;
    }
    let sums = std::iter::once((Kernel::DconvPartial, None, "dconv"))
        .chain(SUMS.iter().map(|&(src, total)| (Kernel::ColumnSumPartial, Some(src), total)));
    for ((partial_kernel, src, total), (shape, uniform)) in sums.zip(reduce) {
        let column_groups = shape.cols.div_ceil(COLUMNS);
        let mut overrides = vec![("reduce", uniform), ("total", buffers[total])];
        if let Some(src) = src {
            overrides.push(("src", buffers[src]));
        }
        plan.push(ctx, partial_kernel, dims, (column_groups, shape.blocks), buffers, &overrides)?;
        plan.push(ctx, Kernel::ColumnSumFinish, dims, (column_groups, 1), buffers, &overrides)?;
    }
    Ok(plan)
}
