//! `gdn-check checkpoint FILE`: one linear-attention layer of a Hugging Face checkpoint (Qwen3.5 or
//! Qwen3-Next, a safetensors file with its `config.json` beside it) on the device against gdn-ref.
//! The layer's own parameters, its input projections applied to random hidden states (unit normal,
//! as after the model's RMSNorm), forward and backward: every tensor at the spec's bars, with a
//! released model's trained decays and norms instead of the spec's draws.

use crate::cli::{FamilyChoice, PrecisionArg};
use gdn_check::Case;
use gdn_check::checkpoint::{reference_inputs, reference_params};
use gdn_ref::Batch;
use gdn_ref::sample::Regime;
use gdn_train::checkpoint::{HF_PREFIX, LayerWeights};
use gdn_train::{Context, Precision, Storage, TapeOptions};
use rand::SeedableRng;
use rand_distr::{Distribution, StandardNormal};
use std::path::PathBuf;

/// Tokens a call may have: the reference runs every one of them in f64.
const MOST_TOKENS: usize = 1 << 16;

/// Arguments of `gdn-check checkpoint`.
#[derive(Debug, clap::Args)]
pub struct CheckpointArgs {
    /// The safetensors file (its `config.json` beside it).
    file: PathBuf,
    /// The layer, a linear-attention one.
    #[arg(long, default_value_t = 0)]
    layer: usize,
    /// The layer's tensor-name prefix, `{i}` standing for the layer.
    #[arg(long, default_value = HF_PREFIX)]
    prefix: String,
    /// Sequences in the batch (B).
    #[arg(long, default_value_t = 1)]
    batch: usize,
    /// Tokens per sequence (T).
    #[arg(long, default_value_t = 64)]
    seq: usize,
    /// Kernel family of the delta rule.
    #[arg(long, value_enum, default_value_t = FamilyChoice::Auto)]
    family: FamilyChoice,
    /// Precision of the chunked family's matrix products.
    #[arg(long, value_enum, default_value_t = PrecisionArg(Precision::F32))]
    precision: PrecisionArg,
    /// Seed of the hidden states and the output gradients.
    #[arg(long, default_value_t = 2026)]
    seed: u64,
}

/// Runs the command; `Ok(false)` when a tensor is over its bar.
pub fn command(ctx: &Context, args: &CheckpointArgs) -> Result<bool, String> {
    let tokens = args.batch.saturating_mul(args.seq);
    if args.batch == 0 || args.seq == 0 || tokens > MOST_TOKENS {
        return Err(format!(
            "--batch {} × --seq {}: between 1 and {MOST_TOKENS} tokens (the reference runs them all in f64)",
            args.batch, args.seq
        ));
    }
    let weights = LayerWeights::load_beside_config(&args.file, &args.prefix, args.layer).map_err(|e| e.to_string())?;
    let config = weights.config;
    let batch = Batch::Fixed { b: args.batch, t: args.seq };
    let precision = args.precision.0;
    let family = match args.family {
        FamilyChoice::Named(family) => family,
        FamilyChoice::Auto => {
            let offsets: Vec<usize> = (0..=args.batch).map(|n| n * args.seq).collect();
            ctx.picked_family_for_batch(&config, &offsets, &TapeOptions { precision, ..TapeOptions::default() })
        }
    };
    println!(
        "layer {} of {} ({:?}): nk {}, nv {}, dk {}, dv {}, kk {}, hidden {}; batch {} × {} tokens; family {family:?}, precision {}",
        args.layer,
        args.file.display(),
        weights.scheme,
        config.nk,
        config.nv,
        config.dk,
        config.dv,
        config.kk,
        weights.hidden_size,
        args.batch,
        args.seq,
        precision.name()
    );
    let case = Case {
        config,
        batch,
        h0: false,
        dht: false,
        regime: Regime::Typical,
        family,
        precision,
        storage: Storage::F32,
        seed: args.seed,
    };
    let mut rng = rand::rngs::StdRng::seed_from_u64(args.seed);
    let hidden: Vec<f32> = (0..tokens * weights.hidden_size).map(|_| StandardNormal.sample(&mut rng)).collect();
    let projected = weights.project(&hidden).map_err(|e| e.to_string())?;
    // The case's draw supplies the output gradients; the parameters and inputs are the checkpoint's.
    let mut draw = case.draw();
    draw.params = reference_params(&weights);
    draw.inputs = reference_inputs(&projected, args.batch, args.seq);
    let (report, _) = case.run_draw(ctx, &draw).map_err(|e| e.to_string())?;
    println!("\nreference check (gdn-ref, f64) of every token and head:");
    print!("{}", report.table());
    let verdict = report.passes();
    println!("\n{}", if verdict { "all tensors within their bars" } else { "SOME TENSORS ARE OVER THEIR BARS" });
    Ok(verdict)
}
