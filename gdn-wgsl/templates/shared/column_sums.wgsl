// The backward's parameter sums share one layout: sum `which` (0 dconv, 1 dnorm, 2 da_log,
// 3 ddt_bias) totals the columns of a row-major [rows, cols] matrix, cut into `blocks` blocks of
// rows_per_block rows, its partial sums at partial[partial_at + block·cols + col]. A dispatch
// that serves several sums gives each its workgroups in turn, in the order of `which`.

// The shape of sum `which`.
fn sum_shape(which: u32) -> Reduce {
    if (which == 0u) {
        return reduce_dconv;
    }
    if (which == 1u) {
        return reduce_dnorm;
    }
    if (which == 2u) {
        return reduce_da_log;
    }
    return reduce_ddt_bias;
}

// Groups of COLUMNS columns of a sum.
fn column_groups(r: Reduce) -> u32 {
    return (r.cols + COLUMNS - 1u) / COLUMNS;
}

// What one invocation of a block sums for sum `which`: a column, but for dconv a channel (every
// one of its taps) where kk ≤ CONV_WINDOW (dconv_window.wgsl).
fn sum_units(which: u32) -> u32 {
    if (which == 0u && layer.kk <= CONV_WINDOW) {
        return layer.channels;
    }
    return sum_shape(which).cols;
}

// How a dispatch cuts the sums into workgroups: the totals from the partials (column_sums_finish:
// COLUMNS columns a job), the partials (COLUMNS units by a block of rows a job, the unit groups
// fastest), or the totals in one pass (column_totals.wgsl: TOTAL_UNITS units by every block a job).
const JOBS_FINISH: u32 = 0u;
const JOBS_PARTIAL: u32 = 1u;
const JOBS_ONE_PASS: u32 = 2u;

fn sum_jobs(which: u32, kind: u32) -> u32 {
    let r = sum_shape(which);
    if (kind == JOBS_FINISH) {
        return column_groups(r);
    }
    if (kind == JOBS_PARTIAL) {
        return (sum_units(which) + COLUMNS - 1u) / COLUMNS * r.blocks;
    }
    return (sum_units(which) + TOTAL_UNITS - 1u) / TOTAL_UNITS;
}

// A dispatch's job, every sum's jobs in turn: the sum it belongs to and its index there (past the
// last sum's jobs: the last sum, out of range).
struct SumJob {
    which: u32,
    job: u32,
}

fn sum_job(job: u32, kind: u32) -> SumJob {
    var x = SumJob(0u, job);
    for (; x.which < 3u; x.which = x.which + 1u) {
        let jobs = sum_jobs(x.which, kind);
        if (x.job < jobs) {
            break;
        }
        x.job = x.job - jobs;
    }
    return x;
}
