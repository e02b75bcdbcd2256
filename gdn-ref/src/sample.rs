//! Test inputs as the spec draws them: realistic, never zeros, fresh per seed, plus the gate
//! extremes that real training hits — for the layer and for the core op alone.
//!
//! Every value is rounded to the nearest f32, so a device run in f32 receives exactly the inputs
//! the f64 reference computes on, and a comparison measures only the kernels' arithmetic.

use crate::arrays::flat;
use crate::gates::{Decay, write_strength};
use crate::recurrence::Heads;
use crate::{
    Batch, BetaInput, CoreConfig, CoreInputs, CoreOutputGrads, DecayInput, LayerConfig, LayerInputs, LayerParams,
    OutputGrads,
};
use ndarray::{Array, Array1, Array3, Axis, Dimension, IntoDimension};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal, Uniform};

/// Which gate values a draw aims at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Regime {
    /// The spec's typical draw: `a ~ N(0, 1)`, `b ~ N(0, 2²)`, `a_log ~ U(−1, 2.5)`.
    Typical,
    /// `g → 1`: `a_log = −10`, the state barely decays.
    DecayToOne,
    /// `g → 0`: `a_log = 4` and large `a ~ N(4, 1)`, the state is forgotten every step.
    DecayToZero,
    /// `β → 0`: `b = −12`, almost nothing is written.
    WriteNothing,
    /// `β → 1`: `b = +12`, the delta rule overwrites fully.
    WriteAll,
}

impl Regime {
    /// Every regime, typical first.
    pub const ALL: [Regime; 5] =
        [Regime::Typical, Regime::DecayToOne, Regime::DecayToZero, Regime::WriteNothing, Regime::WriteAll];
}

/// In which form the core op's gates are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateForm {
    /// fla's `chunk_gated_delta_rule`: `g = ln g` and `β` themselves.
    Direct,
    /// The layer's: logits `a` with `a_log`, `dt_bias`, and logits `b`.
    Logits,
}

/// A seeded source of spec-conforming layers, inputs and output gradients.
pub struct Sampler {
    rng: StdRng,
}

impl Sampler {
    /// A sampler whose draws are a function of `seed`.
    pub fn new(seed: u64) -> Self {
        Self { rng: StdRng::seed_from_u64(seed) }
    }

    /// `conv ~ N(0, 0.5²)`, `dt_bias ~ N(0, 0.5²)`, `norm ~ 1 + N(0, 0.3²)`, and `a_log` from the
    /// regime (`U(−1, 2.5)` unless it fixes the decay).
    pub fn params(&mut self, config: &LayerConfig, regime: Regime) -> LayerParams {
        LayerParams {
            a_log: self.a_log(config.nv, regime),
            dt_bias: self.normal(config.nv, 0.0, 0.5),
            norm: self.normal(config.dv, 1.0, 0.3),
            conv: self.normal((config.channels(), config.kk), 0.0, 0.5),
        }
    }

    /// `qkv`, `z`, `a ~ N(0, 1)` (`N(4, 1)` when the regime drives `g → 0`), `b ~ N(0, 2²)` (or
    /// `∓12`), and `h0 ~ N(0, 0.3²)` when asked for.
    pub fn inputs(&mut self, config: &LayerConfig, batch: &Batch, with_h0: bool, regime: Regime) -> LayerInputs {
        let [b, t] = batch.token_dims();
        let b_gates = self.b_logits(batch, config.nv, regime);
        LayerInputs {
            qkv: self.normal((b, t, config.channels()), 0.0, 1.0),
            z: self.normal((b, t, config.value_width()), 0.0, 1.0),
            a: self.a_logits(batch, config.nv, regime),
            b: b_gates,
            h0: with_h0.then(|| self.normal(state_dims(&config.heads(), batch), 0.0, 0.3)),
            conv_state: None,
            cu_seqlens: match batch {
                Batch::Fixed { .. } => None,
                Batch::Packed { cu_seqlens } => Some(cu_seqlens.clone()),
            },
        }
    }

    /// `dout ~ N(0, 1)` and, when asked for, `dhT ~ N(0, 1)`.
    pub fn output_grads(&mut self, config: &LayerConfig, batch: &Batch, with_dht: bool) -> OutputGrads {
        let [b, t] = batch.token_dims();
        OutputGrads {
            dout: self.normal((b, t, config.value_width()), 0.0, 1.0),
            dht: with_dht.then(|| self.normal(state_dims(&config.heads(), batch), 0.0, 1.0)),
            dconv_state: None,
        }
    }

