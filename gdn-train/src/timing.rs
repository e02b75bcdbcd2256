//! Device time of a forward or backward: GPU timestamps around the compute pass where the device
//! has them, else the wall time of a submission and a wait; and per kernel, each in a pass of its
//! own or each one's share of the one pass.

use crate::plan::Bound;
use crate::progress::Progress;
use crate::timestamps::Timestamps;
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
    /// Runs every kernel of `pass` in a compute pass of its own and returns each one's device
    /// time, in dispatch order (the parameter sums appear as the kernels that hold them: their
    /// partials' and totals' own, or those that share the conv's input gradient's dispatch):
    /// GPU timestamps around each pass, or on a device without them the wall time of each kernel
    /// submitted alone and waited for (which includes a submission's overhead).
    pub fn profile(&self, pass: Pass) -> Result<(Vec<(&'static str, Duration)>, Clock)> {
        let mut progress = self.lock();
        let (ctx, plan) = (self.context(), self.plan(&mut progress, pass)?);
        progress.ran(pass);
        let Ok(timestamps) = Timestamps::new(ctx, plan.len()) else {
            ctx.wait()?;
            let kernels = (0..plan.len())
                .map(|n| {
                    let start = Instant::now();
                    let mut encoder =
                        ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("profile") });
                    let name = plan.encode_one(&mut encoder, n);
                    ctx.queue().submit([encoder.finish()]);
                    ctx.wait()?;
                    Ok((name, start.elapsed()))
                })
                .collect::<Result<_>>()?;
            return Ok((kernels, Clock::WallClock));
        };
        let mut encoder =
            ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("profile") });
        let names = plan.encode_each(&mut encoder, &timestamps);
        timestamps.resolve(&mut encoder);
        ctx.queue().submit([encoder.finish()]);
        Ok((names.into_iter().zip(timestamps.read(ctx)?).collect(), Clock::GpuTimestamps))
    }

    /// Runs every kernel of `pass` in one compute pass, as [`Tape::time`] does, with GPU timestamps
    /// written around each dispatch, and returns each one's share of that pass in dispatch order:
    /// from the end of the dispatch before (the pass's start for the first) to its own end, so the
    /// barrier before it, its launch and its drain count as they do in the pass [`Tape::time`]
    /// measures (their sum is about that time), where [`Tape::profile`]'s passes of their own add a
    /// pass's overhead to each kernel. [`crate::Error::Device`] on a device without
    /// `TIMESTAMP_QUERY_INSIDE_PASSES`.
    pub fn profile_in_pass(&self, pass: Pass) -> Result<Vec<(&'static str, Duration)>> {
        let mut progress = self.lock();
        let (ctx, plan) = (self.context(), self.plan(&mut progress, pass)?);
        if !Timestamps::inside_passes(ctx) {
            return Err(Error::Device {
                during: "profiling in one pass".into(),
                message: "the device writes no timestamps inside a compute pass (TIMESTAMP_QUERY_INSIDE_PASSES)".into(),
            });
        }
        let timestamps = Timestamps::new(ctx, plan.len())?;
        progress.ran(pass);
        let mut encoder =
            ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("profile in one pass") });
        let names = plan.encode_marked(&mut encoder, &timestamps);
        timestamps.resolve(&mut encoder);
        ctx.queue().submit([encoder.finish()]);
        Ok(names.into_iter().zip(timestamps.read(ctx)?).collect())
    }

    /// Runs `pass` once on the tape's current contents and returns its device time: GPU timestamps
    /// around its compute pass, or wall time around submit and wait on a device without them.
    pub fn time(&self, pass: Pass) -> Result<(Duration, Clock)> {
        let mut progress = self.lock();
        let (ctx, plan) = (self.context(), self.plan(&mut progress, pass)?);
        progress.ran(pass);
        let mut encoder = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("timed") });
        let Ok(timestamps) = Timestamps::new(ctx, 1) else {
            ctx.wait()?;
            let start = Instant::now();
            plan.encode(&mut encoder, "timed", None);
            ctx.queue().submit([encoder.finish()]);
            ctx.wait()?;
            return Ok((start.elapsed(), Clock::WallClock));
        };
        plan.encode(&mut encoder, "timed", Some(timestamps.pass_writes(0)));
        timestamps.resolve(&mut encoder);
        ctx.queue().submit([encoder.finish()]);
        Ok((timestamps.read(ctx)?[0], Clock::GpuTimestamps))
    }

    /// The plan of `pass`; a backward before any forward is [`crate::Error::Order`].
    fn plan(&self, progress: &mut Progress, pass: Pass) -> Result<&Bound> {
        progress.check_pass(pass, true, &|| self.context().wait())?;
        match pass {
            Pass::Forward => Ok(self.forward_plan()),
            Pass::Backward => self.backward_plan(),
        }
    }
}
