//! The chunked family in f32 (`templates/chunked/`): the delta rule solved a chunk of up to
//! [`MAX_CHUNK`] tokens at a time in the WY form, its matrix products tiled through workgroup
//! memory (`templates/chunked/matmul.wgsl`: 16 × 16 threads, a 4 × 4 block of a 64 × 64 output
//! tile each): a prepare pass per chunk, a pass over chunks for the states, the outputs per chunk,
//! and the same three in reverse for the gradients.

use super::{
    CHUNK_GEOMETRY, CHUNK_VALUES, CHUNKS, COLUMN_JOBS, GATE_VALUES, KernelDef, Needs, QK_ROWS, SEQUENCES, SOLVE, Wgsl,
    bind, wgsl,
};
use crate::HeadDims;
use crate::kernels::BindingKind::{LayerUniform, ReadF32, ReadU32, WriteF32};

/// Threads per workgroup of the chunked family's kernels (`templates/chunked/matmul.wgsl`: 16 × 16
/// threads, a 4 × 4 block of a 64 × 64 output tile each; the tensor-core kernels: eight subgroups
/// of 32 that own 16 × 16 output blocks, `templates/tensor_core/tensor_core.wgsl`).
pub const MATMUL_THREADS: u32 = 256;
/// The chunked family's largest chunk: its per-chunk vectors and the triangular solve are sized by
/// it.
pub const MAX_CHUNK: u32 = 64;
/// State columns per workgroup of the chunked family's passes over chunks.
pub const CHUNK_COLUMNS: u32 = 64;

/// Floats of workgroup memory every chunked kernel declares for the chunk's five decay vectors.
pub(crate) const CHUNK_DECAYS: u32 = 5 * MAX_CHUNK;
/// Floats of workgroup memory of the f32 matmul: two staged operands, 16 rows of 17 vec4 each.
const MATMUL_F32_FLOATS: u32 = 2 * 16 * 17 * 4;

const MATMUL_STAGING: Wgsl = wgsl!("chunked/matmul_staging");
const MATMUL: Wgsl = wgsl!("chunked/matmul");
const CHUNK_GRADS: Wgsl = wgsl!("chunked/chunk_grads");

/// The `const`s of the kernels per chunk.
fn chunk_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    vec![("DK", dims.dk), ("DV", dims.dv)]
}

/// The `const`s of the passes over chunks.
fn pass_constants(dims: HeadDims) -> Vec<(&'static str, u32)> {
    vec![("DK", dims.dk), ("DV", dims.dv), ("CB", CHUNK_COLUMNS)]
}

pub(crate) const CHUNK_PREPARE: KernelDef = KernelDef {
    name: "chunk_prepare",
    template: wgsl!("chunked/chunk_prepare"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, CHUNK_VALUES, SOLVE, MATMUL_STAGING, MATMUL],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("chunk_work", WriteF32),
    ],
    threads: |_| MATMUL_THREADS,
    // the decays, solve's square and the 16 rows past it, and the matmul's staging.
    workgroup_floats: |_| CHUNK_DECAYS + (MAX_CHUNK + 16) * MAX_CHUNK + MATMUL_F32_FLOATS,
    constants: chunk_constants,
    depends_on_dims: true,
    needs: Needs::Nothing,
};

pub(crate) const CHUNK_STATE: KernelDef = KernelDef {
    name: "chunk_state",
    template: wgsl!("chunked/chunk_state"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, COLUMN_JOBS, MATMUL_STAGING, MATMUL],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("h0", ReadF32),
        bind("chunk_work", WriteF32),
        bind("ckpt", WriteF32),
        bind("ht", WriteF32),
    ],
    threads: |_| MATMUL_THREADS,
    workgroup_floats: |_| CHUNK_DECAYS + MATMUL_F32_FLOATS,
    constants: pass_constants,
    depends_on_dims: true,
    needs: Needs::Nothing,
};

pub(crate) const CHUNK_OUTPUT: KernelDef = KernelDef {
    name: "chunk_output",
    template: wgsl!("chunked/chunk_output"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, MATMUL_STAGING, MATMUL],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("chunk_work", ReadF32),
        bind("ckpt", ReadF32),
        bind("o", WriteF32),
    ],
    constants: chunk_constants,
    ..CHUNK_STATE
};

pub(crate) const CHUNK_STATE_BACKWARD: KernelDef = KernelDef {
    name: "chunk_state_backward",
    template: wgsl!("chunked/chunk_state_backward"),
    snippets: &[
        SEQUENCES,
        QK_ROWS,
        GATE_VALUES,
        CHUNK_GEOMETRY,
        CHUNKS,
        COLUMN_JOBS,
        CHUNK_GRADS,
        MATMUL_STAGING,
        MATMUL,
    ],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("d_o", ReadF32),
        bind("dht", ReadF32),
        bind("chunk_work", WriteF32),
        bind("dckpt", WriteF32),
        bind("dh0", WriteF32),
    ],
    ..CHUNK_STATE
};

pub(crate) const CHUNK_GRAD: KernelDef = KernelDef {
    name: "chunk_grad",
    template: wgsl!("chunked/chunk_grad"),
    snippets: &[
        SEQUENCES,
        QK_ROWS,
        GATE_VALUES,
        CHUNK_GEOMETRY,
        CHUNKS,
        CHUNK_VALUES,
        CHUNK_GRADS,
        MATMUL_STAGING,
        MATMUL,
    ],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("d_o", ReadF32),
        bind("ckpt", ReadF32),
        bind("dckpt", ReadF32),
        bind("chunk_work", WriteF32),
        bind("dqk_hat_heads", WriteF32),
        bind("dy", WriteF32),
    ],
    threads: |_| MATMUL_THREADS,
    workgroup_floats: |_| CHUNK_DECAYS + 4 * MAX_CHUNK + MATMUL_THREADS + MATMUL_F32_FLOATS,
    constants: chunk_constants,
    depends_on_dims: true,
    needs: Needs::Nothing,
};
