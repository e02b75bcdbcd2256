//! Extreme gate parameters: `a_log ≥ 89` (exp(a_log) overflows f32), `a = −1e4` (softplus
//! underflows), `dt_bias = 3e38`: every output and gradient is finite wherever gdn-ref's is, and
//! the ordinary heads beside them keep matching the reference.

use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::{Regime, Sampler};
use gdn_train::{Batch, Context, Family, Inputs, LayerConfig, Params, Tape, TapeOptions};

fn to_f32<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<f32> {
    values.into_iter().map(|&v| v as f32).collect()
}

#[test]
fn extreme_gates_are_finite_wherever_the_reference_is() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    // nk 1, nv 4, dk = dv = 16: head 0 a_log = 89, head 1 a_log = 100 and a = −1e4 on every
    // token, head 2 dt_bias = 3e38, head 3 ordinary.
    let (nv, b, t) = (4, 2, 5);
    let config = gdn_ref::LayerConfig::new(1, nv, 16, 16, 4).unwrap();
    let batch = gdn_ref::Batch::Fixed { b, t };
    let mut sampler = Sampler::new(11);
    let mut params = sampler.params(&config, Regime::Typical);
    params.a_log[0] = 89.0;
    params.a_log[1] = 100.0;
    params.dt_bias[2] = 3e38;
    let mut x = sampler.inputs(&config, &batch, false, Regime::Typical);
    // a is [B, T, nv]: every token of head 1.
    x.a.iter_mut().skip(1).step_by(nv).for_each(|a| *a = -1e4);
    let grads = sampler.output_grads(&config, &batch, false);
    let layer = gdn_ref::Layer::new(config, params.clone()).unwrap();
    let (want, want_grads) = (layer.forward(&x).unwrap(), layer.backward(&x, &grads).unwrap());

    for family in [Family::recurrent(), Family::chunked()] {
        let options = TapeOptions { family: Some(family), ..TapeOptions::default() };
        let tape =
            Tape::new(&ctx, LayerConfig::new(1, nv, 16, 16, 4).unwrap(), Batch::Fixed { b, t }, options).unwrap();
        let (a_log, dt_bias, norm, conv) =
            (to_f32(&params.a_log), to_f32(&params.dt_bias), to_f32(&params.norm), to_f32(&params.conv));
        tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv }).unwrap();
        let (qkv, z, a, bb) = (to_f32(&x.qkv), to_f32(&x.z), to_f32(&x.a), to_f32(&x.b));
        tape.fill_outputs_with_nan().unwrap();
        let got = tape.run_forward(&Inputs { qkv: &qkv, z: &z, a: &a, b: &bb, h0: None, conv_state: None }).unwrap();
        let got_grads = tape.run_backward(&to_f32(&grads.dout), None).unwrap();
        let tensors: [(&str, &[f32], Vec<f64>); 9] = [
            ("out", &got.out, want.out.iter().copied().collect()),
            ("ht", &got.ht, want.ht.iter().copied().collect()),
            ("dqkv", &got_grads.dqkv, want_grads.dqkv.iter().copied().collect()),
            ("dz", &got_grads.dz, want_grads.dz.iter().copied().collect()),
            ("da", &got_grads.da, want_grads.da.iter().copied().collect()),
            ("db", &got_grads.db, want_grads.db.iter().copied().collect()),
            ("da_log", &got_grads.da_log, want_grads.da_log.iter().copied().collect()),
            ("ddt_bias", &got_grads.ddt_bias, want_grads.ddt_bias.iter().copied().collect()),
            ("dconv", &got_grads.dconv, want_grads.dconv.iter().copied().collect()),
        ];
        for (name, got, want) in tensors {
            let not_finite: Vec<usize> =
                (0..want.len()).filter(|&i| want[i].is_finite() && !got[i].is_finite()).collect();
            assert!(not_finite.is_empty(), "{family:?} {name}: not finite at {not_finite:?} where gdn-ref is");
            let got: Vec<f64> = got.iter().map(|&v| f64::from(v)).collect();
            let error = relative_error_f32(&got, &want);
            println!("{family:?} {name}: relative error {error:.2e}");
            assert!(error < 5e-4, "{family:?} {name}: relative error {error:e}");
        }
    }
}

/// A NaN in `a` or an infinite `a_log` or `dt_bias` is refused by name, as gdn-ref refuses it:
/// the gate's cap would turn it into a number, and drivers may assume no NaN.
#[test]
fn non_finite_gate_inputs_are_refused_by_name() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    let config = LayerConfig::new(1, 2, 16, 16, 4).unwrap();
    let (b, t) = (1, 4);
    let tape = Tape::new(&ctx, config, Batch::Fixed { b, t }, TapeOptions::default()).unwrap();
    let (norm, conv) = (vec![1.0; 16], vec![0.1; config.channels() * 4]);
    for (a_log, dt_bias, name) in [([0.5, f32::INFINITY], [0.0; 2], "a_log"), ([0.5; 2], [f32::NAN, 0.0], "dt_bias")] {
        let refused = tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv });
        let text = refused.expect_err(name).to_string();
        assert!(text.contains(&format!("{name}: element")) && text.contains("not finite"), "{text}");
    }
    let (qkv, z, b_in) = (vec![0.1; t * config.channels()], vec![0.1; t * 32], vec![0.0; t * 2]);
    let mut a = vec![0.0; t * 2];
    a[3] = f32::NAN;
    let refused = tape.run_forward(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b_in, h0: None, conv_state: None });
    let text = refused.expect_err("a").to_string();
    assert!(text.contains("a: element 3 is not finite"), "{text}");
}
