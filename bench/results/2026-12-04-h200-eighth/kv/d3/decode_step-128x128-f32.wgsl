const DK: u32 = 128u;
const DV: u32 = 128u;
const SG: u32 = 32u;
const CL: u32 = 4u;
const CV: u32 = 1u;
const RL: u32 = 8u;
const RY: u32 = 16u;
const WARPS: u32 = 8u;
const THREADS: u32 = 256u;
const JOBS: u32 = 2u;
const MAX_TOKENS: u32 = 8u;
const CONV_WINDOW: u32 = 4u;

struct Layer {
    tokens: u32,
    seqs: u32,
    nk: u32,
    nv: u32,
    rep: u32,
    kk: u32,
    channels: u32,
    ckpt_interval: u32,
    has_h0: u32,
    has_dht: u32,
    rms_eps: f32,
    gate_parts: u32,
    has_conv_state: u32,
    chunk_bwd_base: u32,
    gate_parts_base: u32,
}

@group(0) @binding(0) var<uniform> layer: Layer;
@group(0) @binding(1) var<storage, read> slots: array<u32>;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;
@group(0) @binding(3) var<storage, read> z: array<f32>;
@group(0) @binding(4) var<storage, read> gate_inputs: array<f32>;
@group(0) @binding(5) var<storage, read> params: array<f32>;
@group(0) @binding(6) var<storage, read_write> state: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> conv_state: array<f32>;
@group(0) @binding(8) var<storage, read_write> out: array<f32>;
@group(0) @binding(9) var<storage, read_write> arrivals: array<atomic<u32>>;

// ---- math.wgsl ----
// Scalar functions of the operator, in forms that stay finite and accurate at the extremes.

fn sigmoid(x: f32) -> f32 {
    return 1.0 / (1.0 + exp(-x));
}

fn silu(x: f32) -> f32 {
    return x * sigmoid(x);
}

// d silu / dx = σ(x)(1 + x(1 − σ(x))), with 1 − σ(x) = σ(−x) to avoid cancellation.
fn silu_grad(x: f32) -> f32 {
    return sigmoid(x) * (1.0 + x * sigmoid(-x));
}

// ln(1 + u) to a few ulps for small u (Goldberg's correction: the rounding of 1 + u is undone).
fn log1p(u: f32) -> f32 {
    let w = 1.0 + u;
    if (w == 1.0) {
        return u;
    }
    return log(w) * (u / (w - 1.0));
}

// ln(1 + eˣ) without overflow.
fn softplus(x: f32) -> f32 {
    if (x > 20.0) {
        return x;
    }
    return log1p(exp(x));
}

// ln softplus(x), finite for every finite x: x where softplus(x) = eˣ to f32's precision (below −20;
// softplus itself underflows to 0 below −104), ln x above 20.
fn log_softplus(x: f32) -> f32 {
    if (x < -20.0) {
        return x;
    }
    return log(softplus(x));
}

// The exponent of −ℓ = exp(a_log)·softplus(a + dt_bias), taken in log space so that neither
// exp(a_log) (a_log ≥ 89) nor the product overflows, nor 0·∞ (softplus underflowing) is NaN.
fn log_decay_exponent(a_log: f32, arg: f32) -> f32 {
    return a_log + log_softplus(arg);
}

// ℓ = ln g stops at −e^LOG_DECAY_CAP ≈ −200: g = e^ℓ is 0 in f32 already below −104, so nothing
// the layer computes changes, but ℓ and the chunked family's sums of up to 64 of them stay finite.
const LOG_DECAY_CAP: f32 = 5.3;

// ln g = −exp(a_log)·softplus(a + dt_bias): kept in log form so that g → 0 stays finite.
fn log_decay(a_log: f32, arg: f32) -> f32 {
    return -exp(min(log_decay_exponent(a_log, arg), LOG_DECAY_CAP));
}

// Linear workgroup index of a grid folded into x and y (x is capped at 65 535 workgroups).
fn folded(wg: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wg.x + wg.y * nwg.x;
}

// ---- decode_step (subgroup columns): experiment ----
const L2_EPS: f32 = 1e-6;
const TAPPED: u32 = 2u * DK + DV;
const ALL_JOBS: u32 = TAPPED + DV;

var<workgroup> conv_out: array<f32, MAX_TOKENS * TAPPED>;
var<workgroup> norm_gate: array<f32, MAX_TOKENS * DV>;
var<workgroup> o_raw: array<vec4<f32>, MAX_TOKENS * DV / 4u>;
var<workgroup> sq_parts: array<vec2<f32>, MAX_TOKENS * WARPS>;
var<workgroup> o_parts: array<f32, MAX_TOKENS * WARPS>;
var<workgroup> last_arrival: u32;

