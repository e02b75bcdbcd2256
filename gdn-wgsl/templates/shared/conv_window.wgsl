// The raw values of the last CONV_WINDOW tokens of a channel in registers, for the conv kernels that
// walk runs of tokens (conv_runs.wgsl). A tap reaching before the token's sequence reads the conv
// state (conv_tap.wgsl) exactly as the unwindowed form does, with the same arithmetic in the same
// order, so that results do not depend on where a run starts.

// Element `back` (0 the newest) of the window (x[t − 3], x[t − 2], x[t − 1], x[t]).
fn window_at(window: vec4<f32>, back: u32) -> f32 {
    return component(window, CONV_WINDOW - 1u - back);
}

// The window as it stands before token `first` of channel c: (·, x[first − 3], x[first − 2],
// x[first − 1]), whatever sequence those belong to (the taps use them only inside their own); the
// first token shifts itself in.
fn window_before(first: u32, c: u32) -> vec4<f32> {
    // Tokens before the batch's first read token 0, masked: loads under branches would each be
    // waited for before the branches join, three load latencies where one does.
    let back = vec3<u32>(3u, 2u, 1u);
    let inside = vec3<u32>(first) >= back;
    let at = select(vec3<u32>(0u), vec3<u32>(first) - back, inside) * layer.channels + vec3<u32>(c);
    let x = vec3<f32>(qkv[at.x], qkv[at.y], qkv[at.z]);
    return vec4<f32>(0.0, select(vec3<f32>(0.0), x, inside));
}

// The raw value tap j of the conv at token t reads (conv_tap), from the window where it holds it.
fn windowed_tap(n: u32, start: u32, t: u32, j: u32, c: u32, window: vec4<f32>) -> f32 {
    let back = layer.kk - 1u - j;
    if (back < CONV_WINDOW && t - start >= back) {
        return window_at(window, back);
    }
    return conv_tap(n, start, t, j, c);
}
