//! The chunked family: the WY form of the delta rule over chunks of `chunk` tokens, in one of two
//! sets of kernels (the templates state each step).
//!
//! In f32 (`chunk_*.wgsl`): forward, `chunk_prepare` computes everything of a chunk that does not
//! depend on the state, in parallel over chunks; `chunk_state` carries the state across chunks, in
//! parallel over (sequence, head, block of state columns), storing it at every chunk start and
//! writing hT; `chunk_output` computes every chunk's outputs from the state entering it. Backward:
//! `chunk_state_backward` carries the state gradient back across chunks; `chunk_grad` computes
//! every per-chunk gradient in parallel over chunks.
//!
//! On tensor cores (`tensor_core_*.wgsl`, where the precision asks for them and the heads suit
//! them): the same steps on 16 × 16 cooperative matrices, their operands packed in f16 first
//! (`tensor_core_pack`), so that the products read them straight from storage.

use super::buffer::{BufferId, BufferSpec, Work};
use super::geometry::Geometry;
use super::{PlanError, Stages};
use crate::{
    CHUNK_COLUMNS, Kernel, MAX_CHUNK, TENSOR_CORE_GATE_TERMS, TENSOR_CORE_KEY_TERMS, TENSOR_CORE_RECORD,
    TensorCoreTiling,
};

/// The family's own buffers.
/// - Both: the chunk-start states and their gradients, and the dℓ/dβ of every token.
/// - f32: one work buffer ([`work_regions`]): the per-chunk products of the forward (M, QK, KK, T,
///   W¹, Ũ, U), the backward's scratch (dU, dQK, dT, Z, dA ⊙ M⁻, dK_S, dW, dX¹, dY) and the dℓ/dβ.
/// - Tensor cores: every chunk's record (β, its decays and span sums), the packed f16 operands (q̂,
///   k̂ per key head; d¹-scaled q̂, X¹, Y, M, KK ⊙ M⁻, T, P, U and diag(λ) U per value head, the
///   chunk-start states with their scales) and U in f32; the backward's f16 W¹, dO, dS, dU, dY, dQK
///   and H with their scales, Pᵀ dO, and the per-token gate terms.
pub(crate) fn buffers(g: &Geometry) -> Vec<BufferSpec> {
    let (config, c) = (g.config, g.family.state_interval());
    let chunk_heads = g.stored_states() * config.nv;
    let states = chunk_heads * config.state_size();
    let mut specs = vec![BufferSpec::f32(Work::Ckpt, states), BufferSpec::f32(Work::Dckpt, states)];
    if !g.on_tensor_cores() {
        let regions = work_regions(g);
        // A forward-only plan holds the forward products only.
        let words = if g.options.backward { regions.gate_parts + gate_part_words(g) } else { regions.backward };
        specs.push(BufferSpec::f32(Work::ChunkWork, words));
        return specs;
    }
    specs.push(BufferSpec::f32(Work::GateGradParts, gate_part_words(g)));
    let key_rows = g.stored_states() * config.nk * c;
    let rows = chunk_heads * c;
    let square = rows * MAX_CHUNK as usize;
    let column_blocks = chunk_heads * config.dv / TensorCoreTiling::new(g.dims).state_columns as usize;
    let (keys, values) = (rows * config.dk, rows * config.dv);
    specs.extend([
        BufferSpec::f32(Work::Record, chunk_heads * TENSOR_CORE_RECORD as usize),
        BufferSpec::f16(Work::QHalf, key_rows * config.dk),
        BufferSpec::f16(Work::KHalf, key_rows * config.dk),
        BufferSpec::f16(Work::QdHalf, keys),
        BufferSpec::f16(Work::XHalf, keys),
        BufferSpec::f16(Work::WHalf, keys),
        BufferSpec::f16(Work::YHalf, values),
        BufferSpec::f16(Work::UHalf, values),
        BufferSpec::f16(Work::LuHalf, values),
        BufferSpec::f16(Work::MHalf, square),
        BufferSpec::f16(Work::KmHalf, square),
        BufferSpec::f16(Work::THalf, square),
        BufferSpec::f16(Work::PHalf, square),
        BufferSpec::f16(Work::SHalf, states),
        BufferSpec::f32(Work::SScale, column_blocks),
        BufferSpec::f32(Work::UValues, values),
        // the backward's
        BufferSpec::f16(Work::DoHalf, values),
        BufferSpec::f16(Work::Do1Half, values),
        BufferSpec::f32(Work::DoScale, chunk_heads),
        BufferSpec::f32(Work::DuLocal, values),
        BufferSpec::f16(Work::DsHalf, states),
        BufferSpec::f32(Work::DsScale, column_blocks),
        BufferSpec::f16(Work::DuHalf, values),
        BufferSpec::f32(Work::DuScale, column_blocks),
        BufferSpec::f16(Work::DyHalf, values),
        BufferSpec::f16(Work::DqkHalf, square),
        BufferSpec::f16(Work::HHalf, square),
        BufferSpec::f32(Work::GateTerms, chunk_heads * TENSOR_CORE_GATE_TERMS as usize),
        BufferSpec::f32(Work::KeyTerms, chunk_heads * TENSOR_CORE_KEY_TERMS as usize),
    ]);
    specs
}

