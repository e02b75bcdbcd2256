// Causal depthwise conv + SiLU: y[t, c] = silu(Σ_j conv[c, j]·qkv[t − (kk − 1) + j, c]) over
// positions inside t's sequence. One thread per (token, channel); grid folded, ELEMENTS threads.

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
}
