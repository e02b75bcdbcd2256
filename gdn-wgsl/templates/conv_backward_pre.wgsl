// dpre[t, c] = dy[t, c]·silu'(pre[t, c]), the pre-activation recomputed.
// One invocation per (run of tokens, channel) (conv_runs.wgsl); grid folded, ELEMENTS invocations.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let run = conv_run(folded(wg, nwg), lid);
    if (!conv_run_valid(run)) {
        return;
    }
    let c = run.c;
    var window = window_before(run.first, c);
    let raw = raw_run(run.first, c);
    var grads: array<f32, CONV_RUN>;
    for (var i = 0u; i < CONV_RUN; i = i + 1u) {
        grads[i] = dy[min(run.first + i, layer.tokens - 1u) * layer.channels + c];
    }
    for (var i = 0u; i < CONV_RUN; i = i + 1u) {
        let t = run.first + i;
        if (t < run.end) {
            window = vec4<f32>(window.yzw, raw[i]);
            let n = token_seq(t);
            dpre[t * layer.channels + c] = grads[i] * silu_grad(conv_pre_windowed(n, seq_start(n), t, c, window));
        }
    }
}
