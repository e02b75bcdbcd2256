//! Every family, precision and option laid out: each binding has a buffer, each buffer is bound,
//! a forward-only plan holds nothing of the backward.

use super::*;
use gdn_ref::Role;

fn options() -> impl Iterator<Item = PlanOptions> {
    let families = [Family::recurrent(), Family::Recurrent { checkpoint_interval: 3 }, Family::chunked()];
    let precisions = [Precision::F32, Precision::TensorCore];
    families.into_iter().flat_map(move |family| {
        precisions
            .into_iter()
            .filter(move |&p| p == Precision::F32 || matches!(family, Family::Chunked { .. }))
            .flat_map(move |precision| {
                (0..192u8).map(move |bits| PlanOptions {
                    family,
                    precision,
                    initial_state: bits & 1 != 0,
                    final_state_grad: bits & 2 != 0,
                    conv_state: bits & 4 != 0,
                    backward: bits & 8 != 0,
                    storage: [Storage::F32, Storage::Bf16, Storage::F16][usize::from(bits / 16 % 3)],
                    subgroups: bits % 96 >= 48,
                    storage_buffers: if bits >= 96 { 16 } else { 8 },
                })
            })
    })
}

#[test]
fn every_stage_binds_laid_out_buffers_and_every_buffer_is_bound() {
    for (dk, dv, kk) in [(16, 16, 4), (8, 24, 1), (32, 64, 6)] {
        let config = LayerConfig::new(2, 4, dk, dv, kk).unwrap();
        for options in options() {
            let plan = LayerPlan::new(&config, &[0, 70, 75], &options).unwrap();
            let stages = plan.forward.iter().chain(plan.backward.iter().flatten());
            for stage in stages {
                assert_eq!(stage.bindings.len(), stage.kernel.bindings().len());
                for id in &stage.bindings {
                    assert!(plan.buffer(*id).is_some(), "{:?} binds {id:?}, not laid out ({options:?})", stage.kernel);
                }
            }
            let mut ids: Vec<BufferId> = plan.buffers.iter().map(|spec| spec.id).collect();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), plan.buffers.len(), "each buffer once");
        }
    }
}

#[test]
fn a_forward_only_plan_is_the_full_plan_s_forward_without_anything_of_the_backward() {
    let config = LayerConfig::new(1, 2, 16, 32, 4).unwrap();
    for options in options().filter(|o| o.backward) {
        let full = LayerPlan::new(&config, &[0, 40], &options).unwrap();
        let forward_only = LayerPlan::new(&config, &[0, 40], &PlanOptions { backward: false, ..options }).unwrap();
        assert_eq!(forward_only.forward, full.forward);
        assert_eq!(forward_only.backward, None);
        for spec in &forward_only.buffers {
            let in_full = full.buffer(spec.id).expect("a forward buffer is the full plan's too");
            assert!(spec.words() <= in_full.words(), "{:?}: no larger than in the full plan", spec.id);
            if let BufferId::Tensor(t) = spec.id {
                assert!(!matches!(t.role(), Role::Gradient | Role::OutputGrad), "{t:?} in a forward-only plan");
            }
        }
        assert!(forward_only.buffers.len() < full.buffers.len());
    }
}

#[test]
fn the_knob_is_fitted_and_bad_knobs_and_sizes_are_named() {
    let config = LayerConfig::new(1, 1, 16, 16, 4).unwrap();
    let plan = LayerPlan::new(&config, &[0, 5], &PlanOptions::default()).unwrap();
    assert_eq!(plan.family, Family::Chunked { chunk: 8 });
    let bad = |options: PlanOptions| LayerPlan::new(&config, &[0, 5], &options).unwrap_err();
    let interval = Family::Recurrent { checkpoint_interval: 0 };
    assert!(matches!(
        bad(PlanOptions { family: interval, ..PlanOptions::default() }),
        PlanError::Knob { name: "checkpoint_interval", .. }
    ));
    let precision =
        PlanOptions { family: Family::recurrent(), precision: Precision::TensorCore, ..PlanOptions::default() };
    assert!(matches!(bad(precision), PlanError::Unsupported { option: "precision", .. }));
    let wide = LayerConfig { nv: 1 << 40, nk: 1, ..config };
    assert!(matches!(
        LayerPlan::new(&wide, &[0, 1], &PlanOptions::default()),
        Err(PlanError::TooLarge { name: "nv", .. })
    ));
    assert!(matches!(
        LayerPlan::new(&config, &[0, 0], &PlanOptions::default()),
        Err(PlanError::Layer(gdn_ref::Error::Offsets { .. }))
    ));
}

