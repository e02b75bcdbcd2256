//! Composition laws of the operator: a sequence split in two and chained through its state equals
//! the whole, and a packed batch equals its sequences run alone — for outputs and for gradients.

use gdn_ref::compare::relative_error_floored;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Gradients, Layer, LayerConfig, LayerInputs, OutputGrads};
use ndarray::{Array, Axis, Dimension, Slice, concatenate, s};

/// Both sides compute the same sums in f64, possibly in another order.
const BAR: f64 = 1e-12;

fn assert_close<D: Dimension>(name: &str, got: &Array<f64, D>, want: &Array<f64, D>) {
    assert_eq!(got.shape(), want.shape(), "{name}: shapes differ");
    let err = relative_error_floored(
        &got.iter().copied().collect::<Vec<_>>(),
        &want.iter().copied().collect::<Vec<_>>(),
        0.0,
    );
    println!("{name}: {err:.2e}");
    assert!(err <= BAR, "{name}: relative error {err:.2e} > {BAR:e}");
}

/// Tokens `range` of every token-major input, with `h0` replaced.
fn slice_tokens(x: &LayerInputs, range: std::ops::Range<usize>, h0: Option<Array<f64, ndarray::Ix4>>) -> LayerInputs {
    let cut = |a: &Array<f64, ndarray::Ix3>| a.slice_axis(Axis(1), Slice::from(range.clone())).to_owned();
    LayerInputs { qkv: cut(&x.qkv), z: cut(&x.z), a: cut(&x.a), b: cut(&x.b), h0, conv_state: None, cu_seqlens: None }
}

/// With `kk = 1` the conv has no memory across the cut, so the recurrent state is the whole state.
#[test]
fn split_sequence_chained_through_its_state_equals_the_whole() {
    let config = LayerConfig::new(2, 4, 5, 3, 1).unwrap();
    let (b, t, cut) = (2, 7, 3);
    let mut sampler = Sampler::new(11);
    let layer = Layer::new(config, sampler.params(&config, Regime::Typical)).unwrap();
    let batch = Batch::Fixed { b, t };
    let x = sampler.inputs(&config, &batch, true, Regime::Typical);
    let grads = sampler.output_grads(&config, &batch, true);

    let whole = layer.forward(&x).unwrap();
    let first_x = slice_tokens(&x, 0..cut, x.h0.clone());
    let first = layer.forward(&first_x).unwrap();
    let second_x = slice_tokens(&x, cut..t, Some(first.ht.clone()));
    let second = layer.forward(&second_x).unwrap();
    assert_close("out", &concatenate![Axis(1), first.out, second.out], &whole.out);
    assert_close("hT", &second.ht, &whole.ht);

    let whole_g = layer.backward(&x, &grads).unwrap();
    let second_g = layer
        .backward(
            &second_x,
            &OutputGrads {
                dout: grads.dout.slice(s![.., cut.., ..]).to_owned(),
                dht: grads.dht.clone(),
                dconv_state: None,
            },
        )
        .unwrap();
    let first_g = layer
        .backward(
            &first_x,
            &OutputGrads {
                dout: grads.dout.slice(s![.., ..cut, ..]).to_owned(),
                dht: second_g.dh0.clone(),
                dconv_state: None,
            },
        )
        .unwrap();
    let joined = |f: fn(&Gradients) -> &Array<f64, ndarray::Ix3>| {
        concatenate(Axis(1), &[f(&first_g).view(), f(&second_g).view()]).unwrap()
    };
    assert_close("dqkv", &joined(|g| &g.dqkv), &whole_g.dqkv);
    assert_close("dz", &joined(|g| &g.dz), &whole_g.dz);
    assert_close("da", &joined(|g| &g.da), &whole_g.da);
    assert_close("db", &joined(|g| &g.db), &whole_g.db);
    assert_close("dh0", first_g.dh0.as_ref().unwrap(), whole_g.dh0.as_ref().unwrap());
    assert_close("da_log", &(&first_g.da_log + &second_g.da_log), &whole_g.da_log);
    assert_close("ddt_bias", &(&first_g.ddt_bias + &second_g.ddt_bias), &whole_g.ddt_bias);
    assert_close("dnorm", &(&first_g.dnorm + &second_g.dnorm), &whole_g.dnorm);
    assert_close("dconv", &(&first_g.dconv + &second_g.dconv), &whole_g.dconv);
}

