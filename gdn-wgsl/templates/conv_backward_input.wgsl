// dqkv[s, c] = Σ_j conv[c, j]·dpre[s + (kk − 1) − j, c] over targets inside s's sequence, plus,
// with a conv state, the gradient arriving at the final window slot that holds token s. The thread
// of each sequence's first token also writes dconv_state[n, ·, c]: the taps that read each slot of
// the conv state, plus the final window's gradient for the slots it carries over (short sequences).
// One thread per (token, CONV_GROUP channels); grid folded, ELEMENTS threads.

fn dpre_at(t: u32, c: u32) -> vec4<f32> {
    let at = t * layer.channels + c;
    return vec4<f32>(dpre[at], dpre[at + 1u], dpre[at + 2u], dpre[at + 3u]);
}

// Slot k of sequence n's final-window gradient, channels c … c + 3.
fn dfinal_at(n: u32, k: u32, c: u32) -> vec4<f32> {
    let at = (n * (layer.kk - 1u) + k) * layer.channels + c;
    return vec4<f32>(dfinal_conv_state[at], dfinal_conv_state[at + 1u], dfinal_conv_state[at + 2u],
        dfinal_conv_state[at + 3u]);
}

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (folded(wg, nwg) * ELEMENTS + lid) * CONV_GROUP;
    if (i >= layer.tokens * layer.channels) {
        return;
    }
    let s = i / layer.channels;
    let c = i % layer.channels;
    let n = token_seq(s);
    let end = seq_end(n);
    let km1 = layer.kk - 1u;
    var acc = vec4<f32>();
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        let target_t = s + (km1 - j);
        if (target_t < end) {
            acc = acc + conv_weights(c, j) * dpre_at(target_t, c);
        }
    }
    if (layer.has_conv_state != 0u && end - s <= km1) {
        acc = acc + dfinal_at(n, km1 - (end - s), c);
    }
    dqkv[i] = acc.x;
    dqkv[i + 1u] = acc.y;
    dqkv[i + 2u] = acc.z;
    dqkv[i + 3u] = acc.w;
    let start = seq_start(n);
    if (layer.has_conv_state == 0u || s != start) {
        return;
    }
    let len = end - start;
    for (var k = 0u; k < km1; k = k + 1u) {
        var d = vec4<f32>();
        // Tap j of the conv at token start + k − j reads slot k.
        for (var j = 0u; j <= k; j = j + 1u) {
            if (k - j < len) {
                d = d + conv_weights(c, j) * dpre_at(start + k - j, c);
            }
        }
        if (k >= len) {
            d = d + dfinal_at(n, k - len, c);
        }
        let at = (n * km1 + k) * layer.channels + c;
        dconv_state[at] = d.x;
        dconv_state[at + 1u] = d.y;
        dconv_state[at + 2u] = d.z;
        dconv_state[at + 3u] = d.w;
    }
}
