// The chunked family's view of a chunk: C = layer.ckpt_interval tokens (at most CMAX) of one sequence
// for one value head; the last chunk of a sequence holds L ≤ C valid tokens and is padded with
// q̂ = k̂ = v = dO = 0, β = 0, ℓ = 0 (so the decays stay finite and the pads contribute nothing).
// Chunks are numbered by slot: sequence n owns slots ckpt_first(n) … ckpt_first(n + 1) − 1, the same
// slots as the states stored at chunk starts in ckpt. chunk_begin sets the private context below and
// the chunk's decays in workgroup memory, each exponent a sum of log-gates over its own span (never a
// difference of prefix sums, which loses |γ|·2⁻²⁴ of relative accuracy):
//   ck_d[t] = e^{γ_t},  ck_d1[t] = e^{γ_t − γ_0},  ck_lam[t] = e^{γ_{C−1} − γ_t},  γ_t = Σ_{s ≤ t} ℓ_s.

const CMAX: u32 = 64u;

var<private> ck_t0: u32;
var<private> ck_len: u32;
var<private> ck_slot: u32;
var<private> ck_h: u32;
// Where the chunk's first row starts in qk_hat (q̂ and k̂), in y (v) and in o-shaped tensors, and its
// region in chunk_fwd and chunk_bwd.
var<private> ck_q: u32;
var<private> ck_k: u32;
var<private> ck_v: u32;
var<private> ck_o: u32;
var<private> ck_fwd: u32;
var<private> ck_bwd: u32;

var<workgroup> ck_ell: array<f32, CMAX>;
var<workgroup> ck_beta: array<f32, CMAX>;
var<workgroup> ck_d: array<f32, CMAX>;
var<workgroup> ck_d1: array<f32, CMAX>;
var<workgroup> ck_lam: array<f32, CMAX>;

fn chunk_size() -> u32 {
    return layer.ckpt_interval;
}

// Chunk slots of the whole batch.
fn chunk_slots() -> u32 {
    return ckpt_first(layer.seqs);
}

// The sequence that owns chunk `slot`: the last n with ckpt_first(n) ≤ slot.
fn chunk_sequence(slot: u32) -> u32 {
    var lo = 0u;
    var hi = layer.seqs;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (ckpt_first(mid) <= slot) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Enters chunk `slot` of value head `h`; every invocation of the workgroup calls it.
fn chunk_begin(slot: u32, h: u32, tid: u32) {
    let n = chunk_sequence(slot);
    let c = chunk_size();
    ck_slot = slot;
    ck_h = h;
    ck_t0 = seq_start(n) + (slot - ckpt_first(n)) * c;
    ck_len = min(c, seq_end(n) - ck_t0);
    ck_q = hat_at(0u, ck_t0, h / layer.rep);
    ck_k = hat_at(1u, ck_t0, h / layer.rep);
    ck_v = ck_t0 * layer.channels + 2u * layer.nk * DK + h * DV;
    ck_o = (ck_t0 * layer.nv + h) * DV;
    let chunk_head = slot * layer.nv + h;
    ck_fwd = chunk_head * (4u * c * c + c * (DK + 2u * DV));
    ck_bwd = chunk_head * (4u * c * c + c * (3u * DK + 2u * DV));
    workgroupBarrier();
    if (tid < c) {
        var ell = 0.0;
        var beta = 0.0;
        if (tid < ck_len) {
            let e = (ck_t0 + tid) * layer.nv + h;
            ell = gate_log_decay(e);
            beta = gate_beta(e);
        }
        ck_ell[tid] = ell;
        ck_beta[tid] = beta;
    }
    workgroupBarrier();
    if (tid < c) {
        var to_first = 0.0;
        for (var s = 1u; s <= tid; s = s + 1u) {
            to_first = to_first + ck_ell[s];
        }
        var to_last = 0.0;
        for (var s = tid + 1u; s < c; s = s + 1u) {
            to_last = to_last + ck_ell[s];
        }
        ck_d[tid] = exp(ck_ell[0] + to_first);
        ck_d1[tid] = exp(to_first);
        ck_lam[tid] = exp(to_last);
    }
    workgroupBarrier();
}

// e^{γ_0} = g of the chunk's first token, and e^{γ_{C−1}}, the decay of the whole chunk.
fn chunk_first_decay() -> f32 {
    return ck_d[0];
}

fn chunk_decay() -> f32 {
    return ck_d[chunk_size() - 1u];
}

// The largest β of the chunk (the tensor-core kernels scale β-sized operands by it).
fn chunk_beta_bound() -> f32 {
    var bound = 0.0;
    for (var t = 0u; t < chunk_size(); t = t + 1u) {
        bound = max(bound, ck_beta[t]);
    }
    return bound;
}

// Row t of the chunk (zero for pads): q̂ and k̂ element i, v element j.
fn chunk_q(t: u32, i: u32) -> f32 {
    if (t >= ck_len) {
        return 0.0;
    }
    return qk_hat[ck_q + t * layer.nk * DK + i];
}

fn chunk_k(t: u32, i: u32) -> f32 {
    if (t >= ck_len) {
        return 0.0;
    }
    return qk_hat[ck_k + t * layer.nk * DK + i];
}

fn chunk_v(t: u32, j: u32) -> f32 {
    if (t >= ck_len) {
        return 0.0;
    }
    return y[ck_v + t * layer.channels + j];
}

// Index of row t, element j of an o-shaped tensor ([tokens, nv, DV]: o, d_o).
fn chunk_o_at(t: u32, j: u32) -> u32 {
    return ck_o + t * layer.nv * DV + j;
}

// Start of the state of (chunk slot, head) in ckpt-shaped buffers.
fn chunk_state_at(slot: u32) -> u32 {
    return (slot * layer.nv + ck_h) * DK * DV;
}

// The chunk's region in chunk_fwd: M, QK, KK, T ([C, C] each), W¹ [C, DK], Ũ and U ([C, DV] each).
fn fwd_m(t: u32, s: u32) -> u32 {
    return ck_fwd + t * chunk_size() + s;
}

fn fwd_qk(t: u32, s: u32) -> u32 {
    let c = chunk_size();
    return ck_fwd + c * c + t * c + s;
}

fn fwd_kk(t: u32, s: u32) -> u32 {
    let c = chunk_size();
    return ck_fwd + 2u * c * c + t * c + s;
}

fn fwd_t(t: u32, s: u32) -> u32 {
    let c = chunk_size();
    return ck_fwd + 3u * c * c + t * c + s;
}

fn fwd_w1(t: u32, i: u32) -> u32 {
    let c = chunk_size();
    return ck_fwd + 4u * c * c + t * DK + i;
}

fn fwd_ut(t: u32, j: u32) -> u32 {
    let c = chunk_size();
    return ck_fwd + 4u * c * c + c * DK + t * DV + j;
}

fn fwd_u(t: u32, j: u32) -> u32 {
    let c = chunk_size();
    return ck_fwd + 4u * c * c + c * (DK + DV) + t * DV + j;
}
