// `sum += part`, element by element: a WindowedTape in the caller's buffers sums its windows'
// parameter gradients on the device. `sum` is bound exactly the tensor's length, so that its
// length gives the count. One invocation per element.
// Grid: folded, elements / ELEMENTS workgroups.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = folded(wg, nwg) * ELEMENTS + lid;
    if (i < arrayLength(&sum)) {
        sum[i] = sum[i] + part[i];
    }
}
