//! The decode step on the device against the one-shot forward (a tape over the same tokens) and
//! the f64 reference, at the f32 bars: sequences joining and leaving a pool with fewer slots than
//! sequences (slots reused), starting fresh or from drawn states, fed one token a step and four
//! tokens a step, over a few hundred steps, and at every shape of head the kernel lays out
//! differently; the output is poisoned before every step and unused slots hold NaN. The kernel the
//! test device takes (`decode_step_portable` on lavapipe, whose subgroups are 8 wide;
//! `decode_step`, row sums by subgroup shuffles, where subgroups are at least 32 wide); the
//! portable kernel on an engine's device made without subgroups; the shuffle kernel by name where
//! the device has it (ignored elsewhere, saying why). Then the typed refusals of bad steps, which
//! write nothing.

use gdn_check::decode::{Schedule, Timing, run};
use gdn_ref::LayerConfig;
use gdn_train::{
    Context, DecodeCapacity, DecodeInputs, Decoder, Error, Kernel, Params, SlotState, StatePool, decode_kernel,
};

fn context() -> &'static Context {
    gdn_check::device_context()
}

/// A device of an engine's own, made with no feature: no subgroups.
fn portable_context() -> &'static Context {
    static CONTEXT: std::sync::OnceLock<Context> = std::sync::OnceLock::new();
    CONTEXT.get_or_init(|| gdn_check::engine_device(|limits| limits).0)
}

/// Eight sequences of `3·scale` to `20·scale` steps through a pool of five slots, at most four per
/// step.
fn churn(tokens: usize, scale: usize) -> Schedule {
    let steps = [9, 14, 5, 20, 7, 12, 3, 16];
    Schedule {
        lengths: steps.iter().map(|s| s * scale * tokens).collect(),
        joins: [0, 0, 1, 2, 3, 5, 8, 10].iter().map(|j| j * scale).collect(),
        fresh: vec![true, false, false, true, false, false, true, false],
        slots: 5,
        sequences: 4,
        tokens,
    }
}

/// Runs `schedule` on the test device, checks every error against its bar and returns the steps
/// run.
fn check(config: LayerConfig, schedule: &Schedule, seed: u64) -> usize {
    check_on(context(), decode_kernel(context()), config, schedule, seed)
}

fn check_on(ctx: &Context, kernel: Kernel, config: LayerConfig, schedule: &Schedule, seed: u64) -> usize {
    let outcome = run(ctx, &config, schedule, seed, 3, Timing::Untimed).expect("decode run");
    println!("{}: {config:?}, T = {}: {} steps\n{}", kernel.name(), schedule.tokens, outcome.steps, outcome.table());
    assert_eq!(outcome.kernel, kernel);
    assert!(outcome.passes(), "over the bar:\n{}", outcome.table());
    outcome.steps
}

#[test]
fn one_token_a_step_matches_the_one_shot_forward() {
    let steps = check(LayerConfig::new(2, 4, 16, 32, 4).unwrap(), &churn(1, 10), 41);
    assert!(steps >= 250, "{steps} steps");
    check(LayerConfig::new(1, 3, 32, 16, 2).unwrap(), &churn(1, 1), 42);
}

#[test]
fn four_tokens_a_step_match_the_one_shot_forward() {
    let steps = check(LayerConfig::new(2, 4, 16, 32, 4).unwrap(), &churn(4, 1), 43);
    assert!(steps >= 25, "{steps} steps");
    check(LayerConfig::new(2, 2, 32, 32, 1).unwrap(), &Schedule::lockstep(3, 5, 4), 44);
}

/// Heads square, with more rows than columns (lane groups past the columns, `LaneLayout::decode`: at least
/// dk / 4 groups) and with fewer (a token's jobs in several rounds of the workgroup), from one to
/// 32 rows a lane, one to three value heads per key head (whose workgroups share the key head's conv
/// windows, the last to read them shifting them), one token and a few a step.
#[test]
fn every_layout_matches_the_one_shot_forward() {
    for (nk, nv, dk, dv, tokens) in [
        (1, 2, 8, 8, 1),
        (2, 2, 24, 48, 3),
        (1, 3, 16, 80, 1),
        (1, 2, 256, 16, 1),
        (1, 1, 32, 256, 2),
        (1, 2, 128, 128, 1),
        (2, 4, 256, 48, 1),
        (1, 3, 160, 80, 2),
        (1, 2, 256, 80, 1),
        (1, 1, 192, 160, 2),
        (1, 2, 256, 256, 1),
    ] {
        check(LayerConfig::new(nk, nv, dk, dv, 4).unwrap(), &Schedule::lockstep(2, 4, tokens), 45);
    }
}

/// Conv taps past the ones the kernel loads in one batch (`CONV_WINDOW`, 4): kk = 6, one token and
/// three a step, so that the windows shift across steps and within one.
#[test]
fn long_conv_windows_match_the_one_shot_forward() {
    for tokens in [1, 3] {
        check(LayerConfig::new(1, 2, 16, 24, 6).unwrap(), &Schedule::lockstep(2, 6, tokens), 46);
    }
}

