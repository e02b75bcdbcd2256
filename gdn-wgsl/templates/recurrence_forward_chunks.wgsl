// The delta rule, forward, for batches of few heads (the plan's choice: where the per-token
// recurrence_forward.wgsl leaves most of the GPU idle), serial in time and parallel over
// (sequence, value head, column block):
//   S_t = g_t·S_{t−1} + k̂_t u_tᵀ,  u_t = β_t(v_t − g_t·S_{t−1}ᵀ k̂_t),  o_t = S_tᵀ q̂_t,
// solved CHUNK = 4 tokens at a time so that a chunk, not a token, waits on sums over the state's
// rows.
// With Γ_j the chunk's cumulative log decay to token j and S_0 the state before it,
//   u_j = β_j(v_j − e^{Γ_j}·S_0ᵀ k̂_j − Σ_{i<j} e^{Γ_j−Γ_i}(k̂_i·k̂_j)·u_i)
// (every decay a product of the g's between, ≤ 1): the chunk's S_0ᵀ k̂_j and k̂_i·k̂_j are summed
// over the rows together, the small triangular solve for u runs in every lane, then the chunk's
// steps update the state token by token with no sum between them, and its S_jᵀ q̂_j are summed
// together at the end.
// Layout (gdn_wgsl::LaneLayout::recurrent_forward_chunks): a workgroup owns CB columns, one a
// column group of ROW_LANES = 32 consecutive lanes (one subgroup), lane rl holding rows rl + 32·i
// (i < RY; rows past DK hold zeros), so that a lane's share of a chunk is small: with few heads each
// scheduler runs one or two warps and the latency of every instruction of a lane shows. The sums
// over the rows of a chunk's 16 values are chunk_scatter_sum / chunk_gather, those of its four
// outputs token_scatter_sum (subgroup shuffles in recurrence_forward_chunks; workgroup memory in
// recurrence_forward_chunks_portable); lane 8·j writes the output of token j.
// A chunk ends early at the end of the sequence, of the stage, or where a checkpoint is due;
// tokens past its end enter as no-ops (k̂ = v = β = 0, g = 1).
// Inputs go through workgroup memory a stage of STAGE tokens at a time, loaded from storage by
// all lanes while the stage before computes, so that a step waits on workgroup memory, never on a
// load from storage (the per-token form waits on them: about 0.6 µs a token at S4 on the H200).
// Writes o (before the norm), the state at the start of every checkpoint interval, hT, and (where
// the plan has a column-block backward) every token's r = v − g·S_{t−1}ᵀk̂.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

// The inputs of STAGE tokens of the workgroup's head and columns, token-major: q̂ and k̂
// [STAGE, DK], v [STAGE, CB], (g, β) [STAGE].
var<workgroup> staged_k: array<f32, STAGE * DK>;
var<workgroup> staged_q: array<f32, STAGE * DK>;
var<workgroup> staged_v: array<f32, STAGE * CB>;
var<workgroup> staged_gates: array<vec2<f32>, STAGE>;

// A lane's share of a stage, in registers between its loads and its stores.
const STAGE_QK: u32 = (STAGE * DK + THREADS - 1u) / THREADS;
const STAGE_V: u32 = (STAGE * CB + THREADS - 1u) / THREADS;
struct Stage {
    k: array<f32, STAGE_QK>,
    q: array<f32, STAGE_QK>,
    v: array<f32, STAGE_V>,
    gates: vec2<f32>,
}

// Lane tid's share of the stage of tokens [first, first + STAGE) of the sequence ending at `end`
// (tokens past it read zeros and g = 1), value head h, key head `key`, columns col0 … col0 + CB − 1.
fn load_stage(first: u32, end: u32, h: u32, key: u32, col0: u32, tid: u32) -> Stage {
    var x: Stage;
    let last = min(max(end, 1u), layer.tokens) - 1u;
    for (var j = 0u; j < STAGE_QK; j = j + 1u) {
        let e = min(tid + THREADS * j, STAGE * DK - 1u);
        let t = first + e / DK;
        let at = min(t, last);
        x.k[j] = select(0.0, qk_hat[hat_at(1u, at, key) + e % DK], t < end);
        x.q[j] = select(0.0, qk_hat[hat_at(0u, at, key) + e % DK], t < end);
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = min(tid + THREADS * j, STAGE * CB - 1u);
        let t = first + e / CB;
        let at = t * layer.channels + 2u * layer.nk * DK + h * DV + min(col0 + e % CB, DV - 1u);
        x.v[j] = select(0.0, y[min(at, layer.tokens * layer.channels - 1u)], t < end);
    }
    let t = first + tid % STAGE;
    let e = min(t, last) * layer.nv + h;
    x.gates = select(vec2<f32>(1.0, 0.0), vec2<f32>(exp(gate_log_decay(e)), gate_beta(e)), t < end);
    return x;
}

