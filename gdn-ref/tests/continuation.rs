//! State continuation: a forward over `[0, T)` equals a forward over `[0, t)` then `[t, T)` carrying
//! both states — the recurrent state (`hT` → `h0`) and the conv window (final `conv_state` →
//! `conv_state`) — for every `kk` and cut, including pieces shorter than the conv window. The
//! backward runs the pieces in reverse, passing `dh0` as `dhT` and `dconv_state` as the gradient of
//! the previous piece's final conv state, and must give every gradient of the whole.

use gdn_ref::compare::relative_error_floored;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, ForwardResult, Gradients, Layer, LayerConfig, LayerInputs, OutputGrads};
use ndarray::{Array, Array3, Axis, Dimension, concatenate, s};

/// Both sides compute the same sums in f64, possibly in another order.
const BAR: f64 = 1e-12;

fn assert_close<D: Dimension>(name: &str, got: &Array<f64, D>, want: &Array<f64, D>) -> f64 {
    assert_eq!(got.shape(), want.shape(), "{name}: shapes differ");
    let err = relative_error_floored(
        &got.iter().copied().collect::<Vec<_>>(),
        &want.iter().copied().collect::<Vec<_>>(),
        0.0,
    );
    assert!(err <= BAR, "{name}: relative error {err:.2e} > {BAR:e}");
    err
}

/// The token ranges of every sequence in one piece: `pieces[p][n]` is sequence `n`'s range.
type Pieces = Vec<Vec<std::ops::Range<usize>>>;

/// Tokens of `x` (laid out as `batch`) taken by piece `ranges`, packed when `batch` is, fixed
/// `[B, len, …]` when it is fixed (every range then has the same length).
fn gather(batch: &Batch, a: &Array3<f64>, ranges: &[std::ops::Range<usize>]) -> Array3<f64> {
    match batch {
        Batch::Fixed { .. } => {
            let rows: Vec<_> = ranges.iter().enumerate().map(|(n, r)| a.slice(s![n..n + 1, r.clone(), ..])).collect();
            concatenate(Axis(0), &rows).unwrap()
        }
        Batch::Packed { cu_seqlens } => {
            let rows: Vec<_> = ranges
                .iter()
                .enumerate()
                .map(|(n, r)| a.slice(s![.., cu_seqlens[n] + r.start..cu_seqlens[n] + r.end, ..]))
                .collect();
            concatenate(Axis(1), &rows).unwrap()
        }
    }
}

/// Puts piece tensors back in the whole's layout.
fn scatter(batch: &Batch, whole: &mut Array3<f64>, piece: &Array3<f64>, ranges: &[std::ops::Range<usize>]) {
    let mut offset = 0;
    for (n, r) in ranges.iter().enumerate() {
        match batch {
            Batch::Fixed { .. } => whole.slice_mut(s![n, r.clone(), ..]).assign(&piece.slice(s![n, .., ..])),
            Batch::Packed { cu_seqlens } => {
                let len = r.len();
                whole.slice_mut(s![0, cu_seqlens[n] + r.start..cu_seqlens[n] + r.end, ..]).assign(&piece.slice(s![
                    0,
                    offset..offset + len,
                    ..
                ]));
                offset += len;
            }
        }
    }
}

fn piece_batch(batch: &Batch, ranges: &[std::ops::Range<usize>]) -> Batch {
    match batch {
        Batch::Fixed { b, .. } => Batch::Fixed { b: *b, t: ranges[0].len() },
        Batch::Packed { .. } => {
            let mut cu = vec![0];
            for r in ranges {
                cu.push(cu.last().unwrap() + r.len());
            }
            Batch::Packed { cu_seqlens: cu }
        }
    }
}

