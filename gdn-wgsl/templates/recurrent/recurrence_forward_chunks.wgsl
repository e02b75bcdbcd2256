// The delta rule, forward, for batches of few heads (the plan's choice: where the per-token
// recurrence_forward.wgsl leaves most of the GPU idle), serial in time and parallel over
// (sequence, value head, column block):
//   S_t = g_t·S_{t−1} + k̂_t u_tᵀ,  u_t = β_t(v_t − g_t·S_{t−1}ᵀ k̂_t),  o_t = S_tᵀ q̂_t,
// solved CHUNK = 4 tokens at a time so that a chunk, not a token, waits on sums over the state's
// rows.
// With Γ_j the chunk's cumulative log decay to token j and S_0 the state before it,
//   u_j = β_j(v_j − e^{Γ_j}·S_0ᵀ k̂_j − Σ_{i<j} e^{Γ_j−Γ_i}(k̂_i·k̂_j)·u_i)
// (every decay a product of the g's between, ≤ 1): the chunk's S_0ᵀ k̂_j are summed over the rows
// (the key products k̂_i·k̂_j come from qk_norm_gates_forward, the same for every column), the
// small triangular solve for u runs in every lane, then the chunk's steps update the state token
// by token with no sum between them, and its S_jᵀ q̂_j are summed together one chunk later, beside
// the next chunk's sums over the rows (two independent chains of shuffles where one waited on the
// other: the outputs are on no chunk's path).
// Layout (gdn_wgsl::LaneLayout::recurrent_forward_chunks): a workgroup owns CB columns, one a
// column group of ROW_LANES = 32 consecutive lanes (one subgroup), lane rl holding rows rl + 32·i
// (i < RY; rows past DK hold zeros), so that a lane's share of a chunk is small: with few heads each
// scheduler runs one or two warps and the latency of every instruction of a lane shows. The sums
// over the rows of a chunk's four S_0ᵀ k̂_j are chunk_row_sum, those of its four outputs
// token_scatter_sum (subgroup shuffles in recurrence_forward_chunks; workgroup memory in
// recurrence_forward_chunks_portable); lane 8·j writes the output of token j. Where the sums are
// shuffles, CB more warps load the stages while the column groups solve (stage_loaders_apart.wgsl);
// where they take barriers, every lane does both (stage_loaders_shared.wgsl).
// Chunks are the stage's quads of four tokens (stages start at the sequence's start, STAGE tokens
// apart); where a checkpoint is due inside a quad, the quad is solved twice, each time with the
// tokens outside its part as no-ops (β = 0, g = 1). Tokens past the sequence's end read zeros.
// Inputs go through workgroup memory a stage of STAGE tokens at a time, loaded from storage by
// all lanes while the stage before computes, so that a step waits on workgroup memory, never on a
// load from storage (the per-token form waits on them, a load latency a token: BENCHMARKS.md, S4).
// Writes o (before the norm), the state at the start of every checkpoint interval, hT, and (where
// the plan has a column-block backward) every token's r = v − g·S_{t−1}ᵀk̂.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

// Invocations owning the state's columns (the first SOLVERS), and those loading the stages (from
// LOAD_FIRST on: the warps after them, or every invocation).
const SOLVERS: u32 = CB * ROW_LANES;
const LOAD_THREADS: u32 = THREADS - LOAD_FIRST;

// The inputs of STAGE tokens (a multiple of CHUNK) of the workgroup's head and columns, in
// quads: the four tokens of a chunk one vec4, so that a lane reads a row of a chunk in one load.
// q̂ and k̂ [ROWS][QUAD_STRIDE] (rows past DK zeros), v [CB][QUAD_STRIDE], and the tokens' g, β,
// k̂_t·k̂_{t−1}, k̂_t·k̂_{t−2}, k̂_t·k̂_{t−3} [5][QUADS]. QUAD_STRIDE is odd, so that the eight lanes
// of a 16-byte load's phase read eight distinct groups of four banks.
const QUADS: u32 = STAGE / CHUNK;
const QUAD_STRIDE: u32 = QUADS + 1u - QUADS % 2u;
const ROWS: u32 = RY * ROW_LANES;
var<workgroup> staged_k: array<vec4<f32>, ROWS * QUAD_STRIDE>;
var<workgroup> staged_q: array<vec4<f32>, ROWS * QUAD_STRIDE>;
var<workgroup> staged_v: array<vec4<f32>, CB * QUAD_STRIDE>;
var<workgroup> staged_tokens: array<vec4<f32>, 5u * QUADS>;

// A loading lane's share of a stage, in registers between its loads and its stores: rows of q̂
// and k̂ and columns of v, each for a quad of four tokens (one 16-byte store into workgroup memory),
// the (row or column, quad) pairs e = lane + LOAD_THREADS·j of loading lane `lane` (tid − LOAD_FIRST).
const STAGE_QK: u32 = (QUADS * ROWS + LOAD_THREADS - 1u) / LOAD_THREADS;
const STAGE_V: u32 = (QUADS * CB + LOAD_THREADS - 1u) / LOAD_THREADS;
struct Stage {
    k: array<vec4<f32>, STAGE_QK>,
    q: array<vec4<f32>, STAGE_QK>,
    v: array<vec4<f32>, STAGE_V>,
    // g, β and the three key products of token `lane` (lane < STAGE).
    gates: vec2<f32>,
    products: vec3<f32>,
}

