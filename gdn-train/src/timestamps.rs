//! GPU timestamps in pairs: a query set whose pair `n` brackets one compute pass (or, where the
//! device writes timestamps inside passes, one dispatch of a pass), resolved and read back as
//! durations. Shared by the whole-pass timing and the per-kernel profiles.

use crate::{Context, Error, Result};
use std::time::Duration;

/// `pairs` begin/end timestamps.
pub(crate) struct Timestamps {
    queries: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    pairs: u32,
}

impl Timestamps {
    /// Room for `pairs` passes; an error when the device has no timestamp queries.
    pub fn new(ctx: &Context, pairs: usize) -> Result<Self> {
        if !ctx.device().features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Err(Error::Device {
                during: "timing".into(),
                message: "the device has no timestamp queries".into(),
            });
        }
        let pairs = pairs as u32;
        let queries = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * pairs,
        });
        let resolved = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size: 16 * u64::from(pairs),
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Ok(Self { queries, resolved, pairs })
    }

    /// The writes that make a compute pass fill pair `n`.
    pub fn pass_writes(&self, n: usize) -> wgpu::ComputePassTimestampWrites<'_> {
        let n = n as u32;
        wgpu::ComputePassTimestampWrites {
            query_set: &self.queries,
            beginning_of_pass_write_index: Some(2 * n),
            end_of_pass_write_index: Some(2 * n + 1),
        }
    }

    /// Whether `ctx`'s device writes timestamps inside a compute pass, between its dispatches
    /// (`TIMESTAMP_QUERY_INSIDE_PASSES`).
    pub fn inside_passes(ctx: &Context) -> bool {
        ctx.device().features().contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_PASSES)
    }

    /// Writes pair `n`'s first timestamp (`end` false) or its second at this point of an open pass
    /// (on a device [`Timestamps::inside_passes`]).
    pub fn write_in_pass(&self, pass: &mut wgpu::ComputePass, n: usize, end: bool) {
        pass.write_timestamp(&self.queries, 2 * n as u32 + u32::from(end));
    }

    /// Records the resolution of every pair; submit `encoder` before [`Timestamps::read`].
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.queries, 0..2 * self.pairs, &self.resolved, 0);
    }

    /// The duration of every pair, waiting for the queue.
    pub fn read(&self, ctx: &Context) -> Result<Vec<Duration>> {
        let words = crate::buffers::read_f32(ctx, &self.resolved, 4 * self.pairs as usize)?;
        let ticks = bytemuck::pod_collect_to_vec::<f32, u64>(&words);
        let period = f64::from(ctx.queue().get_timestamp_period());
        Ok(ticks.chunks(2).map(|t| Duration::from_nanos((t[1].saturating_sub(t[0]) as f64 * period) as u64)).collect())
    }
}
