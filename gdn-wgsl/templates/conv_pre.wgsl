// The conv's pre-activation at (t, c), reading the conv state (or zeros) before t's sequence start.
fn conv_pre(t: u32, c: u32) -> f32 {
    let n = token_seq(t);
    let start = seq_start(n);
    var acc = 0.0;
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        acc = acc + conv[c * layer.kk + j] * conv_tap(n, start, t, j, c);
    }
    return acc;
}
