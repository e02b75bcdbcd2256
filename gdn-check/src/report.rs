//! What a case measured: the relative RMS error of each tensor, judged against its bar.

use crate::Tensor;

/// The error of one tensor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensorError {
    /// Which tensor.
    pub tensor: Tensor,
    /// `‖got − ref‖₂ / ‖ref‖₂` (infinite for a NaN, an infinity or a wrong length).
    pub error: f64,
    /// The spec's bar for it ([`Tensor::bar`] in the case's precision and regime); `None` where the
    /// error is only reported.
    pub bar: Option<f64>,
    /// How much the tensor's sum cancels: `‖Σ_t |term_t|‖₂ / ‖Σ_t term_t‖₂` for the gate
    /// parameters' gradients (sums over every token of signed terms), 1 for every other tensor. A
    /// sum whose terms each carry a relative error ε has an error up to ε·Σ|term|, whatever computes
    /// it: its bar is judged against the magnitude of its terms, `error ≤ bar · cancellation`.
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

    /// A table: tensor, error, bar, verdict (with the cancellation of a sum that has one).
    pub fn table(&self) -> String {
        let mut out = format!("{:<9} {:>10} {:>8}  verdict\n", "tensor", "error", "bar");
        for e in &self.errors {
            let verdict = if e.passes() { "ok" } else { "FAIL" };
            let cancels =
                if e.cancellation > 1.0 { format!(" (sum cancels {:.1}×)", e.cancellation) } else { String::new() };
            out += &format!("{:<9} {:>10.2e} {:>8}  {verdict}{cancels}\n", e.tensor.name(), e.error, show_bar(e.bar));
        }
        out
    }
}

/// A bar as tables print it: `1e-4`, or `report` where there is none.
pub fn show_bar(bar: Option<f64>) -> String {
    bar.map_or_else(|| "report".to_string(), |bar| format!("{bar:.0e}"))
}
