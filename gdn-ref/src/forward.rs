//! The forward pass, stage by stage, over flat token-major buffers.
//!
//! Every stage is a plain loop that mirrors one line of the spec. [`Activations`] keeps what the
//! backward needs; the recurrence of one (sequence, value head) is [`HeadTrace::run`], which the
//! backward re-runs with `keep_states` to get every `S_t`.

use crate::scalar::{sigmoid, silu, softplus};
use crate::window::{Tap, slot, tap};
use crate::{L2_EPS, LayerConfig, LayerParams, Sequences};

/// Runs `job(0..count)` on all cores and returns the results in order.
pub(crate) fn par_map<T: Send>(count: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(count.max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= count {
                            break done;
                        }
                        done.push((i, job(i)));
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("reference worker panicked")).collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Per-token, per-value-head gate values.
pub(crate) struct Gates {
    /// `a + dt_bias`, `[N, nv]`.
    pub arg: Vec<f64>,
    /// `ln g = −exp(a_log)·softplus(arg)`, kept directly so that `g → 0` stays finite.
    pub ln_g: Vec<f64>,
    /// Decay `g`.
    pub g: Vec<f64>,
    /// Write strength `β = σ(b)`.
    pub beta: Vec<f64>,
}

/// Everything the forward computes before and after the recurrence.
pub(crate) struct Activations {
    /// Conv output before SiLU, `[N, C]`.
    pub pre: Vec<f64>,
    /// `silu(pre)`, `[N, C]`.
    pub y: Vec<f64>,
    /// `q̂` per key head, `[N, nk, dk]`.
    pub q_hat: Vec<f64>,
    /// `k̂` per key head, `[N, nk, dk]`.
    pub k_hat: Vec<f64>,
    /// `Σq² + ε₂`, `[N, nk]`.
    pub q_ss: Vec<f64>,
    /// `Σk² + ε₂`, `[N, nk]`.
    pub k_ss: Vec<f64>,
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
        let (q_hat, q_ss) = l2_normalize(config, seqs.tokens(), &y, 0, 1.0 / (config.dk as f64).sqrt());
        let (k_hat, k_ss) = l2_normalize(config, seqs.tokens(), &y, config.key_width(), 1.0);
        let gates = gates(config, params, x.a, x.b);
        let mut act = Self {
            pre,
            y,
            q_hat,
            k_hat,
            q_ss,
            k_ss,
            gates,
            o: vec![0.0; seqs.tokens() * config.value_width()],
            rstd: vec![0.0; seqs.tokens() * config.nv],
            ht: vec![0.0; seqs.len() * config.nv * config.dk * config.dv],
        };
        let traces = par_map(seqs.len() * config.nv, |job| {
            let (n, h) = (job / config.nv, job % config.nv);
            HeadTrace::run(config, &act, seqs.range(n), h, initial_state(config, x.h0, n, h), false)
        });
        let state = config.dk * config.dv;
        for (job, trace) in traces.into_iter().enumerate() {
            let (n, h) = (job / config.nv, job % config.nv);
            for (s, tok) in seqs.range(n).enumerate() {
                let o = &mut act.o[(tok * config.nv + h) * config.dv..][..config.dv];
                o.copy_from_slice(&trace.o[s * config.dv..][..config.dv]);
            }
            act.ht[job * state..][..state].copy_from_slice(trace.final_state());
        }
        act.rstd = rms_rstd(config, &act.o);
        act
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

/// `h0[n, h]` as a flat `dk·dv` slice, if given.
pub(crate) fn initial_state<'a>(config: &LayerConfig, h0: Option<&'a [f64]>, n: usize, h: usize) -> Option<&'a [f64]> {
    let state = config.dk * config.dv;
    h0.map(|h0| &h0[(n * config.nv + h) * state..][..state])
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

/// Step 3: per token and key head, `x̂ = x · scale / sqrt(Σx² + ε₂)` over the `dk` channels that
/// start at `first + i·dk`; returns `x̂` as `[N, nk, dk]` and `Σx² + ε₂` as `[N, nk]`.
fn l2_normalize(config: &LayerConfig, tokens: usize, y: &[f64], first: usize, scale: f64) -> (Vec<f64>, Vec<f64>) {
    let (nk, dk, c_all) = (config.nk, config.dk, config.channels());
    let mut hat = vec![0.0; tokens * nk * dk];
    let mut ss = vec![0.0; tokens * nk];
    for t in 0..tokens {
        for i in 0..nk {
            let x = &y[t * c_all + first + i * dk..][..dk];
            let sum = x.iter().map(|v| v * v).sum::<f64>() + L2_EPS;
            let inv = scale / sum.sqrt();
            for (dst, &v) in hat[(t * nk + i) * dk..][..dk].iter_mut().zip(x) {
                *dst = v * inv;
            }
            ss[t * nk + i] = sum;
        }
    }
    (hat, ss)
}

/// Step 4: `g = exp(−exp(a_log)·softplus(a + dt_bias))`, `β = σ(b)`.
fn gates(config: &LayerConfig, params: &LayerParams, a: &[f64], b: &[f64]) -> Gates {
    let nv = config.nv;
    let arg: Vec<f64> = a.iter().enumerate().map(|(e, &a)| a + params.dt_bias[e % nv]).collect();
    let ln_g: Vec<f64> = arg.iter().enumerate().map(|(e, &x)| -params.a_log[e % nv].exp() * softplus(x)).collect();
    Gates { g: ln_g.iter().map(|l| l.exp()).collect(), beta: b.iter().map(|&b| sigmoid(b)).collect(), arg, ln_g }
}

/// Step 6's `rstd = 1 / sqrt(mean_j o_j² + ε)` per (token, value head).
fn rms_rstd(config: &LayerConfig, o: &[f64]) -> Vec<f64> {
    o.chunks(config.dv)
        .map(|row| 1.0 / (row.iter().map(|v| v * v).sum::<f64>() / config.dv as f64 + config.rms_eps).sqrt())
        .collect()
}

/// The delta-rule recurrence of one value head over one sequence.
pub(crate) struct HeadTrace {
    /// `o_t`, `[len, dv]`.
    pub o: Vec<f64>,
    /// `kv_t = S'_tᵀ k̂_t`, `[len, dv]`.
    pub kv: Vec<f64>,
    /// `S_0 … S_len` when kept, else only `S_len`; each `[dk, dv]`.
    pub states: Vec<f64>,
    /// `dk·dv`.
    state_size: usize,
}

impl HeadTrace {
    /// Step 5: `S'_t = g_t·S_{t−1}; kv_t = S'_tᵀk̂_t; u_t = β_t(v_t − kv_t); S_t = S'_t + k̂_t u_tᵀ;
    /// o_t = S_tᵀq̂_t`, from `h0` (or zero).
    pub fn run(
        config: &LayerConfig,
        act: &Activations,
        tokens: std::ops::Range<usize>,
        h: usize,
        h0: Option<&[f64]>,
        keep_states: bool,
    ) -> Self {
        let (dk, dv, nk, nv) = (config.dk, config.dv, config.nk, config.nv);
        let key = h / config.rep();
        let len = tokens.len();
        let mut s = h0.map_or_else(|| vec![0.0; dk * dv], <[f64]>::to_vec);
        let mut trace = Self {
            o: vec![0.0; len * dv],
            kv: vec![0.0; len * dv],
            states: Vec::with_capacity(if keep_states { (len + 1) * dk * dv } else { dk * dv }),
            state_size: dk * dv,
        };
        if keep_states {
            trace.states.extend_from_slice(&s);
        }
        let mut u = vec![0.0; dv];
        for (step, t) in tokens.enumerate() {
            let q = &act.q_hat[(t * nk + key) * dk..][..dk];
            let k = &act.k_hat[(t * nk + key) * dk..][..dk];
            let v = &act.y[t * config.channels() + config.v_channel(h)..][..dv];
            let (g, beta) = (act.gates.g[t * nv + h], act.gates.beta[t * nv + h]);
            s.iter_mut().for_each(|e| *e *= g);
            let kv = &mut trace.kv[step * dv..][..dv];
            for i in 0..dk {
                for j in 0..dv {
                    kv[j] += s[i * dv + j] * k[i];
                }
            }
            for j in 0..dv {
                u[j] = beta * (v[j] - kv[j]);
            }
            let o = &mut trace.o[step * dv..][..dv];
            for i in 0..dk {
                for j in 0..dv {
                    s[i * dv + j] += k[i] * u[j];
                    o[j] += s[i * dv + j] * q[i];
                }
            }
            if keep_states {
                trace.states.extend_from_slice(&s);
            }
        }
        if !keep_states {
            trace.states = s;
        }
        trace
    }

    /// `S_len`.
    pub fn final_state(&self) -> &[f64] {
        &self.states[self.states.len() - self.state_size..]
    }

    /// `S_t` (`t = 0` is the initial state); only when the states were kept.
    pub fn state(&self, t: usize) -> &[f64] {
        &self.states[t * self.state_size..][..self.state_size]
    }
}
