//! `gdn-check decode`: a preset's layer run over `N` sequences a step at a time through the
//! decoder, checked against the one-shot forward and the reference ([`gdn_check::decode`]), with the
//! median device time of a step and the state bandwidth it implies.

use crate::presets::LayerArgs;
use gdn_check::decode::{Schedule, Timing, run};
use gdn_check::layer_call::check_host_memory;
use gdn_train::Context;

/// Arguments of `gdn-check decode`.
#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    #[command(flatten)]
    layer: LayerArgs,
    /// Sequences decoded together (N).
    #[arg(long, default_value_t = 8)]
    sequences: usize,
    /// Steps (each takes `tokens` new tokens of every sequence).
    #[arg(long, default_value_t = 200)]
    steps: usize,
    /// New tokens per sequence per step (T: 1, or up to 8 for speculative decoding).
    #[arg(long, default_value_t = 1)]
    tokens: usize,
    /// Sequences compared with the reference (all are compared with the one-shot forward).
    #[arg(long, default_value_t = 1)]
    reference_sequences: usize,
    /// Seed of the random inputs and states.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
}

/// Runs the command; `Ok(false)` when an error is over its bar.
pub fn command(ctx: &Context, args: &DecodeArgs) -> Result<bool, String> {
    let (preset, config) = args.layer.resolve()?;
    if args.sequences == 0 || args.steps == 0 {
        return Err(format!("--sequences {} and --steps {} must be at least 1", args.sequences, args.steps));
    }
    // The states are kept on the host too (the reference and the one-shot comparison).
    let state_bytes = args
        .sequences
        .checked_mul(config.nv * config.state_size() * 4)
        .ok_or_else(|| format!("--sequences {}: their states' bytes overflow", args.sequences))?;
    let who = format!("--sequences {}", args.sequences);
    check_host_memory(&who, state_bytes as u64, "their states, kept on the host too")?;
    let states = args.sequences * config.nv;
    let state_bytes = state_bytes as f64;
    println!(
        "layer: {} ({}): nk {}, nv {}, dk {}, dv {}, kk {}; {} sequences × {} steps of {} token(s): {states} (sequence, value head) states, {:.1} MiB",
        preset.name,
        preset.models,
        config.nk,
        config.nv,
        config.dk,
        config.dv,
        config.kk,
        args.sequences,
        args.steps,
        args.tokens,
        state_bytes / f64::from(1 << 20)
    );
    let schedule = Schedule::lockstep(args.sequences, args.steps, args.tokens);
    let outcome = run(ctx, &config, &schedule, args.seed, args.reference_sequences, Timing::SteadyState)?;
    println!("kernel: {}", outcome.kernel.name());
    println!(
        "\ndecoded against the one-shot forward (all {} sequences) and gdn-ref (the first {}):",
        args.sequences,
        args.reference_sequences.clamp(1, args.sequences)
    );
    print!("{}", outcome.table());
    if let (Some(median), Some((times, clock))) = (outcome.median_time(), &outcome.times) {
        let seconds = median.as_secs_f64();
        println!(
            "\ndecode step of all {} sequences, median of {} after 0.5 s of warm-up ({clock:?}): {:.2} µs; every \
             state read and written once: {:.1} GB/s",
            args.sequences,
            times.len(),
            seconds * 1e6,
            2.0 * state_bytes / seconds / 1e9
        );
    }
    if let Some((step, steps)) = outcome.back_to_back {
        let seconds = step.as_secs_f64();
        println!(
            "back to back, {steps} steps in one compute pass (a stream of steps, as an engine records them), \
             median pass: {:.2} µs a step; {:.1} GB/s",
            seconds * 1e6,
            2.0 * state_bytes / seconds / 1e9
        );
    }
    let verdict = outcome.passes();
    println!("\n{}", if verdict { "all tensors within their bars" } else { "SOME TENSORS ARE OVER THEIR BARS" });
    Ok(verdict)
}
