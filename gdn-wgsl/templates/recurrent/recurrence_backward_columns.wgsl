// The delta rule, backward, for batches of few heads (the plan's choice where
// recurrence_backward.wgsl's one workgroup per (sequence, value head) leaves most of the GPU idle):
// BPTT with checkpoints, serial in time and parallel over (sequence, value head, block of CB
// columns). Layout (gdn_wgsl::LaneLayout::recurrent_backward_columns): one column a column group
// of ROW_LANES = 32 consecutive lanes (one subgroup), lane rl holding rows rl + 32·i (i < RY; rows
// past DK, and columns past DV, hold zeros).
// Each lane keeps its rows of dS in registers, dS = dhT (or 0) first. Segments of ckpt_interval
// steps are walked last to first, in chunks of CHUNK = 4 steps from the segment's start (the last
// one padded with no-op steps: k̂ = q̂ = do = β = 0, g = 1). Each segment is first replayed from
// its checkpoint with the forward's r_t = v_t − g_t·S_{t−1}ᵀk̂_t (residuals.wgsl, written by
// recurrence_forward_chunks.wgsl), so with no sum, a chunk a round (the next two rounds' inputs in
// flight): S_t = g_t·S_{t−1} + k̂_t u_tᵀ, u_t = β_t·r_t; every lane writes its rows of the state
// entering each chunk into its own slots of the scratch, read back by itself only. With
// ckpt_interval = CHUNK the checkpoints are those states already: nothing is replayed, and one
// sweep covers the sequence, its next chunk's inputs in flight across checkpoints.
// Then the chunks are swept in reverse. Per step (token j of a chunk, dS entering it D_j):
//   A_j = D_j + q̂_j do_jᵀ;  du_j = A_jᵀk̂_j;  dkv = −β du;  dv = β du;  dβ = du·r;
//   dq̂ = S_j do = g S_{j−1} do + k̂ (u·do);  dk̂ = A u + g S_{j−1} dkv;
//   dS' = A + k̂ dkvᵀ;  dg = ⟨dS', S_{j−1}⟩;  D_{j−1} = g dS'.          Finally dh0 = dS.
// A chunk solves its four du together, so that one batch of sums over the lanes stands between a
// chunk and the next, not one a step: with P_3 = D_3 + q̂_3 do_3ᵀ, P_j = g_{j+1} P_{j+1} + q̂_j do_jᵀ
// (D_3 and the q̂ do terms carried down) and G(j, m) = g_{j+1}···g_m,
//   du_j = P_jᵀk̂_j − Σ_{m>j} G(j, m) β_m (k̂_j·k̂_m) du_m,
// so the chunk's P_jᵀk̂_j are summed over the rows (chunk_row_sum; the key products k̂_j·k̂_m come
// from qk_norm_gates_forward), a 4 × 4 triangular solve gives du in every lane, and the steps then
// run in the
// lane with no sum, S_{j−1} rebuilt from the chunk's saved state. dq̂ and dk̂ (sums over columns),
// dℓ = dg·g and dβ (over the whole state) span the head's column blocks: the groups' shares of a
// chunk are summed through workgroup memory (two barriers a chunk) and written as the block's
// partial, layer.hat_parts rows per (token, value head) in dqk_hat_heads and layer.gate_parts
// values in gate_grad_parts, which qk_norm_backward adds up. dv goes straight
// into the v channels of dy. do is read from d_o, which norm_backward wrote (the gated RMSNorm's
// backward inside this kernel was slower than the two dispatches: BENCHMARKS.md, History: the
// norm's backward inside the column backward).
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

// The groups' (dq̂, dk̂) rows and (dℓ, dβ) of a chunk's steps: [CHUNK][GROUPS][DK] and
// [CHUNK][GROUPS].
var<workgroup> hat_shares: array<vec2<f32>, CHUNK * GROUPS * DK>;
var<workgroup> gate_shares: array<vec2<f32>, CHUNK * GROUPS>;

// Where chunk `chunk` of the replayed segment has its entering state in the scratch for column
// group `unit`: the column of the state, [DK].
fn scratch_chunk(unit: u32, chunk: u32) -> u32 {
    return (unit * ((layer.ckpt_interval + CHUNK - 1u) / CHUNK) + chunk) * DK;
}

// Four steps from token tc, their tokens the components of a vec4 (steps from t1 on no-ops: g = 1,
// β = r = 0, k̂ = 0): the gates, the group's column of r (zero past DV) and this lane's rows of k̂
// (zero past DK), what both the replay and the reverse sweep read.
struct ChunkSteps {
    g: vec4<f32>,
    beta: vec4<f32>,
    r: vec4<f32>,
    k: array<vec4<f32>, RY>,
}

