//! The device's conv state against the f64 reference, at the spec's f32 bars: the conv window read
//! before each sequence's start, the final window written by the forward, and their gradients
//! (`dconv_state` out, the final window's gradient in), for every `kk`, fixed and packed batches and
//! sequences shorter than the window. Then continuation on the device: a batch run in pieces, each
//! piece starting from the previous piece's `hT` and final conv window (and its backward from the
//! next piece's `dh0` and `dconv_state`), equals the batch run whole — against the reference and
//! against the device's own one-call run. Outputs are poisoned with NaN before every run.

use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Layer, LayerConfig, LayerInputs, LayerParams, OutputGrads};
use gdn_train::{Context, Gradients, Inputs, Outputs, Params, Tape, TapeOptions};
use ndarray::{Array3, Axis, concatenate, s};
use std::ops::Range;

const OUTPUT_BAR: f64 = gdn_check::OUTPUT_BAR;
const GRADIENT_BAR: f64 = gdn_check::GRADIENT_BAR;

fn context() -> &'static Context {
    gdn_check::device_context()
}

fn to_f32<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<f32> {
    values.into_iter().map(|&v| v as f32).collect()
}

fn to_f64(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v)).collect()
}

/// One layer, batch and draw with both states in and both state gradients arriving.
struct Problem {
    config: LayerConfig,
    batch: Batch,
    params: LayerParams,
    x: LayerInputs,
    grads: OutputGrads,
}

fn draw(config: LayerConfig, batch: Batch, seed: u64) -> Problem {
    let mut sampler = Sampler::new(seed);
    let params = sampler.params(&config, Regime::Typical);
    let mut x = sampler.inputs(&config, &batch, true, Regime::Typical);
    x.conv_state = Some(sampler.conv_state(&config, &batch));
    let mut grads = sampler.output_grads(&config, &batch, true);
    grads.dconv_state = Some(sampler.conv_state_grad(&config, &batch));
    Problem { config, batch, params, x, grads }
}

/// The forward of `x` on the device, on a tape with `h0`, `dhT` and a conv state, every output
/// poisoned with NaN first. The tape is returned for the backward that follows.
fn device_forward(ctx: &Context, p: &Problem, x: &LayerInputs, batch: &Batch) -> (Tape, Outputs) {
    let (config, batch) = (p.config, batch.clone());
    let options =
        TapeOptions { initial_state: true, final_state_grad: true, conv_state: true, ..TapeOptions::default() };
    let tape = Tape::new(ctx, config, batch, options).expect("tape");
    let (a_log, dt_bias, norm, conv) =
        (to_f32(&p.params.a_log), to_f32(&p.params.dt_bias), to_f32(&p.params.norm), to_f32(&p.params.conv));
    tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv }).expect("params");
    let (qkv, z, a, b) = (to_f32(&x.qkv), to_f32(&x.z), to_f32(&x.a), to_f32(&x.b));
    let (h0, conv_state) = (to_f32(x.h0.as_ref().unwrap()), to_f32(x.conv_state.as_ref().unwrap()));
    tape.fill_outputs_with_nan().unwrap();
    let inputs = Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: Some(&h0), conv_state: Some(&conv_state) };
    let outputs = tape.run_forward(&inputs).expect("forward");
    (tape, outputs)
}

fn device_backward(tape: &Tape, grads: &OutputGrads) -> Gradients {
    tape.write_final_conv_state_grad(&to_f32(grads.dconv_state.as_ref().unwrap())).expect("dconv_state");
    let dht = to_f32(grads.dht.as_ref().unwrap());
    tape.run_backward(&to_f32(&grads.dout), Some(&dht)).expect("backward")
}

/// Errors of one comparison, printed as a table and checked against the bars.
#[derive(Default)]
struct Table {
    rows: Vec<(String, f64, f64)>,
}

impl Table {
    fn add(&mut self, name: &str, got: &[f64], want: &[f64], bar: f64) {
        let error = if got.len() == want.len() { relative_error_f32(got, want) } else { f64::INFINITY };
        self.rows.push((name.to_string(), error, bar));
    }

    fn check(&self, title: &str) {
        println!("{title}");
        for (name, error, bar) in &self.rows {
            println!("  {name:<12} {error:>10.2e}  (bar {bar:.0e})");
        }
        let failed: Vec<_> = self.rows.iter().filter(|(_, e, b)| e > b).collect();
        assert!(failed.is_empty(), "{title}: over the bar: {failed:?}");
    }
}

