// The parameter gradients dconv, dnorm, da_log and ddt_bias, every one in this dispatch, from their
// partial column sums (column_sums.wgsl's layout): total[col] = Σ_block partial[block, col].
// One invocation per (sum, column), COLUMNS a workgroup, the grid folded.

@compute @workgroup_size(COLUMNS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let x = sum_job(folded(wg, nwg), JOBS_FINISH);
    let r = sum_shape(x.which);
    let col = x.job * COLUMNS + lid;
    if (col >= r.cols) {
        return;
    }
    var acc = 0.0;
    for (var block = 0u; block < r.blocks; block = block + 1u) {
        acc = acc + partial[r.partial_at + block * r.cols + col];
    }
    write_total(x.which, col, acc);
}
