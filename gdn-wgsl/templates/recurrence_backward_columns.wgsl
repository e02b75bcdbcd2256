// The delta rule, backward, for batches of few heads (the plan's choice where
// recurrence_backward.wgsl's one workgroup per (sequence, value head) leaves most of the GPU idle):
// BPTT with checkpoints, serial in time and parallel over (sequence, value head, block of CB
// columns). Layout (gdn_wgsl::LaneLayout::recurrent_chunks): GROUPS column groups of four columns
// (a vec4 a row), each one block of ROW_LANES = 32 consecutive lanes, lane rl holding rows
// rl + 32·i (i < RY; rows past DK, and columns past DV, hold zeros).
// Each lane keeps its rows of dS in registers, dS = dhT (or 0) first. Segments of ckpt_interval
// steps are walked last to first. Each is first replayed from its checkpoint with the forward's
// r_t = v_t − g_t·S_{t−1}ᵀk̂_t (residuals.wgsl, written by recurrence_forward_chunks.wgsl), so
// with no sum:
// S_t = g_t·S_{t−1} + k̂_t u_tᵀ, u_t = β_t·r_t; every lane writes its rows of S_{t−1} (the state
// entering step t) into its own slots of the scratch, read back by itself only. Then the segment
// is swept in reverse:
//   dS += q̂ doᵀ;  du = dSᵀk̂;  dkv = −β du;  dv = β du;  dβ = du·r;
//   dq̂ = S_t do = g S_{t−1} do + k̂ (u·do);  dk̂ = dS u + g S_{t−1} dkv;
//   dS' = dS + k̂ dkvᵀ;  dg = ⟨dS', S_{t−1}⟩;  dS = g dS'.          Finally dh0 = dS.
// Only du, a sum over a group's lanes (`row_lanes_sum`), stands between one step's dS and the
// next; a step's inputs and saved state are loaded while the step before computes. dq̂ and dk̂
// (sums over columns), dℓ = dg·g and dβ (over the whole state) span the head's column blocks: the
// groups' shares of a step are summed through workgroup memory (one barrier a step, the halves
// alternating by step parity) and written as the block's partial, layer.hat_parts rows per (token,
// value head) in dqk_hat_heads and layer.gate_parts values in gate_grad_parts, which
// qk_norm_backward and gates_backward add up. dv goes straight into the v channels of dy.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

// The groups' (dq̂, dk̂) rows and (dℓ, dβ) of a step, by step parity.
var<workgroup> hat_shares: array<vec2<f32>, 2u * GROUPS * DK>;
var<workgroup> gate_shares: array<vec2<f32>, 2u * GROUPS>;

// Where step `step` of the replayed segment starts in the scratch for column group `unit`: the
// state S_{t−1}, [4][DK], component-major so that a group's accesses are contiguous.
fn scratch_step(unit: u32, step: u32) -> u32 {
    return (unit * layer.ckpt_interval + step) * 4u * DK;
}

// This lane's row i of the saved state (zeros past DK).
fn load_saved(at: u32, row: u32) -> vec4<f32> {
    var value = vec4<f32>(0.0);
    if (row < DK) {
        value = vec4<f32>(scratch[at + row], scratch[at + DK + row], scratch[at + 2u * DK + row], scratch[at + 3u * DK + row]);
    }
    return value;
}

fn save(at: u32, row: u32, x: vec4<f32>) {
    if (row < DK) {
        scratch[at + row] = x.x;
        scratch[at + DK + row] = x.y;
        scratch[at + 2u * DK + row] = x.z;
        scratch[at + 3u * DK + row] = x.w;
    }
}

// A step's inputs, none of them depending on the state: its gates, the lane's rows of q̂ and k̂
// (zero past DK), the group's columns of r and (for the reverse sweep, with the saved S_{t−1} and
// q̂) of do, zero past DV.
struct StepInputs {
    decay: f32,
    beta: f32,
    k: array<f32, RY>,
    q: array<f32, RY>,
    r: vec4<f32>,
    d_out: vec4<f32>,
    prev: array<vec4<f32>, RY>,
}

