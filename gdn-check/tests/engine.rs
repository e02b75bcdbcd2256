//! An engine drives the layer the way it drives its own kernels: on its own device and queue
//! (`Context::from_wgpu`), with every tensor sub-allocated from one buffer of its own
//! (`Tape::with_caller_buffers`: aligned ranges, a gap between them), writing the inputs with its
//! own queue and recording forward and backward into its own encoder. Every output and gradient
//! read from the engine's buffer matches gdn-ref at the spec's bars, the gaps are untouched, and
//! ranges that cannot hold a tensor are typed errors. Runs on whatever adapter `Context::new` finds
//! (lavapipe in CI) and fails when there is none.

use gdn_check::Case;
use gdn_check::engine_arena::Arena;
use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, Layer, LayerConfig, Role, Tensor};
use gdn_train::{CallerBuffer, Error, Family, Precision, Storage, Tape, TapeOptions};

fn case(family: Family) -> Case {
    Case {
        config: LayerConfig::new(1, 2, 16, 16, 4).unwrap(),
        batch: Batch::Packed { cu_seqlens: vec![0, 5, 40] },
        h0: true,
        dht: true,
        regime: Regime::Typical,
        family,
        precision: Precision::F32,
        storage: Storage::F32,
        seed: 5,
    }
}

#[test]
fn an_engine_s_own_device_and_sub_allocated_buffers_match_the_reference() {
    let (ctx, device, queue) = gdn_check::engine_device(|adapter| adapter);
    for family in Family::ALL {
        let case = case(family);
        let options =
            TapeOptions { initial_state: true, final_state_grad: true, family: Some(family), ..TapeOptions::default() };
        // A plain tape tells the engine how long each tensor is.
        let sizes = Tape::new(&ctx, case.config, case.batch.clone(), options).unwrap();
        let lens: Vec<_> = Tensor::ALL.into_iter().filter(|&t| sizes.len(t) > 0).map(|t| (t, sizes.len(t))).collect();
        let arena = Arena::new(&device, &queue, &lens);
        let own_bytes = sizes.device_bytes();
        drop(sizes);
        let tape =
            Tape::with_caller_buffers(&ctx, case.config, case.batch.clone(), options, &arena.caller_buffers()).unwrap();
        // The tape allocates none of the caller's tensors (only copies of those a dispatch writes
        // beside a tensor of the same buffer that it reads, as norm_forward writes out beside z).
        let arena_bytes: u64 = arena.places.iter().map(|&(_, _, words)| 4 * words as u64).sum();
        let saved = own_bytes.saturating_sub(tape.device_bytes());
        assert!(saved >= arena_bytes / 2, "{saved} bytes fewer than a tape of its own, of {arena_bytes} in the arena");

        // The engine fills its arena itself (the sentinel everywhere, then the drawn inputs).
        let draw = case.draw();
        for &(tensor, offset, _) in &arena.places {
            if !tensor.caller_written() {
                assert!(matches!(tensor.role(), Role::Output | Role::Gradient), "{tensor:?} is written by the layer");
                continue;
            }
            let values = draw.caller_values(tensor);
            queue.write_buffer(&arena.buffer, offset, bytemuck::cast_slice(&values));
        }
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("engine step") });
        tape.encode_forward(&mut encoder);
        tape.encode_backward(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let got = arena.read(&device, &queue);

        let layer = Layer::new(case.config, draw.params.clone()).unwrap();
        let (want, grads) = (layer.forward(&draw.inputs).unwrap(), layer.backward(&draw.inputs, &draw.grads).unwrap());
        for e in case.expectations(&draw, &want, &grads) {
            let error = relative_error_f32(&arena.values(&got, e.tensor), &e.values);
            let bar = e.bar.unwrap() * e.cancellation;
            println!("{family:?} {:<9} {error:.2e} (bar {bar:.1e})", e.tensor.name());
            assert!(error <= bar, "{family:?}: {} at {error:.2e}, over its bar {bar:.1e}", e.tensor.name());
        }
        // Nothing outside the tensors' ranges was written.
        assert_eq!(arena.touched_outside(&got), 0, "{family:?}: words outside every tensor changed");
    }
}

