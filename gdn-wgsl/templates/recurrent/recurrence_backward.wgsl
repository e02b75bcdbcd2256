// The delta rule, backward (BPTT with checkpoints), serial in time, one workgroup per
// (sequence, value head) holding dS for all DV columns: TX × TY threads, an RY × RX tile each.
//
// Segments of ckpt_interval steps are walked last to first. Each is first replayed from its
// checkpoint, writing every S_t but the last into this workgroup's scratch (and kv_t into
// kv_scratch); then swept in reverse with S_t in registers (S_{t−1}, read from the scratch,
// becomes the next step's S_t), dS = dhT (or 0) first:
//   dS += q̂ doᵀ;  dq̂ = S_t do;  du = dSᵀk̂;  dk̂ = dS u;  dv = β du;  dβ = Σ du (v − kv);  dkv = −β du;
//   dS' = dS + k̂ dkvᵀ;  dk̂ += g S_{t−1} dkv;  dg = ⟨dS', S_{t−1}⟩;  dS = g dS'.      Finally dh0 = dS.
// Column sums (du, and ⟨dS', S_{t−1}⟩ per column) reduce over the TY row groups, row sums (dq̂, dk̂)
// over the TX column groups, through workgroup memory. dq̂ and dk̂ are written per value head
// (qk_norm_backward sums the rep heads of a key head); dℓ = dg·g and dβ are written as TX partials
// per (token, head) (qk_norm_backward sums them); dv goes straight into the v channels of dy.
// Grid: folded, seqs · nv workgroups.

var<workgroup> red_col: array<f32, TY * CB>;
var<workgroup> red_row: array<f32, TX * RB>;

const TILE: u32 = RY * RX;
const THREADS: u32 = TX * TY;

// The scratch holds, per workgroup `job`, the states of one segment but its last, which stays in
// registers ((ckpt_interval − 1) · TILE · THREADS floats, thread-minor so that a warp's stores are
// contiguous), then, after all workgroups' states, the segment's kv rows (ckpt_interval · CB floats
// per workgroup).
fn scratch_index(job: u32, step: u32, e: u32, tid: u32) -> u32 {
    return ((job * (layer.ckpt_interval - 1u) + step) * TILE + e) * THREADS + tid;
}

fn kv_scratch_index(job: u32, step: u32, col: u32) -> u32 {
    let states = layer.seqs * layer.nv * (layer.ckpt_interval - 1u) * TILE * THREADS;
    return states + (job * layer.ckpt_interval + step) * CB + col;
}

