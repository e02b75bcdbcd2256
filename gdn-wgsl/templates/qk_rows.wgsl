// qk_hat packs q̂ then k̂, each [tokens, nk, DK]; qk_ss, and dqk_hat_heads ([tokens, nv, DK] each),
// pack the same way.

// Start of the row of q̂ (which = 0) or k̂ (which = 1) of key head `key` at token t.
fn hat_at(which: u32, t: u32, key: u32) -> u32 {
    return ((which * layer.tokens + t) * layer.nk + key) * DK;
}
