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

impl Preset {
    /// The preset called `name`.
    pub fn named(name: &str) -> Option<Preset> {
        PRESETS.into_iter().find(|p| p.name == name)
    }

    /// Its layer: `dk = dv = 128`, `kk = 4`, RMSNorm ε 1e-6.
    pub fn config(&self) -> LayerConfig {
        LayerConfig::new(self.nk, self.nv, 128, 128, 4).expect("presets are valid")
    }
}
