//! `gdn-check`: the command a newcomer runs first.
//!
//! - `gdn-check run`: runs the layer forward and backward on the chosen adapter at a real layer
//!   shape, compares every tensor with the f64 reference (on a sample of sequences and heads when
//!   the whole batch would be slow on the CPU), and prints the errors against their bars and
//!   device times (`--profile`: per kernel; `--plan-only`: only the windows and device memory).
//! - `gdn-check fuzz`: a shape-fuzzing campaign against the reference, with a progress bar.
//! - `gdn-check decode`: the decode step over many sequences, token by token, against the one-shot
//!   forward and the reference, and its device time.
//! - `gdn-check soak`: random shapes for a while, each checked against the reference and a
//!   bitwise repeat on a fresh tape, with host and device memory.
//! - `gdn-check kernel-stats`: what the Vulkan driver reports of each compiled kernel (registers,
//!   spills, shared memory), where it offers `VK_KHR_pipeline_executable_properties`.
//! - `gdn-check recall`: trains a small model on associative recall through the layer.
//! - `gdn-check checkpoint FILE`: one layer of a Hugging Face checkpoint on the device against the
//!   reference, with its own parameters and projections.
//!
//! `--family`, `--precision`, `--storage` and `--preset` take the values `--help` lists
//! ([`cli`]). The checks themselves are the library's (`gdn_check`); the modules here hold only
//! each command's options and what it prints.

// No unsafe code, except the raw Vulkan calls of `kernel_stats` (a diagnostic that opens its own
// device, which wgpu cannot do for it).
#![deny(unsafe_code)]

mod checkpoint_command;
mod cli;
mod decode_command;
#[allow(unsafe_code)]
mod kernel_stats;
mod presets;
mod recall_chart;
mod recall_command;
mod soak_command;

use clap::{Args, Parser, Subcommand};
use cli::{FamilyChoice, PrecisionArg, SpaceArgs, StorageArg};
use gdn_check::Case;
use gdn_check::fuzz::campaign;
use gdn_check::layer_call::LayerCall;
use gdn_check::spot_check::Spots;
use gdn_ref::Batch;
use gdn_ref::sample::Regime;
use gdn_train::{Context, Family, Pass, Precision, Storage, TapeOptions};
use presets::LayerArgs;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(about = "Checks the Gated DeltaNet device layer against its f64 reference")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run forward and backward at a layer shape, compare with the reference, time the device.
    Run(RunArgs),
    /// Fuzz shapes against the reference; failures shrink and are persisted as regressions.
    Fuzz(FuzzArgs),
    /// Decode sequences a step at a time, compare with the one-shot forward, time a step.
    Decode(decode_command::DecodeArgs),
    /// Random shapes forward and backward for a while: bars, bitwise repeats, memory.
    Soak(soak_command::SoakArgs),
    /// The Vulkan driver's statistics of each compiled kernel: registers, spills, shared memory.
    KernelStats(kernel_stats::KernelStatsArgs),
    /// Train a small model on associative recall through the layer: loss and accuracy as it learns.
    Recall(recall_command::RecallArgs),
    /// One layer of a Hugging Face checkpoint (Qwen3.5, Qwen3-Next) on the device against the
    /// reference, forward and backward.
    Checkpoint(checkpoint_command::CheckpointArgs),
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    layer: LayerArgs,
    /// Sequences in the batch (B).
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Tokens per sequence (T).
    #[arg(long, default_value_t = 64)]
    seq: usize,
    /// Kernel family of the delta rule (its knob: --checkpoint-interval or --chunk).
    #[arg(long, value_enum, default_value_t = FamilyChoice::Auto)]
    family: FamilyChoice,
    /// Steps between state checkpoints (recurrent family; 32 when absent).
    #[arg(long)]
    checkpoint_interval: Option<usize>,
    /// Tokens per chunk (chunked family; 64 when absent).
    #[arg(long)]
    chunk: Option<usize>,
    /// Precision of the chunked family's matrix products.
    #[arg(long, value_enum, default_value_t = PrecisionArg(Precision::F32))]
    precision: PrecisionArg,
    /// Storage of the activations and their gradients.
    #[arg(long, value_enum, default_value_t = StorageArg(Storage::F32))]
    storage: StorageArg,
    /// Start from a random initial state and feed a random dhT.
    #[arg(long)]
    state: bool,
    /// Sequences compared with the reference (the rest are only timed); 0 compares none.
    #[arg(long, default_value_t = 1)]
    reference_sequences: usize,
    /// Key heads (each with its value heads) in the reference check; all when absent. Heads are
    /// independent, so a long sequence can be checked on a few of them in a fraction of the time.
    #[arg(long)]
    reference_heads: Option<usize>,
    /// Timed repetitions of forward and of backward (the median is printed).
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
    /// Also time every kernel on its own (GPU timestamps, else each kernel's wall time).
    #[arg(long)]
    profile: bool,
    /// Only lay the call out on the device (its windows, its device memory) and stop: no draw, no
    /// run, no reference (what fits before anything is spent).
    #[arg(long)]
    plan_only: bool,
}

