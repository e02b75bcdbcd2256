// The sum of `x` over the COLUMN_LANES column lanes of a row lane (consecutive invocations within a
// block of ROW_LANES·COLUMN_LANES), returned to each of them, through subgroup shuffles: the host
// takes this kernel only where subgroups have at least the block's invocations.
fn column_lanes_sum(tid: u32, x: vec4<f32>) -> vec4<f32> {
    var total = x;
    for (var offset = 1u; offset < COLUMN_LANES; offset = offset * 2u) {
        total = total + subgroupShuffleXor(total, offset);
    }
    return total;
}
