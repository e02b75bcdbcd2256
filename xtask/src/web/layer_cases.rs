//! The layer's cases for the browser: for each shape, gdn-wgsl's plan of the layer (the chunked
//! family in f32, whose kernels fit the 10 storage buffers per stage that Chromium's SwiftShader adapter offers; the recurrent backward
//! binds 12) written as the page's `plan.json`, with the WGSL of every kernel it runs, the inputs
//! gdn-check draws as the spec says, and gdn-ref's outputs and gradients as the expected values,
//! each with its bar (widened by the cancellation of a sum, as on a tape). The page runs the stages
//! in order and compares: the same plan data gdn-train binds, run by another host.

use super::kernels::binding_type;
use gdn_check::{Case, Expected};
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, Layer, LayerConfig, Tensor};
use gdn_wgsl::plan::{BufferId, Contents, Family, LayerPlan, PlanOptions, Stage, Storage};
use gdn_wgsl::{Precision, kernel_source};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;

/// Workgroups per grid dimension that WebGPU guarantees (`maxComputeWorkgroupsPerDimension`).
const MAX_WORKGROUPS: usize = 65_535;

/// The shapes the browser checks: head dims 16 to 128, a packed batch, initial and final states,
/// sequences crossing chunk boundaries.
fn cases() -> Vec<(&'static str, Case)> {
    let case = |nk, nv, dk, dv, kk, batch, state: bool, seed| Case {
        config: LayerConfig::new(nk, nv, dk, dv, kk).expect("valid sizes"),
        batch,
        h0: state,
        dht: state,
        regime: Regime::Typical,
        family: Family::Chunked { chunk: 16 },
        precision: Precision::F32,
        storage: Storage::F32,
        seed,
    };
    vec![
        ("d16-packed-states", case(1, 2, 16, 16, 4, Batch::Packed { cu_seqlens: vec![0, 5, 40] }, true, 1)),
        ("d32x64-fixed", case(2, 4, 32, 64, 4, Batch::Fixed { b: 2, t: 33 }, false, 2)),
        ("d64-states", case(1, 2, 64, 64, 3, Batch::Fixed { b: 1, t: 40 }, true, 3)),
        ("d128", case(1, 1, 128, 128, 4, Batch::Fixed { b: 1, t: 20 }, false, 4)),
    ]
}

/// Writes every case into its own folder under `dir`; returns the folders' names, and the WGSL of
/// every kernel the cases run with the first case that runs it (the Tint check need not compile
/// those again: the page compiles and runs them here).
pub fn write(dir: &Path) -> Result<(Vec<String>, HashMap<String, String>), String> {
    let mut names = Vec::new();
    let mut shaders = HashMap::new();
    for (name, case) in cases() {
        for wgsl in write_case(&dir.join(name), name, &case).map_err(|e| format!("case {name}: {e}"))? {
            shaders.entry(wgsl).or_insert_with(|| name.to_string());
        }
        names.push(name.to_string());
    }
    Ok((names, shaders))
}

/// Writes one case; returns the WGSL of the kernels it runs.
fn write_case(dir: &Path, name: &str, case: &Case) -> Result<Vec<String>, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let draw = case.draw();
    let layer = Layer::new(case.config, draw.params.clone()).map_err(|e| e.to_string())?;
    let want = layer.forward(&draw.inputs).map_err(|e| e.to_string())?;
    let grads = layer.backward(&draw.inputs, &draw.grads).map_err(|e| e.to_string())?;
    let offsets = gdn_ref::Sequences::new(&case.batch, None).map_err(|e| e.to_string())?.offsets().to_vec();
    let options = PlanOptions {
        family: case.family,
        precision: case.precision,
        initial_state: case.h0,
        final_state_grad: case.dht,
        ..PlanOptions::default()
    };
    let plan = LayerPlan::new(&case.config, &offsets, &options).map_err(|e| e.to_string())?;
    let write = |file: &str, bytes: &[u8]| std::fs::write(dir.join(file), bytes).map_err(|e| format!("{file}: {e}"));

    let mut shaders = serde_json::Map::new();
    let mut sources = Vec::new();
    for stage in plan.forward.iter().chain(plan.backward.iter().flatten()) {
        let source = kernel_source(stage.kernel, plan.dims).map_err(|e| e.to_string())?;
        let file = format!("{}.wgsl", stage.kernel.name());
        write(&file, source.wgsl.as_bytes())?;
        shaders.insert(stage.kernel.name().into(), json!(file));
        sources.push(source.wgsl);
    }
    let mut buffers = Vec::new();
    for spec in &plan.buffers {
        let name = spec.id.name();
        let bytes = 4 * spec.words().max(1);
        let entry = match &spec.contents {
            Contents::Uniform(contents) => {
                write(&format!("{name}.bin"), contents)?;
                json!({ "name": name, "bytes": contents.len(), "usage": "uniform", "data": format!("{name}.bin") })
            }
            Contents::Fixed(words) => {
                write(&format!("{name}.bin"), bytemuck::cast_slice(words))?;
                json!({ "name": name, "bytes": bytes, "usage": "storage", "data": format!("{name}.bin") })
            }
            Contents::Storage { .. } => match spec.id {
                BufferId::Tensor(tensor) if tensor.caller_written() => {
                    let values = draw.caller_values(tensor);
                    if values.is_empty() {
                        json!({ "name": name, "bytes": bytes, "usage": "storage", "poison": false })
                    } else {
                        write(&format!("{name}.bin"), bytemuck::cast_slice(&values))?;
                        json!({ "name": name, "bytes": bytes, "usage": "storage", "data": format!("{name}.bin") })
                    }
                }
                _ => json!({ "name": name, "bytes": bytes, "usage": "storage", "poison": true }),
            },
        };
        buffers.push(entry);
    }
    let mut checks = Vec::new();
    for Expected { tensor, values, bar, cancellation } in case.expectations(&draw, &want, &grads) {
        let file = format!("{}.expected.bin", tensor.name());
        let values: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        write(&file, bytemuck::cast_slice(&values))?;
        let after = if matches!(tensor, Tensor::Out | Tensor::Ht) { "forward" } else { "backward" };
        let bar = bar.ok_or("every realistic f32 tensor has a bar")? * cancellation;
        checks.push(json!({ "buffer": tensor.name(), "after": after, "expected": file, "bar": bar }));
    }
    let plan_json = json!({
        "name": format!("{name} ({} f32)", case.family.name()),
        "shaders": shaders,
        "buffers": buffers,
        "passes": { "forward": stages(&plan.forward), "backward": stages(plan.backward.as_deref().unwrap_or(&[])) },
        "checks": checks,
    });
    write("plan.json", serde_json::to_string_pretty(&plan_json).map_err(|e| e.to_string())?.as_bytes())?;
    Ok(sources)
}

/// The stages as the page dispatches them: the kernel, its grid folded under WebGPU's
/// per-dimension limit (the kernels recover the linear index), each binding's buffer and type.
fn stages(stages: &[Stage]) -> Vec<Value> {
    stages
        .iter()
        .map(|stage| {
            let x = stage.workgroups.clamp(1, MAX_WORKGROUPS);
            let bindings: Vec<Value> = stage
                .bindings
                .iter()
                .zip(stage.kernel.bindings())
                .map(|(id, binding)| json!({ "buffer": id.name(), "type": binding_type(binding.kind) }))
                .collect();
            json!({ "kernel": stage.kernel.name(), "grid": [x, stage.workgroups.div_ceil(x).max(1)], "bindings": bindings })
        })
        .collect()
}
