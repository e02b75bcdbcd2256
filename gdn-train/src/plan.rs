//! A layer plan's stages bound to a tape's buffers: each stage's pipeline (built or reused), its
//! grid folded under the device's limit, and its bind group resolved once by typed buffer id.
//! Forward and backward are each one such list, encoded into one compute pass (followed by the
//! copies of tensors computed beside a caller's buffer into it, see `placement`).

use crate::pipelines::KernelPipeline;
use crate::placement::Placed;
use crate::timestamps::Timestamps;
use crate::{Context, Error, Result};
use gdn_wgsl::HeadDims;
use gdn_wgsl::plan::{BufferId, Stage};
use std::collections::HashMap;
use std::sync::Arc;

/// One bound dispatch.
struct Dispatch {
    pipeline: Arc<KernelPipeline>,
    bind_group: wgpu::BindGroup,
    grid: (u32, u32),
}

/// A copy after the pass: a tensor computed in a buffer of the tape's own into the caller's range.
pub(crate) struct CopyOut {
    pub from: wgpu::Buffer,
    pub to: wgpu::Buffer,
    pub offset: u64,
    pub bytes: u64,
}

/// Stages bound to a tape's buffers, ready to encode, and the copies that follow them.
pub(crate) struct Bound {
    dispatches: Vec<Dispatch>,
    copies: Vec<CopyOut>,
}

impl Bound {
    /// Binds every stage to `buffers`, which hold every buffer the stages bind (the plan lays out
    /// exactly those).
    pub fn new(
        ctx: &Context,
        dims: HeadDims,
        stages: &[Stage],
        buffers: &HashMap<BufferId, Placed>,
        copies: Vec<CopyOut>,
    ) -> Result<Self> {
        let dispatches = stages
            .iter()
            .map(|stage| {
                let pipeline = ctx.pipelines().get(ctx, stage.kernel, dims)?;
                let kernel = stage.kernel.name();
                let resources = stage
                    .bindings
                    .iter()
                    .map(|id| {
                        let placed = buffers.get(id).ok_or_else(|| Error::Device {
                            during: format!("binding {kernel}"),
                            message: format!("the plan binds {}, which it does not lay out", id.name()),
                        })?;
                        Ok(placed.binding())
                    })
                    .collect::<Result<Vec<_>>>()?;
                let bind_group = bind_group(ctx, &pipeline, resources);
                let grid = folded(ctx, kernel, stage.workgroups)?;
                Ok(Dispatch { pipeline, bind_group, grid })
            })
            .collect::<Result<_>>()?;
        Ok(Self { dispatches, copies })
    }

    /// Records every dispatch into one compute pass, then the copies into the caller's buffers.
    pub fn encode(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        label: &str,
        timestamps: Option<wgpu::ComputePassTimestampWrites>,
    ) {
        {
            let mut pass = encoder
                .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes: timestamps });
            for d in &self.dispatches {
                d.record(&mut pass);
            }
        }
        for c in &self.copies {
            encoder.copy_buffer_to_buffer(&c.from, 0, &c.to, c.offset, c.bytes);
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
        self.kernel_names()
    }

    /// Records every dispatch into one compute pass as [`Bound::encode`] does, with pair `n` of
    /// `timestamps` written just before and just after dispatch `n`; returns the kernels' names in
    /// order.
    pub fn encode_marked(&self, encoder: &mut wgpu::CommandEncoder, timestamps: &Timestamps) -> Vec<&'static str> {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        for (n, d) in self.dispatches.iter().enumerate() {
            timestamps.write_in_pass(&mut pass, n, false);
            d.record(&mut pass);
            timestamps.write_in_pass(&mut pass, n, true);
        }
        self.kernel_names()
    }

    /// The kernels' names, in dispatch order.
    fn kernel_names(&self) -> Vec<&'static str> {
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
/// A bind group of `pipeline`'s layout over `resources`, one per binding slot in order.
pub(crate) fn bind_group(
    ctx: &Context,
    pipeline: &KernelPipeline,
    resources: Vec<wgpu::BindingResource>,
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = resources
        .into_iter()
        .enumerate()
        .map(|(slot, resource)| wgpu::BindGroupEntry { binding: slot as u32, resource })
        .collect();
    ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(pipeline.source.kernel.name()),
        layout: &pipeline.layout,
        entries: &entries,
    })
}

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
