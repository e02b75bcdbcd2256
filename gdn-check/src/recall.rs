//! A model that learns through the layer: multi-query associative recall (MQAR, the task the delta
//! rule is known for) with an embedding, one Gated DeltaNet layer on the device and a readout,
//! trained with Adam on the host. A sequence lists `pairs` key–value pairs, then asks for the keys
//! again in another order; the model must answer each with its value. Chance is one in `values`.
//! No per-tensor comparison proves that the gradients train a model; this does, end to end.
//!
//! Everything around the layer is small host code: the embedding, the four input projections
//! (qkv, z, a, b), the readout and their gradients are plain matrix products; the layer's forward
//! and backward (with its own parameters: conv, a_log, dt_bias, norm) run on a [`Tape`].

use gdn_ref::LayerConfig;
use gdn_train::{Batch, Context, Inputs, Params, Tape, TapeOptions};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Normal};

/// The task, the model's sizes and the training run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecallConfig {
    /// Key–value pairs per sequence (and queries: each key is asked once).
    pub pairs: usize,
    /// Distinct keys in the vocabulary.
    pub keys: usize,
    /// Distinct values in the vocabulary (chance accuracy is `1 / values`).
    pub values: usize,
    /// Sequences per step.
    pub batch: usize,
    /// Width of the embedding.
    pub width: usize,
    /// The layer's key heads, value heads and head dim (dk = dv).
    pub heads: (usize, usize, usize),
    /// Adam's learning rate.
    pub learning_rate: f32,
    /// Training steps.
    pub steps: usize,
    /// Seed of the initial weights and of the sequences.
    pub seed: u64,
}

impl Default for RecallConfig {
    /// A size lavapipe trains in about half a minute: 8 pairs, 32 values (chance 1/32), 600 steps
    /// of 32 sequences.
    fn default() -> Self {
        Self {
            pairs: 8,
            keys: 16,
            values: 32,
            batch: 32,
            width: 32,
            heads: (1, 2, 16),
            learning_rate: 1e-2,
            steps: 600,
            seed: 1,
        }
    }
}

impl RecallConfig {
    /// Tokens per sequence: the pairs, then the queries.
    pub fn tokens(&self) -> usize {
        3 * self.pairs
    }

    /// Refuses a task the sequences cannot be drawn for, naming the size.
    pub fn validate(&self) -> Result<(), String> {
        for (name, value) in [("pairs", self.pairs), ("batch", self.batch), ("width", self.width)] {
            if value == 0 {
                return Err(format!("{name} must be at least 1"));
            }
        }
        if self.values < 2 {
            return Err(format!("values must be at least 2 (one value leaves nothing to recall), got {}", self.values));
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return Err(format!("learning_rate must be a positive number, got {}", self.learning_rate));
        }
        if self.pairs > self.keys {
            return Err(format!(
                "pairs: {} pairs need at least as many distinct keys, got keys = {}",
                self.pairs, self.keys
            ));
        }
        Ok(())
    }

    fn vocabulary(&self) -> usize {
        self.keys + self.values
    }

    fn layer(&self) -> Result<LayerConfig, String> {
        let (nk, nv, d) = self.heads;
        LayerConfig::new(nk, nv, d, d, 4).map_err(|e| e.to_string())
    }
}

/// What one training step measured, on the batch it trained on (before the update).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepRecord {
    /// The step, from 0.
    pub step: usize,
    /// Mean cross-entropy over the queries.
    pub loss: f32,
    /// Fraction of queries answered with their value.
    pub accuracy: f32,
}

/// Sequences of the task: tokens, and at each query the value it must answer.
struct Sequences {
    tokens: Vec<usize>,
    answers: Vec<Option<usize>>,
}

fn draw_sequences(config: &RecallConfig, rng: &mut StdRng) -> Sequences {
    let (mut tokens, mut answers) = (Vec::new(), Vec::new());
    let mut keys: Vec<usize> = (0..config.keys).collect();
    for _ in 0..config.batch {
        keys.shuffle(rng);
        let pairs: Vec<(usize, usize)> =
            keys[..config.pairs].iter().map(|&k| (k, config.keys + rng.random_range(0..config.values))).collect();
        for &(k, v) in &pairs {
            tokens.extend([k, v]);
            answers.extend([None, None]);
        }
        let mut order = pairs.clone();
        order.shuffle(rng);
        for (k, v) in order {
            tokens.push(k);
            answers.push(Some(v));
        }
    }
    Sequences { tokens, answers }
}

/// A row-major matrix with Adam's moments.
struct Weight {
    rows: usize,
    cols: usize,
    value: Vec<f32>,
    grad: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
}

