// The sum of `x` over a column group's ROW_LANES row lanes (invocations COLUMN_LANES apart within a
// block of ROW_LANES·COLUMN_LANES), returned to each of them, through subgroup shuffles: the block
// lies within one subgroup (the host takes this kernel only where subgroups have at least
// ROW_LANES·COLUMN_LANES invocations, consecutive in the workgroup). The butterfly gives every lane
// the same sum: each step adds the same two partials in either order.
fn row_lanes_sum(tid: u32, x: vec4<f32>) -> vec4<f32> {
    var total = x;
    for (var offset = COLUMN_LANES; offset < ROW_LANES * COLUMN_LANES; offset = offset * 2u) {
        total = total + subgroupShuffleXor(total, offset);
    }
    return total;
}
