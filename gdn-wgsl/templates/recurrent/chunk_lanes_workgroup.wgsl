// The sums of chunk_lanes_subgroup.wgsl through workgroup memory, for devices without subgroups of
// 32: each lane's values written, then read back and summed in the same order by every lane that
// needs them. Two barriers a call: call from uniform control flow; the second lets the next call
// write.
var<workgroup> chunk_partials: array<vec4<f32>, THREADS>;

fn chunk_row_sum(tid: u32, x: vec4<f32>) -> vec4<f32> {
    let rl = tid % ROW_LANES;
    chunk_partials[tid] = x;
    workgroupBarrier();
    let first = tid - rl;
    var total = vec4<f32>(0.0);
    for (var l = 0u; l < ROW_LANES; l = l + 1u) {
        total = total + chunk_partials[first + l];
    }
    workgroupBarrier();
    return total;
}

fn token_scatter_sum(tid: u32, x: vec4<f32>) -> f32 {
    let rl = tid % ROW_LANES;
    chunk_partials[tid] = x;
    workgroupBarrier();
    let first = tid - rl;
    var total = 0.0;
    for (var l = 0u; l < ROW_LANES; l = l + 1u) {
        total = total + chunk_partials[first + l][rl / 8u];
    }
    workgroupBarrier();
    return total;
}
