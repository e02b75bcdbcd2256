// Causal depthwise conv + SiLU: y[t, c] = silu(Σ_j conv[c, j]·x[t − (kk − 1) + j, c]), positions
// before t's sequence start read its conv state (or zero). With a conv state, the invocation of each
// sequence's last token also writes the sequence's final window [seqs, kk − 1, C] for channel c:
// its last kk − 1 raw tokens, reaching into the old state when it is shorter.
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
        let start = seq_start(n);
        y[t * layer.channels + c] = silu(conv_pre_windowed(n, start, t, c, window));
        if (layer.has_conv_state != 0u) {
            let end = seq_end(n);
            if (t + 1u == end) {
                let km1 = layer.kk - 1u;
                for (var s = 0u; s < km1; s = s + 1u) {
                    final_conv_state[(n * km1 + s) * layer.channels + c] = conv_tap(n, start, end, s, c);
                }
            }
        }
    }
}
