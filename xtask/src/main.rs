//! `cargo xtask`: the project's own commands, written in Rust so that they run wherever cargo does.
//!
//! - `verify`: the gate before every merge (format, lints, the whole test suite), each step named
//!   as it runs; the first failure stops it with a non-zero exit.

mod verify;

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
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Verify => verify::run(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}
