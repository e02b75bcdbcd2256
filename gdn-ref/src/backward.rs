//! The hand-written backward, stage by stage in reverse order of the forward.
//!
//! It re-runs the forward ([`Activations::compute`]), then for every (sequence, value head)
//! re-runs the recurrence keeping every state and sweeps it in reverse. Each block below names the
//! spec line it implements.

use crate::forward::{Activations, Flat, HeadTrace, initial_state, par_map, tap_value};
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

/// Gradients of one (sequence, value head) recurrence.
struct HeadGrads {
    /// `dq̂`, `[len, dk]`.
    dq_hat: Vec<f64>,
    /// `dk̂`, `[len, dk]`.
    dk_hat: Vec<f64>,
    /// `dv`, `[len, dv]`.
    dv: Vec<f64>,
    /// `dg`, `[len]`.
    dg: Vec<f64>,
    /// `Σ |dS'·S_{t−1}|` over the state, the magnitude of `dg`'s terms, `[len]`.
    dg_terms: Vec<f64>,
    /// `dβ`, `[len]`.
    dbeta: Vec<f64>,
    /// `dS_0`, `[dk, dv]`.
    ds0: Vec<f64>,
}

pub(crate) fn backward(
    config: &LayerConfig,
    params: &LayerParams,
    seqs: &Sequences,
    x: &Flat,
    grads: &FlatOutputGrads,
) -> FlatGradients {
    let (dout, dht) = (grads.dout, grads.dht);
    let (nk, nv, dk, dv, c_all) = (config.nk, config.nv, config.dk, config.dv, config.channels());
    let tokens = seqs.tokens();
    let act = Activations::compute(config, params, seqs, x);

    let (d_o, dz, dnorm) = norm_backward(config, params, &act, x.z, dout);

    let heads = par_map(seqs.len() * nv, |job| {
        let (n, h) = (job / nv, job % nv);
        let trace = HeadTrace::run(config, &act, seqs.range(n), h, initial_state(config, x.h0, n, h), true);
        recurrence_backward(config, &act, &trace, seqs.range(n), h, &d_o, initial_state(config, dht, n, h))
    });
    let mut dy = vec![0.0; tokens * c_all];
    let mut dq_hat = vec![0.0; tokens * nk * dk];
    let mut dk_hat = vec![0.0; tokens * nk * dk];
    let mut dg = vec![0.0; tokens * nv];
    let mut dg_terms = vec![0.0; tokens * nv];
    let mut dbeta = vec![0.0; tokens * nv];
    let mut dh0 = Vec::with_capacity(seqs.len() * nv * dk * dv);
    for (job, head) in heads.into_iter().enumerate() {
        let (n, h) = (job / nv, job % nv);
        let key = h / config.rep();
        for (s, t) in seqs.range(n).enumerate() {
            // dq̂, dk̂ of the `rep` value heads that share a key head are summed.
            for i in 0..dk {
                dq_hat[(t * nk + key) * dk + i] += head.dq_hat[s * dk + i];
                dk_hat[(t * nk + key) * dk + i] += head.dk_hat[s * dk + i];
            }
            dy[t * c_all + config.v_channel(h)..][..dv].copy_from_slice(&head.dv[s * dv..][..dv]);
            dg[t * nv + h] = head.dg[s];
            dg_terms[t * nv + h] = head.dg_terms[s];
            dbeta[t * nv + h] = head.dbeta[s];
        }
        dh0.extend_from_slice(&head.ds0);
    }

    // Gates: da = dg·g·(−exp(a_log))·σ(arg); ddt_bias = Σ da; da_log = Σ dg·g·ln g; db = dβ·β(1 − β).
    let mut da = vec![0.0; tokens * nv];
    let mut da_terms = vec![0.0; tokens * nv];
    let mut db = vec![0.0; tokens * nv];
    let mut da_log = vec![0.0; nv];
    let mut ddt_bias = vec![0.0; nv];
    for e in 0..tokens * nv {
        let h = e % nv;
        let (g, beta) = (act.gates.g[e], act.gates.beta[e]);
        da[e] = dg[e] * g * -params.a_log[h].exp() * sigmoid(act.gates.arg[e]);
        da_terms[e] = dg_terms[e] * g * params.a_log[h].exp() * sigmoid(act.gates.arg[e]);
        ddt_bias[h] += da[e];
        da_log[h] += dg[e] * g * act.gates.ln_g[e];
        db[e] = dbeta[e] * beta * (1.0 - beta);
    }

    l2_backward(config, &act, &dq_hat, &act.q_ss, 0, 1.0 / (dk as f64).sqrt(), &mut dy);
    l2_backward(config, &act, &dk_hat, &act.k_ss, config.key_width(), 1.0, &mut dy);

    let (dqkv, dconv, dconv_state) = conv_backward(config, params, seqs, &act, x, &dy, grads.dconv_state);
    FlatGradients { dqkv, dz, da, db, dh0, da_log, ddt_bias, dnorm, dconv, dconv_state, da_terms }
}

