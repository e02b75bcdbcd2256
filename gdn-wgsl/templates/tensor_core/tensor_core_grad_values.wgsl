// The chunked family on tensor cores, backward step 3, parallel over (chunk, value head): the
// gradients of the WY form's values and of the chunk's square matrices, from dU (tensor_core_state_backward)
// and the forward's operands:
//   dY = Tᵀ dU;   dv = diag(β) dY;   dP = dO Uᵀ;   dA = strict_lower(−dY Uᵀ)
// (dA is the adjoint of the solve (I + A) U = Y − e₁ X¹ S₀, so dT never forms; dX¹ = −e₁ dY S₀ᵀ
// follows in tensor_core_grad_keys). Writes dv into the v channels of dy, dY in f16 (dy_half), and
// dQK = dP ⊙ M and H = diag(β) (dA ⊙ M⁻) in f16 (dqk_half, h_half, zero above the diagonal blocks),
// and into gate_terms per token: ⟨dY_t, U_t⟩ and ⟨dY_t, v_t⟩ (for dβ), the row and column sums of
// R + E (R = dP ⊙ P, E = dA ⊙ A, below the diagonal), Σ_s dA_ts (KK ⊙ M⁻)_ts (dβ's sum form), and the
// f16 scales. The scales of dY, dQK and H come from bounds (|dY| ≤ C max |dU|; |dP_ts|, |dA_ts| ≤
// dv max |·| max |U|), so that no pass waits for a maximum.
// Grid: folded, chunk slots · nv workgroups.

var<workgroup> stage: array<f32, OWNERS * BLOCK_ELEMENTS>;

