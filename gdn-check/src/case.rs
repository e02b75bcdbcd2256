//! One check of the device against the reference: what it runs, and how it is run.

use crate::report::{Report, TensorError};
use crate::{
    BF16_STORAGE_BAR, F16_ROUNDING, F16_STORAGE_BAR, GRADIENT_BAR, OUTPUT_BAR, TENSOR_CORE_GRADIENT_BAR,
    TENSOR_CORE_OUTPUT_BAR,
};
use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Layer, LayerConfig, LayerInputs, LayerParams, OutputGrads, Tensor};
use gdn_train::{Context, Family, Inputs, Params, Precision, Storage, Tape, TapeOptions};

/// The spec's bar for `tensor` when the layer computes in `precision` on inputs drawn in `regime`;
/// `None` where the spec asks only for a report: tensor-core gradients in the extreme gate regimes
/// (`dβ` is ill-conditioned there and f16 operands lose what the f32 ones keep).
/// A tensor stored in halves (`storage`) is held to at least the storage's rounding bar; in f16,
/// only on realistic inputs: the extreme gate regimes' gradients (`db` when every write is full,
/// `da` when decays vanish) fall below f16's range (normal from 6.1e-5, subnormal to 6e-8), so
/// there they are reported, not judged.
pub fn bar(tensor: Tensor, precision: Precision, regime: Regime, storage: Storage) -> Option<f64> {
    let output = matches!(tensor, Tensor::Out | Tensor::Ht);
    let bar = match (precision, output) {
        (Precision::TensorCore, true) => Some(TENSOR_CORE_OUTPUT_BAR),
        (Precision::TensorCore, false) if regime == Regime::Typical => Some(TENSOR_CORE_GRADIENT_BAR),
        (Precision::TensorCore, false) => None,
        (_, true) => Some(OUTPUT_BAR),
        (_, false) => Some(GRADIENT_BAR),
    };
    let storage_bar = if storage == Storage::F16 { F16_STORAGE_BAR } else { BF16_STORAGE_BAR };
    match storage.halves(tensor) {
        false => bar,
        true if storage == Storage::F16 && regime != Regime::Typical => None,
        true => bar.map(|b| b.max(storage_bar)),
    }
}

/// `values` rounded to `storage` (to nearest, ties to even), as the device holds them.
fn rounded(storage: Storage, values: &mut ndarray::Array3<f64>) {
    match storage {
        Storage::F16 => values.mapv_inplace(|x| f64::from(half::f16::from_f64(x).to_f32())),
        Storage::Bf16 => values.mapv_inplace(|x| f64::from(half::bf16::from_f64(x).to_f32())),
        _ => {}
    }
}

