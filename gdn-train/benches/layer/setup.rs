//! What each bench runs on: the kernel families to compare, and a tape per family and shape
//! filled with inputs drawn as the spec draws them (gdn-ref's sampler: random, never zeros).

use crate::shapes::Shape;
use gdn_ref::sample::{Regime, Sampler};
use gdn_train::{Batch, Context, Family, Inputs, LayerConfig, Params, Precision, Tape, TapeOptions};

/// The families (with the precision of their products) every bench runs, by the name their bench
/// ids carry. A new family or precision is one more entry here; one the adapter refuses (tensor
/// cores on lavapipe) is skipped and recorded as refused.
pub fn families() -> [(&'static str, Family, Precision); 3] {
    [
        ("recurrent", Family::recurrent(), Precision::F32),
        ("chunked", Family::chunked(), Precision::F32),
        ("chunked-tc", Family::chunked(), Precision::TensorCore),
    ]
}

/// A tape of `family` in `precision` at `shape` with parameters, inputs and output gradients
/// uploaded.
pub fn tape(ctx: &Context, family: Family, precision: Precision, shape: &Shape) -> Result<Tape, String> {
    let config = LayerConfig::new(shape.nk, shape.nv, shape.d, shape.d, shape.kk).map_err(|e| e.to_string())?;
    let options = TapeOptions { family: Some(family), precision, ..TapeOptions::default() };
    let tape = Tape::new(ctx, config, Batch::Fixed { b: shape.b, t: shape.t }, options).map_err(|e| e.to_string())?;
    let reference =
        gdn_ref::LayerConfig::new(shape.nk, shape.nv, shape.d, shape.d, shape.kk).map_err(|e| e.to_string())?;
    let batch = gdn_ref::Batch::Fixed { b: shape.b, t: shape.t };
    let mut sampler = Sampler::new(2026);
    let p = sampler.params(&reference, Regime::Typical);
    let (a_log, dt_bias, norm, conv) = (f32s(&p.a_log), f32s(&p.dt_bias), f32s(&p.norm), f32s(&p.conv));
    tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv })
        .map_err(|e| e.to_string())?;
    let x = sampler.inputs(&reference, &batch, false, Regime::Typical);
    let (qkv, z, a, b) = (f32s(&x.qkv), f32s(&x.z), f32s(&x.a), f32s(&x.b));
    tape.write_inputs(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: None, conv_state: None })
        .map_err(|e| e.to_string())?;
    let dout = f32s(&sampler.output_grads(&reference, &batch, false).dout);
    tape.write_output_grads(&dout, None).map_err(|e| e.to_string())?;
    Ok(tape)
}

/// The values rounded to f32.
pub fn f32s<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<f32> {
    values.into_iter().map(|&v| v as f32).collect()
}
