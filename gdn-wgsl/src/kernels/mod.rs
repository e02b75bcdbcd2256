//! The catalogue of kernels: one [`KernelDef`] per kernel, declared in the module of its family,
//! holding every fact about it (its template and snippets, its bindings, its workgroup size and
//! memory, its `const`s, what it needs of the device), and the [`Kernel`] enum generated from one
//! list of them. The bindings declared here are the only declaration of a kernel's interface: the
//! generator writes the WGSL `var` declarations from them, and a host builds its bind group layouts
//! from them, so the two cannot drift.
//!
//! The families, as in the plan (`plan/{shared,recurrent,chunked,storage}.rs`):
//! [`shared`] (conv, q/k norms and gates, gated RMSNorm, every parameter gradient), [`recurrent`]
//! and [`chunked`] (the delta rule itself), [`tensor_core`] (the chunked family on cooperative
//! matrices), [`decode`] (inference's fused step) and [`storage`] (half-precision tensors). Their
//! templates lie in `templates/<family>/`, snippets that several families include in
//! `templates/lib/`.

pub(crate) mod chunked;
pub(crate) mod decode;
pub(crate) mod recurrent;
pub(crate) mod shared;
pub(crate) mod storage;
pub(crate) mod tensor_core;

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

/// A binding, for the declarations.
pub(crate) const fn bind(name: &'static str, kind: BindingKind) -> Binding {
    Binding { name, kind }
}

/// One WGSL file under `templates/`: its path there and its text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wgsl {
    /// The path under `templates/`, e.g. `lib/sequences.wgsl`.
    pub path: &'static str,
    /// The file's text.
    pub text: &'static str,
}

/// The [`Wgsl`] at `templates/<path>.wgsl`, included at compile time.
macro_rules! wgsl {
    ($path:literal) => {
        $crate::kernels::Wgsl {
            path: concat!($path, ".wgsl"),
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/templates/", $path, ".wgsl")),
        }
    };
}
pub(crate) use wgsl;

/// The snippet every kernel includes first: small numeric helpers.
const MATH: Wgsl = wgsl!("lib/math");

// The snippets of `templates/lib/`, which kernels of several families include.
/// Each token's sequence and each sequence's span (the index buffer).
pub(crate) const SEQUENCES: Wgsl = wgsl!("lib/sequences");
/// Where a token's q̂ and k̂ rows lie.
pub(crate) const QK_ROWS: Wgsl = wgsl!("lib/qk_rows");
/// A token's decay and write gates.
pub(crate) const GATE_VALUES: Wgsl = wgsl!("lib/gate_values");
/// The triangular solve of a chunk (the chunked family, in f32 and on tensor cores).
pub(crate) const SOLVE: Wgsl = wgsl!("lib/solve");
/// A chunk's rows (zero for pads) and its decays in workgroup memory.
pub(crate) const CHUNKS: Wgsl = wgsl!("lib/chunks");
/// A chunk's values (v) from the conv's output, for the kernels that read them.
pub(crate) const CHUNK_VALUES: Wgsl = wgsl!("lib/chunk_values");
/// Where a chunk lies: its sequence, value head, tokens and slot.
pub(crate) const CHUNK_GEOMETRY: Wgsl = wgsl!("lib/chunk_geometry");
/// The jobs of the passes over chunks, a block of state columns each.
pub(crate) const COLUMN_JOBS: Wgsl = wgsl!("lib/chunk_columns");
/// Row sums of column groups by subgroup shuffles (the recurrent forward, the decode step).
pub(crate) const ROW_LANES_SUBGROUP: Wgsl = wgsl!("lib/row_lanes_subgroup");
/// Row sums of column groups through workgroup memory: the portable twin of
/// [`ROW_LANES_SUBGROUP`].
pub(crate) const ROW_LANES_WORKGROUP: Wgsl = wgsl!("lib/row_lanes_workgroup");

/// What a kernel needs of the device beyond WebGPU's baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    /// Nothing.
    Nothing,
    /// wgpu's `SUBGROUP` with subgroups of at least [`crate::LANE_BLOCK`] invocations: it sums
    /// over lanes by subgroup shuffles. Each such kernel has a portable twin that sums through
    /// workgroup memory.
    WideSubgroups,
    /// f16 and cooperative matrices (and subgroups of 32): it computes its products on tensor
    /// cores ([`Precision::TensorCore`]).
    TensorCores,
}

