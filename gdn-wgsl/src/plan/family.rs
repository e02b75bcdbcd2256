//! Kernel families: algorithms for the one part of the layer that differs between them, the gated
//! delta rule (forward and backward). Everything around it — conv, q/k norms, gates, the gated norm,
//! the parameter sums — is shared (`shared.rs`). A family names its own buffers, the partial sums of
//! `dℓ`/`dβ` it hands to the shared gate backward, and its stages. Adding a family adds a variant
//! here and a module beside `recurrent.rs` and `chunked.rs` (plus its templates).

use super::buffer::{BufferId, Work};
use super::geometry::Geometry;
use super::{BufferSpec, PlanError, PlanOptions, Stages, chunked, recurrent};
use crate::{HeadDims, Kernel, MAX_CHUNK, Precision, RECURRENT_CHUNK};
use gdn_ref::LayerConfig;

/// Longest sequence up to which a GPU trains a batch of few heads in f32 faster with the recurrent
/// family than with the chunked one, where the recurrent backward spreads each head's columns
/// over workgroups (`Kernel::RecurrenceBackwardColumns`): measured at dk = dv = 128, nk 2, nv 4,
/// forward + backward, for one sequence of 128 and of 1 024 tokens, the recurrent family the faster
/// at both; longer sequences were not measured (BENCHMARKS.md, History: the column-block backward).
pub const RECURRENT_TRAINING_TOKENS: usize = 1024;

/// Longest sequence up to which a GPU trains a batch in f32 with the recurrent family rather than
/// the chunked one where the batch has too many heads for the column-block backward (the recurrent
/// backward then runs one workgroup per (sequence, value head), one token after another), by head
/// size: the tokens of the first entry whose bound on dk·dv the head is within; larger heads, none.
/// Up to these lengths the recurrent family is clearly faster; a little past them it is still
/// faster, by less than its tape's extra memory is worth. Measured with nk 2, nv 4 (and
/// qwen3-next's 32 value heads at dk 128), 64 sequences of T tokens, forward + backward, the
/// recurrent family against chunks of T tokens, at each square head size: at dk 256 the chunked
/// family wins from one token (BENCHMARKS.md, History: short sequences in many heads).
///
/// Only square heads were measured; others take the bound their dk·dv falls under.
pub const SHORT_RECURRENT_TRAINING_TOKENS: [(usize, usize); 4] =
    [(96 * 96, 8), (128 * 128, 5), (160 * 160, 2), (192 * 192, 1)];

/// Checkpoint interval with which the recurrent family trains the batches it is picked for
/// ([`Family::picked_for_batch`]): one chunk of the few-heads kernels ([`crate::RECURRENT_CHUNK`]),
/// so that the forward saves the state entering every chunk and the column-block backward replays
/// nothing, for eight times the checkpoint memory of the default interval: faster than interval 32
/// at dk = dv = 128, nk 2, nv 4, forward + backward, for one sequence of 128 and of 1 024 tokens
/// (BENCHMARKS.md, History: the checkpoint interval of the recurrent family).
pub const RECURRENT_TRAINING_INTERVAL: usize = RECURRENT_CHUNK as usize;

/// A family of kernels for the delta rule, with its knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Family {
    /// The state recurrence serial in time with the state in registers, checkpointed every
    /// `checkpoint_interval` steps; the backward replays one interval at a time. For short
    /// sequences and small batches.
    Recurrent {
        /// Steps between stored states: larger saves checkpoint memory and costs scratch memory.
        /// [`crate::RECURRENT_CHUNK`] (4) stores the state entering every chunk of the few-heads
        /// backward, which then replays nothing.
        checkpoint_interval: usize,
    },
    /// The chunked (WY) form: within a chunk of `chunk` tokens the recurrence becomes matrix
    /// products; one pass over chunks carries the state, stored at every chunk start. For long
    /// sequences.
    Chunked {
        /// Tokens per chunk, 1 to [`MAX_CHUNK`] (64 by default).
        chunk: usize,
    },
}

impl Family {
    /// Every family with its default knob: what tests and tools iterate, so that a family added
    /// here is tested against gdn-ref with no new test code.
    pub const ALL: [Family; 2] = [Family::recurrent(), Family::chunked()];

