//! `gdn-check recall`: trains the associative-recall model ([`gdn_check::recall`]) and prints its loss
//! and accuracy as it learns, then the accuracy on a held-out batch against chance; `--chart` draws
//! the curves to a PNG.

use clap::Args;
use gdn_check::recall::{RecallConfig, StepRecord, train};
use gdn_train::Context;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `gdn-check recall`.
#[derive(Args)]
pub struct RecallArgs {
    /// Training steps.
    #[arg(long, default_value_t = RecallConfig::default().steps)]
    steps: usize,
    /// Sequences per step.
    #[arg(long, default_value_t = RecallConfig::default().batch)]
    batch: usize,
    /// Key–value pairs per sequence.
    #[arg(long, default_value_t = RecallConfig::default().pairs)]
    pairs: usize,
    /// Distinct values (chance accuracy is one in this many).
    #[arg(long, default_value_t = RecallConfig::default().values)]
    values: usize,
    /// Adam's learning rate.
    #[arg(long, default_value_t = RecallConfig::default().learning_rate)]
    learning_rate: f32,
    /// Seed of the weights and the sequences.
    #[arg(long, default_value_t = RecallConfig::default().seed)]
    seed: u64,
    /// Print every this many steps.
    #[arg(long, default_value_t = 10)]
    every: usize,
    /// Draw loss and accuracy against the step into this PNG.
    #[arg(long)]
    chart: Option<PathBuf>,
}

/// Runs the command; `Ok(false)` when the model did not learn (held-out accuracy at most twice
/// chance).
pub fn command(ctx: &Context, args: &RecallArgs) -> Result<bool, String> {
    let keys = RecallConfig::default().keys.max(args.pairs);
    let config = RecallConfig {
        steps: args.steps,
        batch: args.batch,
        pairs: args.pairs,
        keys,
        values: args.values,
        learning_rate: args.learning_rate,
        seed: args.seed,
        ..RecallConfig::default()
    };
    config.validate()?;
    println!(
        "associative recall: {} pairs, {keys} keys, {} values (chance {:.3}), {} sequences of {} tokens per step; \
         layer nk {}, nv {}, dk = dv = {}",
        config.pairs,
        config.values,
        1.0 / config.values as f32,
        config.batch,
        config.tokens(),
        config.heads.0,
        config.heads.1,
        config.heads.2
    );
    let started = Instant::now();
    let mut records: Vec<StepRecord> = Vec::new();
    let every = args.every.max(1);
    let held_out = train(ctx, &config, |r| {
        if r.step % every == 0 || r.step + 1 == config.steps {
            println!("step {:>5}  loss {:.4}  accuracy {:.3}  ({:.1?})", r.step, r.loss, r.accuracy, started.elapsed());
        }
        records.push(r);
    })?;
    let chance = 1.0 / config.values as f32;
    println!(
        "held-out accuracy {held_out:.3} (chance {chance:.3}) after {} steps in {:.1?}",
        config.steps,
        started.elapsed()
    );
    if let Some(path) = &args.chart {
        crate::recall_chart::draw(&records, chance, path)?;
        println!("chart: {}", path.display());
    }
    Ok(held_out > 2.0 * chance)
}
