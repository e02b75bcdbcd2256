// qk_norm_conv_backward's conv outputs and where their gradients go: the pre-activation recomputed
// from the raw qkv (conv_at.wgsl), the gradients taken through SiLU into dpre here (the work of
// conv_backward_pre for the key head's channels, one dispatch fewer); v's gradient read from dy,
// where the family's backward wrote it.

// (silu(pre), silu'(pre)) at (t, c).
fn qk_input_grad(t: u32, c: u32, span: TokenSpan) -> vec2<f32> {
    let pre = conv_at(t, c, span);
    return vec2<f32>(silu(pre), silu_grad(pre));
}

fn keep_qk_grad(t: u32, c: u32, d: f32) {
    dpre[t * layer.channels + c] = d;
}

// dpre of the value channels of key head `key`'s value heads at token t.
fn values_backward(t: u32, key: u32, tid: u32, span: TokenSpan) {
    let width = layer.rep * DV;
    let v0 = first_value_channel(key);
    let row = t * layer.channels;
    for (var first = 0u; first < width; first = first + CONV_ROUND * VEC) {
        var d: array<f32, CONV_ROUND>;
        for (var l = 0u; l < CONV_ROUND; l = l + 1u) {
            let c = v0 + min(first + tid + VEC * l, width - 1u);
            d[l] = dy[row + c] * silu_grad(conv_at(t, c, span));
        }
        for (var l = 0u; l < CONV_ROUND; l = l + 1u) {
            let c = first + tid + VEC * l;
            if (c < width) {
                dpre[row + v0 + c] = d[l];
            }
        }
    }
}
