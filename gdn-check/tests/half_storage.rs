//! Half-precision storage of the activations and their gradients (bf16 and f16, two to a word):
//! every family against gdn-ref run on the same inputs rounded to the storage format. The tensors
//! stored in halves (out, dqkv, dz, da, db) are held to the storage's rounding bar; the states and
//! the parameter gradients, which stay f32, to the f32 bars. Runs on whatever adapter
//! `Context::new` finds (lavapipe in CI, which has no `SHADER_F16`: the conversions need none) and
//! fails when there is none.

use gdn_check::Case;
use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, Layer, LayerConfig};
use gdn_train::{Family, Precision, Storage, TapeOptions};

/// The storage's bar for a tensor it holds: a few times its rounding (2⁻⁹ for bf16, 2⁻¹² for f16).
fn bar(storage: Storage) -> f64 {
    if storage == Storage::F16 { 1e-3 } else { 4e-3 }
}

fn rounded(storage: Storage, values: &mut ndarray::Array3<f64>) {
    values.mapv_inplace(|x| match storage {
        Storage::F16 => f64::from(half::f16::from_f64(x).to_f32()),
        _ => f64::from(half::bf16::from_f64(x).to_f32()),
    });
}

#[test]
fn half_storage_matches_the_reference_on_rounded_inputs() {
    let ctx = gdn_check::device_context();
    let mut failed = Vec::new();
    for storage in [Storage::Bf16, Storage::F16] {
        for family in Family::ALL {
            let case = Case {
                config: LayerConfig::new(1, 2, 16, 16, 4).unwrap(),
                batch: Batch::Packed { cu_seqlens: vec![0, 5, 40] },
                h0: true,
                dht: true,
                regime: Regime::Typical,
                family,
                precision: Precision::F32,
                seed: 9,
            };
            let mut draw = case.draw();
            for x in
                [&mut draw.inputs.qkv, &mut draw.inputs.z, &mut draw.inputs.a, &mut draw.inputs.b, &mut draw.grads.dout]
            {
                rounded(storage, x);
            }
            let layer = Layer::new(case.config, draw.params.clone()).unwrap();
            let (want, grads) =
                (layer.forward(&draw.inputs).unwrap(), layer.backward(&draw.inputs, &draw.grads).unwrap());
            let options = TapeOptions {
                initial_state: true,
                final_state_grad: true,
                family: Some(family),
                storage,
                ..TapeOptions::default()
            };
            let tape = gdn_train::Tape::new(ctx, case.config, case.batch.clone(), options).unwrap();
            case.upload(&tape, &draw).unwrap();
            tape.fill_outputs_with_nan();
            tape.forward().unwrap();
            let outputs = tape.read_outputs().unwrap();
            tape.backward().unwrap();
            let device =
                gdn_check::DeviceResults { outputs, gradients: tape.read_gradients().unwrap(), device_bytes: 0 };
            for e in case.expectations(&draw, &want, &grads) {
                let got: Vec<f64> = device.tensor(e.tensor).iter().map(|&v| f64::from(v)).collect();
                let error = relative_error_f32(&got, &e.values);
                let bar = if storage.halves(e.tensor) { bar(storage) } else { e.bar.unwrap() } * e.cancellation;
                println!("{} {:?} {:<9} {error:.2e} (bar {bar:.1e})", storage.name(), family, e.tensor.name());
                if error.is_nan() || error > bar {
                    failed.push(format!(
                        "{} {family:?} {}: {error:.2e} over {bar:.1e}",
                        storage.name(),
                        e.tensor.name()
                    ));
                }
            }
        }
    }
    assert!(failed.is_empty(), "over their bars: {failed:?}");
}
