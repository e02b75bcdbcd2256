//! `Tape::device_bytes`: what a tape holds on the device, at least every tensor a caller sees,
//! growing with the tokens of the batch; a forward-only tape holds less and computes the same forward.

mod common;
use common::values;
use gdn_train::{Batch, Context, Error, Family, Inputs, LayerConfig, Params, Tape, TapeOptions, Tensor};

#[test]
fn device_bytes_cover_the_tensors_and_grow_with_tokens() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    // nk 1, nv 2, dk = dv = 16, kk 4: C = 2·16 + 2·16 = 64 channels, value width 32.
    let config = LayerConfig::new(1, 2, 16, 16, 4).unwrap();
    // Each family named with a knob no longer than the shortest batch, so that fitting leaves it as
    // it is (the family a tape picks itself depends on the adapter, and its knob on T).
    for family in [Family::Recurrent { checkpoint_interval: 16 }, Family::Chunked { chunk: 16 }] {
        let options = TapeOptions { family: Some(family), ..TapeOptions::default() };
        let tape = |t: usize| Tape::new(&ctx, config, Batch::Fixed { b: 1, t }, options).unwrap();
        grows_with_tokens(tape(32), tape(64), tape(96));
    }
}

fn grows_with_tokens(short: Tape, long: Tape, longer: Tape) {
    let visible: usize = Tensor::ALL.iter().map(|&b| short.len(b)).sum();
    // Per token: qkv, dqkv (64 each), z, out, dout, dz (32 each), a, b, da, db (2 each); per
    // sequence: hT (2·16·16); parameters a_log, dt_bias (2), norm (16), conv (64·4), and their
    // gradients: 32·264 + 512 + 2·276 words.
    assert_eq!(visible, 32 * 264 + 512 + 2 * 276);
    assert!(short.device_bytes() >= 4 * visible as u64, "{} bytes", short.device_bytes());

    // Memory grows with the tokens, nearly in proportion (the parameter sums' partial buffer
    // grows in whole blocks), by at least the visible tensors of the added tokens.
    let (step, next) = (long.device_bytes() - short.device_bytes(), longer.device_bytes() - long.device_bytes());
    assert!(step >= 4 * 32 * 264, "32 more tokens hold at least their visible tensors: {step} bytes");
    assert!(next.abs_diff(step) * 50 < step, "32 tokens more: {step} bytes, then {next}");
}

#[test]
fn a_forward_only_tape_holds_less_computes_the_same_forward_and_refuses_the_backward() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    let config = LayerConfig::new(1, 2, 16, 16, 4).unwrap();
    let batch = Batch::Packed { cu_seqlens: vec![0, 5, 40] };
    for family in [Family::recurrent(), Family::chunked()] {
        let tape = |backward: bool| {
            let options = TapeOptions { family: Some(family), backward, ..TapeOptions::default() };
            Tape::new(&ctx, config, batch.clone(), options).unwrap()
        };
        let (full, forward_only) = (tape(true), tape(false));
        let tokens = full.tokens();
        let (c, v) = (config.channels(), config.value_width());
        let (a_log, dt_bias, norm, conv) =
            (values(2, 0.5, 0.3), values(2, 0.4, 0.0), values(16, 0.2, 1.0), values(c * 4, 0.3, 0.0));
        let (qkv, z, a, b) = (
            values(tokens * c, 1.0, 0.1),
            values(tokens * v, 1.0, 0.0),
            values(tokens * 2, 1.0, 0.0),
            values(tokens * 2, 2.0, 0.0),
        );
        let params = Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv };
        let inputs = Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: None, conv_state: None };
        let mut outputs = Vec::new();
        for t in [&full, &forward_only] {
            t.write_params(&params).unwrap();
            t.fill_outputs_with_nan().unwrap();
            outputs.push(t.run_forward(&inputs).unwrap());
        }
        assert!(outputs[0].out.iter().all(|x| x.is_finite()), "{family:?}: the full tape's output is finite");
        assert_eq!(outputs[0].out, outputs[1].out, "{family:?}: the same kernels give the same output");
        assert_eq!(outputs[0].ht, outputs[1].ht, "{family:?}: the same final states");

        let (held, full_bytes) = (forward_only.device_bytes(), full.device_bytes());
        println!("{family:?}: forward-only {held} bytes, with the backward {full_bytes}");
        assert!(held * 2 < full_bytes, "{family:?}: a forward-only tape holds {held} bytes of {full_bytes}");
        assert_eq!(forward_only.len(Tensor::Dqkv), 0);
        let refused = |r: Result<(), Error>| matches!(r, Err(Error::Unsupported { option: "backward", .. }));
        assert!(refused(forward_only.backward()), "{family:?}: backward refused");
        assert!(refused(forward_only.write_output_grads(&values(tokens * v, 1.0, 0.0), None)));
        assert!(refused(forward_only.read(Tensor::Dqkv).map(|_| ())));
    }
}

#[test]
fn the_recurrent_scratch_holds_one_interval_of_states_but_its_last() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    // qwen3.5-large at T = 64, the README's CPU-sized run: 64 value heads of 128 × 128 states.
    let config = LayerConfig::new(16, 64, 128, 128, 4).unwrap();
    let tape = |checkpoint_interval| {
        let options = TapeOptions { family: Some(Family::Recurrent { checkpoint_interval }), ..TapeOptions::default() };
        Tape::new(&ctx, config, Batch::Fixed { b: 1, t: 64 }, options)
    };
    let (every_32, every_16) = (tape(32).expect("fits 128 MiB bindings"), tape(16).unwrap());
    // Interval 32 → 16: 2 more stored states per head (ckpt), 16 fewer scratch states and kv rows.
    let (state, heads) = (128 * 128, 64);
    let fewer = heads * 16 * (state + 128) - heads * 2 * state;
    assert_eq!(every_32.device_bytes() - every_16.device_bytes(), 4 * fewer as u64);
    // At 32, the scratch is 31 states and 32 kv rows per head: 125.0 MiB, under lavapipe's 128 MiB.
    let scratch = 4 * heads * (31 * state + 32 * 128);
    assert_eq!(scratch, 131_072_000);
    assert!(scratch as u64 <= ctx.device().limits().max_storage_buffer_binding_size);
}
