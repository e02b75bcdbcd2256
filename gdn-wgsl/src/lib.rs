//! WGSL of every kernel of the Gated DeltaNet layer, forward and backward, generated per head size.
//!
//! A kernel is a template (`templates/*.wgsl`) plus what must be known at compile time: the head
//! dims `dk`, `dv` and the thread tiling derived from them ([`Tiling`]), written as WGSL `const`s,
//! because an `override` cannot size the per-thread arrays that hold a thread's tile of the state.
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
//! let source = kernel_source(Kernel::RecurrenceBackward, dims, Precision::F32);
//! assert!(source.wgsl.contains("const DK: u32 = 64u;"));
//! assert_eq!(source.bindings[0].name, "layer");
//! # Ok::<(), gdn_wgsl::UnsupportedDims>(())
//! ```
#![forbid(unsafe_code)]

mod assemble;
mod dims;
mod kernel;
mod precision;
mod tiling;
mod uniforms;

pub use dims::{HeadDims, SUPPORTED_SIZES, UnsupportedDims};
pub use kernel::{
    Binding, BindingKind, CHUNK_COLUMNS, COLUMNS, DECODE_THREADS, ELEMENTS, Kernel, MATMUL_THREADS, MAX_CHUNK,
    MAX_DECODE_TOKENS, VEC,
};
pub use precision::Precision;
pub use tiling::Tiling;
pub use uniforms::{LayerUniform, ReduceUniform};

/// One kernel variant: its WGSL (entry point `main`) and its interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSource {
    /// Which kernel.
    pub kernel: Kernel,
    /// The head dims it was generated for (irrelevant when the kernel does not depend on them).
    pub dims: HeadDims,
    /// The arithmetic of its matrix products (always f32 for kernels that have none).
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

/// Generates `kernel` for `dims` in `precision`, or in f32 where the kernel does not take it
/// ([`Kernel::precision`]).
pub fn kernel_source(kernel: Kernel, dims: HeadDims, precision: Precision) -> KernelSource {
    let precision = kernel.precision(dims, precision);
    KernelSource {
        kernel,
        dims,
        precision,
        wgsl: assemble::wgsl(kernel, dims, precision),
        bindings: kernel.bindings(),
        workgroup_size: kernel.workgroup_size(dims),
        workgroup_bytes: kernel.workgroup_bytes(dims, precision),
    }
}
