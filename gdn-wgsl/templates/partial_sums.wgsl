// Partial column sums of every parameter gradient, in column_sums.wgsl's layout:
// dconv's (dconv_window.wgsl, or dconv_partial.wgsl for kk > CONV_WINDOW) and those of the
// backward's per-element terms, dnorm's (dnorm_term, [tokens·nv, dv]), da_log's (dlog_term,
// [tokens, nv]) and ddt_bias's (da, [tokens, nv]). One dispatch, not one a sum: at short batches
// each sum is a few microseconds of launch and drain for almost no work. partial_sums(job, lid)
// is invocation lid of job `job`: COLUMNS columns or channels of one sum by a block of its rows,
// column groups fastest, every sum's jobs in turn (column_sums.wgsl's sum_job), whichever
// kernel's dispatch runs it (column_sums_partial's, or conv_backward_input_sums' with the conv's
// input gradient). Fixed order: deterministic.

// Rows [first, last) of column `col` of sum `which`'s term, summed in order. A loop for each
// buffer, not a buffer picked by branch in one loop: a load inside a branch is waited for before the
// branches join, so each row would wait a whole load latency (the column backward's lesson,
// BENCHMARKS.md's fourteenth session).
fn term_sum(which: u32, first: u32, last: u32, cols: u32, col: u32) -> f32 {
    var acc = 0.0;
    if (which == 1u) {
        for (var row = first; row < last; row = row + 1u) {
            acc = acc + dnorm_term[row * cols + col];
        }
    } else if (which == 2u) {
        for (var row = first; row < last; row = row + 1u) {
            acc = acc + dlog_term[row * cols + col];
        }
    } else {
        for (var row = first; row < last; row = row + 1u) {
            acc = acc + da[row * cols + col];
        }
    }
    return acc;
}

fn partial_sums(job: u32, lid: u32) {
    let x = sum_job(job, true);
    if (x.which == 0u) {
        if (layer.kk <= CONV_WINDOW) {
            dconv_window_partial(x.job, lid);
        } else {
            dconv_tap_partial(x.job, lid);
        }
        return;
    }
    let r = sum_shape(x.which);
    let groups = column_groups(r);
    let block = x.job / groups;
    let col = (x.job % groups) * COLUMNS + lid;
    if (block >= r.blocks || col >= r.cols) {
        return;
    }
    let first = block * r.rows_per_block;
    let last = min(first + r.rows_per_block, r.rows);
    partial[r.partial_at + block * r.cols + col] = term_sum(x.which, first, last, r.cols, col);
}
