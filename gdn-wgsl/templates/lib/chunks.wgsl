// The f32 kernels' view of a chunk (the geometry is chunk_geometry.wgsl's): its rows (zero for pads)
// and decays. chunk_begin enters it and sets the chunk's decays in workgroup memory, each exponent a sum of log-gates over its own span
// (never a difference of prefix sums, which loses |γ|·2⁻²⁴ of relative accuracy):
//   ck_d[t] = e^{γ_t},  ck_d1[t] = e^{γ_t − γ_0},  ck_lam[t] = e^{γ_{C−1} − γ_t},  γ_t = Σ_{s ≤ t} ℓ_s.

// Row t of the chunk (zero for pads): q̂ and k̂ element i (v's: chunk_values.wgsl).
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

// The chunk's regions in chunk_work: its forward products (from 0) and its backward scratch (from
// layer.chunk_bwd_base).
var<private> ck_fwd: u32;
var<private> ck_bwd: u32;

var<workgroup> ck_ell: array<f32, CMAX>;
var<workgroup> ck_beta: array<f32, CMAX>;
var<workgroup> ck_d: array<f32, CMAX>;
var<workgroup> ck_d1: array<f32, CMAX>;
var<workgroup> ck_lam: array<f32, CMAX>;

// Enters chunk `slot` of value head `h`; every invocation of the workgroup calls it.
fn chunk_begin(slot: u32, h: u32, tid: u32) {
    chunk_locate(slot, chunk_sequence(slot), h);
    let c = chunk_size();
    let chunk_head = slot * layer.nv + h;
    ck_fwd = chunk_head * (4u * c * c + c * (DK + 2u * DV));
    ck_bwd = layer.chunk_bwd_base + chunk_head * (4u * c * c + c * (3u * DK + 2u * DV));
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

// The chunk's forward region in chunk_work: M, QK, KK, T ([C, C] each), W¹ [C, DK], Ũ and U ([C, DV] each).
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
