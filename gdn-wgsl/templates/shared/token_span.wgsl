// A token's sequence and where it starts: what the conv of a token's channels needs of the index
// (conv_at.wgsl reads it; the kernels that read the conv's outputs from y need none of it).

struct TokenSpan {
    n: u32,
    start: u32,
}
