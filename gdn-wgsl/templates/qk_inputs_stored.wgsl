// qk_norm_gates_forward's inputs where conv_forward ran before it: read from y.

fn qk_input(t: u32, c: u32) -> f32 {
    return y[t * layer.channels + c];
}

fn keep_qk_input(t: u32, c: u32, x: f32) {}

fn convolve_values(t: u32, key: u32, tid: u32) {}
