//! The kernels both families share (`templates/shared/`): causal conv + SiLU, the q/k L2 norms and
//! gates, the gated RMSNorm, their backwards, every parameter gradient's sums, and the windowed
//! tape's gradient accumulation; with the fused variants the plan takes where the device allows
//! the storage buffers they bind.

use super::{Binding, GATE_VALUES, KernelDef, NO_WORKGROUP_MEMORY, Needs, QK_ROWS, SEQUENCES, Wgsl, bind, wgsl};
use crate::HeadDims;
use crate::kernels::BindingKind::{LayerUniform, ReadF32, ReadU32, ReduceUniform, WriteF32};

/// Threads per workgroup of the element-wise kernels.
pub const ELEMENTS: u32 = 256;
/// Tokens one invocation of the conv kernels walks (`templates/shared/conv_runs.wgsl`) where the
/// batch has runs enough to fill the GPU.
pub const CONV_RUN: u32 = 16;
/// Workgroups of runs of [`CONV_RUN`] tokens below which the conv kernels take one token an
/// invocation instead: a run's tokens are loaded one after another, so short batches (S4's 32
/// workgroups of runs) wait sixteen load latencies where one would do (BENCHMARKS.md, S4: the
/// conv kernels run faster a token an invocation).
pub const CONV_RUNS_TO_FILL: u32 = 64;
/// Neighbouring tokens the conv kernels keep in registers: kernels for at most this many taps read
/// each raw value once.
pub const CONV_WINDOW: u32 = 4;
/// Columns per workgroup of the column sums.
pub const COLUMNS: u32 = 64;
// `Kernel::ConvBackwardInputSums` runs ELEMENTS / COLUMNS column-sum jobs in each of its workgroups.
const _: () = assert!(ELEMENTS.is_multiple_of(COLUMNS));
/// Units (columns, or dconv's channels) per workgroup of the parameter sums' totals in one pass
/// (`templates/shared/column_totals.wgsl`): each workgroup of [`ELEMENTS`] invocations takes this
/// many units by up to ELEMENTS / TOTAL_UNITS blocks of rows.
pub const TOTAL_UNITS: u32 = 16;
const _: () = assert!(ELEMENTS.is_multiple_of(TOTAL_UNITS));
/// Threads per workgroup of the gated RMSNorm's kernels (a head's `dv` elements), and the fewest of
/// the q/k norms' forward (which takes dk's next power of two where that is more).
pub const VEC: u32 = 64;
/// Fewest threads per workgroup of the q/k norms' backward
/// (`templates/shared/qk_norm_backward.wgsl`, its `VEC`), which takes dk where that is more
/// ([`qk_norm_backward_threads`]).
const QK_NORM_BACKWARD_THREADS: u32 = 128;

/// Threads per workgroup of the q/k norms' forward (`templates/shared/qk_norm_gates_forward.wgsl`,
/// its `VEC`): [`VEC`], or dk's next power of two where that is more (row_sum.wgsl halves its
/// threads), so that a thread holds one element of q and of k (BENCHMARKS.md, S4:
/// `conv_qk_norm_gates_products_forward` is faster on 128 threads at dk = 128 than on 64).
fn qk_norm_forward_threads(dims: HeadDims) -> u32 {
    VEC.max(dims.dk.next_power_of_two())
}

/// Threads per workgroup of the q/k norms' backward: [`QK_NORM_BACKWARD_THREADS`], or dk's next
/// power of two where that is more, so that a thread holds one element of q and of k at most, and
/// each element's partial rows (the family's backward writes one per column block) are summed by
/// `threads / dk` threads, their loads in flight together. BENCHMARKS.md, S4 at dk = 128: 128
/// threads beat 256, and 64 (four rounds of loads, each waited for) are slowest.
fn qk_norm_backward_threads(dims: HeadDims) -> u32 {
    QK_NORM_BACKWARD_THREADS.max(dims.dk.next_power_of_two())
}

