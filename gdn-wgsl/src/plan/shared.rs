//! What every family shares: the layer's tensors and the work buffers around the delta rule, the
//! forward's prologue (conv, q/k norms, gates) and epilogue (gated RMSNorm), and the backward's
//! gradients around the family's with the parameter sums (column sums of per-element terms).

use super::buffer::{BufferId, BufferSpec, Contents, Work};
use super::geometry::Geometry;
use super::{PlanError, Stages};
use crate::{COLUMNS, CONV_RUN, CONV_RUNS_TO_FILL, CONV_WINDOW, ELEMENTS, Kernel, ReduceUniform, TOTAL_UNITS};
use gdn_ref::{Presence, Tensor};

/// The uniforms of the backward's column sums (dconv, dnorm, da_log, ddt_bias: the order of
/// `templates/shared/column_sums.wgsl`'s `which`).
const SUM_UNIFORMS: [Work; 4] = [Work::ReduceDconv, Work::ReduceDnorm, Work::ReduceDaLog, Work::ReduceDdtBias];

/// Rows a parameter sum may have for its totals to come in one pass
/// ([`Kernel::ConvBackwardInputTotals`]): ELEMENTS / TOTAL_UNITS blocks of at most 64 rows.
const ONE_PASS_ROWS: usize = 1024;

/// Blocks of rows of each sum in one pass: as many as a workgroup of the one-pass totals holds.
const ONE_PASS_BLOCKS: usize = (ELEMENTS / TOTAL_UNITS) as usize;

/// Whether the parameter sums' totals come in one pass, in the dispatch of the conv's input
/// gradient ([`Kernel::ConvBackwardInputTotals`]): where every sum has at most [`ONE_PASS_ROWS`]
/// rows (dnorm's, the most: a row per (token, value head)) and the device binds the storage
/// buffers it needs. Else their partials and totals are two dispatches.
fn totals_in_one_pass(g: &Geometry) -> bool {
    g.tokens() * g.config.nv <= ONE_PASS_ROWS
        && Kernel::ConvBackwardInputTotals.storage_buffers() <= g.options.storage_buffers
}

/// Shape of each column sum, in the order of [`SUM_UNIFORMS`], each sum's partials after the
/// previous one's.
fn reductions(g: &Geometry) -> [ReduceUniform; 4] {
    let (config, tokens) = (g.config, g.tokens());
    let one_pass = totals_in_one_pass(g);
    // In one pass, ONE_PASS_BLOCKS blocks. Else at most 1 024 blocks of rows, of at least 64 rows
    // where they are many; fewer than 1 024 rows take 16 blocks (of 8 rows at least), so that a
    // short batch's sums still spread over the GPU instead of walking 64 tokens a workgroup (S4's
    // dconv was slow so: BENCHMARKS.md, S4).
    let shape = |rows: usize, cols: usize| {
        let rows_per_block = if one_pass {
            rows.div_ceil(ONE_PASS_BLOCKS).max(1)
        } else {
            rows.div_ceil(1024).max((rows / 16).clamp(8, 64))
        };
        ReduceUniform {
            rows: rows as u32,
            cols: cols as u32,
            rows_per_block: rows_per_block as u32,
            blocks: rows.div_ceil(rows_per_block) as u32,
            partial_at: 0,
        }
    };
    let mut sums = [
        shape(tokens, config.channels() * config.kk),
        shape(tokens * config.nv, config.dv),
        shape(tokens, config.nv),
        shape(tokens, config.nv),
    ];
    // Saturated past u32: the partial buffer then passes every binding limit, and the plan is
    // refused before a kernel reads the offset.
    let mut at = 0usize;
    for sum in &mut sums {
        sum.partial_at = u32::try_from(at).unwrap_or(u32::MAX);
        at = at.saturating_add(sum_words(sum));
    }
    sums
}

/// Words of one sum's partials.
fn sum_words(sum: &ReduceUniform) -> usize {
    sum.blocks as usize * sum.cols as usize
}

/// Words of the partial buffer: every sum's partials.
fn partial_words(sums: &[ReduceUniform; 4]) -> usize {
    sums.iter().map(sum_words).fold(0, usize::saturating_add)
}

