// qk_norm_gates_forward's inputs where conv_forward ran before it: read from y (a token's span is
// not needed).

fn token_span(t: u32) -> TokenSpan {
    return TokenSpan(0u, 0u);
}

fn qk_input(t: u32, c: u32, span: TokenSpan) -> f32 {
    return y[t * layer.channels + c];
}

fn keep_qk_input(t: u32, c: u32, x: f32) {}

fn convolve_values(t: u32, key: u32, tid: u32, span: TokenSpan) {}
