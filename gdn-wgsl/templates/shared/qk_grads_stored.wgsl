// qk_norm_backward's conv outputs and where their gradients go, where conv_backward_pre runs after
// it: y read (with SiLU's slope taken there, 1 here), dy written (a token's span is not needed).

fn token_span(t: u32) -> TokenSpan {
    return TokenSpan(0u, 0u);
}

fn qk_input_grad(t: u32, c: u32, span: TokenSpan) -> vec2<f32> {
    return vec2<f32>(y[t * layer.channels + c], 1.0);
}

fn keep_qk_grad(t: u32, c: u32, d: f32) {
    dy[t * layer.channels + c] = d;
}

fn values_backward(t: u32, key: u32, tid: u32, span: TokenSpan) {}
