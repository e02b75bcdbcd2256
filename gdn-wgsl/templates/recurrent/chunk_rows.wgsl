// The chunk-solved recurrences (recurrence_forward_chunks.wgsl, recurrence_backward_columns.wgsl)
// take a row of q̂ or k̂ for a chunk's four tokens at once, one token a component of a vec4.

// Row `row` of q̂ (which = 0) or k̂ (1) at the four tokens `at`, zero where not `live` or past DK.
fn hat_rows(which: u32, at: vec4<u32>, key: u32, row: u32, live: vec4<bool>) -> vec4<f32> {
    let e = vec4<u32>(hat_at(which, at.x, key), hat_at(which, at.y, key), hat_at(which, at.z, key), hat_at(which, at.w, key))
        + vec4<u32>(min(row, DK - 1u));
    return select(vec4<f32>(0.0), vec4<f32>(qk_hat[e.x], qk_hat[e.y], qk_hat[e.z], qk_hat[e.w]), live & vec4<bool>(row < DK));
}
