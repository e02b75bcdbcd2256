//! The core op's hand-written backward: the recurrence's ([`crate::recurrence::backward`], the
//! layer's own), then `q̂`/`k̂`'s and the gates', each in the form its input came in.

use super::forward::Prepared;
use super::{BetaGrad, BetaInput, CoreConfig, CoreGradients, CoreInputs, CoreOutputGrads, DecayGrad};
use crate::arrays::{flat, shaped};
use crate::gates::{LogitGrads, write_strength_backward};
use crate::{Sequences, recurrence};
use ndarray::Array1;

/// Gradients of every input for `grads` arriving at `o` and `hT`; `inputs` and `grads` already
/// validated against `config`.
pub(crate) fn backward(
    config: &CoreConfig,
    seqs: &Sequences,
    inputs: &CoreInputs,
    grads: &CoreOutputGrads,
) -> CoreGradients {
    let x = Prepared::new(config, inputs);
    let (d_o, dht) = (flat(&grads.d_o), grads.dht.as_ref().map(flat));
    let mut dv = vec![0.0; x.v.len()];
    let rec =
        recurrence::backward(&config.heads(), seqs, &x.streams(config), x.h0.as_deref(), &d_o, dht.as_deref(), &mut dv);

    // ln g: d ln g = dg·g; the logits: da = d ln g·(−exp(a_log))·σ(arg), Σ da, Σ d ln g·ln g.
    let dln_g = x.decay.log_grad(&rec.dg);
    let [b, t] = inputs.token_dims();
    let gates = ndarray::Ix3(b, t, config.nv);
    let decay = match &x.logits {
        None => DecayGrad::LogSpace(shaped(gates, dln_g)),
        Some(logits) => {
            let LogitGrads { da, da_log, ddt_bias } = x.decay.logits_backward(logits.a_log, &logits.arg, &dln_g);
            DecayGrad::Logits { da: shaped(gates, da), da_log: Array1::from(da_log), ddt_bias: Array1::from(ddt_bias) }
        }
    };
    // β = σ(b): db = dβ·β(1 − β).
    let beta = match &inputs.beta {
        BetaInput::Direct(_) => BetaGrad::Direct(shaped(gates, rec.dbeta)),
        BetaInput::Logits(_) => BetaGrad::Logits(shaped(gates, write_strength_backward(&x.beta, &rec.dbeta))),
    };
    CoreGradients {
        dq: shaped(inputs.q.raw_dim(), x.q_hat.backward(config, &x.q, &rec.dq_hat)),
        dk: shaped(inputs.k.raw_dim(), x.k_hat.backward(config, &x.k, &rec.dk_hat)),
        dv: shaped(inputs.v.raw_dim(), dv),
        decay,
        beta,
        dh0: inputs.h0.as_ref().map(|h0| shaped(h0.raw_dim(), rec.dh0)),
    }
}
