//! Host side of half-precision storage (`Storage::Bf16`, `Storage::F16`): the f32 slices the host
//! calls take and give, packed to and unpacked from two halves per word (the lower element in the
//! low half, as `templates/storage/half_*.wgsl` read them), rounding to nearest, ties to even; and
//! the check that refuses a value f16 would make infinite.

use crate::{Error, Result, Tensor};
use gdn_wgsl::plan::{Element, Storage};

/// `values` packed two to a word in `storage`'s half format.
pub(crate) fn pack(storage: Storage, values: &[f32]) -> Vec<u32> {
    let half = |x: f32| -> u32 {
        match storage {
            Storage::F16 => u32::from(half::f16::from_f32(x).to_bits()),
            _ => u32::from(half::bf16::from_f32(x).to_bits()),
        }
    };
    values.chunks(2).map(|pair| half(pair[0]) | (pair.get(1).map_or(0, |&x| half(x)) << 16)).collect()
}

/// The first `elements` values of `words`, unpacked from `storage`'s half format.
pub(crate) fn unpack(storage: Storage, words: &[u32], elements: usize) -> Vec<f32> {
    let wide = |bits: u32| -> f32 {
        let bits = (bits & 0xffff) as u16;
        match storage {
            Storage::F16 => half::f16::from_bits(bits).to_f32(),
            _ => half::bf16::from_bits(bits).to_f32(),
        }
    };
    words.iter().flat_map(|&w| [wide(w), wide(w >> 16)]).take(elements).collect()
}

/// A word of NaN in the element format `element` (every element of it NaN).
pub(crate) fn nan_word(element: Element) -> u32 {
    match element {
        Element::F16Pairs => 0x7e00_7e00,
        Element::Bf16Pairs => 0x7fc0_7fc0,
        _ => f32::NAN.to_bits(),
    }
}

/// Refuses a finite value of `data` that `storage` would turn infinite in `which` (f16 past
/// ±65 504; bf16 holds f32's range).
pub(crate) fn check_range(storage: Storage, which: Tensor, data: &[f32]) -> Result<()> {
    if storage != Storage::F16 || !storage.halves(which) {
        return Ok(());
    }
    match data.iter().position(|&x| x.is_finite() && half::f16::from_f32(x).is_infinite()) {
        None => Ok(()),
        Some(index) => Err(Error::Range {
            name: which.name(),
            index,
            value: data[index],
            reason: "past f16's range (±65 504): f16 storage would make it infinite".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_round_to_nearest_even_and_come_back() {
        for storage in [Storage::Bf16, Storage::F16] {
            let values = [1.0, -2.5, 0.1, 3.0e-5, 1000.25, 0.0, -0.0];
            let back = unpack(storage, &pack(storage, &values), values.len());
            let tolerance = if storage == Storage::F16 { 1.0 / 2048.0 } else { 1.0 / 256.0 };
            for (x, y) in values.iter().zip(&back) {
                assert!((x - y).abs() <= tolerance * x.abs() + 1e-7, "{storage:?}: {x} came back as {y}");
            }
            assert_eq!(pack(storage, &[1.0, 2.0, 3.0]).len(), 2, "odd counts fill the last word");
        }
        // 1 + 2⁻⁸ is halfway between two bf16 values: ties go to the even one, 1.
        assert_eq!(unpack(Storage::Bf16, &pack(Storage::Bf16, &[1.0 + 1.0 / 256.0]), 1), vec![1.0]);
    }
}
