//! A whole layer call checked on a spot sample of it: some of its sequences and some of its key
//! heads (each with its value heads), for batches too large for the f64 reference.
//!
//! Sequences and heads are independent, so the sample is a layer call of its own: [`Spots`]
//! draws it with gdn-ref's sampler (the spec's inputs, as any [`Case`] draws them) and places it
//! at its sequences and heads inside the whole call's tensors, which elsewhere hold the sample's
//! values scrambled (realistic magnitudes, at no cost of drawing). The device runs the whole call;
//! the reference runs the sample; the sample's part of every device tensor is compared with it.
//! The spots are spread over the batch and the heads, the last of each included, so that a
//! mistake at large offsets (the last sequence, the last window of a cut batch) is seen.
//!
//! Parameter gradients sum over every sequence (and `dnorm` over every value head too): the
//! sample's sums are compared only where the sample holds everything they sum over.

use crate::Tensor;
use crate::case::{Case, CaseError, DeviceResults};
use crate::report::Report;
use gdn_ref::{Batch, Layer, LayerConfig};
use gdn_train::{Gradients, Inputs, Outputs, Params};

/// The sequences and key heads of a whole call that the reference checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spots {
    /// Sequences of the batch, ascending.
    pub sequences: Vec<usize>,
    /// Key heads, ascending; each brings its `nv / nk` value heads.
    pub heads: Vec<usize>,
}

/// The whole call's tensors, f32 as the host calls take them.
pub struct WholeTensors {
    /// `a_log`, `dt_bias`, `norm`, `conv`.
    pub params: [Vec<f32>; 4],
    /// `qkv`, `z`, `a`, `b`.
    pub inputs: [Vec<f32>; 4],
    /// `h0` where the case has one.
    pub h0: Option<Vec<f32>>,
    /// `dout`.
    pub dout: Vec<f32>,
    /// `dhT` where the case has one.
    pub dht: Option<Vec<f32>>,
}

impl WholeTensors {
    /// The parameters, as the host calls take them.
    pub fn params(&self) -> Params<'_> {
        let [a_log, dt_bias, norm, conv] = &self.params;
        Params { a_log, dt_bias, norm, conv }
    }

    /// The inputs, as the host calls take them.
    pub fn inputs(&self) -> Inputs<'_> {
        let [qkv, z, a, b] = &self.inputs;
        Inputs { qkv, z, a, b, h0: self.h0.as_deref(), conv_state: None }
    }
}

/// The sequences and tokens of a spot-checked call's batch (`gdn-check run`'s: always fixed).
fn fixed(whole: &Case) -> (usize, usize) {
    match whole.batch {
        Batch::Fixed { b, t } => (b, t),
        Batch::Packed { .. } => unreachable!("a spot-checked call has a fixed batch"),
    }
}

/// `count` of `0..n`, evenly spread, the last included (all of them when `count ≥ n`).
fn spread(n: usize, count: usize) -> Vec<usize> {
    match count.min(n) {
        0 => Vec::new(),
        1 => vec![n - 1],
        k => (0..k).map(|i| i * (n - 1) / (k - 1)).collect(),
    }
}

/// How one tensor maps onto the sample: a matrix of `width` columns, whose sampled rows and
/// columns are `rows` and `cols` (in the sample's order).
struct Map {
    width: usize,
    rows: Vec<usize>,
    cols: Vec<usize>,
}

impl Map {
    /// The sample's part of `whole`.
    fn pick<T: Copy>(&self, whole: &[T]) -> Vec<T> {
        self.rows.iter().flat_map(|&r| self.cols.iter().map(move |&c| whole[r * self.width + c])).collect()
    }

    /// `values` (the sample's) placed into `whole`.
    fn place(&self, whole: &mut [f32], values: &[f32]) {
        let cells = self.rows.iter().flat_map(|&r| self.cols.iter().map(move |&c| r * self.width + c));
        for (cell, &v) in cells.zip(values) {
            whole[cell] = v;
        }
    }
}