fn flat(a: &Array3<f64>) -> Vec<f64> {
    a.iter().copied().collect()
}

/// One device run against the reference: every output and gradient, the conv state's included.
fn check_against_reference(ctx: &Context, p: &Problem, title: &str) {
    let layer = Layer::new(p.config, p.params.clone()).unwrap();
    let want = layer.forward(&p.x).unwrap();
    let want_g = layer.backward(&p.x, &p.grads).unwrap();
    let (tape, got) = device_forward(ctx, p, &p.x, &p.batch);
    let got_g = device_backward(&tape, &p.grads);
    let mut table = Table::default();
    table.add("out", &to_f64(&got.out), &flat(&want.out), OUTPUT_BAR);
    table.add("hT", &to_f64(&got.ht), &want.ht.iter().copied().collect::<Vec<_>>(), OUTPUT_BAR);
    table.add("conv_state T", &to_f64(got.conv_state.as_ref().unwrap()), &flat(&want.conv_state), OUTPUT_BAR);
    table.add("dqkv", &to_f64(&got_g.dqkv), &flat(&want_g.dqkv), GRADIENT_BAR);
    table.add("dz", &to_f64(&got_g.dz), &flat(&want_g.dz), GRADIENT_BAR);
    table.add("da", &to_f64(&got_g.da), &flat(&want_g.da), GRADIENT_BAR);
    table.add("db", &to_f64(&got_g.db), &flat(&want_g.db), GRADIENT_BAR);
    let dh0: Vec<f64> = want_g.dh0.as_ref().unwrap().iter().copied().collect();
    table.add("dh0", &to_f64(got_g.dh0.as_ref().unwrap()), &dh0, GRADIENT_BAR);
    let dconv_state = flat(want_g.dconv_state.as_ref().unwrap());
    table.add("dconv_state", &to_f64(got_g.dconv_state.as_ref().unwrap()), &dconv_state, GRADIENT_BAR);
    table.add("da_log", &to_f64(&got_g.da_log), &want_g.da_log.to_vec(), GRADIENT_BAR);
    table.add("ddt_bias", &to_f64(&got_g.ddt_bias), &want_g.ddt_bias.to_vec(), GRADIENT_BAR);
    table.add("dnorm", &to_f64(&got_g.dnorm), &want_g.dnorm.to_vec(), GRADIENT_BAR);
    table.add("dconv", &to_f64(&got_g.dconv), &want_g.dconv.iter().copied().collect::<Vec<_>>(), GRADIENT_BAR);
    table.check(title);
}

fn config(kk: usize) -> LayerConfig {
    LayerConfig::new(1, 2, 16, 16, kk).expect("valid config")
}

/// Every `kk`, a fixed batch, a packed batch with sequences shorter than the window, and `T = 1`.
#[test]
fn conv_state_in_out_and_gradients_match_the_reference() {
    let ctx = context();
    for kk in 1..=4 {
        for (n, batch) in
            [Batch::Fixed { b: 2, t: 5 }, Batch::Packed { cu_seqlens: vec![0, 1, 3, 9] }, Batch::Fixed { b: 3, t: 1 }]
                .into_iter()
                .enumerate()
        {
            let title = format!("kk = {kk}, {batch:?}: device against the reference");
            check_against_reference(ctx, &draw(config(kk), batch, 700 + 10 * kk as u64 + n as u64), &title);
        }
    }
}

/// `pieces[p][n]`: the tokens of sequence `n` (relative to its start) in piece `p`.
type Pieces = Vec<Vec<Range<usize>>>;

/// The rows of `a` (laid out as `batch`) that piece `ranges` takes, in the piece's layout.
fn gather(batch: &Batch, a: &Array3<f64>, ranges: &[Range<usize>]) -> Array3<f64> {
    let rows: Vec<_> = ranges
        .iter()
        .enumerate()
        .map(|(n, r)| match batch {
            Batch::Fixed { .. } => a.slice(s![n..n + 1, r.clone(), ..]),
            Batch::Packed { cu_seqlens } => a.slice(s![.., cu_seqlens[n] + r.start..cu_seqlens[n] + r.end, ..]),
        })
        .collect();
    let axis = if matches!(batch, Batch::Fixed { .. }) { Axis(0) } else { Axis(1) };
    concatenate(axis, &rows).unwrap()
}

