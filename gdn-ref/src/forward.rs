//! The layer's forward, stage by stage, over flat token-major buffers.
//!
//! Every stage is a plain loop that mirrors one line of the spec. [`Activations`] keeps what the
//! backward needs; the L2 norms, the gates and the recurrence are the ones the core op shares
//! ([`crate::l2norm`], [`crate::gates`], [`crate::recurrence`]).

use crate::gates::{Decay, write_strength};
use crate::l2norm::{Normalized, normalize};
use crate::recurrence::{self, Streams};
use crate::scalar::silu;
use crate::window::{Tap, slot, tap};
use crate::{LayerConfig, LayerParams, Sequences};

/// Per-token, per-value-head gate values.
pub(crate) struct Gates {
    /// `a + dt_bias`, `[N, nv]`.
    pub arg: Vec<f64>,
    /// `ln g = −exp(a_log)·softplus(arg)` and `g`.
    pub decay: Decay,
    /// Write strength `β = σ(b)`.
    pub beta: Vec<f64>,
}

/// Everything the forward computes before and after the recurrence.
pub(crate) struct Activations {
    /// Conv output before SiLU, `[N, C]`.
    pub pre: Vec<f64>,
    /// `silu(pre)`, `[N, C]`.
    pub y: Vec<f64>,
    /// `q̂` per key head (`[N, nk, dk]`, `1/√dk` folded in) and its `Σq² + ε₂`.
    pub q: Normalized,
    /// `k̂` per key head and its `Σk² + ε₂`.
    pub k: Normalized,
    pub gates: Gates,
    /// Recurrence output before the norm, `[N, nv, dv]`.
    pub o: Vec<f64>,
    /// `1 / sqrt(mean o² + ε)`, `[N, nv]`.
    pub rstd: Vec<f64>,
    /// Final states, `[N_seq, nv, dk, dv]`.
    pub ht: Vec<f64>,
}

/// Flat views of one batch's inputs.
pub(crate) struct Flat<'a> {
    pub qkv: &'a [f64],
    pub z: &'a [f64],
    pub a: &'a [f64],
    pub b: &'a [f64],
    pub h0: Option<&'a [f64]>,
    /// `[N_seq, kk − 1, C]`.
    pub conv_state: Option<&'a [f64]>,
}

impl Activations {
    /// The whole forward up to (and including) the gated RMSNorm's `rstd`.
    pub fn compute(config: &LayerConfig, params: &LayerParams, seqs: &Sequences, x: &Flat) -> Self {
        let (pre, y) = conv_silu(config, params, seqs, x);
        let tokens = seqs.tokens();
        let q = normalize(&y, config.q_rows(), tokens, config.nk, q_scale(config));
        let k = normalize(&y, config.k_rows(), tokens, config.nk, 1.0);
        let (arg, decay) = Decay::from_logits(x.a, params.a_log.view(), params.dt_bias.view());
        let gates = Gates { arg, decay, beta: write_strength(x.b) };
        let mut act = Self { pre, y, q, k, gates, o: Vec::new(), rstd: Vec::new(), ht: Vec::new() };
        let out = recurrence::forward(&config.heads(), seqs, &act.streams(config), x.h0);
        act.rstd = rms_rstd(config, &out.o);
        (act.o, act.ht) = (out.o, out.ht);
        act
    }

    /// What the recurrence reads: `q̂`, `k̂`, `v` inside the conv output, `g`, `β`.
    pub fn streams(&self, config: &LayerConfig) -> Streams<'_> {
        Streams {
            q_hat: &self.q.hat,
            k_hat: &self.k.hat,
            v: &self.y,
            v_rows: config.v_rows(),
            g: &self.gates.decay.g,
            beta: &self.gates.beta,
        }
    }

    /// `out = o·rstd·norm·silu(z)`, `[N, nv·dv]`.
    pub fn output(&self, config: &LayerConfig, params: &LayerParams, z: &[f64]) -> Vec<f64> {
        let dv = config.dv;
        let mut out = vec![0.0; self.o.len()];
        for (row, out_row) in out.chunks_mut(dv).enumerate() {
            for j in 0..dv {
                let e = row * dv + j;
                out_row[j] = self.o[e] * self.rstd[row] * params.norm[j] * silu(z[e]);
            }
        }
        out
    }
}

/// The layer's query scale, `1/√dk`, folded into `q̂`.
pub(crate) fn q_scale(config: &LayerConfig) -> f64 {
    1.0 / (config.dk as f64).sqrt()
}

/// The raw value tap `j` of the conv at flat token `t` of sequence `n` reads (see [`crate::window`]).
pub(crate) fn tap_value(
    config: &LayerConfig,
    seqs: &Sequences,
    x: &Flat,
    n: usize,
    t: usize,
    j: usize,
    c: usize,
) -> f64 {
    let (c_all, kk) = (config.channels(), config.kk);
    match tap(kk, seqs.range(n).start, t, j) {
        Tap::Token(src) => x.qkv[src * c_all + c],
        Tap::State(i) => x.conv_state.map_or(0.0, |state| state[slot(kk, c_all, n, i, c)]),
    }
}

/// Step 1: `pre_t[c] = Σ_j conv[c,j]·x_{t−(kk−1)+j}[c]` within each sequence, positions before its
/// start read from its conv state (or zero), and `silu(pre)`.
fn conv_silu(config: &LayerConfig, params: &LayerParams, seqs: &Sequences, x: &Flat) -> (Vec<f64>, Vec<f64>) {
    let c_all = config.channels();
    let mut pre = vec![0.0; x.qkv.len()];
    for n in 0..seqs.len() {
        for t in seqs.range(n) {
            for c in 0..c_all {
                pre[t * c_all + c] =
                    (0..config.kk).map(|j| params.conv[[c, j]] * tap_value(config, seqs, x, n, t, j, c)).sum();
            }
        }
    }
    let y = pre.iter().map(|&p| silu(p)).collect();
    (pre, y)
}

/// The final conv state `[N_seq, kk − 1, C]`: the last `kk − 1` raw tokens of every sequence,
/// reaching into its conv state (or zero) when the sequence is shorter.
pub(crate) fn final_conv_state(config: &LayerConfig, seqs: &Sequences, x: &Flat) -> Vec<f64> {
    let (c_all, kk) = (config.channels(), config.kk);
    let mut state = vec![0.0; seqs.len() * (kk - 1) * c_all];
    for n in 0..seqs.len() {
        let end = seqs.range(n).end;
        for i in 0..kk - 1 {
            for c in 0..c_all {
                state[slot(kk, c_all, n, i, c)] = tap_value(config, seqs, x, n, end, i, c);
            }
        }
    }
    state
}

/// Step 6's `rstd = 1 / sqrt(mean_j o_j² + ε)` per (token, value head).
fn rms_rstd(config: &LayerConfig, o: &[f64]) -> Vec<f64> {
    o.chunks(config.dv)
        .map(|row| 1.0 / (row.iter().map(|v| v * v).sum::<f64>() / config.dv as f64 + config.rms_eps).sqrt())
        .collect()
}
