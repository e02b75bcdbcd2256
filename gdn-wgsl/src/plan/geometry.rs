//! What every part of a plan needs to know of the layer and the batch, and the two things the plan
//! fixes from them: the index buffer (`templates/lib/sequences.wgsl` reads it) and the layer
//! uniform.

use super::{Family, PlanError, PlanOptions};
use crate::{HeadDims, LayerUniform, Precision};
use gdn_ref::LayerConfig;

/// The layer, the batch and the family a plan is laid out for.
pub(crate) struct Geometry<'a> {
    pub config: &'a LayerConfig,
    pub dims: HeadDims,
    pub family: Family,
    pub precision: Precision,
    pub options: &'a PlanOptions,
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

    /// Whether the chunked family's products run on tensor cores: asked for, and the heads suit
    /// them ([`Precision::suits`]; otherwise in f32).
    pub fn on_tensor_cores(&self) -> bool {
        self.precision == Precision::TensorCore && self.precision.suits(self.dims)
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

    /// The index buffer: the sequence offsets, each sequence's first stored state, then each
    /// token's sequence (`templates/lib/sequences.wgsl`).
    pub fn index(&self) -> Result<Vec<u32>, PlanError> {
        let seqs = self.offsets.windows(2).enumerate().flat_map(|(n, w)| std::iter::repeat_n(n, w[1] - w[0]));
        self.offsets.iter().chain(&self.state_slots()).copied().chain(seqs).map(|v| to_u32("batch", v)).collect()
    }

    /// The layer uniform.
    pub fn layer_uniform(&self) -> Result<LayerUniform, PlanError> {
        let (config, options) = (self.config, self.options);
        let (chunk_bwd_base, gate_parts_base) = self.family.work_bases(self);
        Ok(LayerUniform {
            tokens: to_u32("batch", self.tokens())?,
            seqs: to_u32("batch", self.sequences())?,
            nk: to_u32("nk", config.nk)?,
            nv: to_u32("nv", config.nv)?,
            rep: to_u32("nv", config.rep())?,
            kk: to_u32("kk", config.kk)?,
            channels: to_u32("nv", config.channels())?,
            ckpt_interval: to_u32("checkpoint_interval", self.family.state_interval())?,
            has_h0: options.initial_state.into(),
            has_dht: options.final_state_grad.into(),
            rms_eps: config.rms_eps as f32,
            gate_parts: to_u32("batch", self.family.gate_parts(self))?,
            has_conv_state: options.conv_state.into(),
            chunk_bwd_base: to_u32("batch", chunk_bwd_base)?,
            gate_parts_base: to_u32("batch", gate_parts_base)?,
            hat_parts: to_u32("batch", self.family.hat_parts(self))?,
            ckpt_columns: self.family.checkpoints_by_column(self).into(),
        })
    }
}

fn to_u32(name: &'static str, v: usize) -> Result<u32, PlanError> {
    u32::try_from(v).map_err(|_| PlanError::TooLarge { name, reason: format!("{v} exceeds u32 indexing") })
}
