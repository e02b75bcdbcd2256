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
    var dots = vec2<f32>(0.0);
    for (var m = tid; m < DK; m = m + VEC) {
        dots = dots + vec2<f32>(y[q_at + m], y[k_at + m]) * summed_hat_grads(heads, k_heads, m);
    }
    let dot = row_sum2(tid, dots);
    let ss = vec2<f32>(qk_ss[row], qk_ss[layer.tokens * layer.nk + row]);
    let inv = vec2<f32>(1.0 / (sqrt(ss.x) * sqrt(f32(DK))), 1.0 / sqrt(ss.y));
    for (var m = tid; m < DK; m = m + VEC) {
        let x = vec2<f32>(y[q_at + m], y[k_at + m]);
        let dx = inv * summed_hat_grads(heads, k_heads, m) - x * dot * inv / ss;
        dy[q_at + m] = dx.x;
        dy[k_at + m] = dx.y;
    }
}

// (dq̂[m], dk̂[m]) summed over the rep value heads' partial rows, which start at `heads` (dk̂'s
// `k_heads` further on).
fn summed_hat_grads(heads: u32, k_heads: u32, m: u32) -> vec2<f32> {
    var d = vec2<f32>(0.0);
    for (var r = 0u; r < layer.rep * layer.hat_parts; r = r + 1u) {
        let at = heads + r * DK + m;
        d = d + vec2<f32>(dqk_hat_heads[at], dqk_hat_heads[k_heads + at]);
    }
    return d;
}
