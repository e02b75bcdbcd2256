//! Kernel families: algorithms that compute the same layer, each with its own kernels and its own
//! buffers beyond the layer's tensors. A tape runs one family, chosen in [`TapeOptions`]; a new
//! family adds a variant here and a module beside `recurrent`, and every test runs it against the
//! same reference.
//!
//! [`TapeOptions`]: crate::TapeOptions

use crate::config::{LayerConfig, TapeOptions};
use crate::plan::{Named, Plan};
use crate::{Context, Result, recurrent};
use gdn_wgsl::{HeadDims, ReduceUniform};

/// A family of kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    /// The state recurrence serial in time with the state in registers, checkpointed every
    /// `checkpoint_interval` steps; the backward replays one interval at a time. Fastest at short
    /// sequences and small batches; the only family so far.
    #[default]
    Recurrent,
}

/// What a family needs to know of the tape it serves.
pub(crate) struct Geometry<'a> {
    pub config: &'a LayerConfig,
    pub dims: HeadDims,
    pub options: &'a TapeOptions,
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
}

impl Family {
    /// Words the family appends to the `index` buffer after the sequence offsets.
    pub(crate) fn index_words(self, g: &Geometry) -> Vec<usize> {
        match self {
            Family::Recurrent => recurrent::checkpoint_offsets(g.offsets, g.options.checkpoint_interval),
        }
    }

    /// The family's own buffers: (binding name, words).
    pub(crate) fn buffer_words(self, g: &Geometry) -> Vec<(&'static str, usize)> {
        match self {
            Family::Recurrent => recurrent::buffer_words(g),
        }
    }

    /// Shapes of the backward's parameter sums, in the order the backward runs them.
    pub(crate) fn reductions(self, g: &Geometry) -> [ReduceUniform; 4] {
        match self {
            Family::Recurrent => recurrent::reductions(g),
        }
    }

    /// The recorded forward.
    pub(crate) fn forward(self, ctx: &Context, g: &Geometry, buffers: &Named) -> Result<Plan> {
        match self {
            Family::Recurrent => recurrent::forward(ctx, g, buffers),
        }
    }

    /// The recorded backward; `reduce` holds the uniforms of [`Family::reductions`].
    pub(crate) fn backward(
        self,
        ctx: &Context,
        g: &Geometry,
        buffers: &Named,
        reduce: &[(ReduceUniform, wgpu::Buffer); 4],
    ) -> Result<Plan> {
        match self {
            Family::Recurrent => recurrent::backward(ctx, g, buffers, reduce),
        }
    }
}
