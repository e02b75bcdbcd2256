// The sums of dconv[c, j] = Σ_t dpre[t, c]·x[t − (kk − 1) + j, c] over one block of rows (tokens) of
// reduce_dconv, for kk ≤ CONV_WINDOW, positions before t's sequence start read from its conv state
// (or zero): every tap of channel c in one invocation (tap j in component j), the raw values in a
// window (conv_runs.wgsl), so that each is read once. Columns of the sum are col = c·kk + j, as
// dconv_partial's (which takes kk > CONV_WINDOW). The caller keeps block and c in range.
fn dconv_window_block(block: u32, c: u32) -> vec4<f32> {
    let first = block * reduce_dconv.rows_per_block;
    let last = min(first + reduce_dconv.rows_per_block, reduce_dconv.rows);
    var window = window_before(first, c);
    var acc = vec4<f32>();
    // The sequence of t, looked up again only where t reaches the end of the one before: a lookup
    // every token would put two dependent loads (and the branch on them) into every token's chain.
    var n = token_seq(first);
    var start = seq_start(n);
    var end = seq_end(n);
    for (var t = first; t < last; t = t + 1u) {
        window = vec4<f32>(window.yzw, qkv[t * layer.channels + c]);
        if (t >= end) {
            n = token_seq(t);
            start = seq_start(n);
            end = seq_end(n);
        }
        var taps = vec4<f32>();
        for (var j = 0u; j < layer.kk; j = j + 1u) {
            let tap = windowed_tap(n, start, t, j, c, window);
            taps = select(taps, vec4<f32>(tap), vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(j));
        }
        acc = acc + dpre[t * layer.channels + c] * taps;
    }
    return acc;
}
