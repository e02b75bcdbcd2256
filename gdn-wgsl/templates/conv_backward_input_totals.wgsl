// The conv's input gradient (conv_input_grad.wgsl) and the parameter sums' totals in one pass
// (column_totals.wgsl) in one dispatch, for short batches: the backward's last, where it would
// otherwise take conv_backward_input_sums and column_sums_finish. The first conv_run_jobs()
// workgroups are the conv's runs, the rest the sums' (workgroup-uniform: the sums wait at a
// barrier). It binds 15 storage buffers, so the plan takes it only where the device allows as
// many. Grid folded.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let job = folded(wg, nwg);
    let conv_jobs = conv_run_jobs();
    if (job < conv_jobs) {
        conv_input_grad(job, lid);
        return;
    }
    column_totals(job - conv_jobs, lid);
}
