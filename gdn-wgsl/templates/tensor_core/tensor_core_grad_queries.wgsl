// The chunked family on tensor cores, backward step 4a, parallel over (chunk, value head): the query
// gradients dq̂ = dQ₀ + dQK K, dQ₀ = e₁ diag(d¹) dO S₀ᵀ (tensor_core_grad_rows.wgsl), per value head into
// dqk_hat_heads, and ⟨q̂_t, dQ₀_t⟩ into key_terms.
// Grid: folded, chunk slots · nv workgroups.

fn grad_queries(job: u32, tid: u32, subgroup: u32) {
    let ctx = grad_enter(job, tid, subgroup);
    for (var round = 0u; round < rounds(ctx.units); round = round + 1u) {
        let unit = owned(owner, round, ctx.units);
        let row = unit / ctx.k_groups;
        let col = (unit % ctx.k_groups) * GK;
        // dQ₀ = e₁ (σ_dO diag(d¹) dO)(σ_S S₀)ᵀ / (σ_dO σ_S), by column blocks of S₀.
        var dq: array<Acc, GK>;
        for (var cb = 0u; cb < DV / CB; cb = cb + 1u) {
            var part: array<Acc, GK>;
            for (var jb = 0u; jb < CB / BLOCK; jb = jb + 1u) {
                let j0 = cb * CB + jb * BLOCK;
                let a = coopLoadT<OperandA>(&do1_half[ctx.values + row * BLOCK * DV + j0], DV);
                for (var g = 0u; g < GK; g = g + 1u) {
                    let b = coopLoad<OperandB>(&s_half[ctx.state + (col + g) * BLOCK * DV + j0], DV);
                    part[g] = coopMultiplyAdd(a, b, part[g]);
                }
            }
            for (var g = 0u; g < GK; g = g + 1u) {
                dq[g] = dq[g] + (1.0 / s_scale[ctx.scales + cb]) * part[g];
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            dq[g] = (rec_e1() / ctx.do_scale) * dq[g];
            stage_block(dq[g]);
            gather_dots(SUM_Q_DQ, true, round, ctx.units, ctx.k_groups, g, tid);
        }
        // dq̂ = dQ₀ + (σ dQK) K / σ.
        var with_keys: array<Acc, GK>;
        for (var sb = 0u; sb < ctx.nb; sb = sb + 1u) {
            let a = coopLoadT<OperandA>(&dqk_half[ctx.square + row * BLOCK * CMAX + sb * BLOCK], CMAX);
            for (var g = 0u; g < GK; g = g + 1u) {
                let b = coopLoadT<OperandB>(&k_half[ctx.key + sb * BLOCK * DK + (col + g) * BLOCK], DK);
                with_keys[g] = coopMultiplyAdd(a, b, with_keys[g]);
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            stage_block(dq[g] + (1.0 / ctx.dqk_scale) * with_keys[g]);
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let t = element_row(ow, round, ctx.units, ctx.k_groups, tid);
                if (t < ck_len) {
                    dqk_hat_heads[dq_at(t, element_column(ow, round, ctx.units, ctx.k_groups, g, tid))] =
                        stage[ow * BLOCK_ELEMENTS + tid];
                }
            }
            workgroupBarrier();
        }
    }
    let at = key_terms_at();
    for (var e = tid; e < CMAX; e = e + THREADS) {
        key_terms[at + KEY_Q_DQ * CMAX + e] = token_sums[SUM_Q_DQ * CMAX + e];
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        grad_queries(job, tid, subgroup);
    }
}