const CONV_TAP: Wgsl = wgsl!("shared/conv_tap");
const CONV_RUNS: Wgsl = wgsl!("shared/conv_runs");
const CONV_WINDOWS: Wgsl = wgsl!("shared/conv_window");
const CONV_PRE: Wgsl = wgsl!("shared/conv_pre");
const CONV_AT: Wgsl = wgsl!("shared/conv_at");
const CONV_INPUT_GRAD: Wgsl = wgsl!("shared/conv_input_grad");
const COLUMN_SUMS: Wgsl = wgsl!("shared/column_sums");
const DCONV_WINDOW: Wgsl = wgsl!("shared/dconv_window");
const DCONV_PARTIAL: Wgsl = wgsl!("shared/dconv_partial");
const PARTIAL_SUMS: Wgsl = wgsl!("shared/partial_sums");
const SUM_BLOCKS: Wgsl = wgsl!("shared/sum_blocks");
const SUM_TOTALS: Wgsl = wgsl!("shared/sum_totals");
const COLUMN_TOTALS: Wgsl = wgsl!("shared/column_totals");
const ROW_SUM: Wgsl = wgsl!("shared/row_sum");
const TOKEN_SPAN: Wgsl = wgsl!("shared/token_span");
const QK_INPUTS_STORED: Wgsl = wgsl!("shared/qk_inputs_stored");
const QK_INPUTS_CONV: Wgsl = wgsl!("shared/qk_inputs_conv");
const QK_GRADS_STORED: Wgsl = wgsl!("shared/qk_grads_stored");
const QK_GRADS_CONV: Wgsl = wgsl!("shared/qk_grads_conv");

/// The `const`s of the conv kernels.
fn conv_constants(_: HeadDims) -> Vec<(&'static str, u32)> {
    vec![
        ("ELEMENTS", ELEMENTS),
        ("CONV_RUN", CONV_RUN),
        ("CONV_RUNS_TO_FILL", CONV_RUNS_TO_FILL),
        ("CONV_WINDOW", CONV_WINDOW),
    ]
}

/// The `const`s of the kernels that sum the parameter gradients (and of those fused with the
/// conv's input gradient).
fn sums_constants(_: HeadDims) -> Vec<(&'static str, u32)> {
    vec![
        ("COLUMNS", COLUMNS),
        ("TOTAL_UNITS", TOTAL_UNITS),
        ("ELEMENTS", ELEMENTS),
        ("CONV_RUN", CONV_RUN),
        ("CONV_RUNS_TO_FILL", CONV_RUNS_TO_FILL),
        ("CONV_WINDOW", CONV_WINDOW),
    ]
}

/// The `const`s of the element-wise kernels.
pub(crate) fn elements_constants(_: HeadDims) -> Vec<(&'static str, u32)> {
    vec![("ELEMENTS", ELEMENTS)]
}

/// [`KernelDef::threads`] of the element-wise kernels.
pub(crate) const ELEMENT_THREADS: fn(HeadDims) -> u32 = |_| ELEMENTS;

pub(crate) const CONV_FORWARD: KernelDef = KernelDef {
    name: "conv_forward",
    template: wgsl!("shared/conv_forward"),
    snippets: &[SEQUENCES, CONV_TAP, CONV_RUNS, CONV_WINDOWS, CONV_PRE],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("conv", ReadF32),
        bind("y", WriteF32),
        bind("final_conv_state", WriteF32),
    ],
    threads: ELEMENT_THREADS,
    workgroup_floats: NO_WORKGROUP_MEMORY,
    constants: conv_constants,
    depends_on_dims: false,
    needs: Needs::Nothing,
};

const QK_NORM_GATES_FORWARD_BINDINGS: &[Binding] = &[
    bind("layer", LayerUniform),
    bind("y", ReadF32),
    bind("a", ReadF32),
    bind("b", ReadF32),
    bind("a_log", ReadF32),
    bind("dt_bias", ReadF32),
    bind("qk_hat", WriteF32),
    bind("gates", WriteF32),
];