/// The piece's values written back into a tensor laid out as `batch` (`[tokens, width]` flat).
fn scatter(batch: &Batch, whole: &mut [f64], piece: &[f32], ranges: &[Range<usize>], width: usize) {
    let mut src = 0;
    for (n, r) in ranges.iter().enumerate() {
        let first = match batch {
            Batch::Fixed { t, .. } => n * t,
            Batch::Packed { cu_seqlens } => cu_seqlens[n],
        };
        for tok in r.clone() {
            for (w, v) in whole[(first + tok) * width..][..width].iter_mut().zip(&piece[src * width..][..width]) {
                *w = f64::from(*v);
            }
            src += 1;
        }
    }
}

fn piece_batch(batch: &Batch, ranges: &[Range<usize>]) -> Batch {
    match batch {
        Batch::Fixed { b, .. } => Batch::Fixed { b: *b, t: ranges[0].len() },
        Batch::Packed { .. } => Batch::Packed {
            cu_seqlens: std::iter::once(0)
                .chain(ranges.iter().scan(0, |end, r| {
                    *end += r.len();
                    Some(*end)
                }))
                .collect(),
        },
    }
}

/// `p` run in `pieces` on the device, carrying both states forward and both state gradients
/// backward, against the reference and against the device run whole.
fn check_continuation(ctx: &Context, p: &Problem, pieces: &Pieces, title: &str) {
    let layer = Layer::new(p.config, p.params.clone()).unwrap();
    let want = layer.forward(&p.x).unwrap();
    let want_g = layer.backward(&p.x, &p.grads).unwrap();
    let (whole_tape, whole) = device_forward(ctx, p, &p.x, &p.batch);
    let whole_g = device_backward(&whole_tape, &p.grads);

    let (c, v, nv) = (p.config.channels(), p.config.value_width(), p.config.nv);
    let tokens = p.x.qkv.shape()[0] * p.x.qkv.shape()[1];
    let mut out = vec![f64::NAN; tokens * v];
    let mut tapes: Vec<Tape> = Vec::new();
    let (mut h0, mut conv_state) = (p.x.h0.clone().unwrap(), p.x.conv_state.clone().unwrap());
    for ranges in pieces {
        let pb = piece_batch(&p.batch, ranges);
        let x = LayerInputs {
            qkv: gather(&p.batch, &p.x.qkv, ranges),
            z: gather(&p.batch, &p.x.z, ranges),
            a: gather(&p.batch, &p.x.a, ranges),
            b: gather(&p.batch, &p.x.b, ranges),
            h0: Some(h0.clone()),
            conv_state: Some(conv_state.clone()),
            cu_seqlens: if let Batch::Packed { cu_seqlens } = &pb { Some(cu_seqlens.clone()) } else { None },
        };
        let (tape, got) = device_forward(ctx, p, &x, &pb);
        scatter(&p.batch, &mut out, &got.out, ranges, v);
        h0 = ndarray::Array::from_shape_vec(h0.raw_dim(), to_f64(&got.ht)).unwrap();
        conv_state = Array3::from_shape_vec(conv_state.raw_dim(), to_f64(got.conv_state.as_ref().unwrap())).unwrap();
        tapes.push(tape);
    }

    let (mut dht, mut d_conv) = (p.grads.dht.clone().unwrap(), p.grads.dconv_state.clone().unwrap());
    let (mut dqkv, mut dz, mut da, mut db) = (
        vec![f64::NAN; tokens * c],
        vec![f64::NAN; tokens * v],
        vec![f64::NAN; tokens * nv],
        vec![f64::NAN; tokens * nv],
    );
    let mut params = [vec![0.0; nv], vec![0.0; nv], vec![0.0; p.config.dv], vec![0.0; c * p.config.kk]];
    for (tape, ranges) in tapes.iter().zip(pieces).rev() {
        let grads = OutputGrads {
            dout: gather(&p.batch, &p.grads.dout, ranges),
            dht: Some(dht.clone()),
            dconv_state: Some(d_conv.clone()),
        };
        let g = device_backward(tape, &grads);
        scatter(&p.batch, &mut dqkv, &g.dqkv, ranges, c);
        scatter(&p.batch, &mut dz, &g.dz, ranges, v);
        scatter(&p.batch, &mut da, &g.da, ranges, nv);
        scatter(&p.batch, &mut db, &g.db, ranges, nv);
        for (sum, part) in params.iter_mut().zip([&g.da_log, &g.ddt_bias, &g.dnorm, &g.dconv]) {
            sum.iter_mut().zip(part).for_each(|(s, &v)| *s += f64::from(v));
        }
        dht = ndarray::Array::from_shape_vec(dht.raw_dim(), to_f64(g.dh0.as_ref().unwrap())).unwrap();
        d_conv = Array3::from_shape_vec(d_conv.raw_dim(), to_f64(g.dconv_state.as_ref().unwrap())).unwrap();
    }

    let pieces_run: [(&str, Vec<f64>, f64); 13] = [
        ("out", out, OUTPUT_BAR),
        ("hT", h0.iter().copied().collect(), OUTPUT_BAR),
        ("conv_state T", flat(&conv_state), OUTPUT_BAR),
        ("dqkv", dqkv, GRADIENT_BAR),
        ("dz", dz, GRADIENT_BAR),
        ("da", da, GRADIENT_BAR),
        ("db", db, GRADIENT_BAR),
        ("dh0", dht.iter().copied().collect(), GRADIENT_BAR),
        ("dconv_state", flat(&d_conv), GRADIENT_BAR),
        ("da_log", params[0].clone(), GRADIENT_BAR),
        ("ddt_bias", params[1].clone(), GRADIENT_BAR),
        ("dnorm", params[2].clone(), GRADIENT_BAR),
        ("dconv", params[3].clone(), GRADIENT_BAR),
    ];
    let reference: [Vec<f64>; 13] = [
        flat(&want.out),
        want.ht.iter().copied().collect(),
        flat(&want.conv_state),
        flat(&want_g.dqkv),
        flat(&want_g.dz),
        flat(&want_g.da),
        flat(&want_g.db),
        want_g.dh0.as_ref().unwrap().iter().copied().collect(),
        flat(want_g.dconv_state.as_ref().unwrap()),
        want_g.da_log.to_vec(),
        want_g.ddt_bias.to_vec(),
        want_g.dnorm.to_vec(),
        want_g.dconv.iter().copied().collect(),
    ];
    let one_call: [Vec<f64>; 13] = [
        to_f64(&whole.out),
        to_f64(&whole.ht),
        to_f64(whole.conv_state.as_ref().unwrap()),
        to_f64(&whole_g.dqkv),
        to_f64(&whole_g.dz),
        to_f64(&whole_g.da),
        to_f64(&whole_g.db),
        to_f64(whole_g.dh0.as_ref().unwrap()),
        to_f64(whole_g.dconv_state.as_ref().unwrap()),
        to_f64(&whole_g.da_log),
        to_f64(&whole_g.ddt_bias),
        to_f64(&whole_g.dnorm),
        to_f64(&whole_g.dconv),
    ];
    let (mut vs_reference, mut vs_one_call) = (Table::default(), Table::default());
    for ((name, got, bar), (r, w)) in pieces_run.iter().zip(reference.iter().zip(&one_call)) {
        vs_reference.add(name, got, r, *bar);
        vs_one_call.add(name, got, w, *bar);
    }
    vs_reference.check(&format!("{title}: pieces on the device against the reference run whole"));
    vs_one_call.check(&format!("{title}: pieces on the device against the device run whole"));
}

