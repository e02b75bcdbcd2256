// The conv's pre-activations at (t, c … c + 3), reading the conv state (or zeros) before t's
// sequence start.
fn conv_pre(t: u32, c: u32) -> vec4<f32> {
    let n = token_seq(t);
    let start = seq_start(n);
    var acc = vec4<f32>();
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        acc = acc + conv_weights(c, j) * conv_taps(n, start, t, j, c);
    }
    return acc;
}
