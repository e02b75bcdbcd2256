//! How the recurrence kernels spread a `[dk, dv]` state over a workgroup's threads.
//!
//! A workgroup of `tx × ty` threads covers `ty·ry ≥ dk` rows and `tx·rx` columns; each thread keeps
//! an `ry × rx` tile of the state in registers. WGSL cannot size a per-thread array with an
//! `override`, so the generator derives these numbers from the head dims and writes them as
//! `const`s into each variant.

use crate::HeadDims;

/// Threads along an extent: about four elements each, at most 16 threads, a power of two.
fn threads_along(extent: u32) -> u32 {
    extent.div_ceil(4).next_power_of_two().min(16)
}

/// The thread layout of one recurrence kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiling {
    /// Threads across columns.
    pub tx: u32,
    /// Threads across rows.
    pub ty: u32,
    /// Columns per thread.
    pub rx: u32,
    /// Rows per thread.
    pub ry: u32,
}

impl Tiling {
    /// The backward: one workgroup covers every column of a head, because the row sums `dq̂`,
    /// `dk̂` run over all of them.
    pub fn backward(dims: HeadDims) -> Self {
        let (ty, tx) = (threads_along(dims.dk), threads_along(dims.dv));
        Self { tx, ty, rx: dims.dv.div_ceil(tx), ry: dims.dk.div_ceil(ty) }
    }

    /// The forward: columns are independent, so a workgroup takes a block of at most 32 of them
    /// (four per thread) and a head's columns spread over several workgroups.
    pub fn forward(dims: HeadDims) -> Self {
        let ty = threads_along(dims.dk);
        let rx = dims.dv.min(4);
        Self { tx: dims.dv.div_ceil(rx).next_power_of_two().min(8), ty, rx, ry: dims.dk.div_ceil(ty) }
    }

    /// The decode step: [`crate::DECODE_THREADS`] threads cover a whole head, `tx` of them across
    /// columns (up to 32, so that a row of a warp's loads is contiguous) and the rest across rows;
    /// a thread's rows and columns are strided by `ty` and `tx` (`templates/decode_step.wgsl`).
    pub fn decode(dims: HeadDims) -> Self {
        let tx = dims.dv.next_power_of_two().min(32);
        let ty = crate::kernel::DECODE_THREADS / tx;
        Self { tx, ty, rx: dims.dv.div_ceil(tx), ry: dims.dk.div_ceil(ty) }
    }

    /// Threads per workgroup.
    pub fn threads(&self) -> u32 {
        self.tx * self.ty
    }

    /// Columns one workgroup covers.
    pub fn columns(&self) -> u32 {
        self.tx * self.rx
    }

    /// Rows one workgroup covers (at least dk).
    pub fn rows(&self) -> u32 {
        self.ty * self.ry
    }
}
