//! `gdn-check soak`: random shapes, forward and backward, for a wall-clock budget — what hours of
//! training would ask of the layer, compressed. Each round draws a case from a fuzz [`Space`],
//! checks it against gdn-ref at its bars, runs it again on a fresh tape and requires bitwise the same
//! results, and samples memory: the host's resident set (Linux) and the device's live buffers and
//! buffer memory (wgpu's internal counters). The summary says how far memory moved after the first
//! round. Device buffers return to their level after every round (each tape frees its own); the host
//! grows with every new head size or family a round draws, whose pipelines the context compiles and
//! keeps for the device's life, and levels off once the space's variants are built.

use crate::fuzz::Space;
use crate::{Case, Tensor};
use gdn_train::Context;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Memory at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Memory {
    /// The process's resident set in bytes (`None` where /proc is not there).
    pub host_rss: Option<u64>,
    /// Live device buffers.
    pub device_buffers: isize,
    /// Bytes of device memory held by buffers.
    pub device_buffer_bytes: isize,
}

impl Memory {
    /// Now, on `ctx`'s device.
    pub fn now(ctx: &Context) -> Self {
        let hal = ctx.device().get_internal_counters().hal;
        Self { host_rss: host_rss(), device_buffers: hal.buffers.read(), device_buffer_bytes: hal.buffer_memory.read() }
    }
}

/// Resident set size from /proc/self/statm (pages × 4 KiB).
fn host_rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// What a soak found.
#[derive(Debug, Clone, Default)]
pub struct Soak {
    /// Rounds run.
    pub rounds: usize,
    /// Cases over a bar, or whose device call failed, with the reason.
    pub failures: Vec<(Case, String)>,
    /// Cases whose second run on a fresh tape differed from the first in any bit.
    pub nondeterministic: Vec<Case>,
    /// Worst relative error per judged tensor.
    pub worst: BTreeMap<Tensor, f64>,
    /// Memory after the first round and after the last.
    pub after_first: Memory,
    /// Memory after the last round.
    pub after_last: Memory,
    /// The largest host resident set seen.
    pub peak_host_rss: Option<u64>,
}

impl Soak {
    /// True when every round passed its bars and repeated bitwise.
    pub fn passed(&self) -> bool {
        self.rounds > 0 && self.failures.is_empty() && self.nondeterministic.is_empty()
    }
}

/// Runs rounds drawn from `space` (seeded by `seed`) until `budget` has passed (at least one
/// round); `progress` hears each round's number and case.
pub fn soak(ctx: &Context, space: &Space, seed: u64, budget: Duration, mut progress: impl FnMut(usize, &Case)) -> Soak {
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let strategy = space.cases();
    let started = Instant::now();
    let mut soak = Soak::default();
    while soak.rounds == 0 || started.elapsed() < budget {
        let case = strategy.new_tree(&mut runner).expect("the space draws cases").current();
        soak.rounds += 1;
        progress(soak.rounds, &case);
        round(ctx, &case, &mut soak);
        let memory = Memory::now(ctx);
        if soak.rounds == 1 {
            soak.after_first = memory;
        }
        soak.after_last = memory;
        soak.peak_host_rss = soak.peak_host_rss.max(memory.host_rss);
    }
    soak
}

/// One case: the reference check, then a second run on a fresh tape compared bit for bit.
fn round(ctx: &Context, case: &Case, soak: &mut Soak) {
    let (report, first) = match case.run_keeping(ctx) {
        Ok(done) => done,
        Err(e) => return soak.failures.push((case.clone(), e.to_string())),
    };
    for e in report.errors.iter().filter(|e| e.bar.is_some()) {
        let worst = soak.worst.entry(e.tensor).or_insert(0.0);
        if e.error.is_nan() || e.error > *worst {
            *worst = e.error;
        }
    }
    if !report.passes() {
        soak.failures.push((case.clone(), report.table()));
    }
    match case.on_device(ctx, &case.draw()) {
        Ok(second) if second == first => {}
        Ok(_) => soak.nondeterministic.push(case.clone()),
        Err(e) => soak.failures.push((case.clone(), e.to_string())),
    }
}
