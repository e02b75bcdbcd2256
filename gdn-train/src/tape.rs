//! [`Tape`]: every device buffer of one layer for one batch shape, allocated once and reused by
//! every step, with the forward and backward of gdn-wgsl's layer plan bound against them.

use crate::buffers::{check_storage, read_f32, storage, uniform};
use crate::config::TapeOptions;
use crate::plan::Bound;
use crate::progress::Progress;
use crate::{Batch, Context, Error, Family, LayerConfig, Pass, Result, Tensor};
use gdn_wgsl::plan::{BufferId, Contents, LayerPlan, PlanOptions};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

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
    /// Every buffer the plan lays out, with its length in words.
    buffers: HashMap<BufferId, (wgpu::Buffer, usize)>,
    /// The buffers the kernels write (what [`Tape::fill_outputs_with_nan`] poisons).
    kernel_written: Vec<BufferId>,
    /// One-word placeholders for the tensors of the backward on a forward-only tape.
    placeholders: HashMap<Tensor, wgpu::Buffer>,
    forward: Bound,
    backward: Option<Bound>,
    /// The passes that have run; its lock serialises the tape's host calls.
    progress: Mutex<Progress>,
}

impl Tape {
    /// Lays out gdn-wgsl's plan for `config` over `batch`, allocates every buffer it binds, builds
    /// (or reuses) the pipelines, and binds the forward and, unless the options say forward-only,
    /// the backward. Fails with a typed error for bad sizes, head dims without kernels, device
    /// limits too small, or memory exhausted.
    pub fn new(ctx: &Context, config: LayerConfig, batch: Batch, options: TapeOptions) -> Result<Self> {
        config.validate()?;
        gdn_wgsl::plan::check_indices(&config)?;
        // The largest tensor per token is qkv: refuse a batch it cannot hold before laying it out.
        check_storage(ctx, "qkv", batch.tokens()?.saturating_mul(config.channels()))?;
        let offsets = gdn_ref::Sequences::new(&batch, None)?.offsets().to_vec();
        let family =
            options.family.unwrap_or_else(|| Family::picked(ctx.is_software(), options.backward, options.precision));
        let plan_options = PlanOptions {
            family,
            precision: options.precision,
            initial_state: options.initial_state,
            final_state_grad: options.final_state_grad,
            conv_state: options.conv_state,
            backward: options.backward,
        };
        let plan = LayerPlan::new(&config, &offsets, &plan_options)?;
        ctx.supports(options.precision)?;
        let mut buffers = HashMap::new();
        for spec in &plan.buffers {
            let (name, words) = (spec.id.name(), spec.words());
            let buffer = match &spec.contents {
                Contents::Storage { .. } => storage(ctx, name, words)?,
                Contents::Fixed(values) => {
                    let buffer = storage(ctx, name, words)?;
                    ctx.queue().write_buffer(&buffer, 0, bytemuck::cast_slice(values));
                    buffer
                }
                Contents::Uniform(bytes) => uniform(ctx, name, bytes)?,
            };
            buffers.insert(spec.id, (buffer, words));
        }
        let kernel_written = plan
            .buffers
            .iter()
            .filter(|spec| matches!(spec.contents, Contents::Storage { .. }))
            .map(|spec| spec.id)
            .filter(|id| !matches!(id, BufferId::Tensor(t) if t.caller_written()))
            .collect();
        let mut placeholders = HashMap::new();
        for tensor in Tensor::ALL.into_iter().filter(|&t| !buffers.contains_key(&BufferId::Tensor(t))) {
            placeholders.insert(tensor, storage(ctx, tensor.name(), 0)?);
        }
        let forward = Bound::new(ctx, plan.dims, &plan.forward, &buffers)?;
        let backward = plan.backward.as_ref().map(|stages| Bound::new(ctx, plan.dims, stages, &buffers)).transpose()?;
        let progress = Mutex::default();
        Ok(Self {
            ctx: ctx.clone(),
            config,
            options,
            family: plan.family,
            offsets,
            buffers,
            kernel_written,
            placeholders,
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
    pub fn buffer(&self, which: Tensor) -> &wgpu::Buffer {
        match self.buffers.get(&BufferId::Tensor(which)) {
            Some((buffer, _)) => buffer,
            None => &self.placeholders[&which],
        }
    }

    /// Elements of a buffer (0 for an optional one the tape has no room for, and for one of the
    /// backward on a forward-only tape).
    pub fn len(&self, which: Tensor) -> usize {
        self.buffers.get(&BufferId::Tensor(which)).map_or(0, |(_, words)| *words)
    }

    /// Bytes of device memory the tape holds: every buffer it allocated (inputs, parameters,
    /// outputs, gradients, what the forward saves for the backward, the family's scratch).
    pub fn device_bytes(&self) -> u64 {
        let placeholders = self.placeholders.values().map(wgpu::Buffer::size);
        self.buffers.values().map(|(buffer, _)| buffer.size()).chain(placeholders).sum()
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
    fn held(&self, which: Tensor) -> Result<()> {
        if self.placeholders.contains_key(&which) {
            return Err(Error::Unsupported {
                option: "backward",
                reason: format!("{} belongs to the backward, and this tape records the forward only", which.name()),
            });
        }
        Ok(())
    }

    /// Uploads `data` into `which`, checking its length.
    pub fn write(&self, which: Tensor, data: &[f32]) -> Result<()> {
        self.check_write(which, data)?;
        let _progress = self.lock();
        self.upload(which, data);
        Ok(())
    }

    /// Checks that `data` fits `which`: a buffer the tape holds, has room for, and of its length.
    pub(crate) fn check_write(&self, which: Tensor, data: &[f32]) -> Result<()> {
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
    pub(crate) fn upload(&self, which: Tensor, data: &[f32]) {
        self.ctx.queue().write_buffer(self.buffer(which), 0, bytemuck::cast_slice(data));
    }

    /// Reads `which` back to the host, waiting for the queue. An output before any forward, or a
    /// gradient before any backward, is [`Error::Order`].
    pub fn read(&self, which: Tensor) -> Result<Vec<f32>> {
        self.read_held(&self.lock(), which)
    }

    /// Reads `which` back, `progress` being the tape's, held.
    pub(crate) fn read_held(&self, progress: &Progress, which: Tensor) -> Result<Vec<f32>> {
        self.held(which)?;
        progress.check_read(which)?;
        read_f32(&self.ctx, self.buffer(which), self.len(which))
    }

    /// Fills every buffer the kernels write with NaN, so that an element a kernel fails to write
    /// shows up in a comparison. A testing aid: the next forward and backward overwrite them.
    pub fn fill_outputs_with_nan(&self) {
        let _progress = self.lock();
        for id in &self.kernel_written {
            let (buffer, len) = &self.buffers[id];
            if *len > 0 {
                let nan = vec![f32::NAN; *len];
                self.ctx.queue().write_buffer(buffer, 0, bytemuck::cast_slice(&nan));
            }
        }
    }
}
