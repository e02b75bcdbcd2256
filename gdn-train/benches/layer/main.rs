//! Criterion benches of the Gated DeltaNet layer: for every family of [`setup::families`] and
//! every shape of `GDN_BENCH_SHAPES` (see [`shapes`]), the whole forward, backward and step
//! (forward then backward), and every kernel of each pass. Bench ids are
//! `{family}-{shape}/layer/{forward,backward,step}` and `{family}-{shape}/{fwd,bwd}/{kernel}`;
//! criterion's filter picks among them (`cargo bench -p gdn-train -- /layer/`).
//!
//! Times are device time (see [`measure`]): GPU timestamps, or where the adapter has none wall
//! time around submit and a device poll, which the run says. It also prints each tape's device
//! memory, and writes a JSON-lines summary (see [`summary`]). Then the decode step ([`decode`]).

mod decode;
mod measure;
mod setup;
mod shapes;
mod summary;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use gdn_train::{Context, Pass};
use measure::Target;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("gdn-train bench: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let shapes = shapes::from_env()?;
    let ctx = Context::new().map_err(|e| e.to_string())?;
    println!("adapter: {}", ctx.describe());
    if ctx.device().features().contains(gdn_train::wgpu::Features::TIMESTAMP_QUERY) {
        println!("clock: GPU timestamp queries around each compute pass");
    } else {
        println!(
            "clock: this adapter has no timestamp queries: wall time around submit and a device poll \
             (submission overhead included)"
        );
    }
    // A software adapter gets a short warm-up and measurement; a GPU warms up long enough for its
    // clocks to ramp. Criterion's own options (--warm-up-time, --measurement-time) override these.
    let (warm_up, measurement) = if ctx.is_software() {
        (Duration::from_millis(200), Duration::from_secs(1))
    } else {
        (Duration::from_millis(500), Duration::from_secs(2))
    };
    let home = summary::criterion_home();
    let mut criterion = Criterion::default()
        .output_directory(&home)
        .sample_size(10)
        .warm_up_time(warm_up)
        .measurement_time(measurement)
        .configure_from_args();
    let mut summary = summary::Summary::new(&ctx, home, &shapes);
    for (family_name, family, precision) in setup::families() {
        for shape in &shapes {
            let label = format!("{family_name}-{}", shape.name);
            let tape = setup::tape(&ctx, family, precision, shape);
            let (tape, probe) = match tape.and_then(|t| measure::probe(&t).map(|p| (t, p))) {
                Ok(ready) => ready,
                Err(reason) => {
                    println!("skipped {label}: {reason}");
                    summary.skipped(family_name, shape, &reason);
                    continue;
                }
            };
            let bytes = tape.device_bytes();
            println!(
                "tape {label}: {:.1} MiB of device memory, {:.0} bytes per token",
                bytes as f64 / f64::from(1 << 20),
                bytes as f64 / shape.tokens() as f64
            );
            summary.tape(family_name, shape, bytes);

            let dispatches = |pass: Option<Pass>| -> usize {
                probe.kernels.iter().filter(|(p, ..)| pass.is_none_or(|pass| *p == pass)).map(|k| k.2).sum()
            };
            let layer = [
                (Target::Forward, dispatches(Some(Pass::Forward))),
                (Target::Backward, dispatches(Some(Pass::Backward))),
                (Target::Step, dispatches(None)),
            ];
            let kernels = probe.kernels.iter().map(|&(pass, name, count)| (Target::Kernel(pass, name), count));
            let mut group = criterion.benchmark_group(&label);
            group.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(shape.tokens() as u64));
            for (target, count) in layer.into_iter().chain(kernels) {
                let clock = if matches!(target, Target::Kernel(..)) { probe.kernel_clock } else { probe.layer_clock };
                summary.bench(family_name, shape, &label, target, clock, count);
                let (part, name) = target.id();
                group.bench_function(BenchmarkId::new(part, name), |b| {
                    b.iter_custom(|iters| measure::run(&tape, target, iters))
                });
            }
            group.finish();
        }
    }
    decode::bench(&ctx, &mut criterion, &mut summary)?;
    criterion.final_summary();
    let (path, measured) = summary.write()?;
    println!("summary: {measured} benches measured, written to {}", path.display());
    Ok(())
}
