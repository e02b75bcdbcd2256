// The conv's input gradient (conv_input_grad.wgsl) in a dispatch of its own: one invocation per
// (run of tokens, channel); grid folded, ELEMENTS invocations.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    conv_input_grad(folded(wg, nwg), lid);
}