#[derive(Args)]
struct FuzzArgs {
    /// Cases to draw.
    #[arg(long, default_value_t = 200)]
    cases: u32,
    /// Threads running cases at once, sharing the device and its compiled pipelines (the cases
    /// are split among them, each thread drawing from its own seed: see `fuzz::job_seed`).
    #[arg(long, default_value_t = 1)]
    jobs: u32,
    #[command(flatten)]
    space: SpaceArgs,
}

/// The family a `run` asks for, with its knob, or the one a tape picks for the batch (`auto`); the
/// tape checks the knob, then fits it to the sequences.
fn family(args: &RunArgs, ctx: &Context) -> Result<Family, String> {
    let knob = |name: &str, given: Option<usize>, family: &str| match given {
        Some(_) => Err(format!("{name} is the {family} family's knob: give it with --family {family}")),
        None => Ok(()),
    };
    Ok(match args.family {
        FamilyChoice::Named(Family::Recurrent { checkpoint_interval }) => {
            knob("--chunk", args.chunk, "chunked")?;
            Family::Recurrent { checkpoint_interval: args.checkpoint_interval.unwrap_or(checkpoint_interval) }
        }
        FamilyChoice::Named(Family::Chunked { chunk }) => {
            knob("--checkpoint-interval", args.checkpoint_interval, "recurrent")?;
            Family::Chunked { chunk: args.chunk.unwrap_or(chunk) }
        }
        FamilyChoice::Named(other) => other,
        FamilyChoice::Auto => {
            knob("--checkpoint-interval", args.checkpoint_interval, "recurrent")?;
            knob("--chunk", args.chunk, "chunked")?;
            let config = args.layer.resolve()?.1;
            let offsets: Vec<usize> = (0..=args.batch).map(|n| n * args.seq).collect();
            let options = TapeOptions { precision: args.precision.0, ..TapeOptions::default() };
            ctx.picked_family_for_batch(&config, &offsets, &options)
        }
    })
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Run(args) => run(&args),
        Command::Fuzz(args) => fuzz(&args),
        Command::Decode(args) => context().and_then(|ctx| decode_command::command(&ctx, &args)),
        Command::Soak(args) => context().and_then(|ctx| soak_command::command(&ctx, &args)),
        Command::KernelStats(args) => kernel_stats::command(&args),
        Command::Recall(args) => context().and_then(|ctx| recall_command::command(&ctx, &args)),
        Command::Checkpoint(args) => context().and_then(|ctx| checkpoint_command::command(&ctx, &args)),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("gdn-check: {message}");
            ExitCode::from(2)
        }
    }
}

fn context() -> Result<Context, String> {
    let ctx = Context::new().map_err(|e| e.to_string())?;
    println!("adapter: {}", ctx.describe());
    if ctx.is_software() {
        println!(
            "note: this is a software rasteriser (no GPU found or chosen): results are exact, times are not a GPU's"
        );
    }
    Ok(ctx)
}