// Lane tid's share of a stage into workgroup memory.
fn store_stage(x: Stage, tid: u32) {
    for (var j = 0u; j < STAGE_QK; j = j + 1u) {
        let e = tid + THREADS * j;
        if (e < STAGE * DK) {
            staged_k[e] = x.k[j];
            staged_q[e] = x.q[j];
        }
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = tid + THREADS * j;
        if (e < STAGE * CB) {
            staged_v[e] = x.v[j];
        }
    }
    if (tid < STAGE) {
        staged_gates[tid] = x.gates;
    }
}

// A chunk's inputs for this lane's rows and column, its CHUNK = 4 tokens the components of a vec4
// (so that every index into a lane's arrays is a loop's over rows: arrays indexed otherwise leave
// the registers); tokens from `len` on are no-ops.
struct Chunk {
    // Rows rl + ROW_LANES·i of k̂ (of q̂) of the four tokens.
    k: array<vec4<f32>, RY>,
    q: array<vec4<f32>, RY>,
    // The four tokens' v (at this lane's column), g and β.
    v: vec4<f32>,
    g: vec4<f32>,
    beta: vec4<f32>,
}

// The chunk of `len` tokens from token `first` of the stage in workgroup memory.
fn load_chunk(first: u32, len: u32, rl: u32, group: u32) -> Chunk {
    var c: Chunk;
    let live = vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(len);
    let at = min(vec4<u32>(first) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(STAGE - 1u));
    let g0 = staged_gates[at.x];
    let g1 = staged_gates[at.y];
    let g2 = staged_gates[at.z];
    let g3 = staged_gates[at.w];
    c.g = select(vec4<f32>(1.0), vec4<f32>(g0.x, g1.x, g2.x, g3.x), live);
    c.beta = select(vec4<f32>(0.0), vec4<f32>(g0.y, g1.y, g2.y, g3.y), live);
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        let e = at * DK + vec4<u32>(min(row, DK - 1u));
        let rows = live & vec4<bool>(row < DK);
        c.k[i] = select(vec4<f32>(0.0), vec4<f32>(staged_k[e.x], staged_k[e.y], staged_k[e.z], staged_k[e.w]), rows);
        c.q[i] = select(vec4<f32>(0.0), vec4<f32>(staged_q[e.x], staged_q[e.y], staged_q[e.z], staged_q[e.w]), rows);
    }
    let v_at = at * CB + vec4<u32>(group);
    c.v = select(vec4<f32>(0.0), vec4<f32>(staged_v[v_at.x], staged_v[v_at.y], staged_v[v_at.z], staged_v[v_at.w]), live);
    return c;
}

// This lane's rows of a [DK, DV] state at `at` (its column `col`), or zeros.
fn load_state(at: u32, rl: u32, col: u32, from_h0: bool) -> array<f32, RY> {
    var s: array<f32, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        if (from_h0 && col < DV && row < DK) {
            s[i] = h0[at + row * DV + col];
        }
    }
    return s;
}

