//! [`Decoder`]: the layer's forward for inference, one step at a time — `T` new tokens (1, or up to
//! [`MAX_DECODE_TOKENS`] drafts for speculative decoding) for each of `N` sequences — reading and
//! updating each sequence's recurrent state and conv window in place in a caller-owned
//! [`StatePool`], addressed by per-sequence slot indices (continuous batching: sequences join and
//! leave between steps, each at its own position).
//!
//! Every buffer is sized at construction for the most sequences and tokens a step may take; a step
//! allocates nothing on the device and records one dispatch of `gdn_wgsl`'s `decode_step` (or
//! `decode_step_portable`).
//!
//! # The kernel, and the race it avoids
//!
//! A step is bound by moving the states (each is read and written once: 8 sequences of qwen3-next
//! are 256 states of 64 KiB) and, at few sequences, by its latency: every dispatch boundary, every
//! barrier and every state walked after another is paid once per step. So the step is one
//! dispatch of one workgroup per (sequence, value head), every state of the step in flight at once
//! and each whole in its workgroup's registers ([`gdn_wgsl::LaneLayout`]): each workgroup
//! computes its key head's conv, SiLU and L2 norms itself, sums over state rows within groups of
//! [`gdn_wgsl::ROW_LANES`] invocations (subgroup shuffles where the device has subgroups of at least
//! 32, [`Kernel::DecodeStep`]; workgroup memory elsewhere, [`Kernel::DecodeStepPortable`]), normalises
//! o over the head's columns from workgroup memory, and shifts the conv windows once their reads
//! are done. A value head's v window is read only by its own workgroup. A key head's q and k
//! windows are read by its `rep` value heads' workgroups: each counts itself in a per-(sequence,
//! key head) counter once those reads have returned, and the last to arrive shifts them and sets
//! the counter back to zero. Slots are checked distinct on the host before anything is written, so
//! no two workgroups share a state either.

use crate::buffers::{read_f32, storage, uniform, write_bytes};
use crate::pipelines::KernelPipeline;
use crate::plan::{bind_group, folded};
use crate::state_pool::StatePool;
use crate::timestamps::Timestamps;
use crate::{Clock, Context, Error, LayerConfig, Params, Result};
use gdn_wgsl::{HeadDims, Kernel, LayerUniform, MAX_DECODE_TOKENS};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most a [`Decoder`]'s steps take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeCapacity {
    /// Sequences per step, `N`.
    pub sequences: usize,
    /// New tokens per sequence per step, `T` (at most [`MAX_DECODE_TOKENS`]).
    pub tokens: usize,
}

/// The new tokens of one step, sequence-major (`[N, T, …]` row-major f32).
#[derive(Debug, Clone, Copy)]
pub struct DecodeInputs<'a> {
    /// `[N, T, C]`.
    pub qkv: &'a [f32],
    /// `[N, T, nv·dv]`.
    pub z: &'a [f32],
    /// `[N, T, nv]`.
    pub a: &'a [f32],
    /// `[N, T, nv]`.
    pub b: &'a [f32],
}

/// A decoder's buffers that a caller fills or reads with its own device work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeBuffer {
    /// Input `[N, T, C]`.
    Qkv,
    /// Input `[N, T, nv·dv]`.
    Z,
    /// Input: `a` `[N, T, nv]` then `b` `[N, T, nv]`, `b` starting at element `N·T·nv` of the step.
    GateInputs,
    /// Output `[N, T, nv·dv]`.
    Out,
}

/// The decode kernel for `ctx`'s device: row sums through subgroup shuffles where it has them wide
/// enough ([`Context::has_wide_subgroups`]), else through workgroup memory.
pub fn decode_kernel(ctx: &Context) -> Kernel {
    if ctx.has_wide_subgroups() { Kernel::DecodeStep } else { Kernel::DecodeStepPortable }
}

/// The step's kernel, bound to the decoder's buffers and the pool's.
struct BoundKernel {
    pipeline: Arc<KernelPipeline>,
    bind_group: wgpu::BindGroup,
}

/// The decode step of one layer, bound to one [`StatePool`].
pub struct Decoder {
    ctx: Context,
    config: LayerConfig,
    capacity: DecodeCapacity,
    pool_slots: usize,
    kernel: BoundKernel,
    layer: wgpu::Buffer,
    slots: wgpu::Buffer,
    qkv: wgpu::Buffer,
    z: wgpu::Buffer,
    gate_inputs: wgpu::Buffer,
    params: wgpu::Buffer,
    out: wgpu::Buffer,
    /// The kernel's per-(sequence, key head) arrival counters, zero between steps.
    _arrivals: wgpu::Buffer,
}