fn chunk_steps(tc: u32, t1: u32, h: u32, key: u32, rl: u32, col: u32, columns: bool) -> ChunkSteps {
    var x: ChunkSteps;
    let steps = vec4<u32>(tc) + vec4<u32>(0u, 1u, 2u, 3u);
    let live = steps < vec4<u32>(t1);
    let at = min(steps, vec4<u32>(t1 - 1u));
    let e = at * layer.nv + vec4<u32>(h);
    let log_g = vec4<f32>(gate_log_decay(e.x), gate_log_decay(e.y), gate_log_decay(e.z), gate_log_decay(e.w));
    x.g = select(vec4<f32>(1.0), exp(log_g), live);
    x.beta = select(vec4<f32>(0.0), vec4<f32>(gate_beta(e.x), gate_beta(e.y), gate_beta(e.z), gate_beta(e.w)), live);
    let r_at = vec4<u32>(residual_at(at.x, h), residual_at(at.y, h), residual_at(at.z, h), residual_at(at.w, h)) + vec4<u32>(col);
    x.r = select(vec4<f32>(0.0), vec4<f32>(ckpt[r_at.x], ckpt[r_at.y], ckpt[r_at.z], ckpt[r_at.w]), live & vec4<bool>(columns));
    for (var i = 0u; i < RY; i = i + 1u) {
        x.k[i] = hat_rows(1u, at, key, rl + ROW_LANES * i, live);
    }
    return x;
}

// This lane's rows of dhT (zeros past DK, past DV, or without dhT).
fn load_dht(at: u32, rl: u32, col: u32, columns: bool) -> array<f32, RY> {
    var s: array<f32, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        if (layer.has_dht != 0u && columns && row < DK) {
            s[i] = dht[at + row * DV + col];
        }
    }
    return s;
}

// This lane's rows of a stored state at `at` (zeros past DK and past DV). The plan keeps the
// checkpoints by column, [DV, DK], wherever this kernel runs (layer.ckpt_columns): a warp's column
// is contiguous.
fn load_checkpoint(at: u32, rl: u32, col: u32, columns: bool) -> array<f32, RY> {
    var s: array<f32, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        if (columns && row < DK) {
            s[i] = ckpt[at + col * DK + row];
        }
    }
    return s;
}


// A chunk's inputs for the reverse sweep, none of them depending on dS: its steps, what gives the
// group's column of do (zero past DV and past t1), the lane's rows of q̂ (zero past DK)
// and of the saved state entering the chunk, and its steps' products k̂_j·k̂_{j−1}, k̂_j·k̂_{j−2},
// k̂_j·k̂_{j−3} (p1, p2, p3; step j in component j).
struct ReverseChunk {
    steps: ChunkSteps,
    d_out: vec4<f32>,
    q: array<vec4<f32>, RY>,
    start: array<f32, RY>,
    p1: vec4<f32>,
    p2: vec4<f32>,
    p3: vec4<f32>,
}

// The state entering the chunk comes from the scratch, or, with a checkpoint every chunk, from
// the checkpoints from `checkpoints` on (t0 then the sequence's start).
fn reverse_chunk(unit: u32, tc: u32, t0: u32, t1: u32, h: u32, key: u32, tid: u32, col: u32, columns: bool, checkpoints: u32) -> ReverseChunk {
    let rl = tid % ROW_LANES;
    var x: ReverseChunk;
    x.steps = chunk_steps(tc, t1, h, key, rl, col, columns);
    let steps = vec4<u32>(tc) + vec4<u32>(0u, 1u, 2u, 3u);
    let live = steps < vec4<u32>(t1);
    let at = min(steps, vec4<u32>(t1 - 1u));
    let o_at = (at * layer.nv + vec4<u32>(h)) * DV + vec4<u32>(col);
    let d_out = vec4<f32>(d_o[o_at.x], d_o[o_at.y], d_o[o_at.z], d_o[o_at.w]);
    x.d_out = select(vec4<f32>(0.0), d_out, live & vec4<bool>(columns));
    let p = vec4<u32>(key_products_at(at.x, key), key_products_at(at.y, key), key_products_at(at.z, key), key_products_at(at.w, key));
    x.p1 = vec4<f32>(qk_hat[p.x], qk_hat[p.y], qk_hat[p.z], qk_hat[p.w]);
    x.p2 = vec4<f32>(qk_hat[p.x + 1u], qk_hat[p.y + 1u], qk_hat[p.z + 1u], qk_hat[p.w + 1u]);
    x.p3 = vec4<f32>(qk_hat[p.x + 2u], qk_hat[p.y + 2u], qk_hat[p.z + 2u], qk_hat[p.w + 2u]);
    // Both places are read and one kept, the other at its buffer's element 0 (one cached word for
    // every lane): a branch between them kept this chunk's loads from being in flight while the
    // chunk before it ran (BENCHMARKS.md, S4 recurrent backward).
    let every_chunk = layer.ckpt_interval == CHUNK;
    let saved = scratch_chunk(unit, (tc - t0) / CHUNK);
    let checkpoint = checkpoints + ((tc - t0) / CHUNK) * layer.nv * DK * DV + col * DK;
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        x.q[i] = hat_rows(0u, at, key, row, live);
        let row_at = min(row, DK - 1u);
        let in_scratch = scratch[select(saved + row_at, 0u, every_chunk)];
        let in_checkpoint = ckpt[select(0u, checkpoint + row_at, every_chunk)];
        x.start[i] = select(0.0, select(in_scratch, in_checkpoint, every_chunk), row < DK && columns);
    }
    return x;
}

