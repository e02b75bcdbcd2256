//! Device time of a forward or backward: GPU timestamps around the compute pass where the device
//! has them, else the wall time of a submission and a wait.

use crate::{Error, Result, Tape};
use std::time::{Duration, Instant};

/// Which half of the layer to time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// The forward.
    Forward,
    /// The backward.
    Backward,
}

/// How a time was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// GPU timestamps written at the start and end of the compute pass.
    GpuTimestamps,
    /// Host wall time around submit and wait (includes submission overhead).
    WallClock,
}

impl Tape {
    /// Runs every kernel of `pass` in a compute pass of its own and returns each one's GPU time,
    /// in dispatch order (the parameter sums appear as their partial and finish kernels). Needs
    /// timestamp queries.
    pub fn profile(&self, pass: Pass) -> Result<Vec<(&'static str, Duration)>> {
        let (forward, backward) = self.plans();
        if pass == Pass::Forward { forward } else { backward }.profile(self.context())
    }

    /// Runs `pass` once on the tape's current contents and returns its device time.
    pub fn time(&self, pass: Pass) -> Result<(Duration, Clock)> {
        let ctx = self.context();
        let (forward, backward) = self.plans();
        let plan = if pass == Pass::Forward { forward } else { backward };
        let mut encoder = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("timed") });
        if !ctx.device().features().contains(wgpu::Features::TIMESTAMP_QUERY) {
            ctx.wait()?;
            let start = Instant::now();
            plan.encode(&mut encoder, "timed", None);
            ctx.queue().submit([encoder.finish()]);
            ctx.wait()?;
            return Ok((start.elapsed(), Clock::WallClock));
        }
        let queries = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("timed"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolved = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamps"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        plan.encode(
            &mut encoder,
            "timed",
            Some(wgpu::ComputePassTimestampWrites {
                query_set: &queries,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        );
        encoder.resolve_query_set(&queries, 0..2, &resolved, 0);
        ctx.queue().submit([encoder.finish()]);
        let words = crate::buffers::read_f32(ctx, &resolved, 4)?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec::<f32, u64>(&words);
        let period = f64::from(ctx.queue().get_timestamp_period());
        let nanos = ticks[1]
            .checked_sub(ticks[0])
            .ok_or_else(|| Error::Device { during: "timing".into(), message: "timestamps out of order".into() })?;
        Ok((Duration::from_nanos((nanos as f64 * period) as u64), Clock::GpuTimestamps))
    }
}
