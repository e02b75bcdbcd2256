// recurrence_forward_chunks' stage inputs computed here from the raw inputs, the work of the q/k
// norms' dispatch (conv_qk_norm_gates_products_forward), so that the forward is two dispatches:
// the conv and SiLU of the key head's q and k rows and of the block's v columns (conv_at.wgsl), q̂
// and k̂ (their L2 norms summed over a warp's lanes by chunk_row_sum), the products k̂_i·k̂_j of each
// quad's tokens, g and β (gates_forward.wgsl). Every column block computes them for itself while
// its column groups solve the stage before. What the backward reads of them is written once: q̂,
// k̂, the key products, Σq² + ε₂ and Σk² + ε₂ by block 0 of the key head's first value head (the
// key head's keeper); the gates by block 0 of each head; the final conv window of the keeper's q and
// k channels by the keeper, of each block's v columns by the block. Only the products within a
// quad are formed (the others are written 0): the plan takes this kernel where every chunk the
// backward solves is one of the forward's quads (a checkpoint interval a multiple of CHUNK).
// Loading warp w takes the stage's quads w, w + LOAD_WARPS, …, its lane rl rows rl + 32·i of q and
// k at the quad's four tokens (a vec4 a row, as the stage keeps them).

const LOAD_WARPS: u32 = LOAD_THREADS / ROW_LANES;
const QUAD_ROUNDS: u32 = (QUADS + LOAD_WARPS - 1u) / LOAD_WARPS;
const STAGE_V: u32 = (QUADS * CB + LOAD_THREADS - 1u) / LOAD_THREADS;

// A loading lane's share of a stage, in registers between its computation and its stores.
struct Stage {
    // Rows rl + 32·i of q̂ and of k̂ of round r's quad, [r·RY + i].
    q: array<vec4<f32>, QUAD_ROUNDS * RY>,
    k: array<vec4<f32>, QUAD_ROUNDS * RY>,
    // k̂_j·k̂_{j−1}, k̂_j·k̂_{j−2}, k̂_j·k̂_{j−3} of round r's quad, token j in component j.
    p1: array<vec4<f32>, QUAD_ROUNDS>,
    p2: array<vec4<f32>, QUAD_ROUNDS>,
    p3: array<vec4<f32>, QUAD_ROUNDS>,
    // The block's columns of v, (column, quad) pairs e = lane + LOAD_THREADS·j.
    v: array<vec4<f32>, STAGE_V>,
    // g and β of token `lane` (lane < STAGE).
    gates: vec2<f32>,
}

// The conv's output (after its SiLU) of channel c at the four tokens `at` of `span`'s sequence,
// zero where not `keep`.
fn conv_quad(at: vec4<u32>, c: u32, span: TokenSpan, keep: vec4<bool>) -> vec4<f32> {
    let x = vec4<f32>(silu(conv_at(at.x, c, span)), silu(conv_at(at.y, c, span)), silu(conv_at(at.z, c, span)), silu(conv_at(at.w, c, span)));
    return select(vec4<f32>(0.0), x, keep);
}

// Loading lane `lane`'s share of the job's stage of tokens [first, first + STAGE) (tokens past the
// sequence's end zeros, g = 1 and β = 0), and the keepers' writes for the backward. Every lane of
// a loading warp calls it (chunk_row_sum).
fn load_stage(first: u32, job: Job, lane: u32) -> Stage {
    var x: Stage;
    let tid = lane + LOAD_FIRST;
    let warp = lane / ROW_LANES;
    let rl = lane % ROW_LANES;
    let span = TokenSpan(job.n, job.start);
    let last = min(max(job.end, 1u), layer.tokens) - 1u;
    let keeper = job.block == 0u && job.h % layer.rep == 0u;
    let q_c = job.key * DK;
    let k_c = q_c + layer.nk * DK;
    for (var r = 0u; r < QUAD_ROUNDS; r = r + 1u) {
        let quad = min(warp + LOAD_WARPS * r, QUADS - 1u);
        let t = vec4<u32>(first + quad * CHUNK) + vec4<u32>(0u, 1u, 2u, 3u);
        let live = t < vec4<u32>(job.end);
        let at = min(t, vec4<u32>(last));
        var q: array<vec4<f32>, RY>;
        var k: array<vec4<f32>, RY>;
        var sq = vec4<f32>(0.0);
        var sk = vec4<f32>(0.0);
        // k_2·k_0, k_1·k_0, k_2·k_1, k_3·k_2 (near) and k_3·k_1, k_3·k_0 (far), unnormalized.
        var near = vec4<f32>(0.0);
        var far = vec4<f32>(0.0);
        for (var i = 0u; i < RY; i = i + 1u) {
            let row = rl + ROW_LANES * i;
            let keep = live & vec4<bool>(row < DK);
            q[i] = conv_quad(at, q_c + min(row, DK - 1u), span, keep);
            k[i] = conv_quad(at, k_c + min(row, DK - 1u), span, keep);
            let kq = k[i];
            sq = sq + q[i] * q[i];
            sk = sk + kq * kq;
            near = near + vec4<f32>(kq.z * kq.x, kq.y * kq.x, kq.z * kq.y, kq.w * kq.z);
            far = far + vec4<f32>(kq.w * kq.y, kq.w * kq.x, 0.0, 0.0);
        }
        let ss_q = chunk_row_sum(tid, sq) + vec4<f32>(L2_EPS);
        let ss_k = chunk_row_sum(tid, sk) + vec4<f32>(L2_EPS);
        let n = chunk_row_sum(tid, near);
        let f = chunk_row_sum(tid, far);
        let inv_q = vec4<f32>(1.0) / (sqrt(ss_q) * sqrt(f32(DK)));
        let inv_k = vec4<f32>(1.0) / sqrt(ss_k);
        for (var i = 0u; i < RY; i = i + 1u) {
            x.q[r * RY + i] = q[i] * inv_q;
            x.k[r * RY + i] = k[i] * inv_k;
        }
        x.p1[r] = vec4<f32>(0.0, n.y * inv_k.y * inv_k.x, n.z * inv_k.z * inv_k.y, n.w * inv_k.w * inv_k.z);
        x.p2[r] = vec4<f32>(0.0, 0.0, n.x * inv_k.z * inv_k.x, f.x * inv_k.w * inv_k.y);
        x.p3[r] = vec4<f32>(0.0, 0.0, 0.0, f.y * inv_k.w * inv_k.x);
        if (keeper) {
            keep_keys(t, live, job.key, rl, x, r, ss_q, ss_k);
        }
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = min(lane + LOAD_THREADS * j, QUADS * CB - 1u);
        let t = vec4<u32>(first + e / CB * CHUNK) + vec4<u32>(0u, 1u, 2u, 3u);
        let c = 2u * layer.nk * DK + job.h * DV + min(job.col0 + e % CB, DV - 1u);
        x.v[j] = conv_quad(min(t, vec4<u32>(last)), c, span, t < vec4<u32>(job.end));
    }
    let t = first + lane % STAGE;
    let gate = gate_terms(min(t, last), job.h);
    if (job.block == 0u && lane < STAGE && t < job.end) {
        store_gate_terms(t, job.h, gate);
    }
    x.gates = select(vec2<f32>(1.0, 0.0), vec2<f32>(exp(gate.ell), gate.beta), t < job.end);
    if (layer.has_conv_state != 0u && first < job.end && job.end <= first + STAGE) {
        keep_conv_window(job, lane, keeper);
    }
    return x;
}