// A chunk's (dg, g, dβ) from tc, this lane's rows' shares of dg not yet summed over the rows: summed
// with the next chunk's sums over the rows (two independent chains of shuffles where one waited on
// the other), shared after its barrier. tc = t1 for none.
struct ChunkGates {
    dg: vec4<f32>,
    g: vec4<f32>,
    dbeta: vec4<f32>,
    tc: u32,
}

// Sums a chunk's dg over the group's rows (uniform control flow: every lane calls); lane 8j writes
// the group's (dℓ, dβ) of step j.
fn share_gates(c: ChunkGates, tid: u32) {
    let dg_j = token_scatter_sum(tid, c.dg);
    let rl = tid % ROW_LANES;
    let j = rl / 8u;
    if (rl % 8u == 0u) {
        gate_shares[j * GROUPS + tid / ROW_LANES] = vec2<f32>(dg_j * component(c.g, j), component(c.dbeta, j));
    }
}

// A chunk's block partials, summed from the groups' shares between a chunk's two barriers and
// stored after the second: a store just before a barrier held every warp there until it completed
// (BENCHMARKS.md, S4 recurrent backward: storing them after the barrier made the kernel faster).
// Invocation tid's (dq̂, dk̂) rows (items tid + THREADS·n of the chunk's CHUNK · DK), and, for tid
// < CHUNK, step tid's (dℓ, dβ) of the chunk from gates_tc (the chunk before in the sweep).
const PART_ITEMS: u32 = (CHUNK * DK + THREADS - 1u) / THREADS;

struct ChunkParts {
    hats: array<vec2<f32>, PART_ITEMS>,
    gates: vec2<f32>,
    gates_tc: u32,
}

// Sums the groups' shares (after the barrier that follows them). `gates_tc` = t1 for no gates.
fn chunk_parts(gates_tc: u32, tid: u32) -> ChunkParts {
    var x: ChunkParts;
    for (var n = 0u; n < PART_ITEMS; n = n + 1u) {
        let item = min(tid + n * THREADS, CHUNK * DK - 1u);
        let step = item / DK;
        let row = item % DK;
        for (var w = 0u; w < GROUPS; w = w + 1u) {
            x.hats[n] = x.hats[n] + hat_shares[(step * GROUPS + w) * DK + row];
        }
    }
    let j = min(tid, CHUNK - 1u);
    for (var w = 0u; w < GROUPS; w = w + 1u) {
        x.gates = x.gates + gate_shares[j * GROUPS + w];
    }
    x.gates_tc = gates_tc;
    return x;
}

