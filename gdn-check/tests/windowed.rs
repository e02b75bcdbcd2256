//! `WindowedTape` against gdn-ref at the spec's bars: a packed batch cut into windows of a few
//! tokens (sequences cut at window boundaries, windows holding several pieces), in both families,
//! with its typed refusals; and a batch whose `qkv` passes the binding limit of a device that an engine created with a
//! small limit, refused by a `Tape` and run in windows. Runs on whatever adapter `Context::new`
//! finds (lavapipe in CI) and fails when there is none.

use gdn_check::engine_arena::Arena;
use gdn_check::{Case, DeviceResults};
use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, Layer, LayerConfig, Tensor};
use gdn_train::{Context, Error, Family, Inputs, Params, Precision, Storage, Tape, TapeOptions, WindowedTape};

fn case(config: LayerConfig, batch: Batch, family: Family) -> Case {
    Case {
        config,
        batch,
        h0: true,
        dht: true,
        regime: Regime::Typical,
        family,
        precision: Precision::F32,
        storage: Storage::F32,
        seed: 31,
    }
}

/// Runs `case` through a windowed tape on `ctx` (windows of at most `most_tokens`), checks every
/// output and gradient against gdn-ref at the case's bars, and returns the windows it took.
fn check(ctx: &Context, case: &Case, family: Option<Family>, most_tokens: Option<usize>) -> usize {
    let options = TapeOptions { initial_state: true, final_state_grad: true, family, ..TapeOptions::default() };
    let tape = WindowedTape::new(ctx, case.config, case.batch.clone(), options, most_tokens).expect("windows fit");
    let draw = case.draw();
    let values = |t| draw.caller_values(t);
    let (a_log, dt_bias, norm, conv) =
        (values(Tensor::ALog), values(Tensor::DtBias), values(Tensor::Norm), values(Tensor::Conv));
    tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv }).unwrap();
    let (qkv, z, a, b, h0) =
        (values(Tensor::Qkv), values(Tensor::Z), values(Tensor::A), values(Tensor::B), values(Tensor::H0));
    let outputs =
        tape.run_forward(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: Some(&h0), conv_state: None }).unwrap();
    let (dout, dht) = (values(Tensor::Dout), values(Tensor::Dht));
    let gradients = tape.run_backward(&dout, Some(&dht)).unwrap();

    let layer = Layer::new(case.config, draw.params.clone()).unwrap();
    let (want, want_grads) = (layer.forward(&draw.inputs).unwrap(), layer.backward(&draw.inputs, &draw.grads).unwrap());
    let device = DeviceResults { outputs, gradients, device_bytes: 0 };
    for e in case.expectations(&draw, &want, &want_grads) {
        let got: Vec<f64> = device.tensor(e.tensor).iter().map(|&v| f64::from(v)).collect();
        let error = if got.len() == e.values.len() { relative_error_f32(&got, &e.values) } else { f64::INFINITY };
        let bar = e.bar.expect("realistic inputs have bars") * e.cancellation;
        println!("{:?} in {} windows: {:<9} {error:.2e} (bar {bar:.1e})", family, tape.windows(), e.tensor.name());
        assert!(error <= bar, "{:?}: {} error {error:.2e} over {bar:.1e}", family, e.tensor.name());
    }
    tape.windows()
}

#[test]
fn windows_of_a_few_tokens_match_the_reference() {
    let ctx = gdn_check::device_context();
    let batch = Batch::Packed { cu_seqlens: vec![0, 5, 40, 47, 90] };
    for family in Family::ALL {
        let case = case(LayerConfig::new(1, 2, 16, 32, 4).unwrap(), batch.clone(), family);
        // 16-token windows: sequences of 35 and 43 tokens cut twice, windows of several pieces.
        assert_eq!(check(ctx, &case, Some(family), Some(16)), 6);
    }
    let (config, options) = (LayerConfig::new(1, 2, 16, 32, 4).unwrap(), TapeOptions::default());
    let refused = WindowedTape::new(ctx, config, batch.clone(), options, Some(0));
    assert!(matches!(refused, Err(Error::Config { name: "most_tokens", .. })), "{:?}", refused.err());
    let tape = WindowedTape::new(ctx, config, batch, options, Some(16)).unwrap();
    let (qkv, short) = (vec![0.5; 90 * config.channels()], vec![0.5; 89 * config.value_width()]);
    let x = Inputs { qkv: &qkv, z: &short, a: &[0.0; 180], b: &[0.0; 180], h0: None, conv_state: None };
    let refused = tape.run_forward(&x).expect_err("a short z");
    assert_eq!(refused, Error::Length { name: "z", expected: 90 * 64, got: 89 * 64 });
}

/// An engine's device whose binding limit is 128 KiB: `qkv` of 300 tokens of 128 channels
/// (150 KiB) passes it.
#[test]
fn a_batch_over_the_binding_limit_runs_in_windows() {
    let (ctx, _, _) =
        gdn_check::engine_device(|adapter| wgpu::Limits { max_storage_buffer_binding_size: 128 << 10, ..adapter });

    let config = LayerConfig::new(1, 2, 32, 32, 4).unwrap();
    let batch = Batch::Packed { cu_seqlens: vec![0, 120, 300] };
    let options = TapeOptions { initial_state: true, final_state_grad: true, ..TapeOptions::default() };
    match Tape::new(&ctx, config, batch.clone(), options) {
        Err(Error::Limit { limit: "max_storage_buffer_binding_size", .. }) => {}
        other => panic!("expected the binding limit, got {:?}", other.map(|t| t.family())),
    }
    let case = case(config, batch, Family::chunked());
    let windows = check(&ctx, &case, None, None);
    assert!(windows > 2, "{windows} windows");
}