impl Decoder {
    /// A decoder for the pool's layer with `params`, its buffers sized for `capacity`. Fails with a
    /// typed error for a capacity of zero or beyond [`MAX_DECODE_TOKENS`] tokens, parameters of the
    /// wrong length, a pool made from another [`Context`], device limits too small, or memory
    /// exhausted.
    pub fn new(ctx: &Context, pool: &StatePool, params: &Params, capacity: DecodeCapacity) -> Result<Self> {
        if !pool.context().same(ctx) {
            return Err(Error::Config {
                name: "pool",
                reason: "the state pool was made from another Context: make it from this one (or a clone of it)".into(),
            });
        }
        let config = *pool.config();
        let dims = HeadDims::new(config.dk, config.dv)?;
        for (name, value, most) in [
            ("sequences", capacity.sequences, u32::MAX as usize),
            ("tokens", capacity.tokens, MAX_DECODE_TOKENS as usize),
        ] {
            if value == 0 || value > most {
                return Err(Error::Config { name, reason: format!("must be 1 to {most}, got {value}") });
            }
        }
        let tokens = capacity.sequences * capacity.tokens;
        let (c, v, nv) = (config.channels(), config.value_width(), config.nv);
        let layer = uniform(ctx, "decode layer", bytemuck::bytes_of(&<LayerUniform as bytemuck::Zeroable>::zeroed()))?;
        let slots = storage(ctx, "decode slots", capacity.sequences)?;
        let qkv = storage(ctx, "decode qkv", tokens * c)?;
        let z = storage(ctx, "decode z", tokens * v)?;
        let gate_inputs = storage(ctx, "decode gate_inputs", 2 * tokens * nv)?;
        let params_buffer = storage(ctx, "decode params", 2 * nv + config.dv + c * config.kk)?;
        let out = storage(ctx, "decode out", tokens * v)?;
        let arrivals = storage(ctx, "decode arrivals", capacity.sequences * config.nk)?;
        let buffers = [
            ("layer", &layer),
            ("slots", &slots),
            ("qkv", &qkv),
            ("z", &z),
            ("gate_inputs", &gate_inputs),
            ("params", &params_buffer),
            ("state", pool.state_buffer()),
            ("conv_state", pool.conv_state_buffer()),
            ("out", &out),
            ("arrivals", &arrivals),
        ];
        let kernel = bind(ctx, decode_kernel(ctx), dims, &buffers)?;
        let decoder = Self {
            ctx: ctx.clone(),
            config,
            capacity,
            pool_slots: pool.slots(),
            kernel,
            layer,
            slots,
            qkv,
            z,
            gate_inputs,
            params: params_buffer,
            out,
            _arrivals: arrivals,
        };
        decoder.write_params(params)?;
        Ok(decoder)
    }

    /// The kernel a step records ([`decode_kernel`]).
    pub fn kernel(&self) -> Kernel {
        self.kernel.pipeline.source.kernel
    }

    /// The layer.
    pub fn config(&self) -> &LayerConfig {
        &self.config
    }

    /// The most a step takes.
    pub fn capacity(&self) -> DecodeCapacity {
        self.capacity
    }

    /// A buffer, for chaining with the caller's own device work.
    pub fn buffer(&self, which: DecodeBuffer) -> &wgpu::Buffer {
        match which {
            DecodeBuffer::Qkv => &self.qkv,
            DecodeBuffer::Z => &self.z,
            DecodeBuffer::GateInputs => &self.gate_inputs,
            DecodeBuffer::Out => &self.out,
        }
    }

    /// Uploads the parameters (packed on the device as `a_log | dt_bias | norm | conv`).
    pub fn write_params(&self, params: &Params) -> Result<()> {
        let config = &self.config;
        let parts = [
            ("a_log", params.a_log, config.nv),
            ("dt_bias", params.dt_bias, config.nv),
            ("norm", params.norm, config.dv),
            ("conv", params.conv, config.channels() * config.kk),
        ];
        let mut at = 0;
        for (name, data, expected) in parts {
            if data.len() != expected {
                return Err(Error::Length { name, expected, got: data.len() });
            }
            write_bytes(&self.ctx, name, &self.params, at, bytemuck::cast_slice(data))?;
            at += 4 * expected as u64;
        }
        Ok(())
    }

