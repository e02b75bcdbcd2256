// dqkv[s, c] = Σ_j conv[c, j]·dpre[s + (kk − 1) − j, c] over targets inside s's sequence, plus,
// with a conv state, the gradient arriving at the final window slot that holds token s. The
// invocation of each sequence's first token also writes dconv_state[n, ·, c]: the taps that read each
// slot of the conv state, plus the final window's gradient for the slots it carries over (short
// sequences). One invocation per (run of tokens, channel) (conv_runs.wgsl), the channel's dpre at
// (s, s + 1, s + 2, s + 3) kept in registers: conv_input_grad(job, lid) is invocation lid of
// conv_runs.wgsl's workgroup `job`, whichever kernel's dispatch runs it (conv_backward_input's,
// or conv_backward_input_sums' with the parameter sums' partials).

// dpre at token t of channel c, zero past the batch.
fn dpre_at(t: u32, c: u32) -> f32 {
    if (t >= layer.tokens) {
        return 0.0;
    }
    return dpre[t * layer.channels + c];
}

fn conv_input_grad(job: u32, lid: u32) {
    let run = conv_run(job, lid);
    if (!conv_run_valid(run)) {
        return;
    }
    let c = run.c;
    let km1 = layer.kk - 1u;
    var window = vec4<f32>(dpre_at(run.first, c), dpre_at(run.first + 1u, c), dpre_at(run.first + 2u, c),
        dpre_at(run.first + 3u, c));
    for (var s = run.first; s < run.end; s = s + 1u) {
        let n = token_seq(s);
        let end = seq_end(n);
        var acc = 0.0;
        for (var j = 0u; j < layer.kk; j = j + 1u) {
            let target_t = s + (km1 - j);
            if (target_t < end) {
                var d = 0.0;
                if (km1 - j < CONV_WINDOW) {
                    d = component(window, km1 - j);
                } else {
                    d = dpre[target_t * layer.channels + c];
                }
                acc = acc + conv[c * layer.kk + j] * d;
            }
        }
        window = vec4<f32>(window.yzw, dpre_at(s + CONV_WINDOW, c));
        let i = s * layer.channels + c;
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
                        d = d + conv[c * layer.kk + j] * dpre[(start + k - j) * layer.channels + c];
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
