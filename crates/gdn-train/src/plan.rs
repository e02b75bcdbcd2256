//! A recorded sequence of dispatches: each a pipeline, a bind group resolved once against the
//! tape's buffers, and a workgroup grid. Forward and backward are each one such plan, encoded
//! into one compute pass.

use crate::pipelines::{KernelPipeline, Variant};
use crate::timestamps::Timestamps;
use crate::{Context, Error, Result};
use gdn_wgsl::Kernel;
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
        variant: Variant,
        grid: (u32, u32),
        buffers: &Named,
        overrides: &[(&'static str, &wgpu::Buffer)],
    ) -> Result<()> {
        let pipeline = ctx.pipelines().get(ctx, kernel, variant)?;
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
            d.record(&mut pass);
        }
    }

    /// Records every dispatch into a compute pass of its own, bracketed by pair `n` of
    /// `timestamps`; returns the kernels' names in order.
    pub fn encode_each(&self, encoder: &mut wgpu::CommandEncoder, timestamps: &Timestamps) -> Vec<&'static str> {
        for (n, d) in self.dispatches.iter().enumerate() {
            let writes = Some(timestamps.pass_writes(n));
            d.record(
                &mut encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: writes }),
            );
        }
        self.dispatches.iter().map(|d| d.pipeline.source.kernel.name()).collect()
    }

    /// Records dispatch `n` alone into a compute pass of its own; returns its kernel's name.
    pub fn encode_one(&self, encoder: &mut wgpu::CommandEncoder, n: usize) -> &'static str {
        let d = &self.dispatches[n];
        d.record(&mut encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default()));
        d.pipeline.source.kernel.name()
    }

    /// Number of dispatches.
    pub fn len(&self) -> usize {
        self.dispatches.len()
    }
}

impl Dispatch {
    fn record(&self, pass: &mut wgpu::ComputePass) {
        pass.set_pipeline(&self.pipeline.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
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
