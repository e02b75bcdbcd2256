// The chunked family, backward step 2, parallel over (chunk, value head): every gradient of the
// chunk's inputs from its entering state S₀ (ckpt), the gradient dS_L of its leaving state (dckpt) and
// dU (chunk_work's backward region), recomputing nothing but what its forward region does not hold:
//   dQK = (dO Uᵀ) ⊙ M;   [dQ₀; dW] = [diag(d) dO; −dU] S₀ᵀ;   dq̂ = dQ₀ + dQK K;
//   dK_S = diag(λ) U dS_Lᵀ;   dT = [e₁ dW | dU] [X¹ | Y]ᵀ;   [dX¹ | dY] = Tᵀ [e₁ dW | dU];
//   dA = strict_lower(−Tᵀ dT Tᵀ);   H = diag(β) (dA ⊙ M⁻);
//   dk̂ = [dQKᵀ | H | Hᵀ] [Q; K; K] + dK_S + diag(β d¹) dX¹;   dv = diag(β) dY;   dβ_t = ⟨dY_t, U_t⟩ / β_t.
// The gate gradient follows the span rule: with R = dQK ⊙ QK and E = dA ⊙ A below the diagonal only
// and r_s = ⟨k̂_s, dK_S row s⟩,
//   dγ_t = ⟨q̂_t, dQ₀_t⟩ + β_t d¹_t ⟨dX¹_t, k̂_t⟩ + Σ_{s<t} (R+E)_ts − Σ_{t'>t} (R+E)_t't − [t < L−1] r_t,
//   dγ_{L−1} += G ⟨dS_L, S₀⟩ + Σ_{s<L−1} r_s,   dℓ_t = Σ_{t' ≥ t} dγ_t'  (L: the chunk's valid tokens),
// so that no term whose decay spans no token is added and subtracted again.
// Writes dq̂, dk̂ per value head (dqk_hat_heads), dv into the v channels of dy, and dℓ, dβ (one part
// each) into gate_grad_parts.
// Grid: folded, chunk slots · nv workgroups.

const OP_DQ_DW: u32 = 0u;
const OP_DQK: u32 = 1u;
const OP_DKS: u32 = 2u;
const OP_DT: u32 = 3u;
const OP_DX_DY: u32 = 4u;
const OP_Z: u32 = 5u;
const OP_DA: u32 = 6u;
const OP_DQ_K: u32 = 7u;
const OP_DK: u32 = 8u;

// Per-token scalars of the gate gradients, and a workgroup reduction.
var<workgroup> q_dq: array<f32, CMAX>;
var<workgroup> k_dks: array<f32, CMAX>;
var<workgroup> k_dx1: array<f32, CMAX>;
var<workgroup> d_gamma: array<f32, CMAX>;
var<workgroup> partial: array<f32, MM_THREADS>;

fn state_at(i: u32, j: u32) -> u32 {
    return chunk_state_at(ck_slot) + i * DV + j;
}

fn dq_at(t: u32, i: u32) -> u32 {
    return ((ck_t0 + t) * layer.nv + ck_h) * DK + i;
}

fn dk_at(t: u32, i: u32) -> u32 {
    return ((layer.tokens + ck_t0 + t) * layer.nv + ck_h) * DK + i;
}

// How the operands lie: transposed reads (Tᵀ, dQKᵀ, Hᵀ as A; S₀ᵀ, dS_Lᵀ, Uᵀ, X¹ᵀ, Yᵀ, Tᵀ as B)
// are contiguous along the rows of A or the depth of B.
fn a_column_major(op: u32, k0: u32) -> bool {
    let c = chunk_size();
    switch op {
        case OP_DX_DY, OP_DA: {
            return true;
        }
        case OP_DK: {
            return k0 < c || k0 >= 2u * c;
        }
        default: {
            return false;
        }
    }
}

fn b_column_major(op: u32, k0: u32) -> bool {
    switch op {
        case OP_DQ_DW, OP_DQK, OP_DKS, OP_DT, OP_Z: {
            return true;
        }
        default: {
            return false;
        }
    }
}

fn load_a(op: u32, r: u32, k: u32) -> f32 {
    let c = chunk_size();
    switch op {
        case OP_DQ_DW: {
            if (r < c) {
                return chunk_do(r, k);
            }
            return chunk_work[bwd_du(r - c, k)];
        }
        case OP_DQK: {
            return chunk_do(r, k);
        }
        case OP_DKS: {
            return chunk_work[fwd_u(r, k)];
        }
        case OP_DT: {
            if (k < DK) {
                return chunk_first_decay() * chunk_work[bwd_dw(r, k)];
            }
            return chunk_work[bwd_du(r, k - DK)];
        }
        case OP_DX_DY, OP_DA: {
            return chunk_work[fwd_t(k, r)];
        }
        case OP_Z: {
            return chunk_work[bwd_dt(r, k)];
        }
        case OP_DQ_K: {
            return chunk_work[bwd_dqk(r, k)];
        }
        default: {
            if (k < c) {
                return chunk_work[bwd_dqk(k, r)];
            }
            if (k < 2u * c) {
                return ck_beta[r] * chunk_work[bwd_dam(r, k - c)];
            }
            let s = k - 2u * c;
            return ck_beta[s] * chunk_work[bwd_dam(s, r)];
        }
    }
}

