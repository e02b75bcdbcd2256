// Partial sums of dconv[c, j] = Σ_t dpre[t, c]·x[t − (kk − 1) + j, c], positions before t's
// sequence start read from its conv state (or zero): column col = c·kk + j, rows are tokens.
// Workgroup (COLUMNS columns, row block), column groups fastest, the grid folded; writes
// partial[block, col], totalled by column_sums_finish.

@compute @workgroup_size(COLUMNS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let groups = (reduce_dconv.cols + COLUMNS - 1u) / COLUMNS;
    let job = folded(wg, nwg);
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
