//! The device context: adapter choice, device creation with the adapter's own limits, and the
//! cache of compiled pipelines shared by every tape on the device.
//!
//! The device rules a caller meets are documented on the items they concern: storage buffers per
//! stage on [`Context`], subgroups on [`Context::has_wide_subgroups`], tensor cores on
//! [`Context::supports`], the family a tape picks on [`Context::picked_family_for_batch`].

use crate::pipelines::PipelineCache;
use crate::{Error, Family, LayerConfig, Precision, Result, TapeOptions};
use std::sync::Arc;

/// How to choose the adapter and compile the kernels. [`ContextOptions::from_env`] reads
/// `WGPU_BACKEND` (a comma list: `vulkan`, `metal`, `dx12`, `gl`), `WGPU_ADAPTER_NAME` (a
/// case-insensitive substring) and `GDN_BOUNDS_CHECKS` (`0` turns them off).
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// Backends to search; `None` means Vulkan, Metal, DX12 and browser WebGPU.
    pub backends: Option<wgpu::Backends>,
    /// Keep only adapters whose name contains this, ignoring case.
    pub adapter_name: Option<String>,
    /// Whether naga guards every buffer access of the kernels ([`BoundsChecks::On`] by default).
    pub bounds_checks: BoundsChecks,
    /// Request the device with at most this many storage buffers per shader stage (the adapter's
    /// own limit when `None` or larger): a tape then lays out its passes as on a device that binds
    /// no more, keeping apart the parts of the kernels that would bind more (`gdn_wgsl::plan`).
    pub max_storage_buffers: Option<u32>,
}

impl Default for ContextOptions {
    fn default() -> Self {
        Self { backends: None, adapter_name: None, bounds_checks: BoundsChecks::On, max_storage_buffers: None }
    }
}

/// Whether naga guards every buffer access of the kernels.
///
/// Off, an out-of-bounds access would be undefined behaviour. The kernels index only within the
/// buffers a tape sizes for them, which the device test suite and the fuzzer check on every shape
/// they draw. Turning the checks off makes the backward a little faster (`GDN_BOUNDS_CHECKS=0`;
/// see BENCHMARKS.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoundsChecks {
    /// Every buffer access guarded (the default).
    #[default]
    On,
    /// No guard: for a caller that trusts the kernels' indexing.
    Off,
}

impl ContextOptions {
    /// Options from `WGPU_BACKEND`, `WGPU_ADAPTER_NAME`, `GDN_BOUNDS_CHECKS` (`0` or `1`) and
    /// `GDN_MAX_STORAGE_BUFFERS` (a count); [`Context::new`] refuses values that are neither.
    pub fn from_env() -> Self {
        Self {
            backends: wgpu::Backends::from_env(),
            adapter_name: std::env::var("WGPU_ADAPTER_NAME").ok(),
            bounds_checks: match std::env::var("GDN_BOUNDS_CHECKS") {
                Ok(v) if v.trim() == "0" => BoundsChecks::Off,
                _ => BoundsChecks::On,
            },
            max_storage_buffers: std::env::var("GDN_MAX_STORAGE_BUFFERS").ok().and_then(|v| v.trim().parse().ok()),
        }
    }
}

/// A device and queue, with the pipeline cache. Cheap to clone: clones share everything.
///
/// # Storage buffers per stage
///
/// WebGPU's and wgpu's default limit is 8 storage buffers per shader stage. Adapters offer more
/// (SwiftShader 10, desktop Vulkan drivers far more), and [`Context::new`] asks for what the
/// adapter offers. Kernels that bind more than 8:
///
/// | kernel | storage buffers | where the device binds fewer |
/// | --- | --- | --- |
/// | `chunk_grad` | 10 | refused |
/// | `recurrence_backward_columns` | 11 | refused |
/// | `recurrence_backward` | 12 | refused |
/// | `conv_backward_input_sums` | 12 | its parts: `conv_backward_input`, `column_sums_partial` |
/// | `conv_qk_norm_gates_forward`, `conv_qk_norm_gates_products_forward` | 12 | its parts: `conv_forward` (6), `qk_norm_gates_forward` or `qk_norm_gates_products_forward` (7) |
/// | `qk_norm_conv_backward` | 12 | its parts: `qk_norm_backward` (8), `conv_backward_pre` |
/// | `conv_backward_input_totals` | 15 | its parts: `conv_backward_input_sums`, `column_sums_finish` |
/// | the tensor-core kernels | 10 to 18 | refused |
///
/// The plan takes a fused kernel only where the device allows what it binds, else its parts
/// (`gdn_wgsl::plan`). `GDN_MAX_STORAGE_BUFFERS=n` ([`ContextOptions::max_storage_buffers`]) lays
/// the layer out as such a device would. So on a WebGPU adapter with 10, the chunked family in f32
/// runs forward and backward and the recurrent family's backward does not. On a device made with
/// the default 8 ([`Context::from_wgpu`]), a kernel over it is refused with [`Error::Limit`]
/// naming `max_storage_buffers_per_shader_stage`.
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

