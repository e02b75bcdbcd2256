// The chunked family on tensor cores, forward step 3: the pass over chunks, serial in time and
// parallel over (sequence, value head, block of CB state columns). The block's state S (DK × CB,
// f32) stays in the owners' accumulators from chunk to chunk; per chunk, with e₁ = e^{γ_0} and
// G = e^{γ_{C−1}}:
//   keep S (tensor_core_state_blocks.wgsl's keep_states, states = ckpt: f32 in ckpt, σ_S S in f16 in
//   s_half with σ_S per block of columns in s_scale);
//   V = Y − e₁ X¹ S;   U = T V;
//   S ← G S + Kᵀ (diag(λ) U).
// (U = T (Y − e₁ X¹ S) = Ũ − e₁ W¹ S: tensor_core_prepare forms T only, and the pass multiplies by it.)
// Writes U in f32 (u_values) and as σ_β U (u_half) and σ_β diag(λ) U (lu_half) in f16, and hT.
// Grid: folded, seqs · nv · DV / CB workgroups.

// σ_β diag(λ) U of the chunk ([CMAX][CB]).
var<workgroup> lu_local: array<f16, CMAX * CB>;
// The products with T and the state update below write out those of CMAX / BLOCK blocks of tokens;
// a chunk's share of V and U is U_PER blocks per owner, at most.
const_assert CMAX == 4u * BLOCK;
const U_PER: u32 = (CMAX / BLOCK * (CB / BLOCK) + OWNERS - 1u) / OWNERS;
var<workgroup> stage: array<f32, OWNERS * BLOCK_ELEMENTS>;

