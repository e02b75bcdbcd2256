//! A fixed-seed fuzz campaign sized for lavapipe on two cores; it first replays every regression
//! persisted in `tests/fuzz.proptest-regressions` (failures found by this test or by
//! `gdn-check fuzz`, shrunk to small cases).

use gdn_check::fuzz::{Space, campaign};
use gdn_train::Context;

#[test]
fn fixed_seed_campaign_finds_no_case_over_its_bars() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    println!("adapter: {}", ctx.describe());
    let result = campaign(&ctx, &Space::quick(), 24, 2026, 1, |_, _| {});
    println!("{} cases; worst relative error per tensor:\n{}", result.cases_run, result.table());
    if let Some(failure) = result.failure {
        panic!("minimal failing case {:?}:\n{}", failure.case, failure.reason);
    }
}