/// A tensor of `len` words: `values` (the sample's, non-empty) scrambled over it, then placed at
/// the sample's cells.
fn embed(len: usize, map: &Map, values: &[f32]) -> Vec<f32> {
    let mut whole: Vec<f32> = (0..len as u64).map(|i| values[(splitmix(i) % values.len() as u64) as usize]).collect();
    map.place(&mut whole, values);
    whole
}

/// A 64-bit mix of `x` (splitmix64's finaliser): which sample value a scrambled cell repeats.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Spots {
    /// `sequences` of a batch of `b` and `heads` of `config`'s key heads, spread (see the module
    /// docs); at least one of each.
    pub fn spread(config: &LayerConfig, b: usize, sequences: usize, heads: usize) -> Self {
        Self { sequences: spread(b, sequences.max(1)), heads: spread(config.nk, heads.max(1)) }
    }

    /// The sample's layer: its key heads, with their value heads.
    pub fn config(&self, whole: &LayerConfig) -> LayerConfig {
        let rep = whole.nv / whole.nk;
        let nk = self.heads.len();
        LayerConfig { nk, nv: nk * rep, ..*whole }
    }

    /// The value heads of the sampled key heads, ascending.
    fn value_heads(&self, whole: &LayerConfig) -> Vec<usize> {
        let rep = whole.nv / whole.nk;
        self.heads.iter().flat_map(|&h| h * rep..(h + 1) * rep).collect()
    }

    /// The sampled columns of `per` words for each of `groups` (heads): group g's words.
    fn groups(groups: &[usize], per: usize) -> Vec<usize> {
        groups.iter().flat_map(|&g| g * per..(g + 1) * per).collect()
    }

    /// The map of `tensor` of a call over `b` sequences of `t` tokens.
    fn map(&self, whole: &LayerConfig, t: usize, tensor: Tensor) -> Map {
        let c = whole;
        let vheads = self.value_heads(c);
        let tokens: Vec<usize> = self.sequences.iter().flat_map(|&s| s * t..(s + 1) * t).collect();
        let channels: Vec<usize> = Self::groups(&self.heads, c.dk)
            .into_iter()
            .chain(Self::groups(&self.heads, c.dk).into_iter().map(|ch| c.nk * c.dk + ch))
            .chain(Self::groups(&vheads, c.dv).into_iter().map(|ch| 2 * c.nk * c.dk + ch))
            .collect();
        let state = Self::groups(&vheads, c.state_size());
        let all = |n: usize| (0..n).collect::<Vec<_>>();
        let (width, rows, cols) = match tensor {
            Tensor::Qkv | Tensor::Dqkv => (c.channels(), tokens, channels),
            Tensor::Z | Tensor::Dz | Tensor::Out | Tensor::Dout => {
                (c.value_width(), tokens, Self::groups(&vheads, c.dv))
            }
            Tensor::A | Tensor::B | Tensor::Da | Tensor::Db => (c.nv, tokens, vheads),
            Tensor::H0 | Tensor::Ht | Tensor::Dh0 | Tensor::Dht => {
                (c.nv * c.state_size(), self.sequences.clone(), state)
            }
            Tensor::ALog | Tensor::DtBias | Tensor::DaLog | Tensor::DdtBias => (c.nv, vec![0], vheads),
            Tensor::Norm | Tensor::Dnorm => (c.dv, vec![0], all(c.dv)),
            Tensor::Conv | Tensor::Dconv => (c.kk, channels, all(c.kk)),
            other => unreachable!("{other:?} is not a tensor of a spot-checked call"),
        };
        Map { width, rows, cols }
    }

    /// The sample as a case: `whole`'s options over the sampled sequences and heads.
    pub fn case(&self, whole: &Case) -> Case {
        let (_, t) = fixed(whole);
        Case { config: self.config(&whole.config), batch: Batch::Fixed { b: self.sequences.len(), t }, ..whole.clone() }
    }

    /// The whole call's tensors: the sample's draw ([`Spots::case`]'s) at its cells, scrambled
    /// copies of it elsewhere.
    pub fn whole_tensors(&self, whole: &Case) -> WholeTensors {
        let (b, t) = fixed(whole);
        let c = &whole.config;
        let draw = self.case(whole).draw();
        let embedded = |tensor: Tensor, len: usize| embed(len, &self.map(c, t, tensor), &draw.caller_values(tensor));
        let (tokens, state) = (b * t, b * c.nv * c.state_size());
        WholeTensors {
            params: [
                embedded(Tensor::ALog, c.nv),
                embedded(Tensor::DtBias, c.nv),
                embedded(Tensor::Norm, c.dv),
                embedded(Tensor::Conv, c.channels() * c.kk),
            ],
            inputs: [
                embedded(Tensor::Qkv, tokens * c.channels()),
                embedded(Tensor::Z, tokens * c.value_width()),
                embedded(Tensor::A, tokens * c.nv),
                embedded(Tensor::B, tokens * c.nv),
            ],
            h0: whole.h0.then(|| embedded(Tensor::H0, state)),
            dout: embedded(Tensor::Dout, tokens * c.value_width()),
            dht: whole.dht.then(|| embedded(Tensor::Dht, state)),
        }
    }

    /// The tensors whose sample the reference can reproduce: all but the parameter gradients
    /// summed over sequences the sample lacks (and `dnorm`, over value heads it lacks).
    fn comparable(&self, whole: &Case, tensor: Tensor) -> bool {
        let (b, _) = fixed(whole);
        let (every_sequence, every_head) = (self.sequences.len() == b, self.heads.len() == whole.config.nk);
        match tensor {
            Tensor::DaLog | Tensor::DdtBias | Tensor::Dconv => every_sequence,
            Tensor::Dnorm => every_sequence && every_head,
            _ => true,
        }
    }

    /// Compares the sample's part of `device` (the whole call's results) with the reference over
    /// the sample; returns the report and the tensors left out of it ([`Spots::comparable`]).
    pub fn check(&self, whole: &Case, device: &DeviceResults) -> Result<(Report, Vec<Tensor>), CaseError> {
        let (_, t) = fixed(whole);
        let sample = self.case(whole);
        let draw = sample.draw();
        let layer = Layer::new(sample.config, draw.params.clone())?;
        let want = layer.forward(&draw.inputs)?;
        let want_grads = layer.backward(&draw.inputs, &draw.grads)?;
        let picked = |tensor: Tensor| self.map(&whole.config, t, tensor).pick(device.tensor(tensor));
        let gradients = &device.gradients;
        let sampled = DeviceResults {
            outputs: Outputs { out: picked(Tensor::Out), ht: picked(Tensor::Ht), conv_state: None },
            gradients: Gradients {
                dqkv: picked(Tensor::Dqkv),
                dz: picked(Tensor::Dz),
                da: picked(Tensor::Da),
                db: picked(Tensor::Db),
                dh0: gradients.dh0.as_ref().map(|_| picked(Tensor::Dh0)),
                da_log: picked(Tensor::DaLog),
                ddt_bias: picked(Tensor::DdtBias),
                dnorm: picked(Tensor::Dnorm),
                dconv: picked(Tensor::Dconv),
                dconv_state: None,
            },
            device_bytes: device.device_bytes,
        };
        let mut report = sample.compare_with(&draw, &sampled, &want, &want_grads);
        let left_out =
            report.errors.iter().map(|e| e.tensor).filter(|&t| !self.comparable(whole, t)).collect::<Vec<_>>();
        report.errors.retain(|e| self.comparable(whole, e.tensor));
        Ok((report, left_out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spots_are_spread_and_include_the_last() {
        assert_eq!(spread(10, 1), vec![9]);
        assert_eq!(spread(10, 2), vec![0, 9]);
        assert_eq!(spread(10, 4), vec![0, 3, 6, 9]);
        assert_eq!(spread(3, 7), vec![0, 1, 2]);
    }

    #[test]
    fn a_placed_sample_is_picked_back_and_the_rest_repeats_its_values() {
        let map = Map { width: 5, rows: vec![1, 3], cols: vec![0, 4] };
        let sample = [1.0, 2.0, 3.0, 4.0];
        let whole = embed(20, &map, &sample);
        assert_eq!(map.pick(&whole), sample);
        assert!(whole.iter().all(|v| sample.contains(v)));
    }
}
