//! The catalogue of kernels: for each, its template, the snippets it includes, its bindings and
//! its workgroup shape. The bindings listed here are the only declaration of a kernel's interface:
//! the generator writes the WGSL `var` declarations from them, and a host builds its bind group
//! layouts from them, so the two cannot drift.

use crate::tiling::{CoopTiling, LaneLayout, PORTABLE_WORKGROUP_BYTES, Tiling};
use crate::{HeadDims, Precision, uniforms};

/// What a binding holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindingKind {
    /// The `Layer` uniform ([`crate::LayerUniform`]).
    LayerUniform,
    /// The `Reduce` uniform ([`crate::ReduceUniform`]).
    ReduceUniform,
    /// A read-only `array<u32>`.
    ReadU32,
    /// A read-only `array<f32>`.
    ReadF32,
    /// A read-write `array<f32>`.
    WriteF32,
    /// A read-write `array<vec4<f32>>`: f32 data whose length is a multiple of four, read and
    /// written four at a time.
    WriteVec4F32,
    /// A read-write `array<u32>` (half-precision storage: two halves to a word).
    WriteU32,
    /// A read-only `array<f16>` (the tensor-core kernels' packed operands).
    ReadF16,
    /// A read-write `array<f16>`.
    WriteF16,
    /// A read-write `array<atomic<u32>>` (counters that workgroups of one dispatch share).
    Counters,
}

impl BindingKind {
    /// Whether it is a uniform block (not a storage buffer).
    pub fn is_uniform(self) -> bool {
        match self {
            BindingKind::LayerUniform | BindingKind::ReduceUniform => true,
            BindingKind::ReadU32
            | BindingKind::ReadF32
            | BindingKind::WriteF32
            | BindingKind::WriteVec4F32
            | BindingKind::WriteU32
            | BindingKind::ReadF16
            | BindingKind::WriteF16
            | BindingKind::Counters => false,
        }
    }

    /// Whether the kernel writes it (a read-write storage buffer).
    pub fn writes(self) -> bool {
        matches!(
            self,
            BindingKind::WriteF32
                | BindingKind::WriteVec4F32
                | BindingKind::WriteU32
                | BindingKind::WriteF16
                | BindingKind::Counters
        )
    }
}

/// One binding of group 0; its slot is its position in [`Kernel::bindings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Binding {
    /// The WGSL variable, and the role a host binds a buffer to.
    pub name: &'static str,
    /// Its type and access.
    pub kind: BindingKind,
}

const fn bind(name: &'static str, kind: BindingKind) -> Binding {
    Binding { name, kind }
}

use BindingKind::{
    Counters, LayerUniform, ReadF16, ReadF32, ReadU32, ReduceUniform, WriteF16, WriteF32, WriteU32, WriteVec4F32,
};

/// Threads per workgroup of the element-wise kernels.
pub const ELEMENTS: u32 = 256;
/// Tokens one invocation of the conv kernels walks (`templates/conv_runs.wgsl`) where the batch
/// has runs enough to fill the GPU.
pub const CONV_RUN: u32 = 16;
/// Workgroups of runs of [`CONV_RUN`] tokens below which the conv kernels take one token an
/// invocation instead: a run's tokens are loaded one after another, so short batches (S4's 32
/// workgroups of runs: 14 µs on the H200, 6 µs a token an invocation) wait sixteen load latencies
/// where one would do.
pub const CONV_RUNS_TO_FILL: u32 = 64;
/// Neighbouring tokens the conv kernels keep in registers: kernels for at most this many taps read
/// each raw value once.
pub const CONV_WINDOW: u32 = 4;
/// Columns per workgroup of the column sums.
pub const COLUMNS: u32 = 64;
// `Kernel::ConvBackwardInputSums` runs ELEMENTS / COLUMNS column-sum jobs in each of its workgroups.
const _: () = assert!(ELEMENTS.is_multiple_of(COLUMNS));
/// Units (columns, or dconv's channels) per workgroup of the parameter sums' totals in one pass
/// (`templates/column_totals.wgsl`): each workgroup of [`ELEMENTS`] invocations takes this many
/// units by up to ELEMENTS / TOTAL_UNITS blocks of rows.
pub const TOTAL_UNITS: u32 = 16;
const _: () = assert!(ELEMENTS.is_multiple_of(TOTAL_UNITS));
/// Threads per workgroup of the gated RMSNorm's kernels (a head's `dv` elements), and the fewest of
/// the q/k norms' forward (which takes dk's next power of two where that is more).
pub const VEC: u32 = 64;
/// Fewest threads per workgroup of the q/k norms' backward (`templates/qk_norm_backward.wgsl`, its
/// `VEC`), which takes dk where that is more ([`qk_norm_backward_threads`]).
const QK_NORM_BACKWARD_THREADS: u32 = 128;

/// Threads per workgroup of the q/k norms' forward (`templates/qk_norm_gates_forward.wgsl`, its
/// `VEC`): [`VEC`], or dk's next power of two where that is more (row_sum.wgsl halves its
/// threads), so that a thread holds one element of q and of k (H100, S4:
/// `conv_qk_norm_gates_products_forward` 10–11 µs on 128 threads at dk = 128, 12 on 64).
fn qk_norm_forward_threads(dims: HeadDims) -> u32 {
    VEC.max(dims.dk.next_power_of_two())
}

/// Threads per workgroup of the q/k norms' backward: [`QK_NORM_BACKWARD_THREADS`], or dk's next
/// power of two where that is more, so that a thread holds one element of q and of k at most, and
/// each element's partial rows (the family's backward writes one per column block) are summed by
/// `threads / dk` threads, their loads in flight together. H100, S4 at dk = 128: 13–14 µs on 128
/// threads, 16 on 256, 23 on 64 (four rounds of loads, each waited for).
fn qk_norm_backward_threads(dims: HeadDims) -> u32 {
    QK_NORM_BACKWARD_THREADS.max(dims.dk.next_power_of_two())
}

/// Threads per workgroup of the chunked family's kernels (`templates/matmul.wgsl`: 16 × 16 threads,
/// a 4 × 4 block of a 64 × 64 output tile each; the tensor-core kernels: eight subgroups of 32 that
/// own 16 × 16 output blocks, `templates/coop.wgsl`).
pub const MATMUL_THREADS: u32 = 256;
/// The chunked family's largest chunk: its per-chunk vectors and the triangular solve are sized by it.
pub const MAX_CHUNK: u32 = 64;
/// State columns per workgroup of the chunked family's passes over chunks.
pub const CHUNK_COLUMNS: u32 = 64;
/// Invocations of a block of interleaved column groups (`crate::LaneLayout`): the shuffle kernels
/// need subgroups at least this wide.
pub const LANE_BLOCK: u32 = 32;
/// Tokens (steps) the few-heads recurrent forward and backward solve together
/// (`templates/recurrence_forward_chunks.wgsl`, `recurrence_backward_columns.wgsl`: a vec4's
/// components; their sums are written for four).
pub const RECURRENT_CHUNK: u32 = 4;
/// The most tokens per sequence one decode step takes (speculative decoding's drafts).
pub const MAX_DECODE_TOKENS: u32 = 8;

