//! [`WindowedTape`]: one layer call too large for a [`Tape`] — a buffer over the device's binding
//! or buffer limits, at a batch that fits the device's memory — run as a chain of tapes over
//! windows of tokens, each of which fits.
//!
//! Sequences are independent, so a window may hold several whole sequences; and a sequence cut by
//! a window boundary continues in the next window from the states it reached, as the layer's
//! state continuation does across calls (proven exact in gdn-ref and on the device: the forward
//! over `[0, T)` equals `[0, t)` then `[t, T)` from `(hT, conv state)`, every gradient through
//! `dhT`/`dh0` and the conv state's gradient included). So the forward runs the windows in
//! order, each piece of a cut sequence starting from the `hT` and final conv window its previous
//! piece ended with; the backward runs them in reverse, each piece's `dh0` and conv-state
//! gradient arriving at its previous piece as `dhT` and final conv-state gradient. The parameter
//! gradients are summed over the windows. Made with [`WindowedTape::new`], the states travel
//! through the host between windows (`[nv, dk, dv]` per cut sequence), and the API is the host
//! one: slices in, vectors out. Made with [`WindowedTape::with_caller_buffers`], the whole batch's
//! tensors live in the caller's buffers and the chain is recorded into the caller's encoder, every
//! hand-over a device copy ([`device`]).

mod device;

use crate::host::{Gradients, Inputs, Outputs, Params, presence};
use crate::tape::laid_out;
use crate::{Batch, CallerBuffer, Clock, Context, Error, Family, LayerConfig, Pass, Result, Tape, TapeOptions};
use std::ops::Range;
use std::time::Duration;

/// A sequence's part inside one window.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    /// The sequence, in the batch.
    sequence: usize,
    /// Its tokens, counted in the whole batch.
    tokens: Range<usize>,
    /// Whether the sequence starts here.
    first: bool,
}

/// One window: a tape over a contiguous range of the batch's tokens.
struct Window {
    tape: Tape,
    tokens: Range<usize>,
    pieces: Vec<Piece>,
}

/// The layer over a batch cut into windows of tokens that each fit the device (see the module
/// docs). Its host calls take and return what a [`Tape`]'s do, for the whole batch.
///
/// # When a batch needs windows
///
/// A [`Tape`] over a batch whose buffers pass the device's binding limit
/// (`max_storage_buffer_binding_size`) is refused with the limit it passes. Every shape whose
/// tapes fit the device's memory runs here: the binding limit only cuts it into windows.
///
/// - [`WindowedTape::new`]`(&ctx, config, batch, options, None)` picks the windows.
/// - [`WindowedTape::planned`] says how many windows and how much device memory, allocating
///   nothing (`gdn-check run --plan-only` prints it).
/// - [`WindowedTape::with_caller_buffers`] binds each window's rows of the engine's token-major
///   tensors, each range possibly in a buffer larger than the binding limit. Its
///   `encode_forward` / `encode_backward` record into the engine's encoder: the states pass
///   between windows by device copies, and the parameter gradients are summed on the device.
///
/// What a tape holds per token sets the largest batch: the device's memory divided by it.
/// `gdn-check run --preset P --seq 4096 --family F --plan-only` prints it. At `dk = dv = 128`:
///
/// | preset | bytes a token: recurrent / chunked f32 / tensor cores |
/// | --- | --- |
/// | qwen3.5-small | 258 292 / 346 676 / 351 641 |
/// | qwen3-next | 417 092 / 593 860 / 595 598 |
/// | qwen3.5-27b | 575 892 / 841 044 / 839 555 |
/// | qwen3.5-large | 734 693 / 1 088 229 / 1 083 513 |
pub struct WindowedTape {
    config: LayerConfig,
    options: TapeOptions,
    offsets: Vec<usize>,
    windows: Vec<Window>,
    /// The gradient arriving at the final conv state, `[sequences, kk − 1, C]` (zero until
    /// written).
    final_conv_state_grad: Vec<f32>,
    /// The caller's whole-batch tensors and their hand-overs, for a tape made with caller buffers.
    device: Option<device::DeviceChain>,
}

