// The chunked family on tensor cores, backward step 2: the reverse pass over chunks, serial in time
// and parallel over (sequence, value head, block of CB state columns), from dS = dhT (or 0). The
// block's dS (DK × CB, f32) stays in the owners' accumulators; for each chunk, last to first, with
// dS the gradient of the state leaving it:
//   keep dS (tensor_core_state_blocks.wgsl's keep_states, states = dckpt: f32 in dckpt, σ_dS dS in f16 in
//   ds_half with σ_dS per block of columns in ds_scale);
//   dU = Pᵀ dO + diag(λ) (K dS)   (Pᵀ dO from du_local): σ_dU dU in f16 (du_half, σ_dU per column
//   block in du_scale), σ_dU from the block's largest magnitude;
//   dS ← G dS + e₁ (Qᵀ diag(d¹) dO − W¹ᵀ dU).
// Writes dh0 (when h0 was given). A 64-token chunk's share of dU is at most 64 × 32: one staging round.
// Grid: folded, seqs · nv · DV / CB workgroups.

// σ_dU dU of the chunk ([CMAX][CB]).
var<workgroup> du_shared: array<f16, CMAX * CB>;
var<workgroup> stage: array<f32, OWNERS * BLOCK_ELEMENTS>;

fn carry_state_grad(job: u32, tid: u32, subgroup: u32) {
    tensor_core_enter(subgroup);
    forget_max(0u, tid);
    forget_max(1u, tid);
    let j = column_job(job);
    let c = chunk_size();
    let nb = c / BLOCK;
    var acc: array<Acc, STATE_PER>;
    if (layer.has_dht != 0u) {
        let last = (j.n * layer.nv + j.h) * DK * DV;
        for (var i = 0u; i < STATE_PER; i = i + 1u) {
            acc[i] = coopLoadT<Acc>(&dht[last + state_block(state_owned(i))], DV);
        }
    }
    for (var back = 0u; back < j.chunks; back = back + 1u) {
        let chunk = j.chunks - 1u - back;
        chunk_locate(j.first + chunk, j.n, j.h);
        load_record(tid);
        let state = state_rows() * DV;
        let ds_scale_value = keep_states(acc, state, tid);

        // dU = Pᵀ dO + diag(λ) K dS, one block per owner, the depth in two independent halves.
        let key = key_rows() * DK;
        let values = head_rows() * DV;
        let u_blocks = nb * (CB / BLOCK);
        let b = owned(owner, 0u, u_blocks);
        let row = b / (CB / BLOCK);
        let col = b % (CB / BLOCK);
        let product = product_with_state(key, row, col);
        coopStoreT((1.0 / ds_scale_value) * product, &stage[owner * BLOCK_ELEMENTS], BLOCK);
        workgroupBarrier();
        var du_values: array<f32, OWNERS>;
        var du_largest = 0.0;
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            let ob = owned(ow, 0u, u_blocks);
            let t = (ob / (CB / BLOCK)) * BLOCK + tid / BLOCK;
            let at = values + t * DV + col0 + (ob % (CB / BLOCK)) * BLOCK + tid % BLOCK;
            let value = du_local[at] + rec_lam(t) * stage[ow * BLOCK_ELEMENTS + tid];
            du_values[ow] = value;
            du_largest = max(du_largest, abs(value));
        }
        publish_max(1u, du_largest);
        workgroupBarrier();
        let du_scale_value = range_scale(seen(1u));
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            let ob = owned(ow, 0u, u_blocks);
            let t = (ob / (CB / BLOCK)) * BLOCK + tid / BLOCK;
            let jj = (ob % (CB / BLOCK)) * BLOCK + tid % BLOCK;
            let value = f16(du_scale_value * du_values[ow]);
            du_half[values + t * DV + col0 + jj] = value;
            du_shared[t * CB + jj] = value;
        }
        if (tid == 0u) {
            du_scale[state_scales() + col0 / CB] = du_scale_value;
        }
        workgroupBarrier();
        forget_max(1u, tid);

        // dS ← G dS + e₁ ((16 diag(d¹) Q)ᵀ (σ_dO dO) / (16 σ_dO) − (σ_β W¹)ᵀ (σ_dU dU) / (σ_β σ_dU))
        // (at the first chunk only dh0 needs it; computed there too, as cooperative operations
        // must run in uniform control flow).
        {
            let head = head_rows() * DK;
            let q_unscale = rec_e1() / (16.0 * do_scale[ck_slot * layer.nv + ck_h]);
            let w_unscale = -rec_e1() / (rec_beta_scale() * du_scale_value);
            for (var i = 0u; i < STATE_PER; i = i + 1u) {
                let sb = state_owned(i);
                let ri = (sb / (CB / BLOCK)) * BLOCK;
                let cj = (sb % (CB / BLOCK)) * BLOCK;
                var from_output = Acc();
                var from_u = Acc();
                for (var tb = 0u; tb < nb; tb = tb + 1u) {
                    let qa = coopLoad<OperandA>(&qd_half[head + tb * BLOCK * DK + ri], DK);
                    let ob = coopLoadT<OperandB>(&do_half[values + tb * BLOCK * DV + col0 + cj], DV);
                    from_output = coopMultiplyAdd(qa, ob, from_output);
                    let wa = coopLoad<OperandA>(&w_half[head + tb * BLOCK * DK + ri], DK);
                    let ub = coopLoadT<OperandB>(&du_shared[tb * BLOCK * CB + cj], CB);
                    from_u = coopMultiplyAdd(wa, ub, from_u);
                }
                acc[i] = rec_decay() * acc[i] + q_unscale * from_output + w_unscale * from_u;
            }
        }
    }
    if (layer.has_h0 != 0u) {
        let first = (j.n * layer.nv + j.h) * DK * DV;
        for (var i = 0u; i < STATE_PER; i = i + 1u) {
            coopStoreT(acc[i], &dh0[first + state_block(state_owned(i))], DV);
        }
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < column_jobs()) {
        carry_state_grad(job, tid, subgroup);
    }
}