/// Sequences of lengths 1, 6 and 3 packed into one row, each with its own `h0`, against three
/// separate runs.
#[test]
fn packed_batch_equals_its_sequences_run_alone() {
    let config = LayerConfig::new(1, 3, 4, 5, 4).unwrap();
    let cu_seqlens = vec![0, 1, 7, 10];
    let batch = Batch::Packed { cu_seqlens: cu_seqlens.clone() };
    let mut sampler = Sampler::new(12);
    let layer = Layer::new(config, sampler.params(&config, Regime::Typical)).unwrap();
    let x = sampler.inputs(&config, &batch, true, Regime::Typical);
    let grads = sampler.output_grads(&config, &batch, true);
    let packed = layer.forward(&x).unwrap();
    let packed_g = layer.backward(&x, &grads).unwrap();

    let (mut da_log, mut ddt_bias, mut dnorm, mut dconv) =
        (0.0 * &packed_g.da_log, 0.0 * &packed_g.ddt_bias, 0.0 * &packed_g.dnorm, 0.0 * &packed_g.dconv);
    for n in 0..cu_seqlens.len() - 1 {
        let range = cu_seqlens[n]..cu_seqlens[n + 1];
        let h0 = x.h0.as_ref().unwrap().slice(s![n..n + 1, .., .., ..]).to_owned();
        let alone_x = slice_tokens(&x, range.clone(), Some(h0));
        let alone = layer.forward(&alone_x).unwrap();
        let tokens = |a: &Array<f64, ndarray::Ix3>| a.slice(s![.., range.clone(), ..]).to_owned();
        let state = |a: &Array<f64, ndarray::Ix4>| a.slice(s![n..n + 1, .., .., ..]).to_owned();
        assert_close(&format!("out[{n}]"), &alone.out, &tokens(&packed.out));
        assert_close(&format!("hT[{n}]"), &alone.ht, &state(&packed.ht));
        let alone_g = layer
            .backward(
                &alone_x,
                &OutputGrads { dout: tokens(&grads.dout), dht: grads.dht.as_ref().map(state), dconv_state: None },
            )
            .unwrap();
        assert_close(&format!("dqkv[{n}]"), &alone_g.dqkv, &tokens(&packed_g.dqkv));
        assert_close(&format!("dz[{n}]"), &alone_g.dz, &tokens(&packed_g.dz));
        assert_close(&format!("da[{n}]"), &alone_g.da, &tokens(&packed_g.da));
        assert_close(&format!("db[{n}]"), &alone_g.db, &tokens(&packed_g.db));
        assert_close(&format!("dh0[{n}]"), alone_g.dh0.as_ref().unwrap(), &state(packed_g.dh0.as_ref().unwrap()));
        da_log += &alone_g.da_log;
        ddt_bias += &alone_g.ddt_bias;
        dnorm += &alone_g.dnorm;
        dconv += &alone_g.dconv;
    }
    assert_close("da_log", &da_log, &packed_g.da_log);
    assert_close("ddt_bias", &ddt_bias, &packed_g.ddt_bias);
    assert_close("dnorm", &dnorm, &packed_g.dnorm);
    assert_close("dconv", &dconv, &packed_g.dconv);
}

/// `B` windows of `T` tokens are the packed batch with offsets `[0, T, 2T, …]`.
#[test]
fn fixed_batch_equals_the_same_tokens_packed() {
    let config = LayerConfig::new(2, 2, 3, 4, 2).unwrap();
    let (b, t) = (3, 4);
    let mut sampler = Sampler::new(13);
    let layer = Layer::new(config, sampler.params(&config, Regime::Typical)).unwrap();
    let fixed_batch = Batch::Fixed { b, t };
    let x = sampler.inputs(&config, &fixed_batch, true, Regime::Typical);
    let grads = sampler.output_grads(&config, &fixed_batch, true);
    let pack = |a: &Array<f64, ndarray::Ix3>| a.to_shape((1, b * t, a.shape()[2])).unwrap().to_owned();
    let packed_x = LayerInputs {
        qkv: pack(&x.qkv),
        z: pack(&x.z),
        a: pack(&x.a),
        b: pack(&x.b),
        h0: x.h0.clone(),
        conv_state: None,
        cu_seqlens: Some((0..=b).map(|n| n * t).collect()),
    };
    let fixed = layer.forward(&x).unwrap();
    let packed = layer.forward(&packed_x).unwrap();
    assert_close("out", &pack(&fixed.out), &packed.out);
    assert_close("hT", &fixed.ht, &packed.ht);
    let fixed_g = layer.backward(&x, &grads).unwrap();
    let packed_g = layer
        .backward(&packed_x, &OutputGrads { dout: pack(&grads.dout), dht: grads.dht.clone(), dconv_state: None })
        .unwrap();
    assert_close("dqkv", &pack(&fixed_g.dqkv), &packed_g.dqkv);
    assert_close("dconv", &fixed_g.dconv, &packed_g.dconv);
    assert_close("dh0", fixed_g.dh0.as_ref().unwrap(), packed_g.dh0.as_ref().unwrap());
}
