// The sums of chunk_lanes_subgroup.wgsl through workgroup memory, for devices without subgroups of
// 32: the same functions (lane rl ends with component (rl / 2) % 4 of vec4 rl / 8), each lane's
// partials written, then read back and summed in the same order by every lane that needs them. Two
// barriers a call: call from uniform control flow; the second lets the next call write.
var<workgroup> chunk_partials: array<vec4<f32>, THREADS * CHUNK>;
var<workgroup> chunk_sums: array<f32, THREADS>;

fn chunk_scatter_sum(tid: u32, x: array<vec4<f32>, CHUNK>) -> f32 {
    let rl = tid % ROW_LANES;
    for (var m = 0u; m < CHUNK; m = m + 1u) {
        chunk_partials[tid * CHUNK + m] = x[m];
    }
    workgroupBarrier();
    let first = tid - rl;
    var total = 0.0;
    for (var l = 0u; l < ROW_LANES; l = l + 1u) {
        total = total + chunk_partials[(first + l) * CHUNK + rl / 8u][(rl / 2u) % 4u];
    }
    workgroupBarrier();
    return total;
}

fn chunk_gather(tid: u32, e: f32) -> array<vec4<f32>, CHUNK> {
    let rl = tid % ROW_LANES;
    chunk_sums[tid] = e;
    workgroupBarrier();
    let first = tid - rl;
    var all: array<vec4<f32>, CHUNK>;
    for (var m = 0u; m < CHUNK; m = m + 1u) {
        let at = first + 8u * m;
        all[m] = vec4<f32>(chunk_sums[at], chunk_sums[at + 2u], chunk_sums[at + 4u], chunk_sums[at + 6u]);
    }
    workgroupBarrier();
    return all;
}

// token_scatter_sum of chunk_lanes_subgroup.wgsl: lane rl ends with token rl / 8's sum.
fn token_scatter_sum(tid: u32, x: vec4<f32>) -> f32 {
    let rl = tid % ROW_LANES;
    chunk_partials[tid * CHUNK] = x;
    workgroupBarrier();
    let first = tid - rl;
    var total = 0.0;
    for (var l = 0u; l < ROW_LANES; l = l + 1u) {
        total = total + chunk_partials[(first + l) * CHUNK][rl / 8u];
    }
    workgroupBarrier();
    return total;
}