// This lane's rows of the state into a [DK, DV] state at `at`.
fn store_state(s: array<f32, RY>, at: u32, rl: u32, col: u32, into_ht: bool) {
    if (col >= DV) {
        return;
    }
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        let e = at + row * DV + col;
        if (row < DK) {
            if (into_ht) {
                ht[e] = s[i];
            } else {
                ckpt[e] = s[i];
            }
        }
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
    let h = (job / blocks) % layer.nv;
    let n = job / (blocks * layer.nv);
    let key = h / layer.rep;
    let rl = tid % ROW_LANES;
    let group = tid / ROW_LANES;
    let col0 = (job % blocks) * CB;
    let col = col0 + group;
    let columns = col < DV;
    let start = seq_start(n);
    let end = seq_end(n);
    let state_at = (n * layer.nv + h) * DK * DV;

    var s = load_state(state_at, rl, col, layer.has_h0 != 0u);
    var stage = load_stage(start, end, h, key, col0, tid);
    var slot = ckpt_first(n);
    var to_checkpoint = 0u;
    for (var first = start; first < end; first = first + STAGE) {
        workgroupBarrier();
        store_stage(stage, tid);
        workgroupBarrier();
        stage = load_stage(first + STAGE, end, h, key, col0, tid);
        let steps = min(STAGE, end - first);
        for (var j0 = 0u; j0 < steps; ) {
            if (to_checkpoint == 0u) {
                store_state(s, (slot * layer.nv + h) * DK * DV, rl, col, false);
                slot = slot + 1u;
                to_checkpoint = layer.ckpt_interval;
            }
            let len = min(min(CHUNK, steps - j0), to_checkpoint);
            let c = load_chunk(j0, len, rl, group);

            // This lane's rows of S_0ᵀ k̂_j and of the key products k̂_i·k̂_j (i < j: (1, 0), (2, 0),
            // (2, 1), (3, 0) and (3, 1), (3, 2)), then their sums.
            var ks = vec4<f32>(0.0);
            var kk = vec4<f32>(0.0);
            var kk3 = vec2<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                let k = c.k[i];
                ks = ks + s[i] * k;
                kk = kk + k.yzzw * k.xxyx;
                kk3 = kk3 + k.ww * k.yz;
            }
            let sums = chunk_gather(tid, chunk_scatter_sum(tid, array<vec4<f32>, CHUNK>(ks, kk, vec4<f32>(kk3, 0.0, 0.0), vec4<f32>(0.0))));
            ks = sums[0];
            let k10 = sums[1].x;
            let k20 = sums[1].y;
            let k21 = sums[1].z;
            let k30 = sums[1].w;
            let k31 = sums[2].x;
            let k32 = sums[2].y;

            // The triangular solve for u, every decay a product of the g's between.
            let g = c.g;
            let to_j = vec4<f32>(g.x, g.x * g.y, g.x * g.y * g.z, g.x * g.y * g.z * g.w);
            let b = c.beta * f32(columns);
            let r0 = c.v.x - to_j.x * ks.x;
            let u0 = b.x * r0;
            let r1 = c.v.y - to_j.y * ks.y - (g.y * k10) * u0;
            let u1 = b.y * r1;
            let r2 = c.v.z - to_j.z * ks.z - (g.z * k21) * u1 - (g.z * g.y * k20) * u0;
            let u2 = b.z * r2;
            let r3 = c.v.w - to_j.w * ks.w - (g.w * k32) * u2 - (g.w * g.z * k31) * u1 - (g.w * g.z * g.y * k30) * u0;
            let u3 = b.w * r3;
            // Lane j < len writes token j's r where the plan laid room for it (the column-block
            // backward replays from it).
            let r_at = residual_at(first + j0 + rl, h) + col;
            if (columns && rl < len && r_at < arrayLength(&ckpt)) {
                ckpt[r_at] = component(vec4<f32>(r0, r1, r2, r3), rl);
            }

            // The chunk's steps, then the sums of their outputs.
            var qs = vec4<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                let k = c.k[i];
                let q = c.q[i];
                var x = s[i] * g.x + k.x * u0;
                qs.x = qs.x + x * q.x;
                x = x * g.y + k.y * u1;
                qs.y = qs.y + x * q.y;
                x = x * g.z + k.z * u2;
                qs.z = qs.z + x * q.z;
                x = x * g.w + k.w * u3;
                qs.w = qs.w + x * q.w;
                s[i] = x;
            }
            let out = token_scatter_sum(tid, qs);
            let token = rl / 8u;
            if (columns && token < len && rl % 8u == 0u) {
                o[((first + j0 + token) * layer.nv + h) * DV + col] = out;
            }
            j0 = j0 + len;
            to_checkpoint = to_checkpoint - len;
        }
    }
    store_state(s, state_at, rl, col, true);
}
