//! An engine's own device: `Context::from_wgpu` wraps a device and queue the caller created, and
//! the layer computes on it exactly what it computes on a device of its own (given the same limits
//! and the feature that picks kernels, wgpu's `SUBGROUP`); on a device that binds fewer storage
//! buffers than the fused kernels, the plan keeps their parts in dispatches of their own; on a
//! device created with wgpu's default limits, a kernel that needs more says which limit, by name.

mod common;
use common::values;
use gdn_ref::compare::relative_error_f32;
use gdn_train::{
    Batch, BoundsChecks, Context, Error, Family, Gradients, Inputs, Kernel, LayerConfig, Params, Pass, Precision, Tape,
    TapeOptions,
};

/// The adapter `Context::new` would take, and a device on it with, like ours (`like_ours`), the
/// adapter's own limits and the one feature that picks f32 kernels, wgpu's `SUBGROUP` where offered
/// (the recurrent forward's and the decode step's sums are subgroup shuffles where subgroups are
/// wide, which round differently from their portable twins); or with wgpu's defaults and no feature.
fn engine_device(like_ours: bool) -> (wgpu::Adapter, wgpu::Device, wgpu::Queue) {
    engine_device_binding(like_ours, None)
}

/// [`engine_device`], with at most `storage_buffers` storage buffers per shader stage where given.
fn engine_device_binding(like_ours: bool, storage_buffers: Option<u32>) -> (wgpu::Adapter, wgpu::Device, wgpu::Queue) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let chosen = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    let adapter = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY))
        .into_iter()
        .find(|a| a.get_info().name == chosen.adapter_info().name)
        .expect("the adapter Context::new chose");
    let mut required_limits = if like_ours { adapter.limits() } else { wgpu::Limits::default() };
    if let Some(most) = storage_buffers {
        required_limits.max_storage_buffers_per_shader_stage =
            most.min(required_limits.max_storage_buffers_per_shader_stage);
    }
    let required_features =
        if like_ours { adapter.features() & wgpu::Features::SUBGROUP } else { wgpu::Features::empty() };
    let descriptor = wgpu::DeviceDescriptor { required_limits, required_features, ..wgpu::DeviceDescriptor::default() };
    let (device, queue) =
        pollster::block_on(adapter.request_device(&descriptor)).unwrap_or_else(|e| panic!("an engine's device: {e}"));
    (adapter, device, queue)
}

fn tape(ctx: &Context, family: Family) -> gdn_train::Result<Tape> {
    let config = LayerConfig::new(1, 2, 16, 16, 4).unwrap();
    let options = TapeOptions { family: Some(family), ..TapeOptions::default() };
    Tape::new(ctx, config, Batch::Packed { cu_seqlens: vec![0, 5, 21] }, options)
}

/// Forward and backward outputs of one small packed batch on `ctx`.
fn run(ctx: &Context, family: Family) -> (Vec<f32>, Gradients) {
    run_tape(&tape(ctx, family).unwrap())
}

/// Forward and backward outputs of one small packed batch on `tape`.
fn run_tape(tape: &Tape) -> (Vec<f32>, Gradients) {
    let config = tape.config();
    let (tokens, c, v) = (tape.tokens(), config.channels(), config.value_width());
    let conv = values(c * 4, 0.3, 0.0);
    tape.write_params(&Params { a_log: &[0.5, -0.2], dt_bias: &[0.1, 0.3], norm: &[1.0; 16], conv: &conv }).unwrap();
    let (qkv, z, a, b) = (
        values(tokens * c, 1.0, 0.1),
        values(tokens * v, 1.0, 0.0),
        values(tokens * 2, 1.0, 0.0),
        values(tokens * 2, 2.0, 0.0),
    );
    let out = tape.run_forward(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: None, conv_state: None }).unwrap().out;
    (out, tape.run_backward(&values(tokens * v, 0.5, 0.0), None).unwrap())
}

#[test]
fn a_callers_device_computes_what_a_device_of_our_own_does() {
    let own = Context::new().unwrap();
    let (adapter, device, queue) = engine_device(true);
    let adopted = Context::from_wgpu(&adapter, device.clone(), queue.clone(), BoundsChecks::On);
    for family in [Family::recurrent(), Family::chunked()] {
        let (out, grads) = run(&adopted, family);
        assert!(out.iter().chain(&grads.dqkv).chain(&grads.dconv).all(|x| x.is_finite()));
        assert_eq!((out, grads), run(&own, family), "{family:?}: bitwise as on a device of our own");
    }
    // The caller's clones still work: the layer did not take the device away.
    let _still_usable = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("engine"),
        size: 16,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
}

/// The kernel names of `pass`, in dispatch order, of a tape that has run.
fn kernels(tape: &Tape, pass: Pass) -> Vec<&'static str> {
    tape.profile(pass).expect("a profile").0.into_iter().map(|(name, _)| name).collect()
}