impl WindowedTape {
    /// The batch cut into the fewest windows (greedily, each as long as fits) whose tapes fit the
    /// device's limits, with at most `most_tokens` tokens each when given; each window's family is
    /// `options.family`, or the tape's pick for that window. Fails with the limit that stops a
    /// window of a single token, and with every error [`Tape::new`] gives for bad arguments.
    pub fn new(
        ctx: &Context,
        config: LayerConfig,
        batch: Batch,
        options: TapeOptions,
        most_tokens: Option<usize>,
    ) -> Result<Self> {
        Self::build(ctx, config, batch, options, most_tokens, &[])
    }

    /// The windows [`WindowedTape::new`] would cut the batch into and the device memory their tapes
    /// would hold, from their plans alone: nothing is allocated (what fits, before anything is
    /// spent). Fails as `new` does.
    pub fn planned(
        ctx: &Context,
        config: LayerConfig,
        batch: Batch,
        options: TapeOptions,
        most_tokens: Option<usize>,
    ) -> Result<(usize, u64)> {
        config.validate()?;
        let offsets = gdn_ref::Sequences::new(&batch, None)?.offsets().to_vec();
        let cut = cut(ctx, &config, &offsets, &options, most_tokens, 1)?;
        Ok((cut.len(), cut.iter().map(|(_, bytes)| bytes).sum()))
    }

    /// [`WindowedTape::new`] or [`WindowedTape::with_caller_buffers`] (`caller` non-empty).
    fn build(
        ctx: &Context,
        config: LayerConfig,
        batch: Batch,
        options: TapeOptions,
        most_tokens: Option<usize>,
        caller: &[CallerBuffer],
    ) -> Result<Self> {
        config.validate()?;
        let offsets = gdn_ref::Sequences::new(&batch, None)?.offsets().to_vec();
        let given = device::checked(ctx, &config, &offsets, &options, caller)?;
        let granule = device::granule(ctx, &given);
        let mut windows = Vec::new();
        for (tokens, _) in cut(ctx, &config, &offsets, &options, most_tokens, granule)? {
            let pieces = pieces(&offsets, tokens.clone());
            let local = local_offsets(&pieces, tokens.start);
            let callers = device::window_callers(&config, &given, tokens.start);
            let batch = Batch::Packed { cu_seqlens: local };
            let tape = Tape::with_caller_buffers(ctx, config, batch, window_options(&options), &callers)?;
            windows.push(Window { tape, tokens, pieces });
        }
        let sequences = offsets.len() - 1;
        let final_conv_state_grad = vec![0.0; sequences * window_len(&config)];
        let device =
            if given.is_empty() { None } else { Some(device::DeviceChain::new(ctx, &config, &windows, given)?) };
        Ok(Self { config, options, offsets, windows, final_conv_state_grad, device })
    }

    /// Windows the batch was cut into.
    pub fn windows(&self) -> usize {
        self.windows.len()
    }

    /// The family each window runs, in order.
    pub fn families(&self) -> Vec<Family> {
        self.windows.iter().map(|w| w.tape.family()).collect()
    }

    /// Device memory of every window's tape, all allocated at once.
    pub fn device_bytes(&self) -> u64 {
        self.windows.iter().map(|w| w.tape.device_bytes()).sum()
    }

    /// Fills every window's outputs and gradients with NaN ([`Tape::fill_outputs_with_nan`]).
    pub fn fill_outputs_with_nan(&self) -> Result<()> {
        self.windows.iter().try_for_each(|w| w.tape.fill_outputs_with_nan())
    }