fn carry_state(job: u32, tid: u32, subgroup: u32) {
    tensor_core_enter(subgroup);
    forget_max(0u, tid);
    // Rows past the chunk stay zero (the staging writes only the chunk's rows).
    for (var e = tid; e < CMAX * CB; e = e + THREADS) {
        lu_local[e] = f16(0.0);
    }
    let j = column_job(job);
    let c = chunk_size();
    let nb = c / BLOCK;
    var acc: array<Acc, STATE_PER>;
    if (layer.has_h0 != 0u) {
        let initial = (j.n * layer.nv + j.h) * DK * DV;
        for (var i = 0u; i < STATE_PER; i = i + 1u) {
            acc[i] = coopLoadT<Acc>(&h0[initial + state_block(state_owned(i))], DV);
        }
    }
    for (var chunk = 0u; chunk < j.chunks; chunk = chunk + 1u) {
        chunk_locate(j.first + chunk, j.n, j.h);
        load_record(tid);
        let state = state_rows() * DV;
        let state_scale = keep_states(acc, state, tid);

        // V = Y − e₁ X¹ S (σ_β V: y_half and x_half carry σ_β), a block per owner a round, into
        // lu_local in f16; then U = T V, T lower, its four blocks of depth written out as the state
        // update's are (lu_local's rows past the chunk are zero, T's block index clamped to the
        // chunk's last).
        let beta_scale = rec_beta_scale();
        let head = head_rows() * DK;
        let values = head_rows() * DV;
        let square = head_rows() * CMAX;
        let u_blocks = nb * (CB / BLOCK);
        let x_unscale = rec_e1() / state_scale;
        for (var round = 0u; round < rounds(u_blocks); round = round + 1u) {
            let b = owned(owner, round, u_blocks);
            coopStoreT(product_with_state(head, b / (CB / BLOCK), b % (CB / BLOCK)), &stage[owner * BLOCK_ELEMENTS], BLOCK);
            workgroupBarrier();
            for (var e = tid; e < OWNERS * BLOCK_ELEMENTS; e = e + THREADS) {
                let ob = owned(e / BLOCK_ELEMENTS, round, u_blocks);
                let t = (ob / (CB / BLOCK)) * BLOCK + (e % BLOCK_ELEMENTS) / BLOCK;
                let jj = (ob % (CB / BLOCK)) * BLOCK + e % BLOCK;
                let y = f32(y_half[values + t * DV + col0 + jj]);
                lu_local[t * CB + jj] = f16(y - x_unscale * stage[e]);
            }
            workgroupBarrier();
        }
        var u: array<Acc, U_PER>;
        for (var round = 0u; round < U_PER; round = round + 1u) {
            let b = owned(owner, round, u_blocks);
            let row = b / (CB / BLOCK);
            let col = b % (CB / BLOCK);
            let t_row = square + row * BLOCK * CMAX;
            let a0 = coopLoadT<OperandA>(&t_half[t_row], CMAX);
            let a1 = coopLoadT<OperandA>(&t_half[t_row + min(1u, nb - 1u) * BLOCK], CMAX);
            let a2 = coopLoadT<OperandA>(&t_half[t_row + min(2u, nb - 1u) * BLOCK], CMAX);
            let a3 = coopLoadT<OperandA>(&t_half[t_row + min(3u, nb - 1u) * BLOCK], CMAX);
            let b0 = coopLoadT<OperandB>(&lu_local[col * BLOCK], CB);
            let b1 = coopLoadT<OperandB>(&lu_local[BLOCK * CB + col * BLOCK], CB);
            let b2 = coopLoadT<OperandB>(&lu_local[2u * BLOCK * CB + col * BLOCK], CB);
            let b3 = coopLoadT<OperandB>(&lu_local[3u * BLOCK * CB + col * BLOCK], CB);
            var product = coopMultiplyAdd(a0, b0, Acc());
            product = coopMultiplyAdd(a1, b1, product);
            product = coopMultiplyAdd(a2, b2, product);
            product = coopMultiplyAdd(a3, b3, product);
            u[round] = (1.0 / beta_scale) * product;
            coopStoreT(u[round], &u_values[values + row * BLOCK * DV + col0 + col * BLOCK], DV);
        }
        // Every owner's products with T read lu_local before any owner overwrites it (in one round,
        // the staging's barrier below sees to it).
        if (U_PER > 1u) {
            workgroupBarrier();
        }
        for (var round = 0u; round < U_PER; round = round + 1u) {
            coopStoreT(u[round], &stage[owner * BLOCK_ELEMENTS], BLOCK);
            workgroupBarrier();
            for (var e = tid; e < OWNERS * BLOCK_ELEMENTS; e = e + THREADS) {
                let ob = owned(e / BLOCK_ELEMENTS, round, u_blocks);
                let t = (ob / (CB / BLOCK)) * BLOCK + (e % BLOCK_ELEMENTS) / BLOCK;
                let jj = (ob % (CB / BLOCK)) * BLOCK + e % BLOCK;
                let value = beta_scale * stage[e];
                u_half[values + t * DV + col0 + jj] = f16(value);
                let decayed = f16(rec_lam(t) * value);
                lu_half[values + t * DV + col0 + jj] = decayed;
                lu_local[t * CB + jj] = decayed;
            }
            workgroupBarrier();
        }

        // S ← G S + Kᵀ (σ_β diag(λ) U) / σ_β, each owned block's four products written out (CMAX
        // = 4 blocks of tokens) so that their eight loads are in flight together: the driver
        // pipelines no load across the iterations of a loop. Past the chunk, lu_local's rows are
        // zero and K's block index is clamped to the chunk's last, so those products add zero.
        // The owner's blocks are all in its column of blocks (state_owned): their B operands
        // are loaded once.
        let key = key_rows() * DK;
        let lu_col = (owner % (CB / BLOCK)) * BLOCK;
        let b0 = coopLoadT<OperandB>(&lu_local[lu_col], CB);
        let b1 = coopLoadT<OperandB>(&lu_local[BLOCK * CB + lu_col], CB);
        let b2 = coopLoadT<OperandB>(&lu_local[2u * BLOCK * CB + lu_col], CB);
        let b3 = coopLoadT<OperandB>(&lu_local[3u * BLOCK * CB + lu_col], CB);
        for (var i = 0u; i < STATE_PER; i = i + 1u) {
            let k_col = key + (state_owned(i) / (CB / BLOCK)) * BLOCK;
            let a0 = coopLoad<OperandA>(&k_half[k_col], DK);
            let a1 = coopLoad<OperandA>(&k_half[k_col + min(1u, nb - 1u) * BLOCK * DK], DK);
            let a2 = coopLoad<OperandA>(&k_half[k_col + min(2u, nb - 1u) * BLOCK * DK], DK);
            let a3 = coopLoad<OperandA>(&k_half[k_col + min(3u, nb - 1u) * BLOCK * DK], DK);
            var grown = (rec_decay() * beta_scale) * acc[i];
            grown = coopMultiplyAdd(a0, b0, grown);
            grown = coopMultiplyAdd(a1, b1, grown);
            grown = coopMultiplyAdd(a2, b2, grown);
            acc[i] = coopMultiplyAdd(a3, b3, grown);
        }
        for (var i = 0u; i < STATE_PER; i = i + 1u) {
            acc[i] = (1.0 / beta_scale) * acc[i];
        }
    }
    let last = (j.n * layer.nv + j.h) * DK * DV;
    for (var i = 0u; i < STATE_PER; i = i + 1u) {
        coopStoreT(acc[i], &ht[last + state_block(state_owned(i))], DV);
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < column_jobs()) {
        carry_state(job, tid, subgroup);
    }
}