/// dℓ and dβ of every (token, value head).
fn gate_part_words(g: &Geometry) -> usize {
    2 * g.tokens() * g.config.nv
}

/// Where the f32 kernels' regions start in `chunk_work` (in words): every chunk's forward products
/// from 0, then every chunk's backward scratch, then the dℓ/dβ partial sums (the layer uniform's
/// `chunk_bwd_base` and `gate_parts_base`).
pub(crate) struct WorkRegions {
    pub backward: usize,
    pub gate_parts: usize,
}

pub(crate) fn work_regions(g: &Geometry) -> WorkRegions {
    let (config, c) = (g.config, g.family.state_interval());
    let chunk_heads = g.stored_states() * config.nv;
    let backward = chunk_heads * (4 * c * c + c * (config.dk + 2 * config.dv));
    WorkRegions { backward, gate_parts: backward + chunk_heads * (4 * c * c + c * (3 * config.dk + 2 * config.dv)) }
}

/// The buffer the family's backward writes the dℓ/dβ partial sums into.
pub(crate) fn gate_parts_buffer(g: &Geometry) -> BufferId {
    BufferId::Work(if g.on_tensor_cores() { Work::GateGradParts } else { Work::ChunkWork })
}

/// Workgroups of the passes over chunks: (sequence, head, column block of `columns`).
fn column_jobs(g: &Geometry, columns: u32) -> usize {
    g.sequences() * g.config.nv * g.config.dv.div_ceil(columns as usize)
}

/// The buffers the tensor-core passes over chunks keep their states in, and multiply them with
/// (`templates/tensor_core/tensor_core_state_blocks.wgsl`'s roles): the states and X¹, or their
/// gradients and K.
fn roles(kernel: Kernel) -> Vec<(&'static str, BufferId)> {
    let roles = match kernel {
        Kernel::TensorCoreState => [Work::Ckpt, Work::SHalf, Work::SScale, Work::XHalf],
        Kernel::TensorCoreStateBackward => [Work::Dckpt, Work::DsHalf, Work::DsScale, Work::KHalf],
        _ => return Vec::new(),
    };
    ["states", "states_half", "states_scale", "state_rows_half"].into_iter().zip(roles.map(BufferId::Work)).collect()
}

/// Appends each kernel over its count of workgroups.
fn push_all(stages: &mut Stages, kernels: &[(Kernel, usize)]) -> Result<(), PlanError> {
    kernels.iter().try_for_each(|&(kernel, count)| stages.push_with(kernel, count, &roles(kernel)))
}

/// The forward: prepare every chunk, the pass over chunks, then every chunk's outputs.
pub(crate) fn forward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    let chunk_heads = g.stored_states() * g.config.nv;
    if g.on_tensor_cores() {
        let state_jobs = column_jobs(g, TensorCoreTiling::new(g.dims).state_columns);
        return push_all(
            stages,
            &[
                (Kernel::TensorCorePack, chunk_heads),
                (Kernel::TensorCorePrepare, chunk_heads),
                (Kernel::TensorCoreState, state_jobs),
                (Kernel::TensorCoreOutput, chunk_heads),
            ],
        );
    }
    let state_jobs = column_jobs(g, CHUNK_COLUMNS);
    push_all(
        stages,
        &[(Kernel::ChunkPrepare, chunk_heads), (Kernel::ChunkState, state_jobs), (Kernel::ChunkOutput, chunk_heads)],
    )
}

/// The backward: the reverse pass over chunks, then every chunk's gradients.
pub(crate) fn backward(stages: &mut Stages) -> Result<(), PlanError> {
    let g = stages.geometry;
    let chunk_heads = g.stored_states() * g.config.nv;
    if g.on_tensor_cores() {
        let state_jobs = column_jobs(g, TensorCoreTiling::new(g.dims).state_columns);
        return push_all(
            stages,
            &[
                (Kernel::TensorCoreBackwardPack, chunk_heads),
                (Kernel::TensorCoreStateBackward, state_jobs),
                (Kernel::TensorCoreGradValues, chunk_heads),
                (Kernel::TensorCoreGradQueries, chunk_heads),
                (Kernel::TensorCoreGradKeys, chunk_heads),
                (Kernel::TensorCoreGate, chunk_heads),
            ],
        );
    }
    let state_jobs = column_jobs(g, CHUNK_COLUMNS);
    push_all(stages, &[(Kernel::ChunkStateBackward, state_jobs), (Kernel::ChunkGrad, chunk_heads)])
}