struct Inner {
    device: wgpu::Device,
    queue: wgpu::Queue,
    info: wgpu::AdapterInfo,
    bounds_checks: BoundsChecks,
    /// Whether the tensor-core kernels run here, or why not.
    tensor_cores: Result<()>,
    pipelines: PipelineCache,
}

/// The features the tensor-core kernels need beyond the defaults.
const TENSOR_CORE_FEATURES: wgpu::Features =
    wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX.union(wgpu::Features::SHADER_F16).union(wgpu::Features::SUBGROUP);

/// The variable that offers the tensor-core kernels on an adapter whose cooperative matrices do not
/// advertise the 16 × 16 × 16 f16 → f32 configuration (a tool for testing them on a CPU: Mesa 26's
/// lavapipe advertises 8 × 8 × 8 only yet computes 16 × 16 × 16 correctly, `dev/lavapipe-coop.sh`).
pub const UNADVERTISED_TENSOR_CORES: &str = "GDN_TENSOR_CORES_UNADVERTISED";

/// Whether `adapter` has what the tensor-core kernels need: the features, the 16 × 16 × 16
/// f16 → f32 cooperative-matrix configuration (or [`UNADVERTISED_TENSOR_CORES`] set to 1), and
/// subgroups of at most 32 invocations (a workgroup of 256 gives eight subgroups their own output
/// blocks, `gdn-wgsl/templates/tensor_core/tensor_core.wgsl`).
fn tensor_core_support(adapter: &wgpu::Adapter, info: &wgpu::AdapterInfo) -> Result<()> {
    let unsupported = |reason: String| Err(Error::Unsupported { option: "precision tensor-core", reason });
    let missing = TENSOR_CORE_FEATURES - adapter.features();
    if !missing.is_empty() {
        return unsupported(format!("the adapter {} lacks the wgpu features {missing:?}", info.name));
    }
    let f16 = wgpu::CooperativeScalarType::F16;
    let f32 = wgpu::CooperativeScalarType::F32;
    let has_16x16x16 = adapter
        .cooperative_matrix_properties()
        .iter()
        .any(|p| (p.m_size, p.n_size, p.k_size, p.ab_type, p.cr_type) == (16, 16, 16, f16, f32));
    let unadvertised = std::env::var(UNADVERTISED_TENSOR_CORES).is_ok_and(|v| v == "1");
    if !has_16x16x16 && !unadvertised {
        return unsupported(format!(
            "the adapter {} offers EXPERIMENTAL_COOPERATIVE_MATRIX but not its 16×16×16 f16 → f32 configuration",
            info.name
        ));
    }
    if info.subgroup_max_size > 32 {
        return unsupported(format!(
            "the kernels need subgroups of at most 32 invocations; the adapter {} has {} to {}",
            info.name, info.subgroup_min_size, info.subgroup_max_size
        ));
    }
    Ok(())
}

impl Context {
    /// The adapter chosen by [`ContextOptions::from_env`]: among those that match, the most
    /// capable (a discrete GPU before an integrated one before a software rasteriser).
    /// A `WGPU_BACKEND` naming something that is not a backend is an [`Error::Environment`].
    pub fn new() -> Result<Self> {
        if let Ok(value) = std::env::var("WGPU_BACKEND") {
            check_backends(&value)?;
        }
        if let Ok(value) = std::env::var("GDN_MAX_STORAGE_BUFFERS") {
            check_storage_buffers(&value)?;
        }
        if let Ok(value) = std::env::var("GDN_BOUNDS_CHECKS") {
            check_bounds_checks(&value)?;
        }
        Self::with_options(&ContextOptions::from_env())
    }

