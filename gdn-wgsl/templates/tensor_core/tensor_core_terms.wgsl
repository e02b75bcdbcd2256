// Where the tensor-core backward keeps its per-token terms for the gate gradients, per (chunk,
// value head): gate_terms (written by tensor_core_grad_values) and key_terms
// (tensor_core_grad_queries, tensor_core_grad_keys), both read by tensor_core_gate.

// gate_terms: ⟨dY_t, U_t⟩, ⟨dY_t, v_t⟩, the row and column sums of R + E and Σ_s dA_ts (KK ⊙ M⁻)_ts
// (CMAX each), then the f16 scales of dY, dQK and H.
const TERM_DBETA_U: u32 = 0u;
const TERM_DBETA_V: u32 = 1u;
const TERM_RE_ROWS: u32 = 2u;
const TERM_RE_COLUMNS: u32 = 3u;
const TERM_DA_KM: u32 = 4u;
const GATE_TERMS: u32 = 5u * CMAX + 4u;

fn gate_terms_at() -> u32 {
    return (ck_slot * layer.nv + ck_h) * GATE_TERMS;
}

// Where the chunk's per-token dot products for tensor_core_gate lie in key_terms: ⟨q̂, dQ₀⟩, ⟨k̂, dX¹⟩ and
// ⟨k̂, dK_S⟩ (CMAX each), then G ⟨dS_L, S₀⟩.
const KEY_Q_DQ: u32 = 0u;
const KEY_K_DX: u32 = 1u;
const KEY_K_DKS: u32 = 2u;
const KEY_STATE: u32 = 3u * CMAX;
const KEY_TERMS: u32 = 3u * CMAX + 4u;

fn key_terms_at() -> u32 {
    return (ck_slot * layer.nv + ck_h) * KEY_TERMS;
}
