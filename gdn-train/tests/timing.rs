//! The per-kernel profiles of a pass: alone (each kernel in a pass of its own) and within one pass
//! (timestamps between the dispatches) name the same kernels in the same order, those of the
//! pass's plan; within one pass only where the device writes timestamps inside passes, else an
//! error that names the feature. Times are measured by the benches (BENCHMARKS.md) and never asserted here.

use gdn_train::{Batch, Context, Family, LayerConfig, Pass, Tape, TapeOptions};

#[test]
fn both_profiles_name_the_plans_kernels_in_dispatch_order() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    let options = TapeOptions { family: Some(Family::recurrent()), ..TapeOptions::default() };
    let tape = Tape::new(&ctx, LayerConfig::new(1, 2, 16, 16, 4).unwrap(), Batch::Fixed { b: 1, t: 8 }, options)
        .expect("a small tape");
    for pass in [Pass::Forward, Pass::Backward] {
        let (alone, _) = tape.profile(pass).expect("the profile alone");
        let names: Vec<&str> = alone.iter().map(|(name, _)| *name).collect();
        // The few-heads plan: conv, norms and gates in one dispatch, the chunk-solved recurrence,
        // the gated norm (forward); and at least as many backward.
        assert!(names.len() >= 3, "{pass:?}: a plan of several kernels, got {names:?}");
        assert!(names.iter().any(|n| n.starts_with("recurrence_")), "{pass:?}: the recurrence, got {names:?}");
        match tape.profile_in_pass(pass) {
            Ok(in_pass) => {
                let in_pass_names: Vec<&str> = in_pass.iter().map(|(name, _)| *name).collect();
                assert_eq!(in_pass_names, names, "{pass:?}: the same kernels in the same order");
            }
            Err(e) => {
                let message = e.to_string();
                println!("{pass:?}: {message}");
                assert!(
                    message.contains("TIMESTAMP_QUERY_INSIDE_PASSES"),
                    "{pass:?}: the error names the feature: {message}"
                );
            }
        }
    }
}
