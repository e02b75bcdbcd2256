// One decode step, the whole forward of its tokens in one dispatch: for each of layer.seqs
// sequences, layer.tokens / layer.seqs new tokens (T = 1, or a few drafts): conv + SiLU, the q/k
// L2 norms, the gates, the delta rule on the sequence's recurrent states (read and updated in
// place in a pool addressed by `slots`), the gated RMSNorm, and the shift of its conv windows.
//
// One workgroup per (sequence, value head): it computes its key head's q̂ and k̂ itself (the rep
// value heads of a key head each do), then its state in tiles of DK rows × CB columns (BLOCKS
// column blocks; one where a head fits), and normalises o over the head's columns from workgroup
// memory. So the step's latency is one workgroup's walk over one state, with every state of the
// step in flight at once.
//
// The conv windows are shifted in place once read: a channel's new window is its last token's taps
// 1 … kk − 1, which the thread that loaded them writes from its registers (kk ≤ CONV_WINDOW; past
// that, the windows are read again after a storageBarrier). A value head's v channels are read
// only by its own workgroup, whose row group 0 writes a tile's columns once the tile is done (its
// barriers follow every read of them). A key head's q and k channels are read by rep workgroups:
// each counts itself in `arrivals[sequence, key head]` once its q̂ and k̂ are in workgroup memory
// (so its reads of those windows have returned), and the last to arrive writes them and sets the
// count back to zero for the next step.
//
// Loads are issued in batches, each batch before any of its values is used: a thread's slot, then
// at once its first tile, its first token's gates, z, and every conv tap its q/k and v channels
// read (the first CONV_WINDOW taps of a channel branch-free, masked by zero weights past kk), so
// that the step waits for memory about three times, not once a tap (measured on the H200: a
// dependent load a tap made the step about 11 µs longer than its state traffic).
//
// VEC threads hold a tile in registers, TX across columns and TY across rows: a thread holds rows
// ty + i·TY and columns col0 + tx + c·TX, so a warp's loads of a state row are contiguous. Where a
// head takes several tiles, the next tile's loads are issued before this tile's arithmetic. Per
// token, k̂ᵀ(gS) and q̂ᵀS reduce over the TY row groups through `red_k` and `red_q` (two arrays, so
// two barriers a token: each array is rewritten only a barrier after its last read); row group 0
// keeps the raw o of its columns in `o_raw`, which the RMSNorm reads once the head's last block is
// done.
//
// Layouts: slots [seqs]; qkv [seqs, T, C]; z, out [seqs, T, nv·DV]; gate_inputs a then b, each
// [seqs, T, nv]; params a_log [nv] | dt_bias [nv] | norm [DV] | conv [C, kk];
// state [slots, nv, DK, DV]; conv_state [slots, kk − 1, C], oldest token first; arrivals
// [seqs, nk], zero between steps.
// Grid: folded, seqs · nv workgroups.

const L2_EPS: f32 = 1e-6;
// Partial sums of a workgroup-wide sum (VEC / PARTS values each).
const PARTS: u32 = 16u;
const TILE: u32 = RY * RX;

var<workgroup> qk: array<f32, 2u * MAX_TOKENS * DK>;
var<workgroup> o_raw: array<f32, MAX_TOKENS * DV>;
var<workgroup> red_k: array<f32, TY * CB>;
var<workgroup> red_q: array<f32, TY * CB>;
var<workgroup> sum_all: array<vec2<f32>, VEC>;
var<workgroup> sum_parts: array<vec2<f32>, PARTS>;
var<workgroup> last_arrival: u32;

// The sum of `value` over the workgroup, returned to every thread, in two levels (VEC values to
// PARTS partials to one) and two barriers. Call from uniform control flow. A next call may follow
// at once: its first barrier separates its writes from this call's reads.
fn workgroup_sum2(tid: u32, value: vec2<f32>) -> vec2<f32> {
    sum_all[tid] = value;
    workgroupBarrier();
    if (tid < PARTS) {
        var acc = vec2<f32>(0.0);
        for (var i = 0u; i < VEC / PARTS; i = i + 1u) {
            acc = acc + sum_all[tid * (VEC / PARTS) + i];
        }
        sum_parts[tid] = acc;
    }
    workgroupBarrier();
    var total = vec2<f32>(0.0);
    for (var i = 0u; i < PARTS; i = i + 1u) {
        total = total + sum_parts[i];
    }
    return total;
}

