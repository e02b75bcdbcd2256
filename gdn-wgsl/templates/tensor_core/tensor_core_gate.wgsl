// The chunked family on tensor cores, backward step 5, parallel over (chunk, value head): the gate
// gradients of the chunk's valid tokens from the per-token terms of tensor_core_grad_values (gate_terms)
// and tensor_core_grad_queries / tensor_core_grad_keys (key_terms), by the span rule of chunk_grad.wgsl:
//   dγ_t = ⟨q̂_t, dQ₀_t⟩ + β_t d¹_t ⟨k̂_t, dX¹_t⟩ + Σ_{s<t} (R+E)_ts − Σ_{t'>t} (R+E)_t't − [t < L−1] r_t,
//   dγ_{L−1} += G ⟨dS_L, S₀⟩ + Σ_{s<L−1} r_s,   dℓ_t = Σ_{t' ≥ t} dγ_t',
//   dβ_t = ⟨dY_t, U_t⟩ / β_t (below 2⁻¹⁰⁰: ⟨dY_t, v_t⟩ + d¹_t ⟨k̂_t, dX¹_t⟩ + Σ_s dA_ts (KK ⊙ M⁻)_ts),
// r_t = ⟨k̂_t, dK_S,t⟩. Writes dℓ and dβ (one part each) into gate_grad_parts.
// Grid: folded, chunk slots · nv workgroups of CMAX invocations.

var<workgroup> d_gamma: array<f32, CMAX>;

fn gate_chunk(job: u32, tid: u32) {
    let slot = job / layer.nv;
    chunk_locate(slot, chunk_sequence(slot), job % layer.nv);
    let chunk_head = ck_slot * layer.nv + ck_h;
    let rec_at = chunk_head * RECORD;
    let terms = chunk_head * GATE_TERMS;
    let keys = chunk_head * KEY_TERMS;
    let len = ck_len;
    let t = tid;
    if (t < len) {
        let beta = record[rec_at + REC_BETA + t];
        let d1 = record[rec_at + REC_D1 + t];
        let k_dx = key_terms[keys + KEY_K_DX * CMAX + t];
        var dg = key_terms[keys + KEY_Q_DQ * CMAX + t] + beta * d1 * k_dx
            + gate_terms[terms + TERM_RE_ROWS * CMAX + t] - gate_terms[terms + TERM_RE_COLUMNS * CMAX + t];
        if (t + 1u < len) {
            dg = dg - key_terms[keys + KEY_K_DKS * CMAX + t];
        } else {
            dg = dg + key_terms[keys + KEY_STATE];
            for (var s = 0u; s + 1u < len; s = s + 1u) {
                dg = dg + key_terms[keys + KEY_K_DKS * CMAX + s];
            }
        }
        d_gamma[t] = dg;
        var dbeta = gate_terms[terms + TERM_DBETA_U * CMAX + t] / max(beta, 1e-30);
        if (beta < 7.8886e-31) {
            dbeta = gate_terms[terms + TERM_DBETA_V * CMAX + t] + d1 * k_dx + gate_terms[terms + TERM_DA_KM * CMAX + t];
        }
        gate_grad_parts[layer.tokens * layer.nv + (ck_t0 + t) * layer.nv + ck_h] = dbeta;
    }
    workgroupBarrier();
    if (t < len) {
        var dell = 0.0;
        for (var u = t; u < len; u = u + 1u) {
            dell = dell + d_gamma[u];
        }
        gate_grad_parts[(ck_t0 + t) * layer.nv + ck_h] = dell;
    }
}

@compute @workgroup_size(CMAX)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let job = folded(wg, nwg);
    if (job < chunk_slots() * layer.nv) {
        gate_chunk(job, tid);
    }
}