    /// The most capable adapter that matches `options`.
    pub fn with_options(options: &ContextOptions) -> Result<Self> {
        let backends = options.backends.unwrap_or(wgpu::Backends::PRIMARY);
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends,
            ..wgpu::InstanceDescriptor::new_without_display_handle_from_env()
        });
        let wanted = options.adapter_name.as_deref().map(str::to_lowercase);
        let adapter = pollster::block_on(instance.enumerate_adapters(backends))
            .into_iter()
            .filter(|a| wanted.as_ref().is_none_or(|w| a.get_info().name.to_lowercase().contains(w)))
            .min_by_key(|a| rank(&a.get_info()))
            .ok_or_else(|| Error::NoAdapter { filter: describe_filter(backends, options) })?;
        let info = adapter.get_info();
        let tensor_cores = tensor_core_support(&adapter, &info);
        // Subgroups wherever offered: the decode step's and the recurrent forward's row sums are
        // shuffles where they are wide enough (`has_wide_subgroups`). Timestamps inside passes
        // wherever offered, for `Tape::profile_in_pass`.
        let mut optional =
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES | wgpu::Features::SUBGROUP;
        if tensor_cores.is_ok() {
            optional |= TENSOR_CORE_FEATURES;
        }
        let mut required_limits = adapter.limits();
        if let Some(most) = options.max_storage_buffers {
            let limit = &mut required_limits.max_storage_buffers_per_shader_stage;
            *limit = (*limit).min(most);
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("gdn"),
            required_features: adapter.features() & optional,
            required_limits,
            memory_hints: wgpu::MemoryHints::Performance,
            // SAFETY: the one experimental feature requested is cooperative matrices, and only when
            // the adapter offers the 16 × 16 × 16 f16 → f32 configuration the tensor-core kernels
            // use; those kernels are validated by naga at build time and checked against the f64
            // reference on such a device (the GPU suite, `bench/side_by_side.sh tests`).
            experimental_features: unsafe { wgpu::ExperimentalFeatures::enabled() },
            ..Default::default()
        }))
        .map_err(|e| Error::RequestDevice { adapter: info.name.clone(), reason: e.to_string() })?;
        Ok(Self::assemble(device, queue, info, options.bounds_checks, tensor_cores))
    }

    /// A context on a device and queue the caller already owns (an engine's), made from `adapter`.
    ///
    /// Nothing is requested: the f32 kernels need no feature. A kernel whose needs pass the
    /// device's limits (workgroup memory, storage buffers per stage, binding sizes) is refused with
    /// an [`Error::Limit`] naming the limit when it is built, not before (see [`Context`] for the
    /// kernels that bind more than wgpu's default 8 storage buffers). Timing falls back to wall
    /// time without `TIMESTAMP_QUERY`.
    ///
    /// [`Precision::TensorCore`] is offered when the adapter has the 16 × 16 × 16 f16 → f32
    /// configuration and the device was created with `EXPERIMENTAL_COOPERATIVE_MATRIX`,
    /// `SHADER_F16` and `SUBGROUP` ([`Context::supports`] names what is missing). A device made
    /// without `SUBGROUP` computes the row sums through workgroup memory
    /// ([`Context::has_wide_subgroups`]).
    ///
    /// The caller keeps its own clones of `device` and `queue`; the layer submits its work on this
    /// queue.
    ///
    /// ```no_run
    /// # use gdn_train::wgpu;
    /// # fn engine(adapter: &wgpu::Adapter, device: &wgpu::Device, queue: &wgpu::Queue) {
    /// use gdn_train::{BoundsChecks, Context};
    /// let ctx = Context::from_wgpu(adapter, device.clone(), queue.clone(), BoundsChecks::On);
    /// # }
    /// ```
    pub fn from_wgpu(
        adapter: &wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
        bounds_checks: BoundsChecks,
    ) -> Self {
        let info = adapter.get_info();
        let tensor_cores = tensor_core_support(adapter, &info).and_then(|()| {
            let missing = TENSOR_CORE_FEATURES - device.features();
            if missing.is_empty() {
                return Ok(());
            }
            Err(Error::Unsupported {
                option: "precision tensor-core",
                reason: format!("the device was created without the wgpu features {missing:?}"),
            })
        });
        Self::assemble(device, queue, info, bounds_checks, tensor_cores)
    }

    fn assemble(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        bounds_checks: BoundsChecks,
        tensor_cores: Result<()>,
    ) -> Self {
        let pipelines = PipelineCache::default();
        Self { inner: Arc::new(Inner { device, queue, info, bounds_checks, tensor_cores, pipelines }) }
    }

    /// Whether the device computes in `precision`, or why not (naming the missing feature).
    ///
    /// [`Precision::F32`] runs everywhere. [`Precision::TensorCore`] needs wgpu's
    /// `EXPERIMENTAL_COOPERATIVE_MATRIX` with the 16 × 16 × 16 f16 → f32 configuration,
    /// `SHADER_F16`, `SUBGROUP`, and subgroups of at most 32 invocations. WebGPU has no
    /// cooperative matrices. Elsewhere [`crate::Tape::new`] refuses it with [`Error::Unsupported`];
    /// [`crate::UNADVERTISED_TENSOR_CORES`] offers it on an adapter that computes the configuration
    /// without advertising it (Mesa 26's lavapipe, `dev/lavapipe-coop.sh`).
    pub fn supports(&self, precision: Precision) -> Result<()> {
        match precision {
            Precision::TensorCore => self.inner.tensor_cores.clone(),
            _ => Ok(()),
        }
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.inner.device
    }

    /// Its queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.inner.queue
    }

    /// What the adapter says of itself.
    pub fn adapter_info(&self) -> &wgpu::AdapterInfo {
        &self.inner.info
    }

    /// True for a software rasteriser (lavapipe, WARP, SwiftShader): correct, but no GPU.
    ///
    /// Known limits of lavapipe, not of the kernels:
    ///
    /// - It computes wrong results, with no error, for a kernel invocation that loops more than
    ///   65 535 times in all: gallivm's loop limiter (`LP_MAX_TGSI_LOOP_ITERATIONS`) is one counter
    ///   per shader function, counting every iteration of every loop. Huge conv tap counts
    ///   (`--kk 65537`) and very long checkpoint intervals of wide heads reach it; the test shapes
    ///   stay far below. Before Mesa 26 the chunked family's passes over chunks reach it past about
    ///   28 000 tokens of one sequence: there a chunked plan takes sequences of at most
    ///   [`crate::LAVAPIPE_CHUNKED_TOKENS`] tokens ([`Context::longest_chunked_sequence`]), and a
    ///   `WindowedTape` cuts longer ones.
    /// - Mesa 22.3's lavapipe computes the one-workgroup recurrent backward
    ///   (`recurrence_backward`) wrong past about 780 tokens of one sequence at `dk = dv = 128`
    ///   (the NaN poison shows it; Mesa 26 computes it right). On that driver, long sequences of
    ///   many heads take the chunked family; batches of few heads take the column-block backward,
    ///   which it computes right.
    pub fn is_software(&self) -> bool {
        self.inner.info.device_type == wgpu::DeviceType::Cpu
    }

    /// The family a tape with `options` takes on this context when they name none
    /// ([`Family::picked`]: from the adapter's kind, the device's storage buffers per stage,
    /// whether the options record the backward, and their precision).
    pub fn picked_family(&self, options: &TapeOptions) -> Family {
        let storage_buffers = self.device().limits().max_storage_buffers_per_shader_stage;
        Family::picked(self.is_software(), storage_buffers, options.backward, options.precision)
    }

    /// The family a tape with `options` takes on this context for a batch (its sequence
    /// `offsets`) of these heads when the options name none ([`Family::picked_for_batch`]).
    ///
    /// The choice follows what was measured fastest (BENCHMARKS.md):
    ///
    /// | the tape | family |
    /// | --- | --- |
    /// | tensor cores | chunked (its products are theirs) |
    /// | forward only, f32 | recurrent |
    /// | training in f32 on a GPU, few heads, no sequence past [`gdn_wgsl::plan::RECURRENT_TRAINING_TOKENS`] | recurrent, a checkpoint every [`gdn_wgsl::plan::RECURRENT_TRAINING_INTERVAL`] tokens |
    /// | training in f32 on a GPU, more heads, no sequence past [`gdn_wgsl::plan::SHORT_RECURRENT_TRAINING_TOKENS`] | recurrent |
    /// | other training in f32 on a GPU | chunked |
    /// | a software adapter | recurrent |
    /// | training where the device binds fewer than the 12 storage buffers the recurrent backward binds (WebGPU adapters) | chunked |
    ///
    /// Every tape then fits the knob to its batch ([`Family::fitted`]: no interval or chunk longer
    /// than the longest sequence needs); [`crate::Tape::family`] says what runs.
    pub fn picked_family_for_batch(&self, config: &LayerConfig, offsets: &[usize], options: &TapeOptions) -> Family {
        let storage_buffers = self.device().limits().max_storage_buffers_per_shader_stage;
        let (software, backward, precision) = (self.is_software(), options.backward, options.precision);
        Family::picked_for_batch(software, storage_buffers, backward, precision, config, offsets)
    }

    /// One line naming the adapter, its backend and driver.
    pub fn describe(&self) -> String {
        let i = &self.inner.info;
        let software = if self.is_software() { " — software rasteriser, no GPU" } else { "" };
        let checks = if self.bounds_checks() { "" } else { ", bounds checks off" };
        format!(
            "{} ({:?}, {:?}, driver {} {}{checks}){software}",
            i.name, i.backend, i.device_type, i.driver, i.driver_info
        )
    }

    /// Whether the device sums over lanes by subgroup shuffles: it has wgpu's `SUBGROUP` and
    /// subgroups of at least [`gdn_wgsl::LANE_BLOCK`] invocations (a block of the decode step's and
    /// the recurrent forward's interleaved column groups then lies in one subgroup).
    ///
    /// The recurrent forward (both its forms), the column-block recurrent backward and the decode
    /// step sum over a state's rows this way where it is true (NVIDIA, AMD). Elsewhere they sum
    /// through workgroup memory, in their portable variants (lavapipe, whose subgroups are 8 wide,
    /// and a device made without the feature). [`Context::new`] requests `SUBGROUP` wherever it is
    /// offered. The two forms round differently, within the same bars: an engine that wants its
    /// device to compute bitwise what `Context::new`'s does requests `SUBGROUP` where offered.
    pub fn has_wide_subgroups(&self) -> bool {
        self.device().features().contains(wgpu::Features::SUBGROUP)
            && self.inner.info.subgroup_min_size >= gdn_wgsl::LANE_BLOCK
    }

    /// Whether naga guards the kernels' buffer accesses.
    pub fn bounds_checks(&self) -> bool {
        self.inner.bounds_checks == BoundsChecks::On
    }

    pub(crate) fn pipelines(&self) -> &PipelineCache {
        &self.inner.pipelines
    }

    /// The longest sequence a chunked tape takes on this driver, where its loop budget caps it
    /// (lavapipe before Mesa 26: [`crate::LAVAPIPE_CHUNKED_TOKENS`]); `None` elsewhere.
    pub fn longest_chunked_sequence(&self) -> Option<usize> {
        crate::loop_budget::has_loop_budget(self).then_some(crate::LAVAPIPE_CHUNKED_TOKENS)
    }

    /// Whether `other` is this context or a clone of it (wgpu's device ids repeat across
    /// instances, so two devices comparing equal may still be two).
    pub(crate) fn same(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Blocks until the queue's work is done.
    pub fn wait(&self) -> Result<()> {
        self.device()
            .poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| Error::Device { during: "waiting for the queue".into(), message: e.to_string() })
    }
}

