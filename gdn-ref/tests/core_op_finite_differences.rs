//! The core op's hand-written backward against five-point finite differences in f64, on every
//! gradient it returns: `q`, `k`, `v`, `h0`, and the gates in both forms (`ln g` and `β`, or the
//! logits `a`, `b` with `a_log`, `dt_bias`), with and without the in-op L2 norm, fixed and packed.

mod common;

use common::{check_all, fd_error};
use gdn_ref::sample::{GateForm, Regime, Sampler};
use gdn_ref::{
    Batch, BetaGrad, BetaInput, CoreConfig, CoreGradients, CoreInputs, CoreOp, CoreOutputGrads, DecayGrad, DecayInput,
};
use std::collections::BTreeMap;

/// Every tensor the core op's backward differentiates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tensor {
    Q,
    K,
    V,
    H0,
    LogG,
    A,
    ALog,
    DtBias,
    Beta,
    B,
}

impl Tensor {
    const ALL: [Tensor; 10] = [
        Tensor::Q,
        Tensor::K,
        Tensor::V,
        Tensor::H0,
        Tensor::LogG,
        Tensor::A,
        Tensor::ALog,
        Tensor::DtBias,
        Tensor::Beta,
        Tensor::B,
    ];

    /// Its values in `inputs`, when the inputs have it (the gates in one form only).
    fn values(self, inputs: &mut CoreInputs) -> Option<&mut [f64]> {
        match (self, &mut inputs.decay, &mut inputs.beta) {
            (Tensor::Q, ..) => inputs.q.as_slice_mut(),
            (Tensor::K, ..) => inputs.k.as_slice_mut(),
            (Tensor::V, ..) => inputs.v.as_slice_mut(),
            (Tensor::H0, ..) => inputs.h0.as_mut().and_then(|h| h.as_slice_mut()),
            (Tensor::LogG, DecayInput::LogSpace(g), _) => g.as_slice_mut(),
            (Tensor::A, DecayInput::Logits { a, .. }, _) => a.as_slice_mut(),
            (Tensor::ALog, DecayInput::Logits { a_log, .. }, _) => a_log.as_slice_mut(),
            (Tensor::DtBias, DecayInput::Logits { dt_bias, .. }, _) => dt_bias.as_slice_mut(),
            (Tensor::Beta, _, BetaInput::Direct(beta)) => beta.as_slice_mut(),
            (Tensor::B, _, BetaInput::Logits(b)) => b.as_slice_mut(),
            _ => None,
        }
    }

    /// Its gradient in `grads`, when the backward returned it.
    fn gradient(self, grads: &CoreGradients) -> Option<&[f64]> {
        match (self, &grads.decay, &grads.beta) {
            (Tensor::Q, ..) => grads.dq.as_slice(),
            (Tensor::K, ..) => grads.dk.as_slice(),
            (Tensor::V, ..) => grads.dv.as_slice(),
            (Tensor::H0, ..) => grads.dh0.as_ref().and_then(|h| h.as_slice()),
            (Tensor::LogG, DecayGrad::LogSpace(dg), _) => dg.as_slice(),
            (Tensor::A, DecayGrad::Logits { da, .. }, _) => da.as_slice(),
            (Tensor::ALog, DecayGrad::Logits { da_log, .. }, _) => da_log.as_slice(),
            (Tensor::DtBias, DecayGrad::Logits { ddt_bias, .. }, _) => ddt_bias.as_slice(),
            (Tensor::Beta, _, BetaGrad::Direct(dbeta)) => dbeta.as_slice(),
            (Tensor::B, _, BetaGrad::Logits(db)) => db.as_slice(),
            _ => None,
        }
    }
}

/// One gradient check.
#[derive(Debug, Clone)]
struct Case {
    config: CoreConfig,
    batch: Batch,
    h0: bool,
    dht: bool,
    form: GateForm,
    regime: Regime,
    seed: u64,
}

/// `L = Σ o·do + Σ hT·dhT`, whose gradient the backward computes for `grads`.
fn loss(op: &CoreOp, inputs: &CoreInputs, grads: &CoreOutputGrads) -> f64 {
    let fwd = op.forward(inputs).expect("valid inputs");
    (&fwd.o * &grads.d_o).sum() + grads.dht.as_ref().map_or(0.0, |dht| (&fwd.ht * dht).sum())
}