/// Everything about one kernel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelDef {
    /// Its name: of its generated module, its snapshot, its `GDN_KERNEL_DIR` file, the CLI's
    /// `--kernel`.
    pub name: &'static str,
    /// The template with its entry point `main`.
    pub template: Wgsl,
    /// The snippets it includes after [`MATH`], in order.
    pub snippets: &'static [Wgsl],
    /// The bindings of group 0, slot by slot.
    pub bindings: &'static [Binding],
    /// Threads per workgroup.
    pub threads: fn(HeadDims) -> u32,
    /// Floats (4-byte words) of workgroup memory it declares.
    pub workgroup_floats: fn(HeadDims) -> u32,
    /// The `const` declarations its template reads, as (name, value).
    pub constants: fn(HeadDims) -> Vec<(&'static str, u32)>,
    /// Whether its source depends on the head dims; the others are generated once.
    pub depends_on_dims: bool,
    /// What it needs of the device.
    pub needs: Needs,
}

/// [`KernelDef::workgroup_floats`] of a kernel that declares no workgroup memory.
pub(crate) const NO_WORKGROUP_MEMORY: fn(HeadDims) -> u32 = |_| 0;

/// Defines [`Kernel`] and [`Kernel::ALL`] from the list of every kernel's declaration.
macro_rules! kernels {
    ($($(#[$doc:meta])* $variant:ident => $def:path,)*) => {
        /// Every kernel: the layer's shared ones, the recurrent family's (`Recurrence*`) and the
        /// chunked family's, in f32 (`Chunk*`) and on tensor cores (`TensorCore*`), the decode step
        /// and the half-precision storage's conversions.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kernel {
            $($(#[$doc])* $variant,)*
        }

        impl Kernel {
            /// Every kernel.
            pub const ALL: [Kernel; [$(stringify!($variant)),*].len()] = [$(Kernel::$variant,)*];

            /// Its declaration.
            pub(crate) fn def(self) -> &'static KernelDef {
                match self {
                    $(Kernel::$variant => &$def,)*
                }
            }
        }
    };
}

kernels! {
    /// Causal conv + SiLU of the raw projection.
    ConvForward => shared::CONV_FORWARD,
    /// L2 norms of q and k, and the decay and write gates (one dispatch).
    QkNormGatesForward => shared::QK_NORM_GATES_FORWARD,
    /// [`Kernel::QkNormGatesForward`] that also writes each k̂'s products with the three k̂ before
    /// it, which the chunk-solved recurrences read instead of summing them over the rows.
    QkNormGatesProductsForward => shared::QK_NORM_GATES_PRODUCTS_FORWARD,
    /// [`Kernel::ConvForward`] and [`Kernel::QkNormGatesForward`] in one dispatch: each (token,
    /// key head) computes the conv of its q, k and value channels from the raw projection, its taps
    /// in one round of loads. It binds 12 storage buffers, so the plan takes it only where the
    /// device allows as many, and only for kk ≤ [`crate::CONV_WINDOW`].
    ConvQkNormGatesForward => shared::CONV_QK_NORM_GATES_FORWARD,
    /// [`Kernel::ConvQkNormGatesForward`] that also writes the key products of
    /// [`Kernel::QkNormGatesProductsForward`].
    ConvQkNormGatesProductsForward => shared::CONV_QK_NORM_GATES_PRODUCTS_FORWARD,
    /// The delta rule, forward, with checkpoints; its column sums are subgroup shuffles: it needs
    /// wgpu's `SUBGROUP` with subgroups of at least [`crate::LANE_BLOCK`] invocations.
    RecurrenceForward => recurrent::RECURRENCE_FORWARD,
    /// [`Kernel::RecurrenceForward`] with its column sums through workgroup memory, for devices
    /// without subgroups that wide.
    RecurrenceForwardPortable => recurrent::RECURRENCE_FORWARD_PORTABLE,
    /// The delta rule, forward, with checkpoints, for batches of few heads: solved
    /// [`crate::RECURRENT_CHUNK`] tokens at a time, one state column a warp, its inputs staged in
    /// workgroup memory by warps of their own; its sums are subgroup shuffles: it needs wgpu's
    /// `SUBGROUP` with subgroups of at least [`crate::LANE_BLOCK`] invocations.
    RecurrenceForwardChunks => recurrent::RECURRENCE_FORWARD_CHUNKS,
    /// [`Kernel::RecurrenceForwardChunks`] with its sums through workgroup memory (each lane both
    /// loads and solves).
    RecurrenceForwardChunksPortable => recurrent::RECURRENCE_FORWARD_CHUNKS_PORTABLE,
    /// Gated RMSNorm.
    NormForward => shared::NORM_FORWARD,
    /// Gated RMSNorm backward.
    NormBackward => shared::NORM_BACKWARD,
    /// The delta rule, backward: one workgroup per (sequence, value head).
    RecurrenceBackward => recurrent::RECURRENCE_BACKWARD,
    /// The delta rule, backward, for batches of few heads: one workgroup per (sequence, value head,
    /// block of columns), one state column a warp, its reverse sweep solved
    /// [`crate::RECURRENT_CHUNK`] steps at a time, each workgroup writing its block's partial sums
    /// of dq̂, dk̂, dℓ and dβ; its sums are subgroup shuffles: it needs wgpu's `SUBGROUP` with
    /// subgroups of at least [`crate::LANE_BLOCK`] invocations.
    RecurrenceBackwardColumns => recurrent::RECURRENCE_BACKWARD_COLUMNS,
    /// [`Kernel::RecurrenceBackwardColumns`] with its sums through workgroup memory.
    RecurrenceBackwardColumnsPortable => recurrent::RECURRENCE_BACKWARD_COLUMNS_PORTABLE,
    /// L2 norms backward, summing the value heads of each key head, and the gates' backward (one
    /// dispatch).
    QkNormBackward => shared::QK_NORM_BACKWARD,
    /// [`Kernel::QkNormBackward`] and [`Kernel::ConvBackwardPre`] in one dispatch: each (token,
    /// key head) recomputes the conv's pre-activation of its channels and writes their `dpre`.
    /// Taken where [`Kernel::ConvQkNormGatesForward`] is (12 storage buffers).
    QkNormConvBackward => shared::QK_NORM_CONV_BACKWARD,
    /// `dpre = dy·silu'(pre)`.
    ConvBackwardPre => shared::CONV_BACKWARD_PRE,
    /// The conv's input gradient.
    ConvBackwardInput => shared::CONV_BACKWARD_INPUT,
    /// Partial column sums of every parameter gradient (dconv's, and those of the backward's
    /// per-element terms: dnorm's, da_log's, ddt_bias's), all in one dispatch.
    ColumnSumsPartial => shared::COLUMN_SUMS_PARTIAL,
    /// [`Kernel::ConvBackwardInput`] and [`Kernel::ColumnSumsPartial`] in one dispatch (neither
    /// reads what the other writes). It binds 12 storage buffers, so the plan takes it only where
    /// the device allows as many.
    ConvBackwardInputSums => shared::CONV_BACKWARD_INPUT_SUMS,
    /// [`Kernel::ConvBackwardInput`] and every parameter sum's totals in one pass, in one dispatch:
    /// for short batches (each sum's rows in at most ELEMENTS / [`crate::TOTAL_UNITS`] blocks), the
    /// backward's last. It binds 15 storage buffers, so the plan takes it only where the device
    /// allows as many.
    ConvBackwardInputTotals => shared::CONV_BACKWARD_INPUT_TOTALS,
    /// Every parameter sum's totals from its partial sums, in one dispatch.
    ColumnSumsFinish => shared::COLUMN_SUMS_FINISH,
    /// Chunked family: the state-independent part of every chunk (decays, Q Kᵀ, K Kᵀ, T, W¹, Ũ).
    ChunkPrepare => chunked::CHUNK_PREPARE,
    /// Chunked family: the pass over chunks (chunk-start states, U, hT).
    ChunkState => chunked::CHUNK_STATE,
    /// Chunked family: every chunk's outputs from the state entering it.
    ChunkOutput => chunked::CHUNK_OUTPUT,
    /// Chunked family: the reverse pass over chunks (state gradients, dU, dh0).
    ChunkStateBackward => chunked::CHUNK_STATE_BACKWARD,
    /// Chunked family: every per-chunk gradient (dq̂, dk̂, dv, dℓ, dβ).
    ChunkGrad => chunked::CHUNK_GRAD,
    /// Chunked family on tensor cores: every chunk's operands in f16, packed chunk-major.
    TensorCorePack => tensor_core::TENSOR_CORE_PACK,
    /// Chunked family on tensor cores: the state-independent part of every chunk (K Kᵀ, Q Kᵀ, T).
    TensorCorePrepare => tensor_core::TENSOR_CORE_PREPARE,
    /// Chunked family on tensor cores: the pass over chunks (chunk-start states, U, hT).
    TensorCoreState => tensor_core::TENSOR_CORE_STATE,
    /// Chunked family on tensor cores: every chunk's outputs from the state entering it.
    TensorCoreOutput => tensor_core::TENSOR_CORE_OUTPUT,
    /// Chunked family on tensor cores: every chunk's dO in f16, and Pᵀ dO.
    TensorCoreBackwardPack => tensor_core::TENSOR_CORE_BACKWARD_PACK,
    /// Chunked family on tensor cores: the reverse pass over chunks (state gradients, dU, dh0).
    TensorCoreStateBackward => tensor_core::TENSOR_CORE_STATE_BACKWARD,
    /// Chunked family on tensor cores: dY, dv and the gradients of every chunk's square matrices.
    TensorCoreGradValues => tensor_core::TENSOR_CORE_GRAD_VALUES,
    /// Chunked family on tensor cores: dq̂ of every chunk.
    TensorCoreGradQueries => tensor_core::TENSOR_CORE_GRAD_QUERIES,
    /// Chunked family on tensor cores: dk̂ of every chunk.
    TensorCoreGradKeys => tensor_core::TENSOR_CORE_GRAD_KEYS,
    /// Chunked family on tensor cores: dℓ and dβ of every chunk.
    TensorCoreGate => tensor_core::TENSOR_CORE_GATE,
    /// Inference, a step of a few tokens for a batch of sequences, the whole forward in one
    /// dispatch: one workgroup per (sequence, value head), reading and updating the recurrent states
    /// and conv windows in place in a pool, addressed by slot. Its row sums are subgroup shuffles:
    /// it needs wgpu's `SUBGROUP` with subgroups of at least [`crate::LANE_BLOCK`] invocations.
    DecodeStep => decode::DECODE_STEP,
    /// [`Kernel::DecodeStep`] with its row sums through workgroup memory, for devices without
    /// subgroups.
    DecodeStepPortable => decode::DECODE_STEP_PORTABLE,
    /// Half-precision storage: a bf16 tensor widened to f32 before the pass that reads it.
    WidenBf16 => storage::WIDEN_BF16,
    /// Half-precision storage: an f16 tensor widened to f32 before the pass that reads it.
    WidenF16 => storage::WIDEN_F16,
    /// Half-precision storage: an f32 result rounded to bf16 after the pass that writes it.
    NarrowBf16 => storage::NARROW_BF16,
    /// Half-precision storage: an f32 result rounded to f16 after the pass that writes it.
    NarrowF16 => storage::NARROW_F16,
    /// One tensor added into another: a windowed tape's parameter gradients, summed over its
    /// windows on the device.
    AddInto => shared::ADD_INTO,
}

impl Kernel {
    /// Its name, e.g. `recurrence_backward`: of its generated module, its `GDN_KERNEL_DIR` file
    /// (`{name}-{dk}x{dv}-{precision}.wgsl`), the CLI's `--kernel`.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Its template's path under `templates/`, e.g. `recurrent/recurrence_backward.wgsl`: kernels
    /// that differ by a snippet or a `const` share one (`storage/widen.wgsl`,
    /// `decode/decode_step.wgsl`, ...).
    pub fn template_path(self) -> &'static str {
        self.def().template.path
    }

    /// Whether it sums over lanes by subgroup shuffles, needing wgpu's `SUBGROUP` with subgroups of
    /// at least [`crate::LANE_BLOCK`] invocations; each such kernel has a portable twin that sums
    /// through workgroup memory.
    pub fn needs_wide_subgroups(self) -> bool {
        self.def().needs == Needs::WideSubgroups
    }

    /// The bindings of group 0, slot by slot.
    pub fn bindings(self) -> &'static [Binding] {
        self.def().bindings
    }

    /// Storage buffers it binds (what the device's `max_storage_buffers_per_shader_stage` must
    /// allow).
    pub fn storage_buffers(self) -> u32 {
        self.bindings().iter().filter(|b| !b.kind.is_uniform()).count() as u32
    }

    /// Whether the kernel's source depends on the head dims; the others are generated once.
    pub fn depends_on_dims(self) -> bool {
        self.def().depends_on_dims
    }

    /// The precision the kernel computes its products in: the `TensorCore*` kernels on tensor
    /// cores, every other in f32.
    pub fn precision(self) -> Precision {
        if self.def().needs == Needs::TensorCores { Precision::TensorCore } else { Precision::F32 }
    }

    /// Whether the kernel is generated for heads of `dims`: the tensor-core kernels only where
    /// [`Precision::suits`] them (16 × 16 blocks tile the head dims), every other for every pair of
    /// [`crate::SUPPORTED_SIZES`].
    pub fn generated_for(self, dims: HeadDims) -> bool {
        self.precision().suits(dims)
    }

    /// Threads per workgroup.
    pub fn workgroup_size(self, dims: HeadDims) -> u32 {
        (self.def().threads)(dims)
    }

    /// Bytes of workgroup memory the kernel declares.
    pub fn workgroup_bytes(self, dims: HeadDims) -> u32 {
        4 * (self.def().workgroup_floats)(dims)
    }

    /// The `const` declarations the template needs, as (name, value).
    pub(crate) fn constants(self, dims: HeadDims) -> Vec<(&'static str, u32)> {
        (self.def().constants)(dims)
    }

    /// The template and the snippets it includes, in order.
    pub(crate) fn sources(self) -> (Wgsl, Vec<Wgsl>) {
        let def = self.def();
        let mut snippets = vec![MATH];
        snippets.extend(def.snippets.iter().copied());
        (def.template, snippets)
    }
}