/// Tokens the few-heads recurrent forward stages in workgroup memory at a time, a multiple of
/// [`RECURRENT_CHUNK`]: the most, up to 32, whose staged inputs leave the portable kernel's lane
/// partials room within [`PORTABLE_WORKGROUP_BYTES`]: 32 up to dk = 96, 28 at 128, 20 at 160, 12
/// at 192 and 256. On the H200 (BENCHMARKS.md, fourteenth and fifteenth sessions) fewer barriers
/// and longer prefetches paid: at dk = 256 12 tokens ran the forward 4 µs faster than 8 (0.057 →
/// 0.053 ms); at dk = 128, against 16, 24 ran it 1 µs faster at interval 32 (none at 4) and 32
/// (38 KB, over the bound) 2 µs; 28 is unmeasured.
fn recurrent_stage(dims: HeadDims) -> u32 {
    let threads = LaneLayout::recurrent_forward_chunks(dims).threads();
    (1..=32 / RECURRENT_CHUNK)
        .rev()
        .map(|quads| quads * RECURRENT_CHUNK)
        .find(|&stage| 4 * (recurrent_stage_floats(dims, stage) + 4 * threads) <= PORTABLE_WORKGROUP_BYTES)
        .unwrap_or(RECURRENT_CHUNK)
}

/// Floats of the few-heads recurrent forward's staged inputs for a stage of `stage` tokens
/// (`templates/recurrence_forward_chunks.wgsl`): q̂ and k̂ of its rows, v of its columns, each a
/// row of quads padded to an odd count, and five values a token.
fn recurrent_stage_floats(dims: HeadDims, stage: u32) -> u32 {
    let layout = LaneLayout::recurrent_forward_chunks(dims);
    let quads = stage / RECURRENT_CHUNK;
    let stride = quads | 1;
    let rows = layout.rows_per_lane * layout.row_lanes;
    4 * stride * (2 * rows + layout.columns()) + 5 * 4 * quads
}

