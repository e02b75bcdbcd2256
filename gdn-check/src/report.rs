//! What a case measured: the relative RMS error of each tensor, judged against its bar.

use crate::{FAST_FAMILY_FACTOR, FAST_FAMILY_FLOOR, Tensor};

/// The error of one tensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensorError {
    /// Which tensor.
    pub tensor: Tensor,
    /// `‖got − ref‖₂ / ‖ref‖₂` (infinite for a NaN, an infinity or a wrong length).
    pub error: f64,
    /// The spec's bar for it ([`crate::bar`] in the case's precision and regime); `None` where the
    /// error is only reported.
    pub bar: Option<f64>,
    /// How far the bar widens for sums that cancel, ≥ 1 (`error ≤ bar · cancellation`). For the
    /// gate parameters' gradients (sums over every token of signed terms) it is
    /// `κ = ‖Σ_t |term_t|‖₂ / ‖Σ_t term_t‖₂`: a sum whose terms each carry a relative error ε has an
    /// error up to ε·Σ|term|, whatever computes it. With operands rounded to f16 (tensor cores) it
    /// is also at least `F16_ROUNDING · κ / bar` for `da` and those sums, `κ` taken over each
    /// `dℓ_t`'s own `dk·dv` terms ([`crate::Expected::rounding_in`]). 1 for every other tensor.
    pub cancellation: f64,
}

impl TensorError {
    /// Whether the error is finite and within the tensor's bar (a reported error need only be
    /// finite: NaN or infinity never passes).
    pub fn passes(&self) -> bool {
        self.error.is_finite() && self.bar.is_none_or(|bar| self.error <= bar * self.cancellation)
    }
}

/// Every tensor of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// One entry per compared tensor.
    pub errors: Vec<TensorError>,
}

impl Report {
    /// Whether every tensor is within its bar.
    pub fn passes(&self) -> bool {
        self.errors.iter().all(TensorError::passes)
    }

    /// The tensors over their bars.
    pub fn failures(&self) -> impl Iterator<Item = &TensorError> {
        self.errors.iter().filter(|e| !e.passes())
    }

    /// The tensors whose error exceeds the spec's allowance for a fast family against `recurrent`
    /// (the f32 recurrent family's report on the same inputs): more than [`FAST_FAMILY_FACTOR`]
    /// times its error and more than [`FAST_FAMILY_FLOOR`], as (this error, the recurrent one).
    pub fn beside(&self, recurrent: &Report) -> Vec<(Tensor, f64, f64)> {
        self.errors
            .iter()
            .filter_map(|e| {
                let base = recurrent.errors.iter().find(|r| r.tensor == e.tensor)?;
                let allowed = (FAST_FAMILY_FACTOR * base.error).max(FAST_FAMILY_FLOOR);
                (e.error.is_nan() || e.error > allowed).then_some((e.tensor, e.error, base.error))
            })
            .collect()
    }

    /// A table: tensor, error, bar, verdict (with the factor a cancelling sum widens the bar by).
    pub fn table(&self) -> String {
        let mut out = format!("{:<9} {:>10} {:>8}  verdict\n", "tensor", "error", "bar");
        for e in &self.errors {
            let verdict = if e.passes() { "ok" } else { "FAIL" };
            let cancels = if e.cancellation > 1.0 {
                format!(" (bar × {:.1}: its sums cancel)", e.cancellation)
            } else {
                String::new()
            };
            out += &format!("{:<9} {:>10.2e} {:>8}  {verdict}{cancels}\n", e.tensor.name(), e.error, show_bar(e.bar));
        }
        out
    }
}

/// A bar as tables print it: `1e-4`, or `report` where there is none.
pub fn show_bar(bar: Option<f64>) -> String {
    bar.map_or_else(|| "report".to_string(), |bar| format!("{bar:.0e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(errors: &[(Tensor, f64)]) -> Report {
        Report {
            errors: errors
                .iter()
                .map(|&(tensor, error)| TensorError { tensor, error, bar: Some(5e-4), cancellation: 1.0 })
                .collect(),
        }
    }

    #[test]
    fn a_fast_family_may_reach_twice_the_recurrent_error_or_the_floor() {
        let recurrent = report(&[(Tensor::Out, 1e-5), (Tensor::Dqkv, 1e-7), (Tensor::Da, 2e-5)]);
        let within = report(&[(Tensor::Out, 1.9e-5), (Tensor::Dqkv, 9e-6), (Tensor::Da, 4e-5)]);
        assert!(within.beside(&recurrent).is_empty());
        let over = report(&[(Tensor::Out, 2.1e-5), (Tensor::Dqkv, 1.1e-5), (Tensor::Da, f64::NAN)]);
        let tensors: Vec<Tensor> = over.beside(&recurrent).into_iter().map(|(t, _, _)| t).collect();
        assert_eq!(tensors, [Tensor::Out, Tensor::Dqkv, Tensor::Da]);
    }
}
