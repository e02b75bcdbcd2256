//! Where one head's slice of a token sits in a flat token-major buffer.
//!
//! The layer keeps q, k and v side by side in one `[N, C]` buffer (the conv output), the core op
//! keeps each in its own `[N, heads, width]` buffer. The L2 norms and the recurrence read (and
//! their backwards write) heads through this one description, so the same loops serve both.

/// The rows of `width` elements that hold head `i` of token `t` at `t·stride + first + i·width`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeadRows {
    /// Elements per token.
    pub stride: usize,
    /// Offset of head 0 within a token.
    pub first: usize,
    /// Elements per head.
    pub width: usize,
}

impl HeadRows {
    /// `heads` heads of `width` packed densely, `[N, heads, width]`.
    pub fn dense(heads: usize, width: usize) -> Self {
        Self { stride: heads * width, first: 0, width }
    }

    /// Flat index of the first element of head `i` of token `t`.
    pub fn start(&self, t: usize, i: usize) -> usize {
        t * self.stride + self.first + i * self.width
    }

    /// Head `i` of token `t` in `data`.
    pub fn row<'a>(&self, data: &'a [f64], t: usize, i: usize) -> &'a [f64] {
        &data[self.start(t, i)..][..self.width]
    }

    /// Head `i` of token `t` in `data`, to write.
    pub fn row_mut<'a>(&self, data: &'a mut [f64], t: usize, i: usize) -> &'a mut [f64] {
        &mut data[self.start(t, i)..][..self.width]
    }
}
