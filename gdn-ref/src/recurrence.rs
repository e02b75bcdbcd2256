//! The gated delta rule over a batch, forward and backward: the one recurrence that the layer and
//! the core op share.
//!
//! Both callers prepare the same streams — normalised `q̂`, `k̂` per key head, `v` per value head,
//! `g` and `β` per (token, value head) — and differ only in how they got them (conv + L2 norm +
//! the layer's gates, or the caller's tensors as fla takes them) and in where `v` lives (inside the
//! layer's conv output, or its own buffer: see [`HeadRows`]). [`HeadTrace::run`] is the recurrence
//! of one (sequence, value head); the backward re-runs it keeping every state and sweeps it in
//! reverse.

use crate::parallel::par_map;
use crate::rows::HeadRows;
use crate::{Error, Sequences};

/// The head layout: value head `h` reads key head `h / rep`, `rep = nv / nk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Heads {
    /// Key (and query) heads.
    pub nk: usize,
    /// Value heads, a multiple of `nk`.
    pub nv: usize,
    /// Key head dim (rows of the state).
    pub dk: usize,
    /// Value head dim (columns of the state).
    pub dv: usize,
}

impl Heads {
    /// Checks every size is positive and `nv % nk == 0`.
    pub fn validate(&self) -> Result<(), Error> {
        for (name, value) in [("nk", self.nk), ("nv", self.nv), ("dk", self.dk), ("dv", self.dv)] {
            if value == 0 {
                return Err(Error::Empty { name });
            }
        }
        if !self.nv.is_multiple_of(self.nk) {
            return Err(Error::HeadRatio { nk: self.nk, nv: self.nv });
        }
        Ok(())
    }

    /// Value heads per key head.
    pub fn rep(&self) -> usize {
        self.nv / self.nk
    }

    /// Elements of one head's state, `dk·dv`.
    pub fn state_size(&self) -> usize {
        self.dk * self.dv
    }

    /// Shape of the states of `sequences` sequences (`h0`, `hT` and their gradients):
    /// `[N, nv, dk, dv]`.
    pub fn state_shape(&self, sequences: usize) -> [usize; 4] {
        [sequences, self.nv, self.dk, self.dv]
    }
}

/// What the recurrence reads, flat over the batch's `N` tokens.
pub(crate) struct Streams<'a> {
    /// `q̂` per key head, `[N, nk, dk]` (scaled: `o = Sᵀq̂`).
    pub q_hat: &'a [f64],
    /// `k̂` per key head, `[N, nk, dk]`.
    pub k_hat: &'a [f64],
    /// `v` per value head, laid out by `v_rows`.
    pub v: &'a [f64],
    /// Where value head `h` of token `t` sits in `v` (and where its gradient goes).
    pub v_rows: HeadRows,
    /// Decay `g`, `[N, nv]`.
    pub g: &'a [f64],
    /// Write strength `β`, `[N, nv]`.
    pub beta: &'a [f64],
}

/// The recurrence's results over the batch.
pub(crate) struct Outputs {
    /// `o_t`, `[N, nv, dv]`.
    pub o: Vec<f64>,
    /// Final states, `[N_seq, nv, dk, dv]`.
    pub ht: Vec<f64>,
}

/// Gradients of everything the recurrence reads (`dv` is written into the caller's buffer).
pub(crate) struct Grads {
    /// `dq̂`, `[N, nk, dk]`, summed over the value heads sharing a key head.
    pub dq_hat: Vec<f64>,
    /// `dk̂`, `[N, nk, dk]`, summed the same way.
    pub dk_hat: Vec<f64>,
    /// `dg`, `[N, nv]`.
    pub dg: Vec<f64>,
    /// `Σ |dS'·S_{t−1}|` over the state, the magnitude of `dg`'s terms, `[N, nv]`.
    pub dg_terms: Vec<f64>,
    /// `dβ`, `[N, nv]`.
    pub dbeta: Vec<f64>,
    /// `dS_0`, `[N_seq, nv, dk, dv]`.
    pub dh0: Vec<f64>,
}

/// Step 5 for every (sequence, value head), each from its `h0[n, h]` (or zero).
pub(crate) fn forward(heads: &Heads, seqs: &Sequences, x: &Streams, h0: Option<&[f64]>) -> Outputs {
    let (nv, dv, state) = (heads.nv, heads.dv, heads.state_size());
    let traces = par_map(seqs.len() * nv, |job| {
        let (n, h) = (job / nv, job % nv);
        HeadTrace::run(heads, x, seqs.range(n), h, initial_state(heads, h0, n, h), false)
    });
    let mut out = Outputs { o: vec![0.0; seqs.tokens() * nv * dv], ht: vec![0.0; seqs.len() * nv * state] };
    for (job, trace) in traces.into_iter().enumerate() {
        let (n, h) = (job / nv, job % nv);
        for (s, tok) in seqs.range(n).enumerate() {
            let o = &mut out.o[(tok * nv + h) * dv..][..dv];
            o.copy_from_slice(&trace.o[s * dv..][..dv]);
        }
        out.ht[job * state..][..state].copy_from_slice(trace.final_state());
    }
    out
}

