// One decode step, fused: for each of layer.seqs sequences, layer.tokens / layer.seqs new tokens
// (T = 1, or a few drafts), everything the forward computes — conv + SiLU from the sequence's conv
// window, L2 norms of q and k, gates, the delta rule, the gated RMSNorm — reading and updating the
// sequence's recurrent state and conv window in place in a pool addressed by `slots`.
//
// One workgroup per (sequence, key head). It owns every channel of its key head's conv window (the
// q and k channels, and the v channels of its `rep` value heads) and the states of those value
// heads, so nothing it reads is written by another workgroup: no race on the shared q/k window.
// It computes q̂, k̂ of every token once (into workgroup memory), then runs its value heads one
// after the other, each state held in registers across the tokens: DECODE_THREADS threads, TX
// across columns and TY across rows, a thread holding rows ty + r·TY and columns tx + c·TX (so a
// warp's loads of a state row are contiguous). Loads are issued early where they can be (the first
// head's state before the q/k prologue, a token's v, z and gates before its first reduction). The
// window is shifted last, after a barrier that follows every read of it.
//
// Layouts: slots [seqs] (distinct, checked by the host); qkv [seqs, T, C]; z, out [seqs, T, nv·DV];
// gate_inputs a then b, each [seqs, T, nv]; params a_log [nv] | dt_bias [nv] | norm [DV] |
// conv [C, kk]; state [slots, nv, DK, DV]; conv_state [slots, kk − 1, C], oldest token first.
// Grid: folded, seqs · nk workgroups.

const L2_EPS: f32 = 1e-6;

var<workgroup> qk: array<f32, 2u * MAX_TOKENS * DK>;
var<workgroup> red: array<f32, TY * CB>;

// Conv + SiLU of channel c at token t of the call (sequence from `start`, window in `slot`).
fn decode_conv(slot: u32, start: u32, t: u32, c: u32) -> f32 {
    let weights = 2u * layer.nv + DV + c * layer.kk;
    var acc = 0.0;
    for (var j = 0u; j < layer.kk; j = j + 1u) {
        acc = acc + params[weights + j] * conv_tap(slot, start, t, j, c);
    }
    return silu(acc);
}

// Row `row` of q̂ (which = 0) or k̂ (which = 1) of token `t` of the call, zero past DK.
fn hat(which: u32, t: u32, row: u32) -> f32 {
    return qk[(2u * t + which) * DK + min(row, DK - 1u)] * f32(row < DK);
}