fn run(args: &RunArgs) -> Result<bool, String> {
    for (name, value) in [("--batch", args.batch), ("--seq", args.seq), ("--repeat", args.repeat)] {
        if value == 0 {
            return Err(format!("{name} must be at least 1, got 0"));
        }
    }
    // Token indices are u32 on the device.
    if args.batch.checked_mul(args.seq).is_none_or(|tokens| u32::try_from(tokens).is_err()) {
        return Err(format!(
            "--batch {} × --seq {} tokens: at most {} tokens a call (the device indexes tokens in u32)",
            args.batch,
            args.seq,
            u32::MAX
        ));
    }
    let (preset, config) = args.layer.resolve()?;
    let precision = args.precision.0;
    let ctx = context()?;
    let family = family(args, &ctx)?;
    println!(
        "layer: {} ({}): nk {}, nv {}, dk {}, dv {}, kk {}; batch {} × {} tokens; family {:?} ({}), precision {}",
        preset.name,
        preset.models,
        config.nk,
        config.nv,
        config.dk,
        config.dv,
        config.kk,
        args.batch,
        args.seq,
        family.fitted(args.seq, precision),
        if args.family == FamilyChoice::Auto {
            "picked by the tape, fitted to the batch"
        } else {
            "fitted to the batch"
        },
        precision.name()
    );

    // The whole batch's tape (or windows of it) first: a shape the device cannot hold is refused
    // before any reference work or any draw.
    let whole = Case {
        config,
        batch: Batch::Fixed { b: args.batch, t: args.seq },
        h0: args.state,
        dht: args.state,
        regime: Regime::Typical,
        family,
        precision,
        storage: args.storage.0,
        seed: args.seed,
    };
    gdn_check::layer_call::check_memory(&ctx, &whole)?;
    let call = LayerCall::new(&ctx, &whole).map_err(|e| e.to_string())?;
    if call.windows() > 1 {
        println!(
            "the batch passes the device's binding or buffer limits, or its driver's loop budget: it runs as {} windows of tokens, chained by their states",
            call.windows()
        );
    }
    let bytes = call.device_bytes();
    println!(
        "tape: {:.1} MiB of device memory, {:.0} bytes per token",
        bytes as f64 / (1u64 << 20) as f64,
        bytes as f64 / (args.batch * args.seq) as f64
    );
    if args.plan_only {
        return Ok(true);
    }
    let sequences = args.reference_sequences.min(args.batch);
    let heads = args.reference_heads.unwrap_or(config.nk).clamp(1, config.nk);
    // Without a reference check the inputs are still a small sample's draw, scrambled.
    let spots = Spots::spread(&config, args.batch, sequences, heads);
    let tensors = spots.whole_tensors(&whole);
    let results = call.run(&tensors).map_err(|e| e.to_string())?;
    let report = if sequences == 0 {
        println!("\nno reference check (--reference-sequences 0)");
        None
    } else {
        println!(
            "\nreference check (gdn-ref, f64) of sequences {:?} of {} and key heads {:?} of {} (with their value heads):",
            spots.sequences, args.batch, spots.heads, config.nk
        );
        let (report, left_out) = spots.check(&whole, &results).map_err(|e| e.to_string())?;
        print!("{}", report.table());
        if !left_out.is_empty() {
            let names: Vec<_> = left_out.iter().map(|t| t.name()).collect();
            println!("not compared: {} (sums over sequences or heads outside the sample)", names.join(", "));
        }
        Some(report)
    };

    let (forward, backward, clock, (kernels, kernel_clock)) = time(&call, args)?;
    let tokens = (args.batch * args.seq) as f64;
    println!("\ndevice time, median of {} ({clock:?}):", args.repeat);
    for (name, t) in [("forward", forward), ("backward", backward), ("forward + backward", forward + backward)] {
        println!("  {name:<19} {:>10.3} ms   {:>12.0} tokens/s", t.as_secs_f64() * 1e3, tokens / t.as_secs_f64());
    }
    if call.windows() > 1 {
        println!("  (the sum of the windows' passes; the host transfers between windows are not in it)");
    }
    if !kernels.is_empty() {
        println!(
            "\nper kernel, median of {} ({kernel_clock:?}): alone, each in a pass of its own; in the pass, its \
             share of one pass of them all (from the end of the dispatch before to its own end):",
            args.repeat
        );
        println!("  {:<42} {:>10} {:>12}", "", "alone", "in the pass");
        for (name, alone, in_pass) in kernels {
            let in_pass = in_pass.map_or("—".to_string(), |t| format!("{:.3} ms", t.as_secs_f64() * 1e3));
            println!("  {name:<42} {:>7.3} ms {in_pass:>12}", alone.as_secs_f64() * 1e3);
        }
    }
    let Some(report) = report else {
        println!("\ntimed only: no tensor compared");
        return Ok(true);
    };
    let verdict = report.passes();
    println!("\n{}", if verdict { "all tensors within their bars" } else { "SOME TENSORS ARE OVER THEIR BARS" });
    Ok(verdict)
}

/// Kernel times of a profile, in dispatch order: each alone (a pass of its own) and its share of
/// one pass (where the device writes timestamps inside passes); and how they were measured.
type KernelTimes = (Vec<(String, Duration, Option<Duration>)>, gdn_train::Clock);

