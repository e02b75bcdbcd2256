//! [`Layer`]: the public entry points, which check every argument and convert between ndarray
//! tensors and the flat buffers the stages work on.

use crate::arrays::{flat, shaped};
use crate::backward::{FlatOutputGrads, backward};
use crate::forward::{Activations, Flat, final_conv_state};
use crate::io::conv_state_shape;
use crate::{Error, ForwardResult, Gradients, LayerConfig, LayerInputs, LayerParams, OutputGrads};
use ndarray::Array1;
use std::borrow::Cow;

/// One Gated DeltaNet layer: its sizes and parameters, checked against each other.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    config: LayerConfig,
    params: LayerParams,
}

impl Layer {
    /// Checks `params` against `config`.
    pub fn new(config: LayerConfig, params: LayerParams) -> Result<Self, Error> {
        config.validate()?;
        params.validate(&config)?;
        Ok(Self { config, params })
    }

    /// The sizes.
    pub fn config(&self) -> &LayerConfig {
        &self.config
    }

    /// The parameters.
    pub fn params(&self) -> &LayerParams {
        &self.params
    }

    /// The forward: `out`, and the final recurrent and conv states of every sequence.
    pub fn forward(&self, inputs: &LayerInputs) -> Result<ForwardResult, Error> {
        let seqs = inputs.validate(&self.config)?;
        let flat_inputs = FlatInputs::new(inputs);
        let x = flat_inputs.view();
        let act = Activations::compute(&self.config, &self.params, &seqs, &x);
        let out = act.output(&self.config, &self.params, x.z);
        Ok(ForwardResult {
            out: shaped(inputs.z.raw_dim(), out),
            ht: shaped(ndarray::Dim(self.config.heads().state_shape(seqs.len())), act.ht),
            conv_state: shaped(
                ndarray::Dim(conv_state_shape(&self.config, seqs.len())),
                final_conv_state(&self.config, &seqs, &x),
            ),
        })
    }

    /// The backward for `grads` arriving at `out` (and `hT`, and the final conv state): gradients
    /// of the inputs, of `h0` and `conv_state` when they were given, and of the parameters.
    pub fn backward(&self, inputs: &LayerInputs, grads: &OutputGrads) -> Result<Gradients, Error> {
        let seqs = inputs.validate(&self.config)?;
        grads.validate(&self.config, inputs, &seqs)?;
        let flat_inputs = FlatInputs::new(inputs);
        let x = flat_inputs.view();
        let (dout, dht, d_final) =
            (flat(&grads.dout), grads.dht.as_ref().map(flat), grads.dconv_state.as_ref().map(flat));
        let out_grads = FlatOutputGrads { dout: &dout, dht: dht.as_deref(), dconv_state: d_final.as_deref() };
        let g = backward(&self.config, &self.params, &seqs, &x, &out_grads);
        let c = &self.config;
        Ok(Gradients {
            dqkv: shaped(inputs.qkv.raw_dim(), g.dqkv),
            dz: shaped(inputs.z.raw_dim(), g.dz),
            da: shaped(inputs.a.raw_dim(), g.da),
            db: shaped(inputs.b.raw_dim(), g.db),
            dh0: inputs.h0.as_ref().map(|h0| shaped(h0.raw_dim(), g.dh0)),
            da_log: Array1::from(g.da_log),
            ddt_bias: Array1::from(g.ddt_bias),
            dnorm: Array1::from(g.dnorm),
            dconv: shaped(ndarray::Ix2(c.channels(), c.kk), g.dconv),
            dconv_state: inputs.conv_state.as_ref().map(|s| shaped(s.raw_dim(), g.dconv_state)),
            da_terms: shaped(inputs.a.raw_dim(), g.da_terms),
        })
    }
}

/// The inputs as flat row-major slices, borrowed when the arrays already are.
struct FlatInputs<'a> {
    qkv: Cow<'a, [f64]>,
    z: Cow<'a, [f64]>,
    a: Cow<'a, [f64]>,
    b: Cow<'a, [f64]>,
    h0: Option<Cow<'a, [f64]>>,
    conv_state: Option<Cow<'a, [f64]>>,
}

impl<'a> FlatInputs<'a> {
    fn new(inputs: &'a LayerInputs) -> Self {
        Self {
            qkv: flat(&inputs.qkv),
            z: flat(&inputs.z),
            a: flat(&inputs.a),
            b: flat(&inputs.b),
            h0: inputs.h0.as_ref().map(flat),
            conv_state: inputs.conv_state.as_ref().map(flat),
        }
    }

    fn view(&self) -> Flat<'_> {
        Flat {
            qkv: &self.qkv,
            z: &self.z,
            a: &self.a,
            b: &self.b,
            h0: self.h0.as_deref(),
            conv_state: self.conv_state.as_deref(),
        }
    }
}