@compute @workgroup_size(TX * TY)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nv) {
        return;
    }
    let h = job % layer.nv;
    let n = job / layer.nv;
    let key = h / layer.rep;
    let tx = tid % TX;
    let ty = tid / TX;
    let start = seq_start(n);
    let end = seq_end(n);
    let segments = (end - start + layer.ckpt_interval - 1u) / layer.ckpt_interval;
    let state_at = (n * layer.nv + h) * DK * DV;
    let v_channel = 2u * layer.nk * DK + h * DV;

    var ds: array<f32, RY * RX>;
    for (var r = 0u; r < RY; r = r + 1u) {
        for (var c = 0u; c < RX; c = c + 1u) {
            let row = tile_row(ty, r);
            let col = tile_col(0u, tx, c);
            var value = 0.0;
            if (layer.has_dht != 0u && in_state(row, col)) {
                value = dht[state_at + row * DV + col];
            }
            ds[r * RX + c] = value;
        }
    }

    // The replay's running state, then the reverse sweep's S_t.
    var s: array<f32, RY * RX>;
    var u: array<f32, RX>;
    var du: array<f32, RX>;
    var d_out: array<f32, RX>;
    for (var done = 0u; done < segments; done = done + 1u) {
        let segment = segments - 1u - done;
        let t0 = start + segment * layer.ckpt_interval;
        let t1 = min(t0 + layer.ckpt_interval, end);
        let ckpt_at = ((ckpt_first(n) + segment) * layer.nv + h) * DK * DV;

        // Replay: S_{t0} from the checkpoint, then every S_t of the segment into the scratch.
        for (var r = 0u; r < RY; r = r + 1u) {
            for (var c = 0u; c < RX; c = c + 1u) {
                s[r * RX + c] = checkpoint_element(ckpt_at, tile_row(ty, r), tile_col(0u, tx, c));
            }
        }
        for (var t = t0; t < t1; t = t + 1u) {
            let gate = t * layer.nv + h;
            let g = gate_decay(gate);
            let bt = gate_beta(gate);
            let k = hat_rows(hat_at(1u, t, key), ty);
            for (var c = 0u; c < RX; c = c + 1u) {
                var acc = 0.0;
                for (var r = 0u; r < RY; r = r + 1u) {
                    s[r * RX + c] = s[r * RX + c] * g;
                    acc = acc + s[r * RX + c] * k[r];
                }
                red_col[ty * CB + tx * RX + c] = acc;
            }
            workgroupBarrier();
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = tile_col(0u, tx, c);
                let kv = column_total(tx, c);
                if (ty == 0u) {
                    scratch[kv_scratch_index(job, t - t0, col)] = kv;
                }
                let uc = bt * (value_at(t, v_channel, col) - kv);
                for (var r = 0u; r < RY; r = r + 1u) {
                    s[r * RX + c] = s[r * RX + c] + k[r] * uc;
                }
            }
            if (t + 1u < t1) {
                for (var e = 0u; e < TILE; e = e + 1u) {
                    scratch[scratch_index(job, t - t0, e, tid)] = s[e];
                }
            }
            workgroupBarrier();
        }
        // The kv rows were written by the ty = 0 invocations and are read by every one: storage
        // memory, which only storageBarrier orders between invocations.
        storageBarrier();

        // Reverse sweep over the segment; s holds S_{t1−1} from the replay.
        for (var back = t0; back < t1; back = back + 1u) {
            let t = t1 - 1u - (back - t0);
            let step = t - t0;
            let gate = t * layer.nv + h;
            let g = gate_decay(gate);
            let bt = gate_beta(gate);
            let k = hat_rows(hat_at(1u, t, key), ty);
            let q = hat_rows(hat_at(0u, t, key), ty);
            var kv: array<f32, RX>;
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = tile_col(0u, tx, c);
                kv[c] = scratch[kv_scratch_index(job, step, col)];
                u[c] = bt * (value_at(t, v_channel, col) - kv[c]);
                d_out[c] = d_o[gate * DV + min(col, DV - 1u)] * f32(col < DV);
            }

            // Round 1: dS += q̂ doᵀ; column parts of du = dSᵀk̂; row parts of dq̂ = S_t do.
            for (var r = 0u; r < RY; r = r + 1u) {
                var dq = 0.0;
                for (var c = 0u; c < RX; c = c + 1u) {
                    let e = r * RX + c;
                    ds[e] = ds[e] + q[r] * d_out[c];
                    dq = dq + s[e] * d_out[c];
                }
                red_row[tx * RB + tile_row(ty, r)] = dq;
            }
            for (var c = 0u; c < RX; c = c + 1u) {
                var acc = 0.0;
                for (var r = 0u; r < RY; r = r + 1u) {
                    acc = acc + ds[r * RX + c] * k[r];
                }
                red_col[ty * CB + tx * RX + c] = acc;
            }
            workgroupBarrier();
            for (var c = 0u; c < RX; c = c + 1u) {
                du[c] = column_total(tx, c);
            }
            if (tx == 0u) {
                for (var r = 0u; r < RY; r = r + 1u) {
                    let row = tile_row(ty, r);
                    if (row < DK) {
                        dqk_hat_heads[gate * DK + row] = row_total(row);
                    }
                }
            }
            workgroupBarrier();

            // Round 2: row parts of dk̂ = dS u + g S_{t−1} dkv; column parts of ⟨dS', S_{t−1}⟩; dS = g dS'.
            var w: array<f32, RX>;
            for (var c = 0u; c < RX; c = c + 1u) {
                w[c] = 0.0;
            }
            for (var r = 0u; r < RY; r = r + 1u) {
                var dk = 0.0;
                for (var c = 0u; c < RX; c = c + 1u) {
                    let e = r * RX + c;
                    var prev = 0.0;
                    if (step > 0u) {
                        prev = scratch[scratch_index(job, step - 1u, e, tid)];
                    } else {
                        prev = checkpoint_element(ckpt_at, tile_row(ty, r), tile_col(0u, tx, c));
                    }
                    let dkv = -bt * du[c];
                    dk = dk + ds[e] * u[c] + g * prev * dkv;
                    let ds_pre = ds[e] + k[r] * dkv;
                    w[c] = w[c] + ds_pre * prev;
                    ds[e] = g * ds_pre;
                    s[e] = prev;
                }
                red_row[tx * RB + tile_row(ty, r)] = dk;
            }
            for (var c = 0u; c < RX; c = c + 1u) {
                red_col[ty * CB + tx * RX + c] = w[c];
            }
            workgroupBarrier();
            if (tx == 0u) {
                for (var r = 0u; r < RY; r = r + 1u) {
                    let row = tile_row(ty, r);
                    if (row < DK) {
                        dqk_hat_heads[(layer.tokens * layer.nv + gate) * DK + row] = row_total(row);
                    }
                }
            }
            if (ty == 0u) {
                var dg = 0.0;
                var dbeta = 0.0;
                for (var c = 0u; c < RX; c = c + 1u) {
                    let col = tile_col(0u, tx, c);
                    dg = dg + column_total(tx, c);
                    if (col < DV) {
                        dbeta = dbeta + du[c] * (value_at(t, v_channel, col) - kv[c]);
                        dy[t * layer.channels + v_channel + col] = bt * du[c];
                    }
                }
                gate_grad_parts[gate * TX + tx] = dg * g;
                gate_grad_parts[(layer.tokens * layer.nv + gate) * TX + tx] = dbeta;
            }
            workgroupBarrier();
        }
        // Every invocation has read this segment's kv rows before the next replay overwrites them.
        storageBarrier();
    }

    if (layer.has_h0 != 0u) {
        for (var r = 0u; r < RY; r = r + 1u) {
            for (var c = 0u; c < RX; c = c + 1u) {
                let row = tile_row(ty, r);
                let col = tile_col(0u, tx, c);
                if (in_state(row, col)) {
                    dh0[state_at + row * DV + col] = ds[r * RX + c];
                }
            }
        }
    }
}

// Sum over the TY row groups of column tx·RX + c of red_col.
fn column_total(tx: u32, c: u32) -> f32 {
    var acc = 0.0;
    for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
        acc = acc + red_col[y_group * CB + tx * RX + c];
    }
    return acc;
}

// Sum over the TX column groups of row `row` of red_row.
fn row_total(row: u32) -> f32 {
    var acc = 0.0;
    for (var x_group = 0u; x_group < TX; x_group = x_group + 1u) {
        acc = acc + red_row[x_group * RB + row];
    }
    return acc;
}

fn checkpoint_element(ckpt_at: u32, row: u32, col: u32) -> f32 {
    if (in_state(row, col)) {
        return ckpt[ckpt_at + row * DV + col];
    }
    return 0.0;
}

fn value_at(t: u32, v_channel: u32, col: u32) -> f32 {
    return y[t * layer.channels + v_channel + min(col, DV - 1u)] * f32(col < DV);
}