/// The `const`s of the q/k norms' forward, `KEY_PRODUCTS` 1 where it writes each k̂'s products with
/// the three before it.
fn qk_norm_forward_constants(dims: HeadDims, products: u32) -> Vec<(&'static str, u32)> {
    vec![
        ("DK", dims.dk),
        ("DV", dims.dv),
        ("VEC", qk_norm_forward_threads(dims)),
        ("KEY_PRODUCTS", products),
        ("CONV_WINDOW", CONV_WINDOW),
    ]
}

pub(crate) const QK_NORM_GATES_FORWARD: KernelDef = KernelDef {
    name: "qk_norm_gates_forward",
    template: wgsl!("shared/qk_norm_gates_forward"),
    snippets: &[QK_ROWS, ROW_SUM, TOKEN_SPAN, QK_INPUTS_STORED],
    bindings: QK_NORM_GATES_FORWARD_BINDINGS,
    threads: qk_norm_forward_threads,
    // row_sum.wgsl's scratch, a vec4 a thread.
    workgroup_floats: |dims| 4 * qk_norm_forward_threads(dims),
    constants: |dims| qk_norm_forward_constants(dims, 0),
    depends_on_dims: true,
    needs: Needs::Nothing,
};

pub(crate) const QK_NORM_GATES_PRODUCTS_FORWARD: KernelDef = KernelDef {
    name: "qk_norm_gates_products_forward",
    constants: |dims| qk_norm_forward_constants(dims, 1),
    ..QK_NORM_GATES_FORWARD
};

pub(crate) const CONV_QK_NORM_GATES_FORWARD: KernelDef = KernelDef {
    name: "conv_qk_norm_gates_forward",
    snippets: &[SEQUENCES, CONV_TAP, TOKEN_SPAN, CONV_AT, QK_ROWS, ROW_SUM, QK_INPUTS_CONV],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("conv", ReadF32),
        bind("a", ReadF32),
        bind("b", ReadF32),
        bind("a_log", ReadF32),
        bind("dt_bias", ReadF32),
        bind("y", WriteF32),
        bind("final_conv_state", WriteF32),
        bind("qk_hat", WriteF32),
        bind("gates", WriteF32),
    ],
    ..QK_NORM_GATES_FORWARD
};

pub(crate) const CONV_QK_NORM_GATES_PRODUCTS_FORWARD: KernelDef = KernelDef {
    name: "conv_qk_norm_gates_products_forward",
    constants: |dims| qk_norm_forward_constants(dims, 1),
    ..CONV_QK_NORM_GATES_FORWARD
};

/// The `const`s of the gated RMSNorm's kernels.
fn norm_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    vec![("DV", dims.dv), ("VEC", VEC)]
}

pub(crate) const NORM_FORWARD: KernelDef = KernelDef {
    name: "norm_forward",
    template: wgsl!("shared/norm_forward"),
    snippets: &[ROW_SUM],
    bindings: &[
        bind("layer", LayerUniform),
        bind("o", ReadF32),
        bind("z", ReadF32),
        bind("norm", ReadF32),
        bind("out", WriteF32),
        bind("rstd", WriteF32),
    ],
    threads: |_| VEC,
    // row_sum.wgsl's scratch, a vec4 a thread.
    workgroup_floats: |_| 4 * VEC,
    constants: norm_constants,
    depends_on_dims: true,
    needs: Needs::Nothing,
};

pub(crate) const NORM_BACKWARD: KernelDef = KernelDef {
    name: "norm_backward",
    template: wgsl!("shared/norm_backward"),
    bindings: &[
        bind("layer", LayerUniform),
        bind("o", ReadF32),
        bind("z", ReadF32),
        bind("norm", ReadF32),
        bind("rstd", ReadF32),
        bind("dout", ReadF32),
        bind("d_o", WriteF32),
        bind("dz", WriteF32),
        bind("dnorm_term", WriteF32),
    ],
    ..NORM_FORWARD
};

/// The `const`s of the q/k norms' backward.
fn qk_norm_backward_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    vec![("DK", dims.dk), ("DV", dims.dv), ("VEC", qk_norm_backward_threads(dims)), ("CONV_WINDOW", CONV_WINDOW)]
}

