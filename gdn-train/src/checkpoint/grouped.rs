//! Qwen3-Next's merged input projections, un-grouped into the operator's channel order.
//!
//! Qwen3-Next stores `in_proj_qkvz` and `in_proj_ba` with their output rows grouped per key head;
//! transformers' `Qwen3NextGatedDeltaNet.fix_query_key_value_ordering` views the projection as
//! `[…, nk, group]` and splits each group. With `rep = nv / nk`, key head `g`'s group is
//!
//! - `in_proj_qkvz`, `2·dk + 2·rep·dv` rows: `q_g` (dk), `k_g` (dk), then `v` of value heads
//!   `g·rep … g·rep + rep − 1` (rep·dv, head-major), then `z` of the same value heads (rep·dv);
//! - `in_proj_ba`, `2·rep` rows: `b` of value heads `g·rep …` (rep), then `a` of them (rep).
//!
//! The operator wants `qkv` rows `[q of all key heads | k of all | v of all value heads]` (the
//! order transformers concatenates before the conv, so `conv1d`'s channels are already in it),
//! `z` rows value-head-major, `b` and `a` one row per value head. Every block of a group lands
//! contiguously: a key head's value heads are consecutive.

use crate::LayerConfig;

/// Copies `rows` rows of width `cols` from `src` (starting at row `from`) into `dst` (at row `to`).
fn copy_rows(src: &[f32], from: usize, dst: &mut [f32], to: usize, rows: usize, cols: usize) {
    dst[to * cols..(to + rows) * cols].copy_from_slice(&src[from * cols..(from + rows) * cols]);
}

/// `in_proj_qkvz` (`[nk·(2·dk + 2·rep·dv), cols]`, grouped) as `qkv` `[C, cols]` in the operator's
/// channel order and `z` `[nv·dv, cols]`.
pub(crate) fn ungroup_qkvz(config: &LayerConfig, cols: usize, qkvz: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let (dk, rep_dv) = (config.dk, config.rep() * config.dv);
    let group = 2 * dk + 2 * rep_dv;
    let mut qkv = vec![0.0; config.channels() * cols];
    let mut z = vec![0.0; config.value_width() * cols];
    for g in 0..config.nk {
        let first = g * group;
        copy_rows(qkvz, first, &mut qkv, config.q_channel(g), dk, cols);
        copy_rows(qkvz, first + dk, &mut qkv, config.k_channel(g), dk, cols);
        copy_rows(qkvz, first + 2 * dk, &mut qkv, config.v_channel(g * config.rep()), rep_dv, cols);
        copy_rows(qkvz, first + 2 * dk + rep_dv, &mut z, g * rep_dv, rep_dv, cols);
    }
    (qkv, z)
}

/// `in_proj_ba` (`[nk·2·rep, cols]`, grouped) as `b` and `a`, `[nv, cols]` each.
pub(crate) fn ungroup_ba(config: &LayerConfig, cols: usize, ba: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let rep = config.rep();
    let mut b = vec![0.0; config.nv * cols];
    let mut a = vec![0.0; config.nv * cols];
    for g in 0..config.nk {
        copy_rows(ba, g * 2 * rep, &mut b, g * rep, rep, cols);
        copy_rows(ba, g * 2 * rep + rep, &mut a, g * rep, rep, cols);
    }
    (b, a)
}
