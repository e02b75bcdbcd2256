//! The device layer against the f64 reference, at the spec's bars, on hand-picked cases that cover
//! head dims, conv taps, value heads per key head, T around the checkpoint interval and T = 1,
//! B > 1, initial and final states, packed batches, batches large enough for the kernels of many
//! heads and long runs, and the gate extremes. Every case runs with every
//! kernel family, its knob (checkpoint interval or chunk) set to the case's interval, so that
//! sequences cross stored-state boundaries in both; the chunked family in f32 must also stay within
//! twice the recurrent family's error on the same case (or 1e-5). Runs on whatever adapter
//! `Context::new` finds (lavapipe in CI) and fails when there is none.

use gdn_check::{Case, FAST_FAMILY_FACTOR};
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, LayerConfig};
use gdn_train::{Context, Family, Precision, Storage};

fn context() -> &'static Context {
    gdn_check::device_context()
}

fn config(nk: usize, rep: usize, dk: usize, dv: usize, kk: usize) -> LayerConfig {
    LayerConfig::new(nk, nk * rep, dk, dv, kk).expect("valid config")
}

/// A case; `interval` is the knob of every family it runs with (checkpoint interval or chunk, at
/// least the precision's smallest chunk).
fn case(config: LayerConfig, batch: Batch, h0: bool, dht: bool, interval: usize, seed: u64) -> Case {
    let family = Family::Recurrent { checkpoint_interval: interval };
    Case {
        config,
        batch,
        h0,
        dht,
        regime: Regime::Typical,
        family,
        precision: Precision::F32,
        storage: Storage::F32,
        seed,
    }
}

/// How a case is computed: a family (its knob taken from the case) and a precision.
#[derive(Clone, Copy)]
struct Variant(Family, Precision);

/// Every family that computes in `precision`, in it: every family of gdn-wgsl is tested, with no
/// test code of its own.
fn variants(precision: Precision) -> Vec<Variant> {
    Family::ALL.into_iter().filter(|f| f.computes_in(precision)).map(|f| Variant(f, precision)).collect()
}

impl Variant {
    fn apply(self, case: &Case) -> Case {
        let Family::Recurrent { checkpoint_interval: interval } = case.family else {
            panic!("cases are written with their interval in the recurrent family")
        };
        Case { family: self.0.with_interval(interval, self.1), precision: self.1, ..case.clone() }
    }
}

