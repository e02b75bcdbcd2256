//! The hand-written backward against five-point finite differences in f64, on every gradient:
//! the four input streams, the initial recurrent and conv states and the four parameters.

mod common;

use common::{check_all, fd_error};
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Gradients, Layer, LayerConfig, LayerInputs, LayerParams, OutputGrads};
use std::collections::BTreeMap;

/// Every tensor the backward differentiates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tensor {
    Qkv,
    Z,
    A,
    B,
    H0,
    ALog,
    DtBias,
    Norm,
    Conv,
    ConvState,
}

impl Tensor {
    const ALL: [Tensor; 10] = [
        Tensor::Qkv,
        Tensor::Z,
        Tensor::A,
        Tensor::B,
        Tensor::H0,
        Tensor::ALog,
        Tensor::DtBias,
        Tensor::Norm,
        Tensor::Conv,
        Tensor::ConvState,
    ];

    fn values<'a>(self, inputs: &'a mut LayerInputs, params: &'a mut LayerParams) -> Option<&'a mut [f64]> {
        match self {
            Tensor::Qkv => inputs.qkv.as_slice_mut(),
            Tensor::Z => inputs.z.as_slice_mut(),
            Tensor::A => inputs.a.as_slice_mut(),
            Tensor::B => inputs.b.as_slice_mut(),
            Tensor::H0 => inputs.h0.as_mut().and_then(|h| h.as_slice_mut()),
            Tensor::ALog => params.a_log.as_slice_mut(),
            Tensor::DtBias => params.dt_bias.as_slice_mut(),
            Tensor::Norm => params.norm.as_slice_mut(),
            Tensor::Conv => params.conv.as_slice_mut(),
            Tensor::ConvState => inputs.conv_state.as_mut().and_then(|s| s.as_slice_mut()),
        }
    }

    fn gradient(self, grads: &Gradients) -> Option<&[f64]> {
        match self {
            Tensor::Qkv => grads.dqkv.as_slice(),
            Tensor::Z => grads.dz.as_slice(),
            Tensor::A => grads.da.as_slice(),
            Tensor::B => grads.db.as_slice(),
            Tensor::H0 => grads.dh0.as_ref().and_then(|h| h.as_slice()),
            Tensor::ALog => grads.da_log.as_slice(),
            Tensor::DtBias => grads.ddt_bias.as_slice(),
            Tensor::Norm => grads.dnorm.as_slice(),
            Tensor::Conv => grads.dconv.as_slice(),
            Tensor::ConvState => grads.dconv_state.as_ref().and_then(|s| s.as_slice()),
        }
    }
}

/// One gradient check.
#[derive(Debug, Clone)]
struct Case {
    config: LayerConfig,
    batch: Batch,
    h0: bool,
    dht: bool,
    /// A random conv state in, and a random gradient arriving at the final conv state.
    conv_state: bool,
    regime: Regime,
    seed: u64,
}

/// `L = Σ out·dout + Σ hT·dhT + Σ conv_stateT·dconv_stateT`, whose gradient the backward computes for `grads`.
fn loss(layer: &Layer, inputs: &LayerInputs, grads: &OutputGrads) -> f64 {
    let fwd = layer.forward(inputs).expect("valid inputs");
    let mut l = (&fwd.out * &grads.dout).sum();
    if let Some(dht) = &grads.dht {
        l += (&fwd.ht * dht).sum();
    }
    if let Some(d) = &grads.dconv_state {
        l += (&fwd.conv_state * d).sum();
    }
    l
}

/// Relative error of the backward against finite differences, per tensor.
fn check(case: &Case) -> BTreeMap<Tensor, f64> {
    let mut sampler = Sampler::new(case.seed);
    let params = sampler.params(&case.config, case.regime);
    let mut inputs = sampler.inputs(&case.config, &case.batch, case.h0, case.regime);
    let mut grads = sampler.output_grads(&case.config, &case.batch, case.dht);
    if case.conv_state {
        inputs.conv_state = Some(sampler.conv_state(&case.config, &case.batch));
        grads.dconv_state = Some(sampler.conv_state_grad(&case.config, &case.batch));
    }
    let layer = Layer::new(case.config, params.clone()).expect("valid layer");
    let analytic = layer.backward(&inputs, &grads).expect("valid inputs");
    assert_eq!(analytic.dh0.is_some(), case.h0, "dh0 must be returned exactly when h0 is given");
    assert_eq!(analytic.dconv_state.is_some(), case.conv_state, "dconv_state exactly when conv_state is given");

    let mut errors = BTreeMap::new();
    for tensor in Tensor::ALL {
        let Some(want) = tensor.gradient(&analytic).filter(|g| !g.is_empty()) else { continue };
        let error = fd_error(want, |e, offset| {
            let (mut x, mut p) = (inputs.clone(), params.clone());
            tensor.values(&mut x, &mut p).expect("tensor present")[e] += offset;
            loss(&Layer::new(case.config, p).expect("valid layer"), &x, &grads)
        });
        errors.insert(tensor, error);
    }
    errors
}

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
    check_all("shapes", &cases, check);
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
    check_all("gate extremes", &cases, check);
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
    check_all("packed", &cases, check);
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
    check_all("conv state", &cases, check);
}