/// Gated RMSNorm: `dz_j = dout_j·o_j r·norm_j·silu'(z_j)`, `dnorm_j += dout_j·o_j r·s_j`,
/// `do_j = r·norm_j s_j dout_j − o_j·r³·(1/dv)·Σ_m dout_m norm_m s_m o_m`.
fn norm_backward(
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

/// The recurrence in reverse, `dS = dhT` (or 0); for `t = T … 1`:
/// `dS += q̂ doᵀ; dq̂ = S_t do; du = dSᵀk̂; dk̂ = dS u; dv = β du; dβ = Σ du (v − kv); dkv = −β du;
/// dS' = dS + k̂ dkvᵀ; dk̂ += g S_{t−1} dkv; dg = ⟨dS', S_{t−1}⟩; dS = g dS'`. Then `dh0 = dS`.
fn recurrence_backward(
    config: &LayerConfig,
    act: &Activations,
    trace: &HeadTrace,
    tokens: std::ops::Range<usize>,
    h: usize,
    d_o: &[f64],
    dht: Option<&[f64]>,
) -> HeadGrads {
    let (dk, dv, nk, nv) = (config.dk, config.dv, config.nk, config.nv);
    let key = h / config.rep();
    let len = tokens.len();
    let mut ds = dht.map_or_else(|| vec![0.0; dk * dv], <[f64]>::to_vec);
    let mut grads = HeadGrads {
        dq_hat: vec![0.0; len * dk],
        dk_hat: vec![0.0; len * dk],
        dv: vec![0.0; len * dv],
        dg: vec![0.0; len],
        dg_terms: vec![0.0; len],
        dbeta: vec![0.0; len],
        ds0: Vec::new(),
    };
    let (mut du, mut u, mut dkv) = (vec![0.0; dv], vec![0.0; dv], vec![0.0; dv]);
    for step in (0..len).rev() {
        let t = tokens.start + step;
        let q = &act.q_hat[(t * nk + key) * dk..][..dk];
        let k = &act.k_hat[(t * nk + key) * dk..][..dk];
        let v = &act.y[t * config.channels() + config.v_channel(h)..][..dv];
        let d_o = &d_o[(t * nv + h) * dv..][..dv];
        let kv = &trace.kv[step * dv..][..dv];
        let (g, beta) = (act.gates.g[t * nv + h], act.gates.beta[t * nv + h]);
        let (s_t, s_prev) = (trace.state(step + 1), trace.state(step));

        let dq = &mut grads.dq_hat[step * dk..][..dk];
        for i in 0..dk {
            for j in 0..dv {
                ds[i * dv + j] += q[i] * d_o[j];
                dq[i] += s_t[i * dv + j] * d_o[j];
            }
        }
        du.fill(0.0);
        for i in 0..dk {
            for j in 0..dv {
                du[j] += ds[i * dv + j] * k[i];
            }
        }
        let mut dbeta = 0.0;
        for j in 0..dv {
            u[j] = beta * (v[j] - kv[j]);
            grads.dv[step * dv + j] = beta * du[j];
            dbeta += du[j] * (v[j] - kv[j]);
            dkv[j] = -beta * du[j];
        }
        grads.dbeta[step] = dbeta;
        let dkh = &mut grads.dk_hat[step * dk..][..dk];
        let (mut dg, mut dg_terms) = (0.0, 0.0);
        for i in 0..dk {
            for j in 0..dv {
                let e = i * dv + j;
                dkh[i] += ds[e] * u[j] + g * s_prev[e] * dkv[j];
                let ds_pre = ds[e] + k[i] * dkv[j];
                dg += ds_pre * s_prev[e];
                dg_terms += (ds_pre * s_prev[e]).abs();
                ds[e] = g * ds_pre;
            }
        }
        grads.dg[step] = dg;
        grads.dg_terms[step] = dg_terms;
    }
    grads.ds0 = ds;
    grads
}

/// L2 norm: `dx = inv·dx̂ − x·(Σ_m dx̂_m x_m)·inv / (Σx² + ε₂)`, `inv = scale / sqrt(Σx² + ε₂)`;
/// writes into the `dk` channels of `dy` that start at `first + i·dk`.
fn l2_backward(
    config: &LayerConfig,
    act: &Activations,
    d_hat: &[f64],
    ss: &[f64],
    first: usize,
    scale: f64,
    dy: &mut [f64],
) {
    let (nk, dk, c_all) = (config.nk, config.dk, config.channels());
    for (row, &sum) in ss.iter().enumerate() {
        let (t, i) = (row / nk, row % nk);
        let x = &act.y[t * c_all + first + i * dk..][..dk];
        let dx_hat = &d_hat[row * dk..][..dk];
        let inv = scale / sum.sqrt();
        let dot: f64 = dx_hat.iter().zip(x).map(|(d, x)| d * x).sum();
        for m in 0..dk {
            dy[t * c_all + first + i * dk + m] = inv * dx_hat[m] - x[m] * dot * inv / sum;
        }
    }
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
