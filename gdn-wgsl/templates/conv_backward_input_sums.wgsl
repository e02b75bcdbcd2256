// The conv's input gradient (conv_input_grad.wgsl) and the parameter sums' partials
// (partial_sums.wgsl) in one dispatch: neither reads what the other writes, and at short batches
// a dispatch boundary costs more than either's work (S4 on the H200: 7 and 11 µs alone). The
// first conv_run_jobs() workgroups are the conv's runs; each after them takes ELEMENTS / COLUMNS
// of the partials' jobs, one a COLUMNS-lane slice. It binds 12 storage buffers, so the plan takes
// it only where the device allows as many. Grid folded.

const SUM_JOBS_PER_WORKGROUP: u32 = ELEMENTS / COLUMNS;

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let job = folded(wg, nwg);
    let conv_jobs = conv_run_jobs();
    if (job < conv_jobs) {
        conv_input_grad(job, lid);
        return;
    }
    partial_sums((job - conv_jobs) * SUM_JOBS_PER_WORKGROUP + lid / COLUMNS, lid % COLUMNS);
}