/// The portable kernel, on a device without subgroups: churn, drafts, long conv windows and a
/// qwen3-next head.
#[test]
fn the_portable_kernel_matches_the_one_shot_forward() {
    let ctx = portable_context();
    let portable = Kernel::DecodeStepPortable;
    let steps = check_on(ctx, portable, LayerConfig::new(2, 4, 16, 32, 4).unwrap(), &churn(1, 2), 47);
    assert!(steps >= 50, "{steps} steps");
    check_on(ctx, portable, LayerConfig::new(2, 4, 16, 32, 4).unwrap(), &churn(4, 1), 48);
    check_on(ctx, portable, LayerConfig::new(1, 2, 16, 24, 6).unwrap(), &Schedule::lockstep(2, 6, 3), 49);
    check_on(ctx, portable, LayerConfig::new(1, 2, 128, 128, 4).unwrap(), &Schedule::lockstep(2, 4, 1), 50);
}

/// The shuffle kernel, where the device has wgpu's SUBGROUP with subgroups of at least 32
/// invocations: churn, drafts, long conv windows, square and oblong heads.
#[test]
#[ignore = "needs wgpu's SUBGROUP with subgroups of at least 32 invocations (lavapipe's are 8): run on a GPU \
            with --include-ignored"]
fn the_shuffle_kernel_matches_the_one_shot_forward() {
    let ctx = context();
    let info = ctx.adapter_info();
    assert_eq!(
        decode_kernel(ctx),
        Kernel::DecodeStep,
        "decode_step needs wgpu's SUBGROUP with subgroups of at least {} invocations; the adapter {} offers SUBGROUP: \
         {}, subgroup sizes {} to {}",
        gdn_wgsl::LANE_BLOCK,
        info.name,
        ctx.device().features().contains(wgpu::Features::SUBGROUP),
        info.subgroup_min_size,
        info.subgroup_max_size
    );
    let shuffle = Kernel::DecodeStep;
    check_on(ctx, shuffle, LayerConfig::new(2, 4, 16, 32, 4).unwrap(), &churn(1, 2), 51);
    check_on(ctx, shuffle, LayerConfig::new(2, 4, 16, 32, 4).unwrap(), &churn(4, 1), 52);
    check_on(ctx, shuffle, LayerConfig::new(1, 2, 16, 24, 6).unwrap(), &Schedule::lockstep(2, 6, 3), 53);
    for (nk, nv, dk, dv, tokens) in [(1, 2, 8, 8, 1), (1, 3, 160, 80, 2), (1, 2, 256, 16, 1), (1, 2, 128, 128, 1)] {
        check_on(ctx, shuffle, LayerConfig::new(nk, nv, dk, dv, 4).unwrap(), &Schedule::lockstep(2, 4, tokens), 54);
    }
}

#[test]
fn bad_steps_are_refused_by_name_and_write_nothing() {
    let ctx = context();
    let config = gdn_train::LayerConfig::new(1, 2, 16, 16, 4).unwrap();
    let pool = StatePool::new(ctx, config, 3).unwrap();
    let (a_log, dt_bias, norm, conv) = (vec![0.5; 2], vec![0.0; 2], vec![1.0; 16], vec![0.1; config.channels() * 4]);
    let params = Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv };
    let decoder = Decoder::new(ctx, &pool, &params, DecodeCapacity { sequences: 2, tokens: 2 }).unwrap();
    let before = SlotState {
        state: (0..2 * 256).map(|i| i as f32).collect(),
        conv_state: (0..3 * config.channels()).map(|i| -(i as f32)).collect(),
    };
    for slot in 0..3 {
        pool.write_slot(slot, &before).unwrap();
    }
    let refusals = [
        (decoder.step(&[0, 3], 1), "slot 3: out of range: the pool has 3 slots"),
        (decoder.step(&[1, 1], 1), "slot 1: given to sequences 0 and 1 of the step: each needs its own"),
        (decoder.step(&[0, 1, 2], 1), "slots: 3 exceeds the decoder's capacity of 2"),
        (decoder.step(&[0], 3), "tokens: 3 exceeds the decoder's capacity of 2"),
        (decoder.step(&[0], 0), "tokens: 0 exceeds the decoder's capacity of 2"),
    ];
    for (result, message) in refusals {
        let e = result.expect_err(message);
        assert!(matches!(e, Error::Slot { .. } | Error::Capacity { .. }), "{e:?}");
        assert_eq!(e.to_string(), message);
    }
    for slot in 0..3 {
        assert_eq!(pool.read_slot(slot).unwrap(), before, "slot {slot} changed");
    }
    assert!(matches!(pool.read_slot(3), Err(Error::Slot { slot: 3, .. })));
    let wrong = Params { norm: &norm[..8], ..params };
    assert!(matches!(decoder.write_params(&wrong), Err(Error::Length { name: "norm", expected: 16, got: 8 })));
    let capacity = DecodeCapacity { sequences: 1, tokens: 9 };
    assert!(matches!(Decoder::new(ctx, &pool, &params, capacity), Err(Error::Config { name: "tokens", .. })));
    // A pool of another context's device.
    let other = Context::new().unwrap();
    let foreign = StatePool::new(&other, config, 1).unwrap();
    let capacity = DecodeCapacity { sequences: 1, tokens: 1 };
    assert!(matches!(Decoder::new(ctx, &foreign, &params, capacity), Err(Error::Config { name: "pool", .. })));
    let none = DecodeInputs { qkv: &[], z: &[], a: &[], b: &[] };
    let refused = decoder.write_inputs(&none, usize::MAX, 2);
    assert!(matches!(refused, Err(Error::Capacity { name: "sequences", .. })), "{refused:?}");
    let refused = StatePool::new(ctx, config, 1 << 58).map(|_| ());
    assert!(matches!(refused, Err(Error::Config { name: "slots", .. })), "{refused:?}");
}
