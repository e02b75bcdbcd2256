//! `gdn-check run`'s check of a whole layer call on spots of it (`spot_check::Spots`), through
//! the call it runs (`layer_call::LayerCall`): on a device whose binding limit makes the batch run
//! in windows, the spots match gdn-ref at the spec's bars, the parameter sums the spots cannot
//! reproduce are left out, and a wrong value in a spot fails while one outside them does not show.
//! Runs on whatever adapter `Context::new` finds (lavapipe in CI) and fails when there is none.

use gdn_check::layer_call::LayerCall;
use gdn_check::spot_check::Spots;
use gdn_check::{Case, Tensor};
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, LayerConfig};
use gdn_train::{Family, Precision, Storage};

#[test]
fn a_windowed_call_matches_the_reference_on_its_spots_and_only_there() {
    let (ctx, _, _) =
        gdn_check::engine_device(|adapter| wgpu::Limits { max_storage_buffer_binding_size: 128 << 10, ..adapter });
    // 3 sequences of 100 tokens, 768 bytes of qkv per token: 230 KB of qkv, over the 128 KiB limit.
    let config = LayerConfig::new(3, 6, 16, 16, 4).unwrap();
    let case = Case {
        config,
        batch: Batch::Fixed { b: 3, t: 100 },
        h0: true,
        dht: true,
        regime: Regime::Typical,
        family: Family::chunked(),
        precision: Precision::F32,
        storage: Storage::F32,
        seed: 44,
    };
    let call = LayerCall::new(&ctx, &case).unwrap();
    assert!(call.windows() > 1, "the batch should need windows, got {}", call.windows());

    let spots = Spots::spread(&config, 3, 2, 2);
    assert_eq!(spots, Spots { sequences: vec![0, 2], heads: vec![0, 2] });
    let mut results = call.run(&spots.whole_tensors(&case)).unwrap();
    let (report, left_out) = spots.check(&case, &results).unwrap();
    print!("{} windows\n{}", call.windows(), report.table());
    assert!(report.passes());
    assert_eq!(left_out, vec![Tensor::DaLog, Tensor::DdtBias, Tensor::Dnorm, Tensor::Dconv]);
    assert_eq!(report.errors.len(), 7, "out, ht, dqkv, dz, da, db and dh0 compared");

    // A k channel of key head 2 at sequence 2's last token is a spot; sequence 1's is not.
    let channel = config.nk * config.dk + 2 * config.dk + 5;
    let cell = |sequence: usize| (sequence * 100 + 99) * config.channels() + channel;
    results.gradients.dqkv[cell(1)] += 1.0;
    let (outside, _) = spots.check(&case, &results).unwrap();
    assert_eq!(outside, report, "a value outside the spots changed the report");
    results.gradients.dqkv[cell(2)] += 1.0;
    let (inside, _) = spots.check(&case, &results).unwrap();
    let failed: Vec<Tensor> = inside.failures().map(|e| e.tensor).collect();
    assert_eq!(failed, vec![Tensor::Dqkv]);
}
