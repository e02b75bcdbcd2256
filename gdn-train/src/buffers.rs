//! Device buffers: allocation checked against the device's limits and for running out of memory,
//! uploads, and blocking read-backs.

use crate::{Context, Error, Result};

/// Bytes per element of every tensor (f32 or u32).
const WORD: u64 = 4;

/// A storage buffer of `words` 4-byte elements (at least one, as bindings may not be empty).
pub(crate) fn storage(ctx: &Context, name: &str, words: usize) -> Result<wgpu::Buffer> {
    let bytes = check_storage(ctx, name, words)?;
    allocate(
        ctx,
        name,
        bytes,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    )
}

/// The bytes of a storage buffer of `words` elements, refusing what the device or the kernels' u32
/// indices cannot hold (`words` saturated at `usize::MAX` where it overflowed).
pub(crate) fn check_storage(ctx: &Context, name: &str, words: usize) -> Result<u64> {
    let bytes = (words.max(1) as u64).saturating_mul(WORD);
    if words > u32::MAX as usize {
        let what = format!("buffer {name} (the kernels index elements with u32)");
        return Err(Error::Limit {
            what,
            limit: "u32 element index",
            needed: words as u64,
            available: u32::MAX.into(),
        });
    }
    let limits = ctx.device().limits();
    for (limit, available) in [
        ("max_storage_buffer_binding_size", limits.max_storage_buffer_binding_size),
        ("max_buffer_size", limits.max_buffer_size),
    ] {
        if bytes > available {
            return Err(Error::Limit { what: format!("buffer {name}"), limit, needed: bytes, available });
        }
    }
    Ok(bytes)
}

/// A uniform buffer holding `contents`.
pub(crate) fn uniform(ctx: &Context, name: &str, contents: &[u8]) -> Result<wgpu::Buffer> {
    let buffer =
        allocate(ctx, name, contents.len() as u64, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST)?;
    write_bytes(ctx, name, &buffer, 0, contents)?;
    Ok(buffer)
}

/// Writes `bytes` into `buffer` from `offset` through the queue. The queue copies them into a
/// staging buffer first; where that cannot be allocated, the write is [`Error::OutOfMemory`]
/// (`name` says for what) and the buffer is unchanged, where wgpu's default handler would panic.
pub(crate) fn write_bytes(ctx: &Context, name: &str, buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]) -> Result<()> {
    let scope = ctx.device().push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    ctx.queue().write_buffer(buffer, offset, bytes);
    match pollster::block_on(scope.pop()) {
        None => Ok(()),
        Some(_) => {
            Err(Error::OutOfMemory { buffer: format!("the upload staging of {name}"), bytes: bytes.len() as u64 })
        }
    }
}

fn allocate(ctx: &Context, name: &str, bytes: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
    let scope = ctx.device().push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let buffer = ctx.device().create_buffer(&wgpu::BufferDescriptor {
        label: Some(name),
        size: bytes,
        usage,
        mapped_at_creation: false,
    });
    match pollster::block_on(scope.pop()) {
        None => Ok(buffer),
        Some(_) => Err(Error::OutOfMemory { buffer: name.to_string(), bytes }),
    }
}

/// Copies the first `len` f32 of `buffer` back to the host, waiting for the queue.
pub(crate) fn read_f32(ctx: &Context, buffer: &wgpu::Buffer, len: usize) -> Result<Vec<f32>> {
    read_f32_at(ctx, buffer, 0, len)
}

/// Copies `len` f32 of `buffer` from element `first` back to the host, waiting for the queue.
pub(crate) fn read_f32_at(ctx: &Context, buffer: &wgpu::Buffer, first: usize, len: usize) -> Result<Vec<f32>> {
    let bytes = len as u64 * WORD;
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let staging = allocate(ctx, "read-back", bytes, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
    let mut encoder = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read-back") });
    encoder.copy_buffer_to_buffer(buffer, first as u64 * WORD, &staging, 0, bytes);
    ctx.queue().submit([encoder.finish()]);
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
        let _ = sender.send(r);
    });
    ctx.wait()?;
    let failed = |message: String| Error::Device { during: "reading a buffer back".into(), message };
    receiver.recv().map_err(|e| failed(e.to_string()))?.map_err(|e| failed(e.to_string()))?;
    let values = {
        let view = staging.slice(..).get_mapped_range().map_err(|e| failed(e.to_string()))?;
        bytemuck::pod_collect_to_vec::<u8, f32>(&view)
    };
    staging.unmap();
    Ok(values)
}
