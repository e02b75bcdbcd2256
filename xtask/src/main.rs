//! `cargo xtask`: the project's own commands, written in Rust so that they run wherever cargo does.
//!
//! - `verify`: the gate before every merge (format, lints, the whole test suite with the tidy
//!   tests of `tidy.rs`, the browser check), each step named as it runs; the first failure stops
//!   it with a non-zero exit.
//! - `wgsl`: prints the generated WGSL of a kernel variant.
//! - `device-bundle`: builds the release binaries a GPU machine without a toolchain runs
//!   (`gdn-check` and the device test suites) into `.dev/bin` (see `bench/side_by_side.sh`).
//! - `bench`: the layer's criterion benches, with named baselines and ratios against them, or the
//!   release bench binary bundled into `.dev/bin`.
//! - `bench-report`: a side-by-side run appended to `bench/baselines/`, `BENCHMARKS.md` generated
//!   from them (`--check`: unchanged), or one run's summary as markdown tables and a chart.
//! - `web`: the browser check: every kernel compiled by Chromium's Tint, and layer plans run and
//!   checked in its WebGPU (headless, on SwiftShader where there is no GPU).

mod bench;
mod device_bundle;
mod report;
#[cfg(test)]
mod tidy;
mod verify;
mod web;
mod wgsl;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(about = "The project's own commands")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Format check, clippy with warnings denied, and every test: the gate before a merge.
    Verify,
    /// Print the generated WGSL of every kernel (or one) for a head size.
    Wgsl(wgsl::WgslArgs),
    /// Build gdn-check and the device test binaries in release mode into .dev/bin.
    DeviceBundle,
    /// Run the criterion benches of the layer; save or compare baselines; or bundle the binary.
    Bench(bench::BenchArgs),
    /// Append a run to bench/baselines, regenerate BENCHMARKS.md, or render one run's summary.
    BenchReport(report::ReportArgs),
    /// The browser check: kernels compiled by Tint and plans run in headless Chromium's WebGPU.
    Web(web::WebArgs),
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Verify => verify::run(),
        Command::Wgsl(args) => wgsl::run(&args),
        Command::DeviceBundle => device_bundle::run(),
        Command::Bench(args) => bench::run(&args),
        Command::BenchReport(args) => report::run(&args),
        Command::Web(args) => web::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
