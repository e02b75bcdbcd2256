//! Checks the device layer (`gdn-train`) against the f64 oracle (`gdn-ref`).
//!
//! A [`Case`] is one layer, batch and input regime; [`Case::run`] draws the spec's inputs, runs
//! forward and backward on the device (outputs poisoned with NaN first, so an unwritten element
//! fails) and on the reference, and returns a [`Report`]: the relative RMS error of every tensor
//! against its bar. [`fuzz`] draws cases with proptest and shrinks failures; [`soak`] runs them
//! for a while; [`layer_call`] and [`spot_check`] run a whole batch and check spots of it;
//! [`decode`] checks the decode step against the one-shot forward; [`recall`] trains a small model
//! through the layer. The binary `gdn-check` is the command a newcomer runs first; its options and
//! printing live in the binary, not here.
//!
//! ```no_run
//! use gdn_check::Case;
//! use gdn_ref::{Batch, LayerConfig, sample::Regime};
//! use gdn_train::{Family, Precision, Storage};
//!
//! let case = Case {
//!     config: LayerConfig::new(1, 2, 16, 16, 4)?,
//!     batch: Batch::Packed { cu_seqlens: vec![0, 5, 40] },
//!     h0: true,
//!     dht: true,
//!     regime: Regime::Typical,
//!     family: Family::chunked(),
//!     precision: Precision::F32,
//!     storage: Storage::F32,
//!     seed: 1,
//! };
//! let report = case.run(gdn_check::device_context())?;
//! print!("{}", report.table());
//! assert!(report.passes());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]

mod case;
pub mod chart_font;
pub mod checkpoint;
pub mod decode;
pub mod engine_arena;
pub mod fuzz;
pub mod layer_call;
pub mod recall;
mod report;
pub mod soak;
pub mod spot_check;

pub use case::{Case, CaseError, DeviceResults, Draw, Expected, bar};
pub use gdn_ref::Tensor;
pub use report::{Report, TensorError};

/// The spec's bar for `out` and `hT` of an f32 kernel.
pub const OUTPUT_BAR: f64 = 1e-4;
/// The spec's bar for every gradient of an f32 kernel, parameter gradients included.
pub const GRADIENT_BAR: f64 = 5e-4;
/// The spec's bar for `out` and `hT` with matrix products on tensor cores (f16 operands, f32
/// accumulation and state).
pub const TENSOR_CORE_OUTPUT_BAR: f64 = 3e-3;
/// The spec's bar for every gradient with matrix products on tensor cores, on realistic inputs.
pub const TENSOR_CORE_GRADIENT_BAR: f64 = 1e-2;
/// The rounding of a tensor-core product's operands (f16's unit roundoff, 2⁻¹¹): how far a sum of
/// rounded terms may stray, relative to the terms' magnitudes ([`Expected::rounding_in`]).
pub const F16_ROUNDING: f64 = 4.9e-4;
/// The bar of a tensor stored in bf16 (a few times its rounding, 2⁻⁹).
pub const BF16_STORAGE_BAR: f64 = 4e-3;
/// The bar of a tensor stored in f16 (a few times its rounding, 2⁻¹²).
pub const F16_STORAGE_BAR: f64 = 1e-3;
/// A fast family in f32 against the f32 recurrent family on the same inputs: each tensor's error at
/// most this many times the recurrent family's ([`Report::beside`])...
pub const FAST_FAMILY_FACTOR: f64 = 2.0;
/// ... or at most this, whichever is larger.
pub const FAST_FAMILY_FLOOR: f64 = 1e-5;

/// The device context the device tests share, made once per process and named when made. No
/// adapter is a panic: a device test fails where there is no device, it never passes quietly.
pub fn device_context() -> &'static gdn_train::Context {
    static CONTEXT: std::sync::OnceLock<gdn_train::Context> = std::sync::OnceLock::new();
    CONTEXT.get_or_init(|| match gdn_train::Context::new() {
        Ok(ctx) => {
            println!("adapter: {}", ctx.describe());
            ctx
        }
        Err(e) => panic!("device tests need a GPU adapter: {e}"),
    })
}

/// A device of an engine's own on the adapter [`device_context`] chose, asked for `limits` (given
/// the adapter's, returning what to request), adopted with [`gdn_train::Context::from_wgpu`]; the
/// engine keeps the device and queue. A device test's helper: no adapter is a panic.
pub fn engine_device(
    limits: impl FnOnce(wgpu::Limits) -> wgpu::Limits,
) -> (gdn_train::Context, wgpu::Device, wgpu::Queue) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let chosen = &device_context().adapter_info().name;
    let adapter = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY))
        .into_iter()
        .find(|a| &a.get_info().name == chosen)
        .expect("the adapter Context::new chose");
    let descriptor =
        wgpu::DeviceDescriptor { required_limits: limits(adapter.limits()), ..wgpu::DeviceDescriptor::default() };
    let (device, queue) = pollster::block_on(adapter.request_device(&descriptor)).expect("an engine's device");
    let ctx = gdn_train::Context::from_wgpu(&adapter, device.clone(), queue.clone(), gdn_train::BoundsChecks::On);
    (ctx, device, queue)
}
