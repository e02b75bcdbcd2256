// The chunked family on tensor cores, forward step 3: the pass over chunks, serial in time and
// parallel over (sequence, value head, block of CB state columns). The block's state S (DK × CB,
// f32) stays in the owners' accumulators from chunk to chunk; per chunk, with e₁ = e^{γ_0} and
// G = e^{γ_{C−1}}:
//   store S (ckpt: the chunk-start states the outputs and the backward read);
//   U = Ũ − e₁ W¹ S  (S rounded to f16 with its own power of two, from its largest magnitude);
//   S ← G S + Kᵀ (diag(λ) U).
// Writes U in f32 (u_values) and as σ_β U (u_half) and σ_β diag(λ) U (lu_half) in f16, and hT.
// Grid: folded, seqs · nv · DV / CB workgroups.

// S of the block in f16 ([DK][CB]), and σ_β diag(λ) U of the chunk ([CMAX][CB]).
var<workgroup> state_local: array<f16, DK * CB>;
var<workgroup> lu_local: array<f16, CMAX * CB>;
var<workgroup> stage: array<f32, OWNERS * BLOCK_ELEMENTS>;

// The state's blocks: STATE_BLOCKS of them, each owner holding up to four (acc0 … acc3).
const STATE_BLOCKS: u32 = (DK / BLOCK) * (CB / BLOCK);

// Start of state block `b` in a [DK][DV] state whose first element is `base`.
fn state_block_at(base: u32, b: u32) -> u32 {
    return base + (b / (CB / BLOCK)) * BLOCK * DV + col0 + (b % (CB / BLOCK)) * BLOCK;
}

fn load_state(base: u32, i: u32) -> coop_mat16x16<f32, C> {
    if (layer.has_h0 == 0u) {
        return coop_mat16x16<f32, C>();
    }
    return coopLoadT<coop_mat16x16<f32, C>>(&h0[state_block_at(base, owned_block(owner, i, STATE_BLOCKS))], DV);
}

// acc ← G acc + Kᵀ (σ_β diag(λ) U) / σ_β for owned block `i`: the row block's keys, read transposed.
fn update_state(acc: coop_mat16x16<f32, C>, i: u32, decay: f32, beta_scale: f32) -> coop_mat16x16<f32, C> {
    let b = owned_block(owner, i, STATE_BLOCKS);
    let row = b / (CB / BLOCK);
    let col = b % (CB / BLOCK);
    let key = key_rows() * DK;
    var next = (decay * beta_scale) * acc;
    for (var tb = 0u; tb < chunk_size() / BLOCK; tb = tb + 1u) {
        let a = coopLoad<coop_mat16x16<f16, A>>(&k_half[key + tb * BLOCK * DK + row * BLOCK], DK);
        let bm = coopLoadT<coop_mat16x16<f16, B>>(&lu_local[tb * BLOCK * CB + col * BLOCK], CB);
        next = coopMultiplyAdd(a, bm, next);
    }
    return (1.0 / beta_scale) * next;
}

