// conv_qk_norm_gates_products_forward's inputs: the conv and its SiLU computed here from the raw
// qkv (conv_at.wgsl; the work of conv_forward, one dispatch fewer), y written for the recurrence
// (v) and the backward. Each (token, key head) computes its q and k channels (and k's at the three
// tokens before, for the key products) and its value heads' v channels; the workgroup of a
// sequence's last token writes the final conv window of those channels.

fn qk_input(t: u32, c: u32, span: TokenSpan) -> f32 {
    return silu(conv_at(t, c, span));
}

fn keep_qk_input(t: u32, c: u32, x: f32) {
    y[t * layer.channels + c] = x;
}

// y of the value channels of key head `key`'s value heads at token t; and, where t ends its
// sequence and the layer has a conv state, the sequence's final window (its last kk − 1 raw
// tokens, conv_forward's rule) of every channel of the key head: its q, k and v.
fn convolve_values(t: u32, key: u32, tid: u32, span: TokenSpan) {
    let width = layer.rep * DV;
    let v0 = first_value_channel(key);
    for (var first = 0u; first < width; first = first + CONV_ROUND * VEC) {
        var out: array<f32, CONV_ROUND>;
        for (var l = 0u; l < CONV_ROUND; l = l + 1u) {
            out[l] = silu(conv_at(t, v0 + min(first + tid + VEC * l, width - 1u), span));
        }
        for (var l = 0u; l < CONV_ROUND; l = l + 1u) {
            let c = first + tid + VEC * l;
            if (c < width) {
                y[t * layer.channels + v0 + c] = out[l];
            }
        }
    }
    let n = span.n;
    let end = seq_end(n);
    if (layer.has_conv_state == 0u || t + 1u != end) {
        return;
    }
    let start = span.start;
    let km1 = layer.kk - 1u;
    for (var e = tid; e < 2u * DK + width; e = e + VEC) {
        let c = select(v0 + e - 2u * DK, key * DK + e % DK + (e / DK) * layer.nk * DK, e < 2u * DK);
        for (var s = 0u; s < km1; s = s + 1u) {
            final_conv_state[(n * km1 + s) * layer.channels + c] = conv_tap(n, start, end, s, c);
        }
    }
}
