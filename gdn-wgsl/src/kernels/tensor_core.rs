//! The chunked family on tensor cores (`templates/tensor_core/`): the f32 family's chunk algorithm
//! with f16 operands on 16 × 16 × 16 cooperative matrices and f32 accumulators, each chunk's
//! operands packed once in f16, eight subgroups of 32 a workgroup owning 16 × 16 output blocks
//! (`templates/tensor_core/tensor_core.wgsl`); and [`TensorCoreTiling`], how its kernels cut a head
//! into such blocks.

use super::chunked::{CHUNK_DECAYS, MAX_CHUNK};
use super::{
    CHUNK_GEOMETRY, CHUNK_VALUES, CHUNKS, COLUMN_JOBS, GATE_VALUES, KernelDef, Needs, QK_ROWS, SEQUENCES, SOLVE, Wgsl,
    bind, wgsl,
};
use crate::HeadDims;
use crate::kernels::BindingKind::{LayerUniform, ReadF16, ReadF32, ReadU32, WriteF16, WriteF32};
use crate::tiling::PORTABLE_WORKGROUP_BYTES;

/// Floats of workgroup memory `templates/tensor_core/tensor_core.wgsl` declares: the
/// largest-magnitude words and the chunk's record.
pub(crate) const TENSOR_CORE_FLOATS: u32 = 4 + TENSOR_CORE_RECORD;
/// Floats of a chunk's record (`templates/tensor_core/tensor_core.wgsl`'s RECORD).
pub const TENSOR_CORE_RECORD: u32 = 5 * MAX_CHUNK + 16;
/// Floats per chunk of the tensor-core backward's per-token gate terms
/// (`templates/tensor_core/tensor_core_sums.wgsl`'s GATE_TERMS).
pub const TENSOR_CORE_GATE_TERMS: u32 = 5 * MAX_CHUNK + 4;
/// Floats per chunk of the tensor-core backward's per-token key terms
/// (`templates/tensor_core/tensor_core_sums.wgsl`'s KEY_TERMS).
pub const TENSOR_CORE_KEY_TERMS: u32 = 3 * MAX_CHUNK + 4;
/// Floats of `templates/tensor_core/tensor_core_sums.wgsl`'s per-token sums and owner partials.
const TENSOR_CORE_SUMS_FLOATS: u32 = 5 * MAX_CHUNK + 8 * 16;
/// Subgroups of 32 that own output blocks in a tensor-core kernel (`OWNERS`): eight, which beat four
/// in the forward pass over chunks, where four needed many more registers an invocation
/// (BENCHMARKS.md, S1 on tensor cores).
const OWNERS: u32 = 8;
/// Floats of a tensor-core kernel's staging: one 16 × 16 block per owner.
pub(crate) const TENSOR_CORE_STAGE: u32 = OWNERS * 256;

/// How the tensor-core kernels of the chunked family cut a head into blocks
/// (`templates/tensor_core/`): the state columns of a workgroup of the passes over chunks, and how
/// many 16 × 16 blocks of a block row one subgroup computes at once in the products with dk or dv
/// columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TensorCoreTiling {
    /// State columns per workgroup of the passes over chunks (`CB`): a multiple of 16 that divides
    /// `dv`, at most 32 (so that one staging round of eight 16 × 16 blocks holds a 64-token chunk's
    /// share of U or dU), as wide as their workgroup memory allows within 32 KiB (the least the
    /// kernels are tested under: lavapipe offers no more) and four 16 × 16 accumulators for each of
    /// eight subgroups hold.
    pub state_columns: u32,
    /// Blocks per group across dk columns (`GK`): the largest divisor of dk / 16 up to 2 (two
    /// independent accumulators beat one and four, where four leave too few registers:
    /// BENCHMARKS.md, S1 on tensor cores).
    pub key_group: u32,
    /// Blocks per group across dv columns (`GV`), the output kernel's included (two beat one and
    /// four there too: BENCHMARKS.md, S1 on tensor cores).
    pub value_group: u32,
}

