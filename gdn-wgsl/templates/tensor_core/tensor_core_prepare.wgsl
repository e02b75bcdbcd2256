// The chunked family on tensor cores, forward step 2, parallel over (chunk, value head): everything
// of a chunk that does not depend on the state.
//   M (lower, diagonal included);   KK = K Kᵀ;   A = diag(β) (KK ⊙ M⁻);   T = (I + A)⁻¹ (solve.wgsl,
//   in f32);   P = (Q Kᵀ) ⊙ M.
// Writes, in f16 with rows of CMAX (zero above the diagonal and past the chunk): m_half = M,
// km_half = KK ⊙ M⁻, t_half = T and p_half = 16 P (q_half carries 16). W¹ = T X¹ and Ũ = T Y are
// not formed: the pass over chunks multiplies by T (U = T (Y − e₁ X¹ S)), and the backward forms
// W¹ (tensor_core_backward_pack). The steps are few and wide, since a chunk's work is a chain of
// them: both products of a block pair share their loads of K, and the element-wise step reads them
// from workgroup memory only.
// Grid: folded, chunk slots · nv workgroups.

fn prepare_chunk(job: u32, tid: u32, subgroup: u32) {
    tensor_core_enter(subgroup);
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    load_record(tid);
    let c = chunk_size();
    let nb = c / BLOCK;
    let key = key_rows() * DK;
    let square = head_rows() * CMAX;
    let pairs = nb * (nb + 1u) / 2u;

    // K Kᵀ and 16 Q Kᵀ of every lower pair of blocks: K Kᵀ in place in `solve`, 16 Q Kᵀ transposed,
    // in the block above the diagonal (a diagonal block's: in the rows past CMAX), so that solve[s][t]
    // holds 16 q_t·k_s for s < t.
    // An owner past the last pair skips the round (no barrier in it).
    for (var round = 0u; round < rounds(pairs); round = round + 1u) {
        if (owner + OWNERS * round >= pairs) {
            break;
        }
        let pair = lower_pair(owner + OWNERS * round);
        var kk = Acc();
        var qk = Acc();
        for (var kb = 0u; kb < DK / BLOCK; kb = kb + 1u) {
            let b = coopLoad<OperandB>(&k_half[key + pair.y * BLOCK * DK + kb * BLOCK], DK);
            let ak = coopLoadT<OperandA>(&k_half[key + pair.x * BLOCK * DK + kb * BLOCK], DK);
            let aq = coopLoadT<OperandA>(&q_half[key + pair.x * BLOCK * DK + kb * BLOCK], DK);
            kk = coopMultiplyAdd(ak, b, kk);
            qk = coopMultiplyAdd(aq, b, qk);
        }
        coopStoreT(kk, &solve[pair.x * BLOCK * CMAX + pair.y * BLOCK], CMAX);
        let qk_row = select(pair.y * BLOCK, CMAX, pair.x == pair.y);
        coopStore(qk, &solve[qk_row * CMAX + pair.x * BLOCK], CMAX);
    }
    workgroupBarrier();

    // M, KK ⊙ M⁻ and P of every element of the chunk's rows, zero above the diagonal, written in
    // row order so that each subgroup's stores are contiguous; A = diag(β) (KK ⊙ M⁻) (zero above
    // the diagonal and past the chunk) is held until every invocation has read `solve`, then written
    // over it. (Writing each transposed zero beside its element instead scattered half the stores,
    // and measured slower: BENCHMARKS.md.)
    const_assert CMAX * CMAX % THREADS == 0u;
    var a_of: array<f32, CMAX * CMAX / THREADS>;
    for (var i = 0u; i < CMAX * CMAX / THREADS; i = i + 1u) {
        let e = tid + i * THREADS;
        let t = e / CMAX;
        let s = e % CMAX;
        var a = 0.0;
        if (t < c) {
            var m = 0.0;
            var km = 0.0;
            var qk = 0.0;
            if (s <= t) {
                m = exp(span(s, t));
                qk = solve[select(s, CMAX + s % BLOCK, t / BLOCK == s / BLOCK) * CMAX + t];
                if (s < t) {
                    km = m * solve[e];
                }
            }
            m_half[square + e] = f16(m);
            km_half[square + e] = f16(km);
            p_half[square + e] = f16(m * qk);
            a = rec_beta(t) * km;
        }
        a_of[i] = a;
    }
    workgroupBarrier();
    for (var i = 0u; i < CMAX * CMAX / THREADS; i = i + 1u) {
        solve[tid + i * THREADS] = a_of[i];
    }
    workgroupBarrier();
    solve_inverse(tid);
    for (var e = tid; e < c * CMAX; e = e + THREADS) {
        t_half[square + e] = f16(solve[e]);
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
