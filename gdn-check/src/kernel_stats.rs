//! `gdn-check kernel-stats`: what the Vulkan driver says of each generated kernel once compiled —
//! registers per invocation, spills, shared memory and whatever else it reports through
//! `VK_KHR_pipeline_executable_properties` — the figures that decide how many workgroups an SM (or
//! CU) holds, which no timing shows. wgpu does not enable that extension, so this opens its own
//! Vulkan device (ash) beside none, compiles the WGSL to SPIR-V with naga as wgpu's Vulkan backend
//! does (SPIR-V 1.6, bounds checks on buffer indices left to the driver's robustness where it has
//! it, workgroup memory zeroed by the driver) and asks for the statistics of a pipeline built with
//! `CAPTURE_STATISTICS`. A kernel in `GDN_KERNEL_DIR` replaces the generated one, as in a tape.

use ash::vk;
use gdn_wgsl::{BindingKind, HeadDims, Kernel, kernel_source};
use std::ffi::CString;

/// Which kernels to compile.
#[derive(Debug, clap::Args)]
pub struct KernelStatsArgs {
    /// Key head dim.
    #[arg(long, default_value_t = 128)]
    dk: usize,
    /// Value head dim.
    #[arg(long, default_value_t = 128)]
    dv: usize,
    /// Only kernels whose name contains this (e.g. `tensor_core_`); every kernel generated for the
    /// dims when absent.
    #[arg(long)]
    kernel: Option<String>,
}

/// A Vulkan device with pipeline statistics enabled, and what is needed to free it.
struct StatsDevice {
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    executables: ash::khr::pipeline_executable_properties::Device,
    name: String,
}

impl Drop for StatsDevice {
    fn drop(&mut self) {
        // SAFETY: every object made from the device was destroyed by `statistics`.
        unsafe {
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}

/// Prints the statistics of each kernel, one line per kernel.
pub fn command(args: &KernelStatsArgs) -> Result<bool, String> {
    let dims = HeadDims::new(args.dk, args.dv).map_err(|e| e.to_string())?;
    let device = StatsDevice::open()?;
    println!("device: {}; kernels for {dims}", device.name);
    let kernels = Kernel::ALL
        .into_iter()
        .filter(|k| k.generated_for(dims) && args.kernel.as_ref().is_none_or(|name| k.name().contains(name.as_str())));
    for kernel in kernels {
        let source = kernel_source(kernel, dims).map_err(|e| e.to_string())?;
        let source = gdn_train::kernel_override(source).map_err(|e| e.to_string())?;
        let words = spirv(&source.wgsl).map_err(|e| format!("{}: {e}", kernel.name()))?;
        let line = match device.statistics(&words, source.bindings) {
            Ok(stats) => stats.join(", "),
            Err(e) => format!("not compiled: {e}"),
        };
        println!("{:<24} {:>4} threads {:>6} B  {line}", kernel.name(), source.workgroup_size, source.workgroup_bytes);
    }
    Ok(true)
}

/// The kernel's SPIR-V, as wgpu's Vulkan backend would write it on a Vulkan 1.3 device.
fn spirv(wgsl: &str) -> Result<Vec<u32>, String> {
    use naga::back::spv;
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| e.emit_to_string(wgsl))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| e.emit_to_string(wgsl))?;
    let options = spv::Options {
        lang_version: (1, 6),
        flags: spv::WriterFlags::empty(),
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: naga::proc::BoundsCheckPolicy::Restrict,
            buffer: naga::proc::BoundsCheckPolicy::Unchecked,
            image_load: naga::proc::BoundsCheckPolicy::Unchecked,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::Native,
        force_loop_bounding: false,
        emit_int_div_checks: false,
        ..spv::Options::default()
    };
    let pipeline =
        spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: gdn_wgsl::ENTRY_POINT.into() };
    spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| format!("SPIR-V backend: {e}"))
}

