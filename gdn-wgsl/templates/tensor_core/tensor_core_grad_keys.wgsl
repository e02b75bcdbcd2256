// The chunked family on tensor cores, backward step 4b, parallel over (chunk, value head): the key
// gradients dk̂ = dK_S + diag(β d¹) dX¹ + dQKᵀ Q + H K + Hᵀ K, dK_S = diag(λ) U dS_Lᵀ,
// dX¹ = −e₁ dY S₀ᵀ (tensor_core_grad_rows.wgsl), per value head into dqk_hat_heads, and ⟨k̂_t, dX¹_t⟩,
// ⟨k̂_t, dK_S,t⟩ and G ⟨dS_L, S₀⟩ into key_terms.
// Grid: folded, chunk slots · nv workgroups.

fn grad_keys(job: u32, tid: u32, subgroup: u32) {
    let ctx = grad_enter(job, tid, subgroup);
    let beta_scale = rec_beta_scale();
    for (var round = 0u; round < rounds(ctx.units); round = round + 1u) {
        let unit = owned(owner, round, ctx.units);
        let row = unit / ctx.k_groups;
        let col = (unit % ctx.k_groups) * GK;
        // dK_S = (σ_β diag(λ) U)(σ_dS dS_L)ᵀ / (σ_β σ_dS), and dX¹ = −e₁ (σ_dY dY)(σ_S S₀)ᵀ / (σ_dY σ_S).
        var dk: array<Acc, GK>;
        var dx: array<Acc, GK>;
        for (var cb = 0u; cb < DV / CB; cb = cb + 1u) {
            var from_state: array<Acc, GK>;
            var from_values: array<Acc, GK>;
            for (var jb = 0u; jb < CB / BLOCK; jb = jb + 1u) {
                let j0 = cb * CB + jb * BLOCK;
                let lu = coopLoadT<OperandA>(&lu_half[ctx.values + row * BLOCK * DV + j0], DV);
                let dya = coopLoadT<OperandA>(&dy_half[ctx.values + row * BLOCK * DV + j0], DV);
                for (var g = 0u; g < GK; g = g + 1u) {
                    let ds = coopLoad<OperandB>(&ds_half[ctx.state + (col + g) * BLOCK * DV + j0], DV);
                    let s0 = coopLoad<OperandB>(&s_half[ctx.state + (col + g) * BLOCK * DV + j0], DV);
                    from_state[g] = coopMultiplyAdd(lu, ds, from_state[g]);
                    from_values[g] = coopMultiplyAdd(dya, s0, from_values[g]);
                }
            }
            for (var g = 0u; g < GK; g = g + 1u) {
                dk[g] = dk[g] + (1.0 / ds_scale[ctx.scales + cb]) * from_state[g];
                dx[g] = dx[g] + (1.0 / s_scale[ctx.scales + cb]) * from_values[g];
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            dk[g] = (1.0 / beta_scale) * dk[g];
            stage_block(dk[g]);
            gather_dots(SUM_K_DKS, false, round, ctx.units, ctx.k_groups, g, tid);
            // dX¹: ⟨k̂, dX¹⟩, then diag(β d¹) dX¹ back through the staging into dk̂.
            stage_block((-rec_e1() / ctx.dy_scale) * dx[g]);
            var scaled: array<f32, OWNERS>;
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let t = element_row(ow, round, ctx.units, ctx.k_groups, tid);
                scaled[ow] = rec_beta(t) * rec_d1(t) * stage[ow * BLOCK_ELEMENTS + tid];
            }
            gather_dots(SUM_K_DX, false, round, ctx.units, ctx.k_groups, g, tid);
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
        for (var sb = 0u; sb < ctx.nb; sb = sb + 1u) {
            let dqkt = coopLoad<OperandA>(&dqk_half[ctx.square + sb * BLOCK * CMAX + row * BLOCK], CMAX);
            let h = coopLoadT<OperandA>(&h_half[ctx.square + row * BLOCK * CMAX + sb * BLOCK], CMAX);
            let ht = coopLoad<OperandA>(&h_half[ctx.square + sb * BLOCK * CMAX + row * BLOCK], CMAX);
            for (var g = 0u; g < GK; g = g + 1u) {
                let q = coopLoadT<OperandB>(&q_half[ctx.key + sb * BLOCK * DK + (col + g) * BLOCK], DK);
                let k = coopLoadT<OperandB>(&k_half[ctx.key + sb * BLOCK * DK + (col + g) * BLOCK], DK);
                with_queries[g] = coopMultiplyAdd(dqkt, q, with_queries[g]);
                with_h[g] = coopMultiplyAdd(h, k, with_h[g]);
                with_h[g] = coopMultiplyAdd(ht, k, with_h[g]);
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            let total = dk[g] + (1.0 / (16.0 * ctx.dqk_scale)) * with_queries[g] + (1.0 / ctx.h_scale) * with_h[g];
            stage_block(total);
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let t = element_row(ow, round, ctx.units, ctx.k_groups, tid);
                if (t < ck_len) {
                    dqk_hat_heads[dk_at(t, element_column(ow, round, ctx.units, ctx.k_groups, g, tid))] =
                        stage[ow * BLOCK_ELEMENTS + tid];
                }
            }
            workgroupBarrier();
        }
    }

    // G ⟨dS_L, S₀⟩ over the whole state.
    var fs = 0.0;
    for (var e = tid; e < DK * DV; e = e + THREADS) {
        fs = fs + dckpt[ctx.state + e] * ckpt[ctx.state + e];
    }
    stage[tid] = fs;
    workgroupBarrier();
    for (var half = THREADS / 2u; half > 0u; half = half / 2u) {
        if (tid < half) {
            stage[tid] = stage[tid] + stage[tid + half];
        }
        workgroupBarrier();
    }
    let at = key_terms_at();
    for (var e = tid; e < CMAX; e = e + THREADS) {
        key_terms[at + KEY_K_DX * CMAX + e] = token_sums[SUM_K_DX * CMAX + e];
        key_terms[at + KEY_K_DKS * CMAX + e] = token_sums[SUM_K_DKS * CMAX + e];
    }
    if (tid == 0u) {
        key_terms[at + KEY_STATE] = rec_decay() * stage[0];
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
