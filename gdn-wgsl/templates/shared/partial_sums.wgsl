// Partial column sums of every parameter gradient, in column_sums.wgsl's layout:
// dconv's (dconv_window.wgsl, or dconv_partial.wgsl for kk > CONV_WINDOW) and those of the
// backward's per-element terms, dnorm's (dnorm_term, [tokens·nv, dv]), da_log's (dlog_term,
// [tokens, nv]) and ddt_bias's (da, [tokens, nv]). One dispatch, not one a sum: at short batches
// each sum is a few microseconds of launch and drain for almost no work. partial_sums(job, lid)
// is invocation lid of job `job`: COLUMNS units (columns, or dconv's channels) of one sum by a
// block of its rows (sum_blocks.wgsl), unit groups fastest, every sum's jobs in turn
// (column_sums.wgsl's sum_job), whichever kernel's dispatch runs it (column_sums_partial's, or
// conv_backward_input_sums' with the conv's input gradient). Fixed order: deterministic.

fn partial_sums(job: u32, lid: u32) {
    let x = sum_job(job, JOBS_PARTIAL);
    let r = sum_shape(x.which);
    let groups = (sum_units(x.which) + COLUMNS - 1u) / COLUMNS;
    let block = x.job / groups;
    let unit = (x.job % groups) * COLUMNS + lid;
    if (block >= r.blocks || unit >= sum_units(x.which)) {
        return;
    }
    let row = r.partial_at + block * r.cols;
    if (x.which == 0u && layer.kk <= CONV_WINDOW) {
        let taps = dconv_window_block(block, unit);
        for (var j = 0u; j < layer.kk; j = j + 1u) {
            partial[row + unit * layer.kk + j] = component(taps, j);
        }
        return;
    }
    partial[row + unit] = block_sum(x.which, block, unit);
}

// Workgroup `job` of ELEMENTS invocations over the partials' jobs (conv_backward_input_sums): its
// ELEMENTS / COLUMNS jobs, one a COLUMNS-lane slice.
fn sums_workgroup(job: u32, lid: u32) {
    partial_sums(job * (ELEMENTS / COLUMNS) + lid / COLUMNS, lid % COLUMNS);
}
