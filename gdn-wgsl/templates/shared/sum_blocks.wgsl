// What one block of a parameter sum's rows adds to one of its units (column_sums.wgsl's
// sum_units), the same arithmetic whether it goes into the partial buffer (partial_sums.wgsl) or
// is summed in workgroup memory (column_totals.wgsl).

// Rows [first, last) of column `col` of sum `which`'s term, summed in order. A loop for each
// buffer, not a buffer picked by branch in one loop: a load inside a branch is waited for before the
// branches join, so each row would wait a whole load latency (the column backward's lesson,
// BENCHMARKS.md, History: a branch in the column backward's loader).
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

// Block `block` of sum `which`'s rows summed for column `col` (for dconv, kk > CONV_WINDOW: the
// windowed form sums a channel, dconv_window_block). The caller keeps block and col in range.
fn block_sum(which: u32, block: u32, col: u32) -> f32 {
    if (which == 0u) {
        return dconv_tap_block(block, col);
    }
    let r = sum_shape(which);
    let first = block * r.rows_per_block;
    let last = min(first + r.rows_per_block, r.rows);
    return term_sum(which, first, last, r.cols, col);
}
