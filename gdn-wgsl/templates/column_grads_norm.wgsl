// The gated RMSNorm's backward inside recurrence_backward_columns (norm_backward's work, so that
// it needs no dispatch of its own): with r = rstd of the (token, head) and
// dot = Σ_m dout_m·norm_m·silu(z_m)·o_m over the head's DV columns,
//   d_o_j = r·norm_j·silu(z_j)·dout_j − o_j·r³·dot / DV,
//   dz_j = dout_j·o_j·r·norm_j·silu'(z_j),  dnorm_term_j = dout_j·o_j·r·silu(z_j).
// Each lane computes its column's d_o; lanes j < CHUNK write step j's dz and dnorm term at the
// column (output_terms). dot spans every column, so every workgroup sums it for itself: the inputs of a chunk's
// dot come with its other inputs, one chunk ahead (invocation tid takes column tid: the kernel is
// generated only where DV ≤ THREADS), and its sum rides on the barrier the chunk before already
// has (share_norm_dot before it, shared_norm_dot after).

// The warps' sums of a chunk's dot, one vec4 (a step a component) a column group.
var<workgroup> norm_dot_parts: array<vec4<f32>, GROUPS>;

// A chunk's inputs of the norm's backward: at the lane's column dout, z, o (step j in component
// j; zero past DV and past t1) and r; at column tid, dout·norm·silu(z)·o's factors (zero past DV).
struct OutputInputs {
    dout: vec4<f32>,
    z: vec4<f32>,
    o: vec4<f32>,
    rstd: vec4<f32>,
    dot_dout: vec4<f32>,
    dot_z: vec4<f32>,
    dot_o: vec4<f32>,
}

// dout, z and o of the four steps at `at` (rows of [tokens·nv, DV]) at column `col`, zero where
// not `keep`.
fn norm_inputs(at: vec4<u32>, keep: vec4<bool>, col: u32) -> array<vec4<f32>, 3> {
    let e = at * DV + vec4<u32>(col);
    return array<vec4<f32>, 3>(
        select(vec4<f32>(0.0), vec4<f32>(dout[e.x], dout[e.y], dout[e.z], dout[e.w]), keep),
        select(vec4<f32>(0.0), vec4<f32>(z[e.x], z[e.y], z[e.z], z[e.w]), keep),
        select(vec4<f32>(0.0), vec4<f32>(o[e.x], o[e.y], o[e.z], o[e.w]), keep),
    );
}

fn output_inputs(at: vec4<u32>, live: vec4<bool>, h: u32, col: u32, columns: bool, tid: u32) -> OutputInputs {
    var x: OutputInputs;
    let rows = at * layer.nv + vec4<u32>(h);
    let own = norm_inputs(rows, live & vec4<bool>(columns), col);
    x.dout = own[0];
    x.z = own[1];
    x.o = own[2];
    x.rstd = vec4<f32>(rstd[rows.x], rstd[rows.y], rstd[rows.z], rstd[rows.w]);
    let others = norm_inputs(rows, live & vec4<bool>(tid < DV), min(tid, DV - 1u));
    x.dot_dout = others[0];
    x.dot_z = others[1];
    x.dot_o = others[2];
    return x;
}

// A chunk's d_o at the lane's column but for its dot: d_o = a − b·dot.
struct OutputTerms {
    a: vec4<f32>,
    b: vec4<f32>,
}

// The chunk from token tc's terms of d_o (its inputs' loads waited for: called before the barrier
// that ends the chunk before, in its shadow, not at the start of the chunk's chain); lane rl <
// CHUNK writes step rl's dz and dnorm term where it is live (tc + rl < t1) at a column < DV.
fn output_terms(x: OutputInputs, tc: u32, t1: u32, h: u32, col: u32, columns: bool, rl: u32) -> OutputTerms {
    let r = x.rstd;
    let w = norm[col];
    let s = vec4<f32>(silu(x.z.x), silu(x.z.y), silu(x.z.z), silu(x.z.w));
    if (rl < CHUNK && columns && tc + rl < t1) {
        let e = ((tc + rl) * layer.nv + h) * DV + col;
        let dout_o_r = component(x.dout * x.o * r, rl);
        dz[e] = dout_o_r * w * silu_grad(component(x.z, rl));
        dnorm_term[e] = dout_o_r * component(s, rl);
    }
    return OutputTerms(r * w * s * x.dout, x.o * r * r * r / f32(DV));
}

// The chunk's d_o at the lane's column.
fn output_grads(terms: OutputTerms, dot: vec4<f32>) -> vec4<f32> {
    return terms.a - terms.b * dot;
}

// This invocation's column's dout·norm·silu(z)·o of the chunk, summed over its column group's
// lanes into workgroup memory (lane 8j holds step j's). Uniform control flow.
fn share_norm_dot(x: OutputInputs, tid: u32) {
    let s = vec4<f32>(silu(x.dot_z.x), silu(x.dot_z.y), silu(x.dot_z.z), silu(x.dot_z.w));
    let part = x.dot_dout * norm[min(tid, DV - 1u)] * s * x.dot_o;
    let sum = token_scatter_sum(tid, part);
    let rl = tid % ROW_LANES;
    if (rl % 8u == 0u) {
        norm_dot_parts[tid / ROW_LANES][rl / 8u] = sum;
    }
}

// The chunk's dot (step j in component j), the groups' sums added in order; after the barrier
// that follows share_norm_dot, before the next call of it.
fn shared_norm_dot() -> vec4<f32> {
    var dot = vec4<f32>(0.0);
    for (var w = 0u; w < GROUPS; w = w + 1u) {
        dot = dot + norm_dot_parts[w];
    }
    return dot;
}
