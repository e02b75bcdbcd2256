// recurrence_forward_chunks' stage inputs read from storage, where the q/k norms' dispatch wrote
// them before it: q̂, k̂ and the key products from qk_hat, v from y, g and β from gates.

// A loading lane's share of a stage, in registers between its loads and its stores: rows of q̂
// and k̂ and columns of v, each for a quad of four tokens (one 16-byte store into workgroup memory),
// the (row or column, quad) pairs e = lane + LOAD_THREADS·j of loading lane `lane` (tid − LOAD_FIRST).
const STAGE_QK: u32 = (QUADS * ROWS + LOAD_THREADS - 1u) / LOAD_THREADS;
const STAGE_V: u32 = (QUADS * CB + LOAD_THREADS - 1u) / LOAD_THREADS;
struct Stage {
    k: array<vec4<f32>, STAGE_QK>,
    q: array<vec4<f32>, STAGE_QK>,
    v: array<vec4<f32>, STAGE_V>,
    // g, β and the three key products of token `lane` (lane < STAGE).
    gates: vec2<f32>,
    products: vec3<f32>,
}

// Loading lane `lane`'s share of the job's stage of tokens [first, first + STAGE) (tokens past the
// sequence's end read zeros and g = 1).
fn load_stage(first: u32, job: Job, lane: u32) -> Stage {
    var x: Stage;
    let end = job.end;
    let h = job.h;
    let key = job.key;
    let col0 = job.col0;
    let last = min(max(end, 1u), layer.tokens) - 1u;
    for (var j = 0u; j < STAGE_QK; j = j + 1u) {
        let e = min(lane + LOAD_THREADS * j, QUADS * ROWS - 1u);
        let t = vec4<u32>(first + e / ROWS * CHUNK) + vec4<u32>(0u, 1u, 2u, 3u);
        let at = min(t, vec4<u32>(last));
        let live = t < vec4<u32>(end);
        x.k[j] = hat_rows(1u, at, key, e % ROWS, live);
        x.q[j] = hat_rows(0u, at, key, e % ROWS, live);
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = min(lane + LOAD_THREADS * j, QUADS * CB - 1u);
        let t = vec4<u32>(first + e / CB * CHUNK) + vec4<u32>(0u, 1u, 2u, 3u);
        let at = min(t * layer.channels + vec4<u32>(2u * layer.nk * DK + h * DV + min(col0 + e % CB, DV - 1u)), vec4<u32>(layer.tokens * layer.channels - 1u));
        x.v[j] = select(vec4<f32>(0.0), vec4<f32>(y[at.x], y[at.y], y[at.z], y[at.w]), t < vec4<u32>(end));
    }
    let t = first + lane % STAGE;
    let at = min(t, last);
    let e = at * layer.nv + h;
    x.gates = select(vec2<f32>(1.0, 0.0), vec2<f32>(exp(gate_log_decay(e)), gate_beta(e)), t < end);
    let p = key_products_at(at, key);
    x.products = select(vec3<f32>(0.0), vec3<f32>(qk_hat[p], qk_hat[p + 1u], qk_hat[p + 2u]), t < end);
    return x;
}

// Loading lane `lane`'s share of a stage into workgroup memory.
fn store_stage(x: Stage, lane: u32) {
    for (var j = 0u; j < STAGE_QK; j = j + 1u) {
        let e = lane + LOAD_THREADS * j;
        if (e < QUADS * ROWS) {
            let at = (e % ROWS) * QUAD_STRIDE + e / ROWS;
            staged_k[at] = x.k[j];
            staged_q[at] = x.q[j];
        }
    }
    for (var j = 0u; j < STAGE_V; j = j + 1u) {
        let e = lane + LOAD_THREADS * j;
        if (e < QUADS * CB) {
            staged_v[(e % CB) * QUAD_STRIDE + e / CB] = x.v[j];
        }
    }
    if (lane < STAGE) {
        let quad = lane / CHUNK;
        let m = lane % CHUNK;
        staged_tokens[quad][m] = x.gates.x;
        staged_tokens[QUADS + quad][m] = x.gates.y;
        staged_tokens[2u * QUADS + quad][m] = x.products.x;
        staged_tokens[3u * QUADS + quad][m] = x.products.y;
        staged_tokens[4u * QUADS + quad][m] = x.products.z;
    }
}
