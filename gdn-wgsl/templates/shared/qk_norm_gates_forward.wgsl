// L2 norms of q and k per (token, key head): q̂ = q / (sqrt(Σq² + ε₂)·sqrt(DK)), k̂ = k / sqrt(Σk² + ε₂),
// keeping Σq² + ε₂ and Σk² + ε₂ for the backward; and the gates of the key head's value heads at
// that token: ℓ = ln g = −exp(a_log)·softplus(a + dt_bias) (in log space, capped: math.wgsl's
// log_decay), β = σ(b), with their derivatives for the backward (gate_values.wgsl). One workgroup
// of VEC threads (at least DK: the host's qk_norm_forward_threads) per (token, key head), thread m
// holding element m of q and of k: the gates share its dispatch (a pass of their own cost S4 more
// than its 512 values are worth: BENCHMARKS.md, S4).
// With KEY_PRODUCTS (the chunk-solved recurrences), also k̂_t·k̂_{t−m} for m = 1, 2, 3, from the
// same loads: the recurrences' chunks of four tokens need them, and would otherwise sum them over
// the rows in every workgroup of every column block. Where t − m is before t's sequence (or the
// batch), the product is with the sequence's first token: finite, and never read.
// Its inputs, the conv's outputs y, come through qk_input (qk_inputs_stored.wgsl: read from y,
// which conv_forward wrote; qk_inputs_conv.wgsl: the conv computed here, y written here).

const L2_EPS: f32 = 1e-6;

// Token t − m, or the first of t's sequence where that is before it (`span`'s start: 0 where the
// inputs are read from y, which holds every token).
fn earlier(t: u32, m: u32, span: TokenSpan) -> u32 {
    return max(t, span.start + m) - m;
}

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let row = folded(wg, nwg);
    if (row >= layer.tokens * layer.nk) {
        return;
    }
    let t = row / layer.nk;
    let i = row % layer.nk;
    let span = token_span(t);
    convolve_values(t, i, tid, span);
    let q_c = i * DK;
    let k_c = q_c + layer.nk * DK;
    // This thread's element m = tid of q and of k (VEC ≥ DK: threads past DK read DK − 1 and
    // count zero), loaded before the gates are stored so that the loads wait once, under the gates'
    // work.
    let m = min(tid, DK - 1u);
    let live = f32(tid < DK);
    let q = qk_input(t, q_c + m, span);
    let k = qk_input(t, k_c + m, span);
    var k1 = 0.0;
    var k2 = 0.0;
    var k3 = 0.0;
    if (KEY_PRODUCTS == 1u) {
        k1 = qk_input(earlier(t, 1u, span), k_c + m, span);
        k2 = qk_input(earlier(t, 2u, span), k_c + m, span);
        k3 = qk_input(earlier(t, 3u, span), k_c + m, span);
    }
    for (var r = tid; r < layer.rep; r = r + VEC) {
        let h = i * layer.rep + r;
        let e = t * layer.nv + h;
        let arg = a[e] + dt_bias[h];
        let ell = log_decay(a_log[h], arg);
        let beta = sigmoid(b[e]);
        // ∂ℓ/∂arg = −exp(a_log + ln σ(arg)), whose exponent is at most ℓ's (σ ≤ softplus), so
        // finite below the cap; at the cap ℓ is constant and both its derivatives are 0. 1 − β is
        // σ(−b), which does not cancel in f32 when β → 1.
        let open = log_decay_exponent(a_log[h], arg) < LOG_DECAY_CAP;
        let n = layer.tokens * layer.nv;
        gates[e] = ell;
        gates[n + e] = beta;
        gates[2u * n + e] = beta * sigmoid(-b[e]);
        gates[3u * n + e] = select(0.0, -exp(a_log[h] - softplus(-arg)), open);
        gates[4u * n + e] = select(0.0, ell, open);
    }
    let sq = live * vec2<f32>(q * q, k * k);
    // Σ k_t·k_{t−m} and Σ k_{t−m}², m = 1 and 2, then 3.
    var near = vec4<f32>(0.0);
    var far = vec2<f32>(0.0);
    if (KEY_PRODUCTS == 1u) {
        near = live * vec4<f32>(k * k1, k1 * k1, k * k2, k2 * k2);
        far = live * vec2<f32>(k * k3, k3 * k3);
    }
    let sums = row_sum4(tid, vec4<f32>(sq, far));
    let ss = sums.xy + vec2<f32>(L2_EPS);
    let inv_q = 1.0 / (sqrt(ss.x) * sqrt(f32(DK)));
    let inv_k = 1.0 / sqrt(ss.y);
    if (tid < DK) {
        qk_hat[hat_at(0u, t, i) + m] = q * inv_q;
        qk_hat[hat_at(1u, t, i) + m] = k * inv_k;
        keep_qk_input(t, q_c + m, q);
        keep_qk_input(t, k_c + m, k);
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
        gates[qk_ss_at(0u, row)] = ss.x;
        gates[qk_ss_at(1u, row)] = ss.y;
    }
}