// Loading lane `lane`'s share of the stage of tokens [first, first + STAGE) of the sequence ending at
// `end` (tokens past it read zeros and g = 1), value head h, key head `key`, columns col0 … col0 + CB − 1.
fn load_stage(first: u32, end: u32, h: u32, key: u32, col0: u32, lane: u32) -> Stage {
    var x: Stage;
    let last = min(max(end, 1u), layer.tokens) - 1u;
    for (var j = 0u; j < STAGE_QK; j = j + 1u) {
        let e = min(lane + LOAD_THREADS * j, QUADS * ROWS - 1u);
        let t = vec4<u32>(first + e / ROWS * CHUNK) + vec4<u32>(0u, 1u, 2u, 3u);
        let at = min(t, vec4<u32>(last));
        let live = t < vec4<u32>(end);
        x.k[j] = hat_rows(1u, at, key, e % ROWS, live);
        x.q[j] = hat_rows(0u, at, key, e % ROWS, live);
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = min(lane + LOAD_THREADS * j, QUADS * CB - 1u);
        let t = vec4<u32>(first + e / CB * CHUNK) + vec4<u32>(0u, 1u, 2u, 3u);
        let at = min(t * layer.channels + vec4<u32>(2u * layer.nk * DK + h * DV + min(col0 + e % CB, DV - 1u)), vec4<u32>(layer.tokens * layer.channels - 1u));
        x.v[j] = select(vec4<f32>(0.0), vec4<f32>(y[at.x], y[at.y], y[at.z], y[at.w]), t < vec4<u32>(end));
    }
    let t = first + lane % STAGE;
    let at = min(t, last);
    let e = at * layer.nv + h;
    x.gates = select(vec2<f32>(1.0, 0.0), vec2<f32>(exp(gate_log_decay(e)), gate_beta(e)), t < end);
    let p = key_products_at(at, key);
    x.products = select(vec3<f32>(0.0), vec3<f32>(qk_hat[p], qk_hat[p + 1u], qk_hat[p + 2u]), t < end);
    return x;
}

// Loading lane `lane`'s share of a stage into workgroup memory.
fn store_stage(x: Stage, lane: u32) {
    for (var j = 0u; j < STAGE_QK; j = j + 1u) {
        let e = lane + LOAD_THREADS * j;
        if (e < QUADS * ROWS) {
            let at = (e % ROWS) * QUAD_STRIDE + e / ROWS;
            staged_k[at] = x.k[j];
            staged_q[at] = x.q[j];
        }
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = lane + LOAD_THREADS * j;
        if (e < QUADS * CB) {
            staged_v[(e % CB) * QUAD_STRIDE + e / CB] = x.v[j];
        }
    }
    if (lane < STAGE) {
        let quad = lane / CHUNK;
        let m = lane % CHUNK;
        staged_tokens[quad][m] = x.gates.x;
        staged_tokens[QUADS + quad][m] = x.gates.y;
        staged_tokens[2u * QUADS + quad][m] = x.products.x;
        staged_tokens[3u * QUADS + quad][m] = x.products.y;
        staged_tokens[4u * QUADS + quad][m] = x.products.z;
    }
}

// A chunk's inputs for this lane's rows and column: the stage's quad of four tokens, those outside
// [lo, hi) no-ops (g = 1, β = 0: their u is 0 whatever else they hold), the tokens the components of
// a vec4 (so that every index into a lane's arrays is a loop's over rows: arrays indexed otherwise
// leave the registers).
struct Chunk {
    // Rows rl + ROW_LANES·i of k̂ (of q̂) of the four tokens.
    k: array<vec4<f32>, RY>,
    q: array<vec4<f32>, RY>,
    // The four tokens' v (at this lane's column), g and β.
    v: vec4<f32>,
    g: vec4<f32>,
    beta: vec4<f32>,
    // k̂_j·k̂_{j−1}, k̂_j·k̂_{j−2}, k̂_j·k̂_{j−3} of token j in component j.
    p1: vec4<f32>,
    p2: vec4<f32>,
    p3: vec4<f32>,
}

