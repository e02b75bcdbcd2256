//! The recurrent family (`templates/recurrent/`): the delta rule token by token, a head's state in
//! registers across a workgroup's lanes. Forward and backward each come in two layouts: one for
//! many heads (a workgroup per block of columns, or per head in the backward) and one for few heads
//! (a warp per state column, solved [`RECURRENT_CHUNK`] tokens at a time); the kernels that sum by
//! subgroup shuffles have portable twins that sum through workgroup memory.

use super::{
    Binding, GATE_VALUES, KernelDef, NO_WORKGROUP_MEMORY, Needs, QK_ROWS, ROW_LANES_SUBGROUP, ROW_LANES_WORKGROUP,
    SEQUENCES, Wgsl, bind, wgsl,
};
use crate::HeadDims;
use crate::kernels::BindingKind::{LayerUniform, ReadF32, ReadU32, WriteF32};
use crate::tiling::{LaneLayout, PORTABLE_WORKGROUP_BYTES, Tiling};

/// Tokens (steps) the few-heads recurrent forward and backward solve together
/// (`templates/recurrent/recurrence_forward_chunks.wgsl`, `recurrence_backward_columns.wgsl`: a
/// vec4's components; their sums are written for four).
pub const RECURRENT_CHUNK: u32 = 4;

/// Tokens the few-heads recurrent forward stages in workgroup memory at a time, a multiple of
/// [`RECURRENT_CHUNK`]: the most, up to 32, whose staged inputs leave the portable kernel's lane
/// partials room within [`PORTABLE_WORKGROUP_BYTES`]: 32 up to dk = 96, 28 at 128, 20 at 160, 12
/// at 192 and 256. Fewer barriers and longer prefetches paid where measured (BENCHMARKS.md, the
/// recurrent forward's stage at dk = 128 and 256): 12 tokens beat 8 at dk = 256, and 24 and 32
/// beat 16 at dk = 128; 28 is unmeasured.
fn recurrent_stage(dims: HeadDims) -> u32 {
    let threads = LaneLayout::recurrent_forward_chunks(dims).threads();
    (1..=32 / RECURRENT_CHUNK)
        .rev()
        .map(|quads| quads * RECURRENT_CHUNK)
        .find(|&stage| 4 * (recurrent_stage_floats(dims, stage) + 4 * threads) <= PORTABLE_WORKGROUP_BYTES)
        .unwrap_or(RECURRENT_CHUNK)
}

/// Floats of the few-heads recurrent forward's staged inputs for a stage of `stage` tokens
/// (`templates/recurrent/recurrence_forward_chunks.wgsl`): q̂ and k̂ of its rows, v of its columns,
/// each a row of quads padded to an odd count, and five values a token.
fn recurrent_stage_floats(dims: HeadDims, stage: u32) -> u32 {
    let layout = LaneLayout::recurrent_forward_chunks(dims);
    let quads = stage / RECURRENT_CHUNK;
    let stride = quads | 1;
    let rows = layout.rows_per_lane * layout.row_lanes;
    4 * stride * (2 * rows + layout.columns()) + 5 * 4 * quads
}

const STATE_TILE: Wgsl = wgsl!("recurrent/state_tile");
const RESIDUALS: Wgsl = wgsl!("recurrent/residuals");
const CHUNK_ROWS: Wgsl = wgsl!("recurrent/chunk_rows");
const CHUNK_LANES_SUBGROUP: Wgsl = wgsl!("recurrent/chunk_lanes_subgroup");
const CHUNK_LANES_WORKGROUP: Wgsl = wgsl!("recurrent/chunk_lanes_workgroup");
const STAGE_LOADERS_APART: Wgsl = wgsl!("recurrent/stage_loaders_apart");
const STAGE_LOADERS_SHARED: Wgsl = wgsl!("recurrent/stage_loaders_shared");

const RECURRENCE_FORWARD_BINDINGS: &[Binding] = &[
    bind("layer", LayerUniform),
    bind("index", ReadU32),
    bind("y", ReadF32),
    bind("qk_hat", ReadF32),
    bind("gates", ReadF32),
    bind("h0", ReadF32),
    bind("o", WriteF32),
    bind("ckpt", WriteF32),
    bind("ht", WriteF32),
];

/// The `const`s of the per-token recurrent forward.
fn forward_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    let layout = LaneLayout::recurrent_forward(dims);
    let mut constants = layout.constants(dims);
    constants.push(("CB", layout.columns()));
    constants
}

pub(crate) const RECURRENCE_FORWARD: KernelDef = KernelDef {
    name: "recurrence_forward",
    template: wgsl!("recurrent/recurrence_forward"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, ROW_LANES_SUBGROUP],
    bindings: RECURRENCE_FORWARD_BINDINGS,
    threads: |dims| LaneLayout::recurrent_forward(dims).threads(),
    workgroup_floats: NO_WORKGROUP_MEMORY,
    constants: forward_constants,
    depends_on_dims: true,
    needs: Needs::WideSubgroups,
};

pub(crate) const RECURRENCE_FORWARD_PORTABLE: KernelDef = KernelDef {
    name: "recurrence_forward_portable",
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, ROW_LANES_WORKGROUP],
    // the lane values.
    workgroup_floats: |dims| 4 * LaneLayout::recurrent_forward(dims).threads(),
    needs: Needs::Nothing,
    ..RECURRENCE_FORWARD
};

