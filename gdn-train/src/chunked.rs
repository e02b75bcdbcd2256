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
//! On tensor cores (`coop_*.wgsl`, where the precision asks for them and the heads suit them): the
//! same steps on 16 × 16 cooperative matrices, their operands packed in f16 first (`coop_pack`), so
//! that the products read them straight from storage.

use crate::family::Geometry;
use crate::plan::{Plan, folded};
use crate::{Context, Result};
use gdn_wgsl::{CHUNK_COLUMNS, COOP_GATE_TERMS, COOP_KEY_TERMS, COOP_RECORD, CoopTiling, Kernel, MAX_CHUNK};

/// Words of the family's own buffers.
/// - Both: the chunk-start states and their gradients, and the dℓ/dβ of every token.
/// - f32: the per-chunk products of the forward (`chunk_fwd`: M, QK, KK, T, W¹, Ũ, U) and the
///   backward's scratch (`chunk_bwd`: dU, dQK, dT, Z, dA ⊙ M⁻, dK_S, dW, dX¹, dY).
/// - Tensor cores: every chunk's record (β, its decays and span sums), the packed f16 operands (q̂,
///   k̂ per key head; d¹-scaled q̂, X¹, Y, W¹, M, KK ⊙ M⁻, T, P, U and diag(λ) U per value head, the
///   chunk-start states with their scales) and Ũ, U in f32; the backward's f16 dO, dS, dU, dY, dQK
///   and H with their scales, Pᵀ dO, and the per-token gate terms.
pub(crate) fn buffer_words(g: &Geometry) -> Vec<(&'static str, usize)> {
    let (config, c) = (g.config, g.family.state_interval());
    let chunk_heads = g.stored_states() * config.nv;
    let states = chunk_heads * config.state_size();
    let mut words = vec![("ckpt", states), ("dckpt", states), ("gate_grad_parts", 2 * g.tokens() * config.nv)];
    if g.on_tensor_cores() {
        let halves = |n: usize| n.div_ceil(2);
        let key_rows = g.stored_states() * config.nk * c;
        let rows = chunk_heads * c;
        let square = rows * MAX_CHUNK as usize;
        let column_blocks = chunk_heads * config.dv / CoopTiling::new(g.dims).state_columns as usize;
        words.extend([
            ("record", chunk_heads * COOP_RECORD as usize),
            ("q_half", halves(key_rows * config.dk)),
            ("k_half", halves(key_rows * config.dk)),
            ("qd_half", halves(rows * config.dk)),
            ("x_half", halves(rows * config.dk)),
            ("w_half", halves(rows * config.dk)),
            ("y_half", halves(rows * config.dv)),
            ("u_half", halves(rows * config.dv)),
            ("lu_half", halves(rows * config.dv)),
            ("m_half", halves(square)),
            ("km_half", halves(square)),
            ("t_half", halves(square)),
            ("p_half", halves(square)),
            ("s_half", halves(states)),
            ("s_scale", column_blocks),
            ("u_tilde", rows * config.dv),
            ("u_values", rows * config.dv),
            // the backward's
            ("do_half", halves(rows * config.dv)),
            ("do1_half", halves(rows * config.dv)),
            ("do_scale", chunk_heads),
            ("du_local", rows * config.dv),
            ("ds_half", halves(states)),
            ("ds_scale", column_blocks),
            ("du_half", halves(rows * config.dv)),
            ("du_scale", column_blocks),
            ("dy_half", halves(rows * config.dv)),
            ("dqk_half", halves(square)),
            ("h_half", halves(square)),
            ("gate_terms", chunk_heads * COOP_GATE_TERMS as usize),
            ("key_terms", chunk_heads * COOP_KEY_TERMS as usize),
        ]);
    } else {
        words.extend([
            ("chunk_fwd", chunk_heads * (4 * c * c + c * (config.dk + 2 * config.dv))),
            ("chunk_bwd", chunk_heads * (4 * c * c + c * (3 * config.dk + 2 * config.dv))),
        ]);
    }
    words
}

/// Workgroups of the passes over chunks: (sequence, head, column block of `columns`).
fn column_jobs(g: &Geometry, columns: u32) -> usize {
    g.sequences() * g.config.nv * g.config.dv.div_ceil(columns as usize)
}

/// Appends each kernel over its count of workgroups.
fn push_all(ctx: &Context, g: &Geometry, plan: &mut Plan, kernels: &[(Kernel, usize)]) -> Result<()> {
    for &(kernel, count) in kernels {
        plan.push(ctx, kernel, g.dims, folded(ctx, kernel.name(), count)?, roles(kernel))?;
    }
    Ok(())
}

/// The tape buffers the tensor-core passes over chunks keep their states in, and multiply them with
/// (`templates/coop_state_blocks.wgsl`'s roles): the states and W¹, or their gradients and K.
fn roles(kernel: Kernel) -> &'static [(&'static str, &'static str)] {
    match kernel {
        Kernel::CoopState => {
            &[("states", "ckpt"), ("states_half", "s_half"), ("states_scale", "s_scale"), ("state_rows_half", "w_half")]
        }
        Kernel::CoopStateBackward => &[
            ("states", "dckpt"),
            ("states_half", "ds_half"),
            ("states_scale", "ds_scale"),
            ("state_rows_half", "k_half"),
        ],
        _ => &[],
    }
}

/// The forward: prepare every chunk, the pass over chunks, then every chunk's outputs.
pub(crate) fn forward(ctx: &Context, g: &Geometry, plan: &mut Plan) -> Result<()> {
    let chunk_heads = g.stored_states() * g.config.nv;
    if g.on_tensor_cores() {
        let state_jobs = column_jobs(g, CoopTiling::new(g.dims).state_columns);
        return push_all(
            ctx,
            g,
            plan,
            &[
                (Kernel::CoopPack, chunk_heads),
                (Kernel::CoopPrepare, chunk_heads),
                (Kernel::CoopState, state_jobs),
                (Kernel::CoopOutput, chunk_heads),
            ],
        );
    }
    let state_jobs = column_jobs(g, CHUNK_COLUMNS);
    push_all(
        ctx,
        g,
        plan,
        &[(Kernel::ChunkPrepare, chunk_heads), (Kernel::ChunkState, state_jobs), (Kernel::ChunkOutput, chunk_heads)],
    )
}

/// The backward: the reverse pass over chunks, then every chunk's gradients.
pub(crate) fn backward(ctx: &Context, g: &Geometry, plan: &mut Plan) -> Result<()> {
    let chunk_heads = g.stored_states() * g.config.nv;
    if g.on_tensor_cores() {
        let state_jobs = column_jobs(g, CoopTiling::new(g.dims).state_columns);
        return push_all(
            ctx,
            g,
            plan,
            &[
                (Kernel::CoopBackwardPack, chunk_heads),
                (Kernel::CoopStateBackward, state_jobs),
                (Kernel::CoopGradValues, chunk_heads),
                (Kernel::CoopGradQueries, chunk_heads),
                (Kernel::CoopGradKeys, chunk_heads),
                (Kernel::CoopGate, chunk_heads),
            ],
        );
    }
    let state_jobs = column_jobs(g, CHUNK_COLUMNS);
    push_all(ctx, g, plan, &[(Kernel::ChunkStateBackward, state_jobs), (Kernel::ChunkGrad, chunk_heads)])
}