// The raw value tap j of the conv at token t of sequence `slot`'s call (starting at `start`) reads:
// token t + j − (kk − 1) of the call where inside it, else slot (t − start) + j of the conv window.
// Both are loaded (at a valid index) and one kept, so that no branch splits a batch of loads. A
// decoder always has windows (its pool's), so layer.has_conv_state is not read.
fn decode_tap(slot: u32, start: u32, t: u32, j: u32, c: u32) -> f32 {
    let km1 = layer.kk - 1u;
    let rel = t - start + j;
    let inside = rel >= km1;
    let from_tokens = qkv[select(0u, (t + j - km1) * layer.channels + c, inside)];
    let from_window = conv_state[select((slot * km1 + rel) * layer.channels + c, 0u, inside)];
    return select(from_window, from_tokens, inside);
}

// The first CONV_WINDOW taps of channel c at token t and their weights (zero past kk).
struct Taps {
    x: vec4<f32>,
    w: vec4<f32>,
}

fn first_taps(slot: u32, start: u32, t: u32, c: u32) -> Taps {
    let weights = 2u * layer.nv + DV + c * layer.kk;
    var taps: Taps;
    for (var j = 0u; j < CONV_WINDOW; j = j + 1u) {
        let tap = min(j, layer.kk - 1u);
        taps.x[j] = decode_tap(slot, start, t, tap, c);
        taps.w[j] = select(0.0, params[weights + tap], j < layer.kk);
    }
    return taps;
}

// Conv + SiLU of channel c at token t from its first taps, reading the taps past CONV_WINDOW
// (kk > CONV_WINDOW only) as it goes.
fn conv_value(slot: u32, start: u32, t: u32, c: u32, taps: Taps) -> f32 {
    var acc = dot(taps.w, taps.x);
    let weights = 2u * layer.nv + DV + c * layer.kk;
    for (var j = CONV_WINDOW; j < layer.kk; j = j + 1u) {
        acc = acc + params[weights + j] * decode_tap(slot, start, t, j, c);
    }
    return silu(acc);
}

// Channel c's new conv window in `slot`, from the taps of its last token: slot i takes tap i + 1
// (kk ≤ CONV_WINDOW).
fn write_window(slot: u32, c: u32, taps: Taps) {
    let km1 = layer.kk - 1u;
    for (var i = 0u; i < CONV_WINDOW - 1u; i = i + 1u) {
        if (i < km1) {
            conv_state[(slot * km1 + i) * layer.channels + c] = taps.x[i + 1u];
        }
    }
}

// Row `row` of q̂ (which = 0) or k̂ (which = 1) of token `t` of the call, zero past DK.
fn hat(which: u32, t: u32, row: u32) -> f32 {
    return qk[(2u * t + which) * DK + min(row, DK - 1u)] * f32(row < DK);
}

// The first column of tile `j`.
fn tile_col0(j: u32) -> u32 {
    return j * CB;
}

fn state_at(slot: u32, h: u32) -> u32 {
    return (slot * layer.nv + h) * DK * DV;
}

