//! A [`WindowedTape`] in the caller's buffers, recorded into the caller's encoder: the same chain
//! of windows as the host calls run, with every hand-over between windows a device copy.
//!
//! The caller gives whole-batch tensors ([`CallerBuffer`]s, each range of a buffer that may be
//! larger than the binding limit). How each reaches the windows ([`Share`]):
//! - token-major tensors (qkv, z, a, b, out and their gradients): each window's tape binds its
//!   tokens' rows of the caller's range, so windows start at multiples of the granule that keeps
//!   those offsets aligned;
//! - per-sequence tensors (states, conv windows and their gradients): each window's tape holds its
//!   pieces' rows; before a window runs, a piece that starts its sequence copies its row from the
//!   caller's range (or clears it where the caller has none) and a piece that continues one copies
//!   the previous window's final row (backward: the next window's `dh0` row); after it runs, a
//!   piece that ends (backward: starts) its sequence copies its row to the caller's range;
//! - parameters: every window binds the caller's range;
//! - parameter gradients: each window computes its own; after the backward, the first window's
//!   are copied into the caller's range and the others added to them (`add_into`).

use super::{Window, WindowedTape, state_len, window_len};
use crate::pipelines::KernelPipeline;
use crate::placement::{CallerBuffer, check};
use crate::plan::{bind_group, folded};
use crate::{Context, Error, LayerConfig, Result, Storage, Tape, TapeOptions, Tensor};
use gdn_ref::{Presence, Role};
use gdn_wgsl::{ELEMENTS, HeadDims, Kernel};
use std::collections::HashMap;
use std::sync::Arc;

/// How a whole-batch tensor reaches the windows (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Share {
    /// Token-major, this many words a token: windows bind their rows of the caller's range.
    Rows(usize),
    /// A row per sequence: copied between the caller's range and the windows'.
    PerSequence,
    /// A parameter: every window binds the caller's range.
    Parameter,
    /// A parameter's gradient: summed over the windows into the caller's range.
    Summed,
}

impl Share {
    pub(super) fn of(tensor: Tensor, config: &LayerConfig) -> Self {
        let words = tensor.shape(config, 1, 1).iter().product();
        match (tensor.role(), tensor) {
            (Role::Parameter, _) => Share::Parameter,
            (Role::Gradient, Tensor::DaLog | Tensor::DdtBias | Tensor::Dnorm | Tensor::Dconv) => Share::Summed,
            (_, Tensor::H0 | Tensor::ConvState | Tensor::Ht | Tensor::FinalConvState) => Share::PerSequence,
            (_, Tensor::Dht | Tensor::DfinalConvState | Tensor::Dh0 | Tensor::DconvState) => Share::PerSequence,
            _ => Share::Rows(words),
        }
    }
}

/// Whether the whole batch has `tensor` under `options`.
pub(super) fn has(tensor: Tensor, options: &TapeOptions) -> bool {
    let present = match tensor.presence() {
        Presence::Always => true,
        Presence::InitialState => options.initial_state,
        Presence::FinalStateGrad => options.final_state_grad,
        Presence::ConvState => options.conv_state,
    };
    present && (options.backward || !matches!(tensor.role(), Role::OutputGrad | Role::Gradient))
}

/// The caller's whole-batch tensors, and what sums the parameter gradients.
pub(super) struct DeviceChain {
    given: HashMap<Tensor, CallerBuffer>,
    /// Per summed gradient the caller gave: its words, and a bind group per window but the first
    /// that adds the window's part into the caller's range.
    sums: Vec<(Tensor, usize, Vec<wgpu::BindGroup>)>,
    add: Arc<KernelPipeline>,
}

/// The caller's tensors checked against the whole batch: each once, one the batch has, f32, in a
/// range that holds it.
pub(super) fn checked(
    ctx: &Context,
    config: &LayerConfig,
    offsets: &[usize],
    options: &TapeOptions,
    caller: &[CallerBuffer],
) -> Result<HashMap<Tensor, CallerBuffer>> {
    if options.storage != Storage::F32 {
        return Err(Error::Unsupported {
            option: "storage",
            reason: "a WindowedTape in the caller's buffers takes f32 storage".into(),
        });
    }
    let (tokens, sequences) = (*offsets.last().expect("offsets start at 0"), offsets.len() - 1);
    let mut given = HashMap::new();
    for c in caller {
        if !has(c.tensor, options) {
            return Err(Error::Presence {
                name: c.tensor.name(),
                reason: "given as a caller buffer, but the batch has no such tensor under these options".into(),
            });
        }
        check(ctx, c, c.tensor.len(config, tokens, sequences).unwrap_or(0))?;
        if given.insert(c.tensor, c.clone()).is_some() {
            return Err(Error::Placement { name: c.tensor.name(), reason: "given twice".into() });
        }
    }
    Ok(given)
}

