//! [`StatePool`]: the recurrent and conv states of many sequences on the device, one slot each,
//! owned by the caller (an inference engine's cache) and updated in place by a
//! [`crate::Decoder`]'s steps.

use crate::buffers::{read_f32_at, storage, write_bytes};
use crate::{Context, Error, LayerConfig, Result};
use gdn_wgsl::HeadDims;

/// Device buffers holding, for each of `slots` sequences, its recurrent state and its conv window.
///
/// - `state`: `[slots, nv, dk, dv]` f32, the layout of a tape's `h0`/`hT` per sequence.
/// - `conv_state`: `[slots, kk − 1, C]` f32, token-major and oldest first, the layout of a tape's
///   conv state (see [`crate::Tensor`]).
///
/// Both start at zero: a fresh sequence needs nothing written. A slot is the caller's to assign; a
/// slot a sequence left keeps its last states until written or cleared.
pub struct StatePool {
    ctx: Context,
    config: LayerConfig,
    slots: usize,
    state: wgpu::Buffer,
    conv_state: wgpu::Buffer,
}

/// One slot's states, as host vectors.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotState {
    /// `[nv, dk, dv]`.
    pub state: Vec<f32>,
    /// `[kk − 1, C]`.
    pub conv_state: Vec<f32>,
}

impl StatePool {
    /// A pool of `slots` zeroed slots for `config`. Fails with a typed error for bad sizes, head
    /// dims without kernels, device limits too small, or memory exhausted.
    pub fn new(ctx: &Context, config: LayerConfig, slots: usize) -> Result<Self> {
        config.validate()?;
        crate::config::check_rms_eps(&config)?;
        HeadDims::new(config.dk, config.dv)?;
        if slots == 0 {
            return Err(Error::Config { name: "slots", reason: "a pool needs at least one slot".into() });
        }
        let words = |per_slot: usize| {
            slots.checked_mul(per_slot).ok_or_else(|| Error::Config {
                name: "slots",
                reason: format!("{slots} slots of {per_slot} words each overflow the host's sizes"),
            })
        };
        let state = storage(ctx, "pool state", words(config.nv * config.state_size())?)?;
        let conv_state = storage(ctx, "pool conv_state", words(conv_window(&config))?)?;
        Ok(Self { ctx: ctx.clone(), config, slots, state, conv_state })
    }

    /// The context the pool's buffers live on.
    pub(crate) fn context(&self) -> &Context {
        &self.ctx
    }

    /// The layer.
    pub fn config(&self) -> &LayerConfig {
        &self.config
    }

    /// Slots in the pool.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The recurrent states, `[slots, nv, dk, dv]`, for the caller's own device work.
    pub fn state_buffer(&self) -> &wgpu::Buffer {
        &self.state
    }

    /// The conv windows, `[slots, kk − 1, C]` (one unused word when `kk = 1`).
    pub fn conv_state_buffer(&self) -> &wgpu::Buffer {
        &self.conv_state
    }

    /// Checks that `slot` is in the pool.
    pub(crate) fn check(&self, slot: usize) -> Result<()> {
        if slot >= self.slots {
            return Err(Error::Slot { slot, reason: format!("out of range: the pool has {} slots", self.slots) });
        }
        Ok(())
    }

    /// Uploads one slot's states (a sequence joining with a prefilled state).
    pub fn write_slot(&self, slot: usize, states: &SlotState) -> Result<()> {
        self.check(slot)?;
        let (state, window) = (self.config.nv * self.config.state_size(), conv_window(&self.config));
        for (name, expected, got) in
            [("state", state, states.state.len()), ("conv_state", window, states.conv_state.len())]
        {
            if got != expected {
                return Err(Error::Length { name, expected, got });
            }
        }
        write_bytes(&self.ctx, "state", &self.state, (slot * state * 4) as u64, bytemuck::cast_slice(&states.state))?;
        if window > 0 {
            let at = (slot * window * 4) as u64;
            write_bytes(&self.ctx, "conv_state", &self.conv_state, at, bytemuck::cast_slice(&states.conv_state))?;
        }
        Ok(())
    }

    /// Zeroes one slot's states (a fresh sequence joining).
    pub fn clear_slot(&self, slot: usize) -> Result<()> {
        self.check(slot)?;
        let (state, window) = (self.config.nv * self.config.state_size(), conv_window(&self.config));
        let mut encoder = self.ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.clear_buffer(&self.state, (slot * state * 4) as u64, Some((state * 4) as u64));
        if window > 0 {
            encoder.clear_buffer(&self.conv_state, (slot * window * 4) as u64, Some((window * 4) as u64));
        }
        self.ctx.queue().submit([encoder.finish()]);
        Ok(())
    }

    /// Reads one slot's states back, waiting for the queue.
    pub fn read_slot(&self, slot: usize) -> Result<SlotState> {
        self.check(slot)?;
        let (state, window) = (self.config.nv * self.config.state_size(), conv_window(&self.config));
        Ok(SlotState {
            state: read_f32_at(&self.ctx, &self.state, slot * state, state)?,
            conv_state: read_f32_at(&self.ctx, &self.conv_state, slot * window, window)?,
        })
    }
}

/// Elements of one conv window, `(kk − 1)·C`.
pub(crate) fn conv_window(config: &LayerConfig) -> usize {
    (config.kk - 1) * config.channels()
}