/// Bytes a tensor-core pass over chunks declares besides its tiles: tensor_core.wgsl's record and
/// words and the staging of one 16 × 16 f32 block per subgroup.
const TENSOR_CORE_FIXED_BYTES: u32 = 4 * (TENSOR_CORE_FLOATS + TENSOR_CORE_STAGE);

/// The largest divisor of `blocks` up to 2.
fn group(blocks: u32) -> u32 {
    if blocks.is_multiple_of(2) { 2 } else { 1 }
}

impl TensorCoreTiling {
    /// The tiling for heads of `dims` (both multiples of 16).
    pub fn new(dims: HeadDims) -> Self {
        let room = PORTABLE_WORKGROUP_BYTES - TENSOR_CORE_FIXED_BYTES;
        // the state and diag(λ) U of a 64-token chunk in f16; at most 32 accumulator blocks
        let state_columns = (1..=dims.dv / 16)
            .rev()
            .map(|n| 16 * n)
            .filter(|w| dims.dv.is_multiple_of(*w) && *w <= 32)
            .find(|w| (dims.dk + 64) * w * 2 <= room && (dims.dk / 16) * (w / 16) <= 32)
            .unwrap_or(16);
        Self { state_columns, key_group: group(dims.dk / 16), value_group: group(dims.dv / 16) }
    }
}

const TENSOR_CORE: Wgsl = wgsl!("tensor_core/tensor_core");
const TENSOR_CORE_STATE_BLOCKS: Wgsl = wgsl!("tensor_core/tensor_core_state_blocks");
const TENSOR_CORE_SUMS: Wgsl = wgsl!("tensor_core/tensor_core_sums");
const TENSOR_CORE_TERMS: Wgsl = wgsl!("tensor_core/tensor_core_terms");
const TENSOR_CORE_GRAD_ROWS: Wgsl = wgsl!("tensor_core/tensor_core_grad_rows");

/// The `const`s of every tensor-core kernel.
fn tensor_core_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    let tiling = TensorCoreTiling::new(dims);
    vec![
        ("DK", dims.dk),
        ("DV", dims.dv),
        ("CB", tiling.state_columns),
        ("GK", tiling.key_group),
        ("GV", tiling.value_group),
        ("OWNERS", OWNERS),
    ]
}

pub(crate) const TENSOR_CORE_PACK: KernelDef = KernelDef {
    name: "tensor_core_pack",
    template: wgsl!("tensor_core/tensor_core_pack"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, CHUNK_VALUES, TENSOR_CORE],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("record", WriteF32),
        bind("q_half", WriteF16),
        bind("k_half", WriteF16),
        bind("qd_half", WriteF16),
        bind("x_half", WriteF16),
        bind("y_half", WriteF16),
    ],
    threads: |_| 32 * OWNERS,
    workgroup_floats: |_| CHUNK_DECAYS + TENSOR_CORE_FLOATS,
    constants: tensor_core_constants,
    depends_on_dims: true,
    needs: Needs::TensorCores,
};

pub(crate) const TENSOR_CORE_PREPARE: KernelDef = KernelDef {
    name: "tensor_core_prepare",
    template: wgsl!("tensor_core/tensor_core_prepare"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, TENSOR_CORE, SOLVE],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("q_half", ReadF16),
        bind("k_half", ReadF16),
        bind("x_half", ReadF16),
        bind("y_half", ReadF16),
        bind("m_half", WriteF16),
        bind("km_half", WriteF16),
        bind("t_half", WriteF16),
        bind("p_half", WriteF16),
    ],
    // solve: its square and the 16 rows past it.
    workgroup_floats: |_| TENSOR_CORE_FLOATS + (MAX_CHUNK + 16) * MAX_CHUNK,
    ..TENSOR_CORE_PACK
};

