//! An engine drives the layer the way it drives its own kernels: on its own device and queue
//! (`Context::from_wgpu`), with every tensor sub-allocated from one buffer of its own
//! (`Tape::with_caller_buffers`: aligned ranges, a gap between them), writing the inputs with its
//! own queue and recording forward and backward into its own encoder. Every output and gradient
//! read from the engine's buffer matches gdn-ref at the spec's bars, the gaps are untouched, and
//! ranges that cannot hold a tensor are typed errors. Runs on whatever adapter `Context::new` finds
//! (lavapipe in CI) and fails when there is none.

use gdn_check::Case;
use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, Layer, LayerConfig, Role, Tensor};
use gdn_train::{CallerBuffer, Error, Family, Precision, Storage, Tape, TapeOptions};

/// Bytes the engine leaves between two tensors, filled with a sentinel the layer must not touch.
const GAP: u64 = 256;
const SENTINEL: f32 = 12345.0;

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

/// The engine's arena: every tensor the tape has, one after the other at aligned offsets with a
/// gap before each; returns the buffer and each tensor's (offset, words).
fn arena(device: &wgpu::Device, tape: &Tape, align: u64) -> (wgpu::Buffer, Vec<(Tensor, u64, usize)>) {
    let mut at = 0u64;
    let mut places = Vec::new();
    for tensor in Tensor::ALL.into_iter().filter(|&t| tape.len(t) > 0) {
        at = (at + GAP).next_multiple_of(align);
        places.push((tensor, at, tape.len(tensor)));
        at += 4 * tape.len(tensor) as u64;
    }
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("engine arena"),
        size: (at + GAP).next_multiple_of(4),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    (buffer, places)
}

fn read_all(device: &wgpu::Device, queue: &wgpu::Queue, buffer: &wgpu::Buffer) -> Vec<f32> {
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("engine read-back"),
        size: buffer.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, buffer.size());
    queue.submit([encoder.finish()]);
    staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    device.poll(wgpu::PollType::wait_indefinitely()).expect("the queue finishes");
    let view = staging.slice(..).get_mapped_range().expect("mapped");
    bytemuck::pod_collect_to_vec::<u8, f32>(&view)
}

#[test]
fn an_engine_s_own_device_and_sub_allocated_buffers_match_the_reference() {
    let (ctx, device, queue) = gdn_check::engine_device(|adapter| adapter);
    let align = u64::from(device.limits().min_storage_buffer_offset_alignment);
    for family in Family::ALL {
        let case = case(family);
        let options =
            TapeOptions { initial_state: true, final_state_grad: true, family: Some(family), ..TapeOptions::default() };
        // A plain tape tells the engine how long each tensor is.
        let sizes = Tape::new(&ctx, case.config, case.batch.clone(), options).unwrap();
        let (buffer, places) = arena(&device, &sizes, align);
        let own_bytes = sizes.device_bytes();
        drop(sizes);
        let caller: Vec<CallerBuffer> =
            places.iter().map(|&(tensor, offset, _)| CallerBuffer { tensor, buffer: buffer.clone(), offset }).collect();
        let tape = Tape::with_caller_buffers(&ctx, case.config, case.batch.clone(), options, &caller).unwrap();
        // The tape allocates none of the caller's tensors (only copies of those a dispatch writes
        // beside a tensor of the same buffer that it reads, as norm_forward writes out beside z).
        let arena_bytes: u64 = places.iter().map(|&(_, _, words)| 4 * words as u64).sum();
        let saved = own_bytes.saturating_sub(tape.device_bytes());
        assert!(saved >= arena_bytes / 2, "{saved} bytes fewer than a tape of its own, of {arena_bytes} in the arena");

        // The engine fills its arena itself: the sentinel everywhere, then the drawn inputs.
        let draw = case.draw();
        queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&vec![SENTINEL; (buffer.size() / 4) as usize]));
        for &(tensor, offset, _) in &places {
            if !tensor.caller_written() {
                assert!(matches!(tensor.role(), Role::Output | Role::Gradient), "{tensor:?} is written by the layer");
                continue;
            }
            let values = draw.caller_values(tensor);
            queue.write_buffer(&buffer, offset, bytemuck::cast_slice(&values));
        }
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("engine step") });
        tape.encode_forward(&mut encoder);
        tape.encode_backward(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let got = read_all(&device, &queue, &buffer);

        let layer = Layer::new(case.config, draw.params.clone()).unwrap();
        let (want, grads) = (layer.forward(&draw.inputs).unwrap(), layer.backward(&draw.inputs, &draw.grads).unwrap());
        for e in case.expectations(&draw, &want, &grads) {
            let &(_, offset, words) = places.iter().find(|p| p.0 == e.tensor).expect("in the arena");
            let first = (offset / 4) as usize;
            let values: Vec<f64> = got[first..first + words].iter().map(|&v| f64::from(v)).collect();
            let error = relative_error_f32(&values, &e.values);
            let bar = e.bar.unwrap() * e.cancellation;
            println!("{family:?} {:<9} {error:.2e} (bar {bar:.1e})", e.tensor.name());
            assert!(error <= bar, "{family:?}: {} at {error:.2e}, over its bar {bar:.1e}", e.tensor.name());
        }
        // Nothing outside the tensors' ranges was written.
        let mut inside = vec![false; got.len()];
        for &(_, offset, words) in &places {
            inside[(offset / 4) as usize..][..words].iter_mut().for_each(|i| *i = true);
        }
        let touched = got.iter().zip(&inside).filter(|&(&v, &inside)| !inside && v != SENTINEL).count();
        assert_eq!(touched, 0, "{family:?}: words outside every tensor changed");
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
