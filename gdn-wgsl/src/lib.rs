//! WGSL of every kernel of the Gated DeltaNet layer, forward and backward, generated per head size.
//!
//! A kernel is a template plus what must be known at compile time: the head dims `dk`, `dv` and
//! the thread tiling derived from them ([`Tiling`]), written as WGSL `const`s, because an
//! `override` cannot size the per-thread arrays that hold a thread's tile of the state. Each
//! kernel is one declaration in the module of its family (`src/kernels/{shared,recurrent,chunked,
//! tensor_core,decode,storage}.rs`), its template and the snippets only it and its family include
//! in `templates/<family>/`, snippets of several families in `templates/lib/`.
//! [`kernel_source`] returns a variant's WGSL together with its binding layout, so that a host —
//! `gdn-train`, or an engine compiling the WGSL its own way — binds exactly what the shader
//! declares. This crate has no GPU dependency.
//!
//! Every variant of the supported grid ([`SUPPORTED_SIZES`] × [`SUPPORTED_SIZES`]) is generated and
//! validated with naga (parse, validate, write SPIR-V) by the build script, so a broken template
//! fails `cargo build` with naga's message pointing into the generated source.
//!
//! ```
//! use gdn_wgsl::{HeadDims, Kernel, Precision, kernel_source};
//!
//! let dims = HeadDims::new(64, 32)?;
//! let source = kernel_source(Kernel::RecurrenceBackward, dims)?;
//! assert!(source.wgsl.contains("const DK: u32 = 64u;"));
//! assert_eq!(source.bindings[0].name, "layer");
//! assert_eq!(source.precision, Precision::F32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

mod assemble;
mod dims;
mod kernels;
pub mod plan;
mod precision;
mod tiling;
mod uniforms;

pub use dims::{HeadDims, SUPPORTED_SIZES, UnsupportedDims};
pub use kernels::chunked::{CHUNK_COLUMNS, MATMUL_THREADS, MAX_CHUNK};
pub use kernels::decode::MAX_DECODE_TOKENS;
pub use kernels::recurrent::RECURRENT_CHUNK;
pub use kernels::shared::{COLUMNS, CONV_RUN, CONV_RUNS_TO_FILL, CONV_WINDOW, ELEMENTS, TOTAL_UNITS, VEC};
pub use kernels::tensor_core::{TENSOR_CORE_GATE_TERMS, TENSOR_CORE_KEY_TERMS, TENSOR_CORE_RECORD, TensorCoreTiling};
pub use kernels::{Binding, BindingKind, Kernel};
pub use precision::Precision;
pub use tiling::{LANE_BLOCK, LaneLayout, ROW_LANES, Tiling};
pub use uniforms::{LayerUniform, ReduceUniform};

/// One kernel variant: its WGSL (entry point `main`) and its interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSource {
    /// Which kernel.
    pub kernel: Kernel,
    /// The head dims it was generated for (irrelevant when the kernel does not depend on them).
    pub dims: HeadDims,
    /// The arithmetic of its matrix products ([`Kernel::precision`]).
    pub precision: Precision,
    /// The complete WGSL module.
    pub wgsl: String,
    /// Bindings of group 0, slot by slot.
    pub bindings: &'static [Binding],
    /// Threads per workgroup.
    pub workgroup_size: u32,
    /// Bytes of workgroup memory it declares.
    pub workgroup_bytes: u32,
}

/// The entry point of every generated module.
pub const ENTRY_POINT: &str = "main";

/// A kernel asked for at head dims it is not generated for ([`Kernel::generated_for`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kernel {kernel} has no variant for {dims}: {reason}")]
pub struct NoVariant {
    /// The kernel's name.
    pub kernel: &'static str,
    /// The head dims asked for.
    pub dims: HeadDims,
    /// Why it has none.
    pub reason: &'static str,
}

/// Whether `kernel` is generated for `dims` ([`Kernel::generated_for`]), as a typed error.
pub(crate) fn has_variant(kernel: Kernel, dims: HeadDims) -> Result<(), NoVariant> {
    if kernel.generated_for(dims) {
        return Ok(());
    }
    Err(NoVariant {
        kernel: kernel.name(),
        dims,
        reason: "tensor-core kernels need head dims that are multiples of 16 (16 × 16 blocks tile them)",
    })
}

/// Generates `kernel` for `dims`.
pub fn kernel_source(kernel: Kernel, dims: HeadDims) -> Result<KernelSource, NoVariant> {
    has_variant(kernel, dims)?;
    Ok(KernelSource {
        kernel,
        dims,
        precision: kernel.precision(),
        wgsl: assemble::wgsl(kernel, dims),
        bindings: kernel.bindings(),
        workgroup_size: kernel.workgroup_size(dims),
        workgroup_bytes: kernel.workgroup_bytes(dims),
    })
}