/// Runs every case in every variant and fails with the list of those over their bars (which
/// [`gdn_check::bar`] sets per precision and regime), and of the f32 runs of every other family
/// over the spec's allowance against the f32 recurrent run of the same case
/// ([`gdn_check::Report::beside`]).
fn check(cases: &[Case], variants: &[Variant]) {
    let ctx = context();
    let mut failed = Vec::new();
    for case in cases {
        let mut recurrent = None;
        for c in variants.iter().map(|v| v.apply(case)) {
            let report = c.run(ctx).unwrap_or_else(|e| panic!("{c:?}: {e}"));
            println!("{c:?}\n{}", report.table());
            if !report.passes() {
                failed.push(format!("{c:?}: {:?}", report.failures().collect::<Vec<_>>()));
            }
            match (c.family, c.precision, &recurrent) {
                (Family::Recurrent { .. }, _, _) => recurrent = Some(report),
                (_, Precision::F32, Some(base)) => {
                    let over = report.beside(base);
                    if !over.is_empty() {
                        failed.push(format!(
                            "{c:?}: over {FAST_FAMILY_FACTOR}× the recurrent family's error (tensor, its, recurrent's): {over:?}"
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    assert!(failed.is_empty(), "cases over their bars:\n{}", failed.join("\n"));
}

/// Head dims from 8 to 256, unequal pairs and sizes that are not powers of two.
fn head_dims_including_unequal_and_not_powers_of_two_cases() -> Vec<Case> {
    vec![
        case(config(1, 1, 16, 16, 4), Batch::Fixed { b: 2, t: 9 }, true, true, 4, 1),
        case(config(1, 2, 32, 64, 4), Batch::Fixed { b: 1, t: 7 }, false, false, 4, 2),
        case(config(2, 1, 64, 32, 4), Batch::Fixed { b: 1, t: 6 }, true, false, 4, 3),
        case(config(1, 1, 48, 80, 4), Batch::Fixed { b: 1, t: 5 }, false, true, 4, 4),
        case(config(1, 2, 128, 128, 4), Batch::Fixed { b: 1, t: 6 }, true, true, 4, 5),
        case(config(1, 1, 8, 24, 2), Batch::Fixed { b: 2, t: 5 }, true, true, 2, 6),
        case(config(1, 1, 256, 256, 4), Batch::Fixed { b: 1, t: 3 }, true, true, 2, 7),
        case(config(1, 1, 192, 160, 3), Batch::Fixed { b: 1, t: 3 }, false, true, 2, 8),
    ]
}

#[test]
fn head_dims_including_unequal_and_not_powers_of_two() {
    check(&head_dims_including_unequal_and_not_powers_of_two_cases(), &variants(Precision::F32));
}

fn conv_taps_and_heads_per_key_head_cases() -> Vec<Case> {
    vec![
        case(config(2, 3, 16, 32, 1), Batch::Fixed { b: 2, t: 5 }, true, true, 4, 10),
        case(config(1, 2, 32, 16, 2), Batch::Fixed { b: 1, t: 8 }, false, false, 4, 11),
        case(config(2, 1, 16, 16, 3), Batch::Fixed { b: 3, t: 4 }, true, false, 4, 12),
        case(config(1, 4, 16, 16, 4), Batch::Fixed { b: 1, t: 6 }, false, true, 4, 13),
    ]
}

#[test]
fn conv_taps_and_heads_per_key_head() {
    check(&conv_taps_and_heads_per_key_head_cases(), &variants(Precision::F32));
}

fn sequence_lengths_around_the_checkpoint_interval_cases() -> Vec<Case> {
    [1, 3, 4, 5, 8, 9]
        .into_iter()
        .map(|t| case(config(1, 2, 16, 32, 4), Batch::Fixed { b: 2, t }, true, true, 4, 20 + t as u64))
        .chain(std::iter::once(case(config(1, 1, 32, 32, 4), Batch::Fixed { b: 1, t: 17 }, true, true, 1, 30)))
        // Three 16-token chunks.
        .chain(std::iter::once(case(config(1, 2, 16, 32, 4), Batch::Fixed { b: 2, t: 40 }, true, true, 16, 31)))
        .collect()
}

#[test]
fn sequence_lengths_around_the_checkpoint_interval() {
    check(&sequence_lengths_around_the_checkpoint_interval_cases(), &variants(Precision::F32));
}

fn packed_sequences_each_with_its_own_state_cases() -> Vec<Case> {
    vec![
        case(config(1, 2, 16, 32, 4), Batch::Packed { cu_seqlens: vec![0, 1, 6, 8, 17] }, true, true, 4, 40),
        case(config(2, 1, 32, 16, 3), Batch::Packed { cu_seqlens: vec![0, 9, 10] }, false, false, 4, 41),
        case(config(1, 2, 16, 16, 4), Batch::Packed { cu_seqlens: vec![0, 10, 37, 50] }, true, true, 16, 42),
    ]
}

#[test]
fn packed_sequences_each_with_its_own_state() {
    check(&packed_sequences_each_with_its_own_state_cases(), &variants(Precision::F32));
}

/// Batches past the small-batch choices: enough tokens for the conv kernels' runs of 16 (sequences
/// starting inside runs and spanning many), and enough heads for the recurrent forward token by
/// token (smaller batches take its chunked form).
fn large_batches_cases() -> Vec<Case> {
    vec![
        case(config(1, 2, 16, 32, 4), Batch::Packed { cu_seqlens: vec![0, 10, 517, 1030] }, true, true, 32, 43),
        case(config(1, 8, 16, 16, 4), Batch::Fixed { b: 32, t: 3 }, true, true, 2, 44),
    ]
}

#[test]
fn large_batches() {
    check(&large_batches_cases(), &variants(Precision::F32));
}

fn gate_extremes_cases() -> Vec<Case> {
    Regime::ALL
        .into_iter()
        .enumerate()
        .map(|(n, regime)| Case {
            regime,
            ..case(config(1, 2, 32, 16, 4), Batch::Fixed { b: 2, t: 6 }, true, true, 4, 50 + n as u64)
        })
        .collect()
}

#[test]
fn gate_extremes() {
    check(&gate_extremes_cases(), &variants(Precision::F32));
}

/// Every hand-picked case with the chunked family's products on tensor cores (f16 operands, f32
/// accumulation and state), at the tensor-core bars; gradients in the extreme gate regimes are
/// reported, not judged. Needs wgpu's EXPERIMENTAL_COOPERATIVE_MATRIX (16×16×16 f16 → f32) and SHADER_F16: run it
/// where the adapter has them (`--ignored`; the GPU suite, `bench/side_by_side.sh tests`, does); elsewhere it fails
/// naming the missing feature.
#[test]
#[ignore = "needs EXPERIMENTAL_COOPERATIVE_MATRIX (16x16x16 f16) and SHADER_F16: run with --ignored on such an adapter"]
fn tensor_core_products_match_the_reference() {
    let cases: Vec<Case> = [
        head_dims_including_unequal_and_not_powers_of_two_cases(),
        conv_taps_and_heads_per_key_head_cases(),
        sequence_lengths_around_the_checkpoint_interval_cases(),
        packed_sequences_each_with_its_own_state_cases(),
        large_batches_cases(),
        gate_extremes_cases(),
    ]
    .concat();
    check(&cases, &variants(Precision::TensorCore));
}