/// Runs `x` whole and in `pieces`, forward and backward, and compares every tensor; returns the
/// worst error.
fn check_continuation(config: LayerConfig, batch: &Batch, pieces: &Pieces, seed: u64) -> f64 {
    let mut sampler = Sampler::new(seed);
    let layer = Layer::new(config, sampler.params(&config, Regime::Typical)).unwrap();
    let mut x = sampler.inputs(&config, batch, true, Regime::Typical);
    x.conv_state = Some(sampler.conv_state(&config, batch));
    let mut grads = sampler.output_grads(&config, batch, true);
    grads.dconv_state = Some(sampler.conv_state_grad(&config, batch));
    let whole = layer.forward(&x).unwrap();
    let whole_g = layer.backward(&x, &grads).unwrap();

    // Forward, piece by piece, carrying both states.
    let mut piece_inputs: Vec<LayerInputs> = Vec::new();
    let mut results: Vec<ForwardResult> = Vec::new();
    for ranges in pieces {
        let pb = piece_batch(batch, ranges);
        let (h0, conv_state) = match results.last() {
            Some(prev) => (prev.ht.clone(), prev.conv_state.clone()),
            None => (x.h0.clone().unwrap(), x.conv_state.clone().unwrap()),
        };
        let px = LayerInputs {
            qkv: gather(batch, &x.qkv, ranges),
            z: gather(batch, &x.z, ranges),
            a: gather(batch, &x.a, ranges),
            b: gather(batch, &x.b, ranges),
            h0: Some(h0),
            conv_state: Some(conv_state),
            cu_seqlens: match pb {
                Batch::Fixed { .. } => None,
                Batch::Packed { cu_seqlens } => Some(cu_seqlens),
            },
        };
        results.push(layer.forward(&px).unwrap());
        piece_inputs.push(px);
    }
    let mut out = nan_like(&whole.out);
    for (ranges, r) in pieces.iter().zip(&results) {
        scatter(batch, &mut out, &r.out, ranges);
    }
    let last = results.last().unwrap();
    let mut worst = [
        assert_close("out", &out, &whole.out),
        assert_close("hT", &last.ht, &whole.ht),
        assert_close("conv_state", &last.conv_state, &whole.conv_state),
    ]
    .into_iter()
    .fold(0.0, f64::max);

    // Backward, in reverse, carrying both state gradients.
    let (mut dht, mut d_conv) = (grads.dht.clone().unwrap(), grads.dconv_state.clone().unwrap());
    let (mut dqkv, mut dz, mut da, mut db) =
        (nan_like(&whole_g.dqkv), nan_like(&whole_g.dz), nan_like(&whole_g.da), nan_like(&whole_g.db));
    let mut param_sums: Option<Gradients> = None;
    for (ranges, px) in pieces.iter().zip(&piece_inputs).rev() {
        let pg = OutputGrads { dout: gather(batch, &grads.dout, ranges), dht: Some(dht), dconv_state: Some(d_conv) };
        let g = layer.backward(px, &pg).unwrap();
        scatter(batch, &mut dqkv, &g.dqkv, ranges);
        scatter(batch, &mut dz, &g.dz, ranges);
        scatter(batch, &mut da, &g.da, ranges);
        scatter(batch, &mut db, &g.db, ranges);
        dht = g.dh0.clone().unwrap();
        d_conv = g.dconv_state.clone().unwrap();
        param_sums = Some(match param_sums {
            None => g,
            Some(mut sum) => {
                sum.da_log += &g.da_log;
                sum.ddt_bias += &g.ddt_bias;
                sum.dnorm += &g.dnorm;
                sum.dconv += &g.dconv;
                sum
            }
        });
    }
    let sums = param_sums.unwrap();
    for err in [
        assert_close("dqkv", &dqkv, &whole_g.dqkv),
        assert_close("dz", &dz, &whole_g.dz),
        assert_close("da", &da, &whole_g.da),
        assert_close("db", &db, &whole_g.db),
        assert_close("dh0", &dht, whole_g.dh0.as_ref().unwrap()),
        assert_close("dconv_state", &d_conv, whole_g.dconv_state.as_ref().unwrap()),
        assert_close("da_log", &sums.da_log, &whole_g.da_log),
        assert_close("ddt_bias", &sums.ddt_bias, &whole_g.ddt_bias),
        assert_close("dnorm", &sums.dnorm, &whole_g.dnorm),
        assert_close("dconv", &sums.dconv, &whole_g.dconv),
    ] {
        worst = worst.max(err);
    }
    worst
}

fn nan_like(a: &Array3<f64>) -> Array3<f64> {
    Array3::from_elem(a.raw_dim(), f64::NAN)
}

/// Cuts of `[0, t)` at `cuts` (increasing, inside), the same for every one of `b` sequences.
fn fixed_pieces(b: usize, t: usize, cuts: &[usize]) -> Pieces {
    let bounds: Vec<usize> = std::iter::once(0).chain(cuts.iter().copied()).chain(std::iter::once(t)).collect();
    bounds.windows(2).map(|w| vec![w[0]..w[1]; b]).collect()
}

/// Every `kk` from 1 to 4, every cut of a 7-token window, and three-way splits whose middle piece
/// is shorter than the conv window.
#[test]
fn a_fixed_batch_split_and_chained_through_both_states_equals_the_whole() {
    let (b, t) = (2, 7);
    let mut worst = 0.0_f64;
    let mut runs = 0;
    for kk in 1..=4 {
        let config = LayerConfig::new(1, 2, 3, 4, kk).unwrap();
        let splits: Vec<Vec<usize>> =
            (1..t).map(|c| vec![c]).chain([vec![2, 3], vec![3, 5], vec![1, 2], vec![5, 6]]).collect();
        for (n, cuts) in splits.iter().enumerate() {
            worst = worst.max(check_continuation(
                config,
                &Batch::Fixed { b, t },
                &fixed_pieces(b, t, cuts),
                500 + 10 * kk as u64 + n as u64,
            ));
            runs += 1;
        }
    }
    println!("fixed: {runs} splits, worst relative error {worst:.2e}");
}

/// Packed sequences of lengths 3, 5 and 3, each cut at its own place, in two and three pieces
/// (pieces of one token included).
#[test]
fn a_packed_batch_split_and_chained_through_both_states_equals_the_whole() {
    let batch = Batch::Packed { cu_seqlens: vec![0, 3, 8, 11] };
    let splits: [Pieces; 3] = [
        vec![vec![0..1, 0..3, 0..2], vec![1..3, 3..5, 2..3]],
        vec![vec![0..2, 0..1, 0..1], vec![2..3, 1..5, 1..3]],
        vec![vec![0..1, 0..2, 0..1], vec![1..2, 2..3, 1..2], vec![2..3, 3..5, 2..3]],
    ];
    let mut worst = 0.0_f64;
    for kk in 1..=4 {
        let config = LayerConfig::new(1, 2, 3, 4, kk).unwrap();
        for (n, pieces) in splits.iter().enumerate() {
            worst = worst.max(check_continuation(config, &batch, pieces, 600 + 10 * kk as u64 + n as u64));
        }
    }
    println!("packed: worst relative error {worst:.2e}");
}
