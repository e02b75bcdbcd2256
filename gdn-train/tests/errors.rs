//! Every bad argument and every limit is a typed error naming what was wrong — never a panic.
//! The tests that need a device fail (they do not skip) when there is no adapter.

use gdn_train::{
    Batch, Context, ContextOptions, Error, Family, Inputs, LayerConfig, Params, Precision, Tape, TapeOptions, Tensor,
};
use std::sync::OnceLock;

fn context() -> &'static Context {
    static CONTEXT: OnceLock<Context> = OnceLock::new();
    CONTEXT.get_or_init(|| Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}")))
}

fn small() -> LayerConfig {
    sizes(1, 2, 16, 16, 4)
}

/// A layer of these sizes, unchecked: the tape checks them.
fn sizes(nk: usize, nv: usize, dk: usize, dv: usize, kk: usize) -> LayerConfig {
    LayerConfig { nk, nv, dk, dv, kk, rms_eps: 1e-6 }
}

#[test]
fn no_matching_adapter_says_how_to_get_one() {
    let options =
        ContextOptions { adapter_name: Some("no adapter is called this".into()), ..ContextOptions::default() };
    let err = Context::with_options(&options).err().expect("no adapter matches");
    assert!(matches!(err, Error::NoAdapter { .. }));
    let text = err.to_string();
    assert!(text.contains("no adapter is called this"), "{text}");
    assert!(text.contains("apt-get install mesa-vulkan-drivers libvulkan1"), "{text}");
}

#[test]
fn layer_sizes_are_checked() {
    let ctx = context();
    let fixed = Batch::Fixed { b: 1, t: 4 };
    let tape = |config| Tape::new(ctx, config, fixed.clone(), TapeOptions::default()).err().expect("rejected");
    assert!(matches!(tape(sizes(2, 3, 16, 16, 4)), Error::Layer(gdn_ref::Error::HeadRatio { nk: 2, nv: 3 })));
    assert!(matches!(tape(sizes(1, 1, 16, 16, 0)), Error::Layer(gdn_ref::Error::Empty { name: "kk" })));
    let err = tape(sizes(1, 1, 100, 16, 4));
    let sizes = gdn_wgsl::SUPPORTED_SIZES;
    assert_eq!(
        err.to_string(),
        format!("dk = 100 has no generated kernels; generated head sizes are {sizes:?} (any pair of them)")
    );
    let options = TapeOptions { family: Some(Family::Recurrent { checkpoint_interval: 0 }), ..TapeOptions::default() };
    let refused = Tape::new(ctx, small(), fixed.clone(), options);
    assert!(matches!(refused, Err(Error::Config { name: "checkpoint_interval", .. })));
    for (chunk, precision) in [(0, Precision::F32), (65, Precision::F32), (8, Precision::TensorCore)] {
        let options = TapeOptions { family: Some(Family::Chunked { chunk }), precision, ..TapeOptions::default() };
        assert!(matches!(Tape::new(ctx, small(), fixed.clone(), options), Err(Error::Config { name: "chunk", .. })));
    }
}

#[test]
fn a_final_state_gradient_without_a_backward_is_refused() {
    let options = TapeOptions { backward: false, final_state_grad: true, ..TapeOptions::default() };
    let refused = Tape::new(context(), small(), Batch::Fixed { b: 1, t: 4 }, options);
    assert!(matches!(refused, Err(Error::Config { name: "final_state_grad", .. })), "{:?}", refused.err());
}

#[test]
fn an_rms_eps_that_f32_holds_only_as_zero_or_subnormal_is_refused() {
    for rms_eps in [1e-50, 1e-40] {
        let config = LayerConfig { rms_eps, ..small() };
        let refused = Tape::new(context(), config, Batch::Fixed { b: 1, t: 4 }, TapeOptions::default());
        assert!(matches!(refused, Err(Error::Config { name: "rms_eps", .. })), "{rms_eps}: {:?}", refused.err());
        let refused = gdn_train::StatePool::new(context(), config, 1).map(|_| ());
        assert!(matches!(refused, Err(Error::Config { name: "rms_eps", .. })), "{rms_eps}: {refused:?}");
    }
    let config = LayerConfig { rms_eps: 1e-30, ..small() };
    assert!(Tape::new(context(), config, Batch::Fixed { b: 1, t: 4 }, TapeOptions::default()).is_ok());
}

