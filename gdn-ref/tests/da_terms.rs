//! `Gradients::da_terms`, the magnitude of the terms behind each `da`: never below `|da|`, equal
//! to it where the state has a single element (one term, nothing to cancel), and above it where a
//! larger state's terms cancel.

use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Layer, LayerConfig};

#[test]
fn da_terms_bound_da_and_equal_it_for_a_one_element_state() {
    for (dk, dv) in [(1, 1), (8, 4)] {
        let config = LayerConfig::new(1, 2, dk, dv, 2).unwrap();
        let batch = Batch::Packed { cu_seqlens: vec![0, 3, 20] };
        let mut sampler = Sampler::new(3);
        let layer = Layer::new(config, sampler.params(&config, Regime::Typical)).unwrap();
        let inputs = sampler.inputs(&config, &batch, true, Regime::Typical);
        let grads = layer.backward(&inputs, &sampler.output_grads(&config, &batch, true)).unwrap();
        let mut widest: f64 = 1.0;
        for (&da, &terms) in grads.da.iter().zip(grads.da_terms.iter()) {
            assert!(terms >= da.abs() * (1.0 - 1e-12), "{dk}×{dv}: da {da} over its terms' magnitude {terms}");
            if dk * dv == 1 {
                assert!((terms - da.abs()).abs() <= 1e-12 * terms, "{dk}×{dv}: one term, {terms} against {da}");
            }
            widest = widest.max(terms / da.abs());
        }
        println!("{dk}×{dv}: terms up to {widest:.1}× their sum");
        assert_eq!(dk * dv == 1, widest < 1.0 + 1e-9, "{dk}×{dv}: widest ratio {widest}");
    }
}