/// The layer's tensors (zero words for an optional one the call does not have), the shared work
/// buffers, the index and the uniforms.
pub(crate) fn buffers(g: &Geometry) -> Result<Vec<BufferSpec>, PlanError> {
    let (config, tokens, seqs, options) = (g.config, g.tokens(), g.sequences(), g.options);
    let present = |tensor: Tensor| match tensor.presence() {
        Presence::Always => true,
        Presence::InitialState => options.initial_state,
        Presence::FinalStateGrad => options.final_state_grad,
        Presence::ConvState => options.conv_state,
    };
    let storage = options.storage;
    let mut specs = Vec::new();
    for t in Tensor::ALL {
        let elements = if present(t) { t.len(config, tokens, seqs).unwrap_or(usize::MAX) } else { 0 };
        if storage.halves(t) {
            let words = elements.div_ceil(2);
            specs.push(BufferSpec { id: t.into(), contents: Contents::Storage { words, element: storage.element() } });
            specs.push(BufferSpec::f32(BufferId::Wide(t), elements));
        } else {
            specs.push(BufferSpec::f32(t, elements));
        }
    }
    let (c, v, nv, nk, dk) = (config.channels(), config.value_width(), config.nv, config.nk, config.dk);
    let reductions = reductions(g);
    specs.extend([
        BufferSpec::f32(Work::Y, tokens * c),
        // q̂, k̂, then each k̂'s products with the three before it (`templates/lib/qk_rows.wgsl`).
        BufferSpec::f32(Work::QkHat, tokens * nk * (2 * dk + 3)),
        BufferSpec::f32(Work::Gates, tokens * (5 * nv + 2 * nk)),
        BufferSpec::f32(Work::O, tokens * v),
        BufferSpec::f32(Work::Rstd, tokens * nv),
        BufferSpec::f32(Work::DO, tokens * v),
        BufferSpec::f32(Work::DnormTerm, tokens * v),
        BufferSpec::f32(Work::DqkHatHeads, 2 * tokens * nv * g.family.hat_parts(g) * dk),
        BufferSpec::f32(Work::Dy, tokens * c),
        BufferSpec::f32(Work::DlogTerm, tokens * nv),
        BufferSpec::f32(Work::Dpre, tokens * c),
        BufferSpec::f32(Work::Partial, partial_words(&reductions)),
        BufferSpec { id: Work::Index.into(), contents: Contents::Fixed(g.index()?) },
        BufferSpec {
            id: Work::Layer.into(),
            contents: Contents::Uniform(bytemuck::bytes_of(&g.layer_uniform()?).to_vec()),
        },
    ]);
    specs.extend(SUM_UNIFORMS.iter().zip(reductions).map(|(&uniform, shape)| BufferSpec {
        id: uniform.into(),
        contents: Contents::Uniform(bytemuck::bytes_of(&shape).to_vec()),
    }));
    Ok(specs)
}

/// Workgroups of the conv kernels: a group of ELEMENTS channels by a run of tokens, CONV_RUN of
/// them where the taps fit the window and such runs fill CONV_RUNS_TO_FILL workgroups, one
/// otherwise (`templates/shared/conv_runs.wgsl`'s rule).
fn conv_runs(g: &Geometry) -> usize {
    let groups = g.config.channels().div_ceil(ELEMENTS as usize);
    let long_runs = groups * g.tokens().div_ceil(CONV_RUN as usize);
    let windowed = g.config.kk <= CONV_WINDOW as usize;
    let run = if windowed && long_runs >= CONV_RUNS_TO_FILL as usize { CONV_RUN as usize } else { 1 };
    groups * g.tokens().div_ceil(run)
}

/// Whether the conv runs inside the q/k norms' dispatches, forward and backward
/// ([`conv_qk_norm_kernel`], [`Kernel::QkNormConvBackward`]): where the taps fit the window (each
/// conv one round of loads) and the device binds the storage buffers they need. At S1 the fused
/// kernels beat their parts forward and backward (BENCHMARKS.md, History, 2026-12-08).
fn conv_in_norms(g: &Geometry) -> bool {
    let fused = [conv_qk_norm_kernel(g), Kernel::QkNormConvBackward];
    g.config.kk <= CONV_WINDOW as usize && fused.iter().all(|k| k.storage_buffers() <= g.options.storage_buffers)
}