#[test]
fn batch_layouts_are_checked() {
    let ctx = context();
    let tape = |batch| Tape::new(ctx, small(), batch, TapeOptions::default()).err().expect("rejected");
    assert!(matches!(tape(Batch::Fixed { b: 0, t: 4 }), Error::Layer(gdn_ref::Error::Empty { name: "B" })));
    for (cu, reason) in [(vec![0, 3, 3], "strictly increase"), (vec![1, 4], "start at 0"), (vec![0], "at least")] {
        match tape(Batch::Packed { cu_seqlens: cu.clone() }) {
            Error::Layer(gdn_ref::Error::Offsets { got, reason: r }) => assert!(got == cu && r.contains(reason), "{r}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn host_slices_are_checked() {
    let ctx = context();
    let tape = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, TapeOptions::default()).unwrap();
    let channels = small().channels();
    let err = tape.write(Tensor::Qkv, &vec![0.0; 6 * channels - 1]).unwrap_err();
    assert_eq!(err, Error::Length { name: "qkv", expected: 6 * channels, got: 6 * channels - 1 });
    assert_eq!(err.to_string(), format!("qkv: expected {} elements, got {}", 6 * channels, 6 * channels - 1));
    let conv = vec![0.0; channels * 4];
    let params = Params { a_log: &[0.0; 2], dt_bias: &[0.0; 2], norm: &[1.0; 15], conv: &conv };
    assert_eq!(tape.write_params(&params).unwrap_err(), Error::Length { name: "norm", expected: 16, got: 15 });
    let qkv = vec![0.0; 6 * channels];
    let inputs =
        Inputs { qkv: &qkv, z: &[0.0; 6 * 32], a: &[0.0; 12], b: &[0.0; 12], h0: Some(&[0.0; 512]), conv_state: None };
    assert!(matches!(tape.write_inputs(&inputs), Err(Error::Presence { name: "h0", .. })));
    assert!(matches!(
        tape.write_output_grads(&[0.0; 6 * 32], Some(&[0.0; 512])),
        Err(Error::Presence { name: "dht", .. })
    ));
    assert!(matches!(tape.write(Tensor::Dh0, &[]), Err(Error::Presence { name: "dh0", .. })));
}

#[test]
fn conv_state_slices_are_checked() {
    let ctx = context();
    let (channels, tokens) = (small().channels(), 6);
    let qkv = vec![0.0; tokens * channels];
    let inputs =
        |conv_state| Inputs { qkv: &qkv, z: &[0.0; 6 * 32], a: &[0.0; 12], b: &[0.0; 12], h0: None, conv_state };
    let window = vec![0.0; 2 * 3 * channels];
    let plain = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, TapeOptions::default()).unwrap();
    assert!(matches!(plain.write_inputs(&inputs(Some(&window))), Err(Error::Presence { name: "conv_state", .. })));
    assert!(matches!(
        plain.write_final_conv_state_grad(&window),
        Err(Error::Presence { name: "dfinal_conv_state", .. })
    ));
    assert_eq!(plain.run_forward(&inputs(None)).unwrap().conv_state, None);

    let options = TapeOptions { conv_state: true, ..TapeOptions::default() };
    let tape = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, options).unwrap();
    assert_eq!(tape.len(Tensor::ConvState), 2 * 3 * channels);
    assert!(matches!(tape.write_inputs(&inputs(None)), Err(Error::Presence { name: "conv_state", .. })));
    assert_eq!(
        tape.write_inputs(&inputs(Some(&window[1..]))).unwrap_err(),
        Error::Length { name: "conv_state", expected: 2 * 3 * channels, got: 2 * 3 * channels - 1 }
    );
    assert!(tape.write_inputs(&inputs(Some(&window))).is_ok());

    // kk = 1: the window is empty, and an empty slice is the only one that fits.
    let kk1 = Tape::new(ctx, sizes(1, 2, 16, 16, 1), Batch::Fixed { b: 2, t: 3 }, options).unwrap();
    assert_eq!(kk1.run_forward(&inputs(Some(&[]))).unwrap().conv_state, Some(Vec::new()));
}

