// The recurrent forward for few heads writes every token's r = v − g·S_{t−1}ᵀk̂ (u = β·r) after the
// stored states in `ckpt`, [tokens, nv, DV], where the plan laid room for them (a backward that
// replays from them: recurrence_backward_columns.wgsl).

// Where r of token t and value head h starts in `ckpt`.
fn residual_at(t: u32, h: u32) -> u32 {
    return ckpt_first(layer.seqs) * layer.nv * DK * DV + (t * layer.nv + h) * DV;
}