    /// Reruns `pass` of every window on its current contents and returns the sum of their device
    /// times ([`Tape::time`]); the host transfers between windows are not in it. Needs a
    /// [`WindowedTape::run_forward`] first (and a [`WindowedTape::run_backward`] for the backward).
    pub fn time(&self, pass: Pass) -> Result<(Duration, Clock)> {
        let mut total = (Duration::ZERO, Clock::GpuTimestamps);
        for w in &self.windows {
            let (t, clock) = w.tape.time(pass)?;
            total = (total.0 + t, clock);
        }
        Ok(total)
    }

    /// Uploads the parameters to every window.
    pub fn write_params(&self, params: &Params) -> Result<()> {
        self.windows.iter().try_for_each(|w| w.tape.write_params(params))
    }

    /// Uploads the gradient arriving at the final conv state, `[sequences, kk − 1, C]`, for the
    /// next backward (tapes with `conv_state`).
    pub fn write_final_conv_state_grad(&mut self, d: &[f32]) -> Result<()> {
        check_optional(
            "dfinal_conv_state",
            Some(d),
            self.options.conv_state,
            self.final_conv_state_grad.len(),
            "conv_state",
        )?;
        self.final_conv_state_grad.copy_from_slice(d);
        Ok(())
    }

    /// The forward over the whole batch, window after window; returns what [`Tape::run_forward`]
    /// returns for it. Checks every slice's length before any window runs.
    pub fn run_forward(&self, inputs: &Inputs) -> Result<Outputs> {
        self.on_host("run_forward")?;
        let c = &self.config;
        let (tokens, sequences) = (*self.offsets.last().expect("non-empty"), self.offsets.len() - 1);
        let (state, window) = (state_len(c), window_len(c));
        check("qkv", inputs.qkv, tokens * c.channels())?;
        check("z", inputs.z, tokens * c.value_width())?;
        check("a", inputs.a, tokens * c.nv)?;
        check("b", inputs.b, tokens * c.nv)?;
        crate::host::check_gate_finite("a", inputs.a)?;
        check_optional("h0", inputs.h0, self.options.initial_state, sequences * state, "initial_state")?;
        check_optional("conv_state", inputs.conv_state, self.options.conv_state, sequences * window, "conv_state")?;
        let mut ht = vec![0.0; sequences * state];
        let mut final_window = vec![0.0; sequences * window];
        let mut out = Vec::with_capacity(tokens * c.value_width());
        for w in &self.windows {
            // Each piece starts from the caller's state (or zero) or where its previous piece ended.
            let h0 = w.pieces.iter().flat_map(|p| start_of(p, inputs.h0, &ht, state)).collect::<Vec<_>>();
            let conv =
                w.pieces.iter().flat_map(|p| start_of(p, inputs.conv_state, &final_window, window)).collect::<Vec<_>>();
            let got = w.tape.run_forward(&Inputs {
                qkv: rows(inputs.qkv, &w.tokens, c.channels()),
                z: rows(inputs.z, &w.tokens, c.value_width()),
                a: rows(inputs.a, &w.tokens, c.nv),
                b: rows(inputs.b, &w.tokens, c.nv),
                h0: Some(&h0),
                conv_state: Some(&conv),
            })?;
            out.extend_from_slice(&got.out);
            let got_window = got.conv_state.unwrap_or_default();
            for (i, p) in w.pieces.iter().enumerate() {
                ht[p.sequence * state..][..state].copy_from_slice(&got.ht[i * state..][..state]);
                final_window[p.sequence * window..][..window].copy_from_slice(&got_window[i * window..][..window]);
            }
        }
        Ok(Outputs { out, ht, conv_state: self.options.conv_state.then_some(final_window) })
    }

