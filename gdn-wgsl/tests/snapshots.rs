//! Snapshots of generated WGSL: a change to a template or to the tiling shows up as a reviewed
//! diff of `tests/snapshots/*.snap` (accept with `INSTA_UPDATE=always cargo test -p gdn-wgsl`).

use gdn_wgsl::{HeadDims, Kernel, kernel_source};

fn snapshot(kernel: Kernel, dk: usize, dv: usize) {
    let source = kernel_source(kernel, HeadDims::new(dk, dv).unwrap()).unwrap();
    let name =
        if kernel.depends_on_dims() { format!("{}_{dk}x{dv}", kernel.name()) } else { kernel.name().to_string() };
    insta::assert_snapshot!(name, source.wgsl);
}

/// Every kernel at Qwen's head size.
#[test]
fn every_kernel_for_128x128() {
    for kernel in Kernel::ALL {
        snapshot(kernel, 128, 128);
    }
}

/// The recurrences, whose tiling depends on the dims, at unequal and non-power-of-two sizes.
#[test]
fn recurrences_for_other_head_sizes() {
    for (dk, dv) in [(64, 32), (48, 80)] {
        snapshot(Kernel::RecurrenceForward, dk, dv);
        snapshot(Kernel::RecurrenceForwardChunks, dk, dv);
        snapshot(Kernel::RecurrenceBackward, dk, dv);
        snapshot(Kernel::RecurrenceBackwardColumns, dk, dv);
    }
}
