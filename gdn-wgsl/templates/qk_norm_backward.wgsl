// Sums dq̂ and dk̂ over the rep value heads of a key head (and over the layer.hat_parts partial rows
// the family's backward writes per value head), then the L2-norm backward
// dx = inv·dx̂ − x·(Σ dx̂·x)·inv / (Σx² + ε₂) of the conv outputs x of its q and k channels, kept by
// keep_qk_grad (qk_grads_stored.wgsl: into dy, for conv_backward_pre; qk_grads_conv.wgsl: through
// SiLU into dpre, with the value channels' too); and the gates' backward of those value heads at
// that token (a dispatch of its own cost S4 about 4 µs on the H200): dℓ and dβ summed from the
// family's layer.gate_parts partials of each, da = dℓ·∂ℓ/∂arg, db = dβ·β(1 − β), and the
// per-element term of da_log's sum dlog_term = dℓ·∂ℓ/∂a_log (ddt_bias sums da), from the
// derivatives the forward kept (gate_values.wgsl). dℓ = dg·g: the families never divide by g,
// which underflows.
// One workgroup of VEC threads per (token, key head).

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = folded(wg, nwg);
    if (row >= layer.tokens * layer.nk) {
        return;
    }
    let t = row / layer.nk;
    let i = row % layer.nk;
    // The first two value heads' gate partials, loaded with the rows of dq̂ and dk̂.
    let first_gates = gate_partials(t, i, 0u, tid);
    let heads = (t * layer.nv + i * layer.rep) * layer.hat_parts * DK;
    let k_heads = layer.tokens * layer.nv * layer.hat_parts * DK;
    // This thread's elements m = tid + VEC·j of (dq̂, dk̂), summed once.
    let hats = summed_hat_grads(tid, heads, k_heads);
    // The conv outputs (q, k) at those elements and their SiLU slopes (elements past DK read
    // DK − 1 and count zero).
    let q_c = i * DK;
    let k_c = q_c + layer.nk * DK;
    let span = token_span(t);
    var x: array<vec2<f32>, PER_THREAD>;
    var slope: array<vec2<f32>, PER_THREAD>;
    var dots = vec2<f32>(0.0);
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let m = min(tid + VEC * j, DK - 1u);
        let q = qk_input_grad(t, q_c + m, span);
        let k = qk_input_grad(t, k_c + m, span);
        x[j] = vec2<f32>(q.x, k.x);
        slope[j] = vec2<f32>(q.y, k.y);
        dots = dots + f32(tid + VEC * j < DK) * x[j] * hats[j];
    }
    let dot = row_sum2(tid, dots);
    let ss = vec2<f32>(qk_ss[row], qk_ss[layer.tokens * layer.nk + row]);
    let inv = vec2<f32>(1.0 / (sqrt(ss.x) * sqrt(f32(DK))), 1.0 / sqrt(ss.y));
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let m = tid + VEC * j;
        if (m < DK) {
            let dx = (inv * hats[j] - x[j] * dot * inv / ss) * slope[j];
            keep_qk_grad(t, q_c + m, dx.x);
            keep_qk_grad(t, k_c + m, dx.y);
        }
    }
    values_backward(t, i, tid, span);
    if (layer.gate_parts <= 4u) {
        gate_grads_by_head(t, i, tid);
    } else {
        write_gate_grads(t, i, 0u, tid, row_sum4(tid, first_gates));
        for (var r = 2u; r < layer.rep; r = r + 2u) {
            write_gate_grads(t, i, r, tid, row_sum4(tid, gate_partials(t, i, r, tid)));
        }
    }
}

// Elements of dq̂ (and of dk̂) each thread sums.
const PER_THREAD: u32 = (DK + VEC - 1u) / VEC;

// Four partial rows from row `at` on, DK apart.
fn four_rows(at: u32) -> vec4<f32> {
    let e = vec4<u32>(at) + vec4<u32>(0u, 1u, 2u, 3u) * DK;
    return vec4<f32>(dqk_hat_heads[e.x], dqk_hat_heads[e.y], dqk_hat_heads[e.z], dqk_hat_heads[e.w]);
}

// Partial rows summed a round, their loads in flight together: 8 · (4 / PER_THREAD) rows (at
// least 8), so that a round holds about 64 loads a thread whatever DK (S4's 64 rows of a (token,
// key head) at DK = 128: 4 rounds of 16, each a load latency, where rounds of 8 took 8).
const HAT_ROUND: u32 = 8u * max(1u, 4u / PER_THREAD);

// (dq̂[m], dk̂[m]) at this thread's elements m = tid + VEC·j (those past DK read element DK − 1, for
// the caller to ignore), summed over the rep value heads' partial rows, which start at `heads`
// (dk̂'s `k_heads` further on): HAT_ROUND rows a round, then rounds of 8, then single rows.
fn summed_hat_grads(tid: u32, heads: u32, k_heads: u32) -> array<vec2<f32>, PER_THREAD> {
    let rows = layer.rep * layer.hat_parts;
    var q: array<vec4<f32>, 2 * PER_THREAD>;
    var k: array<vec4<f32>, 2 * PER_THREAD>;
    var r = 0u;
    for (; r + HAT_ROUND <= rows; r = r + HAT_ROUND) {
        for (var s = 0u; s < HAT_ROUND; s = s + 8u) {
            add_eight_rows(&q, &k, tid, heads + (r + s) * DK, k_heads);
        }
    }
    for (; r + 8u <= rows; r = r + 8u) {
        add_eight_rows(&q, &k, tid, heads + r * DK, k_heads);
    }
    var d: array<vec2<f32>, PER_THREAD>;
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let qs = q[2u * j] + q[2u * j + 1u];
        let ks = k[2u * j] + k[2u * j + 1u];
        d[j] = vec2<f32>(qs.x + qs.y + qs.z + qs.w, ks.x + ks.y + ks.z + ks.w);
        for (var tail = r; tail < rows; tail = tail + 1u) {
            let at = heads + tail * DK + min(tid + VEC * j, DK - 1u);
            d[j] = d[j] + vec2<f32>(dqk_hat_heads[at], dqk_hat_heads[k_heads + at]);
        }
    }
    return d;
}

