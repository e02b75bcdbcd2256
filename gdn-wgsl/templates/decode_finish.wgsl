// One decode step, after decode_columns: the gated RMSNorm of every new token's output, in place
// in `out` (as norm_forward computes it), and the shift of the conv windows, which decode_columns
// read and which may only be rewritten once every read of them is done (in a later dispatch).
//
// One workgroup of VEC threads per (sequence, value head). It shifts the window's v channels of its
// value head, and the first value head of each key head also shifts the key head's q and k
// channels, so every channel has one writer. A thread shifts a channel oldest slot first: slot j
// takes old slot j + T (not yet overwritten) or one of the new tokens.
//
// Layouts as decode_columns. Grid: folded, seqs · nv workgroups.

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nv) {
        return;
    }
    let n = job / layer.nv;
    let h = job % layer.nv;
    let key = h / layer.rep;
    let slot = slots[n];
    let steps = layer.tokens / layer.seqs;
    let start = n * steps;
    let width = layer.nv * DV;

    for (var t = 0u; t < steps; t = t + 1u) {
        let row = (start + t) * width + h * DV;
        var sq = 0.0;
        for (var m = tid; m < DV; m = m + VEC) {
            let o = out[row + m];
            sq = sq + o * o;
        }
        let rstd = 1.0 / sqrt(row_sum2(tid, vec2<f32>(sq, 0.0)).x / f32(DV) + layer.rms_eps);
        for (var m = tid; m < DV; m = m + VEC) {
            out[row + m] = out[row + m] * rstd * params[2u * layer.nv + m] * silu(z[row + m]);
        }
    }

    let km1 = layer.kk - 1u;
    var owned = DV;
    if (h % layer.rep == 0u) {
        owned = DV + 2u * DK;
    }
    for (var m = tid; m < owned; m = m + VEC) {
        var c: u32;
        if (m < DV) {
            c = 2u * layer.nk * DK + h * DV + m;
        } else if (m < DV + DK) {
            c = key * DK + (m - DV);
        } else {
            c = (layer.nk + key) * DK + (m - DV - DK);
        }
        for (var j = 0u; j < km1; j = j + 1u) {
            conv_state[(slot * km1 + j) * layer.channels + c] = conv_tap(slot, start, start + steps, j, c);
        }
    }
}
