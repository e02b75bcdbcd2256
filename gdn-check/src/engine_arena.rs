//! An engine's arena, for the device tests of caller buffers: every tensor of a list sub-allocated
//! from one buffer of the engine's own at aligned offsets, a gap before each, the whole filled with
//! a sentinel; read back whole, with a count of the words outside every tensor that changed.

use gdn_train::{CallerBuffer, Tensor};

/// Bytes left between two tensors (and after the last), holding the sentinel.
pub const GAP: u64 = 256;
/// What the arena holds where no tensor lives; nothing may overwrite it.
pub const SENTINEL: f32 = 12345.0;

/// The arena: its buffer and each tensor's (offset in bytes, words).
pub struct Arena {
    /// The engine's buffer (`STORAGE | COPY_SRC | COPY_DST`).
    pub buffer: wgpu::Buffer,
    /// Each tensor's offset in bytes and length in words, in the order given.
    pub places: Vec<(Tensor, u64, usize)>,
}

impl Arena {
    /// `lens` (tensor, words) one after the other at offsets aligned to the device's
    /// `min_storage_buffer_offset_alignment`, a [`GAP`] before each; filled with [`SENTINEL`].
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, lens: &[(Tensor, usize)]) -> Self {
        let align = u64::from(device.limits().min_storage_buffer_offset_alignment);
        let mut at = 0u64;
        let mut places = Vec::new();
        for &(tensor, words) in lens {
            at = (at + GAP).next_multiple_of(align);
            places.push((tensor, at, words));
            at += 4 * words as u64;
        }
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("engine arena"),
            size: (at + GAP).next_multiple_of(4),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        queue.write_buffer(&buffer, 0, bytemuck::cast_slice(&vec![SENTINEL; (buffer.size() / 4) as usize]));
        Self { buffer, places }
    }

    /// Every tensor as a caller buffer of the arena.
    pub fn caller_buffers(&self) -> Vec<CallerBuffer> {
        self.places
            .iter()
            .map(|&(tensor, offset, _)| CallerBuffer { tensor, buffer: self.buffer.clone(), offset })
            .collect()
    }

    /// Where `tensor` lives: (offset in bytes, words). Panics for one the arena lacks.
    pub fn place(&self, tensor: Tensor) -> (u64, usize) {
        let &(_, offset, words) = self.places.iter().find(|p| p.0 == tensor).expect("in the arena");
        (offset, words)
    }

    /// The whole arena, read back after the queue's work.
    pub fn read(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Vec<f32> {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("engine read-back"),
            size: self.buffer.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(&self.buffer, 0, &staging, 0, self.buffer.size());
        queue.submit([encoder.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
        device.poll(wgpu::PollType::wait_indefinitely()).expect("the queue finishes");
        let view = staging.slice(..).get_mapped_range().expect("mapped");
        bytemuck::pod_collect_to_vec::<u8, f32>(&view)
    }

    /// `tensor`'s words in `read` (what [`Arena::read`] returned), as f64.
    pub fn values(&self, read: &[f32], tensor: Tensor) -> Vec<f64> {
        let (offset, words) = self.place(tensor);
        read[(offset / 4) as usize..][..words].iter().map(|&v| f64::from(v)).collect()
    }

    /// Words of `read` outside every tensor that no longer hold the sentinel.
    pub fn touched_outside(&self, read: &[f32]) -> usize {
        let mut inside = vec![false; read.len()];
        for &(_, offset, words) in &self.places {
            inside[(offset / 4) as usize..][..words].iter_mut().for_each(|i| *i = true);
        }
        read.iter().zip(&inside).filter(|&(&v, &inside)| !inside && v != SENTINEL).count()
    }
}