/// Every kernel: the layer's shared ones, the recurrent family's (`Recurrence*`) and the chunked
/// family's, in f32 (`Chunk*`) and on tensor cores (`Coop*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kernel {
    /// Causal conv + SiLU of the raw projection.
    ConvForward,
    /// L2 norms of q and k, and the decay and write gates (one dispatch).
    QkNormGatesForward,
    /// [`Kernel::QkNormGatesForward`] that also writes each k̂'s products with the three k̂ before
    /// it, which the chunk-solved recurrences read instead of summing them over the rows.
    QkNormGatesProductsForward,
    /// [`Kernel::ConvForward`] and [`Kernel::QkNormGatesProductsForward`] in one dispatch: each
    /// (token, key head) computes the conv of its q, k and value channels from the raw projection,
    /// its taps in one round of loads. It binds 13 storage buffers, so the plan takes it only where
    /// the device allows as many, and only for kk ≤ [`CONV_WINDOW`].
    ConvQkNormGatesProductsForward,
    /// The delta rule, forward, with checkpoints; its column sums are subgroup shuffles: it needs
    /// wgpu's `SUBGROUP` with subgroups of at least [`LANE_BLOCK`] invocations.
    RecurrenceForward,
    /// [`Kernel::RecurrenceForward`] with its column sums through workgroup memory, for devices
    /// without subgroups that wide.
    RecurrenceForwardPortable,
    /// The delta rule, forward, with checkpoints, for batches of few heads: solved
    /// [`RECURRENT_CHUNK`] tokens at a time, one state column a warp, its inputs staged in
    /// workgroup memory by warps of their own; its sums are subgroup shuffles: it needs wgpu's
    /// `SUBGROUP` with subgroups of at least [`LANE_BLOCK`] invocations.
    RecurrenceForwardChunks,
    /// [`Kernel::RecurrenceForwardChunks`] with its sums through workgroup memory (each lane both
    /// loads and solves).
    RecurrenceForwardChunksPortable,
    /// Gated RMSNorm.
    NormForward,
    /// Gated RMSNorm backward.
    NormBackward,
    /// The delta rule, backward: one workgroup per (sequence, value head).
    RecurrenceBackward,
    /// The delta rule, backward, for batches of few heads: one workgroup per (sequence, value head,
    /// block of columns), one state column a warp, its reverse sweep solved [`RECURRENT_CHUNK`]
    /// steps at a time, each workgroup writing its block's partial sums of dq̂, dk̂, dℓ and dβ; its
    /// sums are subgroup shuffles: it needs wgpu's `SUBGROUP` with subgroups of at least
    /// [`LANE_BLOCK`] invocations.
    RecurrenceBackwardColumns,
    /// [`Kernel::RecurrenceBackwardColumns`] with its sums through workgroup memory.
    RecurrenceBackwardColumnsPortable,
    /// L2 norms backward, summing the value heads of each key head, and the gates' backward (one
    /// dispatch).
    QkNormBackward,
    /// [`Kernel::QkNormBackward`] and [`Kernel::ConvBackwardPre`] in one dispatch: each (token,
    /// key head) recomputes the conv's pre-activation of its channels and writes their `dpre`.
    /// Taken where [`Kernel::ConvQkNormGatesProductsForward`] is (13 storage buffers).
    QkNormConvBackward,
    /// `dpre = dy·silu'(pre)`.
    ConvBackwardPre,
    /// The conv's input gradient.
    ConvBackwardInput,
    /// Partial column sums of every parameter gradient (dconv's, and those of the backward's
    /// per-element terms: dnorm's, da_log's, ddt_bias's), all in one dispatch.
    ColumnSumsPartial,
    /// [`Kernel::ConvBackwardInput`] and [`Kernel::ColumnSumsPartial`] in one dispatch (neither
    /// reads what the other writes). It binds 12 storage buffers, so the plan takes it only where
    /// the device allows as many.
    ConvBackwardInputSums,
    /// [`Kernel::ConvBackwardInput`] and every parameter sum's totals in one pass, in one dispatch:
    /// for short batches (each sum's rows in at most ELEMENTS / [`TOTAL_UNITS`] blocks), the
    /// backward's last. It binds 15 storage buffers, so the plan takes it only where the device
    /// allows as many.
    ConvBackwardInputTotals,
    /// Every parameter sum's totals from its partial sums, in one dispatch.
    ColumnSumsFinish,
    /// Chunked family: the state-independent part of every chunk (decays, Q Kᵀ, K Kᵀ, T, W¹, Ũ).
    ChunkPrepare,
    /// Chunked family: the pass over chunks (chunk-start states, U, hT).
    ChunkState,
    /// Chunked family: every chunk's outputs from the state entering it.
    ChunkOutput,
    /// Chunked family: the reverse pass over chunks (state gradients, dU, dh0).
    ChunkStateBackward,
    /// Chunked family: every per-chunk gradient (dq̂, dk̂, dv, dℓ, dβ).
    ChunkGrad,
    /// Chunked family on tensor cores: every chunk's operands in f16, packed chunk-major.
    CoopPack,
    /// Chunked family on tensor cores: the state-independent part of every chunk (K Kᵀ, T, W¹, Ũ).
    CoopPrepare,
    /// Chunked family on tensor cores: the pass over chunks (chunk-start states, U, hT).
    CoopState,
    /// Chunked family on tensor cores: every chunk's outputs from the state entering it.
    CoopOutput,
    /// Chunked family on tensor cores: every chunk's dO in f16, and Pᵀ dO.
    CoopBackwardPack,
    /// Chunked family on tensor cores: the reverse pass over chunks (state gradients, dU, dh0).
    CoopStateBackward,
    /// Chunked family on tensor cores: dY, dv and the gradients of every chunk's square matrices.
    CoopGradValues,
    /// Chunked family on tensor cores: dq̂ of every chunk.
    CoopGradQueries,
    /// Chunked family on tensor cores: dk̂ of every chunk.
    CoopGradKeys,
    /// Chunked family on tensor cores: dℓ and dβ of every chunk.
    CoopGate,
    /// Inference, a step of a few tokens for a batch of sequences, the whole forward in one
    /// dispatch: one workgroup per (sequence, value head), reading and updating the recurrent states
    /// and conv windows in place in a pool, addressed by slot. Its row sums are subgroup shuffles:
    /// it needs wgpu's `SUBGROUP` with subgroups of at least [`LANE_BLOCK`] invocations.
    DecodeStep,
    /// [`Kernel::DecodeStep`] with its row sums through workgroup memory, for devices without
    /// subgroups.
    DecodeStepPortable,
    /// Half-precision storage: a bf16 tensor widened to f32 before the pass that reads it.
    WidenBf16,
    /// Half-precision storage: an f16 tensor widened to f32 before the pass that reads it.
    WidenF16,
    /// Half-precision storage: an f32 result rounded to bf16 after the pass that writes it.
    NarrowBf16,
    /// Half-precision storage: an f32 result rounded to f16 after the pass that writes it.
    NarrowF16,
    /// One tensor added into another: a windowed tape's parameter gradients, summed over its
    /// windows on the device.
    AddInto,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 43] = [
        Kernel::ConvForward,
        Kernel::QkNormGatesForward,
        Kernel::QkNormGatesProductsForward,
        Kernel::ConvQkNormGatesProductsForward,
        Kernel::RecurrenceForward,
        Kernel::RecurrenceForwardPortable,
        Kernel::RecurrenceForwardChunks,
        Kernel::RecurrenceForwardChunksPortable,
        Kernel::NormForward,
        Kernel::NormBackward,
        Kernel::RecurrenceBackward,
        Kernel::RecurrenceBackwardColumns,
        Kernel::RecurrenceBackwardColumnsPortable,
        Kernel::QkNormBackward,
        Kernel::QkNormConvBackward,
        Kernel::ConvBackwardPre,
        Kernel::ConvBackwardInput,
        Kernel::ColumnSumsPartial,
        Kernel::ConvBackwardInputSums,
        Kernel::ConvBackwardInputTotals,
        Kernel::ColumnSumsFinish,
        Kernel::ChunkPrepare,
        Kernel::ChunkState,
        Kernel::ChunkOutput,
        Kernel::ChunkStateBackward,
        Kernel::ChunkGrad,
        Kernel::CoopPack,
        Kernel::CoopPrepare,
        Kernel::CoopState,
        Kernel::CoopOutput,
        Kernel::CoopBackwardPack,
        Kernel::CoopStateBackward,
        Kernel::CoopGradValues,
        Kernel::CoopGradQueries,
        Kernel::CoopGradKeys,
        Kernel::CoopGate,
        Kernel::DecodeStep,
        Kernel::DecodeStepPortable,
        Kernel::WidenBf16,
        Kernel::WidenF16,
        Kernel::NarrowBf16,
        Kernel::NarrowF16,
        Kernel::AddInto,
    ];

    /// The template's file name without extension, e.g. `recurrence_backward`.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Its template's file name without extension: its own name, but where kernels share a
    /// template and differ by a snippet (`widen`, `narrow`, `decode_step`).
    pub fn template_file(self) -> &'static str {
        match self {
            Kernel::WidenBf16 | Kernel::WidenF16 => "widen",
            Kernel::NarrowBf16 | Kernel::NarrowF16 => "narrow",
            Kernel::DecodeStepPortable => "decode_step",
            Kernel::QkNormGatesProductsForward | Kernel::ConvQkNormGatesProductsForward => "qk_norm_gates_forward",
            Kernel::QkNormConvBackward => "qk_norm_backward",
            Kernel::ConvBackwardInputTotals => "conv_backward_input_sums",
            Kernel::RecurrenceForwardPortable => "recurrence_forward",
            Kernel::RecurrenceForwardChunksPortable => "recurrence_forward_chunks",
            Kernel::RecurrenceBackwardColumnsPortable => "recurrence_backward_columns",
            _ => self.name(),
        }
    }

    /// Whether it sums over lanes by subgroup shuffles, needing wgpu's `SUBGROUP` with subgroups of
    /// at least [`LANE_BLOCK`] invocations; each such kernel has a
    /// portable twin that sums through workgroup memory.
    pub fn needs_wide_subgroups(self) -> bool {
        matches!(
            self,
            Kernel::DecodeStep
                | Kernel::RecurrenceForward
                | Kernel::RecurrenceForwardChunks
                | Kernel::RecurrenceBackwardColumns
        )
    }

    /// The bindings of group 0, slot by slot.
    pub fn bindings(self) -> &'static [Binding] {
        self.spec().bindings
    }

    /// Storage buffers it binds (what the device's `max_storage_buffers_per_shader_stage` must
    /// allow).
    pub fn storage_buffers(self) -> u32 {
        self.bindings().iter().filter(|b| !b.kind.is_uniform()).count() as u32
    }

    /// Whether the kernel's source depends on the head dims; the others are generated once.
    pub fn depends_on_dims(self) -> bool {
        !matches!(
            self,
            Kernel::ConvForward
                | Kernel::ConvBackwardPre
                | Kernel::ConvBackwardInput
                | Kernel::ColumnSumsPartial
                | Kernel::ConvBackwardInputSums
                | Kernel::ConvBackwardInputTotals
                | Kernel::ColumnSumsFinish
                | Kernel::WidenBf16
                | Kernel::WidenF16
                | Kernel::NarrowBf16
                | Kernel::NarrowF16
                | Kernel::AddInto
        )
    }

    /// The precision the kernel computes its products in: the `Coop*` kernels on tensor cores,
    /// every other in f32.
    pub fn precision(self) -> Precision {
        if self.on_tensor_cores() { Precision::TensorCore } else { Precision::F32 }
    }

    fn on_tensor_cores(self) -> bool {
        matches!(
            self,
            Kernel::CoopPack
                | Kernel::CoopPrepare
                | Kernel::CoopState
                | Kernel::CoopOutput
                | Kernel::CoopBackwardPack
                | Kernel::CoopStateBackward
                | Kernel::CoopGradValues
                | Kernel::CoopGradQueries
                | Kernel::CoopGradKeys
                | Kernel::CoopGate
        )
    }

    /// Whether the kernel is generated for heads of `dims`: the tensor-core kernels only where
    /// [`Precision::suits`] them (16 × 16 blocks tile the head dims), every other for every pair of
    /// [`crate::SUPPORTED_SIZES`].
    pub fn generated_for(self, dims: HeadDims) -> bool {
        self.precision().suits(dims)
    }

    /// Threads per workgroup.
    pub fn workgroup_size(self, dims: HeadDims) -> u32 {
        match self {
            Kernel::ConvForward
            | Kernel::ConvBackwardPre
            | Kernel::ConvBackwardInput
            | Kernel::ConvBackwardInputSums
            | Kernel::ConvBackwardInputTotals
            | Kernel::WidenBf16
            | Kernel::WidenF16
            | Kernel::NarrowBf16
            | Kernel::NarrowF16
            | Kernel::AddInto => ELEMENTS,
            Kernel::ColumnSumsPartial | Kernel::ColumnSumsFinish => COLUMNS,
            Kernel::NormForward | Kernel::NormBackward => VEC,
            Kernel::QkNormGatesForward
            | Kernel::QkNormGatesProductsForward
            | Kernel::ConvQkNormGatesProductsForward => qk_norm_forward_threads(dims),
            Kernel::QkNormBackward | Kernel::QkNormConvBackward => qk_norm_backward_threads(dims),
            Kernel::RecurrenceForward | Kernel::RecurrenceForwardPortable => {
                LaneLayout::recurrent_forward(dims).threads()
            }
            // The shuffle kernel's column groups and as many warps again that load its stages
            // (templates/stage_loaders_apart.wgsl); the portable one's lanes do both.
            Kernel::RecurrenceForwardChunks => 2 * LaneLayout::recurrent_forward_chunks(dims).threads(),
            Kernel::RecurrenceForwardChunksPortable => LaneLayout::recurrent_forward_chunks(dims).threads(),
            Kernel::RecurrenceBackwardColumns | Kernel::RecurrenceBackwardColumnsPortable => {
                LaneLayout::recurrent_backward_columns(dims).threads()
            }
            Kernel::RecurrenceBackward => Tiling::backward(dims).threads(),
            Kernel::DecodeStep | Kernel::DecodeStepPortable => LaneLayout::decode(dims).threads(),
            Kernel::ChunkPrepare
            | Kernel::ChunkState
            | Kernel::ChunkOutput
            | Kernel::ChunkStateBackward
            | Kernel::ChunkGrad
            | Kernel::CoopPack
            | Kernel::CoopPrepare
            | Kernel::CoopState
            | Kernel::CoopOutput
            | Kernel::CoopBackwardPack
            | Kernel::CoopStateBackward
            | Kernel::CoopGradValues
            | Kernel::CoopGradQueries
            | Kernel::CoopGradKeys => MATMUL_THREADS,
            Kernel::CoopGate => MAX_CHUNK,
        }
    }

    /// Bytes of workgroup memory the kernel declares.
    pub fn workgroup_bytes(self, dims: HeadDims) -> u32 {
        let tiling = CoopTiling::new(dims);
        let floats = match self {
            Kernel::NormForward | Kernel::NormBackward => 4 * VEC,
            Kernel::QkNormGatesForward
            | Kernel::QkNormGatesProductsForward
            | Kernel::ConvQkNormGatesProductsForward => 4 * qk_norm_forward_threads(dims),
            // row_sum.wgsl's scratch and the partial rows' sums, a vec2 a thread.
            Kernel::QkNormBackward | Kernel::QkNormConvBackward => 6 * qk_norm_backward_threads(dims),
            // the portable kernel's lane values.
            Kernel::RecurrenceForward => 0,
            Kernel::RecurrenceForwardPortable => 4 * LaneLayout::recurrent_forward(dims).threads(),
            // the groups' shares of a chunk's dq̂, dk̂, dℓ and dβ; the portable kernel's lane partials.
            Kernel::RecurrenceBackwardColumns | Kernel::RecurrenceBackwardColumnsPortable => {
                let layout = LaneLayout::recurrent_backward_columns(dims);
                let portable = self == Kernel::RecurrenceBackwardColumnsPortable;
                let sums = if portable { 4 * layout.threads() } else { 0 };
                2 * RECURRENT_CHUNK * layout.groups * (dims.dk + 1) + sums
            }
            // the staged inputs; the portable kernel's lane partials.
            Kernel::RecurrenceForwardChunks | Kernel::RecurrenceForwardChunksPortable => {
                let layout = LaneLayout::recurrent_forward_chunks(dims);
                let portable = self == Kernel::RecurrenceForwardChunksPortable;
                let sums = if portable { 4 * layout.threads() } else { 0 };
                recurrent_stage_floats(dims, recurrent_stage(dims)) + sums
            }
            // column_totals.wgsl's blocks' sums, a vec4 an invocation.
            Kernel::ConvBackwardInputTotals => 4 * ELEMENTS,
            Kernel::RecurrenceBackward => {
                let t = Tiling::backward(dims);
                t.ty * t.columns() + t.tx * t.rows()
            }
            Kernel::ChunkPrepare => CHUNK_DECAYS + MAX_CHUNK * MAX_CHUNK + MATMUL_F32_FLOATS,
            Kernel::ChunkState | Kernel::ChunkOutput | Kernel::ChunkStateBackward => CHUNK_DECAYS + MATMUL_F32_FLOATS,
            Kernel::ChunkGrad => CHUNK_DECAYS + 4 * MAX_CHUNK + MATMUL_THREADS + MATMUL_F32_FLOATS,
            Kernel::CoopPack => CHUNK_DECAYS + COOP_FLOATS,
            // solve, and T in f16.
            Kernel::CoopPrepare => COOP_FLOATS + MAX_CHUNK * MAX_CHUNK + MAX_CHUNK * MAX_CHUNK / 2,
            // the state (or its gradient) and diag(λ) U (or dU) in f16, the staging.
            Kernel::CoopState | Kernel::CoopStateBackward => {
                COOP_FLOATS + (dims.dk + MAX_CHUNK) * tiling.state_columns / 2 + COOP_STAGE
            }
            Kernel::CoopOutput => COOP_FLOATS + COOP_STAGE,
            Kernel::CoopBackwardPack => COOP_FLOATS,
            // the staging and coop_sums.wgsl's per-token sums.
            Kernel::CoopGradValues | Kernel::CoopGradQueries | Kernel::CoopGradKeys => {
                COOP_FLOATS + COOP_STAGE + COOP_SUMS_FLOATS
            }
            // dγ per token (and coop.wgsl's record, which it does not use).
            Kernel::CoopGate => COOP_FLOATS + MAX_CHUNK,
            // decode_step: a token's conv outputs (q, k, v); by token parity the RMSNorm factors,
            // the raw o and the groups' sums of squares; the arrival flag; the portable kernel's
            // lane values.
            Kernel::DecodeStep | Kernel::DecodeStepPortable => {
                let layout = LaneLayout::decode(dims);
                let portable = if self == Kernel::DecodeStepPortable { 4 * layout.threads() } else { 0 };
                2 * dims.dk + dims.dv + 4 * dims.dv + 2 * layout.groups + 1 + portable
            }
            _ => 0,
        };
        4 * floats
    }

    /// The `const` declarations the template needs, as (name, value).
    pub(crate) fn constants(self, dims: HeadDims) -> Vec<(&'static str, u32)> {
        let tiled = |t: Tiling| {
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
        };
        match self {
            Kernel::ConvForward | Kernel::ConvBackwardPre | Kernel::ConvBackwardInput => {
                vec![
                    ("ELEMENTS", ELEMENTS),
                    ("CONV_RUN", CONV_RUN),
                    ("CONV_RUNS_TO_FILL", CONV_RUNS_TO_FILL),
                    ("CONV_WINDOW", CONV_WINDOW),
                ]
            }
            Kernel::WidenBf16 | Kernel::WidenF16 | Kernel::NarrowBf16 | Kernel::NarrowF16 | Kernel::AddInto => {
                vec![("ELEMENTS", ELEMENTS)]
            }
            Kernel::ColumnSumsPartial
            | Kernel::ConvBackwardInputSums
            | Kernel::ConvBackwardInputTotals
            | Kernel::ColumnSumsFinish => {
                vec![
                    ("COLUMNS", COLUMNS),
                    ("TOTAL_UNITS", TOTAL_UNITS),
                    ("ELEMENTS", ELEMENTS),
                    ("CONV_RUN", CONV_RUN),
                    ("CONV_RUNS_TO_FILL", CONV_RUNS_TO_FILL),
                    ("CONV_WINDOW", CONV_WINDOW),
                ]
            }
            Kernel::QkNormBackward | Kernel::QkNormConvBackward => {
                vec![
                    ("DK", dims.dk),
                    ("DV", dims.dv),
                    ("VEC", qk_norm_backward_threads(dims)),
                    ("CONV_WINDOW", CONV_WINDOW),
                ]
            }
            Kernel::QkNormGatesForward
            | Kernel::QkNormGatesProductsForward
            | Kernel::ConvQkNormGatesProductsForward => {
                let products = u32::from(self != Kernel::QkNormGatesForward);
                vec![
                    ("DK", dims.dk),
                    ("DV", dims.dv),
                    ("VEC", qk_norm_forward_threads(dims)),
                    ("KEY_PRODUCTS", products),
                    ("CONV_WINDOW", CONV_WINDOW),
                ]
            }
            Kernel::NormForward | Kernel::NormBackward => vec![("DV", dims.dv), ("VEC", VEC)],
            Kernel::RecurrenceBackwardColumns | Kernel::RecurrenceBackwardColumnsPortable => {
                let layout = LaneLayout::recurrent_backward_columns(dims);
                let mut constants = layout.constants(dims);
                constants.extend([("CB", layout.columns()), ("GROUPS", layout.groups), ("CHUNK", RECURRENT_CHUNK)]);
                constants
            }
            Kernel::RecurrenceForward | Kernel::RecurrenceForwardPortable => {
                let layout = LaneLayout::recurrent_forward(dims);
                let mut constants = layout.constants(dims);
                constants.push(("CB", layout.columns()));
                constants
            }
            Kernel::RecurrenceForwardChunks | Kernel::RecurrenceForwardChunksPortable => {
                let layout = LaneLayout::recurrent_forward_chunks(dims);
                let threads = self.workgroup_size(dims);
                let mut constants: Vec<_> = layout
                    .constants(dims)
                    .into_iter()
                    .map(|(name, value)| (name, if name == "THREADS" { threads } else { value }))
                    .collect();
                constants.extend([
                    ("CB", layout.columns()),
                    ("STAGE", recurrent_stage(dims)),
                    ("CHUNK", RECURRENT_CHUNK),
                ]);
                constants
            }
            Kernel::RecurrenceBackward => tiled(Tiling::backward(dims)),
            Kernel::ChunkPrepare | Kernel::ChunkOutput | Kernel::ChunkGrad => vec![("DK", dims.dk), ("DV", dims.dv)],
            Kernel::ChunkState | Kernel::ChunkStateBackward => {
                vec![("DK", dims.dk), ("DV", dims.dv), ("CB", CHUNK_COLUMNS)]
            }
            Kernel::CoopPack
            | Kernel::CoopPrepare
            | Kernel::CoopState
            | Kernel::CoopOutput
            | Kernel::CoopBackwardPack
            | Kernel::CoopStateBackward
            | Kernel::CoopGradValues
            | Kernel::CoopGradQueries
            | Kernel::CoopGradKeys
            | Kernel::CoopGate => {
                let tiling = CoopTiling::new(dims);
                vec![
                    ("DK", dims.dk),
                    ("DV", dims.dv),
                    ("CB", tiling.state_columns),
                    ("GK", tiling.key_group),
                    ("GV", if self == Kernel::CoopOutput { tiling.output_group } else { tiling.value_group }),
                ]
            }
            Kernel::DecodeStep | Kernel::DecodeStepPortable => {
                let layout = LaneLayout::decode(dims);
                let mut constants = layout.constants(dims);
                constants.extend([("GROUPS", layout.groups), ("CONV_WINDOW", CONV_WINDOW)]);
                constants
            }
        }
    }

    /// The template and the snippets it includes, in order.
    pub(crate) fn sources(self) -> (&'static str, Vec<(&'static str, &'static str)>) {
        let spec = self.spec();
        let mut snippets = vec![("math", MATH)];
        snippets.extend(spec.snippets.iter().copied());
        (spec.template, snippets)
    }

    fn spec(self) -> &'static Spec {
        match self {
            Kernel::ConvForward => &CONV_FORWARD,
            Kernel::QkNormGatesForward => &QK_NORM_GATES_FORWARD,
            Kernel::QkNormGatesProductsForward => &QK_NORM_GATES_PRODUCTS_FORWARD,
            Kernel::ConvQkNormGatesProductsForward => &CONV_QK_NORM_GATES_PRODUCTS_FORWARD,
            Kernel::WidenBf16 => &WIDEN_BF16,
            Kernel::WidenF16 => &WIDEN_F16,
            Kernel::NarrowBf16 => &NARROW_BF16,
            Kernel::NarrowF16 => &NARROW_F16,
            Kernel::AddInto => &ADD_INTO,
            Kernel::RecurrenceForward => &RECURRENCE_FORWARD,
            Kernel::RecurrenceForwardPortable => &RECURRENCE_FORWARD_PORTABLE,
            Kernel::RecurrenceForwardChunks => &RECURRENCE_FORWARD_CHUNKS,
            Kernel::RecurrenceForwardChunksPortable => &RECURRENCE_FORWARD_CHUNKS_PORTABLE,
            Kernel::NormForward => &NORM_FORWARD,
            Kernel::NormBackward => &NORM_BACKWARD,
            Kernel::RecurrenceBackward => &RECURRENCE_BACKWARD,
            Kernel::RecurrenceBackwardColumns => &RECURRENCE_BACKWARD_COLUMNS,
            Kernel::RecurrenceBackwardColumnsPortable => &RECURRENCE_BACKWARD_COLUMNS_PORTABLE,
            Kernel::QkNormBackward => &QK_NORM_BACKWARD,
            Kernel::QkNormConvBackward => &QK_NORM_CONV_BACKWARD,
            Kernel::ConvBackwardPre => &CONV_BACKWARD_PRE,
            Kernel::ConvBackwardInput => &CONV_BACKWARD_INPUT,
            Kernel::ColumnSumsPartial => &COLUMN_SUMS_PARTIAL,
            Kernel::ConvBackwardInputSums => &CONV_BACKWARD_INPUT_SUMS,
            Kernel::ConvBackwardInputTotals => &CONV_BACKWARD_INPUT_TOTALS,
            Kernel::ColumnSumsFinish => &COLUMN_SUMS_FINISH,
            Kernel::ChunkPrepare => &CHUNK_PREPARE,
            Kernel::ChunkState => &CHUNK_STATE,
            Kernel::ChunkOutput => &CHUNK_OUTPUT,
            Kernel::ChunkStateBackward => &CHUNK_STATE_BACKWARD,
            Kernel::ChunkGrad => &CHUNK_GRAD,
            Kernel::CoopPack => &COOP_PACK,
            Kernel::CoopPrepare => &COOP_PREPARE,
            Kernel::CoopState => &COOP_STATE,
            Kernel::CoopOutput => &COOP_OUTPUT,
            Kernel::CoopBackwardPack => &COOP_BACKWARD_PACK,
            Kernel::CoopStateBackward => &COOP_STATE_BACKWARD,
            Kernel::CoopGradValues => &COOP_GRAD_VALUES,
            Kernel::CoopGradQueries => &COOP_GRAD_QUERIES,
            Kernel::CoopGradKeys => &COOP_GRAD_KEYS,
            Kernel::CoopGate => &COOP_GATE,
            Kernel::DecodeStep => &DECODE_STEP,
            Kernel::DecodeStepPortable => &DECODE_STEP_PORTABLE,
        }
    }
}

