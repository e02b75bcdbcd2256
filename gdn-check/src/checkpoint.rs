//! A checkpoint's layer as gdn-ref takes it: the loaded parameters and the projected inputs of
//! `gdn_train::checkpoint` in f64 arrays, for `gdn-check checkpoint` and the transformers test.

use gdn_ref::{LayerInputs, LayerParams};
use gdn_train::checkpoint::{LayerWeights, Projected};
use ndarray::{Array1, Array2, Array3};

fn wide(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v)).collect()
}

/// The layer's parameters.
pub fn reference_params(weights: &LayerWeights) -> LayerParams {
    let config = &weights.config;
    LayerParams {
        a_log: Array1::from(wide(&weights.a_log)),
        dt_bias: Array1::from(wide(&weights.dt_bias)),
        norm: Array1::from(wide(&weights.norm)),
        conv: Array2::from_shape_vec((config.channels(), config.kk), wide(&weights.conv))
            .expect("the loader checks conv against [C, kk]"),
    }
}

/// The inputs of `b` sequences of `t` tokens projected by [`LayerWeights::project`], with no states.
pub fn reference_inputs(projected: &Projected, b: usize, t: usize) -> LayerInputs {
    let shaped = |values: &[f32]| {
        Array3::from_shape_vec((b, t, values.len() / (b * t)), wide(values)).expect("projected per token")
    };
    LayerInputs {
        qkv: shaped(&projected.qkv),
        z: shaped(&projected.z),
        a: shaped(&projected.a),
        b: shaped(&projected.b),
        h0: None,
        conv_state: None,
        cu_seqlens: None,
    }
}
