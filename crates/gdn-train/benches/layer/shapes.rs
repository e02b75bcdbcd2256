//! The shapes the benches run at: small ones by default, so that a software adapter (lavapipe)
//! finishes in a couple of minutes, and the standard shapes of `BENCHMARKS.md` on a GPU.
//! `GDN_BENCH_SHAPES` picks them: `small` (the default), `standard`, or a comma list of names.

/// One batch shape of one layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Its name in bench ids and reports.
    pub name: &'static str,
    /// Sequences.
    pub b: usize,
    /// Tokens per sequence.
    pub t: usize,
    /// Key heads.
    pub nk: usize,
    /// Value heads.
    pub nv: usize,
    /// Head dims (dk = dv).
    pub d: usize,
    /// Conv taps.
    pub kk: usize,
}

impl Shape {
    const fn new(name: &'static str, b: usize, t: usize, nk: usize, nv: usize, d: usize) -> Self {
        Self { name, b, t, nk, nv, d, kk: 4 }
    }

    /// Tokens per step, `b·t`.
    pub fn tokens(&self) -> usize {
        self.b * self.t
    }
}

/// Tiny shapes a software adapter runs in seconds.
pub const SMALL: [Shape; 2] = [Shape::new("tiny", 2, 64, 2, 4, 32), Shape::new("tiny-decode", 8, 1, 2, 4, 32)];

/// The standard shapes (dk = dv = 128, kk = 4): Qwen3-Next's heads at 8 × 1024 and 2 × 4096 tokens,
/// Qwen3.5-122B's at 8192, a small layer, and one decode step of 64 sequences.
pub const STANDARD: [Shape; 5] = [
    Shape::new("s1", 8, 1024, 16, 32, 128),
    Shape::new("s2", 2, 4096, 16, 32, 128),
    Shape::new("s3", 1, 8192, 16, 64, 128),
    Shape::new("s4", 1, 128, 2, 4, 128),
    Shape::new("decode", 64, 1, 16, 32, 128),
];

/// The shapes `GDN_BENCH_SHAPES` names (unset: [`SMALL`]).
pub fn from_env() -> Result<Vec<Shape>, String> {
    parse(std::env::var("GDN_BENCH_SHAPES").ok().as_deref().unwrap_or("small"))
}

/// `small`, `standard`, or a comma list of shape names.
pub fn parse(value: &str) -> Result<Vec<Shape>, String> {
    match value.trim() {
        "small" => Ok(SMALL.to_vec()),
        "standard" => Ok(STANDARD.to_vec()),
        list => list
            .split(',')
            .map(|name| {
                SMALL.iter().chain(&STANDARD).find(|s| s.name == name.trim()).copied().ok_or_else(|| {
                    let known: Vec<_> = SMALL.iter().chain(&STANDARD).map(|s| s.name).collect();
                    format!(
                        "GDN_BENCH_SHAPES: unknown shape {name:?}; use small, standard or a comma list of {}",
                        known.join(", ")
                    )
                })
            })
            .collect(),
    }
}