/// The WGSL declaration of the binding in `slot`.
pub(crate) fn wgsl_declaration(slot: usize, binding: &Binding) -> String {
    use BindingKind::*;
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

/// The layout of `templates/`: what a kernel's declaration may include from where.
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// The folder of a path under `templates/`.
    fn folder(path: &str) -> &str {
        path.split_once('/').map_or("", |(folder, _)| folder)
    }

    /// A kernel's template lies in its family's folder; each snippet it includes lies there too or
    /// in `lib/`; a snippet in `lib/` is included by kernels of at least two families; every file
    /// under `templates/` is some kernel's template or snippet; names are unique.
    #[test]
    fn templates_lie_with_their_family_and_shared_snippets_in_lib() {
        let mut families_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        let mut names = BTreeSet::new();
        for kernel in Kernel::ALL {
            assert!(names.insert(kernel.name()), "{} declared twice", kernel.name());
            let (template, snippets) = kernel.sources();
            let family = folder(template.path);
            assert_ne!(family, "lib", "{}: an entry point in lib/", kernel.name());
            families_of.entry(template.path).or_default().insert(family);
            for snippet in snippets {
                let at = folder(snippet.path);
                assert!(
                    at == family || at == "lib",
                    "{} ({family}) includes {}, of another family: move it to lib/",
                    kernel.name(),
                    snippet.path
                );
                families_of.entry(snippet.path).or_default().insert(family);
            }
        }
        for (path, families) in &families_of {
            if folder(path) == "lib" && *path != MATH.path {
                assert!(families.len() >= 2, "{path} is included by {families:?} only: move it to that folder");
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        let mut files = BTreeSet::new();
        for folder in std::fs::read_dir(&root).expect("templates/ is readable") {
            let folder = folder.expect("an entry").path();
            assert!(folder.is_dir(), "{}: templates/ holds folders only", folder.display());
            for file in std::fs::read_dir(&folder).expect("a folder is readable") {
                let file = file.expect("an entry").path();
                files.insert(file.strip_prefix(&root).expect("under templates/").to_string_lossy().replace('\\', "/"));
            }
        }
        let used: BTreeSet<String> = families_of.keys().map(|p| p.to_string()).collect();
        assert_eq!(files, used, "files under templates/ that no kernel includes, or the reverse");
    }
}