fn step_inputs(unit: u32, t: u32, t0: u32, h: u32, key: u32, rl: u32, col: u32, columns: bool, reverse: bool) -> StepInputs {
    var x: StepInputs;
    let e = t * layer.nv + h;
    x.decay = exp(gate_log_decay(e));
    x.beta = gate_beta(e);
    let k_at = hat_at(1u, t, key);
    let q_at = hat_at(0u, t, key);
    for (var i = 0u; i < RY; i = i + 1u) {
        let row = rl + ROW_LANES * i;
        let at = min(row, DK - 1u);
        x.k[i] = select(0.0, qk_hat[k_at + at], row < DK);
        if (reverse) {
            x.q[i] = select(0.0, qk_hat[q_at + at], row < DK);
            x.prev[i] = load_saved(scratch_step(unit, t - t0), row);
        }
    }
    let mask = f32(columns);
    let r_at = residual_at(t, h) + col;
    x.r = mask * vec4<f32>(ckpt[r_at], ckpt[r_at + 1u], ckpt[r_at + 2u], ckpt[r_at + 3u]);
    if (reverse) {
        let at = e * DV + col;
        x.d_out = mask * vec4<f32>(d_o[at], d_o[at + 1u], d_o[at + 2u], d_o[at + 3u]);
    }
    return x;
}

// Where this lane's row i (clamped to DK) of a [DK, DV] state at `at` has its four columns from
// `col`.
fn row_at(at: u32, rl: u32, i: u32, col: u32) -> u32 {
    return at + min(rl + ROW_LANES * i, DK - 1u) * DV + col;
}

// This lane's rows of dhT (zeros past DK, past DV, or without dhT).
fn load_dht(at: u32, rl: u32, col: u32, columns: bool) -> array<vec4<f32>, RY> {
    var s: array<vec4<f32>, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        let e = row_at(at, rl, i, col);
        if (layer.has_dht != 0u && columns && rl + ROW_LANES * i < DK) {
            s[i] = vec4<f32>(dht[e], dht[e + 1u], dht[e + 2u], dht[e + 3u]);
        }
    }
    return s;
}

