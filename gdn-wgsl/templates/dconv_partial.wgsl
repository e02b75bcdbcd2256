// Partial sums of dconv[c, j] = Σ_t dpre[t, c]·x[t − (kk − 1) + j, c], positions before t's
// sequence start read from its conv state (or zero): column col = c·kk + j, rows are tokens.
// For kk > CONV_WINDOW. Job `job` of the sum's (COLUMNS columns, row block), column groups fastest
// (partial_groups(0u) of them a block), invocation lid its column; writes partial[block, col]
// (column_sums.wgsl's layout), totalled by column_sums_finish.
fn dconv_tap_partial(job: u32, lid: u32) {
    let groups = partial_groups(0u);
    let block = job / groups;
    let col = (job % groups) * COLUMNS + lid;
    if (block >= reduce_dconv.blocks || col >= reduce_dconv.cols) {
        return;
    }
    let c = col / layer.kk;
    let j = col % layer.kk;
    let first = block * reduce_dconv.rows_per_block;
    let last = min(first + reduce_dconv.rows_per_block, reduce_dconv.rows);
    var acc = 0.0;
    for (var t = first; t < last; t = t + 1u) {
        let n = token_seq(t);
        acc = acc + dpre[t * layer.channels + c] * conv_tap(n, seq_start(n), t, j, c);
    }
    partial[reduce_dconv.partial_at + block * reduce_dconv.cols + col] = acc;
}
