// The delta rule, forward, token by token, for batches of many heads (few take
// recurrence_forward_chunks.wgsl), serial in time and parallel over (sequence, value head, column
// block):
//   S'_t = g_t·S_{t−1};  kv_t = S'_tᵀ k̂_t;  u_t = β_t(v_t − kv_t);  S_t = S'_t + k̂_t u_tᵀ;  o_t = S_tᵀ q̂_t.
// Columns of the state are independent in the forward, so a workgroup owns CB of them: one block of
// ROW_LANES·COLUMN_LANES invocations, the decode step's lane layout (decode/decode_step.wgsl):
// COLUMN_LANES column groups of four columns (a vec4 a row), each held by ROW_LANES row lanes,
// lane rl holding rows rl + ROW_LANES·i (i < RY), row lanes COLUMN_LANES invocations apart. The two
// column sums a step are a lane's own rows, then its row lanes' (`row_lanes_sum`: subgroup shuffles
// in recurrence_forward, for subgroups of at least the block; workgroup memory in
// recurrence_forward_portable), so no barrier separates the steps; a step's inputs (its gates, the
// lane's rows of q̂ and k̂, its columns of v) are loaded while the step before computes. (Before, a
// tiling with two workgroup barriers a step and its inputs loaded after them ran S4's recurrence
// far slower: BENCHMARKS.md, History: the recurrent forward in the decode step's layout.)
// Writes o (before the norm), the state at the start of every checkpoint interval, and hT.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

// A step's inputs, none of them depending on the state.
struct StepInputs {
    decay: f32,
    beta: f32,
    k: array<f32, RY>,
    q: array<f32, RY>,
    v: vec4<f32>,
}

// The inputs of token t for value head h, key head `key`, this lane's rows and columns.
fn step_inputs(t: u32, h: u32, key: u32, rl: u32, col4: u32) -> StepInputs {
    var x: StepInputs;
    let e = t * layer.nv + h;
    x.decay = gate_log_decay(e);
    x.beta = gate_beta(e);
    let k_at = hat_at(1u, t, key);
    let q_at = hat_at(0u, t, key);
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = min(rl + ROW_LANES * i, DK - 1u);
        x.k[i] = qk_hat[k_at + row];
        x.q[i] = qk_hat[q_at + row];
    }
    let v_at = t * layer.channels + 2u * layer.nk * DK + h * DV + min(col4, DV - 4u);
    x.v = vec4<f32>(y[v_at], y[v_at + 1u], y[v_at + 2u], y[v_at + 3u]);
    return x;
}

// This lane's rows of a [DK, DV] state at `at` (its columns col4 … col4 + 3), or zeros.
fn load_state(at: u32, rl: u32, col4: u32, from_h0: bool) -> array<vec4<f32>, RY> {
    var s: array<vec4<f32>, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        let e = at + (rl + ROW_LANES * i) * DV + col4;
        var value = vec4<f32>(0.0);
        if (from_h0 && col4 < DV) {
            value = vec4<f32>(h0[e], h0[e + 1u], h0[e + 2u], h0[e + 3u]);
        }
        s[i] = value;
    }
    return s;
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
    let rl = tid / COLUMN_LANES;
    let col4 = (job % blocks) * CB + 4u * (tid % COLUMN_LANES);
    let columns = col4 < DV;
    let start = seq_start(n);
    let end = seq_end(n);
    let state_at = (n * layer.nv + h) * DK * DV;

    var s = load_state(state_at, rl, col4, layer.has_h0 != 0u);
    var next = step_inputs(min(start, layer.tokens - 1u), h, key, rl, col4);
    for (var t = start; t < end; t = t + 1u) {
        let x = next;
        next = step_inputs(min(t + 1u, layer.tokens - 1u), h, key, rl, col4);
        let step = t - start;
        if (step % layer.ckpt_interval == 0u && columns) {
            let slot = ((ckpt_first(n) + step / layer.ckpt_interval) * layer.nv + h) * DK * DV;
            for (var i = 0u; i < RY; i = i + 1u) {
                let e = slot + (rl + ROW_LANES * i) * DV + col4;
                ckpt[e] = s[i].x;
                ckpt[e + 1u] = s[i].y;
                ckpt[e + 2u] = s[i].z;
                ckpt[e + 3u] = s[i].w;
            }
        }
        let g = exp(x.decay);
        var kv = vec4<f32>(0.0);
        for (var i = 0u; i < RY; i = i + 1u) {
            s[i] = s[i] * g;
            kv = kv + s[i] * x.k[i];
        }
        let u = x.beta * (x.v - row_lanes_sum(tid, kv)) * f32(columns);
        var out = vec4<f32>(0.0);
        for (var i = 0u; i < RY; i = i + 1u) {
            s[i] = s[i] + x.k[i] * u;
            out = out + s[i] * x.q[i];
        }
        out = row_lanes_sum(tid, out);
        if (rl == 0u && columns) {
            let e = (t * layer.nv + h) * DV + col4;
            o[e] = out.x;
            o[e + 1u] = out.y;
            o[e + 2u] = out.z;
            o[e + 3u] = out.w;
        }
    }

    if (columns) {
        for (var i = 0u; i < RY; i = i + 1u) {
            let e = state_at + (rl + ROW_LANES * i) * DV + col4;
            ht[e] = s[i].x;
            ht[e + 1u] = s[i].y;
            ht[e + 2u] = s[i].z;
            ht[e + 3u] = s[i].w;
        }
    }
}