    /// The backward of the last forward for `dout` (and `dhT` where the tape has
    /// `final_state_grad`), windows in reverse; returns what [`Tape::run_backward`] returns for
    /// the whole batch, the parameter gradients summed over the windows.
    pub fn run_backward(&self, dout: &[f32], dht: Option<&[f32]>) -> Result<Gradients> {
        self.on_host("run_backward")?;
        let c = &self.config;
        let (tokens, sequences) = (*self.offsets.last().expect("non-empty"), self.offsets.len() - 1);
        let (state, window) = (state_len(c), window_len(c));
        check("dout", dout, tokens * c.value_width())?;
        check_optional("dht", dht, self.options.final_state_grad, sequences * state, "final_state_grad")?;
        // What arrives at the end of each sequence's next piece, walking back: the caller's dhT and
        // final conv-state gradient, then each piece's dh0 and dconv_state.
        let mut ds = dht.map_or_else(|| vec![0.0; sequences * state], <[f32]>::to_vec);
        let mut dwindow = self.final_conv_state_grad.clone();
        let mut parts = Vec::with_capacity(self.windows.len());
        for w in self.windows.iter().rev() {
            let at_end = |x: &[f32], width: usize| -> Vec<f32> {
                w.pieces.iter().flat_map(|p| x[p.sequence * width..][..width].iter().copied()).collect()
            };
            w.tape.write_final_conv_state_grad(&at_end(&dwindow, window))?;
            let got = w.tape.run_backward(rows(dout, &w.tokens, c.value_width()), Some(&at_end(&ds, state)))?;
            let (dh0, dconv_state) =
                (got.dh0.as_deref().unwrap_or_default(), got.dconv_state.as_deref().unwrap_or_default());
            for (i, p) in w.pieces.iter().enumerate() {
                ds[p.sequence * state..][..state].copy_from_slice(&dh0[i * state..][..state]);
                dwindow[p.sequence * window..][..window].copy_from_slice(&dconv_state[i * window..][..window]);
            }
            parts.push(got);
        }
        parts.reverse();
        let joined = |part: fn(&Gradients) -> &[f32]| parts.iter().flat_map(|g| part(g).iter().copied()).collect();
        let summed = |part: fn(&Gradients) -> &[f32]| -> Vec<f32> {
            let mut sum = vec![0.0f64; part(&parts[0]).len()];
            for g in &parts {
                sum.iter_mut().zip(part(g)).for_each(|(s, &v)| *s += f64::from(v));
            }
            sum.into_iter().map(|v| v as f32).collect()
        };
        Ok(Gradients {
            dqkv: joined(|g| &g.dqkv),
            dz: joined(|g| &g.dz),
            da: joined(|g| &g.da),
            db: joined(|g| &g.db),
            dh0: self.options.initial_state.then(|| ds.clone()),
            da_log: summed(|g| &g.da_log),
            ddt_bias: summed(|g| &g.ddt_bias),
            dnorm: summed(|g| &g.dnorm),
            dconv: summed(|g| &g.dconv),
            dconv_state: self.options.conv_state.then_some(dwindow),
        })
    }
}

/// A window's tape options: room for the states and conv windows it carries in and out.
fn window_options(options: &TapeOptions) -> TapeOptions {
    TapeOptions { initial_state: true, final_state_grad: options.backward, conv_state: true, ..*options }
}

