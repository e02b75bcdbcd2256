//! What has run on a tape: a backward needs a forward before it, and an output or gradient read
//! before the pass that writes it would return stale zeros or NaN. [`Progress`] records the passes
//! submitted, or recorded into a caller's encoder, and refuses, with [`Error::Order`], what comes
//! too early.
//!
//! A pass recorded into a caller's encoder counts once that encoder's work is known to have been
//! submitted: its encoder carries a callback that marks it done ([`Recorded`]). Until then a
//! submitted backward, or a read, waits for the queue, and refuses if the pass is still not done
//! (its encoder was dropped, or not yet submitted): the tape's buffers would not hold its results.
//! A backward recorded into the same encoder as its forward needs nothing more: one submission
//! runs both in order.

use crate::Tensor;
use crate::{Error, Pass, Result};
use gdn_ref::Role;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A pass recorded into a caller's encoder: set once that encoder's work is done on the queue.
#[derive(Debug, Clone, Default)]
pub(crate) struct Recorded(Arc<AtomicBool>);

impl Recorded {
    /// Marks the pass done when `encoder`'s work is done.
    pub fn watch(encoder: &wgpu::CommandEncoder) -> Self {
        let recorded = Self::default();
        let done = recorded.0.clone();
        encoder.on_submitted_work_done(move || done.store(true, Ordering::Release));
        recorded
    }

    fn done(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// How far one pass has come on a tape.
#[derive(Debug, Default)]
enum PassRun {
    #[default]
    NotRun,
    /// Recorded into a caller's encoder, not known to be submitted.
    Recorded(Recorded),
    /// Submitted by the tape, or recorded and known to be done.
    Submitted,
}

/// The passes that have run on a tape (recorded into a caller's encoder, submitted or timed).
#[derive(Debug, Default)]
pub(crate) struct Progress {
    forward: PassRun,
    backward: PassRun,
}

impl Progress {
    fn run(&mut self, pass: Pass) -> &mut PassRun {
        match pass {
            Pass::Forward => &mut self.forward,
            Pass::Backward => &mut self.backward,
        }
    }

    /// Notes that `pass` was submitted.
    pub fn ran(&mut self, pass: Pass) {
        *self.run(pass) = PassRun::Submitted;
    }

    /// Notes that `pass` was recorded into a caller's encoder.
    pub fn recorded(&mut self, pass: Pass, recorded: Recorded) {
        *self.run(pass) = PassRun::Recorded(recorded);
    }

    /// Whether `pass` is known to have run, after `wait` (which blocks until the queue's submitted
    /// work is done) where it was recorded and is not yet done. A pass recorded and still not done
    /// after the wait is an [`Error::Order`] for `name`.
    fn settle(&mut self, pass: Pass, name: &'static str, wait: &dyn Fn() -> Result<()>) -> Result<bool> {
        let run = self.run(pass);
        let PassRun::Recorded(recorded) = run else {
            return Ok(matches!(run, PassRun::Submitted));
        };
        if !recorded.done() {
            wait()?;
        }
        if !recorded.done() {
            let pass_name = match pass {
                Pass::Forward => "forward",
                Pass::Backward => "backward",
            };
            return Err(Error::Order {
                name,
                reason: format!(
                    "the {pass_name} recorded by encode_{pass_name} has not run: its encoder was not submitted"
                ),
            });
        }
        *run = PassRun::Submitted;
        Ok(true)
    }

    /// Refuses a backward before any forward. A backward the tape submits itself (`submitting`)
    /// also needs a forward recorded into an encoder to have run (`wait` blocks on the queue).
    pub fn check_pass(&mut self, pass: Pass, submitting: bool, wait: &dyn Fn() -> Result<()>) -> Result<()> {
        if pass == Pass::Forward {
            return Ok(());
        }
        let forward = match &self.forward {
            PassRun::Recorded(_) if submitting => self.settle(Pass::Forward, "backward", wait)?,
            PassRun::NotRun => false,
            PassRun::Recorded(_) | PassRun::Submitted => true,
        };
        if !forward {
            return Err(Error::Order {
                name: "backward",
                reason: "no forward has run on this tape: the backward reads what the forward saves".into(),
            });
        }
        Ok(())
    }

    /// Refuses a read of a buffer the kernels write before the pass that writes it has run (`wait`
    /// blocks on the queue, for a pass recorded into an encoder).
    pub fn check_read(&mut self, which: Tensor, wait: &dyn Fn() -> Result<()>) -> Result<()> {
        let (pass, needed) = match which.role() {
            Role::Output => (Pass::Forward, "forward"),
            Role::Gradient => (Pass::Backward, "backward"),
            Role::Input | Role::Parameter | Role::OutputGrad => return Ok(()),
        };
        // A backward read the forward's tape: that forward must have run too.
        if pass == Pass::Backward {
            self.settle(Pass::Forward, which.name(), wait)?;
        }
        if self.settle(pass, which.name(), wait)? {
            return Ok(());
        }
        Err(Error::Order {
            name: which.name(),
            reason: format!("the {needed} that writes it has not run on this tape"),
        })
    }
}