    /// Core-op inputs: `q`, `k`, `v ~ N(0, 1)` as fla's tests draw them, `q` and `k` L2-normalised
    /// per head unless the op normalises them itself (the delta rule needs `‖k‖ ≈ 1`); the gates of
    /// the layer's draw (`a`, `b`, `a_log`, `dt_bias` as [`Sampler::inputs`] and
    /// [`Sampler::params`] draw them for `regime`), given as logits or turned into `ln g` and `β`;
    /// `h0 ~ N(0, 0.3²)` when asked for.
    pub fn core_inputs(
        &mut self,
        config: &CoreConfig,
        batch: &Batch,
        with_h0: bool,
        form: GateForm,
        regime: Regime,
    ) -> CoreInputs {
        let [b, t] = batch.token_dims();
        let (nk, nv) = (config.nk, config.nv);
        let mut keys = [(); 2].map(|()| self.normal((b, t, nk, config.dk), 0.0, 1.0));
        if !config.qk_l2norm {
            for x in &mut keys {
                for mut row in x.lanes_mut(Axis(3)) {
                    let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
                    row.mapv_inplace(|v| f64::from((v / norm) as f32));
                }
            }
        }
        let [q, k] = keys;
        let v = self.normal((b, t, nv, config.dv), 0.0, 1.0);
        let (a, a_log, dt_bias) = (self.a_logits(batch, nv, regime), self.a_log(nv, regime), self.normal(nv, 0.0, 0.5));
        let logits = self.b_logits(batch, nv, regime);
        let (decay, beta) = match form {
            GateForm::Logits => (DecayInput::Logits { a, a_log, dt_bias }, BetaInput::Logits(logits)),
            GateForm::Direct => {
                let ln_g = Decay::from_logits(&flat(&a), a_log.view(), dt_bias.view()).1.ln_g;
                (
                    DecayInput::LogSpace(to_f32(a.raw_dim(), ln_g)),
                    BetaInput::Direct(to_f32(a.raw_dim(), write_strength(&flat(&logits)))),
                )
            }
        };
        CoreInputs {
            q,
            k,
            v,
            decay,
            beta,
            h0: with_h0.then(|| self.normal(state_dims(&config.heads(), batch), 0.0, 0.3)),
            cu_seqlens: match batch {
                Batch::Fixed { .. } => None,
                Batch::Packed { cu_seqlens } => Some(cu_seqlens.clone()),
            },
        }
    }

    /// `d_o ~ N(0, 1)` and, when asked for, `dhT ~ N(0, 1)`.
    pub fn core_output_grads(&mut self, config: &CoreConfig, batch: &Batch, with_dht: bool) -> CoreOutputGrads {
        let [b, t] = batch.token_dims();
        CoreOutputGrads {
            d_o: self.normal((b, t, config.nv, config.dv), 0.0, 1.0),
            dht: with_dht.then(|| self.normal(state_dims(&config.heads(), batch), 0.0, 1.0)),
        }
    }

    /// `a_log ~ U(−1, 2.5)`, or fixed by the regime (`−10` for `g → 1`, `4` for `g → 0`), `[nv]`.
    fn a_log(&mut self, nv: usize, regime: Regime) -> Array1<f64> {
        match regime {
            Regime::DecayToOne => Array1::from_elem(nv, -10.0),
            Regime::DecayToZero => Array1::from_elem(nv, 4.0),
            _ => self.array(nv, Uniform::new(-1.0, 2.5).expect("valid range")),
        }
    }

    /// `a ~ N(0, 1)`, `N(4, 1)` when the regime drives `g → 0`, `[B, T, nv]`.
    fn a_logits(&mut self, batch: &Batch, nv: usize, regime: Regime) -> Array3<f64> {
        let [b, t] = batch.token_dims();
        let mean = if regime == Regime::DecayToZero { 4.0 } else { 0.0 };
        self.normal((b, t, nv), mean, 1.0)
    }

    /// `b ~ N(0, 2²)`, or `∓12` when the regime drives `β → 0` or `β → 1`, `[B, T, nv]`.
    fn b_logits(&mut self, batch: &Batch, nv: usize, regime: Regime) -> Array3<f64> {
        let [b, t] = batch.token_dims();
        match regime {
            Regime::WriteNothing => Array::from_elem((b, t, nv), -12.0),
            Regime::WriteAll => Array::from_elem((b, t, nv), 12.0),
            _ => self.normal((b, t, nv), 0.0, 2.0),
        }
    }

    /// A conv state `[N, kk − 1, C]` drawn like the raw `qkv` it holds, `N(0, 1)`.
    pub fn conv_state(&mut self, config: &LayerConfig, batch: &Batch) -> Array3<f64> {
        self.normal((batch.sequence_count(), config.kk - 1, config.channels()), 0.0, 1.0)
    }

    /// A gradient arriving at the final conv state, `N(0, 1)`.
    pub fn conv_state_grad(&mut self, config: &LayerConfig, batch: &Batch) -> Array3<f64> {
        self.conv_state(config, batch)
    }

    fn normal<Sh: IntoDimension>(&mut self, shape: Sh, mean: f64, std: f64) -> Array<f64, Sh::Dim> {
        self.array(shape, Normal::new(mean, std).expect("positive standard deviation"))
    }

    fn array<Sh: IntoDimension>(&mut self, shape: Sh, dist: impl Distribution<f64>) -> Array<f64, Sh::Dim> {
        let dim = shape.into_dimension();
        let len = dim.size();
        let values = (0..len).map(|_| f64::from(dist.sample(&mut self.rng) as f32)).collect();
        Array::from_shape_vec(dim, values).expect("length matches shape")
    }
}

/// `[N, nv, dk, dv]`.
fn state_dims(heads: &Heads, batch: &Batch) -> [usize; 4] {
    heads.state_shape(batch.sequence_count())
}

/// `values` rounded to the nearest f32, as every draw is.
fn to_f32(dim: ndarray::Ix3, values: Vec<f64>) -> Array3<f64> {
    Array::from_shape_vec(dim, values.into_iter().map(|v| f64::from(v as f32)).collect()).expect("length matches shape")
}
