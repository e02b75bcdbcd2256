//! Test inputs as the spec draws them: realistic, never zeros, fresh per seed, plus the gate
//! extremes that real training hits.
//!
//! Every value is rounded to the nearest f32, so a device run in f32 receives exactly the inputs
//! the f64 reference computes on, and a comparison measures only the kernels' arithmetic.

use crate::{Batch, LayerConfig, LayerInputs, LayerParams, OutputGrads};
use ndarray::{Array, Array1, Array3, Dimension, IntoDimension};
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
        let a_log = match regime {
            Regime::DecayToOne => Array1::from_elem(config.nv, -10.0),
            Regime::DecayToZero => Array1::from_elem(config.nv, 4.0),
            _ => self.array(config.nv, Uniform::new(-1.0, 2.5).expect("valid range")),
        };
        LayerParams {
            a_log,
            dt_bias: self.normal(config.nv, 0.0, 0.5),
            norm: self.normal(config.dv, 1.0, 0.3),
            conv: self.normal((config.channels(), config.kk), 0.0, 0.5),
        }
    }

    /// `qkv`, `z`, `a ~ N(0, 1)` (`N(4, 1)` when the regime drives `g → 0`), `b ~ N(0, 2²)` (or
    /// `∓12`), and `h0 ~ N(0, 0.3²)` when asked for.
    pub fn inputs(&mut self, config: &LayerConfig, batch: &Batch, with_h0: bool, regime: Regime) -> LayerInputs {
        let [b, t] = batch.token_dims();
        let a_mean = if regime == Regime::DecayToZero { 4.0 } else { 0.0 };
        let b_gates = match regime {
            Regime::WriteNothing => Array::from_elem((b, t, config.nv), -12.0),
            Regime::WriteAll => Array::from_elem((b, t, config.nv), 12.0),
            _ => self.normal((b, t, config.nv), 0.0, 2.0),
        };
        LayerInputs {
            qkv: self.normal((b, t, config.channels()), 0.0, 1.0),
            z: self.normal((b, t, config.value_width()), 0.0, 1.0),
            a: self.normal((b, t, config.nv), a_mean, 1.0),
            b: b_gates,
            h0: with_h0.then(|| self.normal(self::state_dims(config, batch), 0.0, 0.3)),
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
            dht: with_dht.then(|| self.normal(self::state_dims(config, batch), 0.0, 1.0)),
            dconv_state: None,
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
fn state_dims(config: &LayerConfig, batch: &Batch) -> [usize; 4] {
    [batch.sequence_count(), config.nv, config.dk, config.dv]
}
