//! The layer's passes as plain data: which kernels run in which order over how many workgroups,
//! which buffer fills each of their bindings, and how large every buffer is (or what it holds).
//! A host allocates [`LayerPlan::buffers`], binds each [`Stage`] by its [`BufferId`]s and records
//! the stages in order; it needs no knowledge of the families. gdn-train does so through wgpu;
//! another host (a browser's WebGPU, an engine of its own) can do the same from this data.
//!
//! A plan is made of a shared prologue (conv, q/k norms, gates), one family's core (the delta
//! rule: `recurrent.rs`, `chunked.rs`), a shared epilogue (gated RMSNorm) and, in the backward, the
//! shared gradients around the family's and the parameter sums (`shared.rs`).
//!
//! ```
//! use gdn_ref::{LayerConfig, Tensor};
//! use gdn_wgsl::plan::{BufferId, Family, LayerPlan, PlanOptions};
//!
//! let config = LayerConfig::new(2, 4, 16, 16, 4)?;
//! let options = PlanOptions { family: Family::chunked(), ..PlanOptions::default() };
//! let plan = LayerPlan::new(&config, &[0, 100, 130], &options)?;
//! assert_eq!(plan.family, gdn_wgsl::plan::Family::Chunked { chunk: 64 });
//! assert_eq!(plan.forward[0].kernel.name(), "conv_forward");
//! assert!(plan.buffer(BufferId::Tensor(Tensor::Dqkv)).is_some());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod buffer;
mod chunked;
mod family;
mod geometry;
mod recurrent;
mod shared;
mod storage;

pub use buffer::{BufferId, BufferSpec, Contents, Element, Work};
pub use family::{Family, RECURRENT_TRAINING_INTERVAL, RECURRENT_TRAINING_TOKENS, SHORT_RECURRENT_TRAINING_TOKENS};
pub use storage::Storage;

use crate::{HeadDims, Kernel, NoVariant, Precision, UnsupportedDims};
use gdn_ref::{LayerConfig, Tensor};
use geometry::Geometry;
use std::collections::BTreeSet;

/// What a plan is laid out for beyond the layer and the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanOptions {
    /// The family of the delta rule, with its knobs (fitted to the batch by the plan).
    pub family: Family,
    /// The arithmetic of the chunked family's products.
    pub precision: Precision,
    /// Room for an initial state per sequence (and its gradient).
    pub initial_state: bool,
    /// Room for a gradient arriving at the final states.
    pub final_state_grad: bool,
    /// Room for a conv state per sequence, in and out, and both gradients.
    pub conv_state: bool,
    /// Lay out the backward too; `false` makes a forward-only plan with no backward buffers.
    pub backward: bool,
    /// How the caller's activations and their gradients are stored (f32 by default).
    pub storage: Storage,
    /// Whether the device sums over lanes by subgroup shuffles: wgpu's `SUBGROUP` with subgroups
    /// of at least [`crate::LANE_BLOCK`] invocations. The recurrent family's forward then runs
    /// [`crate::Kernel::RecurrenceForward`] or [`crate::Kernel::RecurrenceForwardChunks`], else
    /// their portable twins (`false` by default).
    pub subgroups: bool,
    /// Storage buffers a kernel of the device may bind (wgpu's
    /// `max_storage_buffers_per_shader_stage`; 8 by default, what WebGPU guarantees). Where it
    /// allows 12, the conv runs inside the q/k norms' dispatches
    /// ([`crate::Kernel::ConvQkNormGatesForward`] or
    /// [`crate::Kernel::ConvQkNormGatesProductsForward`], [`crate::Kernel::QkNormConvBackward`];
    /// kk ≤ [`crate::CONV_WINDOW`]).
    pub storage_buffers: u32,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            family: Family::chunked(),
            precision: Precision::F32,
            initial_state: false,
            final_state_grad: false,
            conv_state: false,
            backward: true,
            storage: Storage::F32,
            subgroups: false,
            storage_buffers: 8,
        }
    }
}

