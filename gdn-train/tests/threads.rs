//! One tape shared by threads: every host call (`run_forward`, `run_backward`, `write_*`, `read*`)
//! holds the tape's lock from its first upload to its last read-back, so two threads calling
//! `run_forward` with different inputs each get their own outputs — never the other's.

mod common;
use common::values;
use gdn_train::{Batch, Context, Inputs, LayerConfig, Outputs, Params, Tape, TapeOptions};

fn inputs(d: &[Vec<f32>; 4]) -> Inputs<'_> {
    Inputs { qkv: &d[0], z: &d[1], a: &d[2], b: &d[3], h0: None, conv_state: None }
}

#[test]
fn two_threads_running_one_tape_each_get_their_own_outputs() {
    let ctx = Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    let config = LayerConfig::new(1, 2, 16, 16, 4).unwrap();
    let tape = Tape::new(&ctx, config, Batch::Fixed { b: 2, t: 8 }, TapeOptions::default()).unwrap();
    let (tokens, c, v) = (tape.tokens(), config.channels(), config.value_width());
    let conv = values(c * 4, 0.3, 0.0);
    tape.write_params(&Params { a_log: &[0.5, -0.2], dt_bias: &[0.1, 0.3], norm: &[1.0; 16], conv: &conv }).unwrap();
    // Two input sets that differ everywhere; the same dout for both.
    let draws: Vec<[Vec<f32>; 4]> = [0.1f32, -0.4]
        .into_iter()
        .map(|offset| {
            let qkv = values(tokens * c, 1.0, offset);
            [qkv, values(tokens * v, 1.0, offset), values(tokens * 2, 1.0, offset), values(tokens * 2, 2.0, offset)]
        })
        .collect();
    let alone: Vec<Outputs> = draws.iter().map(|d| tape.run_forward(&inputs(d)).unwrap()).collect();
    assert_ne!(alone[0].out, alone[1].out, "the two draws give different outputs");

    let mismatches = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|n| {
                let (tape, draw, want) = (&tape, &draws[n], &alone[n]);
                scope.spawn(move || (0..25).filter(|_| tape.run_forward(&inputs(draw)).unwrap() != *want).count())
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("worker")).collect::<Vec<_>>()
    });
    assert_eq!(mismatches, [0, 0], "runs that returned the other thread's outputs, per thread");
}
