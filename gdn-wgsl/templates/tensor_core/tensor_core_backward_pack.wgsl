// The chunked family on tensor cores, backward step 1, parallel over (chunk, value head): the chunk's
// dO in f16 (rows past its valid tokens zero), twice — do_half = σ_dO dO and do1_half =
// σ_dO diag(d¹) dO, σ_dO = range_scale(max |dO|) in do_scale — and the part of dU that does not
// depend on the state gradient, in f32: du_local = Pᵀ dO (p_half carries 16); and W¹ = T X¹ for the
// reverse pass (w_half = σ_β W¹: x_half carries σ_β), which the forward does not form.
// Grid: folded, chunk slots · nv workgroups.

// W¹'s staging, GK blocks an owner.
var<workgroup> stage: array<f32, OWNERS * GK * BLOCK_ELEMENTS>;

fn pack_output_grads(job: u32, tid: u32, subgroup: u32) {
    tensor_core_enter(subgroup);
    forget_max(0u, tid);
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    load_record(tid);
    let c = chunk_size();
    let nb = c / BLOCK;
    var largest = 0.0;
    for (var e = tid; e < ck_len * DV; e = e + THREADS) {
        largest = max(largest, abs(d_o[chunk_o_at(e / DV, e % DV)]));
    }
    publish_max(0u, largest);
    workgroupBarrier();
    let do_scale_value = range_scale(seen(0u));
    let values = head_rows() * DV;
    for (var e = tid; e < c * DV; e = e + THREADS) {
        let t = e / DV;
        var g = 0.0;
        if (t < ck_len) {
            g = do_scale_value * d_o[chunk_o_at(t, e % DV)];
        }
        do_half[values + e] = f16(g);
        do1_half[values + e] = f16(rec_d1(t) * g);
    }
    if (tid == 0u) {
        do_scale[ck_slot * layer.nv + ck_h] = do_scale_value;
    }
    storageBarrier();
    workgroupBarrier();

    // Pᵀ dO by groups of GV blocks: Pᵀ read transposed from p_half; P is lower, so the depth before
    // a row's diagonal block adds zeros.
    let square = head_rows() * CMAX;
    let unscale = 1.0 / (16.0 * do_scale_value);
    let v_groups = groups_across(DV, GV);
    let units = nb * v_groups;
    for (var round = 0u; round < rounds(units); round = round + 1u) {
        let unit = owned(owner, round, units);
        let row = unit / v_groups;
        let col = (unit % v_groups) * GV;
        var acc: array<Acc, GV>;
        for (var tb = 0u; tb < nb; tb = tb + 1u) {
            let a = coopLoad<OperandA>(&p_half[square + tb * BLOCK * CMAX + row * BLOCK], CMAX);
            for (var g = 0u; g < GV; g = g + 1u) {
                let b = coopLoadT<OperandB>(&do_half[values + tb * BLOCK * DV + (col + g) * BLOCK], DV);
                acc[g] = coopMultiplyAdd(a, b, acc[g]);
            }
        }
        for (var g = 0u; g < GV; g = g + 1u) {
            coopStoreT(unscale * acc[g], &du_local[values + row * BLOCK * DV + (col + g) * BLOCK], DV);
        }
    }

    // W¹ = T X¹ by groups of GK blocks of a block row, staged and rounded to f16; T is lower, so a
    // row stops at its diagonal block.
    let head = head_rows() * DK;
    let k_groups = groups_across(DK, GK);
    let w_units = nb * k_groups;
    for (var round = 0u; round < rounds(w_units); round = round + 1u) {
        let unit = owned(owner, round, w_units);
        let row = unit / k_groups;
        let col = (unit % k_groups) * GK;
        var acc: array<Acc, GK>;
        for (var kb = 0u; kb <= row; kb = kb + 1u) {
            let a = coopLoadT<OperandA>(&t_half[square + row * BLOCK * CMAX + kb * BLOCK], CMAX);
            for (var g = 0u; g < GK; g = g + 1u) {
                let b = coopLoadT<OperandB>(&x_half[head + kb * BLOCK * DK + (col + g) * BLOCK], DK);
                acc[g] = coopMultiplyAdd(a, b, acc[g]);
            }
        }
        for (var g = 0u; g < GK; g = g + 1u) {
            coopStoreT(acc[g], &stage[(owner * GK + g) * BLOCK_ELEMENTS], BLOCK);
        }
        workgroupBarrier();
        for (var e = tid; e < OWNERS * GK * BLOCK_ELEMENTS; e = e + THREADS) {
            let ou = owned(e / (GK * BLOCK_ELEMENTS), round, w_units);
            let g = (e / BLOCK_ELEMENTS) % GK;
            let r = (ou / k_groups) * BLOCK + (e % BLOCK_ELEMENTS) / BLOCK;
            let i = ((ou % k_groups) * GK + g) * BLOCK + e % BLOCK;
            w_half[head + r * DK + i] = f16(stage[e]);
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        pack_output_grads(job, tid, subgroup);
    }
}