/// Why a case could not be run (as opposed to running and missing its bars).
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// The reference rejected the case.
    #[error("reference: {0}")]
    Reference(#[from] gdn_ref::Error),
    /// The device rejected the case or failed.
    #[error("device: {0}")]
    Device(#[from] gdn_train::Error),
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
    /// The device's kernel family, with its knobs.
    pub family: Family,
    /// The arithmetic of the family's matrix products.
    pub precision: Precision,
    /// How the activations and their gradients are stored: f32, or halves, whose inputs the draw
    /// rounds to the format (so that the reference reads what the device reads) and whose outputs
    /// are held to the storage's bar ([`bar`]).
    pub storage: Storage,
    /// Seed of the draw.
    pub seed: u64,
}

/// The random tensors of a case, drawn as the spec says (f32-representable values).
pub struct Draw {
    /// Parameters.
    pub params: LayerParams,
    /// Inputs of the forward.
    pub inputs: LayerInputs,
    /// Gradients arriving at the outputs.
    pub grads: OutputGrads,
}

fn to_f32<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<f32> {
    values.into_iter().map(|&v| v as f32).collect()
}

impl Draw {
    /// What the caller writes into `tensor` for this draw, as f32: an input, a parameter or a
    /// gradient arriving at an output (empty for a tensor the draw has not, or that the layer
    /// writes).
    pub fn caller_values(&self, tensor: Tensor) -> Vec<f32> {
        let (p, x, g) = (&self.params, &self.inputs, &self.grads);
        match tensor {
            Tensor::Qkv => to_f32(&x.qkv),
            Tensor::Z => to_f32(&x.z),
            Tensor::A => to_f32(&x.a),
            Tensor::B => to_f32(&x.b),
            Tensor::H0 => x.h0.as_ref().map_or_else(Vec::new, |h| to_f32(h.iter())),
            Tensor::ALog => to_f32(&p.a_log),
            Tensor::DtBias => to_f32(&p.dt_bias),
            Tensor::Norm => to_f32(&p.norm),
            Tensor::Conv => to_f32(&p.conv),
            Tensor::Dout => to_f32(&g.dout),
            Tensor::Dht => g.dht.as_ref().map_or_else(Vec::new, |d| to_f32(d.iter())),
            _ => Vec::new(),
        }
    }
}

impl Case {
    /// The case's tensors, a function of its seed.
    pub fn draw(&self) -> Draw {
        let mut sampler = Sampler::new(self.seed);
        let mut draw = Draw {
            params: sampler.params(&self.config, self.regime),
            inputs: sampler.inputs(&self.config, &self.batch, self.h0, self.regime),
            grads: sampler.output_grads(&self.config, &self.batch, self.dht),
        };
        let x = &mut draw.inputs;
        for values in [&mut x.qkv, &mut x.z, &mut x.a, &mut x.b, &mut draw.grads.dout] {
            rounded(self.storage, values);
        }
        draw
    }

    /// A device tape for the case's layer and batch, with `draw` uploaded: parameters, inputs and
    /// output gradients.
    pub fn tape(&self, ctx: &Context, draw: &Draw) -> Result<Tape, gdn_train::Error> {
        let tape = self.empty_tape(ctx)?;
        self.upload(&tape, draw)?;
        Ok(tape)
    }

    /// A device tape for the case's layer and batch, nothing uploaded: creating it checks the
    /// shape against the device before anything is drawn.
    pub fn empty_tape(&self, ctx: &Context) -> Result<Tape, gdn_train::Error> {
        Tape::new(ctx, self.config, self.batch.clone(), self.tape_options())
    }

    /// The options of the case's tape: its states, family, precision and storage.
    pub fn tape_options(&self) -> TapeOptions {
        TapeOptions {
            initial_state: self.h0,
            final_state_grad: self.dht,
            family: Some(self.family),
            precision: self.precision,
            storage: self.storage,
            ..TapeOptions::default()
        }
    }

    /// Uploads `draw` into `tape`: parameters, inputs and output gradients.
    pub fn upload(&self, tape: &Tape, draw: &Draw) -> Result<(), gdn_train::Error> {
        let p = &draw.params;
        let (a_log, dt_bias, norm, conv) = (to_f32(&p.a_log), to_f32(&p.dt_bias), to_f32(&p.norm), to_f32(&p.conv));
        tape.write_params(&Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv })?;
        let x = &draw.inputs;
        let (qkv, z, a, b) = (to_f32(&x.qkv), to_f32(&x.z), to_f32(&x.a), to_f32(&x.b));
        let h0 = x.h0.as_ref().map(|h| to_f32(h.iter()));
        tape.write_inputs(&Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: h0.as_deref(), conv_state: None })?;
        let dht = draw.grads.dht.as_ref().map(|d| to_f32(d.iter()));
        tape.write_output_grads(&to_f32(&draw.grads.dout), dht.as_deref())
    }

    /// Runs the case on the device, its outputs poisoned with NaN first, and on the reference, and
    /// compares every tensor.
    pub fn run(&self, ctx: &Context) -> Result<Report, CaseError> {
        self.run_keeping(ctx).map(|(report, _)| report)
    }

    /// [`Case::run`], also handing back what the device computed.
    pub fn run_keeping(&self, ctx: &Context) -> Result<(Report, DeviceResults), CaseError> {
        self.run_draw(ctx, &self.draw())
    }

    /// [`Case::run_keeping`] on tensors the caller drew (or loaded) instead of the case's own.
    pub fn run_draw(&self, ctx: &Context, draw: &Draw) -> Result<(Report, DeviceResults), CaseError> {
        let layer = Layer::new(self.config, draw.params.clone())?;
        let want = layer.forward(&draw.inputs)?;
        let want_grads = layer.backward(&draw.inputs, &draw.grads)?;
        let device = self.on_device(ctx, draw)?;
        Ok((self.compare_with(draw, &device, &want, &want_grads), device))
    }

    /// Forward and backward of `draw` on a fresh tape, its outputs poisoned with NaN first.
    pub fn on_device(&self, ctx: &Context, draw: &Draw) -> Result<DeviceResults, CaseError> {
        let tape = self.tape(ctx, draw)?;
        tape.fill_outputs_with_nan()?;
        tape.forward()?;
        let outputs = tape.read_outputs()?;
        tape.backward()?;
        Ok(DeviceResults { outputs, gradients: tape.read_gradients()?, device_bytes: tape.device_bytes() })
    }

    /// What the device must reproduce of the case, per tensor: gdn-ref's values, in the layout of
    /// `gdn_train`'s outputs and gradients, with the spec's bar and the cancellation of a sum that
    /// widens it ([`TensorError::cancellation`]). `dh0` only where the case has `h0`.
    pub fn expectations(
        &self,
        draw: &Draw,
        want: &gdn_ref::ForwardResult,
        want_grads: &gdn_ref::Gradients,
    ) -> Vec<Expected> {
        let expected = |tensor, values: &mut dyn Iterator<Item = &f64>| Expected {
            tensor,
            values: values.copied().collect(),
            bar: bar(tensor, self.precision, self.regime, self.storage),
            cancellation: 1.0,
        };
        // On tensor cores the products' operands are rounded to f16: where a per-token dℓ (and so
        // da, and the gate parameters' sums of it) cancels within its own dk·dv terms, that
        // rounding shows scaled by the cancellation ([`Expected::rounding_in`]).
        let rounded_operands = self.precision == Precision::TensorCore;
        let da = expected(Tensor::Da, &mut want_grads.da.iter());
        let da_log = expected(Tensor::DaLog, &mut want_grads.da_log.iter())
            .cancelling(&want_grads.da_log, &gate_magnitudes(draw, &want_grads.da, true));
        let ddt_bias = expected(Tensor::DdtBias, &mut want_grads.ddt_bias.iter())
            .cancelling(&want_grads.ddt_bias, &gate_magnitudes(draw, &want_grads.da, false));
        let (da, da_log, ddt_bias) = match rounded_operands {
            false => (da, da_log, ddt_bias),
            true => (
                da.rounding_in(F16_ROUNDING, want_grads.da.iter(), want_grads.da_terms.iter()),
                da_log.rounding_in(
                    F16_ROUNDING,
                    want_grads.da_log.iter(),
                    gate_magnitudes(draw, &want_grads.da_terms, true).iter(),
                ),
                ddt_bias.rounding_in(
                    F16_ROUNDING,
                    want_grads.ddt_bias.iter(),
                    gate_magnitudes(draw, &want_grads.da_terms, false).iter(),
                ),
            ),
        };
        let mut all = vec![
            expected(Tensor::Out, &mut want.out.iter()),
            expected(Tensor::Ht, &mut want.ht.iter()),
            expected(Tensor::Dqkv, &mut want_grads.dqkv.iter()),
            expected(Tensor::Dz, &mut want_grads.dz.iter()),
            da,
            expected(Tensor::Db, &mut want_grads.db.iter()),
            da_log,
            ddt_bias,
            expected(Tensor::Dnorm, &mut want_grads.dnorm.iter()),
            expected(Tensor::Dconv, &mut want_grads.dconv.iter()),
        ];
        if let Some(want) = &want_grads.dh0 {
            all.push(expected(Tensor::Dh0, &mut want.iter()));
        }
        all
    }

    /// Compares `device` with the reference's results for `draw`, tensor by tensor.
    pub(crate) fn compare_with(
        &self,
        draw: &Draw,
        device: &DeviceResults,
        want: &gdn_ref::ForwardResult,
        want_grads: &gdn_ref::Gradients,
    ) -> Report {
        let errors = self
            .expectations(draw, want, want_grads)
            .into_iter()
            .map(|e| {
                let got: Vec<f64> = device.tensor(e.tensor).iter().map(|&v| f64::from(v)).collect();
                let error =
                    if got.len() == e.values.len() { relative_error_f32(&got, &e.values) } else { f64::INFINITY };
                TensorError { tensor: e.tensor, error, bar: e.bar, cancellation: e.cancellation }
            })
            .collect();
        Report { errors }
    }
}

