// The output gradient d_o of recurrence_backward_columns, read where norm_backward wrote it (the
// gated RMSNorm's backward in a dispatch of its own). The hooks that column_grads_norm.wgsl fills
// (the norm's row dot, its dz and dnorm terms) do nothing here.

// A chunk's d_o at the lane's column (step j in component j; zero past DV and past t1).
struct OutputInputs {
    d_out: vec4<f32>,
}

fn output_inputs(at: vec4<u32>, live: vec4<bool>, h: u32, col: u32, columns: bool, tid: u32) -> OutputInputs {
    let o_at = (at * layer.nv + vec4<u32>(h)) * DV + vec4<u32>(col);
    let d_out = vec4<f32>(d_o[o_at.x], d_o[o_at.y], d_o[o_at.z], d_o[o_at.w]);
    return OutputInputs(select(vec4<f32>(0.0), d_out, live & vec4<bool>(columns)));
}

struct OutputTerms {
    d_out: vec4<f32>,
}

fn output_terms(x: OutputInputs, tc: u32, t1: u32, h: u32, col: u32, columns: bool, rl: u32) -> OutputTerms {
    return OutputTerms(x.d_out);
}

fn output_grads(terms: OutputTerms, dot: vec4<f32>) -> vec4<f32> {
    return terms.d_out;
}

fn share_norm_dot(x: OutputInputs, tid: u32) {
}

fn shared_norm_dot() -> vec4<f32> {
    return vec4<f32>(0.0);
}
