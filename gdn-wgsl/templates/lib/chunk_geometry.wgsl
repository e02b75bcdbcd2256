// Where a chunk of the chunked family lies: C = layer.ckpt_interval tokens (at most CMAX) of one
// sequence for one value head; the last chunk of a sequence holds L ≤ C valid tokens and is padded
// with q̂ = k̂ = v = dO = 0, β = 0, ℓ = 0 (so that decays stay finite and the pads contribute nothing).
// Chunks are numbered by slot: sequence n owns slots ckpt_first(n) … ckpt_first(n + 1) − 1, the same
// slots as the states stored at chunk starts in ckpt. chunk_locate sets the private context below.

const CMAX: u32 = 64u;

var<private> ck_t0: u32;
var<private> ck_len: u32;
var<private> ck_slot: u32;
var<private> ck_h: u32;
// Where the chunk's first row starts in qk_hat (q̂ and k̂), in y (v) and in o-shaped tensors.
var<private> ck_q: u32;
var<private> ck_k: u32;
var<private> ck_v: u32;
var<private> ck_o: u32;

fn chunk_size() -> u32 {
    return layer.ckpt_interval;
}

// Chunk slots of the whole batch.
fn chunk_slots() -> u32 {
    return ckpt_first(layer.seqs);
}

// The sequence that owns chunk `slot`: the last n with ckpt_first(n) ≤ slot.
fn chunk_sequence(slot: u32) -> u32 {
    var lo = 0u;
    var hi = layer.seqs;
    while (hi - lo > 1u) {
        let mid = (lo + hi) / 2u;
        if (ckpt_first(mid) <= slot) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// Enters chunk `slot` (of sequence `n`) of value head `h`.
fn chunk_locate(slot: u32, n: u32, h: u32) {
    ck_slot = slot;
    ck_h = h;
    ck_t0 = seq_start(n) + (slot - ckpt_first(n)) * chunk_size();
    ck_len = min(chunk_size(), seq_end(n) - ck_t0);
    ck_q = hat_at(0u, ck_t0, h / layer.rep);
    ck_k = hat_at(1u, ck_t0, h / layer.rep);
    ck_v = ck_t0 * layer.channels + 2u * layer.nk * DK + h * DV;
    ck_o = (ck_t0 * layer.nv + h) * DV;
}

// Index of row t, element j of an o-shaped tensor ([tokens, nv, DV]: o, d_o).
fn chunk_o_at(t: u32, j: u32) -> u32 {
    return ck_o + t * layer.nv * DV + j;
}

// Start of the state of (chunk slot, head) in ckpt-shaped buffers.
fn chunk_state_at(slot: u32) -> u32 {
    return (slot * layer.nv + ck_h) * DK * DV;
}