// This lane's rows of a stored state (zeros past DK and past DV).
fn load_checkpoint(at: u32, rl: u32, col: u32, columns: bool) -> array<vec4<f32>, RY> {
    var s: array<vec4<f32>, RY>;
    for (var i = 0u; i < RY; i = i + 1u) {
        let e = row_at(at, rl, i, col);
        if (columns && rl + ROW_LANES * i < DK) {
            s[i] = vec4<f32>(ckpt[e], ckpt[e + 1u], ckpt[e + 2u], ckpt[e + 3u]);
        }
    }
    return s;
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
    let group = tid / ROW_LANES;
    let rl = tid % ROW_LANES;
    let unit = job * GROUPS + group;
    let col4 = block * CB + 4u * group;
    let columns = col4 < DV;
    let col = min(col4, DV - 4u);
    let start = seq_start(n);
    let end = seq_end(n);
    let segments = (end - start + layer.ckpt_interval - 1u) / layer.ckpt_interval;
    let state_at = (n * layer.nv + h) * DK * DV;
    let v_at = 2u * layer.nk * DK + h * DV + col;

    var ds = load_dht(state_at, rl, col, columns);
    for (var done = 0u; done < segments; done = done + 1u) {
        let segment = segments - 1u - done;
        let t0 = start + segment * layer.ckpt_interval;
        let t1 = min(t0 + layer.ckpt_interval, end);

        // Replay: S_{t0} from the checkpoint, then every step's S_{t−1} into the scratch.
        var s = load_checkpoint(((ckpt_first(n) + segment) * layer.nv + h) * DK * DV, rl, col, columns);
        var next = step_inputs(unit, t0, t0, h, key, rl, col, columns, false);
        for (var t = t0; t < t1; t = t + 1u) {
            let x = next;
            next = step_inputs(unit, min(t + 1u, t1 - 1u), t0, h, key, rl, col, columns, false);
            let at = scratch_step(unit, t - t0);
            let u = x.beta * x.r;
            for (var i = 0u; i < RY; i = i + 1u) {
                save(at, rl + ROW_LANES * i, s[i]);
                s[i] = s[i] * x.decay + x.k[i] * u;
            }
        }

        // Reverse sweep over the segment.
        next = step_inputs(unit, t1 - 1u, t0, h, key, rl, col, columns, true);
        for (var back = t0; back < t1; back = back + 1u) {
            let t = t1 - 1u - (back - t0);
            let x = next;
            next = step_inputs(unit, max(t, t0 + 1u) - 1u, t0, h, key, rl, col, columns, true);
            let g = x.decay;
            let u = x.beta * x.r;
            let u_do = dot(u, x.d_out);

            // dS += q̂ doᵀ; this lane's part of du; its rows' shares of dq̂ = g S_{t−1} do + k̂ (u·do)
            // and dk̂ = dS u + g S_{t−1} dkv; ⟨dS', S_{t−1}⟩; dS = g dS'.
            var du = vec4<f32>(0.0);
            for (var i = 0u; i < RY; i = i + 1u) {
                ds[i] = ds[i] + x.q[i] * x.d_out;
                du = du + ds[i] * x.k[i];
            }
            du = row_lanes_sum(tid, du);
            let dkv = -x.beta * du;
            let half = (t % 2u) * GROUPS;
            var dg = 0.0;
            for (var i = 0u; i < RY; i = i + 1u) {
                let dq = g * dot(x.prev[i], x.d_out) + x.k[i] * u_do;
                let dk = dot(ds[i], u) + g * dot(x.prev[i], dkv);
                let pre = ds[i] + x.k[i] * dkv;
                dg = dg + dot(pre, x.prev[i]);
                ds[i] = g * pre;
                let row = rl + ROW_LANES * i;
                if (row < DK) {
                    hat_shares[(half + group) * DK + row] = vec2<f32>(dq, dk);
                }
            }
            dg = row_lanes_sum(tid, vec4<f32>(dg, 0.0, 0.0, 0.0)).x;
            if (rl == 0u) {
                gate_shares[half + group] = vec2<f32>(dg * g, dot(du, x.r));
            }
            if (rl == 0u && columns) {
                let dv = x.beta * du;
                let dv_at = t * layer.channels + v_at;
                dy[dv_at] = dv.x;
                dy[dv_at + 1u] = dv.y;
                dy[dv_at + 2u] = dv.z;
                dy[dv_at + 3u] = dv.w;
            }
            workgroupBarrier();

            // The block's partials: the groups' shares summed.
            let gate = t * layer.nv + h;
            let dq_at = (gate * layer.hat_parts + block) * DK;
            let dk_at = dq_at + layer.tokens * layer.nv * layer.hat_parts * DK;
            for (var row = tid; row < DK; row = row + THREADS) {
                var d = vec2<f32>(0.0);
                for (var w = 0u; w < GROUPS; w = w + 1u) {
                    d = d + hat_shares[(half + w) * DK + row];
                }
                dqk_hat_heads[dq_at + row] = d.x;
                dqk_hat_heads[dk_at + row] = d.y;
            }
            if (tid == 0u) {
                var d = vec2<f32>(0.0);
                for (var w = 0u; w < GROUPS; w = w + 1u) {
                    d = d + gate_shares[half + w];
                }
                let at = layer.gate_parts_base + gate * layer.gate_parts + block;
                gate_grad_parts[at] = d.x;
                gate_grad_parts[at + layer.tokens * layer.nv * layer.gate_parts] = d.y;
            }
        }
    }

    if (layer.has_h0 != 0u && columns) {
        for (var i = 0u; i < RY; i = i + 1u) {
            if (rl + ROW_LANES * i < DK) {
                let e = row_at(state_at, rl, i, col);
                dh0[e] = ds[i].x;
                dh0[e + 1u] = ds[i].y;
                dh0[e + 2u] = ds[i].z;
                dh0[e + 3u] = ds[i].w;
            }
        }
    }
}
