//! Every malformed argument of the core op is rejected with an error that names it and what was
//! expected, in both gate forms; non-finite values are refused as the layer refuses them.

use gdn_ref::sample::{GateForm, Regime, Sampler};
use gdn_ref::{Batch, BetaInput, CoreConfig, CoreInputs, CoreOp, CoreOutputGrads, DecayInput, Error};
use ndarray::{Array1, Array3, Array4};

/// nk = 2, nv = 4, dk = 3, dv = 2 over B = 2, T = 3, with `h0`.
fn op_and_inputs(form: GateForm) -> (CoreOp, CoreInputs) {
    let config = CoreConfig::new(2, 4, 3, 2).unwrap();
    let inputs = Sampler::new(5).core_inputs(&config, &Batch::Fixed { b: 2, t: 3 }, true, form, Regime::Typical);
    (CoreOp::new(config).unwrap(), inputs)
}

fn shape_error(name: &'static str, expected: &[usize], got: &[usize]) -> Error {
    Error::Shape { name, expected: expected.to_vec(), got: got.to_vec() }
}

#[test]
fn sizes_must_be_positive_heads_divisible_and_the_scale_positive() {
    assert_eq!(CoreConfig::new(0, 4, 3, 2), Err(Error::Empty { name: "nk" }));
    assert_eq!(CoreConfig::new(1, 1, 0, 2), Err(Error::Empty { name: "dk" }));
    assert_eq!(CoreConfig::new(2, 3, 3, 2), Err(Error::HeadRatio { nk: 2, nv: 3 }));
    let config = CoreConfig::new(2, 4, 3, 2).unwrap();
    for scale in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = CoreOp::new(config.with_scale(scale)).unwrap_err();
        assert!(matches!(err, Error::NotPositive { name: "scale", .. }), "{scale}: {err}");
    }
    let mut config = config;
    config.nv = 5;
    assert_eq!(CoreOp::new(config).unwrap_err(), Error::HeadRatio { nk: 2, nv: 5 });
}

#[test]
fn q_k_v_and_h0_shapes_are_checked() {
    let (op, inputs) = op_and_inputs(GateForm::Direct);
    let mut x = inputs.clone();
    x.q = Array4::zeros((2, 3, 2, 4));
    let err = op.forward(&x).unwrap_err();
    assert_eq!(err, shape_error("q", &[2, 3, 2, 3], &[2, 3, 2, 4]));
    assert_eq!(err.to_string(), "q: expected shape [2, 3, 2, 3], got [2, 3, 2, 4]");
    let mut x = inputs.clone();
    x.k = Array4::zeros((2, 3, 1, 3));
    assert_eq!(op.forward(&x).unwrap_err(), shape_error("k", &[2, 3, 2, 3], &[2, 3, 1, 3]));
    let mut x = inputs.clone();
    x.v = Array4::zeros((2, 3, 2, 2));
    assert_eq!(op.forward(&x).unwrap_err(), shape_error("v", &[2, 3, 4, 2], &[2, 3, 2, 2]));
    let mut x = inputs.clone();
    x.h0 = Some(Array4::zeros((2, 4, 2, 3)));
    assert_eq!(op.forward(&x).unwrap_err(), shape_error("h0", &[2, 4, 3, 2], &[2, 4, 2, 3]));
}

#[test]
fn gate_shapes_are_checked_in_both_forms() {
    let (op, direct) = op_and_inputs(GateForm::Direct);
    let mut x = direct.clone();
    x.decay = DecayInput::LogSpace(Array3::zeros((2, 3, 2)));
    assert_eq!(op.forward(&x).unwrap_err(), shape_error("g", &[2, 3, 4], &[2, 3, 2]));
    let mut x = direct.clone();
    x.beta = BetaInput::Direct(Array3::zeros((2, 4, 4)));
    assert_eq!(op.forward(&x).unwrap_err(), shape_error("beta", &[2, 3, 4], &[2, 4, 4]));

    let (_, logits) = op_and_inputs(GateForm::Logits);
    let DecayInput::Logits { a, a_log, dt_bias } = logits.decay.clone() else { panic!("logit form") };
    let decay = |a: Array3<f64>, a_log: Array1<f64>, dt_bias: Array1<f64>| CoreInputs {
        decay: DecayInput::Logits { a, a_log, dt_bias },
        ..logits.clone()
    };
    assert_eq!(
        op.forward(&decay(Array3::zeros((2, 3, 5)), a_log.clone(), dt_bias.clone())).unwrap_err(),
        shape_error("a", &[2, 3, 4], &[2, 3, 5])
    );
    assert_eq!(
        op.forward(&decay(a.clone(), Array1::zeros(2), dt_bias.clone())).unwrap_err(),
        shape_error("a_log", &[4], &[2])
    );
    assert_eq!(
        op.forward(&decay(a.clone(), a_log.clone(), Array1::zeros(8))).unwrap_err(),
        shape_error("dt_bias", &[4], &[8])
    );
    let mut x = logits.clone();
    x.beta = BetaInput::Logits(Array3::zeros((1, 3, 4)));
    assert_eq!(op.forward(&x).unwrap_err(), shape_error("b", &[2, 3, 4], &[1, 3, 4]));
}

