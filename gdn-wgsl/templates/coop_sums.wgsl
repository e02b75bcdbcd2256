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

fn gather_rows(which: u32, rows: array<u32, OWNERS>, tid: u32) {
    workgroupBarrier();
    if (tid < OWNERS * BLOCK) {
        let at = (tid / BLOCK) * BLOCK_ELEMENTS + (tid % BLOCK) * BLOCK;
        var sum = 0.0;
        for (var cc = 0u; cc < BLOCK; cc = cc + 1u) {
            sum = sum + stage[at + cc];
        }
        owner_part[tid] = sum;
    }
    workgroupBarrier();
    if (tid < CMAX) {
        var sum = 0.0;
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            if (rows[ow] == tid / BLOCK) {
                sum = sum + owner_part[ow * BLOCK + tid % BLOCK];
            }
        }
        token_sums[which * CMAX + tid] = token_sums[which * CMAX + tid] + sum;
    }
    workgroupBarrier();
}

fn gather_columns(which: u32, columns: array<u32, OWNERS>, tid: u32) {
    workgroupBarrier();
    if (tid < OWNERS * BLOCK) {
        let at = (tid / BLOCK) * BLOCK_ELEMENTS + tid % BLOCK;
        var sum = 0.0;
        for (var r = 0u; r < BLOCK; r = r + 1u) {
            sum = sum + stage[at + r * BLOCK];
        }
        owner_part[tid] = sum;
    }
    workgroupBarrier();
    if (tid < CMAX) {
        var sum = 0.0;
        for (var ow = 0u; ow < OWNERS; ow = ow + 1u) {
            if (columns[ow] == tid / BLOCK) {
                sum = sum + owner_part[ow * BLOCK + tid % BLOCK];
            }
        }
        token_sums[which * CMAX + tid] = token_sums[which * CMAX + tid] + sum;
    }
    workgroupBarrier();
}
