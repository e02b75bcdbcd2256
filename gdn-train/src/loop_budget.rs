//! A driver limit wgpu does not report: Mesa's lavapipe before 26 ends an invocation's loops after
//! 65 535 iterations of all its loops together (gallivm's `LP_MAX_TGSI_LOOP_ITERATIONS`, one
//! counter per shader function), and its results are then wrong with no error: every tensor of a
//! chunked tape over one sequence of 32 768 tokens came back NaN on Mesa 22.3 (CI's driver).
//!
//! The chunked family's passes over chunks walk a whole sequence in one invocation, a few loop
//! iterations per token: on Mesa 22.3 its backward first failed at 28 672 tokens (dk = dv = 16,
//! chunks of 64), its forward at 32 704, at every chunk size and head size tried. So on such a
//! driver a chunked plan over a longer sequence than [`LAVAPIPE_CHUNKED_TOKENS`] is refused with
//! [`Error::Limit`]; a `WindowedTape` cuts the sequence into pieces that continue each other's
//! states, and a tape left to pick its family takes another one.

use crate::{Context, Error, Family, Result};

/// The longest sequence a chunked plan takes on a driver with the loop budget: half the shortest
/// that failed.
pub const LAVAPIPE_CHUNKED_TOKENS: usize = 16_384;

/// Whether `ctx`'s driver has the shared loop budget: lavapipe (`llvmpipe`) of a Mesa before 26, or
/// of one whose version it does not say.
pub(crate) fn has_loop_budget(ctx: &Context) -> bool {
    let info = ctx.adapter_info();
    if info.driver != "llvmpipe" {
        return false;
    }
    let major = info.driver_info.split_whitespace().skip_while(|w| *w != "Mesa").nth(1);
    major.and_then(|v| v.split('.').next()?.parse::<u32>().ok()).is_none_or(|major| major < 26)
}

/// Refuses a plan of `family` over the sequences of `offsets` that would pass the driver's loop
/// budget.
pub(crate) fn check(ctx: &Context, family: Family, offsets: &[usize]) -> Result<()> {
    let Some(most) = ctx.longest_chunked_sequence().filter(|_| matches!(family, Family::Chunked { .. })) else {
        return Ok(());
    };
    let longest = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    if longest <= most {
        return Ok(());
    }
    Err(Error::Limit {
        what: format!(
            "a sequence of {longest} tokens in the chunked family on {} (its loops end after 65 535 iterations an invocation)",
            ctx.adapter_info().driver_info
        ),
        limit: "tokens_per_sequence",
        needed: longest as u64,
        available: most as u64,
    })
}
