//! One check of the device against the reference: what it runs, and how it is run.

use crate::report::{Report, TensorError};
use crate::{GRADIENT_BAR, OUTPUT_BAR};
use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Layer, LayerConfig};
use gdn_train::{Context, Inputs, Params, Tape, TapeOptions};

/// Every tensor a case compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tensor {
    /// Layer output.
    Out,
    /// Final states.
    Ht,
    /// Gradient of qkv.
    Dqkv,
    /// Gradient of z.
    Dz,
    /// Gradient of a.
    Da,
    /// Gradient of b.
    Db,
    /// Gradient of h0.
    Dh0,
    /// Gradient of a_log.
    DaLog,
    /// Gradient of dt_bias.
    DdtBias,
    /// Gradient of norm.
    Dnorm,
    /// Gradient of conv.
    Dconv,
}

impl Tensor {
    /// The spec's bar for this tensor.
    pub fn bar(self) -> f64 {
        if matches!(self, Tensor::Out | Tensor::Ht) { OUTPUT_BAR } else { GRADIENT_BAR }
    }

    /// Its name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Tensor::Out => "out",
            Tensor::Ht => "hT",
            Tensor::Dqkv => "dqkv",
            Tensor::Dz => "dz",
            Tensor::Da => "da",
            Tensor::Db => "db",
            Tensor::Dh0 => "dh0",
            Tensor::DaLog => "da_log",
            Tensor::DdtBias => "ddt_bias",
            Tensor::Dnorm => "dnorm",
            Tensor::Dconv => "dconv",
        }
    }
}

/// One layer, batch and input draw to check.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The layer's sizes.
    pub config: LayerConfig,
    /// The batch layout.
    pub batch: Batch,
    /// Whether the sequences start from a random `h0` (and `dh0` is checked).
    pub h0: bool,
    /// Whether a random `dhT` arrives at the final states.
    pub dht: bool,
    /// The gate regime of the draw.
    pub regime: Regime,
    /// Steps between the device's state checkpoints.
    pub checkpoint_interval: usize,
    /// Seed of the draw.
    pub seed: u64,
}

fn to_f32<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<f32> {
    values.into_iter().map(|&v| v as f32).collect()
}

impl Case {
    /// Runs the case on the device and on the reference and compares every tensor.
    pub fn run(&self, ctx: &Context) -> Result<Report, String> {
        let c = &self.config;
        let mut sampler = Sampler::new(self.seed);
        let params = sampler.params(c, self.regime);
        let inputs = sampler.inputs(c, &self.batch, self.h0, self.regime);
        let grads = sampler.output_grads(c, &self.batch, self.dht);
        let layer = Layer::new(*c, params.clone()).map_err(|e| e.to_string())?;
        let want = layer.forward(&inputs).map_err(|e| e.to_string())?;
        let want_grads = layer.backward(&inputs, &grads).map_err(|e| e.to_string())?;

        let device_config =
            gdn_train::LayerConfig { nk: c.nk, nv: c.nv, dk: c.dk, dv: c.dv, kk: c.kk, rms_eps: c.rms_eps as f32 };
        let device_batch = match &self.batch {
            Batch::Fixed { b, t } => gdn_train::Batch::Fixed { b: *b, t: *t },
            Batch::Packed { cu_seqlens } => gdn_train::Batch::Packed { cu_seqlens: cu_seqlens.clone() },
        };
        let options = TapeOptions {
            initial_state: self.h0,
            final_state_grad: self.dht,
            checkpoint_interval: self.checkpoint_interval,
        };
        let tape = Tape::new(ctx, device_config, device_batch, options).map_err(|e| e.to_string())?;
        let (a_log, dt_bias, norm, conv) =
            (to_f32(&params.a_log), to_f32(&params.dt_bias), to_f32(&params.norm), to_f32(&params.conv));
        tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv })
            .map_err(|e| e.to_string())?;
        let (qkv, z, a, b) = (to_f32(&inputs.qkv), to_f32(&inputs.z), to_f32(&inputs.a), to_f32(&inputs.b));
        let h0 = inputs.h0.as_ref().map(|h| to_f32(h.iter()));
        tape.fill_outputs_with_nan();
        let got = tape
            .run_forward(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: h0.as_deref() })
            .map_err(|e| e.to_string())?;
        let dout = to_f32(&grads.dout);
        let dht = grads.dht.as_ref().map(|d| to_f32(d.iter()));
        let got_grads = tape.run_backward(&dout, dht.as_deref()).map_err(|e| e.to_string())?;

        let mut errors = vec![
            compare(Tensor::Out, &got.out, want.out.iter()),
            compare(Tensor::Ht, &got.ht, want.ht.iter()),
            compare(Tensor::Dqkv, &got_grads.dqkv, want_grads.dqkv.iter()),
            compare(Tensor::Dz, &got_grads.dz, want_grads.dz.iter()),
            compare(Tensor::Da, &got_grads.da, want_grads.da.iter()),
            compare(Tensor::Db, &got_grads.db, want_grads.db.iter()),
            compare(Tensor::DaLog, &got_grads.da_log, want_grads.da_log.iter()),
            compare(Tensor::DdtBias, &got_grads.ddt_bias, want_grads.ddt_bias.iter()),
            compare(Tensor::Dnorm, &got_grads.dnorm, want_grads.dnorm.iter()),
            compare(Tensor::Dconv, &got_grads.dconv, want_grads.dconv.iter()),
        ];
        if let (Some(got), Some(want)) = (&got_grads.dh0, &want_grads.dh0) {
            errors.push(compare(Tensor::Dh0, got, want.iter()));
        }
        Ok(Report { errors })
    }
}

fn compare<'a>(tensor: Tensor, got: &[f32], want: impl Iterator<Item = &'a f64>) -> TensorError {
    let want: Vec<f64> = want.copied().collect();
    let got: Vec<f64> = got.iter().map(|&v| f64::from(v)).collect();
    let error = if got.len() == want.len() { relative_error_f32(&got, &want) } else { f64::INFINITY };
    TensorError { tensor, error }
}
