//! The shapes the benches run at: small ones by default, so that a software adapter (lavapipe)
//! finishes in a couple of minutes, and the standard shapes of `BENCHMARKS.md` on a GPU.
//! `GDN_BENCH_SHAPES` picks them: `small` (the default), `standard`, `crossover`, a comma list of
//! those sets and of shape names.

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

/// Qwen3-Next's heads at 2 048 tokens per step cut into sequences of 16 to 512 tokens: where the
/// chunked family overtakes the recurrent one (the tape's automatic choice is set from these).
pub const CROSSOVER: [Shape; 6] = [
    Shape::new("t16", 128, 16, 16, 32, 128),
    Shape::new("t32", 64, 32, 16, 32, 128),
    Shape::new("t64", 32, 64, 16, 32, 128),
    Shape::new("t128", 16, 128, 16, 32, 128),
    Shape::new("t256", 8, 256, 16, 32, 128),
    Shape::new("t512", 4, 512, 16, 32, 128),
];

/// The shapes `GDN_BENCH_SHAPES` names (unset: [`SMALL`]).
pub fn from_env() -> Result<Vec<Shape>, String> {
    parse(std::env::var("GDN_BENCH_SHAPES").ok().as_deref().unwrap_or("small"))
}

/// A comma list of sets (`small`, `standard`, `crossover`) and shape names.
pub fn parse(value: &str) -> Result<Vec<Shape>, String> {
    let sets: [(&str, &[Shape]); 3] = [("small", &SMALL), ("standard", &STANDARD), ("crossover", &CROSSOVER)];
    let every = || sets.iter().flat_map(|(_, shapes)| shapes.iter());
    let mut picked = Vec::new();
    for name in value.split(',').map(str::trim) {
        if let Some((_, shapes)) = sets.iter().find(|(set, _)| *set == name) {
            picked.extend_from_slice(shapes);
        } else if let Some(shape) = every().find(|s| s.name == name) {
            picked.push(*shape);
        } else {
            let known: Vec<_> = every().map(|s| s.name).collect();
            return Err(format!(
                "GDN_BENCH_SHAPES: unknown shape {name:?}; use small, standard, crossover or a comma list of those \
                 and of {}",
                known.join(", ")
            ));
        }
    }
    Ok(picked)
}