/// A kernel's static description.
struct Spec {
    name: &'static str,
    template: &'static str,
    snippets: &'static [(&'static str, &'static str)],
    bindings: &'static [Binding],
}

const MATH: &str = include_str!("../templates/math.wgsl");
const SEQUENCES: (&str, &str) = ("sequences", include_str!("../templates/sequences.wgsl"));
const QK_ROWS: (&str, &str) = ("qk_rows", include_str!("../templates/qk_rows.wgsl"));
const GATE_VALUES: (&str, &str) = ("gate_values", include_str!("../templates/gate_values.wgsl"));
const CONV_TAP: (&str, &str) = ("conv_tap", include_str!("../templates/conv_tap.wgsl"));
const CONV_RUNS: (&str, &str) = ("conv_runs", include_str!("../templates/conv_runs.wgsl"));
const CONV_WINDOWS: (&str, &str) = ("conv_window", include_str!("../templates/conv_window.wgsl"));
const CONV_PRE: (&str, &str) = ("conv_pre", include_str!("../templates/conv_pre.wgsl"));
const COLUMN_SUMS: (&str, &str) = ("column_sums", include_str!("../templates/column_sums.wgsl"));
const DCONV_WINDOW: (&str, &str) = ("dconv_window", include_str!("../templates/dconv_window.wgsl"));
const DCONV_PARTIAL: (&str, &str) = ("dconv_partial", include_str!("../templates/dconv_partial.wgsl"));
const PARTIAL_SUMS: (&str, &str) = ("partial_sums", include_str!("../templates/partial_sums.wgsl"));
const SUM_BLOCKS: (&str, &str) = ("sum_blocks", include_str!("../templates/sum_blocks.wgsl"));
const SUM_TOTALS: (&str, &str) = ("sum_totals", include_str!("../templates/sum_totals.wgsl"));
const CONV_INPUT_GRAD: (&str, &str) = ("conv_input_grad", include_str!("../templates/conv_input_grad.wgsl"));
const ROW_SUM: (&str, &str) = ("row_sum", include_str!("../templates/row_sum.wgsl"));
const STATE_TILE: (&str, &str) = ("state_tile", include_str!("../templates/state_tile.wgsl"));
const MATMUL_STAGING: (&str, &str) = ("matmul_staging", include_str!("../templates/matmul_staging.wgsl"));
const MATMUL: (&str, &str) = ("matmul", include_str!("../templates/matmul.wgsl"));
const SOLVE: (&str, &str) = ("solve", include_str!("../templates/solve.wgsl"));
const COOP: (&str, &str) = ("coop", include_str!("../templates/coop.wgsl"));
const COOP_STATE_BLOCKS: (&str, &str) = ("coop_state_blocks", include_str!("../templates/coop_state_blocks.wgsl"));
const COOP_SUMS: (&str, &str) = ("coop_sums", include_str!("../templates/coop_sums.wgsl"));
const COOP_TERMS: (&str, &str) = ("coop_terms", include_str!("../templates/coop_terms.wgsl"));
const COOP_GRAD_ROWS: (&str, &str) = ("coop_grad_rows", include_str!("../templates/coop_grad_rows.wgsl"));
const CHUNKS: (&str, &str) = ("chunks", include_str!("../templates/chunks.wgsl"));
const CHUNK_GEOMETRY: (&str, &str) = ("chunk_geometry", include_str!("../templates/chunk_geometry.wgsl"));
const CHUNK_GRADS: (&str, &str) = ("chunk_grads", include_str!("../templates/chunk_grads.wgsl"));
const COLUMN_JOBS: (&str, &str) = ("chunk_columns", include_str!("../templates/chunk_columns.wgsl"));

