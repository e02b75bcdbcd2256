// The parameter sums' partials (partial_sums.wgsl) in a dispatch of their own: a workgroup of
// COLUMNS invocations a job, the grid folded.

@compute @workgroup_size(COLUMNS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    partial_sums(folded(wg, nwg), lid);
}