/// One tensor a case checks: gdn-ref's values, the bar and how much its sum cancels.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// Which tensor.
    pub tensor: Tensor,
    /// gdn-ref's values, flattened as the device lays the tensor out.
    pub values: Vec<f64>,
    /// The spec's bar (`None`: reported only).
    pub bar: Option<f64>,
    /// How much the sum behind it cancels (≥ 1, widens the bar; see [`TensorError::cancellation`]).
    pub cancellation: f64,
}

/// What the device computed for a case, and the bytes its tape held.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceResults {
    /// Forward outputs.
    pub outputs: gdn_train::Outputs,
    /// Every gradient.
    pub gradients: gdn_train::Gradients,
    /// The tape's device memory.
    pub device_bytes: u64,
}

impl DeviceResults {
    /// What the device computed of `tensor` (empty for one it does not compute, or did not here).
    pub fn tensor(&self, tensor: Tensor) -> &[f32] {
        let (got, grads) = (&self.outputs, &self.gradients);
        match tensor {
            Tensor::Out => &got.out,
            Tensor::Ht => &got.ht,
            Tensor::FinalConvState => got.conv_state.as_deref().unwrap_or(&[]),
            Tensor::Dqkv => &grads.dqkv,
            Tensor::Dz => &grads.dz,
            Tensor::Da => &grads.da,
            Tensor::Db => &grads.db,
            Tensor::DaLog => &grads.da_log,
            Tensor::DdtBias => &grads.ddt_bias,
            Tensor::Dnorm => &grads.dnorm,
            Tensor::Dconv => &grads.dconv,
            Tensor::Dh0 => grads.dh0.as_deref().unwrap_or(&[]),
            Tensor::DconvState => grads.dconv_state.as_deref().unwrap_or(&[]),
            _ => &[],
        }
    }
}

