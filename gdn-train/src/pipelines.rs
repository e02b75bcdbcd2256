//! Compiled pipelines, one per kernel variant, built on first use and cached for the device's life.
//! Building a pipeline checks the kernel's needs against the device's limits first, so that a
//! limit too small is a typed error naming it rather than a validation failure.

use crate::{Context, Error, Result};
use gdn_wgsl::{BindingKind, HeadDims, Kernel, KernelSource};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// A kernel variant ready to dispatch.
pub(crate) struct KernelPipeline {
    pub source: KernelSource,
    pub layout: wgpu::BindGroupLayout,
    pub pipeline: wgpu::ComputePipeline,
}

/// A kernel variant: head dims are `None` for kernels that do not depend on them.
type VariantKey = (Kernel, Option<HeadDims>);

/// A variant's pipeline once built; locked while it is being built.
type Slot = Arc<Mutex<Option<Arc<KernelPipeline>>>>;

/// Pipelines by variant. Each variant has its own slot, so that threads needing different variants
/// compile them at the same time (the driver's compiler runs on the calling thread), and threads
/// needing the same one wait for a single build.
#[derive(Default)]
pub(crate) struct PipelineCache {
    slots: Mutex<HashMap<VariantKey, Slot>>,
}

impl PipelineCache {
    /// The pipeline of `kernel` for `dims`, built on first use; refused where the device lacks
    /// what the kernel's precision needs.
    pub fn get(&self, ctx: &Context, kernel: Kernel, dims: HeadDims) -> Result<Arc<KernelPipeline>> {
        let key = (kernel, kernel.depends_on_dims().then_some(dims));
        let slot = self.slots.lock().unwrap_or_else(PoisonError::into_inner).entry(key).or_default().clone();
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        ctx.supports(kernel.precision())?;
        let pipeline = Arc::new(build(ctx, overridden(gdn_wgsl::kernel_source(kernel, dims)?)?)?);
        *slot = Some(pipeline.clone());
        Ok(pipeline)
    }
}

/// The directory named by `GDN_KERNEL_DIR`, if any, may hold a kernel's WGSL in place of the
/// generated one, as `{kernel}-{dk}x{dv}-{precision}.wgsl` (e.g. `chunk_grad-128x128-f32.wgsl`):
/// a tool for trying a kernel edit on a device without rebuilding the binaries. Its interface
/// (bindings, workgroup size) must stay that of the generated kernel.
pub fn overridden(mut source: KernelSource) -> Result<KernelSource> {
    let Some(dir) = std::env::var_os("GDN_KERNEL_DIR") else {
        return Ok(source);
    };
    let name =
        format!("{}-{}x{}-{}.wgsl", source.kernel.name(), source.dims.dk, source.dims.dv, source.precision.name());
    let path = std::path::Path::new(&dir).join(name);
    if path.exists() {
        source.wgsl = std::fs::read_to_string(&path)
            .map_err(|e| Error::Device { during: format!("reading {}", path.display()), message: e.to_string() })?;
        eprintln!("GDN_KERNEL_DIR: {} from {}", source.kernel.name(), path.display());
    }
    Ok(source)
}

/// Checks the kernel's needs against the device's limits.
fn check_limits(limits: &wgpu::Limits, source: &KernelSource) -> Result<()> {
    let what = || format!("kernel {} ({})", source.kernel.name(), source.dims);
    let needs = [
        (
            "max_compute_invocations_per_workgroup",
            u64::from(source.workgroup_size),
            u64::from(limits.max_compute_invocations_per_workgroup),
        ),
        (
            "max_compute_workgroup_size_x",
            u64::from(source.workgroup_size),
            u64::from(limits.max_compute_workgroup_size_x),
        ),
        (
            "max_compute_workgroup_storage_size",
            u64::from(source.workgroup_bytes),
            u64::from(limits.max_compute_workgroup_storage_size),
        ),
        (
            "max_storage_buffers_per_shader_stage",
            u64::from(source.kernel.storage_buffers()),
            u64::from(limits.max_storage_buffers_per_shader_stage),
        ),
        ("max_bindings_per_bind_group", source.bindings.len() as u64, u64::from(limits.max_bindings_per_bind_group)),
    ];
    match needs.into_iter().find(|(_, needed, available)| needed > available) {
        Some((limit, needed, available)) => Err(Error::Limit { what: what(), limit, needed, available }),
        None => Ok(()),
    }
}

fn build(ctx: &Context, source: KernelSource) -> Result<KernelPipeline> {
    let device = ctx.device();
    check_limits(&device.limits(), &source)?;
    let label = format!("{} {}", source.kernel.name(), source.dims);
    let entries: Vec<wgpu::BindGroupLayoutEntry> = source
        .bindings
        .iter()
        .enumerate()
        .map(|(slot, binding)| wgpu::BindGroupLayoutEntry {
            binding: slot as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match binding.kind {
                    BindingKind::LayerUniform | BindingKind::ReduceUniform => wgpu::BufferBindingType::Uniform,
                    BindingKind::ReadU32 | BindingKind::ReadF32 | BindingKind::ReadF16 => {
                        wgpu::BufferBindingType::Storage { read_only: true }
                    }
                    BindingKind::WriteF32
                    | BindingKind::WriteVec4F32
                    | BindingKind::WriteU32
                    | BindingKind::WriteF16
                    | BindingKind::Counters => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let layout =
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(&label), entries: &entries });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(&label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let mut checks = wgpu::ShaderRuntimeChecks::checked();
    checks.bounds_checks = ctx.bounds_checks();
    checks.force_loop_bounding = false;
    checks.int_div_checks = false;
    let descriptor = wgpu::ShaderModuleDescriptor {
        label: Some(&label),
        source: wgpu::ShaderSource::Wgsl(source.wgsl.as_str().into()),
    };
    // SAFETY: every loop of the kernels is bounded by a generated constant or by a count the tape
    // computed from validated sizes, so none is infinite; every divisor is a generated constant or
    // a size `Tape::new` validated as at least 1 (nv, rep, kk, channels, checkpoint interval), so
    // none is zero. Bounds checks stay on unless the caller turned them off (`ContextOptions`).
    let module = unsafe { device.create_shader_module_trusted(descriptor, checks) };
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&label),
        layout: Some(&pipeline_layout),
        module: &module,
        entry_point: Some(gdn_wgsl::ENTRY_POINT),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(Error::Device { during: format!("building pipeline {label}"), message: e.to_string() });
    }
    Ok(KernelPipeline { source, layout, pipeline })
}
