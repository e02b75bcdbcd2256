//! The Gated DeltaNet layer on any GPU through wgpu.