fn grad_values(job: u32, tid: u32, subgroup: u32) {
    tensor_core_enter(subgroup);
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    load_record(tid);
    clear_sums(tid);
    let c = chunk_size();
    let nb = c / BLOCK;
    let values = head_rows() * DV;
    let square = head_rows() * CMAX;
    let scales = state_scales();
    var du_bound = 0.0;
    for (var cb = 0u; cb < DV / CB; cb = cb + 1u) {
        du_bound = max(du_bound, 2.0 / du_scale[scales + cb]);
    }
    let dy_scale = range_scale(f32(c) * du_bound);

    // dY = Tᵀ dU by groups of GV blocks, T read transposed (zero depth above its diagonal).
    let v_groups = groups_across(DV, GV);
    let units = nb * v_groups;
    for (var round = 0u; round < rounds(units); round = round + 1u) {
        let unit = owned(owner, round, units);
        let row = unit / v_groups;
        let col = (unit % v_groups) * GV;
        var acc: array<Acc, GV>;
        for (var sb = 0u; sb < nb; sb = sb + 1u) {
            let a = coopLoad<OperandA>(&t_half[square + sb * BLOCK * CMAX + row * BLOCK], CMAX);
            for (var g = 0u; g < GV; g = g + 1u) {
                let b = coopLoadT<OperandB>(&du_half[values + sb * BLOCK * DV + (col + g) * BLOCK], DV);
                acc[g] = coopMultiplyAdd(a, b, acc[g]);
            }
        }
        for (var g = 0u; g < GV; g = g + 1u) {
            let unscale = 1.0 / du_scale[scales + (col + g) * BLOCK / CB];
            coopStoreT(unscale * acc[g], &stage[owner * BLOCK_ELEMENTS], BLOCK);
            workgroupBarrier();
            var rows: array<u32, OWNERS>;
            var with_u: array<f32, OWNERS>;
            var with_v: array<f32, OWNERS>;
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let ou = owned(ow, round, units);
                rows[ow] = unit_line(ow, round, units, ou / v_groups);
                let t = (ou / v_groups) * BLOCK + tid / BLOCK;
                let jj = ((ou % v_groups) * GV + g) * BLOCK + tid % BLOCK;
                let grad = stage[ow * BLOCK_ELEMENTS + tid];
                dy_half[values + t * DV + jj] = f16(dy_scale * grad);
                with_u[ow] = grad * u_values[values + t * DV + jj];
                var v = 0.0;
                if (t < ck_len) {
                    dy[ck_v + t * layer.channels + jj] = rec_beta(t) * grad;
                    v = y[ck_v + t * layer.channels + jj];
                }
                with_v[ow] = grad * v;
            }
            workgroupBarrier();
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                stage[ow * BLOCK_ELEMENTS + tid] = with_u[ow];
            }
            gather_rows(TERM_DBETA_U, rows, tid);
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                stage[ow * BLOCK_ELEMENTS + tid] = with_v[ow];
            }
            gather_rows(TERM_DBETA_V, rows, tid);
        }
    }
    storageBarrier();
    workgroupBarrier();

    // dP = dO Uᵀ and −dA = dY Uᵀ on and below the diagonal, sharing the Uᵀ blocks.
    let beta_scale = rec_beta_scale();
    let do_scale_value = do_scale[ck_slot * layer.nv + ck_h];
    let dqk_scale = range_scale(f32(DV) * 4.0 / (do_scale_value * beta_scale));
    let h_scale = range_scale(f32(DV) * 4.0 / (dy_scale * beta_scale));
    let pairs = nb * (nb + 1u) / 2u;
    for (var round = 0u; round < rounds(pairs); round = round + 1u) {
        let pair = lower_pair(owned(owner, round, pairs));
        var dp = Acc();
        var minus_da = Acc();
        for (var kb = 0u; kb < DV / BLOCK; kb = kb + 1u) {
            let b = coopLoad<OperandB>(&u_half[values + pair.y * BLOCK * DV + kb * BLOCK], DV);
            let a0 = coopLoadT<OperandA>(&do_half[values + pair.x * BLOCK * DV + kb * BLOCK], DV);
            let a1 = coopLoadT<OperandA>(&dy_half[values + pair.x * BLOCK * DV + kb * BLOCK], DV);
            dp = coopMultiplyAdd(a0, b, dp);
            minus_da = coopMultiplyAdd(a1, b, minus_da);
        }
        coopStoreT((1.0 / (do_scale_value * beta_scale)) * dp, &stage[owner * BLOCK_ELEMENTS], BLOCK);
        workgroupBarrier();
        var rows: array<u32, OWNERS>;
        var columns: array<u32, OWNERS>;
        var dps: array<f32, OWNERS>;
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            let op = lower_pair(owned(ow, round, pairs));
            rows[ow] = unit_line(ow, round, pairs, op.x);
            columns[ow] = unit_line(ow, round, pairs, op.y);
            let at = square + (op.x * BLOCK + tid / BLOCK) * CMAX + op.y * BLOCK + tid % BLOCK;
            let value = stage[ow * BLOCK_ELEMENTS + tid];
            dps[ow] = value;
            dqk_half[at] = f16(dqk_scale * f32(m_half[at]) * value);
        }
        workgroupBarrier();
        coopStoreT((-1.0 / (dy_scale * beta_scale)) * minus_da, &stage[owner * BLOCK_ELEMENTS], BLOCK);
        workgroupBarrier();
        var pair_terms: array<f32, OWNERS>;
        var da_km: array<f32, OWNERS>;
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            let op = lower_pair(owned(ow, round, pairs));
            let t = op.x * BLOCK + tid / BLOCK;
            let s = op.y * BLOCK + tid % BLOCK;
            let at = square + t * CMAX + s;
            var da = 0.0;
            var r = 0.0;
            if (s < t) {
                da = stage[ow * BLOCK_ELEMENTS + tid];
                r = dps[ow] * f32(p_half[at]) / 16.0;
            }
            let km = f32(km_half[at]);
            h_half[at] = f16(h_scale * rec_beta(t) * da * f32(m_half[at]));
            pair_terms[ow] = r + da * rec_beta(t) * km;
            da_km[ow] = da * km;
        }
        workgroupBarrier();
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            stage[ow * BLOCK_ELEMENTS + tid] = pair_terms[ow];
        }
        gather_rows(TERM_RE_ROWS, rows, tid);
        gather_columns(TERM_RE_COLUMNS, columns, tid);
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            stage[ow * BLOCK_ELEMENTS + tid] = da_km[ow];
        }
        gather_rows(TERM_DA_KM, rows, tid);
    }
    for (var e = tid; e < c * CMAX; e = e + THREADS) {
        if ((e % CMAX) / BLOCK > (e / CMAX) / BLOCK) {
            dqk_half[square + e] = f16(0.0);
            h_half[square + e] = f16(0.0);
        }
    }
    let terms = gate_terms_at();
    for (var e = tid; e < SUMS * CMAX; e = e + THREADS) {
        gate_terms[terms + e] = token_sums[e];
    }
    if (tid == 0u) {
        gate_terms[terms + SUMS * CMAX] = dy_scale;
        gate_terms[terms + SUMS * CMAX + 1u] = dqk_scale;
        gate_terms[terms + SUMS * CMAX + 2u] = h_scale;
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        grad_values(job, tid, subgroup);
    }
}
