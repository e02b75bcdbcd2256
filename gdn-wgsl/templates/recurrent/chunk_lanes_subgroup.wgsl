// Sums over the ROW_LANES = 32 row lanes of a column group (one subgroup block of consecutive
// lanes) of a chunk's four values (one a token, the components of a vec4), through subgroup
// shuffles (the host takes this kernel only where subgroups have at least 32 invocations).

// The sums, returned to every lane: a butterfly of 5 rounds, which gives every lane the same sum
// (each step adds the same two partials in either order).
fn chunk_row_sum(tid: u32, x: vec4<f32>) -> vec4<f32> {
    var total = x;
    for (var offset = 16u; offset > 0u; offset = offset / 2u) {
        total = total + subgroupShuffleXor(total, offset);
    }
    return total;
}

// The sums, lane rl ending with token rl / 8's (6 shuffles: the token's half, the token, then a
// butterfly over the 8 lanes holding it), where one lane a token needs it.
fn token_scatter_sum(tid: u32, x: vec4<f32>) -> f32 {
    let rl = tid % ROW_LANES;
    let b4 = (rl & 16u) != 0u;
    let pair = select(x.xy, x.zw, b4) + subgroupShuffleXor(select(x.zw, x.xy, b4), 16u);
    let b3 = (rl & 8u) != 0u;
    var one = select(pair.x, pair.y, b3) + subgroupShuffleXor(select(pair.y, pair.x, b3), 8u);
    for (var offset = 4u; offset > 0u; offset = offset / 2u) {
        one = one + subgroupShuffleXor(one, offset);
    }
    return one;
}
