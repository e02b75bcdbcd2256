// The conv's pre-activation at one (token, channel), for the kernels that compute the conv of their
// own channels instead of a conv kernel's dispatch (conv_qk_norm_gates_products_forward,
// qk_norm_conv_backward; the plan takes them only for kk ≤ CONV_WINDOW).

// token_span.wgsl's, read once by a workgroup for every channel's taps.
fn token_span(t: u32) -> TokenSpan {
    let n = token_seq(t);
    return TokenSpan(n, seq_start(n));
}

// conv_pre's sum at (t, c) in its order, t a token of `span`'s sequence: the taps' loads issued
// together, not one under a branch each (each would be waited for before the branches join, kk load
// latencies where one does), their addresses independent of the span (so that they need not wait
// for its loads from the index); the conv state read only where the layer has one.
fn conv_at(t: u32, c: u32, span: TokenSpan) -> f32 {
    let n = span.n;
    let start = span.start;
    let km1 = layer.kk - 1u;
    let j = vec4<u32>(0u, 1u, 2u, 3u);
    let used = j < vec4<u32>(layer.kk);
    // conv_tap's rule: tap j reads token t + j − (kk − 1) inside the sequence, else slot
    // (t − start) + j of the conv state (zero without one).
    let rel = vec4<u32>(t - start) + j;
    let inside = used & (rel >= vec4<u32>(km1));
    let in_batch = used & (vec4<u32>(t) + j >= vec4<u32>(km1));
    let x_at = select(vec4<u32>(0u), (vec4<u32>(t) + j - vec4<u32>(km1)) * layer.channels + vec4<u32>(c), in_batch);
    let w_at = vec4<u32>(c * layer.kk) + min(j, vec4<u32>(km1));
    let x = vec4<f32>(qkv[x_at.x], qkv[x_at.y], qkv[x_at.z], qkv[x_at.w]);
    let w = select(vec4<f32>(0.0), vec4<f32>(conv[w_at.x], conv[w_at.y], conv[w_at.z], conv[w_at.w]), used);
    var s = vec4<f32>(0.0);
    if (layer.has_conv_state != 0u) {
        let s_at = min((vec4<u32>(n * km1) + rel) * layer.channels + vec4<u32>(c), vec4<u32>(arrayLength(&conv_state) - 1u));
        s = select(vec4<f32>(0.0), vec4<f32>(conv_state[s_at.x], conv_state[s_at.y], conv_state[s_at.z], conv_state[s_at.w]), used);
    }
    let taps = select(s, x, inside);
    var acc = 0.0;
    acc = acc + w.x * taps.x;
    acc = acc + w.y * taps.y;
    acc = acc + w.z * taps.z;
    acc = acc + w.w * taps.w;
    return acc;
}

// Channels a thread of a VEC-thread workgroup takes in one round of a key head's rep·DV value
// channels, their loads in flight together.
const CONV_ROUND: u32 = 4u;

// The first of key head `key`'s value heads' rep·DV channels (after every q and k channel).
fn first_value_channel(key: u32) -> u32 {
    return 2u * layer.nk * DK + key * layer.rep * DV;
}
