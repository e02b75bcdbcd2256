// The chunked family on tensor cores, backward step 4, parallel over (chunk, value head): the query
// and key gradients of the chunk and its gate gradients, by groups of GK blocks of a block row:
//   dq̂ = dQ₀ + dQK K,   dQ₀ = e₁ diag(d¹) dO S₀ᵀ;
//   dk̂ = dK_S + diag(β d¹) dX¹ + dQKᵀ Q + H K + Hᵀ K,   dK_S = diag(λ) U dS_Lᵀ,   dX¹ = −e₁ dY S₀ᵀ,
// S₀ and dS_L (s_half, ds_half) scaled per block of CB state columns, so their products run by
// column block. The gate gradient follows the span rule (chunk_grad.wgsl states it) from the per-token
// dot products gathered here (⟨q̂, dQ₀⟩, ⟨k̂, dX¹⟩, ⟨k̂, dK_S⟩) and coop_grad_values' terms.
// Writes dq̂, dk̂ per value head (dqk_hat_heads) and dℓ, dβ (one part each) into gate_grad_parts.
// Grid: folded, chunk slots · nv workgroups.

var<workgroup> stage: array<f32, OWNERS * BLOCK_ELEMENTS>;

const SUM_Q_DQ: u32 = 0u;
const SUM_K_DX: u32 = 1u;
const SUM_K_DKS: u32 = 2u;
const SUM_D_GAMMA: u32 = 3u;

fn dq_at(t: u32, i: u32) -> u32 {
    return ((ck_t0 + t) * layer.nv + ck_h) * DK + i;
}

fn dk_at(t: u32, i: u32) -> u32 {
    return ((layer.tokens + ck_t0 + t) * layer.nv + ck_h) * DK + i;
}

// Stages acc[g] of every owner, then hands each invocation its element of owner ow's block: the
// token row t and key column i, in `units` units of k_groups groups per block row.
fn stage_block(acc: Acc) {
    coopStoreT(acc, &stage[owner * BLOCK_ELEMENTS], BLOCK);
    workgroupBarrier();
}

fn element_row(ow: u32, round: u32, units: u32, k_groups: u32, tid: u32) -> u32 {
    return (owned(ow, round, units) / k_groups) * BLOCK + tid / BLOCK;
}

fn element_column(ow: u32, round: u32, units: u32, k_groups: u32, g: u32, tid: u32) -> u32 {
    return ((owned(ow, round, units) % k_groups) * GK + g) * BLOCK + tid % BLOCK;
}

// Multiplies every owner's staged element by the chunk's k̂ (or q̂) there and gathers the rows into
// token_sums[which].
fn gather_dots(which: u32, with_queries: bool, round: u32, units: u32, k_groups: u32, g: u32, tid: u32) {
    let key = key_rows() * DK;
    var rows: array<u32, OWNERS>;
    for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
        rows[ow] = unit_line(ow, round, units, owned(ow, round, units) / k_groups);
        let at = key + element_row(ow, round, units, k_groups, tid) * DK
            + element_column(ow, round, units, k_groups, g, tid);
        var factor = f32(k_half[at]);
        if (with_queries) {
            factor = f32(q_half[at]) / 16.0;
        }
        stage[ow * BLOCK_ELEMENTS + tid] = factor * stage[ow * BLOCK_ELEMENTS + tid];
    }
    gather_rows(which, rows, tid);
}

