//! Finite-difference machinery shared by the gradient tests: perturb one element of one tensor,
//! re-run the forward, and compare the slope with the hand-written backward.

use gdn_ref::compare::relative_error_floored;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Gradients, Layer, LayerConfig, LayerInputs, LayerParams, OutputGrads};
use std::collections::BTreeMap;

/// The spec's bar for the reference's gradients against finite differences.
pub const FD_BAR: f64 = 1e-6;

/// Steps tried by the five-point stencil (truncation O(h⁴), round-off O(1/h)). Gradients here span
/// curvature scales from 1e-3 (L2 norms of short heads) to 10 (saturated sigmoids), so each element
/// takes the step whose estimate agrees best with the next smaller one.
const STEPS: [f64; 8] = [1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5];

/// RMS below which a finite-difference gradient is round-off: the loss is a sum of O(1) terms
/// known to ~1e-15, divided by the step.
const FD_NOISE_RMS: f64 = 1e-10;

/// Every tensor the backward differentiates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tensor {
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
pub struct Case {
    pub config: LayerConfig,
    pub batch: Batch,
    pub h0: bool,
    pub dht: bool,
    /// A random conv state in, and a random gradient arriving at the final conv state.
    pub conv_state: bool,
    pub regime: Regime,
    pub seed: u64,
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
pub fn check(case: &Case) -> BTreeMap<Tensor, f64> {
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
        let count = want.len();
        let fd: Vec<f64> = (0..count)
            .map(|e| {
                let at = |offset: f64| {
                    let (mut x, mut p) = (inputs.clone(), params.clone());
                    tensor.values(&mut x, &mut p).expect("tensor present")[e] += offset;
                    loss(&Layer::new(case.config, p).expect("valid layer"), &x, &grads)
                };
                let slopes: Vec<f64> = STEPS
                    .iter()
                    .map(|&h| (8.0 * (at(h) - at(-h)) - (at(2.0 * h) - at(-2.0 * h))) / (12.0 * h))
                    .collect();
                let best = (0..slopes.len() - 1)
                    .min_by(|&i, &j| (slopes[i] - slopes[i + 1]).abs().total_cmp(&(slopes[j] - slopes[j + 1]).abs()))
                    .expect("several steps");
                slopes[best + 1]
            })
            .collect();
        errors.insert(tensor, relative_error_floored(want, &fd, FD_NOISE_RMS));
    }
    errors
}

/// Runs every case, prints the worst error per tensor, and fails on any above the bar.
pub fn check_all(title: &str, cases: &[Case]) {
    let mut worst: BTreeMap<Tensor, (f64, usize)> = BTreeMap::new();
    for (n, case) in cases.iter().enumerate() {
        for (tensor, err) in check(case) {
            let entry = worst.entry(tensor).or_insert((0.0, n));
            if err.is_nan() || err > entry.0 {
                *entry = (err, n);
            }
        }
    }
    println!("{title}: worst relative error against finite differences over {} cases", cases.len());
    for (tensor, (err, n)) in &worst {
        println!("  {tensor:?}: {err:.2e} (case {n}: {:?})", cases[*n]);
    }
    for (tensor, (err, n)) in &worst {
        assert!(*err <= FD_BAR, "{tensor:?}: {err:.2e} > {FD_BAR:e} in case {:?}", cases[*n]);
    }
}
