// The chunked family on tensor cores, forward step 4, parallel over (chunk, value head): the chunk's
// outputs from its packed operands, the state entering it (s_half, from tensor_core_state) and U:
//   O = e₁ diag(d¹) Q S + P U
// by groups of GV blocks of a block row: (16 diag(d¹) Q)(σ_S S) / (16 σ_S) · e₁ + (16 P)(σ_β U) / (16 σ_β),
// σ_S per block of CB state columns. Writes o (before the norm) for the chunk's valid rows, through
// `stage`, GV blocks an owner.
// Grid: folded, chunk slots · nv workgroups.

var<workgroup> stage: array<f32, OWNERS * GV * BLOCK_ELEMENTS>;

fn output_chunk(job: u32, tid: u32, subgroup: u32) {
    tensor_core_enter(subgroup);
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    load_record(tid);
    let nb = chunk_size() / BLOCK;
    let head = head_rows() * DK;
    let values = head_rows() * DV;
    let square = head_rows() * CMAX;
    let state = state_rows() * DV;
    let v_groups = groups_across(DV, GV);
    // A unit is two block rows (the second clamped to the chunk's last) of a group of GV blocks,
    // so that each load of S or U serves both rows and each of Q or P serves the group.
    let units = (nb + 1u) / 2u * v_groups;
    for (var round = 0u; round < rounds(units); round = round + 1u) {
        let unit = owned(owner, round, units);
        let row0 = (unit / v_groups) * 2u;
        let row1 = min(row0 + 1u, nb - 1u);
        let col = (unit % v_groups) * GV;
        var inter0: array<Acc, GV>;
        var inter1: array<Acc, GV>;
        var intra0: array<Acc, GV>;
        var intra1: array<Acc, GV>;
        for (var kb = 0u; kb < DK / BLOCK; kb = kb + 1u) {
            let a0 = coopLoadT<OperandA>(&qd_half[head + row0 * BLOCK * DK + kb * BLOCK], DK);
            let a1 = coopLoadT<OperandA>(&qd_half[head + row1 * BLOCK * DK + kb * BLOCK], DK);
            for (var g = 0u; g < GV; g = g + 1u) {
                let b = coopLoadT<OperandB>(&s_half[state + kb * BLOCK * DV + (col + g) * BLOCK], DV);
                inter0[g] = coopMultiplyAdd(a0, b, inter0[g]);
                inter1[g] = coopMultiplyAdd(a1, b, inter1[g]);
            }
        }
        // P is zero above its diagonal blocks (row0's block at row1 included).
        for (var sb = 0u; sb <= row1; sb = sb + 1u) {
            let p0 = coopLoadT<OperandA>(&p_half[square + row0 * BLOCK * CMAX + sb * BLOCK], CMAX);
            let p1 = coopLoadT<OperandA>(&p_half[square + row1 * BLOCK * CMAX + sb * BLOCK], CMAX);
            for (var g = 0u; g < GV; g = g + 1u) {
                let b = coopLoadT<OperandB>(&u_half[values + sb * BLOCK * DV + (col + g) * BLOCK], DV);
                intra0[g] = coopMultiplyAdd(p0, b, intra0[g]);
                intra1[g] = coopMultiplyAdd(p1, b, intra1[g]);
            }
        }
        write_rows(unit, round, units, v_groups, 0u, inter0, intra0, tid);
        write_rows(unit, round, units, v_groups, 1u, inter1, intra1, tid);
    }
}

// Writes row `half` (0 or 1) of every owner's unit of this round, through `stage`: o = e₁ (QS) / (16 σ_S) + (PU) / (16 σ_β).
fn write_rows(unit: u32, round: u32, units: u32, v_groups: u32, half: u32, inter: array<Acc, GV>, intra: array<Acc, GV>, tid: u32) {
    let u_unscale = 1.0 / (16.0 * rec_beta_scale());
    let col = (unit % v_groups) * GV;
    for (var g = 0u; g < GV; g = g + 1u) {
        let s_unscale = rec_e1() / (16.0 * s_scale[state_scales() + (col + g) * BLOCK / CB]);
        coopStoreT(s_unscale * inter[g] + u_unscale * intra[g], &stage[(owner * GV + g) * BLOCK_ELEMENTS], BLOCK);
    }
    workgroupBarrier();
    let nb = chunk_size() / BLOCK;
    for (var e = tid; e < OWNERS * GV * BLOCK_ELEMENTS; e = e + THREADS) {
        let ou = owned(e / (GV * BLOCK_ELEMENTS), round, units);
        let g = (e / BLOCK_ELEMENTS) % GV;
        let row = min((ou / v_groups) * 2u + half, nb - 1u);
        let t = row * BLOCK + (e % BLOCK_ELEMENTS) / BLOCK;
        let jj = ((ou % v_groups) * GV + g) * BLOCK + e % BLOCK;
        if (t < ck_len) {
            o[chunk_o_at(t, jj)] = stage[e];
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        output_chunk(job, tid, subgroup);
    }
}
