//! The decode step of qwen3-next (nk 16, nv 32, 128 × 128 heads, kk 4), one token for each of
//! N = 8 and N = 64 sequences: 256 and 2 048 (sequence, value head) states, the decode
//! targets. Bench ids `decode/qwen3-next-n{N}`; criterion's `iters` steps run back to back in one
//! compute pass through [`Decoder::time_steps`] (GPU timestamps, or wall time where the adapter has
//! none), as an engine would record them, so the GPU's clocks stay up. A software adapter runs
//! N = 8 only.

use crate::setup::f32s;
use crate::summary::Summary;
use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use gdn_ref::sample::{Regime, Sampler};
use gdn_train::{Context, DecodeCapacity, DecodeInputs, Decoder, LayerConfig, Params, StatePool};

/// Benches the decode step at each N; an error names what failed to set up.
pub fn bench(ctx: &Context, criterion: &mut Criterion, summary: &mut Summary) -> Result<(), String> {
    let config = LayerConfig::new(16, 32, 128, 128, 4).map_err(|e| e.to_string())?;
    let reference = gdn_ref::LayerConfig::new(16, 32, 128, 128, 4).map_err(|e| e.to_string())?;
    let err = |e: gdn_train::Error| e.to_string();
    let mut group = criterion.benchmark_group("decode");
    group.sampling_mode(SamplingMode::Flat);
    let sizes: &[usize] = if ctx.is_software() { &[8] } else { &[8, 64] };
    for &n in sizes {
        let mut sampler = Sampler::new(2026);
        let p = sampler.params(&reference, Regime::Typical);
        let (a_log, dt_bias, norm, conv) = (f32s(&p.a_log), f32s(&p.dt_bias), f32s(&p.norm), f32s(&p.conv));
        let params = Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv };
        let x = sampler.inputs(&reference, &gdn_ref::Batch::Fixed { b: n, t: 1 }, false, Regime::Typical);
        let (qkv, z, a, b) = (f32s(&x.qkv), f32s(&x.z), f32s(&x.a), f32s(&x.b));
        let pool = StatePool::new(ctx, config, n).map_err(err)?;
        let decoder = Decoder::new(ctx, &pool, &params, DecodeCapacity { sequences: n, tokens: 1 }).map_err(err)?;
        decoder.write_inputs(&DecodeInputs { qkv: &qkv, z: &z, a: &a, b: &b }, n, 1).map_err(err)?;
        let slots: Vec<u32> = (0..n as u32).collect();
        let clock = decoder.time_step(&slots, 1).map_err(err)?.1;
        let (states, state_bytes) = (n * config.nv, n * config.nv * config.state_size() * 4);
        println!("decode qwen3-next N = {n}: {states} states, pool {:.0} MiB", state_bytes as f64 / f64::from(1 << 20));
        group.throughput(Throughput::Elements(states as u64));
        let name = format!("n{n}");
        summary.decode(n, states, state_bytes, clock, &name);
        group.bench_function(BenchmarkId::new("qwen3-next", &name), |bencher| {
            bencher.iter_custom(|iters| match decoder.time_steps(&slots, 1, iters as usize) {
                Ok((time, _)) => time,
                Err(e) => panic!("timing the decode step failed: {e}"),
            })
        });
    }
    group.finish();
    Ok(())
}
