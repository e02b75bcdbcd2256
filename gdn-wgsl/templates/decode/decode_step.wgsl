// One decode step, the whole forward of its tokens in one dispatch: for each of layer.seqs
// sequences, layer.tokens / layer.seqs new tokens (T = 1, or a few drafts): conv + SiLU, the q/k
// L2 norms, the gates, the delta rule on the sequence's recurrent states (read and updated in
// place in a pool addressed by `slots`), the gated RMSNorm, and the shift of its conv windows.
//
// One workgroup per (sequence, value head), its whole state in registers at once, in one pass.
// A column group of four state columns (a vec4 a row) is held by ROW_LANES lanes, lane rl holding
// rows rl + ROW_LANES·i (i < RY); in each block of ROW_LANES·COLUMN_LANES consecutive invocations,
// invocation j is row lane j / COLUMN_LANES of the block's column group j % COLUMN_LANES, so that
// every 8 consecutive lanes load 2 rows × 64 contiguous bytes. Every sum over the rows (k̂ᵀS and
// q̂ᵀS of a column, the squared norms of q and k) is a lane's own rows, then its row lanes'
// (`row_lanes_sum`: subgroup shuffles in decode_step, for subgroups of at least 32; workgroup
// memory in decode_step_portable). So nothing but shuffles separates a token's two products, and
// the step waits on memory about twice: the state with the first token's inputs, then nothing
// until the stores. (This beat the previous kernel, which walked a head's state in four tiles of
// 16 elements a thread with two barriers a token each, at 8 sequences of qwen3-next and at one;
// row lanes consecutive instead were as slow as that: each 8-lane quarter of a warp's vec4 loads
// then touched 8 rows. BENCHMARKS.md, decode, and History: the decode step.)
//
// A token: one job a thread (a channel's conv + SiLU: the key head's q and k, the head's v; or a
// column's RMSNorm factor norm·silu(z)) into workgroup memory; a barrier; the delta rule on the
// state, the raw o of the group's columns and their sum of squares into workgroup memory; a
// barrier; the gated RMSNorm of o. The RMSNorm's inputs are double-buffered by token parity, so
// the next token's jobs may write while this token's norm reads.
//
// The conv windows are shifted once every read of them has returned, to the last token's taps
// 1 … kk − 1, which a job thread keeps in registers: a value head's v windows are read by its own
// workgroup only, which writes them at the end; a key head's q and k windows are read by rep
// workgroups: each counts itself in `arrivals[sequence, key head]` after its last token's barrier
// (its reads consumed), and the last to arrive writes them and sets the count back to zero for the
// next step. (kk > CONV_WINDOW: the windows are shifted at the end from their reads again.)
//
// Layouts: slots [seqs]; qkv [seqs, T, C]; z, out [seqs, T, nv·DV]; gate_inputs a then b, each
// [seqs, T, nv]; params a_log [nv] | dt_bias [nv] | norm [DV] | conv [C, kk];
// state [slots, nv, DK, DV] (read as vec4s); conv_state [slots, kk − 1, C], oldest token first;
// arrivals [seqs, nk], zero between steps.
// Grid: folded, seqs · nv workgroups.

const L2_EPS: f32 = 1e-6;
// A token's jobs: the channels with conv taps (the key head's q and k, the head's v), then each
// column's RMSNorm factor.
const TAPPED: u32 = 2u * DK + DV;
const JOBS: u32 = TAPPED + DV;
// Rounds of the workgroup over a token's jobs, a constant so that each round's loads are issued
// together.
const ROUNDS: u32 = (JOBS + THREADS - 1u) / THREADS;

// The token's conv outputs: raw q, raw k (normalised as they are read), v.
var<workgroup> conv_out: array<f32, TAPPED>;
// By token parity: each column's norm·silu(z), the raw o, each group's Σ o².
var<workgroup> norm_gate: array<f32, 2u * DV>;
var<workgroup> o_raw: array<vec4<f32>, 2u * DV / 4u>;
var<workgroup> o_squares: array<f32, 2u * GROUPS>;
var<workgroup> last_arrival: u32;

