//! How a batch's tokens split into sequences: `B` windows of `T` tokens, or packed variable-length
//! sequences given by `cu_seqlens` offsets (as flash-attention and fla take them).

use crate::Error;

/// The layout of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch {
    /// `b` sequences of `t` tokens each; tensors are `[b, t, …]`.
    Fixed {
        /// Sequences.
        b: usize,
        /// Tokens per sequence.
        t: usize,
    },
    /// Sequences packed into one row: tensors are `[1, Ttot, …]` and sequence `n` owns tokens
    /// `cu_seqlens[n]..cu_seqlens[n + 1]`.
    Packed {
        /// Offsets `[0, t1, …, Ttot]`, strictly increasing (every sequence has a token).
        cu_seqlens: Vec<usize>,
    },
}

impl Batch {
    /// The leading two dims of every token-major tensor: `[B, T]` or `[1, Ttot]`.
    pub fn token_dims(&self) -> [usize; 2] {
        match self {
            Batch::Fixed { b, t } => [*b, *t],
            Batch::Packed { cu_seqlens } => [1, cu_seqlens.last().copied().unwrap_or(0)],
        }
    }

    /// Tokens of the batch, before any offsets are laid out: `B·T` (checked) or the packed batch's
    /// last offset.
    pub fn tokens(&self) -> Result<usize, Error> {
        match self {
            Batch::Fixed { b, t } => b
                .checked_mul(*t)
                .ok_or_else(|| Error::TooLarge { name: "batch", reason: format!("B·T = {b} · {t} overflows usize") }),
            Batch::Packed { cu_seqlens } => Ok(cu_seqlens.last().copied().unwrap_or(0)),
        }
    }

    /// Number of sequences (the leading dim of `h0`/`hT`).
    pub fn sequence_count(&self) -> usize {
        match self {
            Batch::Fixed { b, .. } => *b,
            Batch::Packed { cu_seqlens } => cu_seqlens.len().saturating_sub(1),
        }
    }
}

/// Validated sequence boundaries over the flattened tokens (`B·T` or `Ttot`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sequences {
    offsets: Vec<usize>,
}

impl Sequences {
    /// Checks the batch: positive sizes whose product fits `usize`, or offsets that start at 0,
    /// strictly increase and, when `tokens` is given, end at it.
    pub fn new(batch: &Batch, tokens: Option<usize>) -> Result<Self, Error> {
        batch.tokens()?;
        let offsets = match batch {
            Batch::Fixed { b, t } => {
                if *b == 0 {
                    return Err(Error::Empty { name: "B" });
                }
                if *t == 0 {
                    return Err(Error::Empty { name: "T" });
                }
                (0..=*b).map(|n| n * t).collect()
            }
            Batch::Packed { cu_seqlens } => {
                let bad = |reason: &str| Err(Error::Offsets { got: cu_seqlens.clone(), reason: reason.into() });
                if cu_seqlens.len() < 2 {
                    return bad("need at least [0, Ttot]: one sequence");
                }
                if cu_seqlens[0] != 0 {
                    return bad("must start at 0");
                }
                if cu_seqlens.windows(2).any(|w| w[1] <= w[0]) {
                    return bad("must strictly increase (every sequence needs at least one token)");
                }
                cu_seqlens.clone()
            }
        };
        if let Some(tokens) = tokens.filter(|&t| offsets.last() != Some(&t)) {
            return Err(Error::Offsets { got: offsets, reason: format!("must end at the number of tokens, {tokens}") });
        }
        Ok(Self { offsets })
    }

    /// Number of sequences.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Always false: a batch holds at least one sequence.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Total tokens.
    pub fn tokens(&self) -> usize {
        *self.offsets.last().expect("validated offsets are non-empty")
    }

    /// Flat token range of sequence `n`.
    pub fn range(&self, n: usize) -> std::ops::Range<usize> {
        self.offsets[n]..self.offsets[n + 1]
    }

    /// The offsets `[0, …, tokens]`.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }
}