/// Floats of the passes over chunks: the state (or its gradient) and diag(λ) U (or dU) in f16,
/// and the staging.
fn pass_floats(dims: HeadDims) -> u32 {
    TENSOR_CORE_FLOATS + (dims.dk + MAX_CHUNK) * TensorCoreTiling::new(dims).state_columns / 2 + TENSOR_CORE_STAGE
}

pub(crate) const TENSOR_CORE_STATE: KernelDef = KernelDef {
    name: "tensor_core_state",
    template: wgsl!("tensor_core/tensor_core_state"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COLUMN_JOBS, TENSOR_CORE, TENSOR_CORE_STATE_BLOCKS],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("h0", ReadF32),
        bind("k_half", ReadF16),
        bind("y_half", ReadF16),
        bind("t_half", ReadF16),
        bind("state_rows_half", ReadF16),
        bind("states", WriteF32),
        bind("states_half", WriteF16),
        bind("states_scale", WriteF32),
        bind("u_values", WriteF32),
        bind("u_half", WriteF16),
        bind("lu_half", WriteF16),
        bind("ht", WriteF32),
    ],
    workgroup_floats: pass_floats,
    ..TENSOR_CORE_PACK
};

pub(crate) const TENSOR_CORE_OUTPUT: KernelDef = KernelDef {
    name: "tensor_core_output",
    template: wgsl!("tensor_core/tensor_core_output"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, TENSOR_CORE],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("qd_half", ReadF16),
        bind("p_half", ReadF16),
        bind("s_half", ReadF16),
        bind("s_scale", ReadF32),
        bind("u_half", ReadF16),
        bind("o", WriteF32),
    ],
    // the staging of GV blocks an owner
    workgroup_floats: |dims| TENSOR_CORE_FLOATS + TENSOR_CORE_STAGE * TensorCoreTiling::new(dims).value_group,
    ..TENSOR_CORE_PACK
};

pub(crate) const TENSOR_CORE_BACKWARD_PACK: KernelDef = KernelDef {
    name: "tensor_core_backward_pack",
    template: wgsl!("tensor_core/tensor_core_backward_pack"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, TENSOR_CORE],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("p_half", ReadF16),
        bind("t_half", ReadF16),
        bind("x_half", ReadF16),
        bind("d_o", ReadF32),
        bind("do_half", WriteF16),
        bind("do1_half", WriteF16),
        bind("do_scale", WriteF32),
        bind("du_local", WriteF32),
        bind("w_half", WriteF16),
    ],
    // W¹'s staging, GK blocks an owner
    workgroup_floats: |dims| TENSOR_CORE_FLOATS + TENSOR_CORE_STAGE * TensorCoreTiling::new(dims).key_group,
    ..TENSOR_CORE_PACK
};

pub(crate) const TENSOR_CORE_STATE_BACKWARD: KernelDef = KernelDef {
    name: "tensor_core_state_backward",
    template: wgsl!("tensor_core/tensor_core_state_backward"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COLUMN_JOBS, TENSOR_CORE, TENSOR_CORE_STATE_BLOCKS],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("dht", ReadF32),
        bind("k_half", ReadF16),
        bind("qd_half", ReadF16),
        bind("w_half", ReadF16),
        bind("state_rows_half", ReadF16),
        bind("do_half", ReadF16),
        bind("do_scale", ReadF32),
        bind("du_local", ReadF32),
        bind("states", WriteF32),
        bind("states_half", WriteF16),
        bind("states_scale", WriteF32),
        bind("du_half", WriteF16),
        bind("du_scale", WriteF32),
        bind("dh0", WriteF32),
    ],
    workgroup_floats: pass_floats,
    ..TENSOR_CORE_PACK
};

/// Floats of the gradient kernels: the staging and tensor_core_sums.wgsl's per-token sums.
const GRAD_FLOATS: fn(HeadDims) -> u32 = |_| TENSOR_CORE_FLOATS + TENSOR_CORE_STAGE + TENSOR_CORE_SUMS_FLOATS;