fn decode_tap(slot: u32, start: u32, t: u32, j: u32, c: u32) -> f32 {
    let km1 = layer.kk - 1u;
    let rel = t - start + j;
    let inside = rel >= km1;
    let from_tokens = qkv[select(0u, (t + j - km1) * layer.channels + c, inside)];
    let from_window = conv_state[select((slot * km1 + rel) * layer.channels + c, 0u, inside)];
    return select(from_window, from_tokens, inside);
}

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

fn conv_value(slot: u32, start: u32, t: u32, c: u32, taps: Taps) -> f32 {
    var acc = dot(taps.w, taps.x);
    let weights = 2u * layer.nv + DV + c * layer.kk;
    for (var j = CONV_WINDOW; j < layer.kk; j = j + 1u) {
        acc = acc + params[weights + j] * decode_tap(slot, start, t, j, c);
    }
    return silu(acc);
}

fn write_window(slot: u32, c: u32, taps: Taps) {
    let km1 = layer.kk - 1u;
    for (var i = 0u; i < CONV_WINDOW - 1u; i = i + 1u) {
        if (i < km1) {
            conv_state[(slot * km1 + i) * layer.channels + c] = taps.x[i + 1u];
        }
    }
}

fn job_channel(m: u32, key: u32, h: u32) -> u32 {
    if (m < DK) {
        return key * DK + m;
    }
    if (m < 2u * DK) {
        return (layer.nk + key) * DK + m - DK;
    }
    return 2u * layer.nk * DK + h * DV + m - 2u * DK;
}

// Row `row` of k̂ (q̂) of token t, zero past DK.
fn k_hat(t: u32, row: u32, inv: f32) -> f32 {
    return conv_out[t * TAPPED + DK + min(row, DK - 1u)] * inv * f32(row < DK);
}

fn q_hat(t: u32, row: u32, inv: f32) -> f32 {
    return conv_out[t * TAPPED + min(row, DK - 1u)] * inv * f32(row < DK);
}

