//! One layer call of `gdn-check run` on the device: a [`Tape`] where the batch fits the device's
//! binding and buffer limits, else a [`WindowedTape`] cutting it into windows that do — so that
//! every batch that fits the device's memory runs, and is timed, the same way.

use crate::case::{Case, DeviceResults};
use crate::spot_check::WholeTensors;
use gdn_train::{Clock, Context, Error, Pass, Tape, TapeOptions, WindowedTape};
use std::time::Duration;

/// The whole batch on the device.
pub enum LayerCall {
    /// One tape.
    Whole(Box<Tape>),
    /// Windows of tokens, each a tape of its own.
    Windowed(Box<WindowedTape>),
}

impl LayerCall {
    /// `case`'s tape, or where one would pass a binding or buffer limit, its windowed tape;
    /// nothing uploaded.
    pub fn new(ctx: &Context, case: &Case) -> Result<Self, Error> {
        match case.empty_tape(ctx) {
            Err(Error::Limit { .. }) => {
                let options = TapeOptions {
                    initial_state: case.h0,
                    final_state_grad: case.dht,
                    family: Some(case.family),
                    precision: case.precision,
                    storage: case.storage,
                    ..TapeOptions::default()
                };
                WindowedTape::new(ctx, case.config, case.batch.clone(), options, None)
                    .map(|w| Self::Windowed(Box::new(w)))
            }
            tape => tape.map(|t| Self::Whole(Box::new(t))),
        }
    }

    /// Windows the batch runs in (1 for a tape).
    pub fn windows(&self) -> usize {
        match self {
            Self::Whole(_) => 1,
            Self::Windowed(w) => w.windows(),
        }
    }

    /// Device memory of the tape (of every window's tape).
    pub fn device_bytes(&self) -> u64 {
        match self {
            Self::Whole(t) => t.device_bytes(),
            Self::Windowed(w) => w.device_bytes(),
        }
    }

    /// Forward and backward of `tensors`, every output and gradient poisoned with NaN first.
    pub fn run(&self, tensors: &WholeTensors) -> Result<DeviceResults, Error> {
        let dht = tensors.dht.as_deref();
        let (outputs, gradients) = match self {
            Self::Whole(tape) => {
                tape.write_params(&tensors.params())?;
                tape.fill_outputs_with_nan()?;
                let outputs = tape.run_forward(&tensors.inputs())?;
                (outputs, tape.run_backward(&tensors.dout, dht)?)
            }
            Self::Windowed(windows) => {
                windows.write_params(&tensors.params())?;
                windows.fill_outputs_with_nan()?;
                let outputs = windows.run_forward(&tensors.inputs())?;
                (outputs, windows.run_backward(&tensors.dout, dht)?)
            }
        };
        Ok(DeviceResults { outputs, gradients, device_bytes: self.device_bytes() })
    }

    /// Device time of `pass` rerun on the current contents: the tape's, or the sum of the
    /// windows' (host transfers between windows excluded).
    pub fn time(&self, pass: Pass) -> Result<(Duration, Clock), Error> {
        match self {
            Self::Whole(tape) => tape.time(pass),
            Self::Windowed(windows) => windows.time(pass),
        }
    }
}