#[test]
fn buffers_beyond_the_device_limits_are_refused_before_allocation() {
    let ctx = context();
    let limit = ctx.device().limits().max_storage_buffer_binding_size;
    let config = sizes(16, 64, 128, 128, 4);
    let t = (limit / 4 / config.channels() as u64 + 1) as usize;
    match Tape::new(ctx, config, Batch::Fixed { b: 1, t }, TapeOptions::default()) {
        Err(Error::Limit { what, limit: name, needed, available }) => {
            assert!(what.starts_with("buffer "), "{what}");
            assert!(name == "max_storage_buffer_binding_size" || name == "max_buffer_size");
            assert!(needed > available);
        }
        Err(other) => panic!("expected a limit error, got {other}"),
        Ok(_) => panic!("a tape beyond the binding limit was created"),
    }
}

#[test]
fn tensor_cores_are_refused_by_name_where_missing_and_for_the_recurrent_family() {
    let ctx = context();
    let fixed = Batch::Fixed { b: 1, t: 4 };
    let options =
        |family| TapeOptions { family: Some(family), precision: Precision::TensorCore, ..TapeOptions::default() };
    let recurrent = Tape::new(ctx, small(), fixed.clone(), options(Family::recurrent()));
    assert!(matches!(recurrent, Err(Error::Unsupported { option: "precision", .. })));
    let chunked = Tape::new(ctx, small(), fixed, options(Family::chunked()));
    match ctx.supports(Precision::TensorCore) {
        Ok(()) => assert!(chunked.is_ok(), "{:?}", chunked.err()),
        Err(why) => {
            println!("this adapter has no tensor cores: {why}");
            let err = chunked.err().expect("refused");
            assert_eq!(err, why);
            let text = err.to_string();
            assert!(
                text.contains("COOPERATIVE_MATRIX") || text.contains("16×16×16") || text.contains("subgroups"),
                "{text}"
            );
        }
    }
}

#[test]
fn a_tape_names_the_family_it_runs_fitted_to_its_batch() {
    let ctx = context();
    let runs = |family: Option<Family>, batch: Batch| {
        let options = TapeOptions { family, ..TapeOptions::default() };
        Tape::new(ctx, small(), batch, options).expect("valid").family()
    };
    // Tensor-core products are the chunked family's, forward-only or not.
    assert_eq!(
        ctx.picked_family(&TapeOptions { backward: false, precision: Precision::TensorCore, ..TapeOptions::default() }),
        Family::chunked()
    );
    // A tape that picks its family picks it for its batch and sets the knob for it (on a GPU, the
    // recurrent family for these few heads: `Family::picked_for_batch`).
    let picked = |offsets: &[usize]| ctx.picked_family_for_batch(&small(), offsets, &TapeOptions::default());
    let for_batch = picked(&[0, 200]).fitted(200, Precision::F32);
    assert_eq!(runs(None, Batch::Fixed { b: 1, t: 200 }), for_batch);
    assert_eq!(runs(None, Batch::Fixed { b: 4, t: 1 }), picked(&[0, 1, 2, 3, 4]).fitted(1, Precision::F32));
    let chunked = Some(Family::chunked());
    assert_eq!(runs(chunked, Batch::Fixed { b: 4, t: 1 }), Family::Chunked { chunk: 1 });
    assert_eq!(runs(chunked, Batch::Packed { cu_seqlens: vec![0, 20, 30] }), Family::Chunked { chunk: 32 });
    let recurrent = Some(Family::Recurrent { checkpoint_interval: 8 });
    assert_eq!(runs(recurrent, Batch::Fixed { b: 1, t: 200 }), Family::Recurrent { checkpoint_interval: 8 });
    assert_eq!(runs(recurrent, Batch::Fixed { b: 2, t: 3 }), Family::Recurrent { checkpoint_interval: 3 });
}

