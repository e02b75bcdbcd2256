// L2 norms of q and k per (token, key head): q̂ = q / (sqrt(Σq² + ε₂)·sqrt(DK)), k̂ = k / sqrt(Σk² + ε₂),
// keeping Σq² + ε₂ and Σk² + ε₂ for the backward; and the gates of the key head's value heads at
// that token: ℓ = ln g = −exp(a_log)·softplus(a + dt_bias) (in log space, capped: math.wgsl's
// log_decay), β = σ(b). One workgroup of VEC threads per (token, key head): the gates share its
// dispatch (a pass of their own cost S4 5 µs on the H200 for 512 values).
// With KEY_PRODUCTS (the chunk-solved recurrences), also k̂_t·k̂_{t−m} for m = 1, 2, 3 (0 before
// token 0), from the same loads: the recurrences' chunks of four tokens need them, and would
// otherwise sum them over the rows in every workgroup of every column block.

const L2_EPS: f32 = 1e-6;

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = folded(wg, nwg);
    if (row >= layer.tokens * layer.nk) {
        return;
    }
    let t = row / layer.nk;
    let i = row % layer.nk;
    for (var r = tid; r < layer.rep; r = r + VEC) {
        let h = i * layer.rep + r;
        let e = t * layer.nv + h;
        gates[e] = log_decay(a_log[h], a[e] + dt_bias[h]);
        gates[layer.tokens * layer.nv + e] = sigmoid(b[e]);
    }
    let q_at = t * layer.channels + i * DK;
    let k_at = q_at + layer.nk * DK;
    var sq = vec2<f32>(0.0);
    // Σ k_t·k_{t−m} and Σ k_{t−m}², m = 1 and 2, then 3.
    var near = vec4<f32>(0.0);
    var far = vec2<f32>(0.0);
    for (var m = tid; m < DK; m = m + VEC) {
        let q = y[q_at + m];
        let k = y[k_at + m];
        sq = sq + vec2<f32>(q * q, k * k);
        if (KEY_PRODUCTS == 1u) {
            let k1 = select(0.0, y[k_at + m - min(t, 1u) * layer.channels], t >= 1u);
            let k2 = select(0.0, y[k_at + m - min(t, 2u) * layer.channels], t >= 2u);
            let k3 = select(0.0, y[k_at + m - min(t, 3u) * layer.channels], t >= 3u);
            near = near + vec4<f32>(k * k1, k1 * k1, k * k2, k2 * k2);
            far = far + vec2<f32>(k * k3, k3 * k3);
        }
    }
    let sums = row_sum4(tid, vec4<f32>(sq, far));
    let ss = sums.xy + vec2<f32>(L2_EPS);
    let inv_q = 1.0 / (sqrt(ss.x) * sqrt(f32(DK)));
    let inv_k = 1.0 / sqrt(ss.y);
    for (var m = tid; m < DK; m = m + VEC) {
        qk_hat[hat_at(0u, t, i) + m] = y[q_at + m] * inv_q;
        qk_hat[hat_at(1u, t, i) + m] = y[k_at + m] * inv_k;
    }
    if (KEY_PRODUCTS == 1u) {
        let n = row_sum4(tid, near);
        if (tid == 0u) {
            let at = key_products_at(t, i);
            qk_hat[at] = n.x * inv_k / sqrt(n.y + L2_EPS);
            qk_hat[at + 1u] = n.z * inv_k / sqrt(n.w + L2_EPS);
            qk_hat[at + 2u] = sums.z * inv_k / sqrt(sums.w + L2_EPS);
        }
    }
    if (tid == 0u) {
        qk_ss[row] = ss.x;
        qk_ss[layer.tokens * layer.nk + row] = ss.y;
    }
}