/// Why a plan cannot be laid out.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The layer's sizes or the batch are invalid.
    #[error(transparent)]
    Layer(#[from] gdn_ref::Error),
    /// Head dims without generated kernels.
    #[error(transparent)]
    UnsupportedDims(#[from] UnsupportedDims),
    /// A kernel asked for at head dims it is not generated for.
    #[error(transparent)]
    NoVariant(#[from] NoVariant),
    /// A family's knob out of its range.
    #[error("{name}: {reason}")]
    Knob {
        /// The knob (`checkpoint_interval`, `chunk`).
        name: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A combination the kernels do not have.
    #[error("{option}: {reason}")]
    Unsupported {
        /// The option (`precision`).
        option: &'static str,
        /// Why.
        reason: String,
    },
    /// A kernel's binding that names no buffer and that its stage gives no role: a defect of this
    /// crate (the plan tests lay out every family, precision and option to rule it out).
    #[error("kernel {kernel}: binding {binding} names no buffer and its stage binds no role to it")]
    Unbound {
        /// The kernel.
        kernel: &'static str,
        /// The binding.
        binding: &'static str,
    },
    /// A size beyond the kernels' u32 indices.
    #[error("{name}: {reason}")]
    TooLarge {
        /// The size (`nk`, `nv`, `kk`, `batch`).
        name: &'static str,
        /// What exceeds what.
        reason: String,
    },
}

/// One dispatch: a kernel over `workgroups` workgroups (the host folds them into a grid under its
/// per-dimension limit; the kernels recover the linear index as `x + y·num_workgroups.x` and skip
/// the overhang), each binding of [`Kernel::bindings`] filled by the buffer at the same position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    /// The kernel.
    pub kernel: Kernel,
    /// Workgroups, before folding.
    pub workgroups: usize,
    /// The buffer of each binding, slot by slot.
    pub bindings: Vec<BufferId>,
}

/// The forward and backward of one layer over one batch, as data.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerPlan {
    /// The head dims every kernel is generated for.
    pub dims: HeadDims,
    /// The family that runs the delta rule, its knob fitted to the batch.
    pub family: Family,
    /// Every buffer a stage binds, each once.
    pub buffers: Vec<BufferSpec>,
    /// The forward's stages, in order.
    pub forward: Vec<Stage>,
    /// The backward's stages, in order (`None` for a forward-only plan).
    pub backward: Option<Vec<Stage>>,
}

impl LayerPlan {
    /// Lays out `config` over the sequences of `offsets` (`[0, …, tokens]`, validated here) with
    /// `options`.
    pub fn new(config: &LayerConfig, offsets: &[usize], options: &PlanOptions) -> Result<Self, PlanError> {
        config.validate()?;
        check_indices(config)?;
        let dims = HeadDims::new(config.dk, config.dv)?;
        let offsets = gdn_ref::Sequences::new(&gdn_ref::Batch::Packed { cu_seqlens: offsets.to_vec() }, None)?;
        let offsets = offsets.offsets();
        let words = Tensor::Qkv.len(config, *offsets.last().expect("validated"), 1);
        if words.is_none_or(|w| w > u32::MAX as usize) {
            let reason = format!(
                "qkv's {} tokens × {} channels exceed u32 indexing",
                offsets.last().unwrap_or(&0),
                config.channels()
            );
            return Err(PlanError::TooLarge { name: "batch", reason });
        }
        options.family.validate(options.precision)?;
        let longest = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(1);
        let family = options.family.fitted(longest, options.precision);
        let g = Geometry { config, dims, family, precision: options.precision, options, offsets };
        let mut forward = Stages { geometry: &g, list: Vec::new() };
        forward.widen(&[Tensor::Qkv, Tensor::Z, Tensor::A, Tensor::B]);
        shared::forward(&mut forward)?;
        forward.narrow(&[Tensor::Out]);
        let backward = if options.backward {
            let mut backward = Stages { geometry: &g, list: Vec::new() };
            backward.widen(&[Tensor::Dout]);
            shared::backward(&mut backward)?;
            backward.narrow(&[Tensor::Dqkv, Tensor::Dz, Tensor::Da, Tensor::Db]);
            Some(backward.list)
        } else {
            None
        };
        let forward = forward.list;
        let bound: BTreeSet<BufferId> =
            forward.iter().chain(backward.iter().flatten()).flat_map(|s| s.bindings.iter().copied()).collect();
        let mut buffers = shared::buffers(&g)?;
        buffers.extend(family.buffers(&g));
        buffers.retain(|spec| bound.contains(&spec.id));
        Ok(Self { dims, family, buffers, forward, backward })
    }

    /// The spec of `id`, if a stage binds it.
    pub fn buffer(&self, id: BufferId) -> Option<&BufferSpec> {
        self.buffers.iter().find(|spec| spec.id == id)
    }
}

/// The stages of one pass as they are appended, with what they are laid out for.
pub(crate) struct Stages<'g> {
    pub geometry: &'g Geometry<'g>,
    list: Vec<Stage>,
}

