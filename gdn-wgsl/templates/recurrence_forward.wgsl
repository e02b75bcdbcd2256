// The delta rule, forward, serial in time and parallel over (sequence, value head, column block):
//   S'_t = g_t·S_{t−1};  kv_t = S'_tᵀ k̂_t;  u_t = β_t(v_t − kv_t);  S_t = S'_t + k̂_t u_tᵀ;  o_t = S_tᵀ q̂_t.
// Columns of the state are independent in the forward, so a workgroup owns CB of them; its
// TX × TY threads each hold an RY × RX tile in registers, and the two column dot products per step
// are reduced over the TY row groups through workgroup memory (two barriers a step).
// Writes o (before the norm), the state at the start of every checkpoint interval, and hT.
// Grid: folded, seqs · nv · ceil(DV / CB) workgroups.

var<workgroup> red_kv: array<f32, TY * CB>;
var<workgroup> red_o: array<f32, TY * CB>;

@compute @workgroup_size(TX * TY)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let blocks = (DV + CB - 1u) / CB;
    let job = folded(wg, nwg);
    if (job >= layer.seqs * layer.nv * blocks) {
        return;
    }
    let col0 = (job % blocks) * CB;
    let h = (job / blocks) % layer.nv;
    let n = job / (blocks * layer.nv);
    let key = h / layer.rep;
    let tx = tid % TX;
    let ty = tid / TX;
    let start = seq_start(n);
    let end = seq_end(n);
    let state_at = (n * layer.nv + h) * DK * DV;

    var s: array<f32, RY * RX>;
    for (var r = 0u; r < RY; r = r + 1u) {
        for (var c = 0u; c < RX; c = c + 1u) {
            let row = tile_row(ty, r);
            let col = tile_col(col0, tx, c);
            var value = 0.0;
            if (layer.has_h0 != 0u && in_state(row, col)) {
                value = h0[state_at + row * DV + col];
            }
            s[r * RX + c] = value;
        }
    }

    for (var t = start; t < end; t = t + 1u) {
        let step = t - start;
        if (step % layer.ckpt_interval == 0u) {
            let slot = ((ckpt_first(n) + step / layer.ckpt_interval) * layer.nv + h) * DK * DV;
            for (var r = 0u; r < RY; r = r + 1u) {
                for (var c = 0u; c < RX; c = c + 1u) {
                    let row = tile_row(ty, r);
                    let col = tile_col(col0, tx, c);
                    if (in_state(row, col)) {
                        ckpt[slot + row * DV + col] = s[r * RX + c];
                    }
                }
            }
        }
        let gate = t * layer.nv + h;
        let g = gate_decay(gate);
        let bt = gate_beta(gate);
        let k = hat_rows(hat_at(1u, t, key), ty);
        let q = hat_rows(hat_at(0u, t, key), ty);
        for (var c = 0u; c < RX; c = c + 1u) {
            var acc = 0.0;
            for (var r = 0u; r < RY; r = r + 1u) {
                s[r * RX + c] = s[r * RX + c] * g;
                acc = acc + s[r * RX + c] * k[r];
            }
            red_kv[ty * CB + tx * RX + c] = acc;
        }
        workgroupBarrier();
        let v_at = t * layer.channels + 2u * layer.nk * DK + h * DV;
        for (var c = 0u; c < RX; c = c + 1u) {
            var kv = 0.0;
            for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
                kv = kv + red_kv[y_group * CB + tx * RX + c];
            }
            let col = tile_col(col0, tx, c);
            let v = y[v_at + min(col, DV - 1u)] * f32(col < DV);
            let u = bt * (v - kv);
            var acc = 0.0;
            for (var r = 0u; r < RY; r = r + 1u) {
                s[r * RX + c] = s[r * RX + c] + k[r] * u;
                acc = acc + s[r * RX + c] * q[r];
            }
            red_o[ty * CB + tx * RX + c] = acc;
        }
        workgroupBarrier();
        if (ty == 0u) {
            for (var c = 0u; c < RX; c = c + 1u) {
                let col = tile_col(col0, tx, c);
                if (col < DV) {
                    var acc = 0.0;
                    for (var y_group = 0u; y_group < TY; y_group = y_group + 1u) {
                        acc = acc + red_o[y_group * CB + tx * RX + c];
                    }
                    o[gate * DV + col] = acc;
                }
            }
        }
    }

    for (var r = 0u; r < RY; r = r + 1u) {
        for (var c = 0u; c < RX; c = c + 1u) {
            let row = tile_row(ty, r);
            let col = tile_col(col0, tx, c);
            if (in_state(row, col)) {
                ht[state_at + row * DV + col] = s[r * RX + c];
            }
        }
    }
}
