// bf16 pairs: a bf16 is the upper 16 bits of an f32. The lower element of a pair is in the word's
// low half. Rounding to bf16 is to nearest, ties to even; NaN stays NaN (its payload's top bits
// kept, forced quiet).

fn unpack_pair(w: u32) -> vec2<f32> {
    return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}

fn to_bf16(x: f32) -> u32 {
    let u = bitcast<u32>(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (u >> 16u) | 0x40u;
    }
    return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}

fn pack_pair(v: vec2<f32>) -> u32 {
    return to_bf16(v.x) | (to_bf16(v.y) << 16u);
}
