// Sums dq̂ and dk̂ over the rep value heads of a key head (and over the layer.hat_parts partial rows
// the family's backward writes per value head), then the L2-norm backward
// dx = inv·dx̂ − x·(Σ dx̂·x)·inv / (Σx² + ε₂), into the q and k channels of dy.
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
    let q_at = t * layer.channels + i * DK;
    let k_at = q_at + layer.nk * DK;
    let heads = (t * layer.nv + i * layer.rep) * layer.hat_parts * DK;
    let k_heads = layer.tokens * layer.nv * layer.hat_parts * DK;
    // This thread's elements m = tid + VEC·j of (dq̂, dk̂), summed once.
    let hats = summed_hat_grads(tid, heads, k_heads);
    var dots = vec2<f32>(0.0);
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let m = tid + VEC * j;
        if (m < DK) {
            dots = dots + vec2<f32>(y[q_at + m], y[k_at + m]) * hats[j];
        }
    }
    let dot = row_sum2(tid, dots);
    let ss = vec2<f32>(qk_ss[row], qk_ss[layer.tokens * layer.nk + row]);
    let inv = vec2<f32>(1.0 / (sqrt(ss.x) * sqrt(f32(DK))), 1.0 / sqrt(ss.y));
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let m = tid + VEC * j;
        if (m < DK) {
            let x = vec2<f32>(y[q_at + m], y[k_at + m]);
            let dx = inv * hats[j] - x * dot * inv / ss;
            dy[q_at + m] = dx.x;
            dy[k_at + m] = dx.y;
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

// (dq̂[m], dk̂[m]) at this thread's elements m = tid + VEC·j (those past DK read element DK − 1, for
// the caller to ignore), summed over the rep value heads' partial rows, which start at `heads`
// (dk̂'s `k_heads` further on): eight rows of every element a round into separate sums, so that a
// round's loads are in flight together (S4: 64 rows of 128 elements a (token, key head), one load
// latency a round).
fn summed_hat_grads(tid: u32, heads: u32, k_heads: u32) -> array<vec2<f32>, PER_THREAD> {
    let rows = layer.rep * layer.hat_parts;
    var q: array<vec4<f32>, 2 * PER_THREAD>;
    var k: array<vec4<f32>, 2 * PER_THREAD>;
    var r = 0u;
    for (; r + 8u <= rows; r = r + 8u) {
        for (var j = 0u; j < PER_THREAD; j = j + 1u) {
            let at = heads + r * DK + min(tid + VEC * j, DK - 1u);
            q[2u * j] = q[2u * j] + four_rows(at);
            q[2u * j + 1u] = q[2u * j + 1u] + four_rows(at + 4u * DK);
            k[2u * j] = k[2u * j] + four_rows(k_heads + at);
            k[2u * j + 1u] = k[2u * j + 1u] + four_rows(k_heads + at + 4u * DK);
        }
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
