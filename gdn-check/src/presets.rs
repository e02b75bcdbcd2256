//! The real layer shapes (public model configs; `dk = dv = 128`, `kk = 4` in all of them).

use gdn_ref::LayerConfig;

/// A named layer shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Preset {
    /// Name on the command line.
    pub name: &'static str,
    /// The models that use it.
    pub models: &'static str,
    /// Key heads.
    pub nk: usize,
    /// Value heads.
    pub nv: usize,
}

/// Every preset, smallest first.
pub const PRESETS: [Preset; 4] = [
    Preset { name: "qwen3.5-small", models: "Qwen3.5-0.8B", nk: 16, nv: 16 },
    Preset { name: "qwen3-next", models: "Qwen3-Next-80B-A3B, Qwen3.5-35B-A3B", nk: 16, nv: 32 },
    Preset { name: "qwen3.5-27b", models: "Qwen3.5-27B", nk: 16, nv: 48 },
    Preset { name: "qwen3.5-large", models: "Qwen3.5-122B, Qwen3.5-397B", nk: 16, nv: 64 },
];

/// `--preset`: spelt by its name, its models in `--help`.
impl clap::ValueEnum for Preset {
    fn value_variants<'a>() -> &'a [Self] {
        &PRESETS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name).help(self.models))
    }
}

impl Preset {
    /// Its layer: `dk = dv = 128`, `kk = 4`, RMSNorm ε 1e-6.
    pub fn config(&self) -> LayerConfig {
        LayerConfig::new(self.nk, self.nv, 128, 128, 4).expect("presets are valid")
    }
}

/// The layer-shape options the commands share: a preset, and overrides of its sizes.
#[derive(Debug, clap::Args)]
pub struct LayerArgs {
    /// Layer shape.
    #[arg(long, value_enum, default_value = "qwen3-next")]
    preset: Preset,
    /// Override the preset's key heads.
    #[arg(long)]
    nk: Option<usize>,
    /// Override the preset's value heads.
    #[arg(long)]
    nv: Option<usize>,
    /// Override the key head dim.
    #[arg(long)]
    dk: Option<usize>,
    /// Override the value head dim.
    #[arg(long)]
    dv: Option<usize>,
    /// Override the conv taps.
    #[arg(long)]
    kk: Option<usize>,
}

impl LayerArgs {
    /// The preset named, and its layer with the overrides applied (checked).
    pub fn resolve(&self) -> Result<(Preset, LayerConfig), String> {
        let preset = self.preset;
        let base = preset.config();
        let config = LayerConfig::new(
            self.nk.unwrap_or(base.nk),
            self.nv.unwrap_or(base.nv),
            self.dk.unwrap_or(base.dk),
            self.dv.unwrap_or(base.dv),
            self.kk.unwrap_or(base.kk),
        )
        .map_err(|e| e.to_string())?;
        Ok((preset, config))
    }
}