#[test]
fn the_recurrent_forward_is_solved_in_chunks_for_few_heads_and_token_by_token_for_many() {
    let forward_kernel = |seqs: usize, subgroups: bool| {
        let config = LayerConfig::new(4, 8, 16, 16, 4).unwrap();
        let starts: Vec<usize> = (0..=seqs).map(|n| 3 * n).collect();
        let options = PlanOptions { family: Family::recurrent(), subgroups, ..PlanOptions::default() };
        let plan = LayerPlan::new(&config, &starts, &options).unwrap();
        let mut recurrences = plan.forward.iter().filter(|s| s.kernel.name().starts_with("recurrence_forward"));
        let stage = recurrences.next().expect("a recurrent forward");
        assert!(recurrences.next().is_none());
        // The key products the chunk-solved forward reads are written exactly where it runs; the
        // conv runs in the q/k norms' dispatches (forward and backward) where the device binds 12
        // storage buffers and the taps fit the window.
        let chunks = stage.kernel.name().starts_with("recurrence_forward_chunks");
        let prologue = |plan: &LayerPlan| plan.forward.iter().take(2).map(|s| s.kernel).collect::<Vec<_>>();
        let runs = |plan: &LayerPlan, kernel: Kernel| {
            plan.forward.iter().chain(plan.backward.iter().flatten()).any(|s| s.kernel == kernel)
        };
        let products = if chunks { Kernel::QkNormGatesProductsForward } else { Kernel::QkNormGatesForward };
        assert_eq!(prologue(&plan), [Kernel::ConvForward, products]);
        let wide = PlanOptions { storage_buffers: 12, ..options };
        let fused = LayerPlan::new(&config, &starts, &wide).unwrap();
        let long_taps = LayerPlan::new(&LayerConfig::new(4, 8, 16, 16, 5).unwrap(), &starts, &wide).unwrap();
        let fused_products =
            if chunks { Kernel::ConvQkNormGatesProductsForward } else { Kernel::ConvQkNormGatesForward };
        assert_eq!(prologue(&fused), [fused_products, stage.kernel]);
        assert!(runs(&fused, Kernel::QkNormConvBackward) && !runs(&fused, Kernel::ConvBackwardPre));
        assert_eq!(prologue(&long_taps), prologue(&plan));
        for plan in [&plan, &long_taps] {
            assert!(runs(plan, Kernel::QkNormBackward) && runs(plan, Kernel::ConvBackwardPre));
        }
        (stage.kernel, stage.workgroups)
    };
    // dv = 16: one workgroup of 16 columns per (sequence, value head) token by token, four of 4
    // (one a warp) in chunks.
    let few = recurrent::FEW_HEADS_WORKGROUPS / 8 - 1;
    let many = recurrent::FEW_HEADS_WORKGROUPS / 8;
    assert_eq!(forward_kernel(few, true), (Kernel::RecurrenceForwardChunks, few * 8 * 4));
    assert_eq!(forward_kernel(few, false), (Kernel::RecurrenceForwardChunksPortable, few * 8 * 4));
    assert_eq!(forward_kernel(many, true), (Kernel::RecurrenceForward, many * 8));
    assert_eq!(forward_kernel(many, false), (Kernel::RecurrenceForwardPortable, many * 8));
}