fn fixed_pieces(b: usize, t: usize, cuts: &[usize]) -> Pieces {
    let bounds: Vec<usize> = std::iter::once(0).chain(cuts.iter().copied()).chain(std::iter::once(t)).collect();
    bounds.windows(2).map(|w| vec![w[0]..w[1]; b]).collect()
}

/// Every `kk`, cuts that leave a piece shorter than the window, three pieces, and a packed batch
/// cut at a different place in each sequence.
#[test]
fn two_calls_carrying_both_states_equal_one_call_on_the_device() {
    let ctx = context();
    for kk in 1..=4 {
        for (n, cuts) in [vec![1], vec![4], vec![2, 3]].iter().enumerate() {
            let p = draw(config(kk), Batch::Fixed { b: 2, t: 6 }, 800 + 10 * kk as u64 + n as u64);
            check_continuation(ctx, &p, &fixed_pieces(2, 6, cuts), &format!("kk = {kk}, B = 2, T = 6 cut at {cuts:?}"));
        }
        let p = draw(config(kk), Batch::Packed { cu_seqlens: vec![0, 3, 8, 10] }, 900 + kk as u64);
        let pieces = vec![vec![0..1, 0..3, 0..1], vec![1..3, 3..5, 1..2]];
        check_continuation(ctx, &p, &pieces, &format!("kk = {kk}, packed [3, 5, 2]"));
    }
}
