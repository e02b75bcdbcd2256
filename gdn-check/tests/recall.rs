//! The gradients train a model: a small embedding → layer → readout model learns associative
//! recall through the device layer's forward and backward, from chance to well above it. Runs on
//! whatever adapter `Context::new` finds (lavapipe in CI) and fails when there is none.

use gdn_check::recall::{RecallConfig, train};

#[test]
fn a_model_learns_associative_recall_through_the_layer() {
    let ctx = gdn_check::device_context();
    // 4 pairs of 16 keys and 16 values: chance is 1/16.
    let config = RecallConfig { pairs: 4, values: 16, steps: 150, ..RecallConfig::default() };
    let mut first = Vec::new();
    let held_out = train(ctx, &config, |r| {
        if r.step < 10 {
            first.push(r.accuracy);
        }
        if r.step % 20 == 0 {
            println!("step {:>4}  loss {:.4}  accuracy {:.3}", r.step, r.loss, r.accuracy);
        }
    })
    .expect("training runs");
    let start = first.iter().sum::<f32>() / first.len() as f32;
    println!("accuracy: first ten steps {start:.3}, held out after {} steps {held_out:.3}", config.steps);
    assert!(start < 0.2, "the untrained model should be near chance (0.0625), got {start}");
    assert!(held_out > 0.5, "after {} steps the model should answer most queries, got {held_out}", config.steps);
}

#[test]
fn a_task_that_cannot_be_drawn_is_refused_by_name() {
    let ctx = gdn_check::device_context();
    let refused = |config: RecallConfig| train(ctx, &config, |_| {}).expect_err("refused");
    assert!(refused(RecallConfig { pairs: 20, keys: 16, ..RecallConfig::default() }).starts_with("pairs"));
    assert!(refused(RecallConfig { batch: 0, ..RecallConfig::default() }).starts_with("batch"));
}
