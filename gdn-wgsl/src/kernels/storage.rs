//! Half-precision storage (`templates/storage/`): a bf16 or f16 tensor widened to f32 before the
//! pass that reads it, an f32 result rounded back after the pass that writes it; one template each
//! way, the format a snippet.

use super::shared::{ELEMENT_THREADS, elements_constants};
use super::{Binding, KernelDef, NO_WORKGROUP_MEMORY, Needs, Wgsl, bind, wgsl};
use crate::kernels::BindingKind::{ReadF32, ReadU32, WriteF32, WriteU32};

const HALF_BF16: Wgsl = wgsl!("storage/half_bf16");
const HALF_F16: Wgsl = wgsl!("storage/half_f16");

pub(crate) const WIDEN_BF16: KernelDef = KernelDef {
    name: "widen_bf16",
    template: wgsl!("storage/widen"),
    snippets: &[HALF_BF16],
    bindings: &[bind("narrow", ReadU32), bind("wide", WriteF32)],
    threads: ELEMENT_THREADS,
    workgroup_floats: NO_WORKGROUP_MEMORY,
    constants: elements_constants,
    depends_on_dims: false,
    needs: Needs::Nothing,
};

pub(crate) const WIDEN_F16: KernelDef = KernelDef { name: "widen_f16", snippets: &[HALF_F16], ..WIDEN_BF16 };

const NARROW_BINDINGS: &[Binding] = &[bind("wide", ReadF32), bind("narrow", WriteU32)];

pub(crate) const NARROW_BF16: KernelDef =
    KernelDef { name: "narrow_bf16", template: wgsl!("storage/narrow"), bindings: NARROW_BINDINGS, ..WIDEN_BF16 };

pub(crate) const NARROW_F16: KernelDef = KernelDef {
    name: "narrow_f16",
    template: wgsl!("storage/narrow"),
    snippets: &[HALF_F16],
    bindings: NARROW_BINDINGS,
    ..WIDEN_BF16
};
