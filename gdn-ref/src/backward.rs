//! The layer's hand-written backward, stage by stage in reverse order of the forward.
//!
//! It re-runs the forward ([`Activations::compute`]), then the recurrence's backward
//! ([`crate::recurrence::backward`], shared with the core op), then the gates', the L2 norms' and
//! the conv's. Each block below names the spec line it implements.

use crate::forward::{Activations, Flat, q_scale, tap_value};
use crate::gates::{LogitGrads, write_strength_backward};
use crate::l2norm::normalize_backward;
use crate::recurrence;
use crate::scalar::{sigmoid, silu, silu_grad};
use crate::window::{Tap, slot, tap};
use crate::{LayerConfig, LayerParams, Sequences};

/// Flat gradients, in the layouts of [`crate::Gradients`].
pub(crate) struct FlatGradients {
    pub dqkv: Vec<f64>,
    pub dz: Vec<f64>,
    pub da: Vec<f64>,
    pub db: Vec<f64>,
    pub dh0: Vec<f64>,
    pub da_log: Vec<f64>,
    pub ddt_bias: Vec<f64>,
    pub dnorm: Vec<f64>,
    pub dconv: Vec<f64>,
    /// `[N_seq, kk − 1, C]`, zero when no conv state was given.
    pub dconv_state: Vec<f64>,
    /// `[N, nv]`: `da` summed over its terms' magnitudes (see `Gradients::da_terms`).
    pub da_terms: Vec<f64>,
}

/// Gradients arriving at the layer's outputs, flat.
pub(crate) struct FlatOutputGrads<'a> {
    /// `[N, nv·dv]`.
    pub dout: &'a [f64],
    /// `[N_seq, nv, dk, dv]`.
    pub dht: Option<&'a [f64]>,
    /// `[N_seq, kk − 1, C]`: the gradient of the final conv state.
    pub dconv_state: Option<&'a [f64]>,
}

pub(crate) fn backward(
    config: &LayerConfig,
    params: &LayerParams,
    seqs: &Sequences,
    x: &Flat,
    grads: &FlatOutputGrads,
) -> FlatGradients {
    let (nv, c_all) = (config.nv, config.channels());
    let act = Activations::compute(config, params, seqs, x);

    let (d_o, dz, dnorm) = norm_backward(config, params, &act, x.z, grads.dout);

    let mut dy = vec![0.0; seqs.tokens() * c_all];
    let rec = recurrence::backward(&config.heads(), seqs, &act.streams(config), x.h0, &d_o, grads.dht, &mut dy);

    // Gates: da = dg·g·(−exp(a_log))·σ(arg); ddt_bias = Σ da; da_log = Σ dg·g·ln g; db = dβ·β(1 − β).
    let decay = &act.gates.decay;
    let LogitGrads { da, da_log, ddt_bias } =
        decay.logits_backward(params.a_log.view(), &act.gates.arg, &decay.log_grad(&rec.dg));
    let db = write_strength_backward(&act.gates.beta, &rec.dbeta);
    let da_terms: Vec<f64> = (0..rec.dg.len())
        .map(|e| rec.dg_terms[e] * decay.g[e] * params.a_log[e % nv].exp() * sigmoid(act.gates.arg[e]))
        .collect();

    normalize_backward(&act.y, config.q_rows(), config.nk, &act.q.ss, &rec.dq_hat, q_scale(config), &mut dy);
    normalize_backward(&act.y, config.k_rows(), config.nk, &act.k.ss, &rec.dk_hat, 1.0, &mut dy);

    let (dqkv, dconv, dconv_state) = conv_backward(config, params, seqs, &act, x, &dy, grads.dconv_state);
    FlatGradients { dqkv, dz, da, db, dh0: rec.dh0, da_log, ddt_bias, dnorm, dconv, dconv_state, da_terms }
}

/// Gated RMSNorm: `dz_j = dout_j·o_j r·norm_j·silu'(z_j)`, `dnorm_j += dout_j·o_j r·s_j`,
/// `do_j = r·norm_j s_j dout_j − o_j·r³·(1/dv)·Σ_m dout_m norm_m s_m o_m`.
pub(crate) fn norm_backward(
    config: &LayerConfig,
    params: &LayerParams,
    act: &Activations,
    z: &[f64],
    dout: &[f64],
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let dv = config.dv;
    let mut d_o = vec![0.0; dout.len()];
    let mut dz = vec![0.0; dout.len()];
    let mut dnorm = vec![0.0; dv];
    for row in 0..dout.len() / dv {
        let r = act.rstd[row];
        let e0 = row * dv;
        let mut dot = 0.0;
        for j in 0..dv {
            let e = e0 + j;
            dot += dout[e] * params.norm[j] * silu(z[e]) * act.o[e];
        }
        for j in 0..dv {
            let e = e0 + j;
            let s = silu(z[e]);
            dz[e] = dout[e] * act.o[e] * r * params.norm[j] * silu_grad(z[e]);
            dnorm[j] += dout[e] * act.o[e] * r * s;
            d_o[e] = r * params.norm[j] * s * dout[e] - act.o[e] * r * r * r * dot / dv as f64;
        }
    }
    (d_o, dz, dnorm)
}

/// Conv + SiLU: `dpre = dy·silu'(pre)`; each tap `conv[c,j]·x` of the conv at token `t` sends
/// `conv[c,j]·dpre_t[c]` to the raw value it reads — a token (`dqkv`) or a slot of the conv state
/// (`dconv_state`) — and `dpre_t[c]·x` to `dconv[c,j]`. The gradient arriving at the final conv
/// state goes to the raw values that state holds, the same way.
fn conv_backward(
    config: &LayerConfig,
    params: &LayerParams,
    seqs: &Sequences,
    act: &Activations,
    x: &Flat,
    dy: &[f64],
    d_final: Option<&[f64]>,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let (c_all, kk) = (config.channels(), config.kk);
    let dpre: Vec<f64> = dy.iter().zip(&act.pre).map(|(d, &p)| d * silu_grad(p)).collect();
    let mut dx = vec![0.0; x.qkv.len()];
    let mut dconv = vec![0.0; c_all * kk];
    let mut dstate = vec![0.0; seqs.len() * (kk - 1) * c_all];
    for n in 0..seqs.len() {
        let range = seqs.range(n);
        let mut send = |t: usize, j: usize, c: usize, d: f64| match tap(kk, range.start, t, j) {
            Tap::Token(src) => dx[src * c_all + c] += d,
            Tap::State(i) => dstate[slot(kk, c_all, n, i, c)] += d,
        };
        for t in range.clone() {
            for c in 0..c_all {
                let d = dpre[t * c_all + c];
                for j in 0..kk {
                    send(t, j, c, params.conv[[c, j]] * d);
                    dconv[c * kk + j] += d * tap_value(config, seqs, x, n, t, j, c);
                }
            }
        }
        if let Some(d_final) = d_final {
            for i in 0..kk - 1 {
                for c in 0..c_all {
                    send(range.end, i, c, d_final[slot(kk, c_all, n, i, c)]);
                }
            }
        }
    }
    (dx, dconv, dstate)
}
