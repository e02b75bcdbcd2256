//! What has run on a tape: a backward needs a forward before it, and an output or gradient read
//! before the pass that writes it would return stale zeros or NaN. [`Progress`] records the passes
//! recorded or submitted and refuses, with [`Error::Order`], what comes too early.

use crate::Tensor;
use crate::{Error, Pass, Result};
use gdn_ref::Role;

/// The passes that have run on a tape (recorded into a caller's encoder, submitted or timed).
#[derive(Debug, Default)]
pub(crate) struct Progress {
    forward: bool,
    backward: bool,
}

impl Progress {
    /// Notes that `pass` ran.
    pub fn ran(&mut self, pass: Pass) {
        match pass {
            Pass::Forward => self.forward = true,
            Pass::Backward => self.backward = true,
        }
    }

    /// Refuses a backward before any forward.
    pub fn check_pass(&self, pass: Pass) -> Result<()> {
        if pass == Pass::Backward && !self.forward {
            return Err(Error::Order {
                name: "backward",
                reason: "no forward has run on this tape: the backward reads what the forward saves".into(),
            });
        }
        Ok(())
    }

    /// Refuses a read of a buffer the kernels write before the pass that writes it has run.
    pub fn check_read(&self, which: Tensor) -> Result<()> {
        let (needed, ran) = match which.role() {
            Role::Output => ("forward", self.forward),
            Role::Gradient => ("backward", self.backward),
            Role::Input | Role::Parameter | Role::OutputGrad => return Ok(()),
        };
        if ran {
            return Ok(());
        }
        Err(Error::Order {
            name: which.name(),
            reason: format!("the {needed} that writes it has not run on this tape"),
        })
    }
}
