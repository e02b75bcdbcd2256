// Sums over the VEC threads of a workgroup (VEC a power of two), returned to every thread.
// Call from uniform control flow; the scratch is free again when it returns.

var<workgroup> row_sum_scratch: array<vec4<f32>, VEC>;

fn row_sum4(tid: u32, value: vec4<f32>) -> vec4<f32> {
    row_sum_scratch[tid] = value;
    workgroupBarrier();
    for (var stride = VEC / 2u; stride > 0u; stride = stride / 2u) {
        if (tid < stride) {
            row_sum_scratch[tid] = row_sum_scratch[tid] + row_sum_scratch[tid + stride];
        }
        workgroupBarrier();
    }
    let total = row_sum_scratch[0];
    workgroupBarrier();
    return total;
}

fn row_sum2(tid: u32, value: vec2<f32>) -> vec2<f32> {
    return row_sum4(tid, vec4<f32>(value, 0.0, 0.0)).xy;
}
