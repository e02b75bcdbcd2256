// The parameter sums' totals in one pass, for batches short enough that every sum has at most
// ELEMENTS / TOTAL_UNITS blocks of rows (the plan's rule): a workgroup takes TOTAL_UNITS units
// (columns, or dconv's channels) of one sum and every block of its rows, invocation lid block
// lid / TOTAL_UNITS of unit lid % TOTAL_UNITS (sum_blocks.wgsl, the arithmetic of the partials);
// the blocks' sums meet in workgroup memory and the first TOTAL_UNITS invocations add them in
// block order and write the totals, so that no second dispatch sums partials (column_sums_finish
// cost S4 a dispatch for almost no work: BENCHMARKS.md, S4). Deterministic.

var<workgroup> block_sums: array<vec4<f32>, ELEMENTS>;

// Workgroup `job` of the sums' one-pass jobs (column_sums.wgsl's JOBS_ONE_PASS), invocation lid
// (conv_backward_input_totals). Called in uniform control flow (it waits at a barrier).
fn sums_workgroup(job: u32, lid: u32) {
    let x = sum_job(job, JOBS_ONE_PASS);
    let r = sum_shape(x.which);
    let block = lid / TOTAL_UNITS;
    let unit = x.job * TOTAL_UNITS + lid % TOTAL_UNITS;
    let units = sum_units(x.which);
    let windowed = x.which == 0u && layer.kk <= CONV_WINDOW;
    var sums = vec4<f32>();
    if (block < r.blocks && unit < units) {
        if (windowed) {
            sums = dconv_window_block(block, unit);
        } else {
            sums.x = block_sum(x.which, block, unit);
        }
    }
    block_sums[lid] = sums;
    workgroupBarrier();
    if (lid >= TOTAL_UNITS || unit >= units) {
        return;
    }
    var total = vec4<f32>();
    for (var b = 0u; b < r.blocks; b = b + 1u) {
        total = total + block_sums[b * TOTAL_UNITS + lid];
    }
    if (windowed) {
        for (var j = 0u; j < layer.kk; j = j + 1u) {
            dconv[unit * layer.kk + j] = component(total, j);
        }
    } else {
        write_total(x.which, unit, total.x);
    }
}
