//! The chunked family: the WY form of the delta rule over chunks of `chunk` tokens
//! (the templates `chunk_*.wgsl` state each step). Forward: `chunk_prepare` computes everything of a chunk that does
//! not depend on the state, in parallel over chunks; `chunk_state` carries the state across chunks,
//! in parallel over (sequence, head, block of state columns), storing it at every chunk start and
//! writing hT; `chunk_output` computes every chunk's outputs from the state entering it, in parallel
//! over chunks again. Backward: `chunk_state_backward` carries the state gradient back across chunks;
//! `chunk_grad` computes every per-chunk gradient in parallel over chunks.

use crate::family::Geometry;
use crate::plan::{Plan, folded};
use crate::{Context, Result};
use gdn_wgsl::{CHUNK_COLUMNS, Kernel};

/// Words of the family's own buffers: the chunk-start states and their gradients, the per-chunk
/// products of the forward (`chunk_fwd`: M, QK, KK, T, W¹, Ũ, U) and the backward's scratch
/// (`chunk_bwd`: dU, dQK, dT, Z, dA ⊙ M⁻, dK_S, dW, dX¹, dY), and the dℓ/dβ of every token.
pub(crate) fn buffer_words(g: &Geometry) -> Vec<(&'static str, usize)> {
    let (config, c) = (g.config, g.family.state_interval());
    let chunk_heads = g.stored_states() * config.nv;
    let states = chunk_heads * config.state_size();
    vec![
        ("ckpt", states),
        ("dckpt", states),
        ("chunk_fwd", chunk_heads * (4 * c * c + c * (config.dk + 2 * config.dv))),
        ("chunk_bwd", chunk_heads * (4 * c * c + c * (3 * config.dk + 2 * config.dv))),
        ("gate_grad_parts", 2 * g.tokens() * config.nv),
    ]
}

/// Workgroups of the passes over chunks: (sequence, head, column block).
fn column_jobs(g: &Geometry) -> usize {
    g.sequences() * g.config.nv * g.config.dv.div_ceil(CHUNK_COLUMNS as usize)
}

/// The forward: prepare every chunk, the pass over chunks, then every chunk's outputs.
pub(crate) fn forward(ctx: &Context, g: &Geometry, plan: &mut Plan) -> Result<()> {
    let chunk_heads = g.stored_states() * g.config.nv;
    for (kernel, count) in
        [(Kernel::ChunkPrepare, chunk_heads), (Kernel::ChunkState, column_jobs(g)), (Kernel::ChunkOutput, chunk_heads)]
    {
        plan.push(ctx, kernel, g.variant(), folded(ctx, kernel.name(), count)?, &[])?;
    }
    Ok(())
}

/// The backward: the reverse pass over chunks, then every chunk's gradients.
pub(crate) fn backward(ctx: &Context, g: &Geometry, plan: &mut Plan) -> Result<()> {
    let chunk_heads = g.stored_states() * g.config.nv;
    for (kernel, count) in [(Kernel::ChunkStateBackward, column_jobs(g)), (Kernel::ChunkGrad, chunk_heads)] {
        plan.push(ctx, kernel, g.variant(), folded(ctx, kernel.name(), count)?, &[])?;
    }
    Ok(())
}