#[test]
fn the_recurrent_backward_spreads_columns_for_few_heads_within_its_memory_bound() {
    // (kernel, workgroups, partial rows of dq̂ per (token, value head), words of dqk_hat_heads)
    let backward = |seqs: usize, tokens: usize, subgroups: bool| {
        let config = LayerConfig::new(4, 8, 16, 24, 4).unwrap();
        let starts: Vec<usize> = (0..=seqs).map(|n| tokens * n).collect();
        let options = PlanOptions { family: Family::recurrent(), subgroups, backward: true, ..PlanOptions::default() };
        let plan = LayerPlan::new(&config, &starts, &options).unwrap();
        let stages = plan.backward.as_ref().expect("a backward");
        let mut recurrences = stages.iter().filter(|s| s.kernel.name().starts_with("recurrence_backward"));
        let stage = recurrences.next().expect("a recurrent backward");
        assert!(recurrences.next().is_none());
        let hat_words = plan.buffer(Work::DqkHatHeads.into()).unwrap().words();
        assert_eq!(hat_words % (2 * seqs * tokens * 8 * 16), 0);
        // The checkpoints are kept by column exactly where the column backward reads them.
        let Contents::Uniform(bytes) = &plan.buffer(Work::Layer.into()).unwrap().contents else {
            panic!("the layer uniform")
        };
        let layer: crate::LayerUniform = bytemuck::pod_read_unaligned(bytes);
        let in_columns = stage.kernel.name().starts_with("recurrence_backward_columns");
        assert_eq!(layer.ckpt_columns, u32::from(in_columns));
        (stage.kernel, stage.workgroups, hat_words / (2 * seqs * tokens * 8 * 16))
    };
    // dv = 24: few heads by the per-token forward's two blocks of 16 columns a head; the column
    // backward's blocks are of 4 columns (one a warp), six a head.
    let few = recurrent::FEW_HEADS_WORKGROUPS / 16 - 1;
    let many = recurrent::FEW_HEADS_WORKGROUPS / 16;
    assert_eq!(backward(few, 3, true), (Kernel::RecurrenceBackwardColumns, few * 48, 6));
    assert_eq!(backward(few, 3, false), (Kernel::RecurrenceBackwardColumnsPortable, few * 48, 6));
    assert_eq!(backward(many, 3, true), (Kernel::RecurrenceBackward, many * 8, 1));
    // One sequence whose dq̂/dk̂ partials would pass MAX_COLUMN_BACKWARD_WORDS.
    let long = recurrent::MAX_COLUMN_BACKWARD_WORDS / (2 * 8 * 6 * 16) + 1;
    assert_eq!(backward(1, long - 1, true), (Kernel::RecurrenceBackwardColumns, 48, 6));
    assert_eq!(backward(1, long, true), (Kernel::RecurrenceBackward, 8, 1));
}

#[test]
fn the_conv_input_gradient_shares_a_dispatch_with_the_parameter_sums_where_the_device_binds_enough() {
    let config = LayerConfig::new(2, 4, 16, 16, 4).unwrap();
    // (kernel, workgroups) of the backward's stages after the q/k norms'.
    let tail = |tokens: usize, storage_buffers: u32| {
        let options = PlanOptions { family: Family::recurrent(), storage_buffers, ..PlanOptions::default() };
        let plan = LayerPlan::new(&config, &[0, tokens - 5, tokens], &options).unwrap();
        let stages: Vec<(Kernel, usize)> =
            plan.backward.unwrap().into_iter().map(|s| (s.kernel, s.workgroups)).collect();
        let first = stages.iter().position(|s| s.0.name().starts_with("conv_backward_input")).expect("the conv's");
        stages[first..].to_vec()
    };
    let (sums, totals) =
        (Kernel::ConvBackwardInputSums.storage_buffers(), Kernel::ConvBackwardInputTotals.storage_buffers());
    assert_eq!((sums, totals), (12, 15));
    // 75 tokens: dnorm's 300 rows fit one pass (16 blocks); 300 tokens (1 200 rows) do not.
    let split = tail(75, sums - 1);
    let kernels = |stages: &[(Kernel, usize)]| stages.iter().map(|s| s.0).collect::<Vec<_>>();
    assert_eq!(kernels(&split), [Kernel::ConvBackwardInput, Kernel::ColumnSumsPartial, Kernel::ColumnSumsFinish]);
    let (conv_jobs, partial_jobs) = (split[0].1, split[1].1);
    // The conv's runs first, then ELEMENTS / COLUMNS of the partials' jobs a workgroup.
    let per_workgroup = (crate::ELEMENTS / crate::COLUMNS) as usize;
    let joined = tail(75, totals - 1);
    assert_eq!(joined, [(Kernel::ConvBackwardInputSums, conv_jobs + partial_jobs.div_ceil(per_workgroup)), split[2]]);
    // In one pass: the conv's runs, then a workgroup per TOTAL_UNITS units of each sum (dconv's
    // 64 channels, dnorm's 16 columns, da_log's and ddt_bias's 4).
    let units = [config.channels(), config.dv, config.nv, config.nv];
    let sum_jobs: usize = units.iter().map(|u| u.div_ceil(crate::TOTAL_UNITS as usize)).sum();
    assert_eq!(tail(75, totals), [(Kernel::ConvBackwardInputTotals, conv_jobs + sum_jobs)]);
    assert_eq!(kernels(&tail(300, totals)), [Kernel::ConvBackwardInputSums, Kernel::ColumnSumsFinish]);
}