/// Tokens a window boundary is a multiple of, so that every token-major tensor's rows of a window
/// start at an offset the device accepts (any width: 4·granule bytes is the alignment).
pub(super) fn granule(ctx: &Context, given: &HashMap<Tensor, CallerBuffer>) -> usize {
    if given.is_empty() { 1 } else { (ctx.device().limits().min_storage_buffer_offset_alignment / 4).max(1) as usize }
}

/// What a window's tape binds of the caller's tensors: its rows of the token-major ones, the
/// parameters whole.
pub(super) fn window_callers(
    config: &LayerConfig,
    given: &HashMap<Tensor, CallerBuffer>,
    start: usize,
) -> Vec<CallerBuffer> {
    given
        .values()
        .filter_map(|c| match Share::of(c.tensor, config) {
            Share::Rows(width) => Some(CallerBuffer { offset: c.offset + 4 * (start * width) as u64, ..c.clone() }),
            Share::Parameter => Some(c.clone()),
            _ => None,
        })
        .collect()
}

impl DeviceChain {
    /// The chain over `windows` for the caller's `given` tensors: the adding pipeline and a bind
    /// group per window but the first for each parameter gradient given.
    pub(super) fn new(
        ctx: &Context,
        config: &LayerConfig,
        windows: &[Window],
        given: HashMap<Tensor, CallerBuffer>,
    ) -> Result<Self> {
        let add = ctx.pipelines().get(ctx, Kernel::AddInto, HeadDims::new(config.dk, config.dv)?)?;
        let mut sums = Vec::new();
        for (&tensor, c) in given.iter().filter(|(t, _)| Share::of(**t, config) == Share::Summed) {
            let words = windows[0].tape.len(tensor);
            let bytes = wgpu::BufferSize::new(4 * words as u64);
            let groups = windows[1..]
                .iter()
                .map(|w| {
                    let range = |buffer, offset| {
                        wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: bytes })
                    };
                    let part = range(w.tape.buffer(tensor), w.tape.offset(tensor));
                    bind_group(ctx, &add, vec![part, range(&c.buffer, c.offset)])
                })
                .collect();
            sums.push((tensor, words, groups));
        }
        Ok(Self { given, sums, add })
    }

    /// Fails naming the first tensor of `roles` the batch has that the caller did not give.
    fn require(&self, options: &TapeOptions, roles: &[Role], what: &str) -> Result<()> {
        match Tensor::ALL
            .into_iter()
            .find(|&t| roles.contains(&t.role()) && has(t, options) && !self.given.contains_key(&t))
        {
            Some(t) => Err(Error::Presence {
                name: t.name(),
                reason: format!("{what} of a WindowedTape needs every tensor of the pass in the caller's buffers"),
            }),
            None => Ok(()),
        }
    }

    /// Row `row` of a per-sequence tensor of `width` words: in the caller's range (`None` for a
    /// tensor the caller lacks).
    fn caller_row(&self, tensor: Tensor, row: usize, width: usize) -> Option<(&wgpu::Buffer, u64)> {
        self.given.get(&tensor).map(|c| (&c.buffer, c.offset + 4 * (row * width) as u64))
    }
}

/// Row `row` of a per-sequence tensor of `width` words in a window's tape.
fn tape_row(tape: &Tape, tensor: Tensor, row: usize, width: usize) -> (&wgpu::Buffer, u64) {
    (tape.buffer(tensor), tape.offset(tensor) + 4 * (row * width) as u64)
}

/// Copies `width` words from `from` to `to`, or clears `to` where there is nothing to copy.
fn copy_or_clear(
    encoder: &mut wgpu::CommandEncoder,
    from: Option<(&wgpu::Buffer, u64)>,
    to: (&wgpu::Buffer, u64),
    width: usize,
) {
    let bytes = 4 * width as u64;
    match from {
        Some((buffer, offset)) => encoder.copy_buffer_to_buffer(buffer, offset, to.0, to.1, bytes),
        None => encoder.clear_buffer(to.0, to.1, Some(bytes)),
    }
}

impl WindowedTape {
    /// [`WindowedTape::new`], with whole-batch tensors in the caller's buffers (each range may lie in
    /// a buffer larger than the device's binding limit; see [`CallerBuffer`] for the alignment and
    /// usages a range needs), for [`WindowedTape::encode_forward`] and
    /// [`WindowedTape::encode_backward`]; windows then start at multiples of
    /// `min_storage_buffer_offset_alignment / 4` tokens. f32 storage only. The host calls
    /// `run_forward` and `run_backward` refuse on such a tape: it is driven from the caller's
    /// encoder, and read in the caller's buffers.
    pub fn with_caller_buffers(
        ctx: &Context,
        config: LayerConfig,
        batch: crate::Batch,
        options: TapeOptions,
        most_tokens: Option<usize>,
        caller: &[CallerBuffer],
    ) -> Result<Self> {
        Self::build(ctx, config, batch, options, most_tokens, caller)
    }