    /// The family of this name (`recurrent`, `chunked`) with its default knob.
    pub fn named(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether the family computes in `precision` (tensor cores are the chunked family's products).
    pub fn computes_in(&self, precision: Precision) -> bool {
        precision == Precision::F32 || matches!(self, Family::Chunked { .. })
    }

    /// The same family storing a state every `interval` tokens: its checkpoint interval, or its
    /// chunk rounded up to what `precision` accepts (a multiple of its smallest chunk, at most
    /// [`MAX_CHUNK`]).
    pub fn with_interval(self, interval: usize, precision: Precision) -> Self {
        match self {
            Family::Recurrent { .. } => Family::Recurrent { checkpoint_interval: interval },
            Family::Chunked { .. } => {
                let step = precision.min_chunk() as usize;
                Family::Chunked { chunk: interval.max(1).next_multiple_of(step).min(MAX_CHUNK as usize) }
            }
        }
    }

    /// The family a layer takes when its caller names none (the plan then fits its knob to the
    /// batch, [`Family::fitted`]), from the times in BENCHMARKS.md; `software`: whether the adapter
    /// is a software one; `storage_buffers`: the device's storage buffers per shader stage;
    /// `backward`: whether the backward is recorded; `precision`: that of the products.
    /// - Tensor cores: the chunked family, whose products they are (for a forward alone the
    ///   recurrent family in f32 is faster still, at S1 and S4: BENCHMARKS.md's tables).
    /// - On a GPU in f32, for training the chunked family: with many heads its step (forward +
    ///   backward) is far faster than the recurrent one, whose backward then runs one workgroup per
    ///   (sequence, head) (BENCHMARKS.md, S1), and the recurrent family cannot hold that backward's
    ///   scratch for thousands of shorter sequences. (Short batches of few heads train faster with
    ///   the recurrent family: [`Family::picked_for_batch`].) For a forward-only tape the recurrent
    ///   family, whose forward is faster there (BENCHMARKS.md, S1 and S4).
    /// - On a software adapter (lavapipe) in f32, the recurrent family: several times faster for a
    ///   short batch and far faster at a decode step, the chunked family's 256-invocation
    ///   workgroups and barriers being costly on a CPU.
    /// - Where the device allows fewer storage buffers per stage than the recurrent backward binds
    ///   (12; WebGPU adapters offer 8 to 10), the chunked family, whose f32 kernels bind at most 10.
    pub fn picked(software: bool, storage_buffers: u32, backward: bool, precision: Precision) -> Self {
        if precision == Precision::TensorCore || (backward && !software) || !recurrent_fits(backward, storage_buffers) {
            Family::chunked()
        } else {
            Family::recurrent()
        }
    }

    /// The family a layer takes for a batch (its sequence `offsets`) when its caller names none:
    /// [`Family::picked`]'s with its knob set for the batch ([`Family::for_batch`]), but for
    /// training in f32 on a GPU the recurrent family
    /// - where the batch has few heads and no sequence longer than [`RECURRENT_TRAINING_TOKENS`],
    ///   its backward then spreading each head's columns over workgroups, checkpointed every
    ///   [`RECURRENT_TRAINING_INTERVAL`] tokens;
    /// - where it has more heads but no sequence longer than its head size's
    ///   [`SHORT_RECURRENT_TRAINING_TOKENS`] (64 sequences of one token, say), with its default
    ///   interval.
    pub fn picked_for_batch(
        software: bool,
        storage_buffers: u32,
        backward: bool,
        precision: Precision,
        config: &LayerConfig,
        offsets: &[usize],
    ) -> Self {
        let gpu_training = backward && !software && precision == Precision::F32;
        if gpu_training
            && recurrent_fits(backward, storage_buffers)
            && let Some(family) = recurrent_for_training(config, offsets)
        {
            return family;
        }
        let lengths = offsets.windows(2).map(|w| w[1].saturating_sub(w[0]));
        Family::picked(software, storage_buffers, backward, precision).for_batch(lengths, config.nv, precision)
    }

    /// The family picked for a batch (where its caller named none) with its knob set for the
    /// batch: the chunked family takes 32-token chunks where 64-token ones would give the passes
    /// over chunks few (sequence, value head, chunk) jobs to spread over the GPU — at most 8 in
    /// f32, 16 on tensor cores; `lengths` are the batch's sequence lengths. Measured at dk = dv =
    /// 128, nv = 4, forward + backward, 32 against 64 tokens: faster for one sequence of 128 tokens
    /// (8 jobs) in both precisions and of 256 (16 jobs) on tensor cores, slower for 1 × 512 and
    /// 8 × 1 024 (BENCHMARKS.md, History: 32-token chunks for short batches).
    pub fn for_batch(self, lengths: impl IntoIterator<Item = usize>, nv: usize, precision: Precision) -> Self {
        let Family::Chunked { chunk } = self else { return self };
        let jobs: usize = lengths.into_iter().map(|t| t.div_ceil(MAX_CHUNK as usize) * nv).sum();
        let few = if precision == Precision::TensorCore { 16 } else { 8 };
        if chunk == MAX_CHUNK as usize && jobs <= few { Family::Chunked { chunk: 32 } } else { self }
    }

    /// The recurrent family with its default checkpoint interval, 32.
    pub const fn recurrent() -> Self {
        Family::Recurrent { checkpoint_interval: 32 }
    }

    /// The chunked family with its default chunk, 64 tokens.
    pub const fn chunked() -> Self {
        Family::Chunked { chunk: MAX_CHUNK as usize }
    }

    /// The family's name: `recurrent` or `chunked`.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Recurrent { .. } => "recurrent",
            Family::Chunked { .. } => "chunked",
        }
    }

