//! The checkpoint loader and the operator against transformers' own run of one layer: tiny random
//! Qwen3-Next and Qwen3.5 models made with transformers' classes by `data/make_tiny_checkpoint.py`
//! (committed under `data/hf_tiny/` with the layer's input and outputs). Each model's layer 0 is
//! loaded by `LayerWeights`, its input projected here, and run through gdn-ref's f64 forward and
//! on the device; both must give transformers' f32 `operator_out` (the input of `out_proj`), and
//! `out_proj` of the reference's must give the layer's `output`.

use gdn_check::checkpoint::{reference_inputs, reference_params};
use gdn_ref::Layer;
use gdn_ref::compare::relative_error_f32;
use gdn_train::checkpoint::{HF_PREFIX, LayerWeights, Projected, Scheme};
use gdn_train::{Batch, Inputs, Tape, TapeOptions};
use safetensors::{Dtype, SafeTensors};
use std::path::PathBuf;

/// transformers computes in f32 what gdn-ref computes in f64: they differ by f32 round-off through
/// a 7-token recurrence (the assertion messages print it).
const TRANSFORMERS_BAR: f64 = 1e-5;

/// The model's folder: beside this test where it was built, else under the working directory (a
/// bundled test binary runs from the repository's root on the GPU machine, not where it was built).
fn model_dir(model: &str) -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/hf_tiny");
    let data = if built.exists() { built } else { PathBuf::from("gdn-check/tests/data/hf_tiny") };
    data.join(model)
}

/// A float32 tensor of `io.safetensors`: its shape and values.
fn read(tensors: &SafeTensors, name: &str) -> (Vec<usize>, Vec<f32>) {
    let view = tensors.tensor(name).unwrap_or_else(|e| panic!("io.safetensors has no {name}: {e}"));
    assert_eq!(view.dtype(), Dtype::F32, "{name}");
    let values = view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    (view.shape().to_vec(), values)
}

fn wide(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v)).collect()
}

fn case(model: &str, scheme: Scheme) {
    let dir = model_dir(model);
    let weights = LayerWeights::load_beside_config(dir.join("model.safetensors"), HF_PREFIX, 0)
        .unwrap_or_else(|e| panic!("{model}: {e}"));
    assert_eq!(weights.scheme, scheme);
    let bytes = std::fs::read(dir.join("io.safetensors")).unwrap();
    let io = SafeTensors::deserialize(&bytes).unwrap();
    let (shape, x) = read(&io, "hidden_states");
    let (b, t, hidden) = (shape[0], shape[1], shape[2]);
    assert_eq!(hidden, weights.hidden_size);
    let config = weights.config;
    let projected = weights.project(&x).unwrap();
    let Projected { qkv, z, a: gate_a, b: gate_b } = &projected;
    if scheme == Scheme::Qwen35 {
        // The split projections keep transformers' row order: the loaded weights give its raw
        // outputs one to one.
        for (name, ours) in [("in_proj_qkv", qkv), ("in_proj_z", z), ("in_proj_b", gate_b), ("in_proj_a", gate_a)] {
            let error = relative_error_f32(&wide(ours), &wide(&read(&io, name).1));
            assert!(error < TRANSFORMERS_BAR, "{model} {name}: {error:.2e}");
        }
    }

    let (params, inputs) = (reference_params(&weights), reference_inputs(&projected, b, t));
    let reference = Layer::new(config, params).unwrap().forward(&inputs).unwrap().out;
    let want = wide(&read(&io, "operator_out").1);
    let error = relative_error_f32(reference.as_slice().unwrap(), &want);
    println!("{model}: gdn-ref out against transformers' operator_out {error:.2e}");
    assert!(error < TRANSFORMERS_BAR, "{model}: gdn-ref out {error:.2e}");
    let reference_f32: Vec<f32> = reference.iter().map(|&v| v as f32).collect();
    let output = weights.output(&reference_f32).unwrap();
    let error = relative_error_f32(&wide(&output), &wide(&read(&io, "output").1));
    assert!(error < TRANSFORMERS_BAR, "{model}: out_proj of gdn-ref's out {error:.2e}");

    let ctx = gdn_check::device_context();
    let options = TapeOptions { backward: false, ..TapeOptions::default() };
    let tape = Tape::new(ctx, config, Batch::Fixed { b, t }, options).unwrap();
    tape.write_params(&weights.params()).unwrap();
    tape.fill_outputs_with_nan().unwrap();
    let inputs = Inputs { qkv, z, a: gate_a, b: gate_b, h0: None, conv_state: None };
    let device = tape.run_forward(&inputs).unwrap();
    let error = relative_error_f32(&wide(&device.out), &want);
    println!("{model}: device out against transformers' operator_out {error:.2e}");
    assert!(error < gdn_check::OUTPUT_BAR, "{model}: device out {error:.2e}");
}

#[test]
fn a_qwen3_next_layer_gives_what_transformers_gives() {
    case("qwen3_next", Scheme::Qwen3Next);
}

#[test]
fn a_qwen3_5_layer_gives_what_transformers_gives() {
    case("qwen3_5", Scheme::Qwen35);
}