/// The backward of [`forward`] for `d_o` (`[N, nv, dv]`) and `dht` arriving at its outputs; writes
/// `dv` into `dv` at the places `x.v_rows` reads `v` from.
pub(crate) fn backward(
    heads: &Heads,
    seqs: &Sequences,
    x: &Streams,
    h0: Option<&[f64]>,
    d_o: &[f64],
    dht: Option<&[f64]>,
    dv: &mut [f64],
) -> Grads {
    let (nk, nv, dk) = (heads.nk, heads.nv, heads.dk);
    let tokens = seqs.tokens();
    let per_head = par_map(seqs.len() * nv, |job| {
        let (n, h) = (job / nv, job % nv);
        let trace = HeadTrace::run(heads, x, seqs.range(n), h, initial_state(heads, h0, n, h), true);
        trace.backward(heads, x, seqs.range(n), h, d_o, initial_state(heads, dht, n, h))
    });
    let mut grads = Grads {
        dq_hat: vec![0.0; tokens * nk * dk],
        dk_hat: vec![0.0; tokens * nk * dk],
        dg: vec![0.0; tokens * nv],
        dg_terms: vec![0.0; tokens * nv],
        dbeta: vec![0.0; tokens * nv],
        dh0: Vec::with_capacity(seqs.len() * nv * heads.state_size()),
    };
    for (job, head) in per_head.into_iter().enumerate() {
        let (n, h) = (job / nv, job % nv);
        let key = h / heads.rep();
        for (s, t) in seqs.range(n).enumerate() {
            // dq̂, dk̂ of the `rep` value heads that share a key head are summed.
            for i in 0..dk {
                grads.dq_hat[(t * nk + key) * dk + i] += head.dq_hat[s * dk + i];
                grads.dk_hat[(t * nk + key) * dk + i] += head.dk_hat[s * dk + i];
            }
            x.v_rows.row_mut(dv, t, h).copy_from_slice(&head.dv[s * heads.dv..][..heads.dv]);
            grads.dg[t * nv + h] = head.dg[s];
            grads.dg_terms[t * nv + h] = head.dg_terms[s];
            grads.dbeta[t * nv + h] = head.dbeta[s];
        }
        grads.dh0.extend_from_slice(&head.ds0);
    }
    grads
}

/// `h0[n, h]` as a flat `dk·dv` slice of a `[N_seq, nv, dk, dv]` state, if given.
fn initial_state<'a>(heads: &Heads, h0: Option<&'a [f64]>, n: usize, h: usize) -> Option<&'a [f64]> {
    let state = heads.state_size();
    h0.map(|h0| &h0[(n * heads.nv + h) * state..][..state])
}

/// The delta-rule recurrence of one value head over one sequence.
struct HeadTrace {
    /// `o_t`, `[len, dv]`.
    o: Vec<f64>,
    /// `kv_t = S'_tᵀ k̂_t`, `[len, dv]`.
    kv: Vec<f64>,
    /// `S_0 … S_len` when kept, else only `S_len`; each `[dk, dv]`.
    states: Vec<f64>,
    /// `dk·dv`.
    state_size: usize,
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
    /// `Σ |dS'·S_{t−1}|` over the state, `[len]`.
    dg_terms: Vec<f64>,
    /// `dβ`, `[len]`.
    dbeta: Vec<f64>,
    /// `dS_0`, `[dk, dv]`.
    ds0: Vec<f64>,
}

impl HeadTrace {
    /// Step 5: `S'_t = g_t·S_{t−1}; kv_t = S'_tᵀk̂_t; u_t = β_t(v_t − kv_t); S_t = S'_t + k̂_t u_tᵀ;
    /// o_t = S_tᵀq̂_t`, from `h0` (or zero).
    fn run(
        heads: &Heads,
        x: &Streams,
        tokens: std::ops::Range<usize>,
        h: usize,
        h0: Option<&[f64]>,
        keep_states: bool,
    ) -> Self {
        let (dk, dv, nk, nv) = (heads.dk, heads.dv, heads.nk, heads.nv);
        let key = h / heads.rep();
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
            let q = &x.q_hat[(t * nk + key) * dk..][..dk];
            let k = &x.k_hat[(t * nk + key) * dk..][..dk];
            let v = x.v_rows.row(x.v, t, h);
            let (g, beta) = (x.g[t * nv + h], x.beta[t * nv + h]);
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
    fn final_state(&self) -> &[f64] {
        &self.states[self.states.len() - self.state_size..]
    }

    /// `S_t` (`t = 0` is the initial state); only when the states were kept.
    fn state(&self, t: usize) -> &[f64] {
        &self.states[t * self.state_size..][..self.state_size]
    }

    /// The recurrence in reverse, `dS = dhT` (or 0); for `t = T … 1`:
    /// `dS += q̂ doᵀ; dq̂ = S_t do; du = dSᵀk̂; dk̂ = dS u; dv = β du; dβ = Σ du (v − kv); dkv = −β du;
    /// dS' = dS + k̂ dkvᵀ; dk̂ += g S_{t−1} dkv; dg = ⟨dS', S_{t−1}⟩; dS = g dS'`. Then `dh0 = dS`.
    /// Needs the states kept.
    fn backward(
        &self,
        heads: &Heads,
        x: &Streams,
        tokens: std::ops::Range<usize>,
        h: usize,
        d_o: &[f64],
        dht: Option<&[f64]>,
    ) -> HeadGrads {
        let (dk, dv, nk, nv) = (heads.dk, heads.dv, heads.nk, heads.nv);
        let key = h / heads.rep();
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
            let q = &x.q_hat[(t * nk + key) * dk..][..dk];
            let k = &x.k_hat[(t * nk + key) * dk..][..dk];
            let v = x.v_rows.row(x.v, t, h);
            let d_o = &d_o[(t * nv + h) * dv..][..dv];
            let kv = &self.kv[step * dv..][..dv];
            let (g, beta) = (x.g[t * nv + h], x.beta[t * nv + h]);
            let (s_t, s_prev) = (self.state(step + 1), self.state(step));

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
}
