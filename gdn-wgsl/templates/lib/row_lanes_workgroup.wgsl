// The sum of `x` over a column group's ROW_LANES row lanes (invocations COLUMN_LANES apart within a
// block of ROW_LANES·COLUMN_LANES), returned to each of them, through workgroup memory: for devices
// without subgroups that wide. Two barriers: call from uniform control flow; the second lets the
// next call write.
var<workgroup> lane_values: array<vec4<f32>, THREADS>;

fn row_lanes_sum(tid: u32, x: vec4<f32>) -> vec4<f32> {
    lane_values[tid] = x;
    workgroupBarrier();
    let first = tid - ((tid / COLUMN_LANES) % ROW_LANES) * COLUMN_LANES;
    var total = vec4<f32>(0.0);
    for (var j = 0u; j < ROW_LANES; j = j + 1u) {
        total = total + lane_values[first + j * COLUMN_LANES];
    }
    workgroupBarrier();
    return total;
}