// The keeper's q̂ and k̂ rows of round r's quad (tokens t, those `live`), its key products and its
// tokens' Σq² + ε₂, Σk² + ε₂ (qk_hat and qk_ss, as qk_norm_gates_forward writes them).
fn keep_keys(t: vec4<u32>, live: vec4<bool>, key: u32, rl: u32, x: Stage, r: u32, ss_q: vec4<f32>, ss_k: vec4<f32>) {
    for (var m = 0u; m < CHUNK; m = m + 1u) {
        if (!live[m]) {
            continue;
        }
        for (var i = 0u; i < RY; i = i + 1u) {
            let row = rl + ROW_LANES * i;
            if (row < DK) {
                qk_hat[hat_at(0u, t[m], key) + row] = x.q[r * RY + i][m];
                qk_hat[hat_at(1u, t[m], key) + row] = x.k[r * RY + i][m];
            }
        }
        if (rl == 0u) {
            let at = key_products_at(t[m], key);
            qk_hat[at] = x.p1[r][m];
            qk_hat[at + 1u] = x.p2[r][m];
            qk_hat[at + 2u] = x.p3[r][m];
            let row = t[m] * layer.nk + key;
            qk_ss[row] = ss_q[m];
            qk_ss[layer.tokens * layer.nk + row] = ss_k[m];
        }
    }
}

// The sequence's final conv window (its last kk − 1 raw tokens, conv_forward's rule) of the block's
// v columns, and of the key head's q and k channels where this is its keeper.
fn keep_conv_window(job: Job, lane: u32, keeper: bool) {
    let km1 = layer.kk - 1u;
    let count = CB + select(0u, 2u * DK, keeper);
    for (var e = lane; e < count; e = e + LOAD_THREADS) {
        let column = job.col0 + e;
        let qk = e - CB;
        let c = select(job.key * DK + qk % DK + (qk / DK) * layer.nk * DK, 2u * layer.nk * DK + job.h * DV + column, e < CB);
        if (e >= CB || column < DV) {
            for (var s = 0u; s < km1; s = s + 1u) {
                final_conv_state[(job.n * km1 + s) * layer.channels + c] = conv_tap(job.n, job.start, job.end, s, c);
            }
        }
    }
}

// Loading lane `lane`'s share of a stage into workgroup memory.
fn store_stage(x: Stage, lane: u32) {
    let warp = lane / ROW_LANES;
    let rl = lane % ROW_LANES;
    for (var r = 0u; r < QUAD_ROUNDS; r = r + 1u) {
        let quad = warp + LOAD_WARPS * r;
        if (quad < QUADS) {
            for (var i = 0u; i < RY; i = i + 1u) {
                let at = (rl + ROW_LANES * i) * QUAD_STRIDE + quad;
                staged_q[at] = x.q[r * RY + i];
                staged_k[at] = x.k[r * RY + i];
            }
            if (rl == 0u) {
                staged_tokens[2u * QUADS + quad] = x.p1[r];
                staged_tokens[3u * QUADS + quad] = x.p2[r];
                staged_tokens[4u * QUADS + quad] = x.p3[r];
            }
        }
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = lane + LOAD_THREADS * j;
        if (e < QUADS * CB) {
            staged_v[(e % CB) * QUAD_STRIDE + e / CB] = x.v[j];
        }
    }
    if (lane < STAGE) {
        staged_tokens[lane / CHUNK][lane % CHUNK] = x.gates.x;
        staged_tokens[QUADS + lane / CHUNK][lane % CHUNK] = x.gates.y;
    }
}