/// Checks that every comma-separated name of a `WGPU_BACKEND` value is a wgpu backend (wgpu skips
/// one that is not, and for `bogus` alone searches no backend at all).
fn check_backends(value: &str) -> Result<()> {
    for name in value.split(',') {
        if wgpu::Backends::from_comma_list(name).is_empty() {
            return Err(Error::Environment {
                variable: "WGPU_BACKEND",
                value: value.into(),
                reason: format!("{:?} is not a backend; backends: vulkan, metal, dx12, gl, webgpu", name.trim()),
            });
        }
    }
    Ok(())
}

/// `GDN_MAX_STORAGE_BUFFERS` must be a count.
fn check_storage_buffers(value: &str) -> Result<()> {
    match value.trim().parse::<u32>() {
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Environment {
            variable: "GDN_MAX_STORAGE_BUFFERS",
            value: value.into(),
            reason: format!("{e}: a count of storage buffers per shader stage, e.g. 12"),
        }),
    }
}

/// `GDN_BOUNDS_CHECKS` must be `0` (off) or `1` (on, the default).
fn check_bounds_checks(value: &str) -> Result<()> {
    match value.trim() {
        "0" | "1" => Ok(()),
        _ => Err(Error::Environment {
            variable: "GDN_BOUNDS_CHECKS",
            value: value.into(),
            reason: "0 turns the kernels' bounds checks off, 1 keeps them on".into(),
        }),
    }
}

/// Lower is more capable.
fn rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let device = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    };
    let backend = if info.backend == wgpu::Backend::Gl { 1 } else { 0 };
    (device, backend)
}

fn describe_filter(backends: wgpu::Backends, options: &ContextOptions) -> String {
    let name = options.adapter_name.as_ref().map(|n| format!(" whose name contains {n:?}")).unwrap_or_default();
    format!(" (backends {backends:?}{name})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_variable_naming_no_backend_is_refused_by_name() {
        assert!(check_backends("vulkan").is_ok());
        assert!(check_backends("Vulkan, gl").is_ok());
        let err = check_backends("vulkan,bogus").unwrap_err();
        assert_eq!(
            err.to_string(),
            "WGPU_BACKEND=\"vulkan,bogus\": \"bogus\" is not a backend; backends: vulkan, metal, dx12, gl, webgpu"
        );
        assert!(matches!(check_backends(""), Err(Error::Environment { variable: "WGPU_BACKEND", .. })));
    }
}
