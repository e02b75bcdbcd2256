//! Kernel families: algorithms for the one part of the layer that differs between them, the gated
//! delta rule (forward and backward). Everything around it — conv, q/k norms, gates, the gated norm,
//! the parameter sums — is shared (`passes`). A family names its own buffers, the partial sums of
//! `dℓ`/`dβ` it hands to the shared gate backward, and its dispatches. Adding a family adds a variant
//! here and a module beside `recurrent` and `chunked`; the device tests run every family.

use crate::pipelines::Variant;
use crate::plan::{Named, Plan};
use crate::{Context, Error, Result, chunked, recurrent};
use gdn_wgsl::{HeadDims, MAX_CHUNK, Precision};

/// A family of kernels for the delta rule, with its knobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Family {
    /// The state recurrence serial in time with the state in registers, checkpointed every
    /// `checkpoint_interval` steps; the backward replays one interval at a time. For short
    /// sequences and small batches.
    Recurrent {
        /// Steps between stored states: larger saves checkpoint memory and costs scratch memory.
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

impl Default for Family {
    fn default() -> Self {
        Family::recurrent()
    }
}

impl Family {
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
    pub(crate) fn validate(&self, precision: Precision) -> Result<()> {
        if precision != Precision::F32 && !matches!(self, Family::Chunked { .. }) {
            return Err(Error::Unsupported {
                option: "precision",
                reason: format!("{} is a precision of the chunked family's matrix products", precision.name()),
            });
        }
        match *self {
            Family::Recurrent { checkpoint_interval: 0 } => {
                Err(Error::Config { name: "checkpoint_interval", reason: "must be at least 1".into() })
            }
            Family::Chunked { chunk } if chunk == 0 || chunk > MAX_CHUNK as usize => Err(Error::Config {
                name: "chunk",
                reason: format!("{chunk} tokens: a chunk holds 1 to {MAX_CHUNK} tokens"),
            }),
            _ => Ok(()),
        }
    }

    /// Tokens between the states the forward stores (each sequence stores one at its start and
    /// one every this many tokens): the layer uniform's `ckpt_interval`.
    pub(crate) fn state_interval(&self) -> usize {
        match *self {
            Family::Recurrent { checkpoint_interval } => checkpoint_interval,
            Family::Chunked { chunk } => chunk,
        }
    }

    /// Partial sums of `dℓ` and of `dβ` per (token, value head) that the backward writes.
    pub(crate) fn gate_parts(&self, dims: HeadDims) -> usize {
        match self {
            Family::Recurrent { .. } => recurrent::gate_parts(dims),
            Family::Chunked { .. } => 1,
        }
    }

    /// The family's own buffers: (binding name, words).
    pub(crate) fn buffer_words(&self, g: &Geometry) -> Vec<(&'static str, usize)> {
        match self {
            Family::Recurrent { .. } => recurrent::buffer_words(g),
            Family::Chunked { .. } => chunked::buffer_words(g),
        }
    }

    /// Appends the forward of the delta rule: from q̂, k̂, v, the gates (and h0) to o and hT.
    pub(crate) fn forward(&self, ctx: &Context, g: &Geometry, buffers: &Named, plan: &mut Plan) -> Result<()> {
        match self {
            Family::Recurrent { .. } => recurrent::forward(ctx, g, buffers, plan),
            Family::Chunked { .. } => chunked::forward(ctx, g, buffers, plan),
        }
    }

    /// Appends the backward of the delta rule: from d_o (and dhT) to dq̂ and dk̂ per value head
    /// (`dqk_hat_heads`), dv (in `dy`), the `dℓ`/`dβ` partials and dh0.
    pub(crate) fn backward(&self, ctx: &Context, g: &Geometry, buffers: &Named, plan: &mut Plan) -> Result<()> {
        match self {
            Family::Recurrent { .. } => recurrent::backward(ctx, g, buffers, plan),
            Family::Chunked { .. } => chunked::backward(ctx, g, buffers, plan),
        }
    }
}

/// What a family needs to know of the tape it serves.
pub(crate) struct Geometry<'a> {
    pub config: &'a crate::LayerConfig,
    pub dims: HeadDims,
    pub family: Family,
    pub precision: Precision,
    /// Sequence offsets `[0, …, tokens]`.
    pub offsets: &'a [usize],
}

impl Geometry<'_> {
    pub fn tokens(&self) -> usize {
        *self.offsets.last().expect("offsets are non-empty")
    }

    pub fn sequences(&self) -> usize {
        self.offsets.len() - 1
    }

    /// What the tape's kernels are generated for.
    pub fn variant(&self) -> Variant {
        (self.dims, self.precision)
    }

    /// Slot of each sequence's first stored state (`[seqs + 1]`, the last the total): a sequence of
    /// `len` tokens stores `ceil(len / interval)` states, one at the start of each interval.
    pub fn state_slots(&self) -> Vec<usize> {
        let interval = self.family.state_interval();
        let mut first = vec![0];
        for w in self.offsets.windows(2) {
            first.push(first.last().expect("non-empty") + (w[1] - w[0]).div_ceil(interval));
        }
        first
    }

    /// Stored states of the whole batch.
    pub fn stored_states(&self) -> usize {
        *self.state_slots().last().expect("non-empty")
    }
}
