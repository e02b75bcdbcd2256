//! The forward against an independent re-statement of the spec in matrix form (ndarray products
//! per sequence and head), so that an indexing slip in the loops of the crate cannot hide behind
//! its own backward, which the finite-difference tests check against that same forward.

use gdn_ref::compare::relative_error_floored;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, LayerConfig, LayerInputs, LayerParams};
use ndarray::{Array1, Array2, Array3, Array4, Axis, s};

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Spec steps 1–7 for `B` sequences of `T` tokens.
fn spec_forward(c: &LayerConfig, p: &LayerParams, x: &LayerInputs) -> (Array3<f64>, Array4<f64>) {
    let (b, t) = (x.qkv.shape()[0], x.qkv.shape()[1]);
    let mut out = Array3::zeros((b, t, c.nv * c.dv));
    let mut ht = Array4::zeros((b, c.nv, c.dk, c.dv));
    for n in 0..b {
        // 1. Conv + SiLU, zero before the start.
        let raw = x.qkv.index_axis(Axis(0), n);
        let mut y = Array2::<f64>::zeros((t, c.channels()));
        for tt in 0..t {
            for j in 0..c.kk {
                let src = tt as isize - (c.kk as isize - 1) + j as isize;
                if src >= 0 {
                    let tap = p.conv.column(j);
                    let contrib = &raw.row(src as usize) * &tap;
                    let mut row = y.row_mut(tt);
                    row += &contrib;
                }
            }
        }
        y.mapv_inplace(|v| v * sigmoid(v));
        for h in 0..c.nv {
            let i = h / (c.nv / c.nk);
            let mut state: Array2<f64> = match &x.h0 {
                Some(h0) => h0.slice(s![n, h, .., ..]).to_owned(),
                None => Array2::zeros((c.dk, c.dv)),
            };
            for tt in 0..t {
                // 2–3. Split and L2-normalise.
                let q = y.slice(s![tt, i * c.dk..(i + 1) * c.dk]).to_owned();
                let k = y.slice(s![tt, c.nk * c.dk + i * c.dk..c.nk * c.dk + (i + 1) * c.dk]).to_owned();
                let v = y.slice(s![tt, 2 * c.nk * c.dk + h * c.dv..2 * c.nk * c.dk + (h + 1) * c.dv]).to_owned();
                let q = &q / ((q.dot(&q) + 1e-6).sqrt() * (c.dk as f64).sqrt());
                let k = &k / (k.dot(&k) + 1e-6).sqrt();
                // 4. Gates.
                let arg = x.a[[n, tt, h]] + p.dt_bias[h];
                let g = (-p.a_log[h].exp() * (1.0 + arg.exp()).ln()).exp();
                let beta = sigmoid(x.b[[n, tt, h]]);
                // 5. Delta rule.
                state *= g;
                let kv = state.t().dot(&k);
                let u = (&v - &kv) * beta;
                let outer = k.view().insert_axis(Axis(1)).dot(&u.view().insert_axis(Axis(0)));
                state += &outer;
                let o: Array1<f64> = state.t().dot(&q);
                // 6. Gated RMSNorm.
                let r = 1.0 / (o.dot(&o) / c.dv as f64 + c.rms_eps).sqrt();
                for j in 0..c.dv {
                    let z = x.z[[n, tt, h * c.dv + j]];
                    out[[n, tt, h * c.dv + j]] = o[j] * r * p.norm[j] * z * sigmoid(z);
                }
            }
            ht.slice_mut(s![n, h, .., ..]).assign(&state);
        }
    }
    (out, ht)
}

#[test]
fn forward_matches_the_spec_in_matrix_form() {
    for (seed, (nk, rep, dk, dv, kk), h0) in
        [(1, (2, 2, 4, 3, 4), true), (2, (1, 3, 3, 5, 2), false), (3, (3, 1, 6, 6, 1), true)]
    {
        let config = LayerConfig::new(nk, nk * rep, dk, dv, kk).unwrap();
        let batch = Batch::Fixed { b: 2, t: 6 };
        let mut sampler = Sampler::new(seed);
        let params = sampler.params(&config, Regime::Typical);
        let x = sampler.inputs(&config, &batch, h0, Regime::Typical);
        let layer = gdn_ref::Layer::new(config, params.clone()).unwrap();
        let got = layer.forward(&x).unwrap();
        let (out, ht) = spec_forward(&config, &params, &x);
        let flat = |a: &[f64]| a.to_vec();
        let e_out = relative_error_floored(&flat(got.out.as_slice().unwrap()), &flat(out.as_slice().unwrap()), 0.0);
        let e_ht = relative_error_floored(&flat(got.ht.as_slice().unwrap()), &flat(ht.as_slice().unwrap()), 0.0);
        println!("{config:?}: out {e_out:.1e}, hT {e_ht:.1e}");
        assert!(e_out < 1e-12 && e_ht < 1e-12, "out {e_out:e}, hT {e_ht:e}");
    }
}
