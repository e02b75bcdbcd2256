// Accessors of the u32 `index` buffer, written once per tape by the host:
// [cu_seqlens: seqs + 1][ckpt_offset: seqs + 1][token_seq: tokens].

fn seq_start(n: u32) -> u32 {
    return index[n];
}

fn seq_end(n: u32) -> u32 {
    return index[n + 1u];
}

// Slot of sequence n's first checkpoint; it owns ceil(len / ckpt_interval) of them.
fn ckpt_first(n: u32) -> u32 {
    return index[layer.seqs + 1u + n];
}

// Sequence of token t.
fn token_seq(t: u32) -> u32 {
    return index[2u * layer.seqs + 2u + t];
}