pub(crate) const TENSOR_CORE_GRAD_VALUES: KernelDef = KernelDef {
    name: "tensor_core_grad_values",
    template: wgsl!("tensor_core/tensor_core_grad_values"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, TENSOR_CORE, TENSOR_CORE_TERMS, TENSOR_CORE_SUMS],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("y", ReadF32),
        bind("t_half", ReadF16),
        bind("m_half", ReadF16),
        bind("km_half", ReadF16),
        bind("p_half", ReadF16),
        bind("u_half", ReadF16),
        bind("do_half", ReadF16),
        bind("du_half", ReadF16),
        bind("du_scale", ReadF32),
        bind("do_scale", ReadF32),
        bind("u_values", ReadF32),
        bind("dy_half", WriteF16),
        bind("dqk_half", WriteF16),
        bind("h_half", WriteF16),
        bind("gate_terms", WriteF32),
        bind("dy", WriteF32),
    ],
    workgroup_floats: GRAD_FLOATS,
    ..TENSOR_CORE_PACK
};

pub(crate) const TENSOR_CORE_GRAD_QUERIES: KernelDef = KernelDef {
    name: "tensor_core_grad_queries",
    template: wgsl!("tensor_core/tensor_core_grad_queries"),
    snippets: &[
        SEQUENCES,
        QK_ROWS,
        CHUNK_GEOMETRY,
        TENSOR_CORE,
        TENSOR_CORE_TERMS,
        TENSOR_CORE_SUMS,
        TENSOR_CORE_GRAD_ROWS,
    ],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("q_half", ReadF16),
        bind("k_half", ReadF16),
        bind("do1_half", ReadF16),
        bind("dqk_half", ReadF16),
        bind("s_half", ReadF16),
        bind("s_scale", ReadF32),
        bind("do_scale", ReadF32),
        bind("gate_terms", ReadF32),
        bind("key_terms", WriteF32),
        bind("dqk_hat_heads", WriteF32),
    ],
    workgroup_floats: GRAD_FLOATS,
    ..TENSOR_CORE_PACK
};

pub(crate) const TENSOR_CORE_GRAD_KEYS: KernelDef = KernelDef {
    name: "tensor_core_grad_keys",
    template: wgsl!("tensor_core/tensor_core_grad_keys"),
    snippets: &[
        SEQUENCES,
        QK_ROWS,
        CHUNK_GEOMETRY,
        TENSOR_CORE,
        TENSOR_CORE_TERMS,
        TENSOR_CORE_SUMS,
        TENSOR_CORE_GRAD_ROWS,
    ],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("q_half", ReadF16),
        bind("k_half", ReadF16),
        bind("lu_half", ReadF16),
        bind("dy_half", ReadF16),
        bind("dqk_half", ReadF16),
        bind("h_half", ReadF16),
        bind("s_half", ReadF16),
        bind("ds_half", ReadF16),
        bind("s_scale", ReadF32),
        bind("ds_scale", ReadF32),
        bind("do_scale", ReadF32),
        bind("gate_terms", ReadF32),
        bind("ckpt", ReadF32),
        bind("dckpt", ReadF32),
        bind("key_terms", WriteF32),
        bind("dqk_hat_heads", WriteF32),
    ],
    workgroup_floats: GRAD_FLOATS,
    ..TENSOR_CORE_PACK
};

pub(crate) const TENSOR_CORE_GATE: KernelDef = KernelDef {
    name: "tensor_core_gate",
    template: wgsl!("tensor_core/tensor_core_gate"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, TENSOR_CORE, TENSOR_CORE_TERMS],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("gate_terms", ReadF32),
        bind("key_terms", ReadF32),
        bind("gate_grad_parts", WriteF32),
    ],
    // a thread a token of the chunk.
    threads: |_| MAX_CHUNK,
    // dγ per token (and tensor_core.wgsl's record, which it does not use).
    workgroup_floats: |_| TENSOR_CORE_FLOATS + MAX_CHUNK,
    ..TENSOR_CORE_PACK
};