fn load_chunk(quad: u32, lo: u32, hi: u32, rl: u32, group: u32) -> Chunk {
    var c: Chunk;
    let m = vec4<u32>(0u, 1u, 2u, 3u);
    let live = (m >= vec4<u32>(lo)) & (m < vec4<u32>(hi));
    c.g = select(vec4<f32>(1.0), staged_tokens[quad], live);
    c.beta = select(vec4<f32>(0.0), staged_tokens[QUADS + quad], live);
    c.p1 = staged_tokens[2u * QUADS + quad];
    c.p2 = staged_tokens[3u * QUADS + quad];
    c.p3 = staged_tokens[4u * QUADS + quad];
    for (var i = 0u; i < RY; i = i + 1u) {
        let at = (rl + ROW_LANES * i) * QUAD_STRIDE + quad;
        c.k[i] = staged_k[at];
        c.q[i] = staged_q[at];
    }
    c.v = staged_v[group * QUAD_STRIDE + quad];
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

// This lane's rows of the state into hT ([DK, DV] at `at`) or into a checkpoint at `at`: [DK, DV],
// or [DV, DK] where the plan keeps them by column (layer.ckpt_columns: a warp's column contiguous).
fn store_state(s: array<f32, RY>, at: u32, rl: u32, col: u32, into_ht: bool) {
    if (col >= DV) {
        return;
    }
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        if (row < DK) {
            if (into_ht) {
                ht[at + row * DV + col] = s[i];
            } else {
                ckpt[at + select(row * DV + col, col * DK + row, layer.ckpt_columns != 0u)] = s[i];
            }
        }
    }
}

// A chunk's S_jᵀ q̂_j, this lane's rows, waiting to be summed and written with the next chunk's
// sums: tokens quad_first + lo … quad_first + hi − 1 (none where lo = hi).
struct Outputs {
    qs: vec4<f32>,
    quad_first: u32,
    lo: u32,
    hi: u32,
}

// Sums a chunk's outputs over the rows (uniform control flow: every lane calls) and lane 8·j of the
// column writes token j's.
fn write_outputs(p: Outputs, tid: u32, h: u32, col: u32) {
    let out = token_scatter_sum(tid, p.qs);
    let token = (tid % ROW_LANES) / 8u;
    if (col < DV && token >= p.lo && token < p.hi && tid % 8u == 0u) {
        o[((p.quad_first + token) * layer.nv + h) * DV + col] = out;
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
    // A loading warp's column: none (DV), so that every write of a column skips it.
    let col = select(DV, col0 + group, group < CB);
    let columns = col < DV;
    let loads = tid >= LOAD_FIRST;
    let lane = tid - LOAD_FIRST;
    let start = seq_start(n);
    let end = seq_end(n);
    let state_at = (n * layer.nv + h) * DK * DV;

    var s = load_state(state_at, rl, col, layer.has_h0 != 0u);
    var stage: Stage;
    if (loads) {
        stage = load_stage(start, end, h, key, col0, lane);
    }
    var slot = ckpt_first(n);
    var to_checkpoint = 0u;
    var pending = Outputs(vec4<f32>(0.0), 0u, 0u, 0u);
    for (var first = start; first < end; first = first + STAGE) {
        workgroupBarrier();
        if (loads) {
            store_stage(stage, lane);
        }
        workgroupBarrier();
        if (loads) {
            stage = load_stage(first + STAGE, end, h, key, col0, lane);
        }
        if (!solves(tid)) {
            continue;
        }
        let steps = min(STAGE, end - first);
        for (var j0 = 0u; j0 < steps; ) {
            if (to_checkpoint == 0u) {
                store_state(s, (slot * layer.nv + h) * DK * DV, rl, col, false);
                slot = slot + 1u;
                to_checkpoint = layer.ckpt_interval;
            }
            // The live tokens of the stage's quad j0 / CHUNK: from j0 to the quad's end, the stage's,
            // or a checkpoint's.
            let lo = j0 % CHUNK;
            let len = min(min(CHUNK - lo, steps - j0), to_checkpoint);
            let hi = lo + len;
            let c = load_chunk(j0 / CHUNK, lo, hi, rl, group);
            let quad_first = first + j0 - lo;

            // S_0ᵀ k̂_j, summed over the rows; the key products k̂_i·k̂_j (i < j) come staged.
            var ks = vec4<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                ks = ks + s[i] * c.k[i];
            }
            ks = chunk_row_sum(tid, ks);
            write_outputs(pending, tid, h, col);
            let k10 = c.p1.y;
            let k21 = c.p1.z;
            let k32 = c.p1.w;
            let k20 = c.p2.z;
            let k31 = c.p2.w;
            let k30 = c.p3.w;

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
            // Lane j (a live token) writes token j's r where the plan laid room for it (the
            // column-block backward replays from it).
            let r_at = residual_at(quad_first + rl, h) + col;
            if (columns && rl >= lo && rl < hi && r_at < arrayLength(&ckpt)) {
                ckpt[r_at] = component(vec4<f32>(r0, r1, r2, r3), rl);
            }

            // The chunk's steps, and their outputs' shares (summed with the next chunk's sums).
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
            pending = Outputs(qs, quad_first, lo, hi);
            j0 = j0 + len;
            to_checkpoint = to_checkpoint - len;
        }
    }
    if (solves(tid)) {
        write_outputs(pending, tid, h, col);
        store_state(s, state_at, rl, col, true);
    }
}
