// Causal depthwise conv + SiLU: y[t, c] = silu(Σ_j conv[c, j]·x[t − (kk − 1) + j, c]), positions
// before t's sequence start read its conv state (or zero). With a conv state, the thread of each
// sequence's last token also writes the sequence's final window [seqs, kk − 1, C] for channel c:
// its last kk − 1 raw tokens, reaching into the old state when it is shorter.
// One thread per (token, channel); grid folded, ELEMENTS threads.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = folded(wg, nwg) * ELEMENTS + lid;
    if (i >= layer.tokens * layer.channels) {
        return;
    }
    let t = i / layer.channels;
    let c = i % layer.channels;
    y[i] = silu(conv_pre(t, c));
    if (layer.has_conv_state == 0u) {
        return;
    }
    let n = token_seq(t);
    let end = seq_end(n);
    if (t + 1u == end) {
        let km1 = layer.kk - 1u;
        for (var s = 0u; s < km1; s = s + 1u) {
            final_conv_state[(n * km1 + s) * layer.channels + c] = conv_tap(n, seq_start(n), end, s, c);
        }
    }
}