pub(crate) const QK_NORM_BACKWARD: KernelDef = KernelDef {
    name: "qk_norm_backward",
    template: wgsl!("shared/qk_norm_backward"),
    snippets: &[QK_ROWS, ROW_SUM, GATE_VALUES, TOKEN_SPAN, QK_GRADS_STORED],
    bindings: &[
        bind("layer", LayerUniform),
        bind("y", ReadF32),
        bind("dqk_hat_heads", ReadF32),
        bind("gates", ReadF32),
        bind("gate_grad_parts", ReadF32),
        bind("dy", WriteF32),
        bind("da", WriteF32),
        bind("db", WriteF32),
        bind("dlog_term", WriteF32),
    ],
    threads: qk_norm_backward_threads,
    // row_sum.wgsl's scratch and the partial rows' sums, a vec2 a thread.
    workgroup_floats: |dims| 6 * qk_norm_backward_threads(dims),
    constants: qk_norm_backward_constants,
    depends_on_dims: true,
    needs: Needs::Nothing,
};

pub(crate) const QK_NORM_CONV_BACKWARD: KernelDef = KernelDef {
    name: "qk_norm_conv_backward",
    snippets: &[SEQUENCES, TOKEN_SPAN, CONV_AT, QK_ROWS, ROW_SUM, GATE_VALUES, QK_GRADS_CONV],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("conv", ReadF32),
        bind("dqk_hat_heads", ReadF32),
        bind("gates", ReadF32),
        bind("gate_grad_parts", ReadF32),
        bind("dy", ReadF32),
        bind("dpre", WriteF32),
        bind("da", WriteF32),
        bind("db", WriteF32),
        bind("dlog_term", WriteF32),
    ],
    ..QK_NORM_BACKWARD
};

pub(crate) const CONV_BACKWARD_PRE: KernelDef = KernelDef {
    name: "conv_backward_pre",
    template: wgsl!("shared/conv_backward_pre"),
    snippets: &[SEQUENCES, CONV_TAP, CONV_RUNS, CONV_WINDOWS, CONV_PRE],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("conv", ReadF32),
        bind("dy", ReadF32),
        bind("dpre", WriteF32),
    ],
    ..CONV_FORWARD
};

pub(crate) const CONV_BACKWARD_INPUT: KernelDef = KernelDef {
    name: "conv_backward_input",
    template: wgsl!("shared/conv_backward_input"),
    snippets: &[SEQUENCES, CONV_RUNS, CONV_INPUT_GRAD],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("conv", ReadF32),
        bind("dpre", ReadF32),
        bind("dfinal_conv_state", ReadF32),
        bind("dqkv", WriteF32),
        bind("dconv_state", WriteF32),
    ],
    ..CONV_FORWARD
};

/// The four sums' shapes, which both column-sum kernels read to find their job's sum.
const SUM_SHAPES: [Binding; 4] = [
    bind("reduce_dconv", ReduceUniform),
    bind("reduce_dnorm", ReduceUniform),
    bind("reduce_da_log", ReduceUniform),
    bind("reduce_ddt_bias", ReduceUniform),
];

pub(crate) const COLUMN_SUMS_PARTIAL: KernelDef = KernelDef {
    name: "column_sums_partial",
    template: wgsl!("shared/column_sums_partial"),
    snippets: &[
        SEQUENCES,
        CONV_TAP,
        CONV_RUNS,
        CONV_WINDOWS,
        COLUMN_SUMS,
        DCONV_WINDOW,
        DCONV_PARTIAL,
        SUM_BLOCKS,
        PARTIAL_SUMS,
    ],
    bindings: &[
        bind("layer", LayerUniform),
        SUM_SHAPES[0],
        SUM_SHAPES[1],
        SUM_SHAPES[2],
        SUM_SHAPES[3],
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("dpre", ReadF32),
        bind("dnorm_term", ReadF32),
        bind("dlog_term", ReadF32),
        bind("da", ReadF32),
        bind("partial", WriteF32),
    ],
    threads: |_| COLUMNS,
    workgroup_floats: NO_WORKGROUP_MEMORY,
    constants: sums_constants,
    depends_on_dims: false,
    needs: Needs::Nothing,
};