impl Weight {
    fn new(rows: usize, cols: usize, init: impl FnMut() -> f32) -> Self {
        let n = rows * cols;
        Self {
            rows,
            cols,
            value: std::iter::repeat_with(init).take(n).collect(),
            grad: vec![0.0; n],
            m: vec![0.0; n],
            v: vec![0.0; n],
        }
    }

    fn adam(&mut self, lr: f32, step: usize, scale: f32) {
        let (b1, b2) = (0.9f32, 0.999f32);
        let t = (step + 1) as i32;
        let (c1, c2) = (1.0 - b1.powi(t), 1.0 - b2.powi(t));
        for i in 0..self.value.len() {
            let g = self.grad[i] * scale;
            self.m[i] = b1 * self.m[i] + (1.0 - b1) * g;
            self.v[i] = b2 * self.v[i] + (1.0 - b2) * g * g;
            self.value[i] -= lr * (self.m[i] / c1) / ((self.v[i] / c2).sqrt() + 1e-8);
        }
    }
}

/// `a [n, k] · b [k, m]`.
fn matmul(a: &[f32], b: &[f32], n: usize, k: usize, m: usize) -> Vec<f32> {
    let mut out = vec![0.0; n * m];
    for i in 0..n {
        for p in 0..k {
            let x = a[i * k + p];
            if x != 0.0 {
                for j in 0..m {
                    out[i * m + j] += x * b[p * m + j];
                }
            }
        }
    }
    out
}

/// `aᵀ · b` for `a [n, k]`, `b [n, m]`: `[k, m]`.
fn matmul_at(a: &[f32], b: &[f32], n: usize, k: usize, m: usize) -> Vec<f32> {
    let mut out = vec![0.0; k * m];
    for i in 0..n {
        for p in 0..k {
            let x = a[i * k + p];
            if x != 0.0 {
                for j in 0..m {
                    out[p * m + j] += x * b[i * m + j];
                }
            }
        }
    }
    out
}

/// `a · bᵀ` for `a [n, m]`, `b [k, m]`: `[n, k]`.
fn matmul_bt(a: &[f32], b: &[f32], n: usize, m: usize, k: usize) -> Vec<f32> {
    let mut out = vec![0.0; n * k];
    for i in 0..n {
        for p in 0..k {
            out[i * k + p] = (0..m).map(|j| a[i * m + j] * b[p * m + j]).sum();
        }
    }
    out
}

/// The model: embedding, input projections, the layer's parameters, readout.
struct Model {
    embedding: Weight,
    /// qkv, z, a, b projections, in that order.
    projections: [Weight; 4],
    a_log: Weight,
    dt_bias: Weight,
    norm: Weight,
    conv: Weight,
    readout: Weight,
}

impl Model {
    fn new(config: &RecallConfig, layer: &LayerConfig, rng: &mut StdRng) -> Self {
        let mut normal = |std: f32| {
            let dist = Normal::new(0.0f32, std).expect("a positive deviation");
            let mut rng = StdRng::seed_from_u64(rng.random());
            move || dist.sample(&mut rng)
        };
        let w = config.width;
        let scale = (w as f32).sqrt().recip();
        let widths = [layer.channels(), layer.value_width(), layer.nv, layer.nv];
        Self {
            embedding: Weight::new(config.vocabulary(), w, normal(1.0)),
            projections: widths.map(|cols| Weight::new(w, cols, normal(scale))),
            // Slow decays to start with (g ≈ 0.97 per token), learnable.
            a_log: Weight::new(1, layer.nv, || -3.0),
            dt_bias: Weight::new(1, layer.nv, || 0.0),
            norm: Weight::new(1, layer.dv, || 1.0),
            conv: Weight::new(layer.channels(), layer.kk, normal(0.5)),
            readout: Weight::new(
                layer.value_width(),
                config.vocabulary(),
                normal((layer.value_width() as f32).sqrt().recip()),
            ),
        }
    }

    fn weights(&mut self) -> impl Iterator<Item = &mut Weight> {
        let [p0, p1, p2, p3] = &mut self.projections;
        [
            &mut self.embedding,
            p0,
            p1,
            p2,
            p3,
            &mut self.a_log,
            &mut self.dt_bias,
            &mut self.norm,
            &mut self.conv,
            &mut self.readout,
        ]
        .into_iter()
    }
}

