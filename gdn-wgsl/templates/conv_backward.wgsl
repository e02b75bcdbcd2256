// The conv's backward but for dconv, in one dispatch: dpre[t, c] = dy[t, c]·silu'(pre[t, c]) (the
// pre-activation recomputed), written for dconv's sums, and the input gradient
// dqkv[s, c] = Σ_j conv[c, j]·dpre[s + (kk − 1) − j, c] over targets inside s's sequence, plus,
// with a conv state, the gradient arriving at the final window slot that holds token s. The
// invocation of each sequence's first token also writes dconv_state[n, ·, c]: the taps that read
// each slot of the conv state, plus the final window's gradient for the slots it carries over
// (short sequences).
// Each invocation computes the dpre its tokens' taps reach, not only its own, instead of reading
// them from a pass before: the run's and CONV_WINDOW − 1 after it in a window of registers (the
// raw values for their pre-activations in another), taps further on (kk > CONV_WINDOW) as needed.
// A run that recomputes three tokens' dpre costs less than a second pass over the batch (short
// batches take one token an invocation). dpre is the same arithmetic wherever it is computed
// (conv_window.wgsl), so every invocation sees the values the dconv sums read.
// One invocation per (run of tokens, channel) (conv_runs.wgsl); grid folded, ELEMENTS invocations.

// Raw value of token t of channel c, zero past the batch.
fn raw_at(t: u32, c: u32) -> f32 {
    if (t >= layer.tokens) {
        return 0.0;
    }
    return qkv[t * layer.channels + c];
}

// dpre at token t of channel c from the raw window (x[t − 3], …, x[t]); zero past the batch.
fn dpre_windowed(t: u32, c: u32, window: vec4<f32>) -> f32 {
    if (t >= layer.tokens) {
        return 0.0;
    }
    let n = token_seq(t);
    return dy[t * layer.channels + c] * silu_grad(conv_pre_windowed(n, seq_start(n), t, c, window));
}

// dpre at token s + ahead of channel c: from the window (dpre[s], …, dpre[s + 3]) where it holds
// it, else computed; zero past the batch.
fn dpre_ahead(s: u32, ahead: u32, c: u32, near: vec4<f32>) -> f32 {
    if (ahead < CONV_WINDOW) {
        return component(near, ahead);
    }
    let t = s + ahead;
    if (t >= layer.tokens) {
        return 0.0;
    }
    return dy[t * layer.channels + c] * silu_grad(conv_pre(t, c));
}

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let run = conv_run(folded(wg, nwg), lid);
    if (!conv_run_valid(run)) {
        return;
    }
    let c = run.c;
    let km1 = layer.kk - 1u;
    // The raw window ending at token first + 3 and dpre at first … first + 3.
    var raw = window_before(run.first, c);
    var near = vec4<f32>();
    for (var ahead = 0u; ahead < CONV_WINDOW; ahead = ahead + 1u) {
        let t = run.first + ahead;
        raw = vec4<f32>(raw.yzw, raw_at(t, c));
        near = vec4<f32>(near.yzw, dpre_windowed(t, c, raw));
    }
    for (var s = run.first; s < run.end; s = s + 1u) {
        if (s > run.first) {
            let t = s + CONV_WINDOW - 1u;
            raw = vec4<f32>(raw.yzw, raw_at(t, c));
            near = vec4<f32>(near.yzw, dpre_windowed(t, c, raw));
        }
        let i = s * layer.channels + c;
        dpre[i] = near.x;
        let n = token_seq(s);
        let end = seq_end(n);
        var acc = 0.0;
        for (var j = 0u; j < layer.kk; j = j + 1u) {
            if (s + km1 - j < end) {
                acc = acc + conv[c * layer.kk + j] * dpre_ahead(s, km1 - j, c, near);
            }
        }
        if (layer.has_conv_state == 0u) {
            dqkv[i] = acc;
            continue;
        }
        if (end - s <= km1) {
            acc = acc + dfinal_conv_state[(n * km1 + km1 - (end - s)) * layer.channels + c];
        }
        dqkv[i] = acc;
        let start = seq_start(n);
        if (s == start) {
            let len = end - start;
            for (var k = 0u; k < km1; k = k + 1u) {
                var d = 0.0;
                // Tap j of the conv at token start + k − j reads slot k.
                for (var j = 0u; j <= k; j = j + 1u) {
                    if (k - j < len) {
                        d = d + conv[c * layer.kk + j] * dpre_ahead(start, k - j, c, near);
                    }
                }
                if (k >= len) {
                    d = d + dfinal_conv_state[(n * km1 + k - len) * layer.channels + c];
                }
                dconv_state[(n * km1 + k) * layer.channels + c] = d;
            }
        }
    }
}
