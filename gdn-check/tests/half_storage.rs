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
                storage,
                seed: 9,
            };
            let report = case.run(ctx).unwrap();
            println!("{} {family:?}\n{}", storage.name(), report.table());
            if !report.passes() {
                failed.push(format!("{} {family:?}: {:?}", storage.name(), report.failures().collect::<Vec<_>>()));
            }
        }
    }
    assert!(failed.is_empty(), "over their bars: {failed:?}");
}