/// The batch (`offsets`) cut greedily into the longest windows whose plans fit the device's limits,
/// at most `most_tokens` long, every boundary but the end a multiple of `granule` tokens; each with
/// the bytes its tape would hold. Fails with the limit that stops the shortest window.
fn cut(
    ctx: &Context,
    config: &LayerConfig,
    offsets: &[usize],
    options: &TapeOptions,
    most_tokens: Option<usize>,
    granule: usize,
) -> Result<Vec<(Range<usize>, u64)>> {
    if most_tokens == Some(0) {
        return Err(Error::Config { name: "most_tokens", reason: "must be at least 1".into() });
    }
    let window_options = window_options(options);
    let plan = |tokens: &Range<usize>| -> Result<u64> {
        let local = local_offsets(&pieces(offsets, tokens.clone()), tokens.start);
        let plan = laid_out(ctx, config, &local, &window_options)?;
        Ok(plan.buffers.iter().map(|spec| 4 * spec.words().max(1) as u64).sum())
    };
    let total = *offsets.last().expect("offsets start at 0");
    let mut windows = Vec::new();
    let mut start = 0;
    while start < total {
        let mut end = most_tokens.map_or(total, |most| total.min(start + most));
        if let Err(e) = plan(&(start..end)) {
            if !matches!(e, Error::Limit { .. }) || end == start + 1 {
                return Err(e);
            }
            // The longest window from `start` that fits: `good` fits, `bad` does not.
            let (mut good, mut bad) = (start, end);
            while bad - good > 1 {
                let mid = good + (bad - good) / 2;
                if plan(&(start..mid)).is_ok() { good = mid } else { bad = mid }
            }
            end = good;
        }
        // Where caller buffers are bound, a window's rows must start at an aligned offset.
        if end < total {
            end = start + (end - start) / granule * granule;
        }
        if end == start {
            let shortest = start + granule.min(total - start);
            return Err(plan(&(start..shortest)).expect_err("the shortest window was refused"));
        }
        windows.push((start..end, plan(&(start..end))?));
        start = end;
    }
    Ok(windows)
}

impl WindowedTape {
    /// Fails where the tape lives in the caller's buffers: `what` (a host call chaining through
    /// the host) would leave the caller's per-sequence and parameter-gradient ranges stale.
    fn on_host(&self, what: &'static str) -> Result<()> {
        match self.device {
            None => Ok(()),
            Some(_) => Err(Error::Unsupported {
                option: what,
                reason: "this WindowedTape lives in the caller's buffers: record it with encode_forward and \
                         encode_backward"
                    .into(),
            }),
        }
    }
}

/// The rows `tokens` of a token-major tensor of `width` words per token.
fn rows<'a>(x: &'a [f32], tokens: &Range<usize>, width: usize) -> &'a [f32] {
    &x[tokens.start * width..tokens.end * width]
}

/// Words of one sequence's states, `nv·dk·dv`.
fn state_len(config: &LayerConfig) -> usize {
    config.nv * config.state_size()
}

/// Words of one sequence's conv window, `(kk − 1)·C`.
fn window_len(config: &LayerConfig) -> usize {
    (config.kk - 1) * config.channels()
}

/// The sequences' parts inside `tokens`, in order.
fn pieces(offsets: &[usize], tokens: Range<usize>) -> Vec<Piece> {
    offsets
        .windows(2)
        .enumerate()
        .filter(|(_, s)| s[0] < tokens.end && s[1] > tokens.start)
        .map(|(sequence, s)| Piece {
            sequence,
            tokens: s[0].max(tokens.start)..s[1].min(tokens.end),
            first: s[0] >= tokens.start,
        })
        .collect()
}

/// A window's `cu_seqlens`, from its first token `start`.
fn local_offsets(pieces: &[Piece], start: usize) -> Vec<usize> {
    std::iter::once(0).chain(pieces.iter().map(|p| p.tokens.end - start)).collect()
}

/// The state a piece starts from: the caller's for a sequence's first piece (zero without one),
/// else what the previous piece ended with (`carried`); `width` words per sequence.
fn start_of<'a>(piece: &Piece, given: Option<&'a [f32]>, carried: &'a [f32], width: usize) -> Vec<f32> {
    let at = piece.sequence * width;
    match (piece.first, given) {
        (true, Some(given)) => given[at..][..width].to_vec(),
        (true, None) => vec![0.0; width],
        (false, _) => carried[at..][..width].to_vec(),
    }
}

fn check(name: &'static str, data: &[f32], expected: usize) -> Result<()> {
    if data.len() == expected { Ok(()) } else { Err(Error::Length { name, expected, got: data.len() }) }
}

fn check_optional(name: &'static str, data: Option<&[f32]>, room: bool, expected: usize, option: &str) -> Result<()> {
    presence(name, data.is_some(), room, option)?;
    data.map_or(Ok(()), |data| check(name, data, expected))
}
