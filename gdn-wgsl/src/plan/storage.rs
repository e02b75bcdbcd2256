//! Half-precision storage of the layer's activations and their gradients: the caller's token-major
//! tensors (qkv, z, a, b, out and their gradients) held as bf16 or f16, two to a word, while the
//! kernels compute in f32 from wide copies (`BufferId::Wide`): widened before the pass that reads
//! them, rounded back after the pass that writes them (`templates/storage/widen.wgsl`,
//! `narrow.wgsl`). The states, the parameters and their gradients stay f32. Half storage halves
//! what an engine keeps of these tensors; the layer's own work is unchanged.

use super::buffer::Element;
use crate::Kernel;
use gdn_ref::Tensor;

/// How the caller's activations and their gradients are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Storage {
    /// f32, as the kernels compute (the default).
    #[default]
    F32,
    /// bfloat16: the upper half of an f32 (rounding about 4e-3 relative).
    Bf16,
    /// IEEE binary16 (rounding about 5e-4 relative, ±65 504 at most).
    F16,
}

impl Storage {
    /// Its name: `f32`, `bf16` or `f16`.
    pub fn name(self) -> &'static str {
        match self {
            Storage::F32 => "f32",
            Storage::Bf16 => "bf16",
            Storage::F16 => "f16",
        }
    }

    /// The storage of this name.
    pub fn named(name: &str) -> Option<Self> {
        [Storage::F32, Storage::Bf16, Storage::F16].into_iter().find(|s| s.name() == name)
    }

    /// Whether `tensor` is held in halves: the token-major activations and their gradients, when
    /// the storage is a half one.
    pub fn halves(self, tensor: Tensor) -> bool {
        self != Storage::F32
            && matches!(
                tensor,
                Tensor::Qkv
                    | Tensor::Z
                    | Tensor::A
                    | Tensor::B
                    | Tensor::Out
                    | Tensor::Dout
                    | Tensor::Dqkv
                    | Tensor::Dz
                    | Tensor::Da
                    | Tensor::Db
            )
    }

    /// How a half-stored tensor's words are read.
    pub fn element(self) -> Element {
        match self {
            Storage::F16 => Element::F16Pairs,
            _ => Element::Bf16Pairs,
        }
    }

    /// The kernels that widen a half-stored tensor and round a result back.
    pub(crate) fn kernels(self) -> (Kernel, Kernel) {
        match self {
            Storage::F16 => (Kernel::WidenF16, Kernel::NarrowF16),
            _ => (Kernel::WidenBf16, Kernel::NarrowBf16),
        }
    }
}