#[test]
fn a_device_that_binds_fewer_storage_buffers_keeps_apart_the_kernels_that_bind_more() {
    // The conv's input gradient with the parameter sums' totals in one pass binds 15 storage
    // buffers, the fused conv kernels 12, as many as the conv's input gradient with the sums'
    // partials (and the recurrent backward); each limit below one of them keeps its parts apart.
    let fused = Kernel::ConvQkNormGatesProductsForward.storage_buffers();
    let (sums, totals) =
        (Kernel::ConvBackwardInputSums.storage_buffers(), Kernel::ConvBackwardInputTotals.storage_buffers());
    assert_eq!((fused, Kernel::QkNormConvBackward.storage_buffers(), sums, totals), (12, 12, 12, 15));
    let own = Context::new().unwrap();
    let joined = tape(&own, Family::recurrent()).unwrap();
    let (own_out, own_grads) = run_tape(&joined);
    if own.device().limits().max_storage_buffers_per_shader_stage >= totals {
        assert_eq!(kernels(&joined, Pass::Forward)[0], "conv_qk_norm_gates_products_forward");
        let backward = kernels(&joined, Pass::Backward);
        assert_eq!(backward[0], "norm_backward", "{backward:?}");
        assert_eq!(backward.last(), Some(&"conv_backward_input_totals"));
    }
    for limit in [14, 12, 11] {
        let (adapter, device, queue) = engine_device_binding(true, Some(limit));
        let limited = Context::from_wgpu(&adapter, device, queue, BoundsChecks::On);
        let split = tape(&limited, Family::recurrent()).unwrap();
        let (out, grads) = run_tape(&split);
        let forward = kernels(&split, Pass::Forward);
        assert_eq!(forward[0] == "conv_qk_norm_gates_products_forward", limit >= fused, "{limit}: {forward:?}");
        let backward = kernels(&split, Pass::Backward);
        assert_eq!(backward[0], "norm_backward", "{limit}: {backward:?}");
        assert_eq!(backward.contains(&"conv_backward_input_totals"), limit >= totals, "{limit}: {backward:?}");
        assert_eq!(
            backward.contains(&"conv_backward_input_sums"),
            (sums..totals).contains(&limit),
            "{limit}: {backward:?}"
        );
        assert_eq!(backward.contains(&"column_sums_partial"), limit < sums, "{limit}: {backward:?}");
        assert!(out.iter().chain(&grads.dqkv).chain(&grads.dconv).all(|x| x.is_finite()));
        // The same sums whichever kernels hold them (the parameter sums' blocks of rows cut
        // otherwise in one pass), so the devices agree to f32 rounding.
        let wide = |x: &[f32]| x.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
        let compared = [
            ("out", &out, &own_out),
            ("dqkv", &grads.dqkv, &own_grads.dqkv),
            ("dz", &grads.dz, &own_grads.dz),
            ("dconv", &grads.dconv, &own_grads.dconv),
            ("dnorm", &grads.dnorm, &own_grads.dnorm),
            ("da_log", &grads.da_log, &own_grads.da_log),
            ("ddt_bias", &grads.ddt_bias, &own_grads.ddt_bias),
        ];
        for (name, a, b) in compared {
            let error = relative_error_f32(&wide(a), &wide(b));
            println!("{name}: {limit} storage buffers against our own device's, relative error {error:.2e}");
            assert!(error < 1e-5, "{name}: {error:e}");
        }
    }
}

#[test]
fn a_device_with_default_limits_names_the_limit_a_kernel_needs_beyond_them() {
    let (adapter, device, queue) = engine_device(false);
    let ctx = Context::from_wgpu(&adapter, device, queue, BoundsChecks::On);
    // The recurrent backward for these few heads binds 11 storage buffers (12 for many heads);
    // wgpu's default is 8 per stage.
    match tape(&ctx, Family::recurrent()) {
        Err(Error::Limit { limit, needed, available, .. }) => {
            let needed_by = u64::from(Kernel::RecurrenceBackwardColumns.storage_buffers());
            assert_eq!((limit, needed, available), ("max_storage_buffers_per_shader_stage", needed_by, 8));
            assert_eq!(needed, 11);
        }
        other => panic!("expected a Limit error, got {:?}", other.map(|_| "a tape")),
    }
}

#[test]
fn tensor_cores_on_a_device_created_without_them_are_refused_by_name() {
    let (adapter, device, queue) = engine_device(true);
    let ctx = Context::from_wgpu(&adapter, device, queue, BoundsChecks::On);
    match ctx.supports(Precision::TensorCore) {
        Err(Error::Unsupported { option, reason }) => {
            assert_eq!(option, "precision tensor-core");
            assert!(reason.contains("lacks") || reason.contains("without") || reason.contains("subgroups"), "{reason}");
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
}