// This thread's elements of tile `j`: rows ty + i·TY, columns col0 + tx + c·TX (zero outside the
// state).
fn load_tile(slot: u32, h: u32, j: u32, tx: u32, ty: u32) -> array<f32, TILE> {
    let at = state_at(slot, h);
    let col0 = tile_col0(j);
    var s: array<f32, TILE>;
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

// What a tile's token needs besides the state, none of it depending on the state, as loaded: the
// gate inputs, the conv taps of this thread's v columns, and its column's z and norm weight (DV ≤
// VEC: one column a thread). `finish` turns them into the gates, v and the RMSNorm's factor; the
// two are apart so that a batch of loads is issued before any is used.
struct RawInputs {
    a: f32,
    b: f32,
    a_log: f32,
    dt_bias: f32,
    v: array<Taps, RX>,
    z: f32,
    norm: f32,
}

struct TokenInputs {
    g: f32,
    beta: f32,
    v: array<f32, RX>,
    norm_gate: f32,
}

fn v_channel(h: u32, j: u32, tx: u32, c: u32) -> u32 {
    return 2u * layer.nk * DK + h * DV + min(tile_col0(j) + tx + c * TX, DV - 1u);
}

fn load_inputs(slot: u32, start: u32, h: u32, j: u32, t: u32, tx: u32, tid: u32) -> RawInputs {
    let tok = start + t;
    let e = tok * layer.nv + h;
    var x: RawInputs;
    x.a = gate_inputs[e];
    x.b = gate_inputs[layer.tokens * layer.nv + e];
    x.a_log = params[h];
    x.dt_bias = params[layer.nv + h];
    for (var c = 0u; c < RX; c = c + 1u) {
        x.v[c] = first_taps(slot, start, tok, v_channel(h, j, tx, c));
    }
    let m = min(tid, DV - 1u);
    x.z = z[tok * layer.nv * DV + h * DV + m];
    x.norm = params[2u * layer.nv + m];
    return x;
}

fn finish(slot: u32, start: u32, h: u32, j: u32, t: u32, tx: u32, raw: RawInputs) -> TokenInputs {
    var x: TokenInputs;
    x.g = exp(log_decay(raw.a_log, raw.a + raw.dt_bias));
    x.beta = sigmoid(raw.b);
    for (var c = 0u; c < RX; c = c + 1u) {
        x.v[c] = conv_value(slot, start, start + t, v_channel(h, j, tx, c), raw.v[c]);
    }
    x.norm_gate = raw.norm * silu(raw.z);
    return x;
}

@compute @workgroup_size(VEC)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nv) {
        return;
    }
    let h = job % layer.nv;
    let n = job / layer.nv;
    let key = h / layer.rep;
    let slot = slots[n];
    let steps = layer.tokens / layer.seqs;
    let start = n * steps;
    let tx = tid % TX;
    let ty = tid / TX;
    let row_width = layer.nv * DV;

    // The first batch of loads: the first tile, its first token's inputs.
    var s = load_tile(slot, h, 0u, tx, ty);
    let first_raw = load_inputs(slot, start, h, 0u, 0u, tx, tid);

    // q̂ and k̂ of every token, as qk_norm_forward computes them (both channels' taps loaded before
    // either is used; DK ≤ VEC: a channel a thread), the last token's taps kept for the windows.
    var last_q: Taps;
    var last_k: Taps;
    for (var t = 0u; t < steps; t = t + 1u) {
        var sq = vec2<f32>(0.0);
        for (var m = tid; m < DK; m = m + VEC) {
            let cq = key * DK + m;
            let ck = (layer.nk + key) * DK + m;
            let taps_q = first_taps(slot, start, start + t, cq);
            let taps_k = first_taps(slot, start, start + t, ck);
            let q = conv_value(slot, start, start + t, cq, taps_q);
            let k = conv_value(slot, start, start + t, ck, taps_k);
            last_q = taps_q;
            last_k = taps_k;
            qk[2u * t * DK + m] = q;
            qk[(2u * t + 1u) * DK + m] = k;
            sq = sq + vec2<f32>(q * q, k * k);
        }
        let ss = workgroup_sum2(tid, sq) + vec2<f32>(L2_EPS);
        let inv_q = 1.0 / (sqrt(ss.x) * sqrt(f32(DK)));
        let inv_k = 1.0 / sqrt(ss.y);
        for (var m = tid; m < DK; m = m + VEC) {
            qk[2u * t * DK + m] = qk[2u * t * DK + m] * inv_q;
            qk[(2u * t + 1u) * DK + m] = qk[(2u * t + 1u) * DK + m] * inv_k;
        }
    }
    // Every read of the key head's q and k windows has returned (the sums above consumed them):
    // count this workgroup in. The count comes back while the state is walked; it says at the end
    // whether this workgroup arrived last.
    let counter = n * layer.nk + key;
    var arrival = 0u;
    if (tid == 0u) {
        arrival = atomicAdd(&arrivals[counter], 1u);
    }
    workgroupBarrier();

    var raw = first_raw;
    var first = finish(slot, start, h, 0u, 0u, tx, raw);
    // The first token's norm factor, kept for the RMSNorm after the token loops.
    let first_norm_gate = first.norm_gate;
    for (var j = 0u; j < BLOCKS; j = j + 1u) {
        let col0 = tile_col0(j);
        var next: array<f32, TILE>;
        var next_raw: RawInputs;
        if (j + 1u < BLOCKS) {
            next = load_tile(slot, h, j + 1u, tx, ty);
            next_raw = load_inputs(slot, start, h, j + 1u, 0u, tx, tid);
        }
        // The taps of this thread's v columns at the tile's last token.
        var window = raw.v;
        for (var t = 0u; t < steps; t = t + 1u) {
            var x = first;
            if (t > 0u) {
                let raw_t = load_inputs(slot, start, h, j, t, tx, tid);
                x = finish(slot, start, h, j, t, tx, raw_t);
                window = raw_t.v;
            }
            let g = x.g;
            let beta = x.beta;
            let v = x.v;
            // k̂ᵀ (g S), column by column.
            for (var c = 0u; c < RX; c = c + 1u) {
                var acc = 0.0;
                for (var i = 0u; i < RY; i = i + 1u) {
                    s[i * RX + c] = s[i * RX + c] * g;
                    acc = acc + s[i * RX + c] * hat(1u, t, ty + i * TY);
                }
                red_k[ty * CB + tx + c * TX] = acc;
            }
            workgroupBarrier();
            // u = β (v − k̂ᵀ g S); S += k̂ uᵀ, then q̂ᵀ S.
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = tx + c * TX;
                var kv = 0.0;
                for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
                    kv = kv + red_k[y_group * CB + col];
                }
                let u = beta * (v[c] * f32(col0 + col < DV) - kv);
                var acc = 0.0;
                for (var i = 0u; i < RY; i = i + 1u) {
                    s[i * RX + c] = s[i * RX + c] + hat(1u, t, ty + i * TY) * u;
                    acc = acc + s[i * RX + c] * hat(0u, t, ty + i * TY);
                }
                red_q[ty * CB + col] = acc;
            }
            // red_k is rewritten next token, after the barrier below that follows every read of it.
            workgroupBarrier();
            // The raw o of this block's columns; row group 0 keeps it. red_q is rewritten next token
            // only after the barrier above has followed these reads.
            if (ty == 0u) {
                for (var c = 0u; c < RX; c = c + 1u) {
                    let col = col0 + tx + c * TX;
                    var o = 0.0;
                    for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
                        o = o + red_q[y_group * CB + tx + c * TX];
                    }
                    if (col < DV) {
                        o_raw[t * DV + col] = o;
                    }
                }
            }
        }
        let at = state_at(slot, h);
        for (var i = 0u; i < RY; i = i + 1u) {
            for (var c = 0u; c < RX; c = c + 1u) {
                let row = ty + i * TY;
                let col = col0 + tx + c * TX;
                if (row < DK && col < DV) {
                    state[at + row * DV + col] = s[i * RX + c];
                }
            }
        }
        // The tile's v windows: every read of them came before the barriers above.
        if (layer.kk <= CONV_WINDOW && ty == 0u) {
            for (var c = 0u; c < RX; c = c + 1u) {
                if (col0 + tx + c * TX < DV) {
                    write_window(slot, v_channel(h, j, tx, c), window[c]);
                }
            }
        }
        if (j + 1u < BLOCKS) {
            s = next;
            raw = next_raw;
            first = finish(slot, start, h, j + 1u, 0u, tx, raw);
        }
    }

    // Whether this workgroup arrived last (then the count goes back to zero for the next step),
    // published by the barrier below.
    if (tid == 0u) {
        let last = arrival + 1u == layer.rep;
        if (last) {
            atomicStore(&arrivals[counter], 0u);
        }
        last_arrival = u32(last);
    }
    // The head is complete: its gated RMSNorm, as norm_forward computes it, once row group 0's
    // writes of o_raw are done.
    workgroupBarrier();
    for (var t = 0u; t < steps; t = t + 1u) {
        let row = (start + t) * row_width + h * DV;
        let o = o_raw[t * DV + min(tid, DV - 1u)] * f32(tid < DV);
        let rstd = 1.0 / sqrt(workgroup_sum2(tid, vec2<f32>(o * o, 0.0)).x / f32(DV) + layer.rms_eps);
        var norm_gate = first_norm_gate;
        if (t > 0u) {
            norm_gate = params[2u * layer.nv + min(tid, DV - 1u)] * silu(z[row + min(tid, DV - 1u)]);
        }
        if (tid < DV) {
            out[row + tid] = o * rstd * norm_gate;
        }
    }

    // The key head's q and k windows, where this workgroup arrived last.
    if (layer.kk <= CONV_WINDOW) {
        if (last_arrival != 0u && tid < DK) {
            write_window(slot, key * DK + tid, last_q);
            write_window(slot, (layer.nk + key) * DK + tid, last_k);
        }
        return;
    }

    // kk > CONV_WINDOW: every read of this workgroup's conv windows is done; shift them, a channel
    // per thread, oldest slot first: slot j takes old slot j + T (not yet overwritten) or one of
    // the new tokens. The head's v channels always; its key head's q and k channels where this
    // workgroup arrived last.
    storageBarrier();
    let km1 = layer.kk - 1u;
    let owned = DV + 2u * DK * last_arrival;
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
            conv_state[(slot * km1 + j) * layer.channels + c] = decode_tap(slot, start, start + steps, j, c);
        }
    }
}
