//! One layer call of `gdn-check run` on the device: a [`Tape`] where the batch fits the device's
//! binding and buffer limits, else a [`WindowedTape`] cutting it into windows that do — so that
//! every batch that fits the device's memory runs, and is timed, the same way. Before anything is
//! allocated or drawn, [`check_memory`] refuses a batch whose tensors (and, on a software adapter,
//! whose tape) would not fit the host's memory.

use crate::case::{Case, DeviceResults};
use crate::spot_check::WholeTensors;
use gdn_train::{Clock, Context, Error, Pass, Tape, WindowedTape};
use std::time::Duration;

/// Bytes of host memory `gdn-check run` holds for a call over `case`: the inputs and output
/// gradients it uploads and the outputs and gradients it reads back, in f32.
fn host_bytes(case: &Case) -> u64 {
    let c = &case.config;
    let words_per_token = 2 * c.channels() + 4 * c.value_width() + 4 * c.nv;
    (case.batch.tokens().unwrap_or(usize::MAX) as u64).saturating_mul(4 * words_per_token as u64)
}

/// The host's available memory, where the system says (Linux's `MemAvailable`).
fn host_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// Refuses, naming both sizes, a call over `case` whose host tensors would not fit the host's
/// available memory, checked before anything is planned; then one whose tape (planned, not
/// allocated) would not fit with them on a software adapter, whose device memory is the host's.
/// Returns the planned windows and device bytes.
pub fn check_memory(ctx: &Context, case: &Case) -> Result<(usize, u64), String> {
    let over = |needed: u64, what: &str| check_host_memory("the batch", needed, what);
    let host = host_bytes(case);
    over(host, "its tensors, which gdn-check uploads and reads back")?;
    let (windows, device) = WindowedTape::planned(ctx, case.config, case.batch.clone(), case.tape_options(), None)
        .map_err(|e| e.to_string())?;
    if ctx.is_software() {
        over(
            host.saturating_add(device),
            "its tensors and its tape: a software adapter's device memory is the host's",
        )?;
    }
    Ok((windows, device))
}

/// Refuses `needed` bytes of host memory for `who` (`what` says for what) where the host has fewer
/// available, naming both sizes.
pub fn check_host_memory(who: &str, needed: u64, what: &str) -> Result<(), String> {
    let gib = |bytes: u64| bytes as f64 / f64::from(1u32 << 30);
    match host_available() {
        Some(available) if needed > available => Err(format!(
            "{who} needs {:.1} GiB of host memory ({what}), more than the {:.1} GiB this machine has available",
            gib(needed),
            gib(available)
        )),
        _ => Ok(()),
    }
}

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
                WindowedTape::new(ctx, case.config, case.batch.clone(), case.tape_options(), None)
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
