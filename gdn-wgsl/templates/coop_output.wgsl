// The chunked family on tensor cores, forward step 4, parallel over (chunk, value head): the chunk's
// outputs from the state entering it (ckpt, from coop_state) and U (u_half):
//   P = (Q Kᵀ) ⊙ M (lower, diagonal included);   O = e₁ diag(d¹) Q S + P U.
// S is read in tiles of CO columns, each rounded to f16 with its own power of two. Writes P (as
// 16 P, p_half, for the backward) and o (before the norm) for the chunk's valid rows.
// Grid: folded, chunk slots · nv workgroups.

var<workgroup> p_local: array<f16, CMAX * CMAX>;
var<workgroup> state_local: array<f16, DK * CO>;
var<workgroup> stage: array<f32, OWNERS * BLOCK_ELEMENTS>;

// The work of workgroup `job` (every workgroup of the grid but its overhang).
fn output_chunk(job: u32, tid: u32, subgroup: u32) {
    coop_enter(subgroup);
    forget_max(0u, tid);
    chunk_begin(job / layer.nv, job % layer.nv, tid);
    coop_spans(tid);
    let c = chunk_size();
    let nb = c / BLOCK;
    let key = key_rows() * DK;
    for (var e = tid; e < CMAX * CMAX; e = e + THREADS) {
        p_local[e] = f16(0.0);
    }

    // P: Q Kᵀ on and below the diagonal (q_half carries ×16), masked by M, in f16.
    let pairs = nb * (nb + 1u) / 2u;
    for (var round = 0u; round < rounds(pairs); round = round + 1u) {
        let pair = lower_pair(owned_block(owner, round, pairs));
        var acc = coop_mat16x16<f32, C>();
        for (var kb = 0u; kb < DK / BLOCK; kb = kb + 1u) {
            let a = coopLoadT<coop_mat16x16<f16, A>>(&q_half[key + pair.x * BLOCK * DK + kb * BLOCK], DK);
            let b = coopLoad<coop_mat16x16<f16, B>>(&k_half[key + pair.y * BLOCK * DK + kb * BLOCK], DK);
            acc = coopMultiplyAdd(a, b, acc);
        }
        coopStoreT(acc, &stage[owner * BLOCK_ELEMENTS], BLOCK);
        workgroupBarrier();
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            let op = lower_pair(owned_block(ow, round, pairs));
            let t = op.x * BLOCK + tid / BLOCK;
            let s = op.y * BLOCK + tid % BLOCK;
            p_local[t * CMAX + s] = f16(decay_lower(t, s) * stage[ow * BLOCK_ELEMENTS + tid]);
        }
        workgroupBarrier();
    }
    let square = head_rows() * CMAX;
    for (var e = tid; e < c * CMAX; e = e + THREADS) {
        p_half[square + e] = p_local[e];
    }

    // O by tiles of CO columns: e₁ (16 diag(d¹) Q) (σ S) / (16 σ) + (16 P)(σ_β U) / (16 σ_β).
    let head = head_rows() * DK;
    let values = head_rows() * DV;
    let state = chunk_state_at(ck_slot);
    let u_unscale = 1.0 / (16.0 * range_scale(chunk_beta_bound()));
    let o_blocks = nb * (CO / BLOCK);
    for (var tile = 0u; tile < DV / CO; tile = tile + 1u) {
        let col0 = tile * CO;
        var largest = 0.0;
        for (var e = tid; e < DK * CO; e = e + THREADS) {
            largest = max(largest, abs(ckpt[state + (e / CO) * DV + col0 + e % CO]));
        }
        publish_max(0u, largest);
        workgroupBarrier();
        let state_scale = range_scale(seen(0u));
        for (var e = tid; e < DK * CO; e = e + THREADS) {
            state_local[e] = f16(state_scale * ckpt[state + (e / CO) * DV + col0 + e % CO]);
        }
        workgroupBarrier();
        forget_max(0u, tid);
        let s_unscale = chunk_first_decay() / (16.0 * state_scale);
        for (var round = 0u; round < rounds(o_blocks); round = round + 1u) {
            let b = owned_block(owner, round, o_blocks);
            let row = b / (CO / BLOCK);
            let col = b % (CO / BLOCK);
            var inter = coop_mat16x16<f32, C>();
            for (var kb = 0u; kb < DK / BLOCK; kb = kb + 1u) {
                let a = coopLoadT<coop_mat16x16<f16, A>>(&qd_half[head + row * BLOCK * DK + kb * BLOCK], DK);
                let bm = coopLoadT<coop_mat16x16<f16, B>>(&state_local[kb * BLOCK * CO + col * BLOCK], CO);
                inter = coopMultiplyAdd(a, bm, inter);
            }
            let depth = min(owned_block(OWNERS - 1u, round, o_blocks) / (CO / BLOCK), nb - 1u) + 1u;
            var intra = coop_mat16x16<f32, C>();
            for (var sb = 0u; sb < depth; sb = sb + 1u) {
                let a = coopLoadT<coop_mat16x16<f16, A>>(&p_local[row * BLOCK * CMAX + sb * BLOCK], CMAX);
                let bm = coopLoadT<coop_mat16x16<f16, B>>(&u_half[values + sb * BLOCK * DV + col0 + col * BLOCK], DV);
                intra = coopMultiplyAdd(a, bm, intra);
            }
            coopStoreT(s_unscale * inter + u_unscale * intra, &stage[owner * BLOCK_ELEMENTS], BLOCK);
            workgroupBarrier();
            for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
                let ob = owned_block(ow, round, o_blocks);
                let t = (ob / (CO / BLOCK)) * BLOCK + tid / BLOCK;
                let jj = col0 + (ob % (CO / BLOCK)) * BLOCK + tid % BLOCK;
                if (t < ck_len) {
                    o[chunk_o_at(t, jj)] = stage[ow * BLOCK_ELEMENTS + tid];
                }
            }
            workgroupBarrier();
        }
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        output_chunk(job, tid, subgroup);
    }
}
