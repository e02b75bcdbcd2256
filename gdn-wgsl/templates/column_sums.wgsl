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

// Groups of sum `which`'s partial jobs in a block of rows: of COLUMNS columns, but dconv's of
// COLUMNS channels where one invocation takes every tap of a channel (kk ≤ CONV_WINDOW,
// dconv_window.wgsl).
fn partial_groups(which: u32) -> u32 {
    if (which == 0u && layer.kk <= CONV_WINDOW) {
        return (layer.channels + COLUMNS - 1u) / COLUMNS;
    }
    return column_groups(sum_shape(which));
}

// A dispatch's job, every sum's jobs in turn (its partial groups by its blocks, or its column
// groups for the totals): the sum it belongs to and its index there (past the last sum's jobs:
// the last sum, out of range).
struct SumJob {
    which: u32,
    job: u32,
}

fn sum_job(job: u32, partials: bool) -> SumJob {
    var x = SumJob(0u, job);
    for (; x.which < 3u; x.which = x.which + 1u) {
        let r = sum_shape(x.which);
        let jobs = select(column_groups(r), partial_groups(x.which) * r.blocks, partials);
        if (x.job < jobs) {
            break;
        }
        x.job = x.job - jobs;
    }
    return x;
}
