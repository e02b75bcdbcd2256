//! Where each of a tape's buffers lives: a buffer the tape allocated, or a range of a buffer the
//! caller owns ([`CallerBuffer`]: an engine's own tensor, often sub-allocated from one large
//! buffer), with the checks on the caller's ranges (alignment, size, usages). wgpu refuses one
//! buffer bound both read-only and read-write in one dispatch; where a caller's buffers would make a
//! stage do that, the tensors the stage writes are computed into buffers of the tape's own and
//! copied into the caller's ranges after the pass ([`conflicts`]).

use crate::{Context, Error, Result, Tensor};
use gdn_wgsl::plan::{BufferId, Stage};
use std::collections::HashMap;

/// A tensor of the layer that lives in the caller's buffer, from `offset` bytes on: the tape binds
/// it there instead of allocating its own, and the host calls (`write`, `read`, `run_*`) read and
/// write it there. The range must be aligned to the device's `min_storage_buffer_offset_alignment`
/// (256 bytes on most) and long enough for the tensor ([`crate::Tape::len`] words of 4 bytes),
/// and the buffer must have the usages `STORAGE | COPY_SRC | COPY_DST`.
#[derive(Debug, Clone)]
pub struct CallerBuffer {
    /// The tensor.
    pub tensor: Tensor,
    /// The caller's buffer.
    pub buffer: wgpu::Buffer,
    /// Where in it the tensor starts, in bytes.
    pub offset: u64,
}

/// One buffer of a tape: where it lives and how many 4-byte words it holds.
pub(crate) struct Placed {
    pub buffer: wgpu::Buffer,
    pub offset: u64,
    pub words: usize,
    /// Whether the caller owns the buffer.
    pub caller: bool,
}

impl Placed {
    /// A buffer of the tape's own.
    pub fn owned(buffer: wgpu::Buffer, words: usize) -> Self {
        Self { buffer, offset: 0, words, caller: false }
    }

    /// What a bind group entry binds: the whole of an owned buffer (at least one word), the
    /// tensor's range of a caller's.
    pub fn binding(&self) -> wgpu::BindingResource<'_> {
        if !self.caller {
            return self.buffer.as_entire_binding();
        }
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.buffer,
            offset: self.offset,
            size: wgpu::BufferSize::new(4 * self.words as u64),
        })
    }
}

/// Checks a caller's range for `words` words of `given.tensor`.
pub(crate) fn check(ctx: &Context, given: &CallerBuffer, words: usize) -> Result<Placed> {
    let name = given.tensor.name();
    if words == 0 {
        return Err(Error::Presence {
            name,
            reason: "given as a caller buffer, but the tape has no room for it (see TapeOptions)".into(),
        });
    }
    let alignment = u64::from(ctx.device().limits().min_storage_buffer_offset_alignment);
    if !given.offset.is_multiple_of(alignment) {
        return Err(Error::Placement {
            name,
            reason: format!(
                "offset {} is not a multiple of the device's min_storage_buffer_offset_alignment, {alignment}",
                given.offset
            ),
        });
    }
    let bytes = 4 * words as u64;
    let end = given.offset.saturating_add(bytes);
    if end > given.buffer.size() {
        return Err(Error::Placement {
            name,
            reason: format!(
                "needs {bytes} bytes from offset {}, but the buffer holds {} bytes",
                given.offset,
                given.buffer.size()
            ),
        });
    }
    let needed = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    if !given.buffer.usage().contains(needed) {
        return Err(Error::Placement {
            name,
            reason: format!("the buffer's usages {:?} lack some of {needed:?}", given.buffer.usage()),
        });
    }
    check_device(ctx, given)?;
    Ok(Placed { buffer: given.buffer.clone(), offset: given.offset, words, caller: true })
}

/// Refuses a buffer of another device: binds its range's first word in a bind group of the tape's device, where
/// wgpu would otherwise fail later, at the tape's own bind groups. A buffer of another device of the
/// same wgpu instance is a validation error, caught by an error scope. One of another instance is
/// looked up by its index in this instance's registry: wgpu panics where no buffer has that index
/// (caught here), and binds this instance's buffer of that index where one has, which no check can
/// see (the README asks for buffers of the device the Context was made from).
fn check_device(ctx: &Context, given: &CallerBuffer) -> Result<()> {
    let device = ctx.device();
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("caller buffer probe"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        }],
    });
    let probe = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("caller buffer probe"),
            layout: &layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &given.buffer,
                    offset: given.offset,
                    // its first word: a windowed tape's tensor may pass the binding limit
                    size: wgpu::BufferSize::new(4),
                }),
            }],
        })
    }));
    let refused = |why: String| Error::Placement {
        name: given.tensor.name(),
        reason: format!("the buffer cannot be bound on the tape's device (is it another device's?): {why}"),
    };
    let error = pollster::block_on(scope.pop());
    match (probe, error) {
        (Err(panic), _) => Err(refused(panic_text(&panic))),
        (Ok(_), Some(e)) => Err(refused(one_line(&e))),
        (Ok(_), None) => Ok(()),
    }
}

/// A wgpu error's text (its causes on lines of their own) on one line.
fn one_line(e: &wgpu::Error) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The message of a caught panic.
fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic.downcast_ref::<String>().map(String::as_str).or_else(|| panic.downcast_ref::<&str>().copied());
    text.unwrap_or("wgpu panicked").to_string()
}

/// The tensors that must not be computed in place: those a stage writes into a caller's buffer that
/// the same stage also binds read-only (through another tensor in the same buffer). Each is
/// computed into a buffer of the tape's own and copied to the caller's range after its pass.
pub(crate) fn conflicts<'a>(
    stages: impl Iterator<Item = &'a Stage>,
    placed: &HashMap<BufferId, Placed>,
) -> Vec<Tensor> {
    let mut staged = Vec::new();
    for stage in stages {
        let caller_bindings = stage.bindings.iter().zip(stage.kernel.bindings()).filter_map(|(id, binding)| {
            let place = placed.get(id).filter(|p| p.caller)?;
            Some((*id, &place.buffer, binding.kind.writes()))
        });
        let caller_bindings: Vec<_> = caller_bindings.collect();
        for &(id, buffer, writes) in &caller_bindings {
            let read_beside = caller_bindings.iter().any(|&(other, b, w)| other != id && b == buffer && !w);
            if let (true, true, BufferId::Tensor(tensor)) = (writes, read_beside, id)
                && !staged.contains(&tensor)
            {
                staged.push(tensor);
            }
        }
    }
    staged
}