// This thread's elements of the state that starts at `at`: rows ty + i·TY, columns tx + c·TX
// (zero outside the state).
fn load_state(at: u32, tx: u32, ty: u32) -> array<f32, RY * RX> {
    var s: array<f32, RY * RX>;
    for (var i = 0u; i < RY; i = i + 1u) {
        for (var c = 0u; c < RX; c = c + 1u) {
            let row = ty + i * TY;
            let col = tx + c * TX;
            var value = 0.0;
            if (row < DK && col < DV) {
                value = state[at + row * DV + col];
            }
            s[i * RX + c] = value;
        }
    }
    return s;
}

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nk) {
        return;
    }
    let n = job / layer.nk;
    let key = job % layer.nk;
    let slot = slots[n];
    let steps = layer.tokens / layer.seqs;
    let start = n * steps;
    let tx = tid % TX;
    let ty = tid / TX;
    let width = layer.nv * DV;

    // The first value head's state, loaded before the q/k prologue so that the loads overlap it.
    var s = load_state((slot * layer.nv + key * layer.rep) * DK * DV, tx, ty);

    // q̂ and k̂ of every token, as qk_norm_forward computes them.
    for (var t = 0u; t < steps; t = t + 1u) {
        var sq = vec2<f32>(0.0);
        for (var m = tid; m < DK; m = m + VEC) {
            let q = decode_conv(slot, start, start + t, key * DK + m);
            let k = decode_conv(slot, start, start + t, (layer.nk + key) * DK + m);
            qk[2u * t * DK + m] = q;
            qk[(2u * t + 1u) * DK + m] = k;
            sq = sq + vec2<f32>(q * q, k * k);
        }
        let ss = row_sum2(tid, sq) + vec2<f32>(L2_EPS);
        let inv_q = 1.0 / (sqrt(ss.x) * sqrt(f32(DK)));
        let inv_k = 1.0 / sqrt(ss.y);
        for (var m = tid; m < DK; m = m + VEC) {
            qk[2u * t * DK + m] = qk[2u * t * DK + m] * inv_q;
            qk[(2u * t + 1u) * DK + m] = qk[(2u * t + 1u) * DK + m] * inv_k;
        }
    }
    workgroupBarrier();

    for (var r = 0u; r < layer.rep; r = r + 1u) {
        let h = key * layer.rep + r;
        let state_at = (slot * layer.nv + h) * DK * DV;
        if (r > 0u) {
            s = load_state(state_at, tx, ty);
        }
        let a_log = params[h];
        let dt_bias = params[layer.nv + h];
        for (var t = 0u; t < steps; t = t + 1u) {
            let tok = start + t;
            let e = tok * layer.nv + h;
            let g = exp(log_decay(a_log, gate_inputs[e] + dt_bias));
            let beta = sigmoid(gate_inputs[layer.tokens * layer.nv + e]);
            // This token's inputs first, so that their loads overlap the first reduction.
            var v: array<f32, RX>;
            var gate_z: array<f32, RX>;
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = min(tx + c * TX, DV - 1u);
                v[c] = decode_conv(slot, start, tok, 2u * layer.nk * DK + h * DV + col);
                gate_z[c] = silu(z[tok * width + h * DV + col]);
            }
            for (var c = 0u; c < RX; c = c + 1u) {
                var acc = 0.0;
                for (var i = 0u; i < RY; i = i + 1u) {
                    s[i * RX + c] = s[i * RX + c] * g;
                    acc = acc + s[i * RX + c] * hat(1u, t, ty + i * TY);
                }
                red[ty * CB + tx + c * TX] = acc;
            }
            workgroupBarrier();
            var u: array<f32, RX>;
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = tx + c * TX;
                var kv = 0.0;
                for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
                    kv = kv + red[y_group * CB + col];
                }
                u[c] = beta * (v[c] * f32(col < DV) - kv);
            }
            workgroupBarrier();
            for (var c = 0u; c < RX; c = c + 1u) {
                var acc = 0.0;
                for (var i = 0u; i < RY; i = i + 1u) {
                    s[i * RX + c] = s[i * RX + c] + hat(1u, t, ty + i * TY) * u[c];
                    acc = acc + s[i * RX + c] * hat(0u, t, ty + i * TY);
                }
                red[ty * CB + tx + c * TX] = acc;
            }
            workgroupBarrier();
            // o, then the gated RMSNorm as norm_forward computes it; row group 0 writes.
            var o: array<f32, RX>;
            var sq = 0.0;
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = tx + c * TX;
                var acc = 0.0;
                for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
                    acc = acc + red[y_group * CB + col];
                }
                o[c] = acc;
                if (ty == 0u && col < DV) {
                    sq = sq + acc * acc;
                }
            }
            let rstd = 1.0 / sqrt(row_sum2(tid, vec2<f32>(sq, 0.0)).x / f32(DV) + layer.rms_eps);
            if (ty == 0u) {
                for (var c = 0u; c < RX; c = c + 1u) {
                    let col = tx + c * TX;
                    if (col < DV) {
                        let at = tok * width + h * DV + col;
                        out[at] = o[c] * rstd * params[2u * layer.nv + col] * gate_z[c];
                    }
                }
            }
        }
        for (var i = 0u; i < RY; i = i + 1u) {
            for (var c = 0u; c < RX; c = c + 1u) {
                let row = ty + i * TY;
                let col = tx + c * TX;
                if (row < DK && col < DV) {
                    state[state_at + row * DV + col] = s[i * RX + c];
                }
            }
        }
    }

    // Every read of the window is done; shift this workgroup's channels of it, oldest slot first
    // (slot j takes old slot j + T, not yet overwritten, or one of the new tokens).
    storageBarrier();
    let km1 = layer.kk - 1u;
    let owned = 2u * DK + layer.rep * DV;
    for (var m = tid; m < owned; m = m + VEC) {
        var c: u32;
        if (m < DK) {
            c = key * DK + m;
        } else if (m < 2u * DK) {
            c = (layer.nk + key) * DK + (m - DK);
        } else {
            c = 2u * layer.nk * DK + key * layer.rep * DV + (m - 2u * DK);
        }
        for (var j = 0u; j < km1; j = j + 1u) {
            conv_state[(slot * km1 + j) * layer.channels + c] = conv_tap(slot, start, start + steps, j, c);
        }
    }
}
