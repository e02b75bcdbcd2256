// The delta rule, backward, for batches of few heads (the plan's choice where
// recurrence_backward.wgsl's one workgroup per (sequence, value head) leaves most of the GPU idle):
// BPTT with checkpoints, serial in time and parallel over (sequence, value head, column block), in
// the per-token forward's lane layout (recurrence_forward.wgsl): COLUMN_LANES column groups of four
// columns (a vec4 a row), each over ROW_LANES row lanes, lane rl holding rows rl + ROW_LANES·i
// (i < RY), row lanes COLUMN_LANES invocations apart.
// Each lane keeps its rows of dS in registers, dS = dhT (or 0) first. Segments of ckpt_interval
// steps are walked last to first. Each is first replayed from its checkpoint, every lane writing
// its rows of S_{t−1} (the state entering step t) and its columns of r_t = v_t − g_t·S_{t−1}ᵀk̂_t
// into its own slots of the scratch (a lane reads back only what it wrote: no barrier orders
// them); then swept in reverse, with u_t = β_t·r_t:
//   dS += q̂ doᵀ;  du = dSᵀk̂;  dkv = −β du;  dv = β du;  dβ = du·r;
//   dq̂ = S_t do = g S_{t−1} do + k̂ (u·do);  dk̂ = dS u + g S_{t−1} dkv;
//   dS' = dS + k̂ dkvᵀ;  dg = ⟨dS', S_{t−1}⟩;  dS = g dS'.          Finally dh0 = dS.
// Only du, a sum over the row lanes (`row_lanes_sum`), stands between one step's dS and the next.
// dq̂ and dk̂ (sums over columns), dℓ = dg·g and dβ (over the whole state) span the head's column
// blocks: each workgroup sums its share over its column lanes (`column_lanes_sum`; the gates' over
// its row lanes too) and writes it as its block's partial: layer.hat_parts rows per (token, value
// head) in dqk_hat_heads, layer.gate_parts values in gate_grad_parts, which qk_norm_backward and
// gates_backward add up. dv goes straight into the v channels of dy.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

// Pairs of rows whose (dq̂, dk̂) partials go through one vec4 sum.
const ROW_PAIRS: u32 = (RY + 1u) / 2u;

// Slot of this lane's vec4 `i` of step `step` of the replayed segment (i < RY: a row of S_{t−1};
// i = RY: r_t), component-major and lane-minor so that a block's accesses are contiguous.
fn scratch_slot(job: u32, step: u32, i: u32, tid: u32) -> u32 {
    return ((job * layer.ckpt_interval + step) * (RY + 1u) + i) * 4u * THREADS + tid;
}

fn store_scratch(at: u32, x: vec4<f32>) {
    scratch[at] = x.x;
    scratch[at + THREADS] = x.y;
    scratch[at + 2u * THREADS] = x.z;
    scratch[at + 3u * THREADS] = x.w;
}

fn load_scratch(at: u32) -> vec4<f32> {
    return vec4<f32>(scratch[at], scratch[at + THREADS], scratch[at + 2u * THREADS], scratch[at + 3u * THREADS]);
}

// A step's inputs, none of them depending on the state: its gates, the lane's rows of q̂ and k̂,
// its columns of v (for the replay) or of do (for the reverse sweep; zero past DV); q̂ only for the
// reverse sweep.
struct StepInputs {
    decay: f32,
    beta: f32,
    k: array<f32, RY>,
    q: array<f32, RY>,
    columns: vec4<f32>,
}

fn step_inputs(t: u32, h: u32, key: u32, rl: u32, col4: u32, reverse: bool) -> StepInputs {
    var x: StepInputs;
    let e = t * layer.nv + h;
    x.decay = exp(gate_log_decay(e));
    x.beta = gate_beta(e);
    let k_at = hat_at(1u, t, key);
    let q_at = hat_at(0u, t, key);
    for (var i = 0u; i < RY; i = i + 1u) {
        x.k[i] = qk_hat[k_at + rl + ROW_LANES * i];
        if (reverse) {
            x.q[i] = qk_hat[q_at + rl + ROW_LANES * i];
        }
    }
    let col = min(col4, DV - 4u);
    if (reverse) {
        let at = e * DV + col;
        x.columns = f32(col4 < DV) * vec4<f32>(d_o[at], d_o[at + 1u], d_o[at + 2u], d_o[at + 3u]);
    } else {
        let at = t * layer.channels + 2u * layer.nk * DK + h * DV + col;
        x.columns = vec4<f32>(y[at], y[at + 1u], y[at + 2u], y[at + 3u]);
    }
    return x;
}

// (dq̂, dk̂) of `row`: the block's partial of token-head `gate`.
fn write_hat_pair(parts: u32, gate: u32, block: u32, row: u32, d: vec2<f32>) {
    dqk_hat_heads[(gate * parts + block) * DK + row] = d.x;
    dqk_hat_heads[((layer.tokens * layer.nv + gate) * parts + block) * DK + row] = d.y;
}