/// The `const`s of the few-heads recurrent forward with `threads` threads a workgroup.
fn forward_chunks_constants(dims: HeadDims, threads: u32) -> Vec<(&'static str, u32)> {
    let layout = LaneLayout::recurrent_forward_chunks(dims);
    let mut constants: Vec<_> = layout
        .constants(dims)
        .into_iter()
        .map(|(name, value)| (name, if name == "THREADS" { threads } else { value }))
        .collect();
    constants.extend([("CB", layout.columns()), ("STAGE", recurrent_stage(dims)), ("CHUNK", RECURRENT_CHUNK)]);
    constants
}

/// Floats of the few-heads recurrent forward's workgroup memory: the staged inputs, and the
/// portable kernel's lane partials (`portable` 1) or none.
fn forward_chunks_floats(dims: HeadDims, portable: u32) -> u32 {
    let sums = portable * 4 * LaneLayout::recurrent_forward_chunks(dims).threads();
    recurrent_stage_floats(dims, recurrent_stage(dims)) + sums
}

/// Threads of the few-heads recurrent forward on shuffles: its column groups and as many warps
/// again that load its stages (`templates/recurrent/stage_loaders_apart.wgsl`).
fn forward_chunks_threads(dims: HeadDims) -> u32 {
    2 * LaneLayout::recurrent_forward_chunks(dims).threads()
}

pub(crate) const RECURRENCE_FORWARD_CHUNKS: KernelDef = KernelDef {
    name: "recurrence_forward_chunks",
    template: wgsl!("recurrent/recurrence_forward_chunks"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_SUBGROUP, STAGE_LOADERS_APART],
    bindings: RECURRENCE_FORWARD_BINDINGS,
    threads: forward_chunks_threads,
    workgroup_floats: |dims| forward_chunks_floats(dims, 0),
    constants: |dims| forward_chunks_constants(dims, forward_chunks_threads(dims)),
    depends_on_dims: true,
    needs: Needs::WideSubgroups,
};

/// [`RECURRENCE_FORWARD_CHUNKS`]'s portable twin: its lanes both load and solve.
pub(crate) const RECURRENCE_FORWARD_CHUNKS_PORTABLE: KernelDef = KernelDef {
    name: "recurrence_forward_chunks_portable",
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_WORKGROUP, STAGE_LOADERS_SHARED],
    threads: |dims| LaneLayout::recurrent_forward_chunks(dims).threads(),
    workgroup_floats: |dims| forward_chunks_floats(dims, 1),
    constants: |dims| forward_chunks_constants(dims, LaneLayout::recurrent_forward_chunks(dims).threads()),
    needs: Needs::Nothing,
    ..RECURRENCE_FORWARD_CHUNKS
};

/// The `const`s of the per-head recurrent backward.
fn backward_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    let t = Tiling::backward(dims);
    vec![
        ("DK", dims.dk),
        ("DV", dims.dv),
        ("TX", t.tx),
        ("TY", t.ty),
        ("RX", t.rx),
        ("RY", t.ry),
        ("CB", t.columns()),
        ("RB", t.rows()),
    ]
}

pub(crate) const RECURRENCE_BACKWARD: KernelDef = KernelDef {
    name: "recurrence_backward",
    template: wgsl!("recurrent/recurrence_backward"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, STATE_TILE],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("d_o", ReadF32),
        bind("ckpt", ReadF32),
        bind("dht", ReadF32),
        bind("scratch", WriteF32),
        bind("dqk_hat_heads", WriteF32),
        bind("gate_grad_parts", WriteF32),
        bind("dy", WriteF32),
        bind("dh0", WriteF32),
    ],
    threads: |dims| Tiling::backward(dims).threads(),
    workgroup_floats: |dims| {
        let t = Tiling::backward(dims);
        t.ty * t.columns() + t.tx * t.rows()
    },
    constants: backward_constants,
    depends_on_dims: true,
    needs: Needs::Nothing,
};

/// The `const`s of the column-block recurrent backward.
fn backward_columns_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    let layout = LaneLayout::recurrent_backward_columns(dims);
    let mut constants = layout.constants(dims);
    constants.extend([("CB", layout.columns()), ("GROUPS", layout.groups), ("CHUNK", RECURRENT_CHUNK)]);
    constants
}

/// Floats of the column-block recurrent backward's workgroup memory: the groups' shares of a
/// chunk's dq̂, dk̂, dℓ and dβ, and the portable kernel's lane partials (`portable` 1) or none.
fn backward_columns_floats(dims: HeadDims, portable: u32) -> u32 {
    let layout = LaneLayout::recurrent_backward_columns(dims);
    2 * RECURRENT_CHUNK * layout.groups * (dims.dk + 1) + portable * 4 * layout.threads()
}

pub(crate) const RECURRENCE_BACKWARD_COLUMNS: KernelDef = KernelDef {
    name: "recurrence_backward_columns",
    template: wgsl!("recurrent/recurrence_backward_columns"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_SUBGROUP],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("d_o", ReadF32),
        bind("ckpt", ReadF32),
        bind("dht", ReadF32),
        bind("scratch", WriteF32),
        bind("dqk_hat_heads", WriteF32),
        bind("gate_grad_parts", WriteF32),
        bind("dy", WriteF32),
        bind("dh0", WriteF32),
    ],
    threads: |dims| LaneLayout::recurrent_backward_columns(dims).threads(),
    workgroup_floats: |dims| backward_columns_floats(dims, 0),
    constants: backward_columns_constants,
    depends_on_dims: true,
    needs: Needs::WideSubgroups,
};

pub(crate) const RECURRENCE_BACKWARD_COLUMNS_PORTABLE: KernelDef = KernelDef {
    name: "recurrence_backward_columns_portable",
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_WORKGROUP],
    workgroup_floats: |dims| backward_columns_floats(dims, 1),
    needs: Needs::Nothing,
    ..RECURRENCE_BACKWARD_COLUMNS
};
