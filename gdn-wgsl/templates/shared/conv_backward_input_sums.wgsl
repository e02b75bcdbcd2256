// The conv's input gradient (conv_input_grad.wgsl) and the parameter sums in one dispatch: neither
// reads what the other writes, and at short batches a dispatch boundary costs more than either's
// work (BENCHMARKS.md, S4: conv_backward_input, column_sums_partial and column_sums_finish apart).
// The first conv_run_jobs() workgroups are the conv's runs, the rest the sums'
// (sums_workgroup: the partials', partial_sums.wgsl, for conv_backward_input_sums; the totals in
// one pass, column_totals.wgsl, for conv_backward_input_totals, whose workgroups wait at a
// barrier: the branch is workgroup-uniform). They bind 12 and 15 storage buffers, so the plan takes
// each only where the device allows as many. Grid folded.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let job = folded(wg, nwg);
    let conv_jobs = conv_run_jobs();
    if (job < conv_jobs) {
        conv_input_grad(job, lid);
        return;
    }
    sums_workgroup(job - conv_jobs, lid);
}
