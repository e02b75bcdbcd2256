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

// Groups of the lower pairs of blocks of `nb` block rows: row i has i / 2 + 1.
fn pair_groups(nb: u32) -> u32 {
    var n = 0u;
    for (var row = 0u; row < nb; row = row + 1u) {
        n = n + row / 2u + 1u;
    }
    return n;
}

// Group `u` of the lower pairs of blocks, in row order: its row and first column (two pairs side
// by side, or an odd row's last one).
fn pair_group(u: u32) -> vec2<u32> {
    var row = 0u;
    var first = 0u;
    while (first + row / 2u + 1u <= u) {
        first = first + row / 2u + 1u;
        row = row + 1u;
    }
    return vec2<u32>(row, 2u * (u - first));
}

// Keeps the K Kᵀ and 16 Q Kᵀ blocks of pair (row, column) in `solve`.
fn keep_pair(row: u32, column: u32, kk: Acc, qk: Acc) {
    coopStoreT(kk, &solve[row * BLOCK * CMAX + column * BLOCK], CMAX);
    let qk_row = select(column * BLOCK, CMAX, row == column);
    coopStore(qk, &solve[qk_row * CMAX + row * BLOCK], CMAX);
}

fn prepare_chunk(job: u32, tid: u32, subgroup: u32) {
    tensor_core_enter(subgroup);
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    load_record(tid);
    let c = chunk_size();
    let nb = c / BLOCK;
    let key = key_rows() * DK;
    let square = head_rows() * CMAX;

    // K Kᵀ and 16 Q Kᵀ of every lower pair of blocks: K Kᵀ in place in `solve`, 16 Q Kᵀ transposed,
    // in the block above the diagonal (a diagonal block's: in the rows past CMAX), so that solve[s][t]
    // holds 16 q_t·k_s for s < t. Pairs go by two of a row (pair_group), so that the two share the
    // loads of the row's K and Q blocks (an odd row's last pair is its group's second too, computed
    // and written twice with the same values); an owner past the last group skips the round (no
    // barrier in it).
    let groups = pair_groups(nb);
    for (var round = 0u; round < rounds(groups); round = round + 1u) {
        if (owner + OWNERS * round >= groups) {
            break;
        }
        let group = pair_group(owner + OWNERS * round);
        let row = key + group.x * BLOCK * DK;
        let first = key + group.y * BLOCK * DK;
        let column = min(group.y + 1u, group.x);
        let second = key + column * BLOCK * DK;
        var kk0 = Acc();
        var qk0 = Acc();
        var kk1 = Acc();
        var qk1 = Acc();
        for (var kb = 0u; kb < DK / BLOCK; kb = kb + 1u) {
            let ak = coopLoadT<OperandA>(&k_half[row + kb * BLOCK], DK);
            let aq = coopLoadT<OperandA>(&q_half[row + kb * BLOCK], DK);
            let b0 = coopLoad<OperandB>(&k_half[first + kb * BLOCK], DK);
            let b1 = coopLoad<OperandB>(&k_half[second + kb * BLOCK], DK);
            kk0 = coopMultiplyAdd(ak, b0, kk0);
            qk0 = coopMultiplyAdd(aq, b0, qk0);
            kk1 = coopMultiplyAdd(ak, b1, kk1);
            qk1 = coopMultiplyAdd(aq, b1, qk1);
        }
        keep_pair(group.x, group.y, kk0, qk0);
        keep_pair(group.x, column, kk1, qk1);
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
