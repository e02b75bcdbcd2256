//! Grids at every shape a tape accepts stay within `max_compute_workgroups_per_dimension`: the
//! parameter column sums fold their grid like every other kernel. Here the conv-weight sum over
//! `C·kk` columns, at a shape lavapipe holds: 66 000 column groups of 64, more than 65 535.

use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::{Regime, Sampler};
use gdn_train::{Batch, Context, Family, Inputs, LayerConfig, Params, Tape, TapeOptions};

fn to_f32<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<f32> {
    values.into_iter().map(|&v| v as f32).collect()
}

#[test]
fn the_conv_weight_sum_over_more_columns_than_a_grid_dimension_matches_the_reference() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    // nk 1, nv 4, dk = dv = 16: C = 96 channels; kk = 44 000 taps: 4 224 000 conv weights in
    // 66 000 column groups of 64.
    let (nk, nv, d, kk) = (1, 4, 16, 44_000);
    let max = ctx.device().limits().max_compute_workgroups_per_dimension as usize;
    let column_groups = (2 * nk * d + nv * d) * kk / gdn_wgsl::COLUMNS as usize;
    assert!(column_groups > max, "{column_groups} column groups must exceed the grid limit {max}");

    let config = gdn_ref::LayerConfig::new(nk, nv, d, d, kk).unwrap();
    let batch = gdn_ref::Batch::Fixed { b: 1, t: 2 };
    let mut sampler = Sampler::new(7);
    let params = sampler.params(&config, Regime::Typical);
    let x = sampler.inputs(&config, &batch, false, Regime::Typical);
    let grads = sampler.output_grads(&config, &batch, false);
    let layer = gdn_ref::Layer::new(config, params.clone()).unwrap();
    let want = layer.backward(&x, &grads).unwrap();

    let options = TapeOptions { family: Some(Family::recurrent()), ..TapeOptions::default() };
    let tape =
        Tape::new(&ctx, LayerConfig::new(nk, nv, d, d, kk).unwrap(), Batch::Fixed { b: 1, t: 2 }, options).unwrap();
    let (a_log, dt_bias, norm, conv) =
        (to_f32(&params.a_log), to_f32(&params.dt_bias), to_f32(&params.norm), to_f32(&params.conv));
    tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv }).unwrap();
    let (qkv, z, a, b) = (to_f32(&x.qkv), to_f32(&x.z), to_f32(&x.a), to_f32(&x.b));
    tape.fill_outputs_with_nan().unwrap();
    tape.run_forward(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: None, conv_state: None }).unwrap();
    let got = tape.run_backward(&to_f32(&grads.dout), None).expect("the backward runs");

    let dconv: Vec<f64> = got.dconv.iter().map(|&v| f64::from(v)).collect();
    let want: Vec<f64> = want.dconv.iter().copied().collect();
    let error = relative_error_f32(&dconv, &want);
    println!("dconv over {column_groups} column groups: relative error {error:.2e}");
    // The spec's bar for every gradient of an f32 kernel.
    assert!(error < 5e-4, "dconv relative error {error:e}");
}
