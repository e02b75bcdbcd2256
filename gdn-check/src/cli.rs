//! The command line's typed values: `--family`, `--precision` and `--storage` as clap
//! [`ValueEnum`]s, listed with their meaning in `--help`, and the options the fuzz and soak
//! commands share ([`SpaceArgs`]).
//!
//! Families and precisions are read from gdn-train's own lists (`Family::ALL`, `Precision::ALL`)
//! and spelt by their `name()`, so a family added there is accepted here with no edit.

use clap::ValueEnum;
use clap::builder::PossibleValue;
use gdn_check::fuzz::Space;
use gdn_train::{Context, Family, Precision, Storage};
use std::sync::LazyLock;

/// What a family's value says in `--help`.
fn family_help(family: Family) -> &'static str {
    match family {
        Family::Recurrent { .. } => "token by token, the state in registers, checkpointed",
        Family::Chunked { .. } => "matrix products within chunks of tokens",
        _ => "",
    }
}

/// `run --family`: one family, or the one the tape picks for the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilyChoice {
    /// The family the tape picks for the batch on this adapter.
    Auto,
    /// This family (its knob set from the command line).
    Named(Family),
}

impl ValueEnum for FamilyChoice {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<FamilyChoice>> =
            LazyLock::new(|| std::iter::once(FamilyChoice::Auto).chain(Family::ALL.map(FamilyChoice::Named)).collect());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            FamilyChoice::Auto => PossibleValue::new("auto").help("the family the tape picks for the batch"),
            FamilyChoice::Named(family) => PossibleValue::new(family.name()).help(family_help(*family)),
        })
    }
}

/// `fuzz --family` and `soak --family`: the families a campaign draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FamilySet {
    /// Every family.
    All,
    /// This family only (its knob drawn too).
    Only(Family),
}

impl ValueEnum for FamilySet {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<FamilySet>> =
            LazyLock::new(|| std::iter::once(FamilySet::All).chain(Family::ALL.map(FamilySet::Only)).collect());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self {
            FamilySet::All => PossibleValue::new("all").help("every family"),
            FamilySet::Only(family) => PossibleValue::new(family.name()).help(family_help(*family)),
        })
    }
}

/// `--precision`: the arithmetic of the chunked family's matrix products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrecisionArg(pub Precision);

impl ValueEnum for PrecisionArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<PrecisionArg>> = LazyLock::new(|| Precision::ALL.map(PrecisionArg).to_vec());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            Precision::F32 => "f32 operands and accumulation, on every device",
            Precision::TensorCore => "f16 operands on tensor cores, f32 accumulation (cooperative matrices)",
            _ => "",
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// `--storage`: how the activations and their gradients are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageArg(pub Storage);

impl ValueEnum for StorageArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[StorageArg(Storage::F32), StorageArg(Storage::Bf16), StorageArg(Storage::F16)]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.0 {
            Storage::F32 => "f32, as the kernels compute",
            Storage::Bf16 => "bfloat16, two to a word",
            Storage::F16 => "IEEE binary16, two to a word",
            _ => "",
        };
        Some(PossibleValue::new(self.0.name()).help(help))
    }
}

/// The options the fuzz and soak commands share: which space to draw from, and the seed.
#[derive(Debug, clap::Args)]
pub struct SpaceArgs {
    /// Seed of the draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Draw from the small space of the test suite instead of head sizes up to 128.
    #[arg(long)]
    quick: bool,
    /// Kernel families to draw.
    #[arg(long, value_enum, default_value_t = FamilySet::All)]
    family: FamilySet,
    /// Precision of the chunked family's matrix products.
    #[arg(long, value_enum, default_value_t = PrecisionArg(Precision::F32))]
    precision: PrecisionArg,
    /// Storage of the activations and their gradients.
    #[arg(long, value_enum, default_value_t = StorageArg(Storage::F32))]
    storage: StorageArg,
}

impl SpaceArgs {
    /// The space the options name: the test suite's small one (`--quick`) or head sizes up to
    /// 128, with the families, precision and storage named.
    pub fn space(&self) -> Space {
        let mut space = if self.quick { Space::quick() } else { Space::wide() };
        if let FamilySet::Only(family) = self.family {
            space.families = vec![family];
        }
        space.precision = self.precision.0;
        space.storage = self.storage.0;
        space
    }

    /// [`SpaceArgs::space`], refused where `ctx` lacks what its precision needs.
    pub fn space_on(&self, ctx: &Context) -> Result<Space, String> {
        let space = self.space();
        ctx.supports(space.precision).map_err(|e| format!("--precision {}: {e}", space.precision.name()))?;
        Ok(space)
    }
}
