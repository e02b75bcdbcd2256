//! The shape every tensor of one layer must have in the file, from the layer's sizes and the
//! model's hidden size, computed once with checked arithmetic (a config from a file may hold any
//! number) so that every later product is known not to overflow.

use crate::{LayerConfig, Result};

/// The expected shapes, Hugging Face's: a linear layer's weight is `[out_features, in_features]`.
pub(crate) struct Shapes {
    pub(crate) qkv: [usize; 2],
    pub(crate) z: [usize; 2],
    pub(crate) b: [usize; 2],
    pub(crate) a: [usize; 2],
    pub(crate) qkvz: [usize; 2],
    pub(crate) ba: [usize; 2],
    pub(crate) conv: [usize; 3],
    pub(crate) heads: [usize; 1],
    pub(crate) norm: [usize; 1],
    pub(crate) out: [usize; 2],
}

impl Shapes {
    /// The shapes of a layer of `config` in a model of width `hidden`, after checking `config`
    /// (gdn-ref's rules) and that no tensor's element count overflows.
    pub(crate) fn new(config: &LayerConfig, hidden: usize) -> Result<Self> {
        config.validate()?;
        if hidden == 0 {
            return Err(gdn_ref::Error::Empty { name: "hidden_size" }.into());
        }
        let too_large = || gdn_ref::Error::TooLarge {
            name: "checkpoint layer",
            reason: format!("the tensors of {config:?} with hidden_size {hidden} overflow usize"),
        };
        let mul = |a: usize, b: usize| a.checked_mul(b).ok_or_else(too_large);
        let key = mul(config.nk, config.dk)?;
        let value = mul(config.nv, config.dv)?;
        let channels = mul(key, 2)?.checked_add(value).ok_or_else(too_large)?;
        let merged = channels.checked_add(value).ok_or_else(too_large)?;
        let two_nv = mul(config.nv, 2)?;
        // Every tensor's element count, so that none overflows later.
        mul(merged, hidden)?;
        mul(two_nv, hidden)?;
        mul(channels, config.kk)?;
        Ok(Self {
            qkv: [channels, hidden],
            z: [value, hidden],
            b: [config.nv, hidden],
            a: [config.nv, hidden],
            qkvz: [merged, hidden],
            ba: [two_nv, hidden],
            conv: [channels, 1, config.kk],
            heads: [config.nv],
            norm: [config.dv],
            out: [hidden, value],
        })
    }
}
