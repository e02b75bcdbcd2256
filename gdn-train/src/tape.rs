//! [`Tape`]: every device buffer of one layer for one batch shape, allocated once and reused by
//! every step, with the forward and backward of its kernel family recorded against them.

use crate::buffers::{check_storage, read_f32, storage, uniform};
use crate::config::{Batch, LayerConfig, TapeOptions};
use crate::family::{Family, Geometry};
use crate::passes;
use crate::plan::{Bound, Named};
use crate::progress::Progress;
use crate::tape_buffer::TapeBuffer;
use crate::{Context, Error, Pass, Result};
use gdn_wgsl::{HeadDims, LayerUniform};
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Buffers the caller fills; every other buffer is written by the kernels.
const CALLER_WRITTEN: [&str; 14] = [
    "index",
    "qkv",
    "z",
    "a",
    "b",
    "h0",
    "conv_state",
    "a_log",
    "dt_bias",
    "norm",
    "conv",
    "dout",
    "dht",
    "dfinal_conv_state",
];

/// Device buffers and recorded dispatches of one layer for one batch shape.
///
/// A tape may be shared between threads: each host call (`write*`, `read*`, `run_forward`,
/// `run_backward`, `forward`, `backward`, `time`, `profile`, `fill_outputs_with_nan`) holds the
/// tape's lock from its first upload to its last read-back, so concurrent calls run one after the
/// other, each whole — two threads' `run_forward` never return each other's outputs. A sequence of
/// calls is not one call: a `run_backward` differentiates whichever forward ran last. What
/// [`Tape::encode_forward`], [`Tape::encode_backward`] and [`Tape::buffer`] hand to the caller's own
/// encoder is ordered by the caller.
pub struct Tape {
    ctx: Context,
    config: LayerConfig,
    options: TapeOptions,
    family: Family,
    offsets: Vec<usize>,
    buffers: HashMap<&'static str, (wgpu::Buffer, usize)>,
    /// Buffers of the backward that a forward-only tape holds as one-word placeholders.
    backward_only: HashSet<&'static str>,
    forward: Bound,
    backward: Option<Bound>,
    /// The passes that have run; its lock serialises the tape's host calls.
    progress: Mutex<Progress>,
}

impl Tape {
    /// Allocates every buffer for `config` over `batch` that the recorded passes bind, builds (or
    /// reuses) the pipelines, and records the forward and, unless the options say forward-only, the
    /// backward. Fails with a typed error for bad sizes, head dims without
    /// kernels, device limits too small, or memory exhausted.
    pub fn new(ctx: &Context, config: LayerConfig, batch: Batch, options: TapeOptions) -> Result<Self> {
        config.validate()?;
        let dims = HeadDims::new(config.dk, config.dv)?;
        // The largest tensor per token is qkv: refuse a batch it cannot hold before laying it out.
        check_storage(ctx, "qkv", batch.tokens()?.saturating_mul(config.channels()))?;
        let offsets = batch.offsets()?;
        let family = options.family.unwrap_or_else(|| Family::picked(ctx, options.backward, options.precision));
        family.validate(options.precision)?;
        let longest = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(1);
        let family = family.fitted(longest, options.precision);
        ctx.supports(options.precision)?;
        let (tokens, seqs) = (*offsets.last().expect("offsets are non-empty"), offsets.len() - 1);
        let geometry = Geometry { config: &config, dims, family, precision: options.precision, offsets: &offsets };
        let state_slots = geometry.state_slots();

        let (c, v, nv, state) = (config.channels(), config.value_width(), config.nv, config.state_size());
        let states = seqs * nv * state;
        let optional = |present: bool| if present { states } else { 0 };
        let conv_window = if options.conv_state { seqs * (config.kk - 1) * c } else { 0 };
        let mut words = vec![
            ("index", seqs + 1 + state_slots.len() + tokens),
            ("qkv", tokens * c),
            ("z", tokens * v),
            ("a", tokens * nv),
            ("b", tokens * nv),
            ("h0", optional(options.initial_state)),
            ("a_log", nv),
            ("dt_bias", nv),
            ("norm", config.dv),
            ("conv", c * config.kk),
            ("y", tokens * c),
            ("qk_hat", 2 * tokens * config.nk * config.dk),
            ("qk_ss", 2 * tokens * config.nk),
            ("gates", 2 * tokens * nv),
            ("o", tokens * v),
            ("rstd", tokens * nv),
            ("out", tokens * v),
            ("ht", states),
            ("dout", tokens * v),
            ("dht", optional(options.final_state_grad)),
            ("d_o", tokens * v),
            ("dz", tokens * v),
            ("dnorm_term", tokens * v),
            ("dqk_hat_heads", 2 * tokens * nv * config.dk),
            ("dy", tokens * c),
            ("dh0", optional(options.initial_state)),
            ("da", tokens * nv),
            ("db", tokens * nv),
            ("dlog_term", tokens * nv),
            ("dpre", tokens * c),
            ("dqkv", tokens * c),
            ("da_log", nv),
            ("ddt_bias", nv),
            ("dnorm", config.dv),
            ("dconv", c * config.kk),
            ("conv_state", conv_window),
            ("final_conv_state", conv_window),
            ("dfinal_conv_state", conv_window),
            ("dconv_state", conv_window),
        ];
        words.extend(family.buffer_words(&geometry));
        let reductions = passes::reductions(&geometry);
        let partial = reductions.iter().map(|r| (r.blocks * r.cols) as usize).max().unwrap_or(0);
        words.push(("partial", partial));

        let forward = passes::forward(ctx, &geometry)?;
        let backward = if options.backward { Some(passes::backward(ctx, &geometry)?) } else { None };
        // A forward-only tape gives what its forward does not bind one word (a placeholder).
        let bound: HashSet<&str> = forward.buffer_names().collect();
        let backward_only: HashSet<&'static str> = match backward {
            Some(_) => HashSet::new(),
            None => words.iter().map(|(name, _)| *name).filter(|name| !bound.contains(name)).collect(),
        };
        let mut buffers = HashMap::new();
        for (name, len) in words {
            let len = if backward_only.contains(name) { 0 } else { len };
            buffers.insert(name, (storage(ctx, name, len)?, len));
        }
        let to_u32 = |v: usize| {
            u32::try_from(v).map_err(|_| Error::Config { name: "batch", reason: format!("{v} exceeds u32 indexing") })
        };
        let index: Vec<u32> = offsets
            .iter()
            .chain(&state_slots)
            .copied()
            .chain(offsets.windows(2).enumerate().flat_map(|(n, w)| std::iter::repeat_n(n, w[1] - w[0])))
            .map(to_u32)
            .collect::<Result<_>>()?;
        ctx.queue().write_buffer(&buffers["index"].0, 0, bytemuck::cast_slice(&index));

