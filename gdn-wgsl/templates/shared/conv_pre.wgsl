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

// conv_pre at (t, c) of sequence n starting at `start`, with the window (x[t − 3], …, x[t])
// (conv_runs.wgsl): the same arithmetic in the same order.
fn conv_pre_windowed(n: u32, start: u32, t: u32, c: u32, window: vec4<f32>) -> f32 {
    var acc = 0.0;
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        acc = acc + conv[c * layer.kk + j] * windowed_tap(n, start, t, j, c, window);
    }
    return acc;
}
