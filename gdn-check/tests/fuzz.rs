//! The fuzz campaigns CI runs, sized for lavapipe on two cores: one at a fixed seed, which first
//! replays every regression persisted in `tests/fuzz.proptest-regressions` (failures found by this
//! test or by `gdn-check fuzz`, shrunk to small cases); and one whose seed comes from the commit
//! under test, so that every commit draws cases no earlier one drew (the seed is printed, with the
//! command that replays it).

use gdn_check::fuzz::{Space, campaign};
use gdn_train::Context;
use std::process::Command;

/// Cases of the commit-seeded campaign.
const COMMIT_CASES: u32 = 6;

fn context() -> Context {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    println!("adapter: {}", ctx.describe());
    ctx
}

/// Runs `cases` cases of the suite's small space from `seed`, failing on the first minimal case
/// over its bars.
fn run_campaign(ctx: &Context, cases: u32, seed: u64) {
    let result = campaign(ctx, &Space::quick(), cases, seed, 1, |_, _| {});
    println!("{} cases; worst relative error per tensor:\n{}", result.cases_run, result.table());
    if let Some(failure) = result.failure {
        panic!(
            "minimal failing case {:?}:\n{}\nreplay: gdn-check fuzz --quick --seed {seed} --cases {cases}",
            failure.case, failure.reason
        );
    }
}

#[test]
fn fixed_seed_campaign_finds_no_case_over_its_bars() {
    run_campaign(&context(), 24, 2026);
}

/// The seed of the commit under test: `GDN_FUZZ_SEED` where set, else the first 16 hex digits of
/// `git rev-parse HEAD`.
fn commit_seed() -> (u64, String) {
    if let Ok(seed) = std::env::var("GDN_FUZZ_SEED") {
        let value = seed.trim().parse().unwrap_or_else(|e| panic!("GDN_FUZZ_SEED={seed:?} is not a u64: {e}"));
        return (value, "GDN_FUZZ_SEED".into());
    }
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap_or_else(|e| panic!("the commit-seeded campaign needs git (or GDN_FUZZ_SEED): {e}"));
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success() && commit.len() >= 16,
        "git rev-parse HEAD: {commit:?} (set GDN_FUZZ_SEED outside a checkout)"
    );
    let seed = u64::from_str_radix(&commit[..16], 16).unwrap_or_else(|e| panic!("commit {commit}: {e}"));
    (seed, format!("commit {commit}"))
}

#[test]
fn commit_seeded_campaign_finds_no_case_over_its_bars() {
    let (seed, from) = commit_seed();
    println!("seed {seed} (from {from})");
    run_campaign(&context(), COMMIT_CASES, seed);
}
