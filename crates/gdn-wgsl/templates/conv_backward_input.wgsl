// dqkv[s, c] = Σ_j conv[c, j]·dpre[s + (kk − 1) − j, c] over targets inside s's sequence.
// One thread per (token, channel); grid folded, ELEMENTS threads.

@compute @workgroup_size(ELEMENTS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = folded(wg, nwg) * ELEMENTS + lid;
    if (i >= layer.tokens * layer.channels) {
        return;
    }
    let s = i / layer.channels;
    let c = i % layer.channels;
    let end = seq_end(token_seq(s));
    var acc = 0.0;
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        let target_t = s + (layer.kk - 1u - j);
        if (target_t < end) {
            acc = acc + conv[c * layer.kk + j] * dpre[target_t * layer.channels + c];
        }
    }
    dqkv[i] = acc;
}
