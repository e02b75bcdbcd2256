// The chunked family on tensor cores, forward step 2, parallel over (chunk, value head): everything
// of a chunk that does not depend on the state.
//   KK = K Kᵀ (lower blocks);   A = diag(β) (KK ⊙ M⁻);   T = (I + A)⁻¹ (solve.wgsl, in f32);
//   W¹ = T X¹;   Ũ = T Y.
// Writes km_half = KK ⊙ M⁻ and t_half = T (rows of CMAX), w_half = σ_β W¹ (x_half carries σ_β), all f16, and
// Ũ in f32 (u_tilde). After the solve, `solve` is free and stages W¹ on its way to f16.
// Grid: folded, chunk slots · nv workgroups.

var<workgroup> t_local: array<f16, CMAX * CMAX>;

// The work of workgroup `job` (every workgroup of the grid but its overhang).
fn prepare_chunk(job: u32, tid: u32, subgroup: u32) {
    coop_enter(subgroup);
    chunk_begin(job / layer.nv, job % layer.nv, tid);
    coop_spans(tid);
    let c = chunk_size();
    let nb = c / BLOCK;
    let key = key_rows() * DK;

    // K Kᵀ, the blocks on and below the diagonal, into `solve`.
    let pairs = nb * (nb + 1u) / 2u;
    for (var round = 0u; round < rounds(pairs); round = round + 1u) {
        let pair = lower_pair(owned_block(owner, round, pairs));
        var acc = coop_mat16x16<f32, C>();
        for (var kb = 0u; kb < DK / BLOCK; kb = kb + 1u) {
            let a = coopLoadT<coop_mat16x16<f16, A>>(&k_half[key + pair.x * BLOCK * DK + kb * BLOCK], DK);
            let b = coopLoad<coop_mat16x16<f16, B>>(&k_half[key + pair.y * BLOCK * DK + kb * BLOCK], DK);
            acc = coopMultiplyAdd(a, b, acc);
        }
        coopStoreT(acc, &solve[pair.x * BLOCK * CMAX + pair.y * BLOCK], CMAX);
    }
    workgroupBarrier();

    // A over CMAX × CMAX, zero outside the chunk's strictly lower triangle; KK ⊙ M⁻ to km_half.
    let square = head_rows() * CMAX;
    for (var e = tid; e < CMAX * CMAX; e = e + THREADS) {
        let t = e / CMAX;
        let s = e % CMAX;
        var km = 0.0;
        if (s < t && t < c) {
            km = decay_lower(t, s) * solve[e];
        }
        if (t < c) {
            km_half[square + e] = f16(km);
        }
        solve[e] = ck_beta[t] * km;
    }
    workgroupBarrier();
    solve_inverse(tid);
    for (var e = tid; e < CMAX * CMAX; e = e + THREADS) {
        let value = f16(solve[e]);
        t_local[e] = value;
        if (e / CMAX < c) {
            t_half[square + e] = value;
        }
    }
    workgroupBarrier();

    // W¹ = T X¹ by row-major blocks, staged (solve is free now) and rounded to f16. T is lower, so a
    // block row bt needs depth blocks 0 … bt; a round runs as deep as its deepest block needs.
    let head = head_rows() * DK;
    let w_blocks = nb * (DK / BLOCK);
    for (var round = 0u; round < rounds(w_blocks); round = round + 1u) {
        let b = owned_block(owner, round, w_blocks);
        let row = b / (DK / BLOCK);
        let col = b % (DK / BLOCK);
        let depth = min(owned_block(OWNERS - 1u, round, w_blocks) / (DK / BLOCK), nb - 1u) + 1u;
        var acc = coop_mat16x16<f32, C>();
        for (var kb = 0u; kb < depth; kb = kb + 1u) {
            let a = coopLoadT<coop_mat16x16<f16, A>>(&t_local[row * BLOCK * CMAX + kb * BLOCK], CMAX);
            let bm = coopLoadT<coop_mat16x16<f16, B>>(&x_half[head + kb * BLOCK * DK + col * BLOCK], DK);
            acc = coopMultiplyAdd(a, bm, acc);
        }
        coopStoreT(acc, &solve[owner * BLOCK_ELEMENTS], BLOCK);
        workgroupBarrier();
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            let ob = owned_block(ow, round, w_blocks);
            let r = (ob / (DK / BLOCK)) * BLOCK + tid / BLOCK;
            let i = (ob % (DK / BLOCK)) * BLOCK + tid % BLOCK;
            w_half[head + r * DK + i] = f16(solve[ow * BLOCK_ELEMENTS + tid]);
        }
        workgroupBarrier();
    }

    // Ũ = T Y, unscaled in f32 and stored as it is.
    let values = head_rows() * DV;
    let unscale = 1.0 / range_scale(chunk_beta_bound());
    let u_blocks = nb * (DV / BLOCK);
    for (var round = 0u; round < rounds(u_blocks); round = round + 1u) {
        let b = owned_block(owner, round, u_blocks);
        let row = b / (DV / BLOCK);
        let col = b % (DV / BLOCK);
        let depth = min(owned_block(OWNERS - 1u, round, u_blocks) / (DV / BLOCK), nb - 1u) + 1u;
        var acc = coop_mat16x16<f32, C>();
        for (var kb = 0u; kb < depth; kb = kb + 1u) {
            let a = coopLoadT<coop_mat16x16<f16, A>>(&t_local[row * BLOCK * CMAX + kb * BLOCK], CMAX);
            let bm = coopLoadT<coop_mat16x16<f16, B>>(&y_half[values + kb * BLOCK * DV + col * BLOCK], DV);
            acc = coopMultiplyAdd(a, bm, acc);
        }
        coopStoreT(unscale * acc, &u_tilde[values + row * BLOCK * DV + col * BLOCK], DV);
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) subgroup: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        prepare_chunk(job, tid, subgroup);
    }
}
