// Per-token sums in the tensor-core backward: the dot products over a row of a c × D product and
// the row and column sums of c × c ones, from terms staged by the owners (each owner's block of
// `stage`, row-major). gather_rows adds each row's 16 terms, then every owner's share of a token, into
// token_sums[which][t]; gather_columns does the same by columns. An owner repeating another's unit
// (the last one, clamped) is left out: its row or column is NOT_A_BLOCK.

const SUMS: u32 = 5u;
const NOT_A_BLOCK: u32 = 0xffffffffu;

var<workgroup> token_sums: array<f32, SUMS * CMAX>;
var<workgroup> owner_part: array<f32, OWNERS * BLOCK>;

fn clear_sums(tid: u32) {
    for (var e = tid; e < SUMS * CMAX; e = e + THREADS) {
        token_sums[e] = 0.0;
    }
}

// The block row (or column) of owner `ow`'s unit in round `round`, or NOT_A_BLOCK for a repeat.
fn unit_line(ow: u32, round: u32, units: u32, line: u32) -> u32 {
    return select(line, NOT_A_BLOCK, ow + OWNERS * round >= units);
}

// Adds the staged terms along each row (or column) of every owner's block into token_sums[which][t]
// for the token t of that row (or column); `lines` gives each owner's block row (or column).
fn gather_lines(which: u32, lines: array<u32, OWNERS>, by_rows: bool, tid: u32) {
    workgroupBarrier();
    if (tid < OWNERS * BLOCK) {
        let line = tid % BLOCK;
        let start = select(line, line * BLOCK, by_rows);
        let step = select(BLOCK, 1u, by_rows);
        var sum = 0.0;
        for (var k = 0u; k < BLOCK; k = k + 1u) {
            sum = sum + stage[(tid / BLOCK) * BLOCK_ELEMENTS + start + k * step];
        }
        owner_part[tid] = sum;
    }
    workgroupBarrier();
    if (tid < CMAX) {
        var sum = 0.0;
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            if (lines[ow] == tid / BLOCK) {
                sum = sum + owner_part[ow * BLOCK + tid % BLOCK];
            }
        }
        token_sums[which * CMAX + tid] = token_sums[which * CMAX + tid] + sum;
    }
    workgroupBarrier();
}

fn gather_rows(which: u32, rows: array<u32, OWNERS>, tid: u32) {
    gather_lines(which, rows, true, tid);
}

fn gather_columns(which: u32, columns: array<u32, OWNERS>, tid: u32) {
    gather_lines(which, columns, false, tid);
}
