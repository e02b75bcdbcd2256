//! The kernels the browser compiles: the generated WGSL of every f32 kernel of gdn-wgsl for a few
//! head sizes, written as files with a manifest (`kernels/manifest.json`) that gives each one's
//! bindings as WebGPU binding types, its storage-buffer count and its workgroup size and memory, so
//! that the page can build an explicit bind group layout and weigh the kernel against the adapter's
//! limits. Tint (Chrome's WGSL compiler) is stricter than naga in places; this is how we find out.
//!
//! Files are named like `GDN_KERNEL_DIR` expects them (`{kernel}-{dk}x{dv}-f32.wgsl`), so that a
//! fix tried in the browser can be tried on a tape too; a kernel whose source does not depend on
//! the head dims is written once, as `{kernel}-f32.wgsl`. The tensor-core kernels are listed as
//! skipped: they need `shader-f16` and cooperative matrices (wgpu's extension, which WebGPU does
//! not have), and SwiftShader offers neither. So are the kernels that sum by subgroup shuffles
//! ([`Kernel::needs_wide_subgroups`]): Tint wants `enable subgroups;`, which naga does not parse;
//! their templates are compiled as their portable twins.

use gdn_wgsl::{BindingKind, HeadDims, Kernel, Precision, kernel_source};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

/// Head sizes `(dk, dv)` the browser compiles every kernel for.
pub const DIMS: [(usize, usize); 4] = [(16, 16), (32, 32), (64, 64), (128, 128)];

/// The WebGPU binding type of a binding kind (`GPUBufferBindingType`).
pub fn binding_type(kind: BindingKind) -> &'static str {
    match kind {
        BindingKind::LayerUniform | BindingKind::ReduceUniform => "uniform",
        BindingKind::ReadU32 | BindingKind::ReadF32 | BindingKind::ReadF16 => "read-only-storage",
        BindingKind::WriteF32
        | BindingKind::WriteVec4F32
        | BindingKind::WriteU32
        | BindingKind::WriteF16
        | BindingKind::Counters => "storage",
    }
}

/// Writes every variant's WGSL (of the kernels named in `only`, all when it is empty) into `dir` and
/// the manifest beside them; returns how many variants. A variant whose WGSL is a key of `ran` is
/// marked with the layer case that runs it (`ranIn`), and the page does not compile it twice.
pub fn write(dir: &Path, only: &[String], ran: &HashMap<String, String>) -> Result<usize, String> {
    if let Some(unknown) = only.iter().find(|name| !Kernel::ALL.iter().any(|k| k.name() == name.as_str())) {
        let names: Vec<&str> = Kernel::ALL.iter().map(|k| k.name()).collect();
        return Err(format!("unknown kernel {unknown:?}; kernels: {}", names.join(", ")));
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("clearing {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut variants = Vec::new();
    let mut skipped = Vec::new();
    for kernel in Kernel::ALL.into_iter().filter(|k| only.is_empty() || only.iter().any(|n| n == k.name())) {
        if kernel.precision() != Precision::F32 {
            skipped.push(json!({
                "kernel": kernel.name(),
                "reason": "tensor-core kernel: needs shader-f16 and cooperative matrices (wgpu's extension; \
                           WebGPU has none, SwiftShader no shader-f16)",
            }));
            continue;
        }
        if kernel.needs_wide_subgroups() {
            skipped.push(json!({
                "kernel": kernel.name(),
                "reason": "sums by subgroup shuffles: needs subgroups at least 32 wide (and `enable subgroups;`, \
                           which naga does not parse); its template is compiled here as its portable twin",
            }));
            continue;
        }
        let dims_list: Vec<(usize, usize)> = if kernel.depends_on_dims() { DIMS.to_vec() } else { vec![DIMS[0]] };
        for (dk, dv) in dims_list {
            let dims = HeadDims::new(dk, dv).map_err(|e| e.to_string())?;
            if !kernel.generated_for(dims) {
                continue;
            }
            let source = kernel_source(kernel, dims).map_err(|e| e.to_string())?;
            let file = if kernel.depends_on_dims() {
                format!("{}-{dk}x{dv}-f32.wgsl", kernel.name())
            } else {
                format!("{}-f32.wgsl", kernel.name())
            };
            std::fs::write(dir.join(&file), &source.wgsl).map_err(|e| format!("writing {file}: {e}"))?;
            let bindings: Vec<Value> = source
                .bindings
                .iter()
                .map(|b| json!({ "name": b.name, "kind": format!("{:?}", b.kind), "type": binding_type(b.kind) }))
                .collect();
            let storage = source.bindings.iter().filter(|b| binding_type(b.kind) != "uniform").count();
            variants.push(json!({
                "kernel": kernel.name(),
                "dims": if kernel.depends_on_dims() { json!([dk, dv]) } else { Value::Null },
                "path": file,
                "bindings": bindings,
                "storageBuffers": storage,
                "workgroupSize": source.workgroup_size,
                "workgroupBytes": source.workgroup_bytes,
                "ranIn": ran.get(&source.wgsl),
            }));
        }
    }
    let count = variants.len();
    let manifest = json!({ "precision": "f32", "dims": DIMS, "kernels": variants, "skipped": skipped });
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("manifest.json"), text).map_err(|e| format!("writing the kernel manifest: {e}"))?;
    Ok(count)
}
