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
    var hats: array<vec2<f32>, PER_THREAD>;
    var dots = vec2<f32>(0.0);
    for (var j = 0u; j < PER_THREAD; j = j + 1u) {
        let m = tid + VEC * j;
        if (m < DK) {
            hats[j] = summed_hat_grads(heads, k_heads, m);
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

// (dq̂[m], dk̂[m]) summed over the rep value heads' partial rows, which start at `heads` (dk̂'s
// `k_heads` further on): four rows a round into separate sums, so that a round's loads are in
// flight together.
fn summed_hat_grads(heads: u32, k_heads: u32, m: u32) -> vec2<f32> {
    let rows = layer.rep * layer.hat_parts;
    var q = vec4<f32>(0.0);
    var k = vec4<f32>(0.0);
    var r = 0u;
    for (; r + 4u <= rows; r = r + 4u) {
        let at = vec4<u32>(heads + m) + vec4<u32>(r, r + 1u, r + 2u, r + 3u) * DK;
        q = q + vec4<f32>(dqk_hat_heads[at.x], dqk_hat_heads[at.y], dqk_hat_heads[at.z], dqk_hat_heads[at.w]);
        let kt = at + vec4<u32>(k_heads);
        k = k + vec4<f32>(dqk_hat_heads[kt.x], dqk_hat_heads[kt.y], dqk_hat_heads[kt.z], dqk_hat_heads[kt.w]);
    }
    var d = vec2<f32>(q.x + q.y + q.z + q.w, k.x + k.y + k.z + k.w);
    for (; r < rows; r = r + 1u) {
        let at = heads + r * DK + m;
        d = d + vec2<f32>(dqk_hat_heads[at], dqk_hat_heads[k_heads + at]);
    }
    return d;
}