/// The family's q/k norm kernel with the conv inside.
fn conv_qk_norm_kernel(g: &Geometry) -> Kernel {
    match g.family.qk_norm_kernel(g) {
        Kernel::QkNormGatesProductsForward => Kernel::ConvQkNormGatesProductsForward,
        _ => Kernel::ConvQkNormGatesForward,
    }
}

/// The forward: conv, q/k norms and gates (one dispatch, or one with the conv:
/// [`conv_in_norms`]), the family's delta rule, the gated norm.
pub(crate) fn forward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    let (config, tokens) = (g.config, g.tokens());
    if conv_in_norms(g) {
        stages.push(conv_qk_norm_kernel(g), tokens * config.nk)?;
    } else {
        stages.push(Kernel::ConvForward, conv_runs(g))?;
        stages.push(g.family.qk_norm_kernel(g), tokens * config.nk)?;
    }
    g.family.forward(stages)?;
    stages.push(Kernel::NormForward, tokens * config.nv)
}

/// The backward: the gated norm's, the family's delta rule, q/k norms and gates (one dispatch, with
/// the conv's dpre where [`conv_in_norms`]), then the conv's input gradient and the parameter sums:
/// with their totals in one pass for short batches ([`totals_in_one_pass`]), else with their
/// partials (one dispatch where the device binds 12 storage buffers) and the totals after.
pub(crate) fn backward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    let (config, tokens) = (g.config, g.tokens());
    stages.push(Kernel::NormBackward, tokens * config.nv)?;
    g.family.backward(stages)?;
    let gate_parts = [("gate_grad_parts", g.family.gate_parts_buffer(g))];
    if conv_in_norms(g) {
        stages.push_with(Kernel::QkNormConvBackward, tokens * config.nk, &gate_parts)?;
    } else {
        stages.push_with(Kernel::QkNormBackward, tokens * config.nk, &gate_parts)?;
        stages.push(Kernel::ConvBackwardPre, conv_runs(g))?;
    }
    let sums = reductions(g);
    if totals_in_one_pass(g) {
        let jobs: usize = (0..sums.len()).map(|which| sum_units(g, &sums, which).div_ceil(TOTAL_UNITS as usize)).sum();
        return stages.push(Kernel::ConvBackwardInputTotals, conv_runs(g) + jobs);
    }
    // Every sum's partials in one dispatch (with the conv's input gradient where the device binds
    // the storage buffers both need), then every total in one.
    let partial_jobs: usize = (0..sums.len())
        .map(|which| sum_units(g, &sums, which).div_ceil(COLUMNS as usize) * sums[which].blocks as usize)
        .sum();
    if Kernel::ConvBackwardInputSums.storage_buffers() <= g.options.storage_buffers {
        let per_workgroup = (ELEMENTS / COLUMNS) as usize;
        stages.push(Kernel::ConvBackwardInputSums, conv_runs(g) + partial_jobs.div_ceil(per_workgroup))?;
    } else {
        stages.push(Kernel::ConvBackwardInput, conv_runs(g))?;
        stages.push(Kernel::ColumnSumsPartial, partial_jobs)?;
    }
    stages.push(Kernel::ColumnSumsFinish, sums.iter().map(column_groups).sum())
}

/// Groups of COLUMNS columns of a sum (`templates/shared/column_sums.wgsl`'s `column_groups`).
fn column_groups(sum: &ReduceUniform) -> usize {
    sum.cols.div_ceil(COLUMNS) as usize
}

/// What one invocation of a block sums for sum `which` (`column_sums.wgsl`'s `sum_units`): its
/// columns, but dconv's (sum 0) channels where one invocation takes every tap of a channel
/// (kk ≤ CONV_WINDOW).
fn sum_units(g: &Geometry, sums: &[ReduceUniform; 4], which: usize) -> usize {
    if which == 0 && g.config.kk <= CONV_WINDOW as usize { g.config.channels() } else { sums[which].cols as usize }
}
