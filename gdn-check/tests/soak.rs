//! A short soak on the test suite's small space: every round within its bars, bitwise repeatable on
//! a fresh tape, and the device's buffers back to where they were after the first round (every
//! tape's buffers freed with it).

use gdn_check::fuzz::Space;
use gdn_check::soak::soak;
use gdn_train::{Context, Family};
use std::time::Duration;

#[test]
fn rounds_pass_repeat_bitwise_and_free_their_device_buffers() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    let space = Space { families: vec![Family::recurrent()], ..Space::quick() };
    let result = soak(&ctx, &space, 5, Duration::from_secs(10), |_, _| {});
    assert!(result.rounds >= 2, "{} rounds", result.rounds);
    assert!(result.passed(), "failures {:?}, not repeatable {:?}", result.failures, result.nondeterministic);
    assert!(!result.worst.is_empty() && result.worst.values().all(|e| *e < 5e-4), "{:?}", result.worst);
    let (first, last) = (result.after_first, result.after_last);
    assert_eq!(
        (last.device_buffers, last.device_buffer_bytes),
        (first.device_buffers, first.device_buffer_bytes),
        "device buffers after the first round and after round {}",
        result.rounds
    );
    assert!(first.device_buffers > 0, "wgpu's counters are on in gdn-check: {first:?}");
}