// Stores the block's partials of the chunk from tc (its steps before t1; the gates' where their
// chunk's steps are).
fn store_parts(x: ChunkParts, tc: u32, t1: u32, h: u32, block: u32, tid: u32) {
    let parts = layer.tokens * layer.nv * layer.hat_parts * DK;
    for (var n = 0u; n < PART_ITEMS; n = n + 1u) {
        let item = tid + n * THREADS;
        let step = item / DK;
        if (item < CHUNK * DK && tc + step < t1) {
            let dq_at = (((tc + step) * layer.nv + h) * layer.hat_parts + block) * DK + item % DK;
            dqk_hat_heads[dq_at] = x.hats[n].x;
            dqk_hat_heads[dq_at + parts] = x.hats[n].y;
        }
    }
    if (tid < CHUNK && x.gates_tc + tid < t1) {
        let at = layer.gate_parts_base + ((x.gates_tc + tid) * layer.nv + h) * layer.gate_parts + block;
        gate_grad_parts[at] = x.gates.x;
        gate_grad_parts[at + layer.tokens * layer.nv * layer.gate_parts] = x.gates.y;
    }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let blocks = (DV + CB - 1u) / CB;
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nv * blocks) {
        return;
    }
    let block = job % blocks;
    let h = (job / blocks) % layer.nv;
    let n = job / (blocks * layer.nv);
    let key = h / layer.rep;
    let group = tid / ROW_LANES;
    let rl = tid % ROW_LANES;
    let unit = job * GROUPS + group;
    let columns = block * CB + group < DV;
    let col = min(block * CB + group, DV - 1u);
    let start = seq_start(n);
    let end = seq_end(n);
    let segments = (end - start + layer.ckpt_interval - 1u) / layer.ckpt_interval;
    let state_at = (n * layer.nv + h) * DK * DV;
    let v_at = 2u * layer.nk * DK + h * DV + col;

    // With a checkpoint every CHUNK steps, the forward saved the state entering every chunk: one
    // sweep over the sequence reads them, its next chunk's in flight across checkpoints, and
    // nothing is replayed.
    let every_chunk = layer.ckpt_interval == CHUNK;
    let span = select(layer.ckpt_interval, end - start, every_chunk);
    let sweeps = select(segments, min(segments, 1u), every_chunk);
    let checkpoints = (ckpt_first(n) * layer.nv + h) * DK * DV;
    var ds = load_dht(state_at, rl, col, columns);
    for (var done = 0u; done < sweeps; done = done + 1u) {
        let segment = sweeps - 1u - done;
        let t0 = start + segment * span;
        let t1 = min(t0 + span, end);

        // Replay (unless every chunk's state is saved): S_{t0} from the checkpoint, then the state
        // entering every chunk into the scratch, a chunk a round, the inputs of the next two rounds
        // in flight.
        if (!every_chunk) {
            var s = load_checkpoint(((ckpt_first(n) + segment) * layer.nv + h) * DK * DV, rl, col, columns);
            var next_round = chunk_steps(t0, t1, h, key, rl, col, columns);
            var after_next = chunk_steps(t0 + CHUNK, t1, h, key, rl, col, columns);
            for (var t = t0; t < t1; t = t + CHUNK) {
                let x = next_round;
                next_round = after_next;
                after_next = chunk_steps(t + 2u * CHUNK, t1, h, key, rl, col, columns);
                let at = scratch_chunk(unit, (t - t0) / CHUNK);
                let u = x.beta * x.r;
                for (var i = 0u; i < RY; i = i + 1u) {
                    let row = rl + ROW_LANES * i;
                    if (row < DK) {
                        scratch[at + row] = s[i];
                    }
                    let k = x.k[i];
                    var state = s[i] * x.g.x + k.x * u.x;
                    state = state * x.g.y + k.y * u.y;
                    state = state * x.g.z + k.z * u.z;
                    s[i] = state * x.g.w + k.w * u.w;
                }
            }
        }

        // Reverse sweep, a chunk at a time, the next chunk's inputs loaded while one computes
        // (the barrier keeps the segment after's first shares from the gate shares the segment
        // before still reads).
        let chunks = (t1 - t0 + CHUNK - 1u) / CHUNK;
        let last = t0 + (chunks - 1u) * CHUNK;
        var next = reverse_chunk(unit, last, t0, t1, h, key, tid, col, columns, checkpoints);
        var due = ChunkGates(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), t1);
        workgroupBarrier();
        for (var back = 0u; back < chunks; back = back + 1u) {
            let tc = t0 + (chunks - 1u - back) * CHUNK;
            let x = next;
            // The chunk before (the segment's first again after it, unused).
            let next_tc = t0 + (max(chunks - 1u - back, 1u) - 1u) * CHUNK;
            next = reverse_chunk(unit, next_tc, t0, t1, h, key, tid, col, columns, checkpoints);
            let d_out = x.d_out;
            let g = x.steps.g;
            let b = x.steps.beta;
            let r = x.steps.r;
            let u = b * r;

            // This lane's rows of P_jᵀk̂_j, then their sums and the solve for du (with the key
            // products k̂_j·k̂_m, m > j; those of no-op steps are multiplied by their β = 0).
            var pk = vec4<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                let k = x.steps.k[i];
                let q = x.q[i];
                var p = ds[i] + q.w * d_out.w;
                pk.w = pk.w + p * k.w;
                p = g.w * p + q.z * d_out.z;
                pk.z = pk.z + p * k.z;
                p = g.z * p + q.y * d_out.y;
                pk.y = pk.y + p * k.y;
                p = g.y * p + q.x * d_out.x;
                pk.x = pk.x + p * k.x;
            }
            let e = chunk_row_sum(tid, pk);
            share_gates(due, tid);
            let k01 = x.p1.y;
            let k12 = x.p1.z;
            let k23 = x.p1.w;
            let k02 = x.p2.z;
            let k13 = x.p2.w;
            let k03 = x.p3.w;
            let du3 = e.w;
            let du2 = e.z - g.w * b.w * k23 * du3;
            let du1 = e.y - g.z * b.z * k12 * du2 - g.z * g.w * b.w * k13 * du3;
            let du0 = e.x - g.y * b.y * k01 * du1 - g.y * g.z * b.z * k02 * du2 - g.y * g.z * g.w * b.w * k03 * du3;
            let du = vec4<f32>(du0, du1, du2, du3);
            let dkv = -b * du;
            let u_do = u * d_out;

            // The steps, last to first: dS, and this lane's rows' shares of dq̂, dk̂ and dg, with
            // S_{j−1} rebuilt forward from the chunk's saved state.
            var dg = vec4<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                let k = x.steps.k[i];
                let q = x.q[i];
                let s0 = x.start[i];
                let s1 = g.x * s0 + k.x * u.x;
                let s2 = g.y * s1 + k.y * u.y;
                let s3 = g.z * s2 + k.z * u.z;
                let row = rl + ROW_LANES * i;
                let live = row < DK;
                let share = group * DK + min(row, DK - 1u);
                var a = ds[i] + q.w * d_out.w;
                if (live) {
                    hat_shares[3u * GROUPS * DK + share] = vec2<f32>(g.w * s3 * d_out.w + k.w * u_do.w, a * u.w + g.w * s3 * dkv.w);
                }
                var pre = a + k.w * dkv.w;
                dg.w = dg.w + pre * s3;
                a = g.w * pre + q.z * d_out.z;
                if (live) {
                    hat_shares[2u * GROUPS * DK + share] = vec2<f32>(g.z * s2 * d_out.z + k.z * u_do.z, a * u.z + g.z * s2 * dkv.z);
                }
                pre = a + k.z * dkv.z;
                dg.z = dg.z + pre * s2;
                a = g.z * pre + q.y * d_out.y;
                if (live) {
                    hat_shares[GROUPS * DK + share] = vec2<f32>(g.y * s1 * d_out.y + k.y * u_do.y, a * u.y + g.y * s1 * dkv.y);
                }
                pre = a + k.y * dkv.y;
                dg.y = dg.y + pre * s1;
                a = g.y * pre + q.x * d_out.x;
                if (live) {
                    hat_shares[share] = vec2<f32>(g.x * s0 * d_out.x + k.x * u_do.x, a * u.x + g.x * s0 * dkv.x);
                }
                pre = a + k.x * dkv.x;
                dg.x = dg.x + pre * s0;
                ds[i] = g.x * pre;
            }
            // The chunk's dg shares are summed with the next chunk's sums; lanes j < 4 write step
            // j's dv after the barrier.
            let summed = due;
            due = ChunkGates(dg, g, du * r, tc);
            workgroupBarrier();
            if (rl < CHUNK && columns && tc + rl < t1) {
                dy[(tc + rl) * layer.channels + v_at] = component(b * du, rl);
            }

            // The block's partials of the chunk's steps (and the chunk before's gates), summed
            // before the barrier, stored after it.
            let chunk_sums = chunk_parts(summed.tc, tid);
            workgroupBarrier();
            store_parts(chunk_sums, tc, t1, h, block, tid);
        }
        share_gates(due, tid);
        workgroupBarrier();
        store_parts(chunk_parts(due.tc, tid), t1, t1, h, block, tid);
    }

    if (layer.has_h0 != 0u && columns) {
        for (var i = 0u; i < RY; i = i + 1u) {
            let row = rl + ROW_LANES * i;
            if (row < DK) {
                dh0[state_at + row * DV + col] = ds[i];
            }
        }
    }
}
