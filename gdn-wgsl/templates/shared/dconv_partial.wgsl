// The sum of dconv[c, j] = Σ_t dpre[t, c]·x[t − (kk − 1) + j, c] over one block of rows (tokens) of
// reduce_dconv, positions before t's sequence start read from its conv state (or zero), for column
// col = c·kk + j. For kk > CONV_WINDOW (dconv_window.wgsl takes the others). The caller keeps
// block and col in range.
fn dconv_tap_block(block: u32, col: u32) -> f32 {
    let c = col / layer.kk;
    let j = col % layer.kk;
    let first = block * reduce_dconv.rows_per_block;
    let last = min(first + reduce_dconv.rows_per_block, reduce_dconv.rows);
    var acc = 0.0;
    for (var t = first; t < last; t = t + 1u) {
        let n = token_seq(t);
        acc = acc + dpre[t * layer.channels + c] * conv_tap(n, seq_start(n), t, j, c);
    }
    return acc;
}
