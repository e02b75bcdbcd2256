//! Every malformed argument is rejected with an error that names it and what was expected.

use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Error, Layer, LayerConfig, OutputGrads};
use ndarray::{Array1, Array3, Array4};

fn layer_and_inputs() -> (Layer, gdn_ref::LayerInputs) {
    let config = LayerConfig::new(2, 4, 3, 2, 3).unwrap();
    let mut sampler = Sampler::new(5);
    let layer = Layer::new(config, sampler.params(&config, Regime::Typical)).unwrap();
    (layer, sampler.inputs(&config, &Batch::Fixed { b: 2, t: 3 }, true, Regime::Typical))
}

#[test]
fn sizes_must_be_positive_and_heads_divisible() {
    assert_eq!(LayerConfig::new(0, 4, 3, 2, 3), Err(Error::Empty { name: "nk" }));
    assert_eq!(LayerConfig::new(1, 1, 3, 0, 3), Err(Error::Empty { name: "dv" }));
    assert_eq!(LayerConfig::new(2, 3, 3, 2, 3), Err(Error::HeadRatio { nk: 2, nv: 3 }));
    let err = LayerConfig::new(2, 3, 3, 2, 3).unwrap_err().to_string();
    assert!(err.contains("nv (3) must be a multiple of nk (2)"), "{err}");
}

#[test]
fn parameter_shapes_are_checked() {
    let (layer, _) = layer_and_inputs();
    let mut params = layer.params().clone();
    params.norm = Array1::zeros(3);
    let err = Layer::new(*layer.config(), params).unwrap_err();
    assert_eq!(err, Error::Shape { name: "norm", expected: vec![2], got: vec![3] });
    assert_eq!(err.to_string(), "norm: expected shape [2], got [3]");
}

#[test]
fn input_shapes_are_checked() {
    let (layer, inputs) = layer_and_inputs();
    let mut x = inputs.clone();
    x.z = Array3::zeros((2, 3, 7));
    assert_eq!(layer.forward(&x).unwrap_err(), Error::Shape { name: "z", expected: vec![2, 3, 8], got: vec![2, 3, 7] });
    let mut x = inputs.clone();
    x.h0 = Some(Array4::zeros((1, 4, 3, 2)));
    assert_eq!(
        layer.forward(&x).unwrap_err(),
        Error::Shape { name: "h0", expected: vec![2, 4, 3, 2], got: vec![1, 4, 3, 2] }
    );
    let mut x = inputs.clone();
    x.a[[1, 2, 3]] = f64::NAN;
    assert!(matches!(layer.forward(&x).unwrap_err(), Error::NotFinite { name: "a", index: 23, .. }));
}

#[test]
fn output_gradients_are_checked() {
    let (layer, inputs) = layer_and_inputs();
    let grads =
        OutputGrads { dout: Array3::zeros((2, 3, 8)), dht: Some(Array4::zeros((2, 4, 2, 3))), dconv_state: None };
    assert_eq!(
        layer.backward(&inputs, &grads).unwrap_err(),
        Error::Shape { name: "dht", expected: vec![2, 4, 3, 2], got: vec![2, 4, 2, 3] }
    );
}

#[test]
fn packed_offsets_are_checked() {
    let (layer, inputs) = layer_and_inputs();
    let packed = |cu: Vec<usize>| {
        let mut x = inputs.clone();
        x.qkv = inputs.qkv.to_shape((1, 6, inputs.qkv.shape()[2])).unwrap().to_owned();
        x.z = inputs.z.to_shape((1, 6, 8)).unwrap().to_owned();
        x.a = inputs.a.to_shape((1, 6, 4)).unwrap().to_owned();
        x.b = inputs.b.to_shape((1, 6, 4)).unwrap().to_owned();
        x.h0 = None;
        x.cu_seqlens = Some(cu);
        layer.forward(&x)
    };
    assert!(packed(vec![0, 2, 6]).is_ok());
    for (cu, reason) in [
        (vec![1, 6], "must start at 0"),
        (vec![0, 3, 3, 6], "must strictly increase"),
        (vec![0, 4], "must end at the number of tokens, 6"),
        (vec![0], "need at least"),
    ] {
        let err = packed(cu.clone()).unwrap_err().to_string();
        assert!(err.contains(reason), "{cu:?}: {err}");
    }
    let mut x = inputs.clone();
    x.cu_seqlens = Some(vec![0, 3]);
    assert!(matches!(layer.forward(&x).unwrap_err(), Error::Shape { name: "qkv", .. }));
}

#[test]
fn conv_state_shapes_are_checked() {
    let (layer, inputs) = layer_and_inputs();
    let mut x = inputs.clone();
    x.conv_state = Some(Array3::zeros((2, 3, 20)));
    assert_eq!(
        layer.forward(&x).unwrap_err(),
        Error::Shape { name: "conv_state", expected: vec![2, 2, 20], got: vec![2, 3, 20] }
    );
    x.conv_state = Some(Array3::from_elem((2, 2, 20), f64::INFINITY));
    assert!(matches!(layer.forward(&x).unwrap_err(), Error::NotFinite { name: "conv_state", index: 0, .. }));
    x.conv_state = Some(Array3::zeros((2, 2, 20)));
    let mut grads = OutputGrads::new(Array3::zeros((2, 3, 8)));
    grads.dconv_state = Some(Array3::zeros((1, 2, 20)));
    assert_eq!(
        layer.backward(&x, &grads).unwrap_err(),
        Error::Shape { name: "dconv_state", expected: vec![2, 2, 20], got: vec![1, 2, 20] }
    );
    grads.dconv_state = Some(Array3::zeros((2, 2, 20)));
    let g = layer.backward(&x, &grads).unwrap();
    assert_eq!(g.dconv_state.map(|d| d.shape().to_vec()), Some(vec![2, 2, 20]));
}
