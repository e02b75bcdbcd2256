// A thread's tile of a [DK, DV] state: rows ty·RY + r, columns col0 + tx·RX + c. Elements outside
// the state (the tiling rounds DK and DV up) read as zero and are never written.

fn tile_row(ty: u32, r: u32) -> u32 {
    return ty * RY + r;
}

fn tile_col(col0: u32, tx: u32, c: u32) -> u32 {
    return col0 + tx * RX + c;
}

fn in_state(row: u32, col: u32) -> bool {
    return row < DK && col < DV;
}

// This thread's RY rows of the DK-vector that starts at `at` in qk_hat (zero past DK).
fn hat_rows(at: u32, ty: u32) -> array<f32, RY> {
    var rows: array<f32, RY>;
    for (var r = 0u; r < RY; r = r + 1u) {
        let row = tile_row(ty, r);
        rows[r] = qk_hat[at + min(row, DK - 1u)] * f32(row < DK);
    }
    return rows;
}
