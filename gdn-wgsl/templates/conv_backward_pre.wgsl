// dpre[t, c] = dy[t, c]·silu'(pre[t, c]), the pre-activation recomputed.
// One thread per (token, channel); grid folded, ELEMENTS threads.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = folded(wg, nwg) * ELEMENTS + lid;
    if (i >= layer.tokens * layer.channels) {
        return;
    }
    dpre[i] = dy[i] * silu_grad(conv_pre(i / layer.channels, i % layer.channels));
}
