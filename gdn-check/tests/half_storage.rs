//! Half-precision storage of the activations and their gradients (bf16 and f16, two to a word):
//! every family against gdn-ref run on the same inputs rounded to the storage format (`Case`
//! rounds its draw). The tensors stored in halves (out, dqkv, dz, da, db) are held to the storage's
//! bar; the states and the parameter gradients, which stay f32, to the f32 bars. Runs on whatever
//! adapter `Context::new` finds (lavapipe in CI, which has no `SHADER_F16`: the conversions need
//! none) and fails when there is none.

use gdn_check::Case;
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, LayerConfig};
use gdn_train::{Family, Precision, Storage};

/// Two packed sequences (5 and 35 tokens) of a small layer, with both states, in f32 arithmetic.
fn small_case(family: Family, storage: Storage) -> Case {
    Case {
        config: LayerConfig::new(1, 2, 16, 16, 4).unwrap(),
        batch: Batch::Packed { cu_seqlens: vec![0, 5, 40] },
        h0: true,
        dht: true,
        regime: Regime::Typical,
        family,
        precision: Precision::F32,
        storage,
        seed: 9,
    }
}

#[test]
fn half_storage_matches_the_reference_on_rounded_inputs() {
    let ctx = gdn_check::device_context();
    let mut failed = Vec::new();
    for storage in [Storage::Bf16, Storage::F16] {
        for family in Family::ALL {
            let case = small_case(family, storage);
            let report = case.run(ctx).unwrap();
            println!("{} {family:?}\n{}", storage.name(), report.table());
            if !report.passes() {
                failed.push(format!("{} {family:?}: {:?}", storage.name(), report.failures().collect::<Vec<_>>()));
            }
        }
    }
    assert!(failed.is_empty(), "over their bars: {failed:?}");
}

/// Inputs scaled into f16's subnormal range (|x| < 2⁻¹⁴, as far down as 10⁻⁵ of the typical draw)
/// keep their values through the device's f16 decoding and encoding: `out` and `dz` match
/// gdn-ref's, rounded to f16 as the device stores them, at the f16 bar. (Against the exact values
/// their error grows to about 10⁻², the precision subnormals have.)
#[test]
fn f16_storage_keeps_subnormal_values() {
    let ctx = gdn_check::device_context();
    let to_f16 = |x: f64| f64::from(half::f16::from_f64(x).to_f32());
    let error_to_rounded = |got: &[f32], want: &[f64]| {
        let got: Vec<f64> = got.iter().map(|&v| f64::from(v)).collect();
        let want: Vec<f64> = want.iter().map(|&x| to_f16(x)).collect();
        gdn_ref::compare::relative_error_f32(&got, &want)
    };
    for scale in [1e-3, 1e-5] {
        let case = small_case(Family::chunked(), Storage::F16);
        let mut draw = case.draw();
        for values in [&mut draw.inputs.qkv, &mut draw.inputs.z, &mut draw.grads.dout] {
            values.mapv_inplace(|x| to_f16(x * scale));
        }
        let subnormal = draw.inputs.qkv.iter().filter(|x| x.abs() < 6.1e-5 && **x != 0.0).count();
        assert!(subnormal * 2 > draw.inputs.qkv.len() || scale > 1e-4, "{subnormal} subnormal inputs");
        let layer = gdn_ref::Layer::new(case.config, draw.params.clone()).unwrap();
        let (want, grads) = (layer.forward(&draw.inputs).unwrap(), layer.backward(&draw.inputs, &draw.grads).unwrap());
        let device = case.on_device(ctx, &draw).unwrap();
        let out = error_to_rounded(&device.outputs.out, want.out.as_slice().unwrap());
        let dz = error_to_rounded(&device.gradients.dz, grads.dz.as_slice().unwrap());
        println!("scale {scale:e}: out {out:.2e}, dz {dz:.2e} against the f16-rounded reference");
        assert!(out <= 1e-3 && dz <= 1e-3, "scale {scale:e}: out {out:.2e}, dz {dz:.2e}");
    }
}