@compute @workgroup_size(THREADS)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let blocks = (DV + CB - 1u) / CB;
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nv * blocks) {
        return;
    }
    let block = job % blocks;
    let h = (job / blocks) % layer.nv;
    let n = job / (blocks * layer.nv);
    let key = h / layer.rep;
    let rl = tid / COLUMN_LANES;
    let cl = tid % COLUMN_LANES;
    let col4 = block * CB + 4u * cl;
    let columns = col4 < DV;
    let start = seq_start(n);
    let end = seq_end(n);
    let segments = (end - start + layer.ckpt_interval - 1u) / layer.ckpt_interval;
    let state_at = (n * layer.nv + h) * DK * DV;
    let v_channel = 2u * layer.nk * DK + h * DV;

    var ds: array<vec4<f32>, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        let e = state_at + (rl + ROW_LANES * i) * DV + col4;
        var value = vec4<f32>(0.0);
        if (layer.has_dht != 0u && columns) {
            value = vec4<f32>(dht[e], dht[e + 1u], dht[e + 2u], dht[e + 3u]);
        }
        ds[i] = value;
    }

    for (var done = 0u; done < segments; done = done + 1u) {
        let segment = segments - 1u - done;
        let t0 = start + segment * layer.ckpt_interval;
        let t1 = min(t0 + layer.ckpt_interval, end);

        // Replay: S_{t0} from the checkpoint, then every step's S_{t−1} and r_t into the scratch.
        let ckpt_at = ((ckpt_first(n) + segment) * layer.nv + h) * DK * DV;
        var s: array<vec4<f32>, RY>;
        for (var i = 0u; i < RY; i = i + 1u) {
            let e = ckpt_at + (rl + ROW_LANES * i) * DV + col4;
            var value = vec4<f32>(0.0);
            if (columns) {
                value = vec4<f32>(ckpt[e], ckpt[e + 1u], ckpt[e + 2u], ckpt[e + 3u]);
            }
            s[i] = value;
        }
        var next = step_inputs(t0, h, key, rl, col4, false);
        for (var t = t0; t < t1; t = t + 1u) {
            let x = next;
            next = step_inputs(min(t + 1u, t1 - 1u), h, key, rl, col4, false);
            var kv = vec4<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                store_scratch(scratch_slot(job, t - t0, i, tid), s[i]);
                s[i] = s[i] * x.decay;
                kv = kv + s[i] * x.k[i];
            }
            let r = (x.columns - row_lanes_sum(tid, kv)) * f32(columns);
            store_scratch(scratch_slot(job, t - t0, RY, tid), r);
            let u = x.beta * r;
            for (var i = 0u; i < RY; i = i + 1u) {
                s[i] = s[i] + x.k[i] * u;
            }
        }

        // Reverse sweep over the segment.
        next = step_inputs(t1 - 1u, h, key, rl, col4, true);
        for (var back = t0; back < t1; back = back + 1u) {
            let t = t1 - 1u - (back - t0);
            let step = t - t0;
            let x = next;
            next = step_inputs(max(t, t0 + 1u) - 1u, h, key, rl, col4, true);
            let g = x.decay;
            let r = load_scratch(scratch_slot(job, step, RY, tid));
            let u = x.beta * r;
            let u_do = dot(u, x.columns);

            // dS += q̂ doᵀ; this lane's part of du and of dq̂ = g S_{t−1} do + k̂ (u·do).
            var hat: array<vec2<f32>, RY>;
            var du = vec4<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                ds[i] = ds[i] + x.q[i] * x.columns;
                du = du + ds[i] * x.k[i];
                let prev = load_scratch(scratch_slot(job, step, i, tid));
                hat[i].x = g * dot(prev, x.columns) + x.k[i] * u_do;
            }
            du = row_lanes_sum(tid, du);
            let dkv = -x.beta * du;

            // dk̂ = dS u + g S_{t−1} dkv; ⟨dS', S_{t−1}⟩; dS = g dS'.
            var dg = 0.0;
            for (var i = 0u; i < RY; i = i + 1u) {
                let prev = load_scratch(scratch_slot(job, step, i, tid));
                hat[i].y = dot(ds[i], u) + g * dot(prev, dkv);
                let pre = ds[i] + x.k[i] * dkv;
                dg = dg + dot(pre, prev);
                ds[i] = g * pre;
            }

            // The block's partials: dq̂ and dk̂ per row, dℓ = dg·g and dβ; dv.
            let gate = t * layer.nv + h;
            let parts = layer.hat_parts;
            for (var j = 0u; j < ROW_PAIRS; j = j + 1u) {
                let second = select(vec2<f32>(0.0), hat[min(2u * j + 1u, RY - 1u)], 2u * j + 1u < RY);
                let pair = column_lanes_sum(tid, vec4<f32>(hat[2u * j], second));
                if (j % COLUMN_LANES == cl) {
                    write_hat_pair(parts, gate, block, rl + 2u * ROW_LANES * j, pair.xy);
                    if (2u * j + 1u < RY) {
                        write_hat_pair(parts, gate, block, rl + (2u * j + 1u) * ROW_LANES, pair.zw);
                    }
                }
            }
            let dbeta = select(0.0, dot(du, r), rl == 0u);
            let sums = column_lanes_sum(tid, row_lanes_sum(tid, vec4<f32>(dg, dbeta, 0.0, 0.0)));
            if (tid == 0u) {
                let at = layer.gate_parts_base + gate * layer.gate_parts + block;
                gate_grad_parts[at] = sums.x * g;
                gate_grad_parts[at + layer.tokens * layer.nv * layer.gate_parts] = sums.y;
            }
            if (rl == 0u && columns) {
                let at = t * layer.channels + v_channel + col4;
                let dv = x.beta * du;
                dy[at] = dv.x;
                dy[at + 1u] = dv.y;
                dy[at + 2u] = dv.z;
                dy[at + 3u] = dv.w;
            }
        }
    }

    if (layer.has_h0 != 0u && columns) {
        for (var i = 0u; i < RY; i = i + 1u) {
            let e = state_at + (rl + ROW_LANES * i) * DV + col4;
            dh0[e] = ds[i].x;
            dh0[e + 1u] = ds[i].y;
            dh0[e + 2u] = ds[i].z;
            dh0[e + 3u] = ds[i].w;
        }
    }
}