/// A shape where the family the context picks needs a buffer over the binding limit and the other
/// family does not: the picked family named is refused, left to the tape the other one runs. On a
/// software adapter the recurrent family is picked and its backward scratch (sequences × heads ×
/// (interval − 1) states, the interval fitted to T) is what overflows; on a GPU the chunked family is picked and its f32
/// work buffer (about 1 538 words per token and value head at chunk 64) is.
#[test]
fn a_tape_left_to_pick_runs_the_family_that_fits_the_device() {
    let ctx = context();
    let limit = ctx.device().limits().max_storage_buffer_binding_size as usize;
    let picked = ctx.picked_family(&TapeOptions::default());
    let (config, batch) = if picked.name() == "recurrent" {
        let config = sizes(1, 4, 128, 128, 4);
        (config, Batch::Fixed { b: limit / (4 * 15 * config.state_size() * 4) + 1, t: 16 })
    } else {
        let config = sizes(1, 64, 128, 128, 4);
        (config, Batch::Fixed { b: 1, t: (limit / (6152 * 64)).next_multiple_of(64) + 64 })
    };
    let named = TapeOptions { family: Some(picked), ..TapeOptions::default() };
    match Tape::new(ctx, config, batch.clone(), named) {
        Err(Error::Limit { limit: "max_storage_buffer_binding_size", .. }) => {}
        other => panic!("{picked:?} at {batch:?}: expected the binding limit, got {:?}", other.map(|t| t.family())),
    }
    let tape = Tape::new(ctx, config, batch, TapeOptions::default()).expect("the other family fits");
    assert_ne!(tape.family().name(), picked.name(), "ran {:?}", tape.family());
}

#[test]
fn a_backward_before_any_forward_and_a_read_before_its_pass_are_refused() {
    let ctx = context();
    let tape = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, TapeOptions::default()).unwrap();
    let (qkv, dout) = (vec![0.5; 6 * small().channels()], vec![1.0; 6 * 32]);
    let inputs = Inputs { qkv: &qkv, z: &[1.0; 6 * 32], a: &[0.0; 12], b: &[0.0; 12], h0: None, conv_state: None };
    let conv = vec![0.25; small().channels() * 4];
    tape.write_params(&Params { a_log: &[0.0; 2], dt_bias: &[0.0; 2], norm: &[1.0; 16], conv: &conv }).unwrap();
    let order = |r: Result<(), Error>| match r {
        Err(Error::Order { name, reason }) => format!("{name}: {reason}"),
        other => panic!("expected an order error, got {other:?}"),
    };
    assert_eq!(
        order(tape.run_backward(&dout, None).map(|_| ())),
        "backward: no forward has run on this tape: the backward reads what the forward saves"
    );
    assert_eq!(order(tape.backward()), order(tape.run_backward(&dout, None).map(|_| ())));
    assert_eq!(order(tape.read_outputs().map(|_| ())), "out: the forward that writes it has not run on this tape");
    assert_eq!(order(tape.read(Tensor::Ht).map(|_| ())), "ht: the forward that writes it has not run on this tape");
    assert_eq!(order(tape.read_gradients().map(|_| ())), "dqkv: the backward that writes it has not run on this tape");
    // What the caller writes reads back at any time.
    assert_eq!(tape.read(Tensor::Qkv).unwrap(), vec![0.0; qkv.len()]);

    let outputs = tape.run_forward(&inputs).unwrap();
    assert!(outputs.out.iter().all(|x| x.is_finite()) && outputs.out.iter().any(|&x| x != 0.0));
    assert_eq!(order(tape.read(Tensor::Da).map(|_| ())), "da: the backward that writes it has not run on this tape");
    let grads = tape.run_backward(&dout, None).unwrap();
    assert!(grads.dqkv.iter().all(|x| x.is_finite()) && grads.dqkv.iter().any(|&x| x != 0.0));
}

