// Where the parameter sums' totals go: sum `which`'s column `col` into dconv, dnorm, da_log or
// ddt_bias.
fn write_total(which: u32, col: u32, value: f32) {
    if (which == 0u) {
        dconv[col] = value;
    } else if (which == 1u) {
        dnorm[col] = value;
    } else if (which == 2u) {
        da_log[col] = value;
    } else {
        ddt_bias[col] = value;
    }
}
