// The chunk's backward region in chunk_work (the backward's scratch): dU [C, DV] (from the reverse state pass),
// then for the per-chunk gradients dQK, dT, Z = dT Tᵀ, dA ⊙ M⁻ ([C, C] each), dK_S, dW, dX¹
// ([C, DK] each) and dY [C, DV].

fn bwd_du(t: u32, j: u32) -> u32 {
    return ck_bwd + t * DV + j;
}

fn bwd_square(which: u32, t: u32, s: u32) -> u32 {
    let c = chunk_size();
    return ck_bwd + c * DV + which * c * c + t * c + s;
}

fn bwd_dqk(t: u32, s: u32) -> u32 {
    return bwd_square(0u, t, s);
}

fn bwd_dt(t: u32, s: u32) -> u32 {
    return bwd_square(1u, t, s);
}

fn bwd_z(t: u32, s: u32) -> u32 {
    return bwd_square(2u, t, s);
}

fn bwd_dam(t: u32, s: u32) -> u32 {
    return bwd_square(3u, t, s);
}

fn bwd_wide(which: u32, t: u32, i: u32) -> u32 {
    let c = chunk_size();
    return ck_bwd + c * DV + 4u * c * c + which * c * DK + t * DK + i;
}

fn bwd_dks(t: u32, i: u32) -> u32 {
    return bwd_wide(0u, t, i);
}

fn bwd_dw(t: u32, i: u32) -> u32 {
    return bwd_wide(1u, t, i);
}

fn bwd_dx1(t: u32, i: u32) -> u32 {
    return bwd_wide(2u, t, i);
}

fn bwd_dy(t: u32, j: u32) -> u32 {
    let c = chunk_size();
    return ck_bwd + c * DV + 4u * c * c + 3u * c * DK + t * DV + j;
}

// dO of chunk row t (zero for pads).
fn chunk_do(t: u32, j: u32) -> f32 {
    if (t >= ck_len) {
        return 0.0;
    }
    return d_o[chunk_o_at(t, j)];
}