#[test]
fn a_forward_recorded_into_an_encoder_never_submitted_has_not_run() {
    let ctx = context();
    let tape = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, TapeOptions::default()).unwrap();
    let conv = vec![0.25; small().channels() * 4];
    tape.write_params(&Params { a_log: &[0.0; 2], dt_bias: &[0.0; 2], norm: &[1.0; 16], conv: &conv }).unwrap();
    let (qkv, dout) = (vec![0.5; 6 * small().channels()], vec![1.0; 6 * 32]);
    tape.write_inputs(&Inputs {
        qkv: &qkv,
        z: &[1.0; 6 * 32],
        a: &[0.0; 12],
        b: &[0.0; 12],
        h0: None,
        conv_state: None,
    })
    .unwrap();
    let not_submitted = "the forward recorded by encode_forward has not run: its encoder was not submitted";
    let order = |r: Result<(), Error>| match r {
        Err(Error::Order { name, reason }) => format!("{name}: {reason}"),
        other => panic!("expected an order error, got {other:?}"),
    };
    let encoder = || ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("dropped") });
    let mut dropped = encoder();
    tape.encode_forward(&mut dropped);
    drop(dropped);
    assert_eq!(order(tape.run_backward(&dout, None).map(|_| ())), format!("backward: {not_submitted}"));
    assert_eq!(order(tape.read_outputs().map(|_| ())), format!("out: {not_submitted}"));
    // Recorded with its backward into one encoder that is dropped: the gradients have not run.
    let mut both = encoder();
    tape.encode_forward(&mut both);
    tape.encode_backward(&mut both).unwrap();
    drop(both);
    assert_eq!(order(tape.read(Tensor::Dqkv).map(|_| ())), format!("dqkv: {not_submitted}"));

    // Submitted, the same recording counts, whether or not the queue was waited on.
    let mut submitted = encoder();
    tape.encode_forward(&mut submitted);
    ctx.queue().submit([submitted.finish()]);
    let grads = tape.run_backward(&dout, None).unwrap();
    assert!(grads.dqkv.iter().all(|x| x.is_finite()) && grads.dqkv.iter().any(|&x| x != 0.0));
    let mut step = encoder();
    tape.encode_forward(&mut step);
    tape.encode_backward(&mut step).unwrap();
    ctx.queue().submit([step.finish()]);
    assert_eq!(tape.read(Tensor::Dqkv).unwrap(), grads.dqkv);
}

#[test]
fn a_rejected_call_writes_nothing() {
    let ctx = context();
    let options = TapeOptions { final_state_grad: true, ..TapeOptions::default() };
    let tape = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, options).unwrap();
    let channels = small().channels();
    let (old_qkv, new_qkv) = (vec![0.5; 6 * channels], vec![-2.0; 6 * channels]);
    let inputs = |qkv, z| Inputs { qkv, z, a: &[0.0; 12], b: &[0.0; 12], h0: None, conv_state: None };
    tape.run_forward(&inputs(&old_qkv, &[1.0; 6 * 32])).unwrap();
    // z one element short: refused after qkv was checked, and qkv keeps its old values.
    let err = tape.run_forward(&inputs(&new_qkv, &[1.0; 6 * 32 - 1])).unwrap_err();
    assert_eq!(err, Error::Length { name: "z", expected: 6 * 32, got: 6 * 32 - 1 });
    assert_eq!(tape.read(Tensor::Qkv).unwrap(), old_qkv);
    assert_eq!(tape.read(Tensor::Z).unwrap(), vec![1.0; 6 * 32]);

    let conv = vec![0.25; channels * 4];
    let params = |a_log, conv| Params { a_log, dt_bias: &[0.0; 2], norm: &[1.0; 16], conv };
    tape.write_params(&params(&[0.5; 2], &conv)).unwrap();
    let err = tape.write_params(&params(&[3.0; 2], &conv[1..])).unwrap_err();
    assert_eq!(err, Error::Length { name: "conv", expected: channels * 4, got: channels * 4 - 1 });
    assert_eq!(tape.read(Tensor::ALog).unwrap(), vec![0.5; 2]);

    // dhT missing from a tape made with final_state_grad: dout keeps its old values.
    tape.write_output_grads(&[1.0; 6 * 32], Some(&[0.0; 1024])).unwrap();
    assert!(matches!(tape.write_output_grads(&[7.0; 6 * 32], None), Err(Error::Presence { name: "dht", .. })));
    assert_eq!(tape.read(Tensor::Dout).unwrap(), vec![1.0; 6 * 32]);
}

