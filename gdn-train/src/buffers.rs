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

/// Bytes read back at a time: the staging a read-back needs stays this small however large the
/// tensor, so that a read-back still fits where the tape has used up device memory.
const READ_BACK_BYTES: u64 = 64 << 20;

/// Copies `len` f32 of `buffer` from element `first` back to the host, waiting for the queue, in
/// pieces of at most [`READ_BACK_BYTES`] through one staging buffer. A staging buffer that cannot be
/// allocated is [`Error::OutOfMemory`]; a copy or mapping wgpu refuses is [`Error::Device`], where
/// its default handler would panic.
pub(crate) fn read_f32_at(ctx: &Context, buffer: &wgpu::Buffer, first: usize, len: usize) -> Result<Vec<f32>> {
    let bytes = len as u64 * WORD;
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
    let staging = allocate(ctx, "read-back", bytes.min(READ_BACK_BYTES), usage)?;
    let failed = |message: String| Error::Device { during: "reading a buffer back".into(), message };
    let mut values = Vec::with_capacity(len);
    let mut done = 0;
    while done < bytes {
        let piece = (bytes - done).min(READ_BACK_BYTES);
        let device = ctx.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("read-back") });
        encoder.copy_buffer_to_buffer(buffer, first as u64 * WORD + done, &staging, 0, piece);
        ctx.queue().submit([encoder.finish()]);
        let (sender, receiver) = std::sync::mpsc::channel();
        staging.slice(..piece).map_async(wgpu::MapMode::Read, move |r| {
            let _ = sender.send(r);
        });
        let refused = pollster::block_on(scope.pop());
        ctx.wait()?;
        if let Some(e) = refused {
            return Err(failed(e.to_string()));
        }
        receiver.recv().map_err(|e| failed(e.to_string()))?.map_err(|e| failed(e.to_string()))?;
        {
            let view = staging.slice(..piece).get_mapped_range().map_err(|e| failed(e.to_string()))?;
            values.extend(bytemuck::pod_collect_to_vec::<u8, f32>(&view));
        }
        staging.unmap();
        done += piece;
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read-back of more than one staging piece, from an offset, returns every word in order.
    /// Needs a device (lavapipe in CI) and fails without one.
    #[test]
    fn a_read_back_larger_than_its_staging_comes_back_whole_in_pieces() {
        let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
        let words = (READ_BACK_BYTES / WORD) as usize + 5;
        let buffer = storage(&ctx, "pieces", words).unwrap();
        let values: Vec<f32> = (0..words).map(|i| i as f32).collect();
        write_bytes(&ctx, "pieces", &buffer, 0, bytemuck::cast_slice(&values)).unwrap();
        let got = read_f32_at(&ctx, &buffer, 3, words - 3).unwrap();
        assert_eq!(got.len(), words - 3);
        assert!(got.iter().zip(&values[3..]).all(|(a, b)| a == b), "a word came back wrong");
    }
}
