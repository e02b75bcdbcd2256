//! A recorded sequence of dispatches: each a pipeline, a bind group resolved once against the
//! tape's buffers, and a workgroup grid. Forward and backward are each one such plan, encoded
//! into one compute pass.

use crate::pipelines::KernelPipeline;
use crate::{Context, Error, Result};
use gdn_wgsl::{HeadDims, Kernel};
use std::collections::HashMap;
use std::sync::Arc;

/// One dispatch.
pub(crate) struct Dispatch {
    pipeline: Arc<KernelPipeline>,
    bind_group: wgpu::BindGroup,
    grid: (u32, u32),
}

/// Dispatches in order.
#[derive(Default)]
pub(crate) struct Plan {
    dispatches: Vec<Dispatch>,
}

/// Buffers by the binding names of the kernels.
pub(crate) type Named<'a> = HashMap<&'static str, &'a wgpu::Buffer>;

impl Plan {
    /// Appends `kernel` over `grid` workgroups, its bindings resolved in `buffers` after
    /// `overrides` (which give a role a buffer for this dispatch only).
    pub fn push(
        &mut self,
        ctx: &Context,
        kernel: Kernel,
        dims: HeadDims,
        grid: (u32, u32),
        buffers: &Named,
        overrides: &[(&'static str, &wgpu::Buffer)],
    ) -> Result<()> {
        let pipeline = ctx.pipelines().get(ctx, kernel, dims)?;
        let entries = pipeline
            .source
            .bindings
            .iter()
            .enumerate()
            .map(|(slot, binding)| {
                let buffer = overrides
                    .iter()
                    .find(|(name, _)| *name == binding.name)
                    .map(|(_, b)| *b)
                    .or_else(|| buffers.get(binding.name).copied())
                    .unwrap_or_else(|| panic!("tape has no buffer for binding {} of {}", binding.name, kernel.name()));
                wgpu::BindGroupEntry { binding: slot as u32, resource: buffer.as_entire_binding() }
            })
            .collect::<Vec<_>>();
        let bind_group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name()),
            layout: &pipeline.layout,
            entries: &entries,
        });
        self.dispatches.push(Dispatch { pipeline, bind_group, grid });
        Ok(())
    }

    /// Records every dispatch into one compute pass.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        timestamps: Option<wgpu::ComputePassTimestampWrites>,
    ) {
        let mut pass = encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes: timestamps });
        for d in &self.dispatches {
            pass.set_pipeline(&d.pipeline.pipeline);
            pass.set_bind_group(0, &d.bind_group, &[]);
            pass.dispatch_workgroups(d.grid.0, d.grid.1, 1);
        }
    }
}

impl Plan {
    /// Runs every dispatch in a compute pass of its own between two GPU timestamps and returns
    /// each kernel's time, in order. Needs `TIMESTAMP_QUERY`; a diagnostic, not a fast path.
    pub fn profile(&self, ctx: &Context) -> Result<Vec<(&'static str, std::time::Duration)>> {
        if !ctx.device().features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            return Err(Error::Device {
                during: "profiling".into(),
                message: "the device has no timestamp queries".into(),
            });
        }
        let count = 2 * self.dispatches.len() as u32;
        let queries = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("profile"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let resolved = crate::buffers::storage(ctx, "profile timestamps", 2 * count as usize)?;
        let resolve = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("profile resolve"),
            size: 8 * u64::from(count),
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder =
            ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("profile") });
        for (n, d) in self.dispatches.iter().enumerate() {
            let writes = wgpu::ComputePassTimestampWrites {
                query_set: &queries,
                beginning_of_pass_write_index: Some(2 * n as u32),
                end_of_pass_write_index: Some(2 * n as u32 + 1),
            };
            let mut pass = encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: Some(writes) });
            pass.set_pipeline(&d.pipeline.pipeline);
            pass.set_bind_group(0, &d.bind_group, &[]);
            pass.dispatch_workgroups(d.grid.0, d.grid.1, 1);
        }
        encoder.resolve_query_set(&queries, 0..count, &resolve, 0);
        encoder.copy_buffer_to_buffer(&resolve, 0, &resolved, 0, 8 * u64::from(count));
        ctx.queue().submit([encoder.finish()]);
        let words = crate::buffers::read_f32(ctx, &resolved, 2 * count as usize)?;
        let ticks = bytemuck::pod_collect_to_vec::<f32, u64>(&words);
        let period = f64::from(ctx.queue().get_timestamp_period());
        Ok(self
            .dispatches
            .iter()
            .zip(ticks.chunks(2))
            .map(|(d, t)| {
                let nanos = t[1].saturating_sub(t[0]) as f64 * period;
                (d.pipeline.source.kernel.name(), std::time::Duration::from_nanos(nanos as u64))
            })
            .collect())
    }
}

/// `count` workgroups folded into (x, y) under the device's per-dimension limit; the kernels
/// recover the linear index as `x + y·num_workgroups.x` and skip the overhang.
pub(crate) fn folded(ctx: &Context, what: &str, count: usize) -> Result<(u32, u32)> {
    let max = ctx.device().limits().max_compute_workgroups_per_dimension as usize;
    let x = count.clamp(1, max);
    let y = count.div_ceil(x).max(1);
    if y > max {
        return Err(Error::Limit {
            what: format!("{what} ({count} workgroups)"),
            limit: "max_compute_workgroups_per_dimension",
            needed: y as u64,
            available: max as u64,
        });
    }
    Ok((x as u32, y as u32))
}
