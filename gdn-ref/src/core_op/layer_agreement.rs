//! The core op against the layer it was cut from: with the in-op L2 norm, the layer's logit gates
//! and `scale = 1/√dk`, applied to the layer's post-conv `q`, `k`, `v`, it gives the layer's
//! pre-norm `o` and `hT` — and, for the `do` the layer's RMSNorm backward sends into the
//! recurrence, the layer's `da`, `db`, `da_log`, `ddt_bias` and `dh0` — bit for bit, since both
//! run the same code.

use super::{BetaGrad, BetaInput, CoreConfig, CoreInputs, CoreOp, CoreOutputGrads, DecayGrad, DecayInput};
use crate::backward::norm_backward;
use crate::forward::{Activations, Flat};
use crate::sample::{Regime, Sampler};
use crate::{Batch, Layer, LayerConfig, LayerInputs, LayerParams, Sequences};
use ndarray::{Array2, Array4, Axis, Slice};

/// The layer's post-conv `q`, `k`, `v` and its gates, as core-op inputs.
fn core_inputs(config: &LayerConfig, params: &LayerParams, x: &LayerInputs, y: &[f64]) -> CoreInputs {
    let [b, t] = [x.qkv.shape()[0], x.qkv.shape()[1]];
    let y = Array2::from_shape_vec((b * t, config.channels()), y.to_vec()).unwrap();
    let kw = config.key_width();
    let heads = |from: usize, heads: usize, width: usize| -> Array4<f64> {
        y.slice_axis(Axis(1), Slice::from(from..from + heads * width))
            .to_shape((b, t, heads, width))
            .unwrap()
            .to_owned()
    };
    CoreInputs {
        q: heads(0, config.nk, config.dk),
        k: heads(kw, config.nk, config.dk),
        v: heads(2 * kw, config.nv, config.dv),
        decay: DecayInput::Logits { a: x.a.clone(), a_log: params.a_log.clone(), dt_bias: params.dt_bias.clone() },
        beta: BetaInput::Logits(x.b.clone()),
        h0: x.h0.clone(),
        cu_seqlens: x.cu_seqlens.clone(),
    }
}

#[test]
fn the_core_op_on_the_layers_post_conv_streams_gives_its_pre_norm_output_and_gate_gradients() {
    let cases = [
        (LayerConfig::new(2, 4, 4, 3, 4).unwrap(), Batch::Fixed { b: 2, t: 5 }, Regime::Typical),
        (LayerConfig::new(1, 3, 3, 5, 2).unwrap(), Batch::Packed { cu_seqlens: vec![0, 1, 6, 9] }, Regime::Typical),
        (LayerConfig::new(3, 3, 5, 4, 3).unwrap(), Batch::Fixed { b: 1, t: 4 }, Regime::DecayToZero),
        (LayerConfig::new(1, 2, 4, 4, 4).unwrap(), Batch::Fixed { b: 2, t: 3 }, Regime::WriteAll),
    ];
    for (n, (config, batch, regime)) in cases.into_iter().enumerate() {
        let mut sampler = Sampler::new(900 + n as u64);
        let params = sampler.params(&config, regime);
        let x = sampler.inputs(&config, &batch, true, regime);
        let grads = sampler.output_grads(&config, &batch, true);
        let slice = |a: &ndarray::Array3<f64>| a.as_slice().unwrap().to_vec();
        let (qkv, z, a, b) = (slice(&x.qkv), slice(&x.z), slice(&x.a), slice(&x.b));
        let flat =
            Flat { qkv: &qkv, z: &z, a: &a, b: &b, h0: x.h0.as_ref().and_then(|h| h.as_slice()), conv_state: None };
        let seqs = Sequences::new(&batch, None).unwrap();
        let act = Activations::compute(&config, &params, &seqs, &flat);

        let op = CoreOp::new(CoreConfig::new(config.nk, config.nv, config.dk, config.dv).unwrap().with_qk_l2norm(true))
            .unwrap();
        let inputs = core_inputs(&config, &params, &x, &act.y);
        let fwd = op.forward(&inputs).unwrap();
        assert_eq!(fwd.o.as_slice().unwrap(), &act.o[..], "case {n}: o");
        assert_eq!(fwd.ht.as_slice().unwrap(), &act.ht[..], "case {n}: hT");

        let layer = Layer::new(config, params.clone()).unwrap();
        let want = layer.backward(&x, &grads).unwrap();
        let (d_o, _, _) = norm_backward(&config, &params, &act, &z, grads.dout.as_slice().unwrap());
        let d_o = Array4::from_shape_vec(fwd.o.raw_dim(), d_o).unwrap();
        let got = op.backward(&inputs, &CoreOutputGrads { d_o, dht: grads.dht.clone() }).unwrap();
        let DecayGrad::Logits { da, da_log, ddt_bias } = got.decay else { panic!("logit decay, logit gradients") };
        let BetaGrad::Logits(db) = got.beta else { panic!("logit β, logit gradient") };
        assert_eq!(da, want.da, "case {n}: da");
        assert_eq!(da_log, want.da_log, "case {n}: da_log");
        assert_eq!(ddt_bias, want.ddt_bias, "case {n}: ddt_bias");
        assert_eq!(db, want.db, "case {n}: db");
        assert_eq!(got.dh0, want.dh0, "case {n}: dh0");
    }
}