    /// Records the forward of every window into `encoder`, with the copies that hand each cut
    /// sequence's state and conv window to its next window: reads the caller's inputs and
    /// parameters, writes its `out`, `ht` (and final conv state). Needs every tensor of the
    /// forward in the caller's buffers ([`WindowedTape::with_caller_buffers`]).
    pub fn encode_forward(&self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        let chain = self.chain("encode_forward")?;
        chain.require(&self.options, &[Role::Input, Role::Parameter, Role::Output], "encode_forward")?;
        let c = &self.config;
        let carried =
            [(Tensor::H0, Tensor::Ht, state_len(c)), (Tensor::ConvState, Tensor::FinalConvState, window_len(c))];
        for (i, w) in self.windows.iter().enumerate() {
            for (k, p) in w.pieces.iter().enumerate() {
                for (input, output, width) in carried {
                    let from = match p.first {
                        true => chain.caller_row(input, p.sequence, width),
                        false => Some(tape_row(
                            &self.windows[i - 1].tape,
                            output,
                            self.windows[i - 1].pieces.len() - 1,
                            width,
                        )),
                    };
                    copy_or_clear(encoder, from, tape_row(&w.tape, input, k, width), width);
                }
            }
            w.tape.encode_forward(encoder);
            for (k, p) in w.pieces.iter().enumerate().filter(|(_, p)| p.tokens.end == self.offsets[p.sequence + 1]) {
                for (_, output, width) in carried {
                    if let Some(to) = chain.caller_row(output, p.sequence, width) {
                        copy_or_clear(encoder, Some(tape_row(&w.tape, output, k, width)), to, width);
                    }
                }
            }
        }
        Ok(())
    }

    /// Records the backward of every window into `encoder`, last window first, with the copies that
    /// hand each cut sequence's state and conv-window gradients back to its previous window, then
    /// the sum of the windows' parameter gradients into the caller's ranges: reads the caller's
    /// `dout` (and `dht`, and the final conv state's gradient), writes every gradient. A forward
    /// must have been recorded before; needs every tensor of the backward in the caller's buffers.
    pub fn encode_backward(&self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        let chain = self.chain("encode_backward")?;
        chain.require(&self.options, &[Role::OutputGrad, Role::Gradient], "encode_backward")?;
        let c = &self.config;
        let carried =
            [(Tensor::Dht, Tensor::Dh0, state_len(c)), (Tensor::DfinalConvState, Tensor::DconvState, window_len(c))];
        for (i, w) in self.windows.iter().enumerate().rev() {
            for (k, p) in w.pieces.iter().enumerate() {
                for (arriving, leaving, width) in carried {
                    let from = match p.tokens.end == self.offsets[p.sequence + 1] {
                        true => chain.caller_row(arriving, p.sequence, width),
                        false => Some(tape_row(&self.windows[i + 1].tape, leaving, 0, width)),
                    };
                    copy_or_clear(encoder, from, tape_row(&w.tape, arriving, k, width), width);
                }
            }
            w.tape.encode_backward(encoder)?;
            for (k, p) in w.pieces.iter().enumerate().filter(|(_, p)| p.first) {
                for (_, leaving, width) in carried {
                    if let Some(to) = chain.caller_row(leaving, p.sequence, width) {
                        copy_or_clear(encoder, Some(tape_row(&w.tape, leaving, k, width)), to, width);
                    }
                }
            }
        }
        for (tensor, words, _) in &chain.sums {
            let (first, to) = (&self.windows[0].tape, &chain.given[tensor]);
            let from = (first.buffer(*tensor), first.offset(*tensor));
            copy_or_clear(encoder, Some(from), (&to.buffer, to.offset), *words);
        }
        let mut pass = encoder
            .begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("window sums"), timestamp_writes: None });
        pass.set_pipeline(&chain.add.pipeline);
        for (_, words, groups) in &chain.sums {
            let grid = folded(self.windows[0].tape.context(), "add_into", words.div_ceil(ELEMENTS as usize))?;
            for group in groups {
                pass.set_bind_group(0, group, &[]);
                pass.dispatch_workgroups(grid.0, grid.1, 1);
            }
        }
        Ok(())
    }

    /// The device chain, or why `what` cannot be recorded on a tape made without caller buffers.
    fn chain(&self, what: &'static str) -> Result<&DeviceChain> {
        self.device.as_ref().ok_or_else(|| Error::Unsupported {
            option: what,
            reason: "this WindowedTape moves its states through the host; WindowedTape::with_caller_buffers makes one \
                     that records into the caller's encoder"
                .into(),
        })
    }
}