    /// Checks the knobs, and that the family computes in `precision`.
    pub fn validate(&self, precision: Precision) -> Result<(), PlanError> {
        if !self.computes_in(precision) {
            return Err(PlanError::Unsupported {
                option: "precision",
                reason: format!("{} is a precision of the chunked family's matrix products", precision.name()),
            });
        }
        match *self {
            Family::Recurrent { checkpoint_interval: 0 } => {
                Err(PlanError::Knob { name: "checkpoint_interval", reason: "must be at least 1".into() })
            }
            Family::Chunked { chunk }
                if chunk < precision.min_chunk() as usize
                    || chunk > MAX_CHUNK as usize
                    || chunk % precision.min_chunk() as usize != 0 =>
            {
                Err(PlanError::Knob {
                    name: "chunk",
                    reason: format!(
                        "{chunk} tokens: a chunk holds a multiple of {} tokens up to {MAX_CHUNK} with {} products",
                        precision.min_chunk(),
                        precision.name()
                    ),
                })
            }
            _ => Ok(()),
        }
    }

    /// The same family with its knob cut to what a batch whose longest sequence has `longest`
    /// tokens can use: a checkpoint interval at most `longest`; a chunk at most the power of two at
    /// or above `longest` (and at least the precision's smallest chunk). Results are the same up to
    /// rounding; buffers and padded work shrink (a decode step of one token per sequence runs
    /// one-token chunks, not 64-token ones).
    pub fn fitted(self, longest: usize, precision: Precision) -> Self {
        match self {
            Family::Recurrent { checkpoint_interval } => {
                Family::Recurrent { checkpoint_interval: checkpoint_interval.min(longest.max(1)) }
            }
            Family::Chunked { chunk } => {
                let fit = longest.next_power_of_two().max(precision.min_chunk() as usize);
                Family::Chunked { chunk: chunk.min(fit) }
            }
        }
    }

    /// Tokens between the states the forward stores (each sequence stores one at its start and
    /// one every this many tokens): the layer uniform's `ckpt_interval`.
    pub fn state_interval(&self) -> usize {
        match *self {
            Family::Recurrent { checkpoint_interval } => checkpoint_interval,
            Family::Chunked { chunk } => chunk,
        }
    }

    /// Partial sums of `dℓ` and of `dβ` per (token, value head) that the backward writes.
    pub(crate) fn gate_parts(&self, g: &Geometry) -> usize {
        match self {
            Family::Recurrent { .. } => recurrent::gate_parts(g),
            Family::Chunked { .. } => 1,
        }
    }

    /// Partial rows of `dq̂` and of `dk̂` per (token, value head) that the backward writes into
    /// `dqk_hat_heads`.
    pub(crate) fn hat_parts(&self, g: &Geometry) -> usize {
        match self {
            Family::Recurrent { .. } => recurrent::hat_parts(g),
            Family::Chunked { .. } => 1,
        }
    }

