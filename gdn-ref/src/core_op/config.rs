//! [`CoreConfig`]: the sizes and the two options of the core op, as fla's `chunk_gated_delta_rule`
//! takes them (`scale`, `use_qk_l2norm_in_kernel`).

use crate::Error;
use crate::recurrence::Heads;

/// Sizes and options of the core op. Value head `h` reads key head `h / rep`, `rep = nv / nk`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoreConfig {
    /// Key (and query) heads.
    pub nk: usize,
    /// Value heads, a multiple of `nk`.
    pub nv: usize,
    /// Key head dim (rows of the state).
    pub dk: usize,
    /// Value head dim (columns of the state).
    pub dv: usize,
    /// Factor applied to `q` (after its L2 norm, when that is on): `o = Sᵀ(scale·q)`.
    pub scale: f64,
    /// L2-normalise `q` and `k` per head inside the op, with the layer's ε ([`crate::L2_EPS`]),
    /// as fla's `use_qk_l2norm_in_kernel=True`. Off, the op takes `k` as given: the delta rule
    /// is stable only for `‖k‖ ≲ 1`, as fla's is.
    pub qk_l2norm: bool,
}

impl CoreConfig {
    /// A checked configuration with fla's defaults: `scale = 1/√dk`, no L2 norm in the op.
    pub fn new(nk: usize, nv: usize, dk: usize, dv: usize) -> Result<Self, Error> {
        let config = Self { nk, nv, dk, dv, scale: 1.0 / (dk as f64).sqrt(), qk_l2norm: false };
        config.validate()?;
        Ok(config)
    }

    /// The same sizes with `q` and `k` L2-normalised in the op (or not).
    pub fn with_qk_l2norm(self, qk_l2norm: bool) -> Self {
        Self { qk_l2norm, ..self }
    }

    /// The same sizes and norm with another `scale`.
    pub fn with_scale(self, scale: f64) -> Self {
        Self { scale, ..self }
    }

    /// Checks every size is positive, `nv % nk == 0` and `scale` is finite and positive.
    pub fn validate(&self) -> Result<(), Error> {
        self.heads().validate()?;
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(Error::NotPositive { name: "scale", value: self.scale });
        }
        Ok(())
    }

    /// The head layout the recurrence needs.
    pub(crate) fn heads(&self) -> Heads {
        Heads { nk: self.nk, nv: self.nv, dk: self.dk, dv: self.dv }
    }
}