#[test]
fn ranges_that_cannot_hold_a_tensor_are_typed_errors() {
    let (ctx, device, _) = gdn_check::engine_device(|adapter| adapter);
    let case = case(Family::chunked());
    let options = TapeOptions { family: Some(case.family), ..TapeOptions::default() };
    let make = |usage, size| {
        device.create_buffer(&wgpu::BufferDescriptor { label: None, size, usage, mapped_at_creation: false })
    };
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let align = u64::from(device.limits().min_storage_buffer_offset_alignment);
    let refused =
        |given: CallerBuffer| match Tape::with_caller_buffers(&ctx, case.config, case.batch.clone(), options, &[given])
        {
            Err(e) => e,
            Ok(_) => panic!("accepted"),
        };
    let big = make(usage, 1 << 20);
    let misaligned = refused(CallerBuffer { tensor: Tensor::Qkv, buffer: big.clone(), offset: align / 2 });
    assert!(matches!(misaligned, Error::Placement { name: "qkv", .. }), "{misaligned}");
    assert!(misaligned.to_string().contains("min_storage_buffer_offset_alignment"), "{misaligned}");
    let short = refused(CallerBuffer { tensor: Tensor::Out, buffer: make(usage, 256), offset: 0 });
    assert!(matches!(short, Error::Placement { name: "out", .. }) && short.to_string().contains("bytes"), "{short}");
    let no_storage = make(wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST, 1 << 20);
    let usages = refused(CallerBuffer { tensor: Tensor::Z, buffer: no_storage, offset: 0 });
    assert!(matches!(usages, Error::Placement { name: "z", .. }) && usages.to_string().contains("STORAGE"), "{usages}");
    let absent = refused(CallerBuffer { tensor: Tensor::H0, buffer: big.clone(), offset: 0 });
    assert!(matches!(absent, Error::Presence { name: "h0", .. }), "{absent}");
    let twice = [
        CallerBuffer { tensor: Tensor::A, buffer: big.clone(), offset: 0 },
        CallerBuffer { tensor: Tensor::A, buffer: big, offset: align },
    ];
    let twice =
        Tape::with_caller_buffers(&ctx, case.config, case.batch.clone(), options, &twice).err().expect("refused");
    assert!(matches!(twice, Error::Placement { name: "a", .. }), "{twice}");
}

#[test]
fn buffers_of_another_device_are_typed_errors() {
    let (ctx, _, _) = gdn_check::engine_device(|adapter| adapter);
    let case = case(Family::chunked());
    let options = TapeOptions { family: Some(case.family), ..TapeOptions::default() };
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let buffer_of = |device: &wgpu::Device| {
        device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 1 << 20, usage, mapped_at_creation: false })
    };
    let refused = |buffer: wgpu::Buffer| {
        let given = [CallerBuffer { tensor: Tensor::Qkv, buffer, offset: 0 }];
        Tape::with_caller_buffers(&ctx, case.config, case.batch.clone(), options, &given).err().expect("refused")
    };
    // Another device of the same adapter and instance, as an engine with two devices has.
    let adapter = ctx.adapter_info().name.clone();
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let same_adapter = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY))
        .into_iter()
        .find(|a| a.get_info().name == adapter)
        .expect("the adapter of the context");
    let (first, queue) = pollster::block_on(same_adapter.request_device(&wgpu::DeviceDescriptor::default())).unwrap();
    let (second, _) = pollster::block_on(same_adapter.request_device(&wgpu::DeviceDescriptor::default())).unwrap();
    let first_ctx = gdn_train::Context::from_wgpu(&same_adapter, first, queue, gdn_train::BoundsChecks::On);
    let given = [CallerBuffer { tensor: Tensor::Qkv, buffer: buffer_of(&second), offset: 0 }];
    let sibling = Tape::with_caller_buffers(&first_ctx, case.config, case.batch.clone(), options, &given)
        .err()
        .expect("a buffer of the sibling device is refused");
    assert!(matches!(sibling, Error::Placement { name: "qkv", .. }), "{sibling}");
    assert!(sibling.to_string().contains("doesn't match"), "{sibling}");
    // A device of another wgpu instance: its buffer's index is not this instance's.
    let (_, stranger, _) = gdn_check::engine_device(|adapter| adapter);
    let foreign = refused(buffer_of(&stranger));
    assert!(matches!(foreign, Error::Placement { name: "qkv", .. }), "{foreign}");
    // The context still serves tapes of its own after both refusals.
    Tape::new(&ctx, case.config, case.batch.clone(), options).expect("a tape of its own");
}
