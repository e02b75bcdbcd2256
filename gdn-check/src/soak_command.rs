//! The `gdn-check soak` command: its options, and the summary it prints of [`gdn_check::soak::soak`].

use crate::cli::SpaceArgs;
use gdn_check::soak::{Memory, soak};
use gdn_train::Context;
use std::time::Duration;

/// Options of `gdn-check soak`.
#[derive(clap::Args)]
pub struct SoakArgs {
    /// Wall-clock minutes to run (at least one round).
    #[arg(long, default_value_t = 5.0)]
    minutes: f64,
    #[command(flatten)]
    space: SpaceArgs,
}

fn mib(bytes: i128) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn describe(m: &Memory) -> String {
    let host = m.host_rss.map_or("unknown".to_string(), |b| mib(b.into()));
    format!("host RSS {host}, device {} buffers, {}", m.device_buffers, mib(m.device_buffer_bytes as i128))
}

/// Runs the soak and prints its summary; `Ok(false)` when a round failed.
pub fn command(ctx: &Context, args: &SoakArgs) -> Result<bool, String> {
    let budget = Duration::try_from_secs_f64(args.minutes * 60.0)
        .map_err(|_| format!("--minutes {} must be a non-negative number of minutes a clock can hold", args.minutes))?;
    let space = args.space.space_on(ctx)?;
    println!("soaking for {} min (seed {}) over {space:?}", args.minutes, args.space.seed);
    let result = soak(ctx, &space, args.space.seed, budget, |n, case| {
        if n % 25 == 1 {
            println!("round {n}: {:?} {:?}, {:?}", case.family, case.precision, case.config);
        }
    });
    println!("\n{} rounds; worst relative error per tensor (judged):", result.rounds);
    for (tensor, error) in &result.worst {
        println!("  {:<9} {error:.2e}", tensor.name());
    }
    println!("memory after the first round: {}", describe(&result.after_first));
    println!("memory after the last round:  {}", describe(&result.after_last));
    if let Some(peak) = result.peak_host_rss {
        println!("peak host RSS: {}", mib(peak.into()));
    }
    for (case, reason) in &result.failures {
        println!("FAILED: {case:?}\n{reason}");
    }
    for case in &result.nondeterministic {
        println!("NOT BITWISE REPEATABLE: {case:?}");
    }
    println!("{}", if result.passed() { "every round within its bars, bitwise repeatable" } else { "SOAK FAILED" });
    Ok(result.passed())
}