/// A Vulkan error during `what`.
fn vk_error(what: &str) -> impl Fn(vk::Result) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl StatsDevice {
    /// The first physical device that offers pipeline statistics, with every feature it has
    /// enabled (cooperative matrices, f16, robustness included).
    fn open() -> Result<Self, String> {
        // SAFETY: the Vulkan calls follow the specification's valid usage: every structure lives
        // until the call that reads it returns, and handles are used only on the objects they came from.
        unsafe {
            let entry = ash::Entry::load().map_err(|e| format!("loading Vulkan: {e}"))?;
            let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
            let instance = entry
                .create_instance(&vk::InstanceCreateInfo::default().application_info(&app), None)
                .map_err(vk_error("creating a Vulkan instance"))?;
            let physical = instance.enumerate_physical_devices().map_err(vk_error("listing devices"))?;
            let wanted = [
                ash::khr::pipeline_executable_properties::NAME,
                ash::khr::cooperative_matrix::NAME,
                ash::ext::robustness2::NAME,
            ];
            for pd in physical {
                let available = instance.enumerate_device_extension_properties(pd).unwrap_or_default();
                let has = |name: &std::ffi::CStr| available.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
                if !has(wanted[0]) {
                    continue;
                }
                let extensions: Vec<*const std::ffi::c_char> =
                    wanted.iter().filter(|n| has(n)).map(|n| n.as_ptr()).collect();
                let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
                let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
                let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
                let mut stats = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
                let mut coop = vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default();
                let mut robust = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
                let mut features = vk::PhysicalDeviceFeatures2::default()
                    .push_next(&mut v11)
                    .push_next(&mut v12)
                    .push_next(&mut v13)
                    .push_next(&mut stats);
                if has(wanted[1]) {
                    features = features.push_next(&mut coop);
                }
                if has(wanted[2]) {
                    features = features.push_next(&mut robust);
                }
                instance.get_physical_device_features2(pd, &mut features);
                let family = instance
                    .get_physical_device_queue_family_properties(pd)
                    .iter()
                    .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
                    .ok_or("no compute queue")? as u32;
                let priorities = [1.0];
                let queues =
                    [vk::DeviceQueueCreateInfo::default().queue_family_index(family).queue_priorities(&priorities)];
                let info = vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .enabled_extension_names(&extensions)
                    .push_next(&mut features);
                let device = instance.create_device(pd, &info, None).map_err(vk_error("creating the device"))?;
                let props = instance.get_physical_device_properties(pd);
                let name = props.device_name_as_c_str().map_or("?".into(), |n| n.to_string_lossy().into_owned());
                let executables = ash::khr::pipeline_executable_properties::Device::new(&instance, &device);
                return Ok(Self { _entry: entry, instance, device, executables, name });
            }
            instance.destroy_instance(None);
            Err("no Vulkan device offers VK_KHR_pipeline_executable_properties".into())
        }
    }

    /// Compiles `words` with its bindings and returns the driver's statistics as `name value` texts.
    fn statistics(&self, words: &[u32], bindings: &[gdn_wgsl::Binding]) -> Result<Vec<String>, String> {
        let d = &self.device;
        let layout_bindings: Vec<vk::DescriptorSetLayoutBinding> = (0u32..)
            .zip(bindings)
            .map(|(slot, b)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(slot)
                    .descriptor_type(match b.kind {
                        BindingKind::LayerUniform | BindingKind::ReduceUniform => vk::DescriptorType::UNIFORM_BUFFER,
                        _ => vk::DescriptorType::STORAGE_BUFFER,
                    })
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let entry = CString::new(gdn_wgsl::ENTRY_POINT).map_err(|e| e.to_string())?;
        // SAFETY: as in `open`; every object made here is destroyed before returning.
        unsafe {
            let set = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&layout_bindings),
                    None,
                )
                .map_err(vk_error("descriptor set layout"))?;
            let sets = [set];
            let layout = d
                .create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&sets), None)
                .map_err(vk_error("pipeline layout"))?;
            let module = d
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(words), None)
                .map_err(vk_error("shader module"))?;
            let stage = vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::COMPUTE)
                .module(module)
                .name(&entry);
            let info = vk::ComputePipelineCreateInfo::default()
                .stage(stage)
                .layout(layout)
                .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR);
            let result = d.create_compute_pipelines(vk::PipelineCache::null(), &[info], None);
            let out = match result {
                Ok(pipelines) => {
                    let stats = self.read(pipelines[0]);
                    d.destroy_pipeline(pipelines[0], None);
                    stats
                }
                Err((_, e)) => Err(format!("creating the pipeline: {e}")),
            };
            d.destroy_shader_module(module, None);
            d.destroy_pipeline_layout(layout, None);
            d.destroy_descriptor_set_layout(set, None);
            out
        }
    }

    /// The statistics of every executable of `pipeline`.
    fn read(&self, pipeline: vk::Pipeline) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        // SAFETY: `pipeline` was created with CAPTURE_STATISTICS on this device.
        unsafe {
            let executables = self
                .executables
                .get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(pipeline))
                .map_err(vk_error("executable properties"))?;
            for index in 0..executables.len() as u32 {
                let which = vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(index);
                let stats =
                    self.executables.get_pipeline_executable_statistics(&which).map_err(vk_error("statistics"))?;
                for s in stats {
                    let name = s.name_as_c_str().map_or("?".into(), |n| n.to_string_lossy().into_owned());
                    let value = match s.format {
                        vk::PipelineExecutableStatisticFormatKHR::BOOL32 => s.value.b32.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                        vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => format!("{:.3}", s.value.f64),
                        _ => "?".into(),
                    };
                    out.push(format!("{name} {value}"));
                }
            }
        }
        Ok(out)
    }
}
