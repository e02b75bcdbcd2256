// Partial sums of dconv[c, j] = Σ_t dpre[t, c]·x[t − (kk − 1) + j, c] for kk ≤ CONV_WINDOW, positions
// before t's sequence start read from its conv state (or zero): every tap of a channel in one
// invocation, the raw values in a window (conv_runs.wgsl), so that each is read once. Columns are
// col = c·kk + j and rows tokens, as dconv_partial's (which takes kk > CONV_WINDOW).
// Job `job` of the sum's (COLUMNS channels, row block), channel groups fastest (partial_groups(0u)
// of them a block), invocation lid its channel; writes partial[block, col] (column_sums.wgsl's
// layout), totalled by column_sums_finish.
fn dconv_window_partial(job: u32, lid: u32) {
    let groups = partial_groups(0u);
    let block = job / groups;
    let c = (job % groups) * COLUMNS + lid;
    if (block >= reduce_dconv.blocks || c >= layer.channels) {
        return;
    }
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
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        partial[reduce_dconv.partial_at + block * reduce_dconv.cols + c * layer.kk + j] = component(acc, j);
    }
}
