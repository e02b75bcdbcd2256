//! A recorded sequence of dispatches, in two steps: a [`Plan`] lists each kernel, its grid and
//! which tape buffer fills each of its bindings, before any buffer exists (so that a tape allocates
//! only what its plans bind); [`Plan::bind`] resolves the bindings once against the tape's buffers.
//! Forward and backward are each one such plan, encoded into one compute pass.

use crate::pipelines::KernelPipeline;
use crate::timestamps::Timestamps;
use crate::{Context, Error, Result};
use gdn_wgsl::{HeadDims, Kernel};
use std::collections::HashMap;
use std::sync::Arc;

/// One dispatch, not yet bound: its pipeline, its grid and the tape buffer of each binding.
struct Step {
    pipeline: Arc<KernelPipeline>,
    grid: (u32, u32),
    buffers: Vec<&'static str>,
}

/// Dispatches in order, their bindings named.
#[derive(Default)]
pub(crate) struct Plan {
    steps: Vec<Step>,
}

/// One bound dispatch.
struct Dispatch {
    pipeline: Arc<KernelPipeline>,
    bind_group: wgpu::BindGroup,
    grid: (u32, u32),
}

/// A plan bound to a tape's buffers, ready to encode.
pub(crate) struct Bound {
    dispatches: Vec<Dispatch>,
}

/// Buffers by name: a kernel's binding names, or the names `overrides` give instead.
pub(crate) type Named<'a> = HashMap<&'static str, &'a wgpu::Buffer>;

impl Plan {
    /// Appends `kernel` over `grid` workgroups; each binding takes the tape buffer of its own name,
    /// or the one `overrides` names for it (`("total", "dconv")` binds buffer dconv to the role
    /// total, for this dispatch only).
    pub fn push(
        &mut self,
        ctx: &Context,
        kernel: Kernel,
        dims: HeadDims,
        grid: (u32, u32),
        overrides: &[(&'static str, &'static str)],
    ) -> Result<()> {
        let pipeline = ctx.pipelines().get(ctx, kernel, dims)?;
        let buffers = pipeline
            .source
            .bindings
            .iter()
            .map(|binding| overrides.iter().find(|(role, _)| *role == binding.name).map_or(binding.name, |o| o.1))
            .collect();
        self.steps.push(Step { pipeline, grid, buffers });
        Ok(())
    }

    /// Every tape buffer the plan binds.
    pub fn buffer_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.steps.iter().flat_map(|step| step.buffers.iter().copied())
    }

    /// Resolves every binding in `buffers`, which must hold each of [`Plan::buffer_names`].
    pub fn bind(self, ctx: &Context, buffers: &Named) -> Bound {
        let dispatches = self
            .steps
            .into_iter()
            .map(|step| {
                let kernel = step.pipeline.source.kernel.name();
                let entries = step
                    .buffers
                    .iter()
                    .enumerate()
                    .map(|(slot, name)| {
                        let buffer = buffers.get(name).unwrap_or_else(|| {
                            panic!("the tape allocates every buffer its plans bind: {name} of {kernel}")
                        });
                        wgpu::BindGroupEntry { binding: slot as u32, resource: buffer.as_entire_binding() }
                    })
                    .collect::<Vec<_>>();
                let bind_group = ctx.device().create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(kernel),
                    layout: &step.pipeline.layout,
                    entries: &entries,
                });
                Dispatch { pipeline: step.pipeline, bind_group, grid: step.grid }
            })
            .collect();
        Bound { dispatches }
    }
}

impl Bound {
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
