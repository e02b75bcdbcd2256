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
