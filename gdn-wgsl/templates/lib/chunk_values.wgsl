// The chunk's values from y (the conv's output), apart from chunks.wgsl's q̂ and k̂ rows so that the
// kernels that never read v bind no y.

// Element j of v at row t of the chunk (zero for pads).
fn chunk_v(t: u32, j: u32) -> f32 {
    if (t >= ck_len) {
        return 0.0;
    }
    return y[ck_v + t * layer.channels + j];
}
