//! [`Tape`]: every device buffer of one layer for one batch shape, allocated once and reused by
//! every step, with the forward and backward of gdn-wgsl's layer plan bound against them.

use crate::buffers::{check_storage, read_f32_at, storage, uniform, write_bytes};
use crate::config::TapeOptions;
use crate::halves::{nan_word, pack, unpack};
use crate::placement::{CallerBuffer, Placed, check, conflicts};
use crate::plan::{Bound, CopyOut};
use crate::progress::{Progress, Recorded};
use crate::{Batch, Context, Error, Family, LayerConfig, Pass, Result, Tensor};
use gdn_wgsl::plan::{BufferId, Contents, LayerPlan, PlanOptions};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Device buffers and recorded dispatches of one layer for one batch shape.
///
/// A tape may be shared between threads: each host call (`write*`, `read*`, `run_forward`,
/// `run_backward`, `forward`, `backward`, `time`, `profile`, `profile_in_pass`, `fill_outputs_with_nan`) holds the
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
    /// Every buffer the plan lays out, where the stages bind it.
    buffers: HashMap<BufferId, Placed>,
    /// The caller's ranges of the tensors computed in a buffer of the tape's own and copied there
    /// after their pass (`placement::conflicts`).
    copied_to: HashMap<Tensor, Placed>,
    /// The buffers the kernels write, with a word of NaN in their format (what
    /// [`Tape::fill_outputs_with_nan`] fills them with).
    kernel_written: Vec<(BufferId, u32)>,
    /// Elements of each tensor the tape has (two to a word where it is stored in halves).
    elements: HashMap<Tensor, usize>,
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
        Self::with_caller_buffers(ctx, config, batch, options, &[])
    }

    /// [`Tape::new`], with the tensors of `caller` living in the caller's buffers instead of the
    /// tape's own: the kernels read and write them there, with no copy, where they can. Where the
    /// caller's buffers would have one dispatch bind a buffer both read-only and read-write (wgpu
    /// refuses that: two tensors of one stage in the same buffer, one of them written), the written
    /// tensor is computed in a buffer of the tape's own and copied into the caller's range at the
    /// end of its pass (the forward for outputs, the backward for gradients).
    ///
    /// Synchronisation: the passes read the caller's inputs, parameters and output gradients as
    /// they are when the pass runs on the queue, and write the caller's outputs (forward) and
    /// gradients (backward) by its end; anything the caller records before or after them on the
    /// same queue is ordered by wgpu. Nothing else of the caller's buffers is touched.
    ///
    /// The buffers must be of the context's device. One of another device of the same wgpu
    /// instance is an [`Error::Placement`]; one of another instance is too where wgpu can tell,
    /// but wgpu's ids repeat across instances, so it may instead bind this instance's buffer of the
    /// same id.
    pub fn with_caller_buffers(
        ctx: &Context,
        config: LayerConfig,
        batch: Batch,
        options: TapeOptions,
        caller: &[CallerBuffer],
    ) -> Result<Self> {
        config.validate()?;
        gdn_wgsl::plan::check_indices(&config)?;
        // The largest tensor per token is qkv: refuse a batch it cannot hold before laying it out.
        check_storage(ctx, "qkv", batch.tokens()?.saturating_mul(config.channels()))?;
        let offsets = gdn_ref::Sequences::new(&batch, None)?.offsets().to_vec();
        let plan = laid_out(ctx, &config, &offsets, &options)?;
        ctx.supports(options.precision)?;
        let mut given: HashMap<Tensor, &CallerBuffer> = HashMap::new();
        for c in caller {
            if given.insert(c.tensor, c).is_some() {
                return Err(Error::Placement { name: c.tensor.name(), reason: "given twice".into() });
            }
            if plan.buffer(BufferId::Tensor(c.tensor)).is_none() {
                return Err(Error::Presence {
                    name: c.tensor.name(),
                    reason: "given as a caller buffer, but this tape has no such tensor (a forward-only tape has no gradients)"
                        .into(),
                });
            }
        }
        let mut buffers = HashMap::new();
        for spec in &plan.buffers {
            let (name, words) = (spec.id.name(), spec.words());
            let placed = match (&spec.contents, spec.id) {
                (Contents::Storage { .. }, BufferId::Tensor(t)) if given.contains_key(&t) => {
                    check(ctx, given[&t], words)?
                }
                (Contents::Storage { .. }, _) => Placed::owned(storage(ctx, name, words)?, words),
                (Contents::Fixed(values), _) => {
                    let buffer = storage(ctx, name, words)?;
                    write_bytes(ctx, name, &buffer, 0, bytemuck::cast_slice(values))?;
                    Placed::owned(buffer, words)
                }
                (Contents::Uniform(bytes), _) => Placed::owned(uniform(ctx, name, bytes)?, words),
            };
            buffers.insert(spec.id, placed);
        }
        // Tensors computed beside a caller's buffer that the same dispatch reads: computed in a
        // buffer of the tape's own, copied to the caller's range after their pass.
        let staged = conflicts(plan.forward.iter().chain(plan.backward.iter().flatten()), &buffers);
        let (mut copied_to, mut forward_copies, mut backward_copies) = (HashMap::new(), Vec::new(), Vec::new());
        for tensor in staged {
            let words = buffers[&BufferId::Tensor(tensor)].words;
            let own = Placed::owned(storage(ctx, tensor.name(), words)?, words);
            let home = buffers.insert(BufferId::Tensor(tensor), own).expect("a staged tensor is laid out");
            let copy = CopyOut {
                from: buffers[&BufferId::Tensor(tensor)].buffer.clone(),
                to: home.buffer.clone(),
                offset: home.offset,
                bytes: 4 * words as u64,
            };
            match tensor.role() {
                gdn_ref::Role::Output => forward_copies.push(copy),
                _ => backward_copies.push(copy),
            }
            copied_to.insert(tensor, home);
        }
        let kernel_written = plan
            .buffers
            .iter()
            .filter_map(|spec| match spec.contents {
                Contents::Storage { element, .. } => Some((spec.id, nan_word(element))),
                _ => None,
            })
            .filter(|(id, _)| !matches!(id, BufferId::Tensor(t) if t.caller_written()))
            .collect();
        let (tokens, sequences) = (*offsets.last().expect("offsets are non-empty"), offsets.len() - 1);
        let elements = plan
            .buffers
            .iter()
            .filter_map(|spec| match spec.id {
                BufferId::Tensor(t) if spec.words() > 0 => Some((t, t.len(&config, tokens, sequences).unwrap_or(0))),
                BufferId::Tensor(t) => Some((t, 0)),
                _ => None,
            })
            .collect();
        let mut placeholders = HashMap::new();
        for tensor in Tensor::ALL.into_iter().filter(|&t| !buffers.contains_key(&BufferId::Tensor(t))) {
            placeholders.insert(tensor, storage(ctx, tensor.name(), 0)?);
        }
        let forward = Bound::new(ctx, plan.dims, &plan.forward, &buffers, forward_copies)?;
        let backward = match &plan.backward {
            Some(stages) => Some(Bound::new(ctx, plan.dims, stages, &buffers, backward_copies)?),
            None => None,
        };
        let progress = Mutex::default();
        Ok(Self {
            ctx: ctx.clone(),
            config,
            options,
            family: plan.family,
            offsets,
            buffers,
            copied_to,
            kernel_written,
            elements,
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

    /// Where a tensor lives: the caller's range where it was given one, else the tape's own.
    fn home(&self, which: Tensor) -> Option<&Placed> {
        self.copied_to.get(&which).or_else(|| self.buffers.get(&BufferId::Tensor(which)))
    }

    /// The buffer holding a tensor, for chaining with the caller's own device work: the caller's
    /// own where it gave one ([`Tape::with_caller_buffers`]; the tensor starts at
    /// [`Tape::offset`] there), else the tape's (a one-word placeholder for a tensor of the
    /// backward on a forward-only tape).
    pub fn buffer(&self, which: Tensor) -> &wgpu::Buffer {
        match self.home(which) {
            Some(placed) => &placed.buffer,
            None => &self.placeholders[&which],
        }
    }

    /// Where a tensor starts in [`Tape::buffer`], in bytes: 0 in the tape's own buffers, the
    /// caller's offset in its own.
    pub fn offset(&self, which: Tensor) -> u64 {
        self.home(which).map_or(0, |placed| placed.offset)
    }

    /// Elements of a buffer (0 for an optional one the tape has no room for, and for one of the
    /// backward on a forward-only tape).
    pub fn len(&self, which: Tensor) -> usize {
        self.elements.get(&which).copied().unwrap_or(0)
    }

    /// Bytes of device memory the tape holds: every buffer it allocated (inputs, parameters,
    /// outputs, gradients, what the forward saves for the backward, the family's scratch), not the
    /// caller's.
    pub fn device_bytes(&self) -> u64 {
        let placeholders = self.placeholders.values().map(wgpu::Buffer::size);
        let owned = self.buffers.values().filter(|placed| !placed.caller).map(|placed| placed.buffer.size());
        owned.chain(placeholders).sum()
    }

    /// Records the forward into `encoder`: reads the inputs and parameters, writes `out`, `hT`
    /// (and the final conv state) and what the backward needs.
    /// It counts as run once `encoder`'s work is done: a backward the tape submits, or a read, before
    /// that waits for the queue and refuses with [`Error::Order`] if the encoder was not submitted.
    pub fn encode_forward(&self, encoder: &mut wgpu::CommandEncoder) {
        self.forward.encode(encoder, "gdn forward", None);
        self.lock().recorded(Pass::Forward, Recorded::watch(encoder));
    }

    /// Records the backward into `encoder`: reads `dout` (and `dhT`, and the gradient of the final
    /// conv state) and the forward's tape, writes every gradient. The forward must have run on the
    /// same inputs: before any forward is recorded or run on the tape, [`Error::Order`]. A
    /// forward-only tape refuses.
    pub fn encode_backward(&self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        let mut progress = self.lock();
        progress.check_pass(Pass::Backward, false, &|| self.ctx.wait())?;
        self.backward_plan()?.encode(encoder, "gdn backward", None);
        progress.recorded(Pass::Backward, Recorded::watch(encoder));
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
        progress.check_pass(pass, true, &|| self.ctx.wait())?;
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
        self.upload(which, data)
    }

    /// Checks that `data` fits `which`: a buffer the tape holds, has room for, of its length, and
    /// within its storage's range.
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
        crate::halves::check_range(self.options.storage, which, data)
    }

    /// Uploads `data`, checked by [`Tape::check_write`], into `which`; out of staging memory is
    /// [`Error::OutOfMemory`], with `which` unchanged.
    pub(crate) fn upload(&self, which: Tensor, data: &[f32]) -> Result<()> {
        let (buffer, offset) = (self.buffer(which), self.offset(which));
        if self.options.storage.halves(which) {
            let words = pack(self.options.storage, data);
            write_bytes(&self.ctx, which.name(), buffer, offset, bytemuck::cast_slice(&words))
        } else {
            write_bytes(&self.ctx, which.name(), buffer, offset, bytemuck::cast_slice(data))
        }
    }

    /// Reads `which` back to the host, waiting for the queue. An output before any forward, or a
    /// gradient before any backward, is [`Error::Order`].
    pub fn read(&self, which: Tensor) -> Result<Vec<f32>> {
        self.read_held(&mut self.lock(), which)
    }

    /// Reads `which` back, `progress` being the tape's, held.
    pub(crate) fn read_held(&self, progress: &mut Progress, which: Tensor) -> Result<Vec<f32>> {
        self.held(which)?;
        progress.check_read(which, &|| self.ctx.wait())?;
        let first = (self.offset(which) / 4) as usize;
        if !self.options.storage.halves(which) {
            return read_f32_at(&self.ctx, self.buffer(which), first, self.len(which));
        }
        let words = self.len(which).div_ceil(2);
        let bits: Vec<u32> =
            read_f32_at(&self.ctx, self.buffer(which), first, words)?.iter().map(|w| w.to_bits()).collect();
        Ok(unpack(self.options.storage, &bits, self.len(which)))
    }

    /// Fills every buffer the kernels write with NaN, so that an element a kernel fails to write
    /// shows up in a comparison. A testing aid: the next forward and backward overwrite them. Out
    /// of staging memory is [`Error::OutOfMemory`].
    pub fn fill_outputs_with_nan(&self) -> Result<()> {
        let _progress = self.lock();
        // A tensor computed beside the caller's range is poisoned in both places.
        let homes = self.kernel_written.iter().flat_map(|(id, nan)| {
            let copied_to = match id {
                BufferId::Tensor(t) => self.copied_to.get(t),
                _ => None,
            };
            std::iter::once(&self.buffers[id]).chain(copied_to).map(move |placed| (placed, *nan))
        });
        for (placed, nan) in homes.filter(|(placed, _)| placed.words > 0) {
            let words = vec![nan; placed.words];
            write_bytes(&self.ctx, "a NaN fill", &placed.buffer, placed.offset, bytemuck::cast_slice(&words))?;
        }
        Ok(())
    }
}

/// The tape's plan. With the family named in `options`, that family's. Otherwise the family the
/// context picks for the batch ([`Context::picked_family_for_batch`]); or, where one of its buffers
/// would not fit the device's binding or buffer limits (the chunked family's f32 work buffer at
/// Qwen3.5-122B's 8 192 tokens), the first other family that computes in the precision and fits.
/// When none fits, the picked family's error.
pub(crate) fn laid_out(
    ctx: &Context,
    config: &LayerConfig,
    offsets: &[usize],
    options: &TapeOptions,
) -> Result<LayerPlan> {
    crate::config::check_rms_eps(config)?;
    if options.final_state_grad && !options.backward {
        return Err(Error::Config {
            name: "final_state_grad",
            reason: "a gradient arriving at the final state needs a tape that records the backward (backward: true)"
                .into(),
        });
    }
    let plan_of = |family: Family| -> Result<LayerPlan> {
        let plan_options = PlanOptions {
            family,
            precision: options.precision,
            initial_state: options.initial_state,
            final_state_grad: options.final_state_grad,
            conv_state: options.conv_state,
            backward: options.backward,
            storage: options.storage,
            subgroups: ctx.has_wide_subgroups(),
            storage_buffers: ctx.device().limits().max_storage_buffers_per_shader_stage,
        };
        let plan = LayerPlan::new(config, offsets, &plan_options)?;
        crate::loop_budget::check(ctx, family, offsets)?;
        for spec in plan.buffers.iter().filter(|spec| matches!(spec.contents, Contents::Storage { .. })) {
            check_storage(ctx, spec.id.name(), spec.words())?;
        }
        Ok(plan)
    };
    if let Some(family) = options.family {
        return plan_of(family);
    }
    let picked = ctx.picked_family_for_batch(config, offsets, options);
    let first = plan_of(picked);
    if !matches!(first, Err(Error::Limit { .. })) {
        return first;
    }
    let others = Family::ALL.into_iter().filter(|f| f.name() != picked.name() && f.computes_in(options.precision));
    others.map(plan_of).find(Result::is_ok).unwrap_or(first)
}