#[test]
fn absurd_sizes_are_typed_errors_naming_the_argument_before_any_allocation() {
    let ctx = context();
    let tape = |config, batch, family| {
        let options = TapeOptions { family, ..TapeOptions::default() };
        Tape::new(ctx, config, batch, options)
    };
    let refused = |config, batch| tape(config, batch, None).err().expect("refused");
    // A batch beyond the device's buffers is refused before the host lays out 2^40 offsets.
    for batch in [Batch::Fixed { b: 1 << 40, t: 1 }, Batch::Fixed { b: 1, t: 1 << 62 }] {
        match refused(small(), batch) {
            Error::Limit { what, needed, available, .. } => {
                assert!(what.starts_with("buffer qkv"), "{what}");
                assert!(needed > available);
            }
            other => panic!("expected a limit on qkv, got {other:?}"),
        }
    }
    let err = refused(small(), Batch::Fixed { b: 1 << 40, t: 1 << 40 });
    assert_eq!(err.to_string(), format!("batch: B·T = {} · {} overflows usize", 1u64 << 40, 1u64 << 40));
    // Layer sizes whose products overflow, or exceed the kernels' u32 indices.
    let fixed = Batch::Fixed { b: 1, t: 4 };
    for (config, name) in [
        (sizes(1 << 62, 1 << 62, 16, 16, 4), "nk"),
        (sizes(1, 1 << 62, 16, 16, 4), "nv"),
        (sizes(1, 1 << 28, 16, 16, 4), "nv"),
        (sizes(1, 2, 16, 16, usize::MAX), "kk"),
    ] {
        match refused(config, fixed.clone()) {
            Error::Config { name: got, reason } => {
                assert_eq!(got, name, "{config:?}: {reason}");
                assert!(reason.contains("u32"), "{reason}");
            }
            other => panic!("{config:?}: expected a config error on {name}, got {other:?}"),
        }
    }
    // The largest checkpoint interval is cut to the batch's longest sequence.
    let recurrent = Some(Family::Recurrent { checkpoint_interval: usize::MAX });
    assert_eq!(tape(small(), fixed, recurrent).unwrap().family(), Family::Recurrent { checkpoint_interval: 4 });
}

#[test]
fn a_finite_value_past_f16s_range_is_refused_by_name_where_f16_stores_it() {
    let ctx = context();
    let f16 = TapeOptions { storage: gdn_train::Storage::F16, ..TapeOptions::default() };
    let tape = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, f16).unwrap();
    let mut qkv = vec![0.5; 6 * small().channels()];
    qkv[7] = 65_504.0;
    tape.write(Tensor::Qkv, &qkv).expect("f16's largest value fits");
    qkv[9] = -70_000.0;
    match tape.write(Tensor::Qkv, &qkv) {
        Err(Error::Range { name: "qkv", index: 9, value, .. }) => assert_eq!(value, -70_000.0),
        other => panic!("expected a range error, got {other:?}"),
    }
    assert_eq!(tape.read(Tensor::Qkv).unwrap()[9], 0.5, "the refused write changed qkv");
    // bf16 holds f32's range.
    let bf16 = TapeOptions { storage: gdn_train::Storage::Bf16, ..TapeOptions::default() };
    let tape = Tape::new(ctx, small(), Batch::Fixed { b: 2, t: 3 }, bf16).unwrap();
    tape.write(Tensor::Qkv, &qkv).expect("bf16 holds 70 000");
}
