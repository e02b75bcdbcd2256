//! The two uniform blocks the kernels read, as Rust structs a host uploads with bytemuck and as
//! the WGSL structs the generator declares. A test checks that both agree, field by field.

use bytemuck::{Pod, Zeroable};

/// Sizes of one layer and batch, bound as `layer` by every kernel but the column sums.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct LayerUniform {
    /// Tokens of the batch (`B·T` or `Ttot`).
    pub tokens: u32,
    /// Sequences.
    pub seqs: u32,
    /// Key heads.
    pub nk: u32,
    /// Value heads.
    pub nv: u32,
    /// Value heads per key head.
    pub rep: u32,
    /// Conv taps.
    pub kk: u32,
    /// Channels of the raw projection, `2·nk·dk + nv·dv`.
    pub channels: u32,
    /// Steps between stored states: the recurrent family's checkpoint interval, the chunked
    /// family's chunk (it stores the state at every chunk start).
    pub ckpt_interval: u32,
    /// 1 when `h0` is given (else the state starts at zero and `dh0` is not written).
    pub has_h0: u32,
    /// 1 when `dhT` is given (else the backward starts from zero).
    pub has_dht: u32,
    /// ε of the gated RMSNorm.
    pub rms_eps: f32,
    /// Partial sums per (token, value head) of `dℓ` and `dβ` that the family's backward writes into
    /// `gate_grad_parts` and `qk_norm_backward` adds up.
    pub gate_parts: u32,
    /// 1 when a conv state `[seqs, kk − 1, C]` is given (else positions before a sequence's start
    /// read zero, and neither the final conv state nor `dconv_state` is written).
    pub has_conv_state: u32,
    /// The chunked family in f32: where its backward scratch starts in `chunk_work`, after every
    /// chunk's forward products (0 otherwise).
    pub chunk_bwd_base: u32,
    /// Where the `dℓ`/`dβ` partial sums start in the buffer bound as `gate_grad_parts`: after the
    /// forward products and the backward scratch in `chunk_work` for the chunked family in f32
    /// (which packs the three to fit 10 storage buffers per stage, what Chromium's SwiftShader offers), 0 otherwise.
    pub gate_parts_base: u32,
    /// Partial rows per (token, value head) of `dq̂` and of `dk̂` that the family's backward writes
    /// into `dqk_hat_heads` (one per column block of `recurrence_backward_columns`, 1 otherwise) and
    /// `qk_norm_backward` adds up.
    pub hat_parts: u32,
    /// 1 where the recurrent family stores its checkpoints a column at a time, `[DV, DK]` per
    /// (slot, value head): where its few-head kernels run forward and backward, whose warps each
    /// own a state column, so that a warp's stores and loads of it are contiguous. 0: row-major
    /// `[DK, DV]`, like `h0` and `hT`.
    pub ckpt_columns: u32,
}

/// Shape of one column sum of the backward's parameter gradients
/// (`templates/shared/column_sums.wgsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub struct ReduceUniform {
    /// Rows summed.
    pub rows: u32,
    /// Columns, each summed separately.
    pub cols: u32,
    /// Rows per partial sum.
    pub rows_per_block: u32,
    /// Partial sums per column, `ceil(rows / rows_per_block)`.
    pub blocks: u32,
    /// Where its partial sums start in the partial buffer (`[blocks, cols]` from there).
    pub partial_at: u32,
}

pub(crate) const LAYER_WGSL_NAME: &str = "Layer";
pub(crate) const REDUCE_WGSL_NAME: &str = "Reduce";

/// WGSL of [`LayerUniform`].
pub(crate) const LAYER_WGSL: &str = "struct Layer {
    tokens: u32,
    seqs: u32,
    nk: u32,
    nv: u32,
    rep: u32,
    kk: u32,
    channels: u32,
    ckpt_interval: u32,
    has_h0: u32,
    has_dht: u32,
    rms_eps: f32,
    gate_parts: u32,
    has_conv_state: u32,
    chunk_bwd_base: u32,
    gate_parts_base: u32,
    hat_parts: u32,
    ckpt_columns: u32,
}
";

/// WGSL of [`ReduceUniform`].
pub(crate) const REDUCE_WGSL: &str = "struct Reduce {
    rows: u32,
    cols: u32,
    rows_per_block: u32,
    blocks: u32,
    partial_at: u32,
}
";