impl Expected {
    /// Widens the bar where rounding the terms of the sums behind the tensor, by `rounding` each,
    /// strays further than the bar allows: its error may reach `rounding · κ`,
    /// `κ = ‖magnitudes‖₂ / ‖sums‖₂` (each element's sum over its terms' magnitudes, against the
    /// sums themselves). Keeps a wider bar already noted ([`Expected::cancelling`]).
    pub fn rounding_in<'a>(
        mut self,
        rounding: f64,
        sums: impl Iterator<Item = &'a f64>,
        magnitudes: impl Iterator<Item = &'a f64>,
    ) -> Self {
        let norm = |values: &mut dyn Iterator<Item = &'a f64>| values.map(|x| x * x).sum::<f64>().sqrt();
        let (of_sums, of_terms) = (norm(&mut { sums }), norm(&mut { magnitudes }));
        if let (Some(bar), true) = (self.bar, of_sums > 0.0) {
            self.cancellation = self.cancellation.max(rounding * of_terms / of_sums / bar);
        }
        self
    }

    /// Notes how much a sum over tokens cancels: the norm of its terms' magnitudes (`magnitudes`,
    /// per element) against the norm of the sum (`sum`); at least 1, and 1 for a zero sum with
    /// zero terms.
    fn cancelling(mut self, sum: &ndarray::Array1<f64>, magnitudes: &[f64]) -> Self {
        fn norm<'a>(values: impl Iterator<Item = &'a f64>) -> f64 {
            values.map(|x| x * x).sum::<f64>().sqrt()
        }
        let (of_sum, of_terms) = (norm(sum.iter()), norm(magnitudes.iter()));
        if of_terms > 0.0 {
            self.cancellation = (of_terms / of_sum).max(1.0);
        }
        self
    }
}

