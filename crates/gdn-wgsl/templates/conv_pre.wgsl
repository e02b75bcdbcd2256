// The conv's pre-activation at (t, c), reading zeros before the start of t's sequence.
fn conv_pre(t: u32, c: u32) -> f32 {
    let start = seq_start(token_seq(t));
    var acc = 0.0;
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        let back = layer.kk - 1u - j;
        if (t >= start + back) {
            acc = acc + conv[c * layer.kk + j] * qkv[(t - back) * layer.channels + c];
        }
    }
    return acc;
}
