// Sums over the ROW_LANES = 32 row lanes of a column group (one subgroup block of consecutive
// lanes) of a chunk's 16 values (CHUNK = 4 vec4s), through subgroup shuffles (the host takes this
// kernel only where subgroups have at least 32 invocations). `chunk_scatter_sum` halves what each
// lane holds at each step, so that lane rl ends with the sum of component (rl / 2) % 4 of vec4
// rl / 8 after 16 shuffles (a butterfly of the 16 values would take 80); `chunk_gather` undoes the
// split, so that every lane holds every sum (15 more). The lane bits, high to low, pick the vec4's
// half and the vec4, then the component's half and the component; the lowest doubles.
// Every lane holding a sum holds the same one: each step adds the same two partials in either order.

// Keep this lane's half (by `high`) of a pair of values, add the partner's copy of it.
fn kept_half(a: vec4<f32>, b: vec4<f32>, high: bool, offset: u32) -> vec4<f32> {
    return select(a, b, high) + subgroupShuffleXor(select(b, a, high), offset);
}

fn chunk_scatter_sum(tid: u32, x: array<vec4<f32>, CHUNK>) -> f32 {
    let rl = tid % ROW_LANES;
    let b4 = (rl & 16u) != 0u;
    let token = kept_half(kept_half(x[0], x[2], b4, 16u), kept_half(x[1], x[3], b4, 16u), (rl & 8u) != 0u, 8u);
    let b2 = (rl & 4u) != 0u;
    let pair = select(token.xy, token.zw, b2) + subgroupShuffleXor(select(token.zw, token.xy, b2), 4u);
    let b1 = (rl & 2u) != 0u;
    let one = select(pair.x, pair.y, b1) + subgroupShuffleXor(select(pair.y, pair.x, b1), 2u);
    return one + subgroupShuffleXor(one, 1u);
}

fn chunk_gather(tid: u32, e: f32) -> array<vec4<f32>, CHUNK> {
    let rl = tid % ROW_LANES;
    let other = subgroupShuffleXor(e, 2u);
    let pair = select(vec2<f32>(e, other), vec2<f32>(other, e), (rl & 2u) != 0u);
    let far = subgroupShuffleXor(pair, 4u);
    let token = select(vec4<f32>(pair, far), vec4<f32>(far, pair), (rl & 4u) != 0u);
    let next = subgroupShuffleXor(token, 8u);
    let b3 = (rl & 8u) != 0u;
    let low = select(token, next, b3);
    let high = select(next, token, b3);
    let b4 = (rl & 16u) != 0u;
    let low_theirs = subgroupShuffleXor(low, 16u);
    let high_theirs = subgroupShuffleXor(high, 16u);
    return array<vec4<f32>, CHUNK>(
        select(low, low_theirs, b4),
        select(high, high_theirs, b4),
        select(low_theirs, low, b4),
        select(high_theirs, high, b4),
    );
}

// The sums over the row lanes of a vec4 of one value per token: lane rl ends with token rl / 8's
// (6 shuffles: the token's half, the token, then a butterfly over the 8 lanes holding it).
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
