// The conv kernels give each invocation CONV_GROUP = 4 adjacent channels of one token (channel
// counts are multiples of 8: every generated head size is), so that the token's sequence is looked
// up once for four outputs and each tap reads 16 contiguous bytes. conv_weights(c, j) is tap j of
// channels c … c + 3 (the weights are [C, kk]).
fn conv_weights(c: u32, j: u32) -> vec4<f32> {
    let at = c * layer.kk + j;
    return vec4<f32>(conv[at], conv[at + layer.kk], conv[at + 2u * layer.kk], conv[at + 3u * layer.kk]);
}