fn load_b(op: u32, k: u32, col: u32) -> f32 {
    let c = chunk_size();
    switch op {
        case OP_DQ_DW: {
            return ckpt[state_at(col, k)];
        }
        case OP_DQK: {
            return chunk_work[fwd_u(col, k)];
        }
        case OP_DKS: {
            return dckpt[state_at(col, k)];
        }
        case OP_DT: {
            if (k < DK) {
                return ck_beta[col] * ck_d1[col] * chunk_k(col, k);
            }
            return ck_beta[col] * chunk_v(col, k - DK);
        }
        case OP_DX_DY: {
            if (col < DK) {
                return chunk_work[bwd_dw(k, col)];
            }
            return chunk_work[bwd_du(k, col - DK)];
        }
        case OP_Z: {
            return chunk_work[fwd_t(col, k)];
        }
        case OP_DA: {
            return chunk_work[bwd_z(k, col)];
        }
        case OP_DQ_K: {
            return chunk_k(k, col);
        }
        default: {
            if (k < c) {
                return chunk_q(k, col);
            }
            return chunk_k(k % c, col);
        }
    }
}

fn store_c(op: u32, r: u32, col: u32, value: f32) {
    let c = chunk_size();
    let valid = r < ck_len;
    switch op {
        case OP_DQ_DW: {
            if (r >= c) {
                chunk_work[bwd_dw(r - c, col)] = -value;
            } else if (valid) {
                dqk_hat_heads[dq_at(r, col)] = ck_d[r] * value;
            }
        }
        case OP_DQK: {
            var masked = 0.0;
            if (col <= r) {
                masked = chunk_work[fwd_m(r, col)] * value;
            }
            chunk_work[bwd_dqk(r, col)] = masked;
        }
        case OP_DKS: {
            chunk_work[bwd_dks(r, col)] = ck_lam[r] * value;
        }
        case OP_DT: {
            chunk_work[bwd_dt(r, col)] = value;
        }
        case OP_DX_DY: {
            if (col < DK) {
                chunk_work[bwd_dx1(r, col)] = chunk_first_decay() * value;
            } else {
                let j = col - DK;
                chunk_work[bwd_dy(r, j)] = value;
                if (valid) {
                    dy[ck_v + r * layer.channels + j] = ck_beta[r] * value;
                }
            }
        }
        case OP_Z: {
            chunk_work[bwd_z(r, col)] = value;
        }
        case OP_DA: {
            var masked = 0.0;
            if (col < r) {
                masked = -value * chunk_work[fwd_m(r, col)];
            }
            chunk_work[bwd_dam(r, col)] = masked;
        }
        case OP_DQ_K: {
            if (valid) {
                dqk_hat_heads[dq_at(r, col)] = dqk_hat_heads[dq_at(r, col)] + value;
            }
        }
        default: {
            if (valid) {
                let local = chunk_work[bwd_dks(r, col)] + ck_beta[r] * ck_d1[r] * chunk_work[bwd_dx1(r, col)];
                dqk_hat_heads[dk_at(r, col)] = value + local;
            }
        }
    }
}

// Σ over the workgroup of each invocation's `value`.
fn workgroup_sum(value: f32, tid: u32) -> f32 {
    partial[tid] = value;
    workgroupBarrier();
    for (var half = MM_THREADS / 2u; half > 0u; half = half / 2u) {
        if (tid < half) {
            partial[tid] = partial[tid] + partial[tid + half];
        }
        workgroupBarrier();
    }
    let total = partial[0];
    workgroupBarrier();
    return total;
}

// The per-token sums below run over TOKEN_LANES invocations per token: token tid / TOKEN_LANES
// takes the elements ≡ tid (mod TOKEN_LANES), so that every invocation works and neighbouring
// invocations read neighbouring elements; token_sum adds up a token's lanes.
const TOKEN_LANES: u32 = MM_THREADS / CMAX;

fn token_sum(value: f32, tid: u32) -> f32 {
    partial[tid] = value;
    workgroupBarrier();
    let first = tid - tid % TOKEN_LANES;
    var total = 0.0;
    for (var lane = 0u; lane < TOKEN_LANES; lane = lane + 1u) {
        total = total + partial[first + lane];
    }
    workgroupBarrier();
    return total;
}