/// Floats of workgroup memory every chunked kernel declares for the chunk's five decay vectors.
pub(crate) const CHUNK_DECAYS: u32 = 5 * MAX_CHUNK;
/// Floats of workgroup memory of the f32 matmul: two staged operands, 16 rows of 17 vec4 each.
const MATMUL_F32_FLOATS: u32 = 2 * 16 * 17 * 4;
/// Floats of workgroup memory `templates/coop.wgsl` declares: the largest-magnitude words and the
/// chunk's record.
pub(crate) const COOP_FLOATS: u32 = 4 + COOP_RECORD;
/// Floats of a chunk's record (`templates/coop.wgsl`'s RECORD).
pub const COOP_RECORD: u32 = 5 * MAX_CHUNK + 16;
/// Floats per chunk of the tensor-core backward's per-token gate terms (`templates/coop_sums.wgsl`'s
/// GATE_TERMS).
pub const COOP_GATE_TERMS: u32 = 5 * MAX_CHUNK + 4;
/// Floats per chunk of the tensor-core backward's per-token key terms (`templates/coop_sums.wgsl`'s
/// KEY_TERMS).
pub const COOP_KEY_TERMS: u32 = 3 * MAX_CHUNK + 4;
/// Floats of `templates/coop_sums.wgsl`'s per-token sums and owner partials.
const COOP_SUMS_FLOATS: u32 = 5 * MAX_CHUNK + 8 * 16;
/// Floats of a tensor-core kernel's staging: one 16 × 16 block per owner.
pub(crate) const COOP_STAGE: u32 = 8 * 256;