#[test]
fn a_windowed_tape_in_an_engine_s_buffers_records_the_chain_into_its_encoder() {
    let (ctx, device, queue) =
        gdn_check::engine_device(|adapter| wgpu::Limits { max_storage_buffer_binding_size: 128 << 10, ..adapter });
    let config = LayerConfig::new(1, 2, 32, 32, 4).unwrap();
    let batch = Batch::Packed { cu_seqlens: vec![0, 70, 300, 310] };
    let (tokens, sequences) = (310, 3);
    for family in Family::ALL {
        let case = case(config, batch.clone(), family);
        let mut draw = case.draw();
        let mut sampler = gdn_ref::sample::Sampler::new(77);
        draw.inputs.conv_state = Some(sampler.conv_state(&config, &batch));
        draw.grads.dconv_state = Some(sampler.conv_state_grad(&config, &batch));
        let options = TapeOptions {
            initial_state: true,
            final_state_grad: true,
            conv_state: true,
            family: Some(family),
            ..TapeOptions::default()
        };
        let lens: Vec<(Tensor, usize)> = Tensor::ALL
            .into_iter()
            .map(|t| (t, t.len(&config, tokens, sequences).unwrap()))
            .filter(|&(_, words)| words > 0)
            .collect();
        let arena = Arena::new(&device, &queue, &lens);
        let tape =
            WindowedTape::with_caller_buffers(&ctx, config, batch.clone(), options, None, &arena.caller_buffers())
                .unwrap();
        assert!(tape.windows() > 2, "{} windows", tape.windows());
        let written = |t: Tensor| -> Vec<f32> {
            match t {
                Tensor::ConvState => draw.inputs.conv_state.as_ref().unwrap().iter().map(|&v| v as f32).collect(),
                Tensor::DfinalConvState => draw.grads.dconv_state.as_ref().unwrap().iter().map(|&v| v as f32).collect(),
                _ => draw.caller_values(t),
            }
        };
        for &(tensor, offset, words) in arena.places.iter().filter(|p| p.0.caller_written()) {
            let values = written(tensor);
            assert_eq!(values.len(), words, "{}", tensor.name());
            queue.write_buffer(&arena.buffer, offset, bytemuck::cast_slice(&values));
        }
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        tape.encode_forward(&mut encoder).unwrap();
        tape.encode_backward(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let got = arena.read(&device, &queue);

        let layer = Layer::new(config, draw.params.clone()).unwrap();
        let want = layer.forward(&draw.inputs).unwrap();
        let want_grads = layer.backward(&draw.inputs, &draw.grads).unwrap();
        let mut expected: Vec<(Tensor, Vec<f64>, f64)> = case
            .expectations(&draw, &want, &want_grads)
            .into_iter()
            .map(|e| (e.tensor, e.values, e.bar.expect("realistic inputs have bars") * e.cancellation))
            .collect();
        expected.push((Tensor::FinalConvState, want.conv_state.iter().copied().collect(), 1e-4));
        expected.push((Tensor::DconvState, want_grads.dconv_state.as_ref().unwrap().iter().copied().collect(), 5e-4));
        for (tensor, values, bar) in expected {
            let error = relative_error_f32(&arena.values(&got, tensor), &values);
            println!(
                "{family:?} in {} windows, the engine's {:<17} {error:.2e} (bar {bar:.1e})",
                tape.windows(),
                tensor.name()
            );
            assert!(error <= bar, "{family:?}: {} error {error:.2e} over {bar:.1e}", tensor.name());
        }
        // The gaps between the engine's tensors are untouched.
        assert_eq!(arena.touched_outside(&got), 0, "{family:?}: words outside every tensor changed");
        // Host calls would leave the engine's state ranges stale: refused.
        let host = tape.run_backward(&written(Tensor::Dout), Some(&written(Tensor::Dht)));
        assert!(matches!(host, Err(Error::Unsupported { option: "run_backward", .. })), "{host:?}");
    }
    // A windowed tape made for the host has nothing of the caller's to record into.
    let host_tape = WindowedTape::new(&ctx, config, batch, TapeOptions::default(), None).unwrap();
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    assert!(matches!(host_tape.encode_forward(&mut encoder), Err(Error::Unsupported { option: "encode_forward", .. })));
}

/// On a driver whose loop budget caps the chunked family's sequences (lavapipe before Mesa 26, CI's
/// included), a longer sequence is refused by a `Tape` by name and runs right in windows. Elsewhere
/// the same sequence fits one tape.
#[test]
fn a_sequence_past_the_driver_s_loop_budget_runs_in_windows() {
    let ctx = gdn_check::device_context();
    let config = LayerConfig::new(1, 1, 16, 16, 4).unwrap();
    let tokens = ctx.longest_chunked_sequence().unwrap_or(gdn_train::LAVAPIPE_CHUNKED_TOKENS) + 40;
    let batch = Batch::Packed { cu_seqlens: vec![0, 7, 7 + tokens] };
    let options = TapeOptions { family: Some(Family::chunked()), ..TapeOptions::default() };
    let tape = Tape::new(ctx, config, batch.clone(), options);
    match ctx.longest_chunked_sequence() {
        Some(most) => {
            let e = tape.err().expect("refused");
            assert!(matches!(e, Error::Limit { limit: "tokens_per_sequence", .. }), "{e}");
            assert!(e.to_string().contains(&format!("{}", tokens)) && e.to_string().contains(&most.to_string()), "{e}");
        }
        None => assert!(tape.is_ok(), "{:?}", tape.err()),
    }
    let windows = check(ctx, &case(config, batch, Family::chunked()), Some(Family::chunked()), None);
    assert_eq!(windows, if ctx.longest_chunked_sequence().is_some() { 2 } else { 1 });
}
