//! `Tape::device_bytes`: what a tape holds on the device, at least every tensor a caller sees,
//! growing with the tokens of the batch.

use gdn_train::{Batch, Context, LayerConfig, Tape, TapeBuffer, TapeOptions};

const EVERY_BUFFER: [TapeBuffer; 22] = [
    TapeBuffer::Qkv,
    TapeBuffer::Z,
    TapeBuffer::A,
    TapeBuffer::B,
    TapeBuffer::H0,
    TapeBuffer::ALog,
    TapeBuffer::DtBias,
    TapeBuffer::Norm,
    TapeBuffer::Conv,
    TapeBuffer::Out,
    TapeBuffer::Ht,
    TapeBuffer::Dout,
    TapeBuffer::Dht,
    TapeBuffer::Dqkv,
    TapeBuffer::Dz,
    TapeBuffer::Da,
    TapeBuffer::Db,
    TapeBuffer::Dh0,
    TapeBuffer::DaLog,
    TapeBuffer::DdtBias,
    TapeBuffer::Dnorm,
    TapeBuffer::Dconv,
];

#[test]
fn device_bytes_cover_the_tensors_and_grow_with_tokens() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    // nk 1, nv 2, dk = dv = 16, kk 4: C = 2·16 + 2·16 = 64 channels, value width 32.
    let config = LayerConfig::new(1, 2, 16, 16, 4);
    let tape = |t: usize| Tape::new(&ctx, config, Batch::Fixed { b: 1, t }, TapeOptions::default()).unwrap();
    let (short, long, longer) = (tape(32), tape(64), tape(96));

    let visible: usize = EVERY_BUFFER.iter().map(|&b| short.len(b)).sum();
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
