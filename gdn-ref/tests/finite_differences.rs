//! The hand-written backward against five-point finite differences in f64, on every gradient:
//! the four input streams, the initial recurrent and conv states and the four parameters.

mod common;

use common::{Case, check_all};
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, LayerConfig};

fn config(nk: usize, rep: usize, dk: usize, dv: usize, kk: usize) -> LayerConfig {
    LayerConfig::new(nk, nk * rep, dk, dv, kk).expect("valid config")
}

/// Shapes: `dk ≠ dv`, `rep ∈ {1, 2, 3}`, `kk ∈ {1, 2, 3, 4}`, `T = 1`, `B > 1`, `dk = dv = 1`, with
/// and without `h0` and `dhT`.
#[test]
fn gradients_match_finite_differences_across_shapes() {
    let shapes = [
        (config(1, 1, 4, 4, 4), Batch::Fixed { b: 2, t: 5 }, true, true),
        (config(1, 2, 3, 5, 2), Batch::Fixed { b: 1, t: 6 }, false, false),
        (config(2, 3, 4, 2, 1), Batch::Fixed { b: 2, t: 3 }, true, false),
        (config(1, 3, 5, 3, 4), Batch::Fixed { b: 3, t: 1 }, false, true),
        (config(2, 1, 2, 6, 2), Batch::Fixed { b: 1, t: 4 }, true, true),
        (config(1, 2, 6, 4, 3), Batch::Fixed { b: 2, t: 1 }, true, true),
        (config(1, 2, 1, 1, 2), Batch::Fixed { b: 1, t: 5 }, true, true),
    ];
    let cases: Vec<Case> = shapes
        .into_iter()
        .enumerate()
        .map(|(n, (config, batch, h0, dht))| Case {
            config,
            batch,
            h0,
            dht,
            conv_state: false,
            regime: Regime::Typical,
            seed: 100 + n as u64,
        })
        .collect();
    check_all("shapes", &cases);
}

/// The gate extremes: `g → 1`, `g → 0`, `β → 0`, `β → 1`.
#[test]
fn gradients_match_finite_differences_at_gate_extremes() {
    let cases: Vec<Case> = Regime::ALL
        .into_iter()
        .filter(|r| *r != Regime::Typical)
        .enumerate()
        .map(|(n, regime)| Case {
            config: config(1, 2, 4, 3, 4),
            batch: Batch::Fixed { b: 2, t: 4 },
            h0: true,
            dht: true,
            conv_state: true,
            regime,
            seed: 200 + n as u64,
        })
        .collect();
    check_all("gate extremes", &cases);
}

/// A packed batch: sequences of lengths 1, 4 and 2, each with its own state.
#[test]
fn gradients_match_finite_differences_for_packed_sequences() {
    let cases = [false, true].map(|h0| Case {
        config: config(1, 2, 3, 4, 3),
        batch: Batch::Packed { cu_seqlens: vec![0, 1, 5, 7] },
        h0,
        dht: h0,
        conv_state: h0,
        regime: Regime::Typical,
        seed: 300 + u64::from(h0),
    });
    check_all("packed", &cases);
}

/// A conv state in and a gradient arriving at the final conv state, for every `kk` and for
/// sequences shorter than the window (`T < kk − 1`: the final state reaches into the old one),
/// fixed and packed.
#[test]
fn conv_state_gradients_match_finite_differences() {
    let shapes = [
        (config(1, 2, 3, 4, 1), Batch::Fixed { b: 2, t: 3 }),
        (config(1, 1, 4, 3, 2), Batch::Fixed { b: 2, t: 1 }),
        (config(2, 1, 3, 2, 3), Batch::Fixed { b: 1, t: 4 }),
        (config(1, 2, 4, 3, 4), Batch::Fixed { b: 2, t: 2 }),
        (config(1, 2, 3, 3, 4), Batch::Fixed { b: 1, t: 6 }),
        (config(1, 1, 3, 4, 4), Batch::Packed { cu_seqlens: vec![0, 1, 3, 8] }),
    ];
    let cases: Vec<Case> = shapes
        .into_iter()
        .enumerate()
        .map(|(n, (config, batch))| Case {
            config,
            batch,
            h0: n % 2 == 0,
            dht: true,
            conv_state: true,
            regime: Regime::Typical,
            seed: 400 + n as u64,
        })
        .collect();
    check_all("conv state", &cases);
}