fn grad_keys(job: u32, tid: u32, subgroup: u32) {
    coop_enter(subgroup);
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    load_record(tid);
    clear_sums(tid);
    let c = chunk_size();
    let nb = c / BLOCK;
    let key = key_rows() * DK;
    let values = head_rows() * DV;
    let square = head_rows() * CMAX;
    let state = state_rows() * DV;
    let scales = state_scales();
    let terms = gate_terms_at();
    let dy_scale = gate_terms[terms + SUMS * CMAX];
    let dqk_scale = gate_terms[terms + SUMS * CMAX + 1u];
    let h_scale = gate_terms[terms + SUMS * CMAX + 2u];
    let do_scale_value = do_scale[ck_slot * layer.nv + ck_h];
    let beta_scale = rec_beta_scale();
    let k_groups = groups_across(DK, GK);
    let units = nb * k_groups;
    for (var round = 0u; round < rounds(units); round = round + 1u) {
        let unit = owned(owner, round, units);
        let row = unit / k_groups;
        let col = (unit % k_groups) * GK;

        // dQ₀ = e₁ (σ_dO diag(d¹) dO)(σ_S S₀)ᵀ / (σ_dO σ_S), by column blocks of S₀.
        var dq: array<Acc, GK>;
        for (var cb = 0u; cb < DV / CB; cb = cb + 1u) {
            var part: array<Acc, GK>;
            for (var jb = 0u; jb < CB / BLOCK; jb = jb + 1u) {
                let j0 = cb * CB + jb * BLOCK;
                let a = coopLoadT<OperandA>(&do1_half[values + row * BLOCK * DV + j0], DV);
                for (var g = 0u; g < GK; g = g + 1u) {
                    let b = coopLoad<OperandB>(&s_half[state + (col + g) * BLOCK * DV + j0], DV);
                    part[g] = coopMultiplyAdd(a, b, part[g]);
                }
            }
            for (var g = 0u; g < GK; g = g + 1u) {
                dq[g] = dq[g] + (1.0 / s_scale[scales + cb]) * part[g];
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            dq[g] = (rec_e1() / do_scale_value) * dq[g];
            stage_block(dq[g]);
            gather_dots(SUM_Q_DQ, true, round, units, k_groups, g, tid);
        }
        // dq̂ = dQ₀ + (σ dQK) K / σ.
        var with_keys: array<Acc, GK>;
        for (var sb = 0u; sb < nb; sb = sb + 1u) {
            let a = coopLoadT<OperandA>(&dqk_half[square + row * BLOCK * CMAX + sb * BLOCK], CMAX);
            for (var g = 0u; g < GK; g = g + 1u) {
                let b = coopLoadT<OperandB>(&k_half[key + sb * BLOCK * DK + (col + g) * BLOCK], DK);
                with_keys[g] = coopMultiplyAdd(a, b, with_keys[g]);
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            stage_block(dq[g] + (1.0 / dqk_scale) * with_keys[g]);
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let t = element_row(ow, round, units, k_groups, tid);
                if (t < ck_len) {
                    dqk_hat_heads[dq_at(t, element_column(ow, round, units, k_groups, g, tid))] =
                        stage[ow * BLOCK_ELEMENTS + tid];
                }
            }
            workgroupBarrier();
        }

        // dK_S = (σ_β diag(λ) U)(σ_dS dS_L)ᵀ / (σ_β σ_dS), and dX¹ = −e₁ (σ_dY dY)(σ_S S₀)ᵀ / (σ_dY σ_S).
        var dk: array<Acc, GK>;
        var dx: array<Acc, GK>;
        for (var cb = 0u; cb < DV / CB; cb = cb + 1u) {
            var from_state: array<Acc, GK>;
            var from_values: array<Acc, GK>;
            for (var jb = 0u; jb < CB / BLOCK; jb = jb + 1u) {
                let j0 = cb * CB + jb * BLOCK;
                let lu = coopLoadT<OperandA>(&lu_half[values + row * BLOCK * DV + j0], DV);
                let dya = coopLoadT<OperandA>(&dy_half[values + row * BLOCK * DV + j0], DV);
                for (var g = 0u; g < GK; g = g + 1u) {
                    let ds = coopLoad<OperandB>(&ds_half[state + (col + g) * BLOCK * DV + j0], DV);
                    let s0 = coopLoad<OperandB>(&s_half[state + (col + g) * BLOCK * DV + j0], DV);
                    from_state[g] = coopMultiplyAdd(lu, ds, from_state[g]);
                    from_values[g] = coopMultiplyAdd(dya, s0, from_values[g]);
                }
            }
            for (var g = 0u; g < GK; g = g + 1u) {
                dk[g] = dk[g] + (1.0 / ds_scale[scales + cb]) * from_state[g];
                dx[g] = dx[g] + (1.0 / s_scale[scales + cb]) * from_values[g];
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            dk[g] = (1.0 / beta_scale) * dk[g];
            stage_block(dk[g]);
            gather_dots(SUM_K_DKS, false, round, units, k_groups, g, tid);
            // dX¹: ⟨k̂, dX¹⟩, then diag(β d¹) dX¹ back through the staging into dk̂.
            stage_block((-rec_e1() / dy_scale) * dx[g]);
            var scaled: array<f32, OWNERS>;
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let t = element_row(ow, round, units, k_groups, tid);
                scaled[ow] = rec_beta(t) * rec_d1(t) * stage[ow * BLOCK_ELEMENTS + tid];
            }
            gather_dots(SUM_K_DX, false, round, units, k_groups, g, tid);
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                stage[ow * BLOCK_ELEMENTS + tid] = scaled[ow];
            }
            workgroupBarrier();
            dk[g] = dk[g] + coopLoadT<Acc>(&stage[owner * BLOCK_ELEMENTS], BLOCK);
            workgroupBarrier();
        }
        // + dQKᵀ (16 Q) / (16 σ) + (σ H) K / σ + (σ H)ᵀ K / σ.
        var with_queries: array<Acc, GK>;
        var with_h: array<Acc, GK>;
        for (var sb = 0u; sb < nb; sb = sb + 1u) {
            let dqkt = coopLoad<OperandA>(&dqk_half[square + sb * BLOCK * CMAX + row * BLOCK], CMAX);
            let h = coopLoadT<OperandA>(&h_half[square + row * BLOCK * CMAX + sb * BLOCK], CMAX);
            let ht = coopLoad<OperandA>(&h_half[square + sb * BLOCK * CMAX + row * BLOCK], CMAX);
            for (var g = 0u; g < GK; g = g + 1u) {
                let q = coopLoadT<OperandB>(&q_half[key + sb * BLOCK * DK + (col + g) * BLOCK], DK);
                let k = coopLoadT<OperandB>(&k_half[key + sb * BLOCK * DK + (col + g) * BLOCK], DK);
                with_queries[g] = coopMultiplyAdd(dqkt, q, with_queries[g]);
                with_h[g] = coopMultiplyAdd(h, k, with_h[g]);
                with_h[g] = coopMultiplyAdd(ht, k, with_h[g]);
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            let total = dk[g] + (1.0 / (16.0 * dqk_scale)) * with_queries[g] + (1.0 / h_scale) * with_h[g];
            stage_block(total);
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let t = element_row(ow, round, units, k_groups, tid);
                if (t < ck_len) {
                    dqk_hat_heads[dk_at(t, element_column(ow, round, units, k_groups, g, tid))] =
                        stage[ow * BLOCK_ELEMENTS + tid];
                }
            }
            workgroupBarrier();
        }
    }

    // ⟨dS_L, S₀⟩ over the whole state.
    var fs = 0.0;
    for (var e = tid; e < DK * DV; e = e + THREADS) {
        fs = fs + dckpt[state + e] * ckpt[state + e];
    }
    stage[tid] = fs;
    workgroupBarrier();
    for (var half = THREADS / 2u; half > 0u; half = half / 2u) {
        if (tid < half) {
            stage[tid] = stage[tid] + stage[tid + half];
        }
        workgroupBarrier();
    }
    let state_term = rec_decay() * stage[0];

    // The gate gradients of the chunk's valid tokens: dγ by the span rule, dℓ its reverse cumsum.
    let len = ck_len;
    if (tid < len) {
        let t = tid;
        var dg = token_sums[SUM_Q_DQ * CMAX + t] + rec_beta(t) * rec_d1(t) * token_sums[SUM_K_DX * CMAX + t]
            + gate_terms[terms + TERM_RE_ROWS * CMAX + t] - gate_terms[terms + TERM_RE_COLUMNS * CMAX + t];
        if (t + 1u < len) {
            dg = dg - token_sums[SUM_K_DKS * CMAX + t];
        } else {
            dg = dg + state_term;
            for (var s = 0u; s + 1u < len; s = s + 1u) {
                dg = dg + token_sums[SUM_K_DKS * CMAX + s];
            }
        }
        token_sums[SUM_D_GAMMA * CMAX + t] = dg;
        let beta = rec_beta(t);
        var dbeta = gate_terms[terms + TERM_DBETA_U * CMAX + t] / max(beta, 1e-30);
        if (beta < 7.8886e-31) {
            dbeta = gate_terms[terms + TERM_DBETA_V * CMAX + t] + rec_d1(t) * token_sums[SUM_K_DX * CMAX + t]
                + gate_terms[terms + TERM_DA_KM * CMAX + t];
        }
        gate_grad_parts[layer.tokens * layer.nv + (ck_t0 + t) * layer.nv + ck_h] = dbeta;
    }
    workgroupBarrier();
    if (tid < len) {
        var dell = 0.0;
        for (var u = tid; u < len; u = u + 1u) {
            dell = dell + token_sums[SUM_D_GAMMA * CMAX + u];
        }
        gate_grad_parts[(ck_t0 + tid) * layer.nv + ck_h] = dell;
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        grad_keys(job, tid, subgroup);
    }
}
