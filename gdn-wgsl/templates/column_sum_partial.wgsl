// Partial column sums of a row-major matrix src[rows, cols]. Workgroup (COLUMNS columns, row
// block), column groups fastest, the grid folded; writes partial[block, col], summed by
// column_sum_finish. Fixed order: deterministic.

@compute @workgroup_size(COLUMNS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let groups = (reduce.cols + COLUMNS - 1u) / COLUMNS;
    let job = folded(wg, nwg);
    let block = job / groups;
    let col = (job % groups) * COLUMNS + lid;
    if (block >= reduce.blocks || col >= reduce.cols) {
        return;
    }
    let first = block * reduce.rows_per_block;
    let last = min(first + reduce.rows_per_block, reduce.rows);
    var acc = 0.0;
    for (var row = first; row < last; row = row + 1u) {
        acc = acc + src[row * reduce.cols + col];
    }
    partial[block * reduce.cols + col] = acc;
}