const CONV_FORWARD: Spec = Spec {
    name: "conv_forward",
    template: include_str!("../templates/conv_forward.wgsl"),
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
};

const QK_NORM_GATES_FORWARD: Spec = Spec {
    name: "qk_norm_gates_forward",
    template: QK_NORM_GATES_FORWARD_TEMPLATE,
    snippets: &[QK_ROWS, ROW_SUM, TOKEN_SPAN, QK_INPUTS_STORED],
    bindings: QK_NORM_GATES_FORWARD_BINDINGS,
};

const QK_NORM_GATES_PRODUCTS_FORWARD: Spec = Spec {
    name: "qk_norm_gates_products_forward",
    template: QK_NORM_GATES_FORWARD_TEMPLATE,
    snippets: &[QK_ROWS, ROW_SUM, TOKEN_SPAN, QK_INPUTS_STORED],
    bindings: QK_NORM_GATES_FORWARD_BINDINGS,
};

const CONV_QK_NORM_GATES_PRODUCTS_FORWARD: Spec = Spec {
    name: "conv_qk_norm_gates_products_forward",
    template: QK_NORM_GATES_FORWARD_TEMPLATE,
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
        bind("qk_ss", WriteF32),
        bind("gates", WriteF32),
    ],
};

const QK_NORM_GATES_FORWARD_TEMPLATE: &str = include_str!("../templates/qk_norm_gates_forward.wgsl");
const QK_INPUTS_STORED: (&str, &str) = ("qk_inputs_stored", include_str!("../templates/qk_inputs_stored.wgsl"));
const QK_INPUTS_CONV: (&str, &str) = ("qk_inputs_conv", include_str!("../templates/qk_inputs_conv.wgsl"));
const CONV_AT: (&str, &str) = ("conv_at", include_str!("../templates/conv_at.wgsl"));
const TOKEN_SPAN: (&str, &str) = ("token_span", include_str!("../templates/token_span.wgsl"));

const QK_NORM_GATES_FORWARD_BINDINGS: &[Binding] = &[
    bind("layer", LayerUniform),
    bind("y", ReadF32),
    bind("a", ReadF32),
    bind("b", ReadF32),
    bind("a_log", ReadF32),
    bind("dt_bias", ReadF32),
    bind("qk_hat", WriteF32),
    bind("qk_ss", WriteF32),
    bind("gates", WriteF32),
];

const HALF_BF16: (&str, &str) = ("half_bf16", include_str!("../templates/half_bf16.wgsl"));
const HALF_F16: (&str, &str) = ("half_f16", include_str!("../templates/half_f16.wgsl"));
const WIDEN: &str = include_str!("../templates/widen.wgsl");
const NARROW: &str = include_str!("../templates/narrow.wgsl");
const WIDEN_BINDINGS: &[Binding] = &[bind("narrow", ReadU32), bind("wide", WriteF32)];
const NARROW_BINDINGS: &[Binding] = &[bind("wide", ReadF32), bind("narrow", WriteU32)];

const WIDEN_BF16: Spec = Spec { name: "widen_bf16", template: WIDEN, snippets: &[HALF_BF16], bindings: WIDEN_BINDINGS };
const WIDEN_F16: Spec = Spec { name: "widen_f16", template: WIDEN, snippets: &[HALF_F16], bindings: WIDEN_BINDINGS };
const NARROW_BF16: Spec =
    Spec { name: "narrow_bf16", template: NARROW, snippets: &[HALF_BF16], bindings: NARROW_BINDINGS };