// The first of the four columns lane (·, cl) of warp `warp` holds in its column group v.
fn lane_col4(warp: u32, cl: u32, v: u32) -> u32 {
    return (warp * CV * CL + v * CL + cl) * 4u;
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32, @builtin(subgroup_id) warp: u32,
        @builtin(subgroup_invocation_id) lane: u32) {
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
    let rl = lane / CL;
    let cl = lane % CL;
    let head_at = ((slot * layer.nv + h) * DK * DV) / 4u;

    // This lane's rows rl + RL·i and column groups v: columns col4(v) .. col4(v) + 3.
    var s: array<vec4<f32>, RY * CV>;
    for (var i = 0u; i < RY; i = i + 1u) {
        for (var v = 0u; v < CV; v = v + 1u) {
            let row = rl + RL * i;
            let col4 = lane_col4(warp, cl, v);
            var value = vec4<f32>(0.0);
            if (row < DK && col4 < DV) {
                value = state[head_at + row * (DV / 4u) + col4 / 4u];
            }
            s[i * CV + v] = value;
        }
    }
    let a_log = params[h];
    let dt_bias = params[layer.nv + h];
    let a0 = gate_inputs[start * layer.nv + h];
    let b0 = gate_inputs[layer.tokens * layer.nv + start * layer.nv + h];

    var last: array<Taps, JOBS>;
    for (var t = 0u; t < steps; t = t + 1u) {
        var sq = vec2<f32>(0.0);
        for (var r = 0u; r < JOBS; r = r + 1u) {
            let m = tid + r * THREADS;
            if (m < TAPPED) {
                let c = job_channel(m, key, h);
                let taps = first_taps(slot, start, start + t, c);
                let x = conv_value(slot, start, start + t, c, taps);
                last[r] = taps;
                conv_out[t * TAPPED + m] = x;
                if (m < DK) {
                    sq.x = sq.x + x * x;
                } else if (m < 2u * DK) {
                    sq.y = sq.y + x * x;
                }
            } else if (m < ALL_JOBS) {
                let col = m - TAPPED;
                norm_gate[t * DV + col] = params[2u * layer.nv + col] * silu(z[(start + t) * layer.nv * DV + h * DV + col]);
            }
        }
        let ws = subgroupAdd(sq);
        if (lane == 0u) {
            sq_parts[t * WARPS + warp] = ws;
        }
    }
    workgroupBarrier();
    let counter = n * layer.nk + key;
    var arrival = 0u;
    if (tid == 0u) {
        arrival = atomicAdd(&arrivals[counter], 1u);
    }

    for (var t = 0u; t < steps; t = t + 1u) {
        var a = a0;
        var b = b0;
        if (t > 0u) {
            a = gate_inputs[(start + t) * layer.nv + h];
            b = gate_inputs[layer.tokens * layer.nv + (start + t) * layer.nv + h];
        }
        let g = exp(log_decay(a_log, a + dt_bias));
        let beta = sigmoid(b);
        var ss = vec2<f32>(L2_EPS);
        for (var w = 0u; w < WARPS; w = w + 1u) {
            ss = ss + sq_parts[t * WARPS + w];
        }
        let inv_q = 1.0 / (sqrt(ss.x) * sqrt(f32(DK)));
        let inv_k = 1.0 / sqrt(ss.y);
        var acc: array<vec4<f32>, CV>;
        for (var v = 0u; v < CV; v = v + 1u) {
            acc[v] = vec4<f32>(0.0);
        }
        for (var i = 0u; i < RY; i = i + 1u) {
            let kh = k_hat(t, rl + RL * i, inv_k);
            for (var v = 0u; v < CV; v = v + 1u) {
                s[i * CV + v] = s[i * CV + v] * g;
                acc[v] = acc[v] + s[i * CV + v] * kh;
            }
        }
        var u: array<vec4<f32>, CV>;
        for (var v = 0u; v < CV; v = v + 1u) {
            var sum = acc[v];
            for (var off = CL; off < SG; off = off * 2u) {
                sum = sum + subgroupShuffleXor(sum, off);
            }
            let col4 = lane_col4(warp, cl, v);
            let vb = t * TAPPED + 2u * DK + min(col4, DV - 4u);
            let x = vec4<f32>(conv_out[vb], conv_out[vb + 1u], conv_out[vb + 2u], conv_out[vb + 3u]);
            u[v] = beta * (x - sum) * f32(col4 < DV);
        }
        var o: array<vec4<f32>, CV>;
        for (var v = 0u; v < CV; v = v + 1u) {
            o[v] = vec4<f32>(0.0);
        }
        for (var i = 0u; i < RY; i = i + 1u) {
            let row = rl + RL * i;
            let kh = k_hat(t, row, inv_k);
            let qh = q_hat(t, row, inv_q);
            for (var v = 0u; v < CV; v = v + 1u) {
                s[i * CV + v] = s[i * CV + v] + kh * u[v];
                o[v] = o[v] + s[i * CV + v] * qh;
            }
        }
        // Every row lane ends with its columns' o; row lane 0's count once in the warp's sum of squares.
        var osq = 0.0;
        for (var v = 0u; v < CV; v = v + 1u) {
            var sum = o[v];
            for (var off = CL; off < SG; off = off * 2u) {
                sum = sum + subgroupShuffleXor(sum, off);
            }
            let col4 = lane_col4(warp, cl, v);
            osq = osq + dot(sum, sum);
            if (rl == 0u && col4 < DV) {
                o_raw[(t * DV + col4) / 4u] = sum;
            }
        }
        osq = osq * f32(rl == 0u);
        for (var off = 1u; off < CL; off = off * 2u) {
            osq = osq + subgroupShuffleXor(osq, off);
        }
        if (lane == 0u) {
            o_parts[t * WARPS + warp] = osq;
        }
    }
    for (var i = 0u; i < RY; i = i + 1u) {
        for (var v = 0u; v < CV; v = v + 1u) {
            let row = rl + RL * i;
            let col4 = lane_col4(warp, cl, v);
            if (row < DK && col4 < DV) {
                state[head_at + row * (DV / 4u) + col4 / 4u] = s[i * CV + v];
            }
        }
    }
    if (tid == 0u) {
        let is_last = arrival + 1u == layer.rep;
        if (is_last) {
            atomicStore(&arrivals[counter], 0u);
        }
        last_arrival = u32(is_last);
    }
    workgroupBarrier();
    let row_width = layer.nv * DV;
    for (var m = tid; m < steps * DV; m = m + THREADS) {
        let t = m / DV;
        let col = m % DV;
        var total = 0.0;
        for (var w = 0u; w < WARPS; w = w + 1u) {
            total = total + o_parts[t * WARPS + w];
        }
        let rstd = 1.0 / sqrt(total / f32(DV) + layer.rms_eps);
        out[(start + t) * row_width + h * DV + col] = o_raw[m / 4u][m % 4u] * rstd * norm_gate[m];
    }
    if (layer.kk <= CONV_WINDOW) {
        for (var r = 0u; r < JOBS; r = r + 1u) {
            let m = tid + r * THREADS;
            if (m < TAPPED && (m >= 2u * DK || last_arrival != 0u)) {
                write_window(slot, job_channel(m, key, h), last[r]);
            }
        }
        return;
    }
    storageBarrier();
    let km1 = layer.kk - 1u;
    for (var m = tid; m < TAPPED; m = m + THREADS) {
        if (m >= 2u * DK || last_arrival != 0u) {
            let c = job_channel(m, key, h);
            for (var j = 0u; j < km1; j = j + 1u) {
                conv_state[(slot * km1 + j) * layer.channels + c] = decode_tap(slot, start, start + steps, j, c);
            }
        }
    }
}
