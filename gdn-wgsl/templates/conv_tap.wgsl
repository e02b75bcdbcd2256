// The raw value tap j of the conv at token t reads, t in sequence n that starts at token `start`
// (t may be the sequence's end, for its final window): token t + j − (kk − 1) when inside the
// sequence, else slot (t − start) + j of its conv state [seqs, kk − 1, C] (zero without one).
fn conv_tap(n: u32, start: u32, t: u32, j: u32, c: u32) -> f32 {
    let km1 = layer.kk - 1u;
    let rel = t - start + j;
    if (rel >= km1) {
        return qkv[(t + j - km1) * layer.channels + c];
    }
    if (layer.has_conv_state != 0u) {
        return conv_state[(n * km1 + rel) * layer.channels + c];
    }
    return 0.0;
}

// conv_tap for the CONV_GROUP channels c … c + CONV_GROUP − 1 (c a multiple of CONV_GROUP).
fn conv_taps(n: u32, start: u32, t: u32, j: u32, c: u32) -> vec4<f32> {
    let km1 = layer.kk - 1u;
    let rel = t - start + j;
    if (rel >= km1) {
        let at = (t + j - km1) * layer.channels + c;
        return vec4<f32>(qkv[at], qkv[at + 1u], qkv[at + 2u], qkv[at + 3u]);
    }
    if (layer.has_conv_state != 0u) {
        let at = (n * km1 + rel) * layer.channels + c;
        return vec4<f32>(conv_state[at], conv_state[at + 1u], conv_state[at + 2u], conv_state[at + 3u]);
    }
    return vec4<f32>();
}