const NARROW_F16: Spec =
    Spec { name: "narrow_f16", template: NARROW, snippets: &[HALF_F16], bindings: NARROW_BINDINGS };

const ADD_INTO: Spec = Spec {
    name: "add_into",
    template: include_str!("../templates/add_into.wgsl"),
    snippets: &[],
    bindings: &[bind("part", ReadF32), bind("sum", WriteF32)],
};

const RESIDUALS: (&str, &str) = ("residuals", include_str!("../templates/residuals.wgsl"));
const CHUNK_ROWS: (&str, &str) = ("chunk_rows", include_str!("../templates/chunk_rows.wgsl"));
const ROW_LANES_SUBGROUP: (&str, &str) = ("row_lanes_subgroup", include_str!("../templates/row_lanes_subgroup.wgsl"));
const CHUNK_LANES_SUBGROUP: (&str, &str) =
    ("chunk_lanes_subgroup", include_str!("../templates/chunk_lanes_subgroup.wgsl"));
const CHUNK_LANES_WORKGROUP: (&str, &str) =
    ("chunk_lanes_workgroup", include_str!("../templates/chunk_lanes_workgroup.wgsl"));
const STAGE_LOADERS_APART: (&str, &str) =
    ("stage_loaders_apart", include_str!("../templates/stage_loaders_apart.wgsl"));
const STAGE_LOADERS_SHARED: (&str, &str) =
    ("stage_loaders_shared", include_str!("../templates/stage_loaders_shared.wgsl"));
const ROW_LANES_WORKGROUP: (&str, &str) =
    ("row_lanes_workgroup", include_str!("../templates/row_lanes_workgroup.wgsl"));

const RECURRENCE_FORWARD_TEMPLATE: &str = include_str!("../templates/recurrence_forward.wgsl");
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

const RECURRENCE_FORWARD: Spec = Spec {
    name: "recurrence_forward",
    template: RECURRENCE_FORWARD_TEMPLATE,
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, ROW_LANES_SUBGROUP],
    bindings: RECURRENCE_FORWARD_BINDINGS,
};

const RECURRENCE_FORWARD_PORTABLE: Spec = Spec {
    name: "recurrence_forward_portable",
    template: RECURRENCE_FORWARD_TEMPLATE,
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, ROW_LANES_WORKGROUP],
    bindings: RECURRENCE_FORWARD_BINDINGS,
};

const RECURRENCE_FORWARD_CHUNKS_TEMPLATE: &str = include_str!("../templates/recurrence_forward_chunks.wgsl");

const RECURRENCE_FORWARD_CHUNKS: Spec = Spec {
    name: "recurrence_forward_chunks",
    template: RECURRENCE_FORWARD_CHUNKS_TEMPLATE,
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_SUBGROUP, STAGE_LOADERS_APART],
    bindings: RECURRENCE_FORWARD_BINDINGS,
};

const RECURRENCE_FORWARD_CHUNKS_PORTABLE: Spec = Spec {
    name: "recurrence_forward_chunks_portable",
    template: RECURRENCE_FORWARD_CHUNKS_TEMPLATE,
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_WORKGROUP, STAGE_LOADERS_SHARED],
    bindings: RECURRENCE_FORWARD_BINDINGS,
};

const NORM_FORWARD: Spec = Spec {
    name: "norm_forward",
    template: include_str!("../templates/norm_forward.wgsl"),
    snippets: &[ROW_SUM],
    bindings: &[
        bind("layer", LayerUniform),
        bind("o", ReadF32),
        bind("z", ReadF32),
        bind("norm", ReadF32),
        bind("out", WriteF32),
        bind("rstd", WriteF32),
    ],
};

const NORM_BACKWARD: Spec = Spec {
    name: "norm_backward",
    template: include_str!("../templates/norm_backward.wgsl"),
    snippets: &[ROW_SUM],
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
};

const RECURRENCE_BACKWARD: Spec = Spec {
    name: "recurrence_backward",
    template: include_str!("../templates/recurrence_backward.wgsl"),
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
};

const RECURRENCE_BACKWARD_COLUMNS_TEMPLATE: &str = include_str!("../templates/recurrence_backward_columns.wgsl");

const RECURRENCE_BACKWARD_COLUMNS: Spec = Spec {
    name: "recurrence_backward_columns",
    template: RECURRENCE_BACKWARD_COLUMNS_TEMPLATE,
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_SUBGROUP],
    bindings: RECURRENCE_BACKWARD_COLUMNS_BINDINGS,
};

const RECURRENCE_BACKWARD_COLUMNS_PORTABLE: Spec = Spec {
    name: "recurrence_backward_columns_portable",
    template: RECURRENCE_BACKWARD_COLUMNS_TEMPLATE,
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_ROWS, GATE_VALUES, RESIDUALS, CHUNK_LANES_WORKGROUP],
    bindings: RECURRENCE_BACKWARD_COLUMNS_BINDINGS,
};

const RECURRENCE_BACKWARD_COLUMNS_BINDINGS: &[Binding] = &[
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
];

const QK_NORM_BACKWARD_TEMPLATE: &str = include_str!("../templates/qk_norm_backward.wgsl");

const QK_NORM_BACKWARD: Spec = Spec {
    name: "qk_norm_backward",
    template: QK_NORM_BACKWARD_TEMPLATE,
    snippets: &[
        ROW_SUM,
        GATE_VALUES,
        TOKEN_SPAN,
        ("qk_grads_stored", include_str!("../templates/qk_grads_stored.wgsl")),
    ],
    bindings: &[
        bind("layer", LayerUniform),
        bind("y", ReadF32),
        bind("qk_ss", ReadF32),
        bind("dqk_hat_heads", ReadF32),
        bind("gates", ReadF32),
        bind("gate_grad_parts", ReadF32),
        bind("dy", WriteF32),
        bind("da", WriteF32),
        bind("db", WriteF32),
        bind("dlog_term", WriteF32),
    ],
};

const QK_NORM_CONV_BACKWARD: Spec = Spec {
    name: "qk_norm_conv_backward",
    template: QK_NORM_BACKWARD_TEMPLATE,
    snippets: &[
        SEQUENCES,
        TOKEN_SPAN,
        CONV_AT,
        ROW_SUM,
        GATE_VALUES,
        ("qk_grads_conv", include_str!("../templates/qk_grads_conv.wgsl")),
    ],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("qkv", ReadF32),
        bind("conv_state", ReadF32),
        bind("conv", ReadF32),
        bind("qk_ss", ReadF32),
        bind("dqk_hat_heads", ReadF32),
        bind("gates", ReadF32),
        bind("gate_grad_parts", ReadF32),
        bind("dy", ReadF32),
        bind("dpre", WriteF32),
        bind("da", WriteF32),
        bind("db", WriteF32),
        bind("dlog_term", WriteF32),
    ],
};

const CONV_BACKWARD_PRE: Spec = Spec {
    name: "conv_backward_pre",
    template: include_str!("../templates/conv_backward_pre.wgsl"),
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
};

const CONV_BACKWARD_INPUT: Spec = Spec {
    name: "conv_backward_input",
    template: include_str!("../templates/conv_backward_input.wgsl"),
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
};

/// The four sums' shapes, which both column-sum kernels read to find their job's sum.
const SUM_SHAPES: [Binding; 4] = [
    bind("reduce_dconv", ReduceUniform),
    bind("reduce_dnorm", ReduceUniform),
    bind("reduce_da_log", ReduceUniform),
    bind("reduce_ddt_bias", ReduceUniform),
];

const COLUMN_SUMS_PARTIAL: Spec = Spec {
    name: "column_sums_partial",
    template: include_str!("../templates/column_sums_partial.wgsl"),
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
};

