// total[col] = Σ_block partial[block, col]. One thread per column; COLUMNS threads per workgroup,
// the grid folded.

@compute @workgroup_size(COLUMNS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let col = folded(wg, nwg) * COLUMNS + lid;
    if (col >= reduce.cols) {
        return;
    }
    var acc = 0.0;
    for (var block = 0u; block < reduce.blocks; block = block + 1u) {
        acc = acc + partial[block * reduce.cols + col];
    }
    total[col] = acc;
}