#[test]
fn non_finite_inputs_are_refused_by_name_and_index() {
    let (op, direct) = op_and_inputs(GateForm::Direct);
    let mut x = direct.clone();
    x.v[[1, 0, 2, 1]] = f64::INFINITY;
    assert!(matches!(op.forward(&x).unwrap_err(), Error::NotFinite { name: "v", index: 29, .. }));
    let mut x = direct.clone();
    let DecayInput::LogSpace(g) = &mut x.decay else { panic!("direct form") };
    g[[0, 1, 3]] = f64::NEG_INFINITY;
    assert!(matches!(op.forward(&x).unwrap_err(), Error::NotFinite { name: "g", index: 7, .. }));
    let mut x = direct.clone();
    let BetaInput::Direct(beta) = &mut x.beta else { panic!("direct form") };
    beta[[0, 0, 0]] = f64::NAN;
    assert!(matches!(op.forward(&x).unwrap_err(), Error::NotFinite { name: "beta", index: 0, .. }));
    let mut x = direct.clone();
    x.h0.as_mut().unwrap()[[0, 0, 0, 1]] = f64::NAN;
    assert!(matches!(op.forward(&x).unwrap_err(), Error::NotFinite { name: "h0", index: 1, .. }));

    let (_, logits) = op_and_inputs(GateForm::Logits);
    let mut x = logits.clone();
    let DecayInput::Logits { a_log, .. } = &mut x.decay else { panic!("logit form") };
    a_log[2] = f64::NAN;
    assert!(matches!(
        op.backward(&x, &CoreOutputGrads::new(Array4::zeros((2, 3, 4, 2)))).unwrap_err(),
        Error::NotFinite { name: "a_log", index: 2, .. }
    ));
    let mut x = logits.clone();
    let BetaInput::Logits(b) = &mut x.beta else { panic!("logit form") };
    b[[1, 2, 3]] = f64::INFINITY;
    assert!(matches!(op.forward(&x).unwrap_err(), Error::NotFinite { name: "b", index: 23, .. }));
}

#[test]
fn output_gradients_are_checked() {
    let (op, inputs) = op_and_inputs(GateForm::Logits);
    let grads = CoreOutputGrads { d_o: Array4::zeros((2, 3, 4, 3)), dht: None };
    assert_eq!(op.backward(&inputs, &grads).unwrap_err(), shape_error("d_o", &[2, 3, 4, 2], &[2, 3, 4, 3]));
    let grads = CoreOutputGrads { d_o: Array4::zeros((2, 3, 4, 2)), dht: Some(Array4::zeros((1, 4, 3, 2))) };
    assert_eq!(op.backward(&inputs, &grads).unwrap_err(), shape_error("dht", &[2, 4, 3, 2], &[1, 4, 3, 2]));
    let mut grads = CoreOutputGrads { d_o: Array4::zeros((2, 3, 4, 2)), dht: Some(Array4::zeros((2, 4, 3, 2))) };
    grads.dht.as_mut().unwrap()[[1, 3, 2, 1]] = f64::NAN;
    assert!(matches!(op.backward(&inputs, &grads).unwrap_err(), Error::NotFinite { name: "dht", index: 47, .. }));
    grads.dht = None;
    grads.d_o[[0, 0, 0, 0]] = f64::INFINITY;
    assert!(matches!(op.backward(&inputs, &grads).unwrap_err(), Error::NotFinite { name: "d_o", index: 0, .. }));
}

#[test]
fn packed_offsets_are_checked() {
    let config = CoreConfig::new(1, 2, 3, 2).unwrap();
    let op = CoreOp::new(config).unwrap();
    let batch = Batch::Packed { cu_seqlens: vec![0, 2, 6] };
    let inputs = Sampler::new(6).core_inputs(&config, &batch, false, GateForm::Direct, Regime::Typical);
    assert!(op.forward(&inputs).is_ok());
    for (cu, reason) in [
        (vec![1, 6], "must start at 0"),
        (vec![0, 3, 3, 6], "must strictly increase"),
        (vec![0, 4], "must end at the number of tokens, 6"),
        (vec![0], "need at least"),
    ] {
        let x = CoreInputs { cu_seqlens: Some(cu.clone()), ..inputs.clone() };
        let err = op.forward(&x).unwrap_err().to_string();
        assert!(err.contains(reason), "{cu:?}: {err}");
    }
    let fixed =
        Sampler::new(6).core_inputs(&config, &Batch::Fixed { b: 2, t: 3 }, false, GateForm::Direct, Regime::Typical);
    let x = CoreInputs { cu_seqlens: Some(vec![0, 3]), ..fixed };
    assert_eq!(op.forward(&x).unwrap_err(), shape_error("q", &[1, 3, 1, 3], &[2, 3, 1, 3]));
}
