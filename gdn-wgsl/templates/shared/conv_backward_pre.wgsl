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
    for (var t = run.first; t < run.end; t = t + 1u) {
        window = vec4<f32>(window.yzw, qkv[t * layer.channels + c]);
        let n = token_seq(t);
        let i = t * layer.channels + c;
        dpre[i] = dy[i] * silu_grad(conv_pre_windowed(n, seq_start(n), t, c, window));
    }
}
