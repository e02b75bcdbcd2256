// Partial sums of dconv[c, j] = Σ_t dpre[t, c]·qkv[t − (kk − 1) + j, c] (sources inside t's
// sequence): column col = c·kk + j, rows are tokens. Workgroup (x: COLUMNS columns, y: row block);
// writes partial[block, col], summed by column_sum_finish.

@compute @workgroup_size(COLUMNS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let col = wg.x * COLUMNS + lid;
    let block = wg.y;
    if (col >= reduce.cols) {
        return;
    }
    let c = col / layer.kk;
    let back = layer.kk - 1u - col % layer.kk;
    let first = block * reduce.rows_per_block;
    let last = min(first + reduce.rows_per_block, reduce.rows);
    var acc = 0.0;
    for (var t = first; t < last; t = t + 1u) {
        if (t >= seq_start(token_seq(t)) + back) {
            acc = acc + dpre[t * layer.channels + c] * qkv[(t - back) * layer.channels + c];
        }
    }
    partial[block * reduce.cols + col] = acc;
}