    /// Checks a step of `tokens` new tokens for each sequence of `slots`: within the capacity, each
    /// slot in the pool and none twice.
    fn check(&self, slots: &[u32], tokens: usize) -> Result<()> {
        let capacity = self.capacity;
        if slots.len() > capacity.sequences {
            return Err(Error::Capacity { name: "slots", capacity: capacity.sequences, got: slots.len() });
        }
        if tokens == 0 || tokens > capacity.tokens {
            return Err(Error::Capacity { name: "tokens", capacity: capacity.tokens, got: tokens });
        }
        for (n, &slot) in slots.iter().enumerate() {
            let slot = slot as usize;
            if slot >= self.pool_slots {
                let reason = format!("out of range: the pool has {} slots", self.pool_slots);
                return Err(Error::Slot { slot, reason });
            }
            if let Some(first) = slots[..n].iter().position(|&s| s as usize == slot) {
                let reason = format!("given to sequences {first} and {n} of the step: each needs its own");
                return Err(Error::Slot { slot, reason });
            }
        }
        Ok(())
    }

    /// Uploads the new tokens of a step of `tokens` tokens for each of `sequences` sequences.
    pub fn write_inputs(&self, inputs: &DecodeInputs, sequences: usize, tokens: usize) -> Result<()> {
        let config = &self.config;
        if sequences > self.capacity.sequences {
            return Err(Error::Capacity { name: "sequences", capacity: self.capacity.sequences, got: sequences });
        }
        if tokens > self.capacity.tokens {
            return Err(Error::Capacity { name: "tokens", capacity: self.capacity.tokens, got: tokens });
        }
        let rows = sequences * tokens;
        let parts = [
            ("qkv", inputs.qkv, config.channels()),
            ("z", inputs.z, config.value_width()),
            ("a", inputs.a, config.nv),
            ("b", inputs.b, config.nv),
        ];
        for (name, data, width) in parts {
            if data.len() != rows * width {
                return Err(Error::Length { name, expected: rows * width, got: data.len() });
            }
        }
        let ctx = &self.ctx;
        write_bytes(ctx, "qkv", &self.qkv, 0, bytemuck::cast_slice(inputs.qkv))?;
        write_bytes(ctx, "z", &self.z, 0, bytemuck::cast_slice(inputs.z))?;
        write_bytes(ctx, "a", &self.gate_inputs, 0, bytemuck::cast_slice(inputs.a))?;
        write_bytes(ctx, "b", &self.gate_inputs, 4 * inputs.a.len() as u64, bytemuck::cast_slice(inputs.b))
    }

    /// Records a step of `tokens` new tokens for each sequence of `slots` (sequence `n` reads and
    /// updates pool slot `slots[n]`) into `encoder`, reading the inputs in the decoder's buffers.
    /// Checks every argument before anything is written. The slot indices and sizes go through
    /// the queue and take effect at its next submission: submit `encoder` before recording another
    /// step. An empty `slots` records nothing.
    pub fn encode_step(&self, encoder: &mut wgpu::CommandEncoder, slots: &[u32], tokens: usize) -> Result<()> {
        self.record(encoder, slots, tokens, 1, None)
    }

    fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        slots: &[u32],
        tokens: usize,
        steps: usize,
        timestamps: Option<wgpu::ComputePassTimestampWrites>,
    ) -> Result<()> {
        self.check(slots, tokens)?;
        if slots.is_empty() {
            return Ok(());
        }
        let kernel = &self.kernel;
        let grid = folded(&self.ctx, kernel.pipeline.source.kernel.name(), slots.len() * self.config.nv)?;
        let config = &self.config;
        let layer = LayerUniform {
            tokens: (slots.len() * tokens) as u32,
            seqs: slots.len() as u32,
            nk: config.nk as u32,
            nv: config.nv as u32,
            rep: (config.nv / config.nk) as u32,
            kk: config.kk as u32,
            channels: config.channels() as u32,
            ckpt_interval: 1,
            has_h0: 1,
            has_dht: 0,
            rms_eps: config.rms_eps as f32,
            gate_parts: 0,
            has_conv_state: 1,
            chunk_bwd_base: 0,
            gate_parts_base: 0,
            hat_parts: 0,
            ckpt_columns: 0,
        };
        write_bytes(&self.ctx, "the decode uniform", &self.layer, 0, bytemuck::bytes_of(&layer))?;
        write_bytes(&self.ctx, "slots", &self.slots, 0, bytemuck::cast_slice(slots))?;
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("decode step"),
            timestamp_writes: timestamps,
        });
        pass.set_pipeline(&kernel.pipeline.pipeline);
        pass.set_bind_group(0, &kernel.bind_group, &[]);
        for _ in 0..steps {
            pass.dispatch_workgroups(grid.0, grid.1, 1);
        }
        Ok(())
    }

    /// Submits a step (see [`Decoder::encode_step`]); returns without waiting.
    pub fn step(&self, slots: &[u32], tokens: usize) -> Result<()> {
        let device = self.ctx.device();
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("decode") });
        self.record(&mut encoder, slots, tokens, 1, None)?;
        self.ctx.queue().submit([encoder.finish()]);
        match pollster::block_on(scope.pop()) {
            None => Ok(()),
            Some(e) => Err(Error::Device { during: "decode step".into(), message: e.to_string() }),
        }
    }

    /// Uploads `inputs`, runs a step and reads its output `[N, T, nv·dv]` back.
    pub fn run_step(&self, inputs: &DecodeInputs, slots: &[u32], tokens: usize) -> Result<Vec<f32>> {
        self.check(slots, tokens)?;
        self.write_inputs(inputs, slots.len(), tokens)?;
        self.step(slots, tokens)?;
        self.read_out(slots.len() * tokens)
    }

    /// Reads the first `rows` rows of the output back, waiting for the queue.
    pub fn read_out(&self, rows: usize) -> Result<Vec<f32>> {
        let most = self.capacity.sequences * self.capacity.tokens;
        if rows > most {
            return Err(Error::Capacity { name: "rows", capacity: most, got: rows });
        }
        read_f32(&self.ctx, &self.out, rows * self.config.value_width())
    }

    /// Fills the output with NaN, so that an element a step fails to write shows up in a
    /// comparison. A testing aid.
    pub fn fill_output_with_nan(&self) -> Result<()> {
        let nan = vec![f32::NAN; self.capacity.sequences * self.capacity.tokens * self.config.value_width()];
        write_bytes(&self.ctx, "a NaN fill", &self.out, 0, bytemuck::cast_slice(&nan))
    }

    /// Runs one step on the inputs in the decoder's buffers and returns its device time: GPU
    /// timestamps around its compute pass, or wall time around submit and wait on a device
    /// without them. The step updates the pool like any other.
    pub fn time_step(&self, slots: &[u32], tokens: usize) -> Result<(Duration, Clock)> {
        self.time_steps(slots, tokens, 1)
    }

    /// Runs `steps` steps back to back in one compute pass, as an engine recording many of them
    /// would (the same slots and inputs each time; each updates the pool), and returns their
    /// device time together, measured as [`Decoder::time_step`] measures one. Timing many steps
    /// at once keeps the GPU's clocks up, which a host round trip per step does not.
    pub fn time_steps(&self, slots: &[u32], tokens: usize, steps: usize) -> Result<(Duration, Clock)> {
        let ctx = &self.ctx;
        let mut encoder = ctx.device().create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("timed") });
        let Ok(timestamps) = Timestamps::new(ctx, 1) else {
            ctx.wait()?;
            let start = Instant::now();
            self.record(&mut encoder, slots, tokens, steps, None)?;
            ctx.queue().submit([encoder.finish()]);
            ctx.wait()?;
            return Ok((start.elapsed(), Clock::WallClock));
        };
        self.record(&mut encoder, slots, tokens, steps, Some(timestamps.pass_writes(0)))?;
        timestamps.resolve(&mut encoder);
        ctx.queue().submit([encoder.finish()]);
        Ok((timestamps.read(ctx)?[0], Clock::GpuTimestamps))
    }
}

/// `kernel`'s pipeline and a bind group of the buffers its bindings name.
fn bind(ctx: &Context, kernel: Kernel, dims: HeadDims, buffers: &[(&str, &wgpu::Buffer)]) -> Result<BoundKernel> {
    let pipeline = ctx.pipelines().get(ctx, kernel, dims)?;
    let resources = kernel
        .bindings()
        .iter()
        .map(|binding| {
            let (_, buffer) = buffers.iter().find(|(name, _)| *name == binding.name).ok_or_else(|| Error::Device {
                during: format!("binding {}", kernel.name()),
                message: format!("the decoder has no buffer {:?}", binding.name),
            })?;
            Ok(buffer.as_entire_binding())
        })
        .collect::<Result<Vec<_>>>()?;
    let bind_group = bind_group(ctx, &pipeline, resources);
    Ok(BoundKernel { pipeline, bind_group })
}
