// Half-precision storage, at the layer's edge: an output or gradient the kernels computed in f32
// (`wide`) rounded to the halves the caller stores (two to a u32 word, `narrow`), after the pass
// that writes it. One invocation per word; an odd count's last word holds a zero above. The format
// is the snippet's (`half_bf16.wgsl`, `half_f16.wgsl`). Grid: folded, words / ELEMENTS workgroups.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = folded(wg, nwg) * ELEMENTS + lid;
    let count = arrayLength(&wide);
    if (2u * w >= count) {
        return;
    }
    var high = 0.0;
    if (2u * w + 1u < count) {
        high = wide[2u * w + 1u];
    }
    narrow[w] = pack_pair(vec2<f32>(wide[2u * w], high));
}
