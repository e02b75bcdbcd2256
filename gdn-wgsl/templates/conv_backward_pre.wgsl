// dpre[t, c] = dy[t, c]·silu'(pre[t, c]), the pre-activation recomputed.
// One thread per (token, CONV_GROUP channels); grid folded, ELEMENTS threads.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (folded(wg, nwg) * ELEMENTS + lid) * CONV_GROUP;
    if (i >= layer.tokens * layer.channels) {
        return;
    }
    let pre = conv_pre(i / layer.channels, i % layer.channels);
    dpre[i] = dy[i] * silu_grad(pre.x);
    dpre[i + 1u] = dy[i + 1u] * silu_grad(pre.y);
    dpre[i + 2u] = dy[i + 2u] * silu_grad(pre.z);
    dpre[i + 3u] = dy[i + 3u] * silu_grad(pre.w);
}