// The raw value tap j of the conv at token t of sequence `slot`'s call (starting at `start`) reads:
// token t + j − (kk − 1) of the call where inside it, else slot (t − start) + j of the conv window.
// Both are loaded (at a valid index) and one kept, so that no branch splits a batch of loads.
fn decode_tap(slot: u32, start: u32, t: u32, j: u32, c: u32) -> f32 {
    let km1 = layer.kk - 1u;
    let rel = t - start + j;
    let inside = rel >= km1;
    let from_tokens = qkv[select(0u, (t + j - km1) * layer.channels + c, inside)];
    let from_window = conv_state[select((slot * km1 + rel) * layer.channels + c, 0u, inside)];
    return select(from_window, from_tokens, inside);
}

// A channel's conv + SiLU at a token, and its first CONV_WINDOW raw taps.
struct Conv {
    value: f32,
    taps: vec4<f32>,
}

// Conv + SiLU of channel c at token t: the first CONV_WINDOW taps loaded together (zero weights
// past kk), the rest (kk > CONV_WINDOW only) as they are summed.
fn conv(slot: u32, start: u32, t: u32, c: u32) -> Conv {
    let weights = 2u * layer.nv + DV + c * layer.kk;
    var x: vec4<f32>;
    var w: vec4<f32>;
    for (var j = 0u; j < CONV_WINDOW; j = j + 1u) {
        let tap = min(j, layer.kk - 1u);
        x[j] = decode_tap(slot, start, t, tap, c);
        w[j] = select(0.0, params[weights + tap], j < layer.kk);
    }
    var acc = dot(w, x);
    for (var j = CONV_WINDOW; j < layer.kk; j = j + 1u) {
        acc = acc + params[weights + j] * decode_tap(slot, start, t, j, c);
    }
    return Conv(silu(acc), x);
}

// The channel of job m < TAPPED.
fn job_channel(m: u32, key: u32, h: u32) -> u32 {
    if (m < DK) {
        return key * DK + m;
    }
    if (m < 2u * DK) {
        return (layer.nk + key) * DK + m - DK;
    }
    return 2u * layer.nk * DK + h * DV + m - 2u * DK;
}