/// Trains a model on `ctx`, calling `on_step` after every step; returns the accuracy on a fresh
/// batch after the last step.
pub fn train(ctx: &Context, config: &RecallConfig, mut on_step: impl FnMut(StepRecord)) -> Result<f32, String> {
    config.validate()?;
    let layer = config.layer()?;
    let err = |e: gdn_train::Error| e.to_string();
    let tape = Tape::new(ctx, layer, Batch::Fixed { b: config.batch, t: config.tokens() }, TapeOptions::default())
        .map_err(err)?;
    let mut rng = StdRng::seed_from_u64(config.seed);
    let mut model = Model::new(config, &layer, &mut rng);
    for step in 0..config.steps {
        let sequences = draw_sequences(config, &mut rng);
        let record = step_on(&tape, &mut model, &sequences, config, Some(step))?;
        on_step(StepRecord { step, ..record });
    }
    let held_out = draw_sequences(config, &mut rng);
    Ok(step_on(&tape, &mut model, &held_out, config, None)?.accuracy)
}

/// Forward (and, with `step`, backward and an Adam update) on one batch.
fn step_on(
    tape: &Tape,
    model: &mut Model,
    sequences: &Sequences,
    config: &RecallConfig,
    step: Option<usize>,
) -> Result<StepRecord, String> {
    let err = |e: gdn_train::Error| e.to_string();
    let (n, w, vocab) = (sequences.tokens.len(), config.width, config.vocabulary());
    let mut x = vec![0.0; n * w];
    for (row, &t) in sequences.tokens.iter().enumerate() {
        x[row * w..(row + 1) * w].copy_from_slice(&model.embedding.value[t * w..(t + 1) * w]);
    }
    let projected: Vec<Vec<f32>> = model.projections.iter().map(|p| matmul(&x, &p.value, n, w, p.cols)).collect();
    tape.write_params(&Params {
        a_log: &model.a_log.value,
        dt_bias: &model.dt_bias.value,
        norm: &model.norm.value,
        conv: &model.conv.value,
    })
    .map_err(err)?;
    let inputs =
        Inputs { qkv: &projected[0], z: &projected[1], a: &projected[2], b: &projected[3], h0: None, conv_state: None };
    let out = tape.run_forward(&inputs).map_err(err)?.out;
    let v = model.readout.rows;
    let logits = matmul(&out, &model.readout.value, n, v, vocab);

    // Cross-entropy over the queries, and its gradient.
    let queries = sequences.answers.iter().filter(|a| a.is_some()).count() as f32;
    let (mut loss, mut correct) = (0.0f32, 0usize);
    let mut dlogits = vec![0.0; n * vocab];
    for (row, answer) in sequences.answers.iter().enumerate() {
        let Some(answer) = *answer else { continue };
        let l = &logits[row * vocab..(row + 1) * vocab];
        let max = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = l.iter().map(|&z| (z - max).exp()).sum();
        loss += sum.ln() + max - l[answer];
        let best = (0..vocab).max_by(|&i, &j| l[i].total_cmp(&l[j])).expect("a vocabulary");
        correct += usize::from(best == answer);
        for j in 0..vocab {
            let p = (l[j] - max).exp() / sum;
            dlogits[row * vocab + j] = (p - f32::from(u8::from(j == answer))) / queries;
        }
    }
    let record = StepRecord { step: step.unwrap_or(0), loss: loss / queries, accuracy: correct as f32 / queries };
    let Some(step) = step else { return Ok(record) };

    model.readout.grad = matmul_at(&out, &dlogits, n, v, vocab);
    let dout = matmul_bt(&dlogits, &model.readout.value, n, vocab, v);
    let grads = tape.run_backward(&dout, None).map_err(err)?;
    let inputs_grads = [&grads.dqkv, &grads.dz, &grads.da, &grads.db];
    let mut dx = vec![0.0; n * w];
    for (p, g) in model.projections.iter_mut().zip(inputs_grads) {
        p.grad = matmul_at(&x, g, n, w, p.cols);
        for (d, e) in dx.iter_mut().zip(matmul_bt(g, &p.value, n, p.cols, w)) {
            *d += e;
        }
    }
    model.embedding.grad.iter_mut().for_each(|g| *g = 0.0);
    for (row, &t) in sequences.tokens.iter().enumerate() {
        for j in 0..w {
            model.embedding.grad[t * w + j] += dx[row * w + j];
        }
    }
    model.a_log.grad.clone_from(&grads.da_log);
    model.dt_bias.grad.clone_from(&grads.ddt_bias);
    model.norm.grad.clone_from(&grads.dnorm);
    model.conv.grad.clone_from(&grads.dconv);
    // Clip the global gradient norm at 1.
    let norm = model.weights().map(|w| w.grad.iter().map(|g| g * g).sum::<f32>()).sum::<f32>().sqrt();
    let scale = if norm > 1.0 { norm.recip() } else { 1.0 };
    let lr = config.learning_rate;
    model.weights().for_each(|w| w.adam(lr, step, scale));
    Ok(record)
}