/// Per value head, Σ_t |term_t| of the gate parameters' gradients, from a per-token `da_t` (the
/// reference's `da_t = dg·g·(−e^{a_log})·σ(arg_t)`, `arg_t = a_t + dt_bias`, or its terms'
/// magnitudes `da_terms`): `ddt_bias = Σ_t da_t`, and
/// `da_log = Σ_t dg·g·ln g = Σ_t da_t · softplus(arg_t) / σ(arg_t)` (`log_term`).
fn gate_magnitudes(draw: &Draw, da: &ndarray::Array3<f64>, log_term: bool) -> Vec<f64> {
    let nv = draw.params.dt_bias.len();
    let mut sums = vec![0.0; nv];
    for (e, (&da, &a)) in da.iter().zip(draw.inputs.a.iter()).enumerate() {
        let h = e % nv;
        let weight = if log_term { softplus_over_sigmoid(a + draw.params.dt_bias[h]) } else { 1.0 };
        sums[h] += (da * weight).abs();
    }
    sums
}

/// softplus(x) / σ(x) = ln(1 + eˣ)·(1 + e⁻ˣ), without overflow (→ 1 as x → −∞, ≈ x for large x).
fn softplus_over_sigmoid(x: f64) -> f64 {
    if x > 0.0 {
        (x + (-x).exp().ln_1p()) * (1.0 + (-x).exp())
    } else if x > -30.0 {
        x.exp().ln_1p() * (1.0 + (-x).exp())
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softplus_over_sigmoid_is_finite_and_matches_the_direct_form() {
        for x in [-50.0, -20.0, -3.0, -0.5, 0.0, 0.7, 4.0, 30.0, 800.0] {
            let got = softplus_over_sigmoid(x);
            assert!(got.is_finite() && got >= 1.0 - 1e-12, "x = {x}: {got}");
            if x.abs() < 30.0 {
                let sigmoid = 1.0 / (1.0 + (-x).exp());
                let direct = x.exp().ln_1p() / sigmoid;
                assert!((got - direct).abs() <= 1e-12 * direct, "x = {x}: {got} against {direct}");
            }
        }
    }

    #[test]
    fn rounded_operands_widen_a_bar_by_the_cancellation_within_each_sum() {
        let base = Expected { tensor: Tensor::Da, values: vec![], bar: Some(1e-2), cancellation: 1.0 };
        // Sums 1e-3 and 2e-3 of terms of magnitudes 1 and 2: κ = 1000, so 4.9e-4 · 1000 = 4.9e-1,
        // 49 times the bar.
        let widened = base.clone().rounding_in(4.9e-4, [1e-3, 2e-3].iter(), [1.0, 2.0].iter());
        assert!((widened.cancellation - 49.0).abs() < 1e-9, "{}", widened.cancellation);
        // Sums that do not cancel leave the bar; a wider one noted before stays; no bar, no change.
        assert_eq!(base.clone().rounding_in(4.9e-4, [1.0].iter(), [1.0].iter()).cancellation, 1.0);
        let wide = Expected { cancellation: 80.0, ..base.clone() };
        assert_eq!(wide.rounding_in(4.9e-4, [1e-3].iter(), [1.0].iter()).cancellation, 80.0);
        let reported = Expected { bar: None, ..base };
        assert_eq!(reported.rounding_in(4.9e-4, [1e-3].iter(), [1.0].iter()).cancellation, 1.0);
    }

    #[test]
    fn a_cancelling_sum_widens_only_its_own_bar() {
        let sum = ndarray::Array1::from(vec![1.0, 0.8]);
        let plain = Expected { tensor: Tensor::DaLog, values: sum.to_vec(), bar: Some(1e-2), cancellation: 1.0 };
        let judged =
            |e: &Expected| TensorError { tensor: e.tensor, error: 2e-2, bar: e.bar, cancellation: e.cancellation };
        assert!(!judged(&plain).passes());
        // Terms of magnitude 3 and 2 summing to 1 (per head): κ = ‖(3, 4)‖ / ‖(1, 0.8)‖ ≈ 3.9.
        let widened = plain.clone().cancelling(&sum, &[3.0, 4.0]);
        assert!((widened.cancellation - 5.0 / 1.64f64.sqrt()).abs() < 1e-12);
        assert!(judged(&widened).passes());
        // Terms that do not cancel leave the bar as it is.
        assert_eq!(plain.cancelling(&sum, &[1.0, 0.8]).cancellation, 1.0);
    }
}