@compute @workgroup_size(THREADS)
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
    let block = tid / (ROW_LANES * COLUMN_LANES);
    let rl = (tid / COLUMN_LANES) % ROW_LANES;
    let group = block * COLUMN_LANES + tid % COLUMN_LANES;
    // This lane's columns: col4 … col4 + 3 (none where the head has fewer).
    let col4 = 4u * group;
    let columns = col4 < DV;
    // The vec4 of (row 0, col4) in the pool.
    let at = (slot * layer.nv + h) * (DK * DV / 4u) + group;
    let row_vec4s = DV / 4u;

    // The first batch of loads: the state, with the first token's jobs below.
    var s: array<vec4<f32>, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        var value = vec4<f32>(0.0);
        if (columns) {
            value = state[at + (rl + ROW_LANES * i) * row_vec4s];
        }
        s[i] = value;
    }
    let a_log = params[h];
    let dt_bias = params[layer.nv + h];
    let counter = n * layer.nk + key;
    var arrival = 0u;

    // Each job's last token's taps, for its channel's new window (kk ≤ CONV_WINDOW).
    var last_taps: array<vec4<f32>, ROUNDS>;
    for (var t = 0u; t < steps; t = t + 1u) {
        let tok = start + t;
        let parity = t % 2u;
        let e = tok * layer.nv + h;
        let a = gate_inputs[e];
        let b = gate_inputs[layer.tokens * layer.nv + e];
        for (var r = 0u; r < ROUNDS; r = r + 1u) {
            let m = tid + r * THREADS;
            if (m < TAPPED) {
                let result = conv(slot, start, tok, job_channel(m, key, h));
                conv_out[m] = result.value;
                last_taps[r] = result.taps;
            } else if (m < JOBS) {
                let col = m - TAPPED;
                let zv = z[tok * layer.nv * DV + h * DV + col];
                norm_gate[parity * DV + col] = params[2u * layer.nv + col] * silu(zv);
            }
        }
        let g = exp(log_decay(a_log, a + dt_bias));
        let beta = sigmoid(b);
        workgroupBarrier();
        // Every read of the key head's q and k windows has returned (the jobs consumed them):
        // count this workgroup in; the count comes back while the state is updated.
        if (t + 1u == steps && tid == 0u) {
            arrival = atomicAdd(&arrivals[counter], 1u);
        }

        // With raw q and k (conv outputs), k̂ = k/‖k‖ and q̂ = q/(‖q‖√DK) as qk_norm_forward computes
        // them: kv = (gS)ᵀk / ‖k‖ and o = Sᵀq / (‖q‖√DK), each squared norm summed beside the product
        // that needs it, so that no row of q or k is held across the two. Then u = β (v − kv);
        // S += k̂ uᵀ.
        var kv = vec4<f32>(0.0);
        var squares = vec4<f32>(0.0);
        for (var i = 0u; i < RY; i = i + 1u) {
            let k = conv_out[DK + rl + ROW_LANES * i];
            s[i] = s[i] * g;
            kv = kv + s[i] * k;
            squares.y = squares.y + k * k;
        }
        let inv_k = 1.0 / sqrt(row_lanes_sum(tid, squares).y + L2_EPS);
        kv = row_lanes_sum(tid, kv) * inv_k;
        let vb = 2u * DK + min(col4, DV - 4u);
        let v = vec4<f32>(conv_out[vb], conv_out[vb + 1u], conv_out[vb + 2u], conv_out[vb + 3u]);
        let ku = beta * (v - kv) * f32(columns) * inv_k;
        var o = vec4<f32>(0.0);
        for (var i = 0u; i < RY; i = i + 1u) {
            let row = rl + ROW_LANES * i;
            let q = conv_out[row];
            s[i] = s[i] + conv_out[DK + row] * ku;
            o = o + s[i] * q;
            squares.x = squares.x + q * q;
        }
        let inv_q = 1.0 / (sqrt(row_lanes_sum(tid, squares).x + L2_EPS) * sqrt(f32(DK)));
        o = row_lanes_sum(tid, o) * inv_q;
        if (t + 1u == steps) {
            for (var i = 0u; i < RY; i = i + 1u) {
                if (columns) {
                    state[at + (rl + ROW_LANES * i) * row_vec4s] = s[i];
                }
            }
        }
        if (rl == 0u) {
            o_squares[parity * GROUPS + group] = dot(o, o);
            if (columns) {
                o_raw[parity * (DV / 4u) + group] = o;
            }
        }
        // Whether this workgroup arrived last (then the count goes back to zero for the next step),
        // published by the barrier below.
        if (t + 1u == steps && tid == 0u) {
            let last = arrival + 1u == layer.rep;
            if (last) {
                atomicStore(&arrivals[counter], 0u);
            }
            last_arrival = u32(last);
        }
        workgroupBarrier();

        // The gated RMSNorm of the token's o, as norm_forward computes it.
        for (var m = tid; m < DV; m = m + THREADS) {
            var total = 0.0;
            for (var other = 0u; other < GROUPS; other = other + 1u) {
                total = total + o_squares[parity * GROUPS + other];
            }
            let rstd = 1.0 / sqrt(total / f32(DV) + layer.rms_eps);
            let raw = o_raw[parity * (DV / 4u) + m / 4u][m % 4u];
            out[tok * layer.nv * DV + h * DV + m] = raw * rstd * norm_gate[parity * DV + m];
        }
    }


    // The new windows: taps 1 … kk − 1 of the last token, from the registers of the job thread that
    // loaded them. The head's v channels always; its key head's q and k channels where this
    // workgroup arrived last.
    let km1 = layer.kk - 1u;
    if (layer.kk <= CONV_WINDOW) {
        for (var r = 0u; r < ROUNDS; r = r + 1u) {
            let m = tid + r * THREADS;
            if (m < TAPPED && (m >= 2u * DK || last_arrival != 0u)) {
                let c = job_channel(m, key, h);
                for (var i = 0u; i < km1; i = i + 1u) {
                    conv_state[(slot * km1 + i) * layer.channels + c] = last_taps[r][i + 1u];
                }
            }
        }
        return;
    }
    // kk > CONV_WINDOW: the windows shifted a channel per thread (the thread whose jobs read it),
    // oldest slot first: slot j takes old slot j + T (not yet overwritten) or one of the new
    // tokens. The head's v channels always; its key head's q and k channels where this workgroup
    // arrived last.
    for (var m = tid; m < TAPPED; m = m + THREADS) {
        if (m >= 2u * DK || last_arrival != 0u) {
            let c = job_channel(m, key, h);
            for (var j = 0u; j < km1; j = j + 1u) {
                conv_state[(slot * km1 + j) * layer.channels + c] = decode_tap(slot, start, start + steps, j, c);
            }
        }
    }
}