    /// The buffer the family's backward writes its `dℓ`/`dβ` partial sums into, which the shared
    /// gate backward binds as `gate_grad_parts`.
    pub(crate) fn gate_parts_buffer(&self, g: &Geometry) -> BufferId {
        match self {
            Family::Recurrent { .. } => BufferId::Work(Work::GateGradParts),
            Family::Chunked { .. } => chunked::gate_parts_buffer(g),
        }
    }

    /// The layer uniform's `chunk_bwd_base` and `gate_parts_base`: where the backward scratch and
    /// the `dℓ`/`dβ` partial sums start in a work buffer shared with the forward products (see
    /// [`crate::LayerUniform`]).
    pub(crate) fn work_bases(&self, g: &Geometry) -> (usize, usize) {
        match self {
            Family::Chunked { .. } if !g.on_tensor_cores() => {
                let regions = chunked::work_regions(g);
                (regions.backward, regions.gate_parts)
            }
            _ => (0, 0),
        }
    }

    /// The family's own buffers.
    pub(crate) fn buffers(&self, g: &Geometry) -> Vec<BufferSpec> {
        match self {
            Family::Recurrent { .. } => recurrent::buffers(g),
            Family::Chunked { .. } => chunked::buffers(g),
        }
    }

    /// Whether the family stores its checkpoints a column at a time
    /// ([`crate::LayerUniform::ckpt_columns`]): where the recurrent backward spreads each head's
    /// columns over workgroups (its forward does too), whose warps each own a column.
    pub(crate) fn checkpoints_by_column(&self, g: &Geometry) -> bool {
        matches!(self, Family::Recurrent { .. }) && recurrent::backward_in_columns(g)
    }

    /// The forward's q/k norm and gate kernel: for the chunk-solved recurrences (few heads), the
    /// one that also writes each k̂'s products with the three before it.
    pub(crate) fn qk_norm_kernel(&self, g: &Geometry) -> Kernel {
        match self {
            Family::Recurrent { .. } if recurrent::few_heads(g) => Kernel::QkNormGatesProductsForward,
            _ => Kernel::QkNormGatesForward,
        }
    }

    /// Appends the forward of the delta rule: from q̂, k̂, v, the gates (and h0) to o and hT.
    pub(crate) fn forward(&self, stages: &mut Stages) -> Result<(), PlanError> {
        match self {
            Family::Recurrent { .. } => recurrent::forward(stages),
            Family::Chunked { .. } => chunked::forward(stages),
        }
    }

    /// Appends the backward of the delta rule: from d_o (and dhT) to dq̂ and dk̂ per value head
    /// (`dqk_hat_heads`), dv (in `dy`), the `dℓ`/`dβ` partials and dh0.
    pub(crate) fn backward(&self, stages: &mut Stages) -> Result<(), PlanError> {
        match self {
            Family::Recurrent { .. } => recurrent::backward(stages),
            Family::Chunked { .. } => chunked::backward(stages),
        }
    }
}

/// Whether the device binds as many storage buffers per stage as the recurrent family's kernels
/// for these passes need.
fn recurrent_fits(backward: bool, storage_buffers: u32) -> bool {
    !backward || Kernel::RecurrenceBackward.storage_buffers() <= storage_buffers
}

/// The recurrent family with which a batch (its sequence `offsets`) of these heads trains faster
/// than with the chunked one, if any:
/// - where its sequences are short enough ([`RECURRENT_TRAINING_TOKENS`]) and its heads few enough
///   for the backward to spread each head's columns over workgroups, at
///   [`RECURRENT_TRAINING_INTERVAL`]. Its checkpoints then take dk·dv/4 words a (token, value
///   head), half the column-block backward's dq̂/dk̂ partials, which `recurrent::backward_in_columns`
///   keeps within what lavapipe binds;
/// - else where its sequences are within [`SHORT_RECURRENT_TRAINING_TOKENS`], at the default
///   interval, which the tape cuts to the longest sequence: one checkpoint a sequence, as the
///   chunked family's one chunk stores one state.
fn recurrent_for_training(config: &LayerConfig, offsets: &[usize]) -> Option<Family> {
    let longest = offsets.windows(2).map(|w| w[1].saturating_sub(w[0])).max().unwrap_or(0);
    let (Ok(dims), true) = (HeadDims::new(config.dk, config.dv), longest <= RECURRENT_TRAINING_TOKENS) else {
        return None;
    };
    let picked = Family::Recurrent { checkpoint_interval: RECURRENT_TRAINING_INTERVAL };
    let family = picked.fitted(longest, Precision::F32);
    let options = PlanOptions { family, backward: true, ..PlanOptions::default() };
    let g = Geometry { config, dims, family, precision: Precision::F32, options: &options, offsets };
    if recurrent::backward_in_columns(&g) {
        Some(picked)
    } else {
        (longest <= short_training_tokens(config.dk * config.dv)).then_some(Family::recurrent())
    }
}

