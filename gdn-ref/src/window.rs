//! The conv window: which raw value each tap of the causal conv reads, and which raw values make up
//! a sequence's final conv state.
//!
//! A sequence's conv state holds the `kk − 1` raw `qkv` tokens that precede its first token in this
//! call, oldest first: slot `i` is relative position `i − (kk − 1)`. Tap `j` of the conv at token `t`
//! reads relative position `(t − start) + j − (kk − 1)`: a token of the call when that is `≥ 0`,
//! else slot `(t − start) + j` of the state (zero when no state is given). The final conv state is
//! the window a conv at the virtual token `end` would read with taps `0 … kk − 2`, so it reaches
//! into the old state when the call has fewer than `kk − 1` tokens.

/// Where one tap reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tap {
    /// The flat token of the batch.
    Token(usize),
    /// The slot of the sequence's conv state.
    State(usize),
}

/// The source of tap `j` of the conv at flat token `t` of a sequence starting at flat token `start`
/// (`t` may be the sequence's end, for the final state).
pub(crate) fn tap(kk: usize, start: usize, t: usize, j: usize) -> Tap {
    let rel = t - start + j;
    match rel.checked_sub(kk - 1) {
        Some(_) => Tap::Token(t + j - (kk - 1)),
        None => Tap::State(rel),
    }
}

/// Flat index of `(sequence n, slot i, channel c)` in a `[N, kk − 1, C]` conv state.
pub(crate) fn slot(kk: usize, channels: usize, n: usize, i: usize, c: usize) -> usize {
    (n * (kk - 1) + i) * channels + c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taps_read_the_state_before_the_start_and_tokens_after() {
        // kk = 4, sequence starting at flat token 10.
        assert_eq!(
            (0..4).map(|j| tap(4, 10, 10, j)).collect::<Vec<_>>(),
            [Tap::State(0), Tap::State(1), Tap::State(2), Tap::Token(10)]
        );
        assert_eq!(tap(4, 10, 11, 1), Tap::State(2));
        assert_eq!(tap(4, 10, 11, 2), Tap::Token(10));
        assert_eq!(tap(4, 10, 13, 0), Tap::Token(10));
    }

    #[test]
    fn the_final_window_reaches_into_the_old_state_for_short_calls() {
        // One token (flat 10) with kk = 4: the new window is old slots 1, 2 and the token.
        let window: Vec<Tap> = (0..3).map(|i| tap(4, 10, 11, i)).collect();
        assert_eq!(window, [Tap::State(1), Tap::State(2), Tap::Token(10)]);
        // Five tokens: the last three.
        let window: Vec<Tap> = (0..3).map(|i| tap(4, 10, 15, i)).collect();
        assert_eq!(window, [Tap::Token(12), Tap::Token(13), Tap::Token(14)]);
    }
}
