//! WGSL kernels of the Gated DeltaNet layer, generated per head size.
