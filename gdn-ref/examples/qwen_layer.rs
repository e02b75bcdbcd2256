//! Runs the reference forward and backward on a small layer of Qwen3.5's head shape (dk = dv = 128,
//! kk = 4) and prints what it computed: norms of the outputs and of every gradient.

use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Layer, LayerConfig};
use ndarray::{ArrayBase, Data, Dimension};
use std::time::Instant;

fn rms<S: Data<Elem = f64>, D: Dimension>(a: &ArrayBase<S, D>) -> f64 {
    (a.iter().map(|v| v * v).sum::<f64>() / a.len() as f64).sqrt()
}

fn main() -> Result<(), gdn_ref::Error> {
    let config = LayerConfig::new(2, 4, 128, 128, 4)?;
    let batch = Batch::Fixed { b: 2, t: 64 };
    let mut sampler = Sampler::new(2026);
    let layer = Layer::new(config, sampler.params(&config, Regime::Typical))?;
    let inputs = sampler.inputs(&config, &batch, true, Regime::Typical);
    let grads = sampler.output_grads(&config, &batch, true);
    println!("gdn-ref: layer {config:?}, batch {batch:?}, h0 given");
    let start = Instant::now();
    let fwd = layer.forward(&inputs)?;
    println!("forward  {:>8.1?}   out rms {:.4e}   hT rms {:.4e}", start.elapsed(), rms(&fwd.out), rms(&fwd.ht));
    let start = Instant::now();
    let g = layer.backward(&inputs, &grads)?;
    println!("backward {:>8.1?}", start.elapsed());
    let dh0 = g.dh0.as_ref().expect("h0 was given");
    for (name, value) in [
        ("dqkv", rms(&g.dqkv)),
        ("dz", rms(&g.dz)),
        ("da", rms(&g.da)),
        ("db", rms(&g.db)),
        ("dh0", rms(dh0)),
        ("da_log", rms(&g.da_log)),
        ("ddt_bias", rms(&g.ddt_bias)),
        ("dnorm", rms(&g.dnorm)),
        ("dconv", rms(&g.dconv)),
    ] {
        println!("  {name:<9} rms {value:.4e}");
    }
    Ok(())
}
