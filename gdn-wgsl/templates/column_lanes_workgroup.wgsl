// The sum of `x` over the COLUMN_LANES column lanes of a row lane (consecutive invocations), returned
// to each of them, through workgroup memory: for devices without subgroups that wide. Two barriers:
// call from uniform control flow; the second lets the next call write.
var<workgroup> column_values: array<vec4<f32>, THREADS>;

fn column_lanes_sum(tid: u32, x: vec4<f32>) -> vec4<f32> {
    column_values[tid] = x;
    workgroupBarrier();
    let first = tid - tid % COLUMN_LANES;
    var total = vec4<f32>(0.0);
    for (var j = 0u; j < COLUMN_LANES; j = j + 1u) {
        total = total + column_values[first + j];
    }
    workgroupBarrier();
    return total;
}