// The work of workgroup `job` (every workgroup of the grid but its overhang).
fn carry_state(job: u32, tid: u32, subgroup: u32) {
    coop_enter(subgroup);
    let j = column_job(job);
    let per_owner = rounds(STATE_BLOCKS);
    let initial = (j.n * layer.nv + j.h) * DK * DV;
    forget_max(0u, tid);
    var acc0 = load_state(initial, 0u);
    var acc1 = coop_mat16x16<f32, C>();
    var acc2 = coop_mat16x16<f32, C>();
    var acc3 = coop_mat16x16<f32, C>();
    if (per_owner > 1u) {
        acc1 = load_state(initial, 1u);
    }
    if (per_owner > 2u) {
        acc2 = load_state(initial, 2u);
    }
    if (per_owner > 3u) {
        acc3 = load_state(initial, 3u);
    }
    for (var chunk = 0u; chunk < j.chunks; chunk = chunk + 1u) {
        chunk_begin(j.first + chunk, j.h, tid);
        let c = chunk_size();
        let state = chunk_state_at(ck_slot);
        coopStoreT(acc0, &ckpt[state_block_at(state, owned_block(owner, 0u, STATE_BLOCKS))], DV);
        if (per_owner > 1u) {
            coopStoreT(acc1, &ckpt[state_block_at(state, owned_block(owner, 1u, STATE_BLOCKS))], DV);
        }
        if (per_owner > 2u) {
            coopStoreT(acc2, &ckpt[state_block_at(state, owned_block(owner, 2u, STATE_BLOCKS))], DV);
        }
        if (per_owner > 3u) {
            coopStoreT(acc3, &ckpt[state_block_at(state, owned_block(owner, 3u, STATE_BLOCKS))], DV);
        }
        storageBarrier();
        workgroupBarrier();

        // The stored block back, its largest magnitude, then the block in f16.
        var largest = 0.0;
        for (var e = tid; e < DK * CB; e = e + THREADS) {
            largest = max(largest, abs(ckpt[state + (e / CB) * DV + col0 + e % CB]));
        }
        publish_max(0u, largest);
        workgroupBarrier();
        let state_scale = range_scale(seen(0u));
        for (var e = tid; e < DK * CB; e = e + THREADS) {
            state_local[e] = f16(state_scale * ckpt[state + (e / CB) * DV + col0 + e % CB]);
        }
        workgroupBarrier();
        forget_max(0u, tid);

        // U = Ũ − e₁ W¹ S, by blocks of the chunk's rows × the block's columns.
        let beta_scale = range_scale(chunk_beta_bound());
        let head = head_rows() * DK;
        let values = head_rows() * DV;
        let u_blocks = (c / BLOCK) * (CB / BLOCK);
        let w_unscale = -chunk_first_decay() / (beta_scale * state_scale);
        for (var round = 0u; round < rounds(u_blocks); round = round + 1u) {
            let b = owned_block(owner, round, u_blocks);
            let row = b / (CB / BLOCK);
            let col = b % (CB / BLOCK);
            var acc = coop_mat16x16<f32, C>();
            for (var kb = 0u; kb < DK / BLOCK; kb = kb + 1u) {
                let a = coopLoadT<coop_mat16x16<f16, A>>(&w_half[head + row * BLOCK * DK + kb * BLOCK], DK);
                let bm = coopLoadT<coop_mat16x16<f16, B>>(&state_local[kb * BLOCK * CB + col * BLOCK], CB);
                acc = coopMultiplyAdd(a, bm, acc);
            }
            let at = values + row * BLOCK * DV + col0 + col * BLOCK;
            let u = coopLoadT<coop_mat16x16<f32, C>>(&u_tilde[at], DV) + w_unscale * acc;
            coopStoreT(u, &u_values[at], DV);
            coopStoreT(u, &stage[owner * BLOCK_ELEMENTS], BLOCK);
            workgroupBarrier();
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let ob = owned_block(ow, round, u_blocks);
                let t = (ob / (CB / BLOCK)) * BLOCK + tid / BLOCK;
                let jj = (ob % (CB / BLOCK)) * BLOCK + tid % BLOCK;
                let value = beta_scale * stage[ow * BLOCK_ELEMENTS + tid];
                u_half[values + t * DV + col0 + jj] = f16(value);
                let decayed = f16(ck_lam[t] * value);
                lu_half[values + t * DV + col0 + jj] = decayed;
                lu_local[t * CB + jj] = decayed;
            }
            workgroupBarrier();
        }

        // S ← G S + Kᵀ diag(λ) U.
        let decay = chunk_decay();
        acc0 = update_state(acc0, 0u, decay, beta_scale);
        if (per_owner > 1u) {
            acc1 = update_state(acc1, 1u, decay, beta_scale);
        }
        if (per_owner > 2u) {
            acc2 = update_state(acc2, 2u, decay, beta_scale);
        }
        if (per_owner > 3u) {
            acc3 = update_state(acc3, 3u, decay, beta_scale);
        }
        workgroupBarrier();
    }
    let last = (j.n * layer.nv + j.h) * DK * DV;
    coopStoreT(acc0, &ht[state_block_at(last, owned_block(owner, 0u, STATE_BLOCKS))], DV);
    if (per_owner > 1u) {
        coopStoreT(acc1, &ht[state_block_at(last, owned_block(owner, 1u, STATE_BLOCKS))], DV);
    }
    if (per_owner > 2u) {
        coopStoreT(acc2, &ht[state_block_at(last, owned_block(owner, 2u, STATE_BLOCKS))], DV);
    }
    if (per_owner > 3u) {
        coopStoreT(acc3, &ht[state_block_at(last, owned_block(owner, 3u, STATE_BLOCKS))], DV);
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
