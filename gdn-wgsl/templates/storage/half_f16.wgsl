// f16 pairs (IEEE binary16), converted with integer arithmetic so that no WGSL extension or
// capability is needed (`pack2x16float` needs SHADER_FLOAT16_IN_FLOAT32). The lower element of a
// pair is in the word's low half. Rounding to f16 is to nearest, ties to even; beyond ±65 504 it
// gives ±∞; NaN stays NaN.

fn f16_to_f32(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0u) {
        // Zero or subnormal: m · 2⁻²⁴, exact in f32.
        return bitcast<f32>(bitcast<u32>(f32(m) * 5.9604645e-8) | sign);
    }
    if (e == 31u) {
        return bitcast<f32>(sign | 0x7f800000u | (m << 13u));
    }
    return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}

fn f32_to_f16(x: f32) -> u32 {
    let u = bitcast<u32>(x);
    let sign = (u >> 16u) & 0x8000u;
    let a = u & 0x7fffffffu;
    if (a > 0x7f800000u) {
        return sign | 0x7e00u;
    }
    // 65 520 and above round to infinity.
    if (a >= 0x477ff000u) {
        return sign | 0x7c00u;
    }
    // Below 2⁻¹⁴: a subnormal f16, in units of 2⁻²⁴ (round() is to nearest even; 1024 is the
    // smallest normal, which the encoding continues into).
    if (a < 0x38800000u) {
        return sign | u32(round(bitcast<f32>(a) * 16777216.0));
    }
    // Normal: rebias the exponent by 112 and round the mantissa at bit 13 to nearest even.
    let rounded = a + 0xfffu + ((a >> 13u) & 1u);
    return sign | ((rounded - 0x38000000u) >> 13u);
}

fn unpack_pair(w: u32) -> vec2<f32> {
    return vec2<f32>(f16_to_f32(w & 0xffffu), f16_to_f32(w >> 16u));
}

fn pack_pair(v: vec2<f32>) -> u32 {
    return f32_to_f16(v.x) | (f32_to_f16(v.y) << 16u);
}