        let layer = LayerUniform {
            tokens: to_u32(tokens)?,
            seqs: to_u32(seqs)?,
            nk: to_u32(config.nk)?,
            nv: to_u32(nv)?,
            rep: to_u32(nv / config.nk)?,
            kk: to_u32(config.kk)?,
            channels: to_u32(c)?,
            ckpt_interval: to_u32(family.state_interval())?,
            has_h0: options.initial_state.into(),
            has_dht: options.final_state_grad.into(),
            rms_eps: config.rms_eps,
            gate_parts: to_u32(family.gate_parts(dims))?,
            has_conv_state: options.conv_state.into(),
            pad: [0; 2],
        };
        let layer = uniform(ctx, "layer", bytemuck::bytes_of(&layer))?;
        buffers.insert("layer", (layer, 0));
        for (name, shape) in passes::REDUCE_UNIFORMS.into_iter().zip(reductions) {
            buffers.insert(name, (uniform(ctx, name, bytemuck::bytes_of(&shape))?, 0));
        }
        let named: Named = buffers.iter().map(|(name, (buffer, _))| (*name, buffer)).collect();
        let forward = forward.bind(ctx, &named);
        let backward = backward.map(|plan| plan.bind(ctx, &named));
        drop(named);
        let progress = Mutex::default();
        Ok(Self {
            ctx: ctx.clone(),
            config,
            options,
            family,
            offsets,
            buffers,
            backward_only,
            forward,
            backward,
            progress,
        })
    }

    /// The layer.
    pub fn config(&self) -> &LayerConfig {
        &self.config
    }

    /// The options.
    pub fn options(&self) -> &TapeOptions {
        &self.options
    }

    /// The family that computes the delta rule: the one the options named, or the one the tape
    /// picked for its batch.
    pub fn family(&self) -> Family {
        self.family
    }

    /// Sequence offsets `[0, …, tokens]`.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Tokens in the batch.
    pub fn tokens(&self) -> usize {
        *self.offsets.last().expect("offsets are non-empty")
    }

    /// Sequences in the batch.
    pub fn sequences(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The context the tape lives on.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// A buffer, for chaining with the caller's own device work (a one-word placeholder for a
    /// buffer of the backward on a forward-only tape).
    pub fn buffer(&self, which: TapeBuffer) -> &wgpu::Buffer {
        &self.buffers[which.name()].0
    }

    /// Elements of a buffer (0 for an optional one the tape has no room for, and for one of the
    /// backward on a forward-only tape).
    pub fn len(&self, which: TapeBuffer) -> usize {
        self.buffers[which.name()].1
    }

    /// Bytes of device memory the tape holds: every buffer it allocated (inputs, parameters,
    /// outputs, gradients, what the forward saves for the backward, the family's scratch).
    pub fn device_bytes(&self) -> u64 {
        self.buffers.values().map(|(buffer, _)| buffer.size()).sum()
    }

    /// Records the forward into `encoder`: reads the inputs and parameters, writes `out`, `hT`
    /// (and the final conv state) and what the backward needs.
    pub fn encode_forward(&self, encoder: &mut wgpu::CommandEncoder) {
        self.forward.encode(encoder, "gdn forward", None);
        self.lock().ran(Pass::Forward);
    }

    /// Records the backward into `encoder`: reads `dout` (and `dhT`, and the gradient of the final
    /// conv state) and the forward's tape, writes every gradient. The forward must have run on the
    /// same inputs: before any forward is recorded or run on the tape, [`Error::Order`]. A
    /// forward-only tape refuses.
    pub fn encode_backward(&self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        let mut progress = self.lock();
        progress.check_pass(Pass::Backward)?;
        self.backward_plan()?.encode(encoder, "gdn backward", None);
        progress.ran(Pass::Backward);
        Ok(())
    }

    /// The record of what has run, holding the lock that serialises the tape's host calls.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn forward_plan(&self) -> &Bound {
        &self.forward
    }

    pub(crate) fn backward_plan(&self) -> Result<&Bound> {
        self.backward.as_ref().ok_or_else(|| Error::Unsupported {
            option: "backward",
            reason: "this tape records the forward only (TapeOptions::backward is false)".into(),
        })
    }

    /// Submits the forward; returns without waiting.
    pub fn forward(&self) -> Result<()> {
        self.run_pass(&mut self.lock(), Pass::Forward)
    }

    /// Submits the backward; returns without waiting. Before any forward, [`Error::Order`].
    pub fn backward(&self) -> Result<()> {
        self.run_pass(&mut self.lock(), Pass::Backward)
    }

    /// Submits `pass`, `progress` being the tape's, held.
    pub(crate) fn run_pass(&self, progress: &mut Progress, pass: Pass) -> Result<()> {
        progress.check_pass(pass)?;
        let (what, plan) = match pass {
            Pass::Forward => ("forward", &self.forward),
            Pass::Backward => ("backward", self.backward_plan()?),
        };
        self.submit(what, plan)?;
        progress.ran(pass);
        Ok(())
    }

    fn submit(&self, what: &str, plan: &Bound) -> Result<()> {
        let device = self.ctx.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(what) });
        plan.encode(&mut encoder, &format!("gdn {what}"), None);
        self.ctx.queue().submit([encoder.finish()]);
        match pollster::block_on(scope.pop()) {
            None => Ok(()),
            Some(e) => Err(Error::Device { during: what.into(), message: e.to_string() }),
        }
    }

    /// Refuses a buffer of the backward on a forward-only tape.
    fn held(&self, which: TapeBuffer) -> Result<()> {
        if self.backward_only.contains(which.name()) {
            return Err(Error::Unsupported {
                option: "backward",
                reason: format!("{} belongs to the backward, and this tape records the forward only", which.name()),
            });
        }
        Ok(())
    }

    /// Uploads `data` into `which`, checking its length.
    pub fn write(&self, which: TapeBuffer, data: &[f32]) -> Result<()> {
        self.check_write(which, data)?;
        let _progress = self.lock();
        self.upload(which, data);
        Ok(())
    }

    /// Checks that `data` fits `which`: a buffer the tape holds, has room for, and of its length.
    pub(crate) fn check_write(&self, which: TapeBuffer, data: &[f32]) -> Result<()> {
        self.held(which)?;
        let expected = self.len(which);
        if expected == 0 {
            return Err(Error::Presence {
                name: which.name(),
                reason: "the tape was created without room for it (see TapeOptions)".into(),
            });
        }
        if data.len() != expected {
            return Err(Error::Length { name: which.name(), expected, got: data.len() });
        }
        Ok(())
    }

    /// Uploads `data`, checked by [`Tape::check_write`], into `which`.
    pub(crate) fn upload(&self, which: TapeBuffer, data: &[f32]) {
        self.ctx.queue().write_buffer(self.buffer(which), 0, bytemuck::cast_slice(data));
    }

    /// Reads `which` back to the host, waiting for the queue. An output before any forward, or a
    /// gradient before any backward, is [`Error::Order`].
    pub fn read(&self, which: TapeBuffer) -> Result<Vec<f32>> {
        self.read_held(&self.lock(), which)
    }

    /// Reads `which` back, `progress` being the tape's, held.
    pub(crate) fn read_held(&self, progress: &Progress, which: TapeBuffer) -> Result<Vec<f32>> {
        self.held(which)?;
        progress.check_read(which)?;
        read_f32(&self.ctx, self.buffer(which), self.len(which))
    }

    /// Fills every buffer the kernels write with NaN, so that an element a kernel fails to write
    /// shows up in a comparison. A testing aid: the next forward and backward overwrite them.
    pub fn fill_outputs_with_nan(&self) {
        let _progress = self.lock();
        for (name, (buffer, len)) in &self.buffers {
            if *len > 0 && !CALLER_WRITTEN.contains(name) {
                let nan = vec![f32::NAN; *len];
                self.ctx.queue().write_buffer(buffer, 0, bytemuck::cast_slice(&nan));
            }
        }
    }
}