// The eight partial rows from `first` on of this thread's elements, each into its own sum of
// (q, k): component c of q[2j] (of q[2j + 1]) sums rows c (4 + c) of element tid + VEC·j.
fn add_eight_rows(q: ptr<function, array<vec4<f32>, 2 * PER_THREAD>>, k: ptr<function, array<vec4<f32>, 2 * PER_THREAD>>,
                  tid: u32, first: u32, k_heads: u32) {
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let at = first + min(tid + VEC * j, DK - 1u);
        (*q)[2u * j] = (*q)[2u * j] + four_rows(at);
        (*q)[2u * j + 1u] = (*q)[2u * j + 1u] + four_rows(at + 4u * DK);
        (*k)[2u * j] = (*k)[2u * j] + four_rows(k_heads + at);
        (*k)[2u * j + 1u] = (*k)[2u * j + 1u] + four_rows(k_heads + at + 4u * DK);
    }
}

// This thread's share (partials tid + VEC·j) of the (dℓ, dβ) partials of value heads r and r + 1
// of key head `key` at token t: (dℓ, dβ) of head r, then of head r + 1 (zero past rep). The first
// round's loads outside the loop, so that they need not be waited for where it would not run (a
// short batch's 32 partials a head).
fn gate_partials(t: u32, key: u32, r: u32, tid: u32) -> vec4<f32> {
    let parts = layer.gate_parts;
    let heads = t * layer.nv + key * layer.rep;
    let pair = min(vec2<u32>(heads + r) + vec2<u32>(0u, 1u), vec2<u32>(heads + layer.rep - 1u));
    let ells = vec2<u32>(layer.gate_parts_base) + pair * parts;
    let betas = layer.tokens * layer.nv * parts;
    let live = vec4<bool>(vec2<bool>(r < layer.rep), vec2<bool>(r + 1u < layer.rep));
    let first = vec4<u32>(ells.x, ells.x + betas, ells.y, ells.y + betas) + vec4<u32>(min(tid, parts - 1u));
    var d = select(vec4<f32>(0.0), vec4<f32>(gate_grad_parts[first.x], gate_grad_parts[first.y],
        gate_grad_parts[first.z], gate_grad_parts[first.w]), live & vec4<bool>(tid < parts));
    for (var p = tid + VEC; p < parts; p = p + VEC) {
        let at = vec4<u32>(ells.x, ells.x + betas, ells.y, ells.y + betas) + vec4<u32>(p);
        d = d + select(vec4<f32>(0.0), vec4<f32>(gate_grad_parts[at.x], gate_grad_parts[at.y],
            gate_grad_parts[at.z], gate_grad_parts[at.w]), live);
    }
    return d;
}

// da, db and dlog_term of value heads r and r + 1 (threads 0 and 1) from the workgroup's sums of
// their partials.
fn write_gate_grads(t: u32, key: u32, r: u32, tid: u32, d: vec4<f32>) {
    if (tid < 2u && r + tid < layer.rep) {
        write_head_gate_grads(t * layer.nv + key * layer.rep + r + tid, select(d.xy, d.zw, tid == 1u));
    }
}

// The gate gradients where each (token, value head) has at most four partials (the chunked
// family's one): thread r adds head r's itself, no sum over the workgroup.
fn gate_grads_by_head(t: u32, key: u32, tid: u32) {
    let parts = layer.gate_parts;
    let p = vec4<u32>(0u, 1u, 2u, 3u);
    let live = p < vec4<u32>(parts);
    for (var r = tid; r < layer.rep; r = r + VEC) {
        let e = t * layer.nv + key * layer.rep + r;
        let ell = vec4<u32>(layer.gate_parts_base + e * parts) + min(p, vec4<u32>(parts - 1u));
        let beta = ell + vec4<u32>(layer.tokens * layer.nv * parts);
        let ells = select(vec4<f32>(0.0), vec4<f32>(gate_grad_parts[ell.x], gate_grad_parts[ell.y], gate_grad_parts[ell.z], gate_grad_parts[ell.w]), live);
        let betas = select(vec4<f32>(0.0), vec4<f32>(gate_grad_parts[beta.x], gate_grad_parts[beta.y], gate_grad_parts[beta.z], gate_grad_parts[beta.w]), live);
        write_head_gate_grads(e, vec2<f32>(ells.x + ells.y + ells.z + ells.w, betas.x + betas.y + betas.z + betas.w));
    }
}

// da, db and dlog_term at e = (token, value head) from its (dℓ, dβ).
fn write_head_gate_grads(e: u32, grads: vec2<f32>) {
    da[e] = grads.x * gate_arg_slope(e);
    db[e] = grads.y * gate_beta_slope(e);
    dlog_term[e] = grads.x * gate_a_log_slope(e);
}