/// [`SHORT_RECURRENT_TRAINING_TOKENS`]' tokens for heads of dk·dv = `head_size`: 0 past its bounds.
fn short_training_tokens(head_size: usize) -> usize {
    SHORT_RECURRENT_TRAINING_TOKENS.iter().find(|&&(bound, _)| head_size <= bound).map_or(0, |&(_, tokens)| tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_are_cut_to_the_longest_sequence_and_never_below_the_precision_s_smallest_chunk() {
        let recurrent = Family::Recurrent { checkpoint_interval: 32 };
        assert_eq!(recurrent.fitted(1, Precision::F32), Family::Recurrent { checkpoint_interval: 1 });
        assert_eq!(recurrent.fitted(100, Precision::F32), recurrent);
        let chunked = Family::chunked();
        assert_eq!(chunked.fitted(1, Precision::F32), Family::Chunked { chunk: 1 });
        assert_eq!(chunked.fitted(25, Precision::F32), Family::Chunked { chunk: 32 });
        assert_eq!(chunked.fitted(1000, Precision::F32), chunked);
        assert_eq!(chunked.fitted(3, Precision::TensorCore), Family::Chunked { chunk: 16 });
        assert_eq!(Family::Chunked { chunk: 5 }.fitted(40, Precision::F32), Family::Chunked { chunk: 5 });
    }

    #[test]
    fn a_device_with_too_few_storage_buffers_for_the_recurrent_backward_gets_the_chunked_family() {
        assert_eq!(Kernel::RecurrenceBackward.storage_buffers(), 12);
        // The few-heads backward binds no more; every recurrent forward fits wgpu's default 8.
        assert!(Kernel::RecurrenceBackwardColumns.storage_buffers() <= 12);
        let forwards =
            [Kernel::RecurrenceForward, Kernel::RecurrenceForwardChunks, Kernel::RecurrenceForwardChunksPortable];
        assert!(forwards.iter().all(|k| k.storage_buffers() <= 8));
        assert_eq!(Family::picked(true, 16, true, Precision::F32), Family::recurrent());
        assert_eq!(Family::picked(true, 10, true, Precision::F32), Family::chunked());
        assert_eq!(Family::picked(true, 10, false, Precision::F32), Family::recurrent());
        assert_eq!(Family::picked(false, 64, true, Precision::F32), Family::chunked());
        // S4's one sequence of 128 tokens over 4 value heads: 8 jobs of 64 tokens, 32-token chunks.
        let half = Family::Chunked { chunk: 32 };
        assert_eq!(Family::chunked().for_batch([128], 4, Precision::F32), half);
        assert_eq!(Family::chunked().for_batch([256], 4, Precision::F32), Family::chunked());
        assert_eq!(Family::chunked().for_batch([256], 4, Precision::TensorCore), half);
        assert_eq!(Family::chunked().for_batch([1024; 8], 32, Precision::TensorCore), Family::chunked());
        assert_eq!(Family::recurrent().for_batch([128], 4, Precision::F32), Family::recurrent());
        let chunked_f32 = [
            Kernel::ChunkPrepare,
            Kernel::ChunkState,
            Kernel::ChunkOutput,
            Kernel::ChunkStateBackward,
            Kernel::ChunkGrad,
        ];
        assert!(chunked_f32.iter().all(|k| k.storage_buffers() <= 10));
    }

    #[test]
    fn a_gpu_trains_few_heads_or_a_few_tokens_in_f32_with_the_recurrent_family() {
        let qwen = LayerConfig::new(2, 4, 128, 128, 4).unwrap();
        let gpu = |offsets: &[usize], storage_buffers: u32, precision: Precision| {
            Family::picked_for_batch(false, storage_buffers, true, precision, &qwen, offsets)
        };
        // S4 and up to RECURRENT_TRAINING_TOKENS tokens a sequence: recurrent, a checkpoint a chunk.
        let every_chunk = Family::Recurrent { checkpoint_interval: RECURRENT_TRAINING_INTERVAL };
        assert_eq!(RECURRENT_TRAINING_INTERVAL, RECURRENT_CHUNK as usize);
        assert_eq!(gpu(&[0, 128], 16, Precision::F32), every_chunk);
        assert_eq!(gpu(&[0, 512, 1024], 16, Precision::F32), every_chunk);
        assert_eq!(gpu(&[0, 1024], 16, Precision::F32), every_chunk);
        // Longer, on tensor cores, or where the recurrent backward's buffers do not fit the device:
        // the chunked family, its knob set for the batch.
        assert_eq!(gpu(&[0, 1025], 16, Precision::F32), Family::chunked());
        assert_eq!(gpu(&[0, 128], 16, Precision::TensorCore), Family::Chunked { chunk: 32 });
        assert_eq!(gpu(&[0, 128], 10, Precision::F32), Family::Chunked { chunk: 32 });
        // Many heads (8 sequences of 32 value heads: 2 048 workgroups of 16 columns): chunked.
        let s1_heads = LayerConfig::new(16, 32, 128, 128, 4).unwrap();
        let eight: Vec<usize> = (0..=8).map(|n| 128 * n).collect();
        assert_eq!(Family::picked_for_batch(false, 16, true, Precision::F32, &s1_heads, &eight), Family::chunked());
        // Many heads and short sequences: the recurrent family, up to the head size's tokens.
        let batch = |tokens: usize| -> Vec<usize> { (0..=64).map(|n| tokens * n).collect() };
        let many = |config: &LayerConfig, tokens: usize| {
            Family::picked_for_batch(false, 16, true, Precision::F32, config, &batch(tokens))
        };
        assert_eq!(many(&s1_heads, 1), Family::recurrent());
        assert_eq!(many(&s1_heads, 5), Family::recurrent());
        assert_eq!(many(&s1_heads, 6), Family::chunked());
        let heads = |d: usize| LayerConfig::new(2, 4, d, d, 4).unwrap();
        assert_eq!(many(&heads(96), 8), Family::recurrent());
        assert_eq!(many(&heads(96), 9), Family::chunked());
        assert_eq!(many(&heads(160), 2), Family::recurrent());
        assert_eq!(many(&heads(160), 3), Family::chunked());
        assert_eq!(many(&heads(192), 1), Family::recurrent());
        assert_eq!(many(&heads(192), 2), Family::chunked());
        assert_eq!(many(&heads(256), 1), Family::chunked());
        // Not on tensor cores, nor where the recurrent backward's buffers do not fit the device.
        let one_token = batch(1);
        assert_eq!(
            Family::picked_for_batch(false, 16, true, Precision::TensorCore, &s1_heads, &one_token),
            Family::chunked()
        );
        assert_eq!(Family::picked_for_batch(false, 10, true, Precision::F32, &s1_heads, &one_token), Family::chunked());
        // A forward alone, or a software adapter: Family::picked's recurrent family.
        assert_eq!(Family::picked_for_batch(false, 16, false, Precision::F32, &qwen, &[0, 4096]), Family::recurrent());
        assert_eq!(Family::picked_for_batch(true, 16, true, Precision::F32, &qwen, &[0, 4096]), Family::recurrent());
    }

    #[test]
    fn every_family_is_found_by_name_and_takes_any_interval_its_precision_accepts() {
        for family in Family::ALL {
            assert_eq!(Family::named(family.name()), Some(family));
            for precision in [Precision::F32, Precision::TensorCore].into_iter().filter(|&p| family.computes_in(p)) {
                for interval in [1, 3, 16, 40, 64, 1000] {
                    let knob = family.with_interval(interval, precision);
                    let valid = knob.validate(precision);
                    assert!(valid.is_ok() || matches!(family, Family::Recurrent { .. }), "{knob:?}: {valid:?}");
                }
            }
        }
        assert_eq!(Family::chunked().with_interval(5, Precision::TensorCore), Family::Chunked { chunk: 16 });
        assert_eq!(Family::recurrent().with_interval(5, Precision::F32), Family::Recurrent { checkpoint_interval: 5 });
    }
}
