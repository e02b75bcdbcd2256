// One decode step, its delta rule: for each of layer.seqs sequences, layer.tokens / layer.seqs new
// tokens (T = 1, or a few drafts), reading and updating the sequence's recurrent state in place in
// a pool addressed by `slots`. decode_finish runs after it.
//
// Once q̂, k̂ and the gates are known, the delta rule updates each column of a state on its own, so
// a state is split over BLOCKS workgroups of CB columns: one workgroup per (sequence, value head,
// column block), so that a step of a few sequences still fills the GPU and every state is streamed
// through registers once. Each workgroup computes its key head's q̂ and k̂ itself (conv + SiLU and
// L2 norms into workgroup memory: 2·DK·kk products, recomputed by rep·BLOCKS workgroups, against
// the DK·CB state elements each of them moves), holds its block of the state in registers across
// the step's tokens (VEC threads, TX across columns and TY across rows; a thread holds rows
// ty + i·TY and columns tx + c·TX, so a warp's loads of a state row are contiguous) and writes the
// raw output o of its columns into `out`. The gated RMSNorm needs every column of o and the conv
// windows must be shifted after every read of them: decode_finish does both, in the next dispatch.
//
// Layouts: slots [seqs]; qkv [seqs, T, C]; out [seqs, T, nv·DV]; gate_inputs a then b, each
// [seqs, T, nv]; params a_log [nv] | dt_bias [nv] | norm [DV] | conv [C, kk];
// state [slots, nv, DK, DV]; conv_state [slots, kk − 1, C], oldest token first.
// Grid: folded, seqs · nv · BLOCKS workgroups.

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

// This thread's elements of the block of the state that starts at `at`, columns from `col0`:
// rows ty + i·TY, columns col0 + tx + c·TX (zero outside the state).
fn load_state(at: u32, col0: u32, tx: u32, ty: u32) -> array<f32, RY * RX> {
    var s: array<f32, RY * RX>;
    for (var i = 0u; i < RY; i = i + 1u) {
        for (var c = 0u; c < RX; c = c + 1u) {
            let row = ty + i * TY;
            let col = col0 + tx + c * TX;
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
    if (job >= layer.seqs * layer.nv * BLOCKS) {
        return;
    }
    let col0 = (job % BLOCKS) * CB;
    let h = (job / BLOCKS) % layer.nv;
    let n = job / (BLOCKS * layer.nv);
    let key = h / layer.rep;
    let slot = slots[n];
    let steps = layer.tokens / layer.seqs;
    let start = n * steps;
    let tx = tid % TX;
    let ty = tid / TX;
    let width = layer.nv * DV;
    let state_at = (slot * layer.nv + h) * DK * DV;

    // The state block, loaded before the q/k prologue so that the loads overlap it.
    var s = load_state(state_at, col0, tx, ty);

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

    let a_log = params[h];
    let dt_bias = params[layer.nv + h];
    for (var t = 0u; t < steps; t = t + 1u) {
        let tok = start + t;
        let e = tok * layer.nv + h;
        let g = exp(log_decay(a_log, gate_inputs[e] + dt_bias));
        let beta = sigmoid(gate_inputs[layer.tokens * layer.nv + e]);
        // This token's v first, so that its loads overlap the first reduction.
        var v: array<f32, RX>;
        for (var c = 0u; c < RX; c = c + 1u) {
            let col = min(col0 + tx + c * TX, DV - 1u);
            v[c] = decode_conv(slot, start, tok, 2u * layer.nk * DK + h * DV + col);
        }
        // k̂ᵀ (g S), column by column.
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
            u[c] = beta * (v[c] * f32(col0 + col < DV) - kv);
        }
        workgroupBarrier();
        // S += k̂ uᵀ, then q̂ᵀ S.
        for (var c = 0u; c < RX; c = c + 1u) {
            var acc = 0.0;
            for (var i = 0u; i < RY; i = i + 1u) {
                s[i * RX + c] = s[i * RX + c] + hat(1u, t, ty + i * TY) * u[c];
                acc = acc + s[i * RX + c] * hat(0u, t, ty + i * TY);
            }
            red[ty * CB + tx + c * TX] = acc;
        }
        workgroupBarrier();
        // The raw o of this block's columns; row group 0 writes it.
        if (ty == 0u) {
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = col0 + tx + c * TX;
                var o = 0.0;
                for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
                    o = o + red[y_group * CB + tx + c * TX];
                }
                if (col < DV) {
                    out[tok * width + h * DV + col] = o;
                }
            }
        }
        // The next token's first reduction rewrites `red`.
        workgroupBarrier();
    }
    for (var i = 0u; i < RY; i = i + 1u) {
        for (var c = 0u; c < RX; c = c + 1u) {
            let row = ty + i * TY;
            let col = col0 + tx + c * TX;
            if (row < DK && col < DV) {
                state[state_at + row * DV + col] = s[i * RX + c];
            }
        }
    }
}