const CONV_BACKWARD_INPUT_SUMS_TEMPLATE: &str = include_str!("../templates/conv_backward_input_sums.wgsl");

const CONV_BACKWARD_INPUT_SUMS: Spec = Spec {
    name: "conv_backward_input_sums",
    template: CONV_BACKWARD_INPUT_SUMS_TEMPLATE,
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
};

const CONV_BACKWARD_INPUT_TOTALS: Spec = Spec {
    name: "conv_backward_input_totals",
    template: CONV_BACKWARD_INPUT_SUMS_TEMPLATE,
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
        ("column_totals", include_str!("../templates/column_totals.wgsl")),
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
};

const COLUMN_SUMS_FINISH: Spec = Spec {
    name: "column_sums_finish",
    template: include_str!("../templates/column_sums_finish.wgsl"),
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
};

const CHUNK_PREPARE: Spec = Spec {
    name: "chunk_prepare",
    template: include_str!("../templates/chunk_prepare.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, SOLVE, MATMUL_STAGING, MATMUL],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("chunk_work", WriteF32),
    ],
};

const CHUNK_STATE: Spec = Spec {
    name: "chunk_state",
    template: include_str!("../templates/chunk_state.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, COLUMN_JOBS, MATMUL_STAGING, MATMUL],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("h0", ReadF32),
        bind("chunk_work", WriteF32),
        bind("ckpt", WriteF32),
        bind("ht", WriteF32),
    ],
};

const CHUNK_OUTPUT: Spec = Spec {
    name: "chunk_output",
    template: include_str!("../templates/chunk_output.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, MATMUL_STAGING, MATMUL],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("chunk_work", ReadF32),
        bind("ckpt", ReadF32),
        bind("o", WriteF32),
    ],
};

const CHUNK_STATE_BACKWARD: Spec = Spec {
    name: "chunk_state_backward",
    template: include_str!("../templates/chunk_state_backward.wgsl"),
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
        bind("y", ReadF32),
        bind("qk_hat", ReadF32),
        bind("gates", ReadF32),
        bind("d_o", ReadF32),
        bind("dht", ReadF32),
        bind("chunk_work", WriteF32),
        bind("dckpt", WriteF32),
        bind("dh0", WriteF32),
    ],
};

const CHUNK_GRAD: Spec = Spec {
    name: "chunk_grad",
    template: include_str!("../templates/chunk_grad.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, CHUNK_GRADS, MATMUL_STAGING, MATMUL],
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
};

const COOP_PACK: Spec = Spec {
    name: "coop_pack",
    template: include_str!("../templates/coop_pack.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, GATE_VALUES, CHUNK_GEOMETRY, CHUNKS, COOP],
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
};

const COOP_PREPARE: Spec = Spec {
    name: "coop_prepare",
    template: include_str!("../templates/coop_prepare.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COOP, SOLVE],
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
        bind("w_half", WriteF16),
        bind("u_tilde", WriteF32),
    ],
};

const COOP_STATE: Spec = Spec {
    name: "coop_state",
    template: include_str!("../templates/coop_state.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COLUMN_JOBS, COOP, COOP_STATE_BLOCKS],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("h0", ReadF32),
        bind("k_half", ReadF16),
        bind("w_half", ReadF16),
        bind("state_rows_half", ReadF16),
        bind("u_tilde", ReadF32),
        bind("states", WriteF32),
        bind("states_half", WriteF16),
        bind("states_scale", WriteF32),
        bind("u_values", WriteF32),
        bind("u_half", WriteF16),
        bind("lu_half", WriteF16),
        bind("ht", WriteF32),
    ],
};

const COOP_OUTPUT: Spec = Spec {
    name: "coop_output",
    template: include_str!("../templates/coop_output.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COOP],
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
};

const COOP_BACKWARD_PACK: Spec = Spec {
    name: "coop_backward_pack",
    template: include_str!("../templates/coop_backward_pack.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COOP],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("p_half", ReadF16),
        bind("d_o", ReadF32),
        bind("do_half", WriteF16),
        bind("do1_half", WriteF16),
        bind("do_scale", WriteF32),
        bind("du_local", WriteF32),
    ],
};

const COOP_STATE_BACKWARD: Spec = Spec {
    name: "coop_state_backward",
    template: include_str!("../templates/coop_state_backward.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COLUMN_JOBS, COOP, COOP_STATE_BLOCKS],
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
};

const COOP_GRAD_VALUES: Spec = Spec {
    name: "coop_grad_values",
    template: include_str!("../templates/coop_grad_values.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COOP, COOP_TERMS, COOP_SUMS],
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
};

const COOP_GRAD_QUERIES: Spec = Spec {
    name: "coop_grad_queries",
    template: include_str!("../templates/coop_grad_queries.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COOP, COOP_TERMS, COOP_SUMS, COOP_GRAD_ROWS],
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
};

const COOP_GRAD_KEYS: Spec = Spec {
    name: "coop_grad_keys",
    template: include_str!("../templates/coop_grad_keys.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COOP, COOP_TERMS, COOP_SUMS, COOP_GRAD_ROWS],
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
};

const COOP_GATE: Spec = Spec {
    name: "coop_gate",
    template: include_str!("../templates/coop_gate.wgsl"),
    snippets: &[SEQUENCES, QK_ROWS, CHUNK_GEOMETRY, COOP, COOP_TERMS],
    bindings: &[
        bind("layer", LayerUniform),
        bind("index", ReadU32),
        bind("record", ReadF32),
        bind("gate_terms", ReadF32),
        bind("key_terms", ReadF32),
        bind("gate_grad_parts", WriteF32),
    ],
};

const DECODE_STEP_TEMPLATE: &str = include_str!("../templates/decode_step.wgsl");
const DECODE_STEP_BINDINGS: &[Binding] = &[
    bind("layer", LayerUniform),
    bind("slots", ReadU32),
    bind("qkv", ReadF32),
    bind("z", ReadF32),
    bind("gate_inputs", ReadF32),
    bind("params", ReadF32),
    bind("state", WriteVec4F32),
    bind("conv_state", WriteF32),
    bind("out", WriteF32),
    bind("arrivals", Counters),
];

const DECODE_STEP: Spec = Spec {
    name: "decode_step",
    template: DECODE_STEP_TEMPLATE,
    snippets: &[ROW_LANES_SUBGROUP],
    bindings: DECODE_STEP_BINDINGS,
};

const DECODE_STEP_PORTABLE: Spec = Spec {
    name: "decode_step_portable",
    template: DECODE_STEP_TEMPLATE,
    snippets: &[ROW_LANES_WORKGROUP],
    bindings: DECODE_STEP_BINDINGS,
};

/// The WGSL type of a binding's variable.
pub(crate) fn wgsl_declaration(slot: usize, binding: &Binding) -> String {
    let (space, ty) = match binding.kind {
        LayerUniform => ("uniform", uniforms::LAYER_WGSL_NAME),
        ReduceUniform => ("uniform", uniforms::REDUCE_WGSL_NAME),
        ReadU32 => ("storage, read", "array<u32>"),
        WriteU32 => ("storage, read_write", "array<u32>"),
        Counters => ("storage, read_write", "array<atomic<u32>>"),
        ReadF32 => ("storage, read", "array<f32>"),
        WriteF32 => ("storage, read_write", "array<f32>"),
        WriteVec4F32 => ("storage, read_write", "array<vec4<f32>>"),
        ReadF16 => ("storage, read", "array<f16>"),
        WriteF16 => ("storage, read_write", "array<f16>"),
    };
    format!("@group(0) @binding({slot}) var<{space}> {}: {ty};", binding.name)
}
