// qk_hat packs q̂ then k̂, each [tokens, nk, DK], then (for the chunk-solved recurrences) each
// k̂'s products with the three before it, [tokens, nk, 3]; qk_ss, and dqk_hat_heads ([tokens, nv,
// DK] each), pack the same way as q̂ and k̂.

// Start of the row of q̂ (which = 0) or k̂ (which = 1) of key head `key` at token t.
fn hat_at(which: u32, t: u32, key: u32) -> u32 {
    return ((which * layer.tokens + t) * layer.nk + key) * DK;
}

// Start of k̂_t·k̂_{t−1}, k̂_t·k̂_{t−2}, k̂_t·k̂_{t−3} of key head `key` (products with tokens before the
// first are 0; a sequence's recurrence never reads those reaching before its start).
fn key_products_at(t: u32, key: u32) -> u32 {
    return 2u * layer.tokens * layer.nk * DK + (t * layer.nk + key) * 3u;
}