/// Median device times of forward and backward over the whole batch, and per kernel when asked.
fn time(call: &LayerCall, args: &RunArgs) -> Result<(Duration, Duration, gdn_train::Clock, KernelTimes), String> {
    let err = |e: gdn_train::Error| e.to_string();
    let mut clock = gdn_train::Clock::WallClock;
    let mut median = |pass: Pass| -> Result<Duration, String> {
        // Warm up until the GPU has been busy for a while: clocks ramp up under load.
        let warm_up = std::time::Instant::now();
        for run in 0.. {
            call.time(pass).map_err(err)?;
            if run >= 1 && warm_up.elapsed() > Duration::from_millis(500) {
                break;
            }
        }
        let mut times = Vec::new();
        for _ in 0..args.repeat {
            let (t, c) = call.time(pass).map_err(err)?;
            clock = c;
            times.push(t);
        }
        times.sort();
        Ok(times[times.len() / 2])
    };
    let forward = median(Pass::Forward)?;
    let backward = median(Pass::Backward)?;
    let (mut kernels, mut kernel_clock) = (Vec::new(), gdn_train::Clock::GpuTimestamps);
    if args.profile && call.windows() > 1 {
        println!("(no per-kernel profile of a windowed batch: profile one window's shape instead)");
    }
    if let (true, LayerCall::Whole(tape)) = (args.profile, call) {
        let mut in_pass_error = None;
        for pass in [Pass::Forward, Pass::Backward] {
            let mut alone: Vec<Vec<(&str, Duration)>> = Vec::new();
            let mut in_pass: Vec<Vec<(&str, Duration)>> = Vec::new();
            for _ in 0..args.repeat {
                let (run, c) = tape.profile(pass).map_err(err)?;
                kernel_clock = c;
                alone.push(run);
                match tape.profile_in_pass(pass) {
                    Ok(run) => in_pass.push(run),
                    Err(e) => in_pass_error = Some(e.to_string()),
                }
            }
            let median = |runs: &[Vec<(&str, Duration)>], n: usize| {
                let mut times: Vec<Duration> = runs.iter().map(|r| r[n].1).collect();
                times.sort();
                times.get(times.len() / 2).copied()
            };
            for (n, (name, _)) in alone[0].iter().enumerate() {
                let prefix = if pass == Pass::Forward { "fwd " } else { "bwd " };
                let alone = median(&alone, n).expect("one run at least");
                kernels.push((format!("{prefix}{name}"), alone, median(&in_pass, n)));
            }
        }
        if let Some(e) = in_pass_error {
            println!("(no profile within one pass: {e})");
        }
    }
    Ok((forward, backward, clock, (kernels, kernel_clock)))
}

/// Cases between two progress lines of a campaign whose output is not a terminal.
const PROGRESS_EVERY: u32 = 25;

fn fuzz(args: &FuzzArgs) -> Result<bool, String> {
    if args.jobs == 0 {
        return Err("--jobs must be at least 1, got 0".into());
    }
    let ctx = context()?;
    let space = args.space.space_on(&ctx)?;
    println!("fuzzing {} cases (seed {}, {} jobs) over {space:?}", args.cases, args.space.seed, args.jobs);
    let bar = indicatif::ProgressBar::new(u64::from(args.cases));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} cases  {elapsed} elapsed, {eta} left  {msg}")
            .expect("valid template"),
    );
    // The bar hides when stderr is not a terminal (a log file, a remote run): then a line every
    // PROGRESS_EVERY cases says how far a campaign got, should it be cut short.
    let terminal = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let cases_done = std::sync::atomic::AtomicU32::new(0);
    let result = campaign(&ctx, &space, args.cases, args.space.seed, args.jobs, |_, report| {
        bar.inc(1);
        let run = cases_done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if !report.passes() {
            bar.set_message("failure found, shrinking");
        }
        if !terminal && (run.is_multiple_of(PROGRESS_EVERY) || !report.passes()) {
            let verdict = if report.passes() { "" } else { ", this one over its bars: shrinking" };
            println!("{run} cases run in {:.0} s{verdict}", started.elapsed().as_secs_f64());
        }
    });
    bar.finish();
    println!(
        "\n{} cases run (shrinking included); worst relative error per tensor:\n{}",
        result.cases_run,
        result.table()
    );
    match &result.failure {
        None => {
            println!("no failures");
            Ok(true)
        }
        Some(failure) => {
            println!("FAILED: minimal case {:?}\n{}", failure.case, failure.reason);
            println!("its seed is persisted in {}", gdn_check::fuzz::REGRESSIONS);
            Ok(false)
        }
    }
}
