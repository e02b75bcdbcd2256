//! The timed routines handed to criterion's `iter_custom`: device time of the whole layer's
//! forward, backward or both, and of one kernel (every dispatch of it in a pass, each dispatch in
//! a compute pass of its own), through [`Tape::time`] and [`Tape::profile`]: GPU timestamps, or
//! wall time around submit and a device poll where the adapter has no timestamp queries.

use gdn_train::{Clock, Pass, Tape};
use std::time::Duration;

/// What one bench times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The whole forward pass.
    Forward,
    /// The whole backward pass.
    Backward,
    /// Forward then backward: one training step of the layer.
    Step,
    /// Every dispatch of one kernel of a pass.
    Kernel(Pass, &'static str),
}

impl Target {
    /// Its bench id below the family and shape: `layer/forward`, `fwd/conv_forward`, ….
    pub fn id(self) -> (&'static str, &'static str) {
        match self {
            Target::Forward => ("layer", "forward"),
            Target::Backward => ("layer", "backward"),
            Target::Step => ("layer", "step"),
            Target::Kernel(Pass::Forward, name) => ("fwd", name),
            Target::Kernel(Pass::Backward, name) => ("bwd", name),
        }
    }
}

/// What a trial run of a tape found: how it is timed, and the kernels of each pass.
pub struct Probe {
    /// The clock of the whole-pass times.
    pub layer_clock: Clock,
    /// The clock of the per-kernel times.
    pub kernel_clock: Clock,
    /// Each pass's kernels in order of first dispatch, with their number of dispatches.
    pub kernels: Vec<(Pass, &'static str, usize)>,
}

/// Runs forward, backward and both profiles once; an error names what failed.
pub fn probe(tape: &Tape) -> Result<Probe, String> {
    let (_, layer_clock) = tape.time(Pass::Forward).map_err(|e| format!("timing the forward: {e}"))?;
    tape.time(Pass::Backward).map_err(|e| format!("timing the backward: {e}"))?;
    let mut kernels: Vec<(Pass, &'static str, usize)> = Vec::new();
    let mut kernel_clock = layer_clock;
    for pass in [Pass::Forward, Pass::Backward] {
        let (profile, clock) = tape.profile(pass).map_err(|e| format!("profiling the {pass:?} pass: {e}"))?;
        kernel_clock = clock;
        for (name, _) in profile {
            match kernels.iter_mut().find(|(p, n, _)| *p == pass && *n == name) {
                Some((_, _, count)) => *count += 1,
                None => kernels.push((pass, name, 1)),
            }
        }
    }
    Ok(Probe { layer_clock, kernel_clock, kernels })
}

/// The summed device time of `iters` runs of `target`. A device failure here (after the probe
/// succeeded) is a lost device: it panics with what failed, which ends the bench run.
pub fn run(tape: &Tape, target: Target, iters: u64) -> Duration {
    let pass = |pass: Pass| match tape.time(pass) {
        Ok((t, _)) => t,
        Err(e) => panic!("timing the {pass:?} pass failed: {e}"),
    };
    (0..iters)
        .map(|_| match target {
            Target::Forward => pass(Pass::Forward),
            Target::Backward => pass(Pass::Backward),
            Target::Step => pass(Pass::Forward) + pass(Pass::Backward),
            Target::Kernel(which, name) => match tape.profile(which) {
                Ok((kernels, _)) => kernels.iter().filter(|(n, _)| *n == name).map(|(_, t)| *t).sum(),
                Err(e) => panic!("profiling the {which:?} pass failed: {e}"),
            },
        })
        .sum()
}
