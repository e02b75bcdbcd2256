//! The device layer against the f64 reference, at the spec's bars, on hand-picked cases that cover
//! head dims, conv taps, value heads per key head, T around the checkpoint interval and T = 1,
//! B > 1, initial and final states, packed batches and the gate extremes. Every case runs with every
//! kernel family, its knob (checkpoint interval or chunk) set to the case's interval, so that
//! sequences cross stored-state boundaries in both. Runs on whatever adapter `Context::new` finds
//! (lavapipe in CI) and fails when there is none.

use gdn_check::Case;
use gdn_check::fuzz::FamilyKind;
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, LayerConfig};
use gdn_train::{Context, Family};
use std::sync::OnceLock;

fn context() -> &'static Context {
    static CONTEXT: OnceLock<Context> = OnceLock::new();
    CONTEXT.get_or_init(|| match Context::new() {
        Ok(ctx) => {
            println!("adapter: {}", ctx.describe());
            ctx
        }
        Err(e) => panic!("device tests need a GPU adapter: {e}"),
    })
}

fn config(nk: usize, rep: usize, dk: usize, dv: usize, kk: usize) -> LayerConfig {
    LayerConfig::new(nk, nk * rep, dk, dv, kk).expect("valid config")
}

/// A case of the recurrent family; [`check_all`] runs it with every family.
fn case(config: LayerConfig, batch: Batch, h0: bool, dht: bool, interval: usize, seed: u64) -> Case {
    let family = Family::Recurrent { checkpoint_interval: interval };
    Case { config, batch, h0, dht, regime: Regime::Typical, family, seed }
}

/// `case` with every family, each with the same interval as its knob.
fn with_every_family(case: &Case) -> impl Iterator<Item = Case> + '_ {
    let interval = match case.family {
        Family::Recurrent { checkpoint_interval } => checkpoint_interval,
        _ => unreachable!("cases are written for the recurrent family"),
    };
    FamilyKind::ALL.into_iter().map(move |kind| Case {
        family: match kind {
            FamilyKind::Recurrent => Family::Recurrent { checkpoint_interval: interval },
            FamilyKind::Chunked => Family::Chunked { chunk: interval },
        },
        ..case.clone()
    })
}

fn check_all(cases: &[Case]) {
    let ctx = context();
    let mut failed = Vec::new();
    for c in cases.iter().flat_map(with_every_family) {
        let report = c.run(ctx).unwrap_or_else(|e| panic!("{c:?}: {e}"));
        println!("{c:?}\n{}", report.table());
        if !report.passes() {
            failed.push(format!("{c:?}: {:?}", report.failures().collect::<Vec<_>>()));
        }
    }
    assert!(failed.is_empty(), "cases over their bars:\n{}", failed.join("\n"));
}

/// Head dims from 8 to 256, unequal pairs and sizes that are not powers of two.
#[test]
fn head_dims_including_unequal_and_not_powers_of_two() {
    check_all(&[
        case(config(1, 1, 16, 16, 4), Batch::Fixed { b: 2, t: 9 }, true, true, 4, 1),
        case(config(1, 2, 32, 64, 4), Batch::Fixed { b: 1, t: 7 }, false, false, 4, 2),
        case(config(2, 1, 64, 32, 4), Batch::Fixed { b: 1, t: 6 }, true, false, 4, 3),
        case(config(1, 1, 48, 80, 4), Batch::Fixed { b: 1, t: 5 }, false, true, 4, 4),
        case(config(1, 2, 128, 128, 4), Batch::Fixed { b: 1, t: 6 }, true, true, 4, 5),
        case(config(1, 1, 8, 24, 2), Batch::Fixed { b: 2, t: 5 }, true, true, 2, 6),
        case(config(1, 1, 256, 256, 4), Batch::Fixed { b: 1, t: 3 }, true, true, 2, 7),
        case(config(1, 1, 192, 160, 3), Batch::Fixed { b: 1, t: 3 }, false, true, 2, 8),
    ]);
}

#[test]
fn conv_taps_and_heads_per_key_head() {
    check_all(&[
        case(config(2, 3, 16, 32, 1), Batch::Fixed { b: 2, t: 5 }, true, true, 4, 10),
        case(config(1, 2, 32, 16, 2), Batch::Fixed { b: 1, t: 8 }, false, false, 4, 11),
        case(config(2, 1, 16, 16, 3), Batch::Fixed { b: 3, t: 4 }, true, false, 4, 12),
        case(config(1, 4, 16, 16, 4), Batch::Fixed { b: 1, t: 6 }, false, true, 4, 13),
    ]);
}

#[test]
fn sequence_lengths_around_the_checkpoint_interval() {
    let cases: Vec<Case> = [1, 3, 4, 5, 8, 9]
        .into_iter()
        .map(|t| case(config(1, 2, 16, 32, 4), Batch::Fixed { b: 2, t }, true, true, 4, 20 + t as u64))
        .chain(std::iter::once(case(config(1, 1, 32, 32, 4), Batch::Fixed { b: 1, t: 17 }, true, true, 1, 30)))
        .collect();
    check_all(&cases);
}

#[test]
fn packed_sequences_each_with_its_own_state() {
    check_all(&[
        case(config(1, 2, 16, 32, 4), Batch::Packed { cu_seqlens: vec![0, 1, 6, 8, 17] }, true, true, 4, 40),
        case(config(2, 1, 32, 16, 3), Batch::Packed { cu_seqlens: vec![0, 9, 10] }, false, false, 4, 41),
    ]);
}

#[test]
fn gate_extremes() {
    let cases: Vec<Case> = Regime::ALL
        .into_iter()
        .enumerate()
        .map(|(n, regime)| Case {
            regime,
            ..case(config(1, 2, 32, 16, 4), Batch::Fixed { b: 2, t: 6 }, true, true, 4, 50 + n as u64)
        })
        .collect();
    check_all(&cases);
}