@compute @workgroup_size(MM_THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job >= chunk_slots() * layer.nv) {
        return;
    }
    chunk_begin(job / layer.nv, job % layer.nv, tid);
    let c = chunk_size();
    let len = ck_len;

    mm(OP_DQ_DW, 2u * c, DK, DV, tid);
    mm(OP_DQK, c, c, DV, tid);
    mm(OP_DKS, c, DK, DV, tid);
    storageBarrier();
    let token = tid / TOKEN_LANES;
    let lane = tid % TOKEN_LANES;
    let mine = token < len && lane == 0u;
    var qd = 0.0;
    var kd = 0.0;
    if (token < len) {
        for (var i = lane; i < DK; i = i + TOKEN_LANES) {
            qd = qd + chunk_q(token, i) * dqk_hat_heads[dq_at(token, i)];
            kd = kd + chunk_k(token, i) * chunk_work[bwd_dks(token, i)];
        }
    }
    qd = token_sum(qd, tid);
    kd = token_sum(kd, tid);
    if (mine) {
        q_dq[token] = qd;
        k_dks[token] = kd;
    }
    mm(OP_DT, c, c, DK + DV, tid);
    mm(OP_DX_DY, c, DK + DV, c, tid);
    storageBarrier();
    var kx = 0.0;
    var dbeta_uv = 0.0;
    var dbeta_v = 0.0;
    if (token < len) {
        for (var i = lane; i < DK; i = i + TOKEN_LANES) {
            kx = kx + chunk_k(token, i) * chunk_work[bwd_dx1(token, i)];
        }
        for (var j = lane; j < DV; j = j + TOKEN_LANES) {
            let dyj = chunk_work[bwd_dy(token, j)];
            dbeta_uv = dbeta_uv + dyj * chunk_work[fwd_u(token, j)];
            dbeta_v = dbeta_v + dyj * chunk_v(token, j);
        }
    }
    kx = token_sum(kx, tid);
    dbeta_uv = token_sum(dbeta_uv, tid);
    dbeta_v = token_sum(dbeta_v, tid);
    if (mine) {
        k_dx1[token] = kx;
    }
    mm(OP_Z, c, c, c, tid);
    storageBarrier();
    mm(OP_DA, c, c, c, tid);
    storageBarrier();
    mm(OP_DQ_K, c, DK, c, tid);
    mm(OP_DK, c, DK, 3u * c, tid);

    // ⟨dS_L, S₀⟩ over the whole state.
    var fs = 0.0;
    for (var e = tid; e < DK * DV; e = e + MM_THREADS) {
        let at = chunk_state_at(ck_slot) + e;
        fs = fs + dckpt[at] * ckpt[at];
    }
    let state_term = chunk_decay() * workgroup_sum(fs, tid);

    // The pair terms of token t: (R + E) over the row below the diagonal and the column above it.
    let t = token;
    var below = 0.0;
    var dam_kk = 0.0;
    var above = 0.0;
    if (t < len) {
        for (var s = lane; s < t; s = s + TOKEN_LANES) {
            let dam = chunk_work[bwd_dam(t, s)];
            let kk = chunk_work[fwd_kk(t, s)];
            below = below + chunk_work[bwd_dqk(t, s)] * chunk_work[fwd_qk(t, s)] + ck_beta[t] * dam * kk;
            dam_kk = dam_kk + dam * kk;
        }
        for (var u = t + 1u + lane; u < len; u = u + TOKEN_LANES) {
            above = above + chunk_work[bwd_dqk(u, t)] * chunk_work[fwd_qk(u, t)]
                + ck_beta[u] * chunk_work[bwd_dam(u, t)] * chunk_work[fwd_kk(u, t)];
        }
    }
    below = token_sum(below, tid);
    dam_kk = token_sum(dam_kk, tid);
    above = token_sum(above, tid);
    if (mine) {
        var dg = q_dq[t] + ck_beta[t] * ck_d1[t] * k_dx1[t] + below - above;
        if (t + 1u < len) {
            dg = dg - k_dks[t];
        } else {
            dg = dg + state_term;
            for (var s = 0u; s + 1u < len; s = s + 1u) {
                dg = dg + k_dks[s];
            }
        }
        d_gamma[t] = dg;

        let beta = ck_beta[t];
        var dbeta = dbeta_uv / max(beta, 1e-30);
        if (beta < 7.8886e-31) {
            dbeta = dbeta_v + ck_d1[t] * k_dx1[t] + dam_kk;
        }
        let e = (ck_t0 + t) * layer.nv + ck_h;
        chunk_work[layer.gate_parts_base + layer.tokens * layer.nv + e] = dbeta;
    }
    workgroupBarrier();
    if (tid < len) {
        var dell = 0.0;
        for (var u = tid; u < len; u = u + 1u) {
            dell = dell + d_gamma[u];
        }
        chunk_work[layer.gate_parts_base + (ck_t0 + tid) * layer.nv + ck_h] = dell;
    }
}
