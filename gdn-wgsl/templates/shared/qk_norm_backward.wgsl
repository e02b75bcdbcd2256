// Sums dq̂ and dk̂ over the rep value heads of a key head (and over the layer.hat_parts partial rows
// the family's backward writes per value head), then the L2-norm backward
// dx = inv·dx̂ − x·(Σ dx̂·x)·inv / (Σx² + ε₂) of the conv outputs x of its q and k channels, kept by
// keep_qk_grad (qk_grads_stored.wgsl: into dy, for conv_backward_pre; qk_grads_conv.wgsl: through
// SiLU into dpre, with the value channels' too); and the gates' backward of those value heads at
// that token (a dispatch of its own cost S4 more: BENCHMARKS.md, S4): dℓ and dβ summed from the
// family's layer.gate_parts partials of each, da = dℓ·∂ℓ/∂arg, db = dβ·β(1 − β), and the
// per-element term of da_log's sum dlog_term = dℓ·∂ℓ/∂a_log (ddt_bias sums da), from the
// derivatives the forward kept (gate_values.wgsl). dℓ = dg·g: the families never divide by g,
// which underflows.
// One workgroup of VEC threads (at least DK: the host's qk_norm_backward_threads) per (token, key
// head), thread m holding element m of q and of k.

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
    // This thread's element m = tid of (dq̂, dk̂), summed once (threads past DK take element
    // tid % DK's share of the sums, then count zero).
    let hats = summed_hat_grads(tid, heads, k_heads);
    let live = tid < DK;
    let m = min(tid, DK - 1u);
    // The conv outputs (q, k) at that element and their SiLU slopes.
    let q_c = i * DK;
    let k_c = q_c + layer.nk * DK;
    let span = token_span(t);
    let q = qk_input_grad(t, q_c + m, span);
    let k = qk_input_grad(t, k_c + m, span);
    let x = vec2<f32>(q.x, k.x);
    let slope = vec2<f32>(q.y, k.y);
    let dot = row_sum2(tid, f32(live) * x * hats);
    let ss = vec2<f32>(gates[qk_ss_at(0u, row)], gates[qk_ss_at(1u, row)]);
    let inv = vec2<f32>(1.0 / (sqrt(ss.x) * sqrt(f32(DK))), 1.0 / sqrt(ss.y));
    if (live) {
        let dx = (inv * hats - x * dot * inv / ss) * slope;
        keep_qk_grad(t, q_c + m, dx.x);
        keep_qk_grad(t, k_c + m, dx.y);
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

// Threads per element summing its partial rows (each every HAT_SPLITS-th row), and rows a thread
// has in flight a round (their q and k rows: 2 · HAT_ROUND loads; S4's 64 rows of a (token, key
// head) at DK = 128, on 128 threads: two rounds of one thread an element).
const HAT_SPLITS: u32 = VEC / DK;
const HAT_ROUND: u32 = 32u;
var<workgroup> hat_split_sums: array<vec2<f32>, VEC>;

// (dq̂[e], dk̂[e]) at this thread's element e = tid % DK, summed over the rep value heads' partial
// rows, which start at `heads` (dk̂'s `k_heads` further on): thread tid sums rows tid / DK,
// tid / DK + HAT_SPLITS, … (none past HAT_SPLITS · DK threads), HAT_ROUND at a time, then the
// element's threads' sums are added through workgroup memory. Call from uniform control flow.
fn summed_hat_grads(tid: u32, heads: u32, k_heads: u32) -> vec2<f32> {
    let rows = layer.rep * layer.hat_parts;
    let e = tid % DK;
    let split = tid / DK;
    let stride = HAT_SPLITS * DK;
    var q: array<vec4<f32>, HAT_ROUND / 4u>;
    var k: array<vec4<f32>, HAT_ROUND / 4u>;
    if (split < HAT_SPLITS) {
        var r = split;
        for (; r + (HAT_ROUND - 1u) * HAT_SPLITS < rows; r = r + HAT_ROUND * HAT_SPLITS) {
            let first = heads + r * DK + e;
            for (var j = 0u; j < HAT_ROUND / 4u; j = j + 1u) {
                let at = vec4<u32>(first + 4u * j * stride) + vec4<u32>(0u, 1u, 2u, 3u) * stride;
                let k_at = at + vec4<u32>(k_heads);
                q[j] = q[j] + vec4<f32>(dqk_hat_heads[at.x], dqk_hat_heads[at.y], dqk_hat_heads[at.z], dqk_hat_heads[at.w]);
                k[j] = k[j] + vec4<f32>(dqk_hat_heads[k_at.x], dqk_hat_heads[k_at.y], dqk_hat_heads[k_at.z], dqk_hat_heads[k_at.w]);
            }
        }
        for (; r < rows; r = r + HAT_SPLITS) {
            let at = heads + r * DK + e;
            q[0].x = q[0].x + dqk_hat_heads[at];
            k[0].x = k[0].x + dqk_hat_heads[k_heads + at];
        }
    }
    var qs = vec4<f32>(0.0);
    var ks = vec4<f32>(0.0);
    for (var j = 0u; j < HAT_ROUND / 4u; j = j + 1u) {
        qs = qs + q[j];
        ks = ks + k[j];
    }
    hat_split_sums[tid] = vec2<f32>(qs.x + qs.y + qs.z + qs.w, ks.x + ks.y + ks.z + ks.w);
    workgroupBarrier();
    var d = vec2<f32>(0.0);
    for (var s = 0u; s < HAT_SPLITS; s = s + 1u) {
        d = d + hat_split_sums[s * DK + e];
    }
    return d;
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