/// Relative error of the backward against finite differences, per tensor.
fn check(case: &Case) -> BTreeMap<Tensor, f64> {
    let mut sampler = Sampler::new(case.seed);
    let inputs = sampler.core_inputs(&case.config, &case.batch, case.h0, case.form, case.regime);
    let grads = sampler.core_output_grads(&case.config, &case.batch, case.dht);
    let op = CoreOp::new(case.config).expect("valid config");
    let analytic = op.backward(&inputs, &grads).expect("valid inputs");
    assert_eq!(analytic.dh0.is_some(), case.h0, "dh0 must be returned exactly when h0 is given");

    let mut errors = BTreeMap::new();
    for tensor in Tensor::ALL {
        let mut probe = inputs.clone();
        assert_eq!(
            tensor.values(&mut probe).is_some(),
            tensor.gradient(&analytic).is_some(),
            "{tensor:?}: a gradient exactly for each input given"
        );
        let Some(want) = tensor.gradient(&analytic) else { continue };
        let error = fd_error(want, |e, offset| {
            let mut x = inputs.clone();
            tensor.values(&mut x).expect("tensor present")[e] += offset;
            loss(&op, &x, &grads)
        });
        errors.insert(tensor, error);
    }
    errors
}

fn config(nk: usize, rep: usize, dk: usize, dv: usize, qk_l2norm: bool) -> CoreConfig {
    CoreConfig::new(nk, nk * rep, dk, dv).expect("valid config").with_qk_l2norm(qk_l2norm)
}

/// Shapes: `dk ≠ dv`, `rep ∈ {1, 2, 3, 4}`, `T = 1`, `B > 1`, `dk = dv = 1`, a scale other than
/// `1/√dk`, each with and without the in-op L2 norm, in both gate forms, with and without `h0` and
/// `dhT`.
#[test]
fn core_gradients_match_finite_differences_across_shapes() {
    let shapes = [
        (config(1, 1, 4, 4, false), Batch::Fixed { b: 2, t: 5 }, true, true),
        (config(1, 2, 3, 5, true), Batch::Fixed { b: 1, t: 6 }, false, false),
        (config(2, 3, 4, 2, true), Batch::Fixed { b: 2, t: 3 }, true, false),
        (config(1, 3, 5, 3, false), Batch::Fixed { b: 3, t: 1 }, false, true),
        (config(2, 1, 2, 6, false).with_scale(0.7), Batch::Fixed { b: 1, t: 4 }, true, true),
        (config(1, 4, 3, 2, true).with_scale(1.3), Batch::Fixed { b: 2, t: 2 }, true, true),
        (config(1, 2, 1, 1, true), Batch::Fixed { b: 1, t: 5 }, true, true),
        (config(1, 2, 1, 1, false), Batch::Fixed { b: 1, t: 5 }, true, true),
    ];
    let cases: Vec<Case> = shapes
        .into_iter()
        .enumerate()
        .flat_map(|(n, (config, batch, h0, dht))| {
            [GateForm::Direct, GateForm::Logits].map(|form| Case {
                config,
                batch: batch.clone(),
                h0,
                dht,
                form,
                regime: Regime::Typical,
                seed: 500 + n as u64,
            })
        })
        .collect();
    check_all("core op shapes", &cases, check);
}

/// The gate extremes `g → 1`, `g → 0`, `β → 0`, `β → 1`, in both gate forms, with and without the
/// in-op L2 norm.
#[test]
fn core_gradients_match_finite_differences_at_gate_extremes() {
    let cases: Vec<Case> = Regime::ALL
        .into_iter()
        .filter(|r| *r != Regime::Typical)
        .enumerate()
        .flat_map(|(n, regime)| {
            [GateForm::Direct, GateForm::Logits].map(|form| Case {
                config: config(1, 2, 4, 3, form == GateForm::Logits),
                batch: Batch::Fixed { b: 2, t: 4 },
                h0: true,
                dht: true,
                form,
                regime,
                seed: 600 + n as u64,
            })
        })
        .collect();
    check_all("core op gate extremes", &cases, check);
}

/// A packed batch: sequences of lengths 1, 4 and 2, each with its own state, in both gate forms,
/// with and without the in-op L2 norm and `h0`/`dhT`.
#[test]
fn core_gradients_match_finite_differences_for_packed_sequences() {
    let cases: Vec<Case> = [(false, false), (true, true), (true, false), (false, true)]
        .into_iter()
        .enumerate()
        .flat_map(|(n, (l2, states))| {
            [GateForm::Direct, GateForm::Logits].map(|form| Case {
                config: config(1, 2, 3, 4, l2),
                batch: Batch::Packed { cu_seqlens: vec![0, 1, 5, 7] },
                h0: states,
                dht: states,
                form,
                regime: Regime::Typical,
                seed: 700 + n as u64,
            })
        })
        .collect();
    check_all("core op packed", &cases, check);
}
