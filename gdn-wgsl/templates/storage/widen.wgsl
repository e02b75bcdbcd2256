// Half-precision storage, at the layer's edge: a tensor the caller stores in halves (two to a u32
// word, `narrow`) widened to the f32 the kernels compute from (`wide`), before the pass that reads
// it. One invocation per word; `wide` is exactly the tensor's elements long (or one, for none), so
// that its length gives the count. The format is the snippet's (`half_bf16.wgsl`, `half_f16.wgsl`).
// Grid: folded, words / ELEMENTS workgroups.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = folded(wg, nwg) * ELEMENTS + lid;
    let count = arrayLength(&wide);
    if (2u * w >= count) {
        return;
    }
    let pair = unpack_pair(narrow[w]);
    wide[2u * w] = pair.x;
    if (2u * w + 1u < count) {
        wide[2u * w + 1u] = pair.y;
    }
}