pub(crate) const CONV_BACKWARD_INPUT_SUMS: KernelDef = KernelDef {
    name: "conv_backward_input_sums",
    template: wgsl!("shared/conv_backward_input_sums"),
    snippets: &[
        SEQUENCES,
        CONV_TAP,
        CONV_RUNS,
        CONV_WINDOWS,
        CONV_INPUT_GRAD,
        COLUMN_SUMS,
        DCONV_WINDOW,
        DCONV_PARTIAL,
        SUM_BLOCKS,
        PARTIAL_SUMS,
    ],
    bindings: &[
        bind("layer", LayerUniform),
        SUM_SHAPES[0],
        SUM_SHAPES[1],
        SUM_SHAPES[2],
        SUM_SHAPES[3],
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("conv", ReadF32),
        bind("dpre", ReadF32),
        bind("dfinal_conv_state", ReadF32),
        bind("dnorm_term", ReadF32),
        bind("dlog_term", ReadF32),
        bind("da", ReadF32),
        bind("partial", WriteF32),
        bind("dqkv", WriteF32),
        bind("dconv_state", WriteF32),
    ],
    threads: ELEMENT_THREADS,
    workgroup_floats: NO_WORKGROUP_MEMORY,
    constants: sums_constants,
    depends_on_dims: false,
    needs: Needs::Nothing,
};

pub(crate) const CONV_BACKWARD_INPUT_TOTALS: KernelDef = KernelDef {
    name: "conv_backward_input_totals",
    snippets: &[
        SEQUENCES,
        CONV_TAP,
        CONV_RUNS,
        CONV_WINDOWS,
        CONV_INPUT_GRAD,
        COLUMN_SUMS,
        DCONV_WINDOW,
        DCONV_PARTIAL,
        SUM_BLOCKS,
        SUM_TOTALS,
        COLUMN_TOTALS,
    ],
    bindings: &[
        bind("layer", LayerUniform),
        SUM_SHAPES[0],
        SUM_SHAPES[1],
        SUM_SHAPES[2],
        SUM_SHAPES[3],
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("conv", ReadF32),
        bind("dpre", ReadF32),
        bind("dfinal_conv_state", ReadF32),
        bind("dnorm_term", ReadF32),
        bind("dlog_term", ReadF32),
        bind("da", ReadF32),
        bind("dqkv", WriteF32),
        bind("dconv_state", WriteF32),
        bind("dconv", WriteF32),
        bind("dnorm", WriteF32),
        bind("da_log", WriteF32),
        bind("ddt_bias", WriteF32),
    ],
    // column_totals.wgsl's blocks' sums, a vec4 an invocation.
    workgroup_floats: |_| 4 * ELEMENTS,
    ..CONV_BACKWARD_INPUT_SUMS
};

pub(crate) const COLUMN_SUMS_FINISH: KernelDef = KernelDef {
    name: "column_sums_finish",
    template: wgsl!("shared/column_sums_finish"),
    snippets: &[COLUMN_SUMS, SUM_TOTALS],
    bindings: &[
        bind("layer", LayerUniform),
        SUM_SHAPES[0],
        SUM_SHAPES[1],
        SUM_SHAPES[2],
        SUM_SHAPES[3],
        bind("partial", ReadF32),
        bind("dconv", WriteF32),
        bind("dnorm", WriteF32),
        bind("da_log", WriteF32),
        bind("ddt_bias", WriteF32),
    ],
    ..COLUMN_SUMS_PARTIAL
};

pub(crate) const ADD_INTO: KernelDef = KernelDef {
    name: "add_into",
    template: wgsl!("shared/add_into"),
    snippets: &[],
    bindings: &[bind("part", ReadF32), bind("sum", WriteF32)],
    threads: ELEMENT_THREADS,
    workgroup_floats: NO_WORKGROUP_MEMORY,
    constants: elements_constants,
    depends_on_dims: false,
    needs: Needs::Nothing,
};