impl Stages<'_> {
    /// Appends `kernel` over `workgroups`, each binding taking the buffer of its own name.
    pub fn push(&mut self, kernel: Kernel, workgroups: usize) -> Result<(), PlanError> {
        self.push_with(kernel, workgroups, &[])
    }

    /// Appends `kernel` over `workgroups`; a binding named in `roles` takes the buffer given there
    /// (`("total", Dconv)` binds dconv to the role total, for this stage only), any other the
    /// buffer of its own name.
    pub fn push_with(
        &mut self,
        kernel: Kernel,
        workgroups: usize,
        roles: &[(&'static str, BufferId)],
    ) -> Result<(), PlanError> {
        crate::has_variant(kernel, self.geometry.dims)?;
        let storage = self.geometry.options.storage;
        let bindings = kernel
            .bindings()
            .iter()
            .map(|binding| {
                let role = roles.iter().find(|(role, _)| *role == binding.name).map(|&(_, id)| id);
                let id = role
                    .or_else(|| BufferId::bound_by_name(binding.name))
                    .ok_or(PlanError::Unbound { kernel: kernel.name(), binding: binding.name })?;
                // The kernels compute on the wide copy of a tensor stored in halves.
                Ok(match id {
                    BufferId::Tensor(t) if storage.halves(t) => BufferId::Wide(t),
                    id => id,
                })
            })
            .collect::<Result<_, PlanError>>()?;
        self.list.push(Stage { kernel, workgroups, bindings });
        Ok(())
    }

    /// Appends, for each of `tensors` stored in halves, the stage that widens it into its f32 copy.
    fn widen(&mut self, tensors: &[Tensor]) {
        let (widen, _) = self.geometry.options.storage.kernels();
        self.convert(widen, tensors, |t| vec![BufferId::Tensor(t), BufferId::Wide(t)])
    }

    /// Appends, for each of `tensors` stored in halves, the stage that rounds its f32 copy back.
    fn narrow(&mut self, tensors: &[Tensor]) {
        let (_, narrow) = self.geometry.options.storage.kernels();
        self.convert(narrow, tensors, |t| vec![BufferId::Wide(t), BufferId::Tensor(t)])
    }

    fn convert(&mut self, kernel: Kernel, tensors: &[Tensor], bindings: impl Fn(Tensor) -> Vec<BufferId>) {
        let g = self.geometry;
        for &tensor in tensors.iter().filter(|&&t| g.options.storage.halves(t)) {
            let words = tensor.len(g.config, g.tokens(), g.sequences()).unwrap_or(0).div_ceil(2);
            let workgroups = words.div_ceil(crate::ELEMENTS as usize);
            self.list.push(Stage { kernel, workgroups, bindings: bindings(tensor) });
        }
    }
}

/// Refuses sizes the kernels cannot index: they index channels, conv weights and head widths with
/// u32. [`LayerPlan::new`] checks it too; a host calls it first where it sizes buffers from the
/// channels before laying out the plan.
pub fn check_indices(config: &LayerConfig) -> Result<(), PlanError> {
    let fits = |n: Option<usize>| n.filter(|&n| n <= u32::MAX as usize);
    let keys = fits(config.nk.checked_mul(config.dk).and_then(|n| n.checked_mul(2)));
    let values = fits(config.nv.checked_mul(config.dv));
    let channels = keys.zip(values).and_then(|(k, v)| fits(k.checked_add(v)));
    let too_large = |name, what: &str| PlanError::TooLarge {
        name,
        reason: format!(
            "{what} of nk = {}, nv = {}, dk = {}, dv = {}, kk = {} exceed the kernels' u32 indices",
            config.nk, config.nv, config.dk, config.dv, config.kk
        ),
    };
    if keys.is_none() {
        return Err(too_large("nk", "the key channels 2·nk·dk"));
    }
    let Some(channels) = channels else {
        return Err(too_large("nv", "the channels 2·nk·dk + nv·dv"));
    };
    if fits(channels.checked_mul(config.kk)).is_none() {
        return Err(too_large("kk", "the conv weights C·kk"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
