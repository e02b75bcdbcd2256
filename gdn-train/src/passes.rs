//! The layer's forward and backward as dispatch plans: the shared prologue (conv, q/k norms, gates),
//! the family's delta rule, the shared epilogue (gated RMSNorm), and in the backward the shared
//! gradients around the family's and the parameter sums.

use crate::family::Geometry;
use crate::plan::{Plan, folded};
use crate::{Context, Result};
use gdn_wgsl::{COLUMNS, CONV_RUN, CONV_WINDOW, ELEMENTS, Kernel, ReduceUniform};

/// The parameter gradients that are plain column sums of a per-element term: (term, total).
const SUMS: [(&str, &str); 3] = [("dnorm_term", "dnorm"), ("dlog_term", "da_log"), ("da", "ddt_bias")];

/// The tape's uniform buffers holding [`reductions`], in the same order.
pub(crate) const REDUCE_UNIFORMS: [&str; 4] = ["reduce0", "reduce1", "reduce2", "reduce3"];

/// Shape of each column sum of the backward, in the order [`backward`] runs them: dconv first.
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

fn elements(n: usize) -> usize {
    n.div_ceil(ELEMENTS as usize)
}

/// Workgroups of the conv kernels: a group of ELEMENTS channels by a run of tokens, CONV_RUN of
/// them where the taps fit the window and one otherwise (`templates/conv_runs.wgsl`'s rule).
fn conv_runs(g: &Geometry) -> usize {
    let run = if g.config.kk <= CONV_WINDOW as usize { CONV_RUN as usize } else { 1 };
    g.config.channels().div_ceil(ELEMENTS as usize) * g.tokens().div_ceil(run)
}

/// Appends `kernel` over `count` workgroups (folded under the grid limit).
fn push(ctx: &Context, g: &Geometry, plan: &mut Plan, kernel: Kernel, count: usize) -> Result<()> {
    plan.push(ctx, kernel, g.dims, folded(ctx, kernel.name(), count)?, &[])
}

/// The forward: conv, q/k norms, gates, the family's delta rule, the gated norm.
pub(crate) fn forward(ctx: &Context, g: &Geometry) -> Result<Plan> {
    let (config, tokens) = (g.config, g.tokens());
    let mut plan = Plan::default();
    push(ctx, g, &mut plan, Kernel::ConvForward, conv_runs(g))?;
    push(ctx, g, &mut plan, Kernel::QkNormForward, tokens * config.nk)?;
    push(ctx, g, &mut plan, Kernel::GatesForward, elements(tokens * config.nv))?;
    g.family.forward(ctx, g, &mut plan)?;
    push(ctx, g, &mut plan, Kernel::NormForward, tokens * config.nv)?;
    Ok(plan)
}

/// The backward: norm, the family's delta rule, gates, q/k norms, conv, then the parameter sums.
/// `reduce` holds the uniforms of [`reductions`], in order.
pub(crate) fn backward(ctx: &Context, g: &Geometry) -> Result<Plan> {
    let (config, tokens) = (g.config, g.tokens());
    let mut plan = Plan::default();
    push(ctx, g, &mut plan, Kernel::NormBackward, tokens * config.nv)?;
    g.family.backward(ctx, g, &mut plan)?;
    push(ctx, g, &mut plan, Kernel::GatesBackward, elements(tokens * config.nv))?;
    push(ctx, g, &mut plan, Kernel::QkNormBackward, tokens * config.nk)?;
    push(ctx, g, &mut plan, Kernel::ConvBackwardPre, conv_runs(g))?;
    push(ctx, g, &mut plan, Kernel::ConvBackwardInput, conv_runs(g))?;
    // dconv's partial sums: every tap of a channel in one invocation where the taps fit the window.
    let dconv = if config.kk <= CONV_WINDOW as usize { Kernel::DconvWindow } else { Kernel::DconvPartial };
    let sums = std::iter::once((dconv, None, "dconv"))
        .chain(SUMS.iter().map(|&(src, total)| (Kernel::ColumnSumPartial, Some(src), total)));
    for (((partial_kernel, src, total), shape), uniform) in sums.zip(reductions(g)).zip(REDUCE_UNIFORMS) {
        let column_groups = shape.cols.div_ceil(COLUMNS);
        let mut overrides = vec![("reduce", uniform), ("total", total)];
        if let Some(src) = src {
            overrides.push(("src", src));
        }
        let (column_groups, blocks) = (column_groups as usize, shape.blocks as usize);
        let partial_groups = match partial_kernel {
            Kernel::DconvWindow => config.channels().div_ceil(COLUMNS as usize),
            _ => column_groups,
        };
        let partial_grid = folded(ctx, partial_kernel.name(), partial_groups * blocks)?;
        plan.push(ctx, partial_kernel, g.dims, partial_grid, &overrides)?;
        let finish_grid = folded(ctx, Kernel::ColumnSumFinish.name(), column_groups)?;
        plan.push(ctx, Kernel::ColumnSumFinish, g.dims, finish_grid, &overrides)?;
    }
    Ok(plan)
}
