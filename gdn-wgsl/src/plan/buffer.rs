//! Typed ids of every buffer a layer plan binds, and what each one holds: the layer's tensors
//! (`gdn_ref::Tensor`, the one list of them) and the work buffers between the kernels, each under
//! the binding name the kernels declare it by.

use gdn_ref::Tensor;

/// Defines [`Work`] with the binding name of each variant.
macro_rules! work_buffers {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// A buffer between the kernels (or a uniform), not part of the layer's interface.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum Work {
            $($(#[$doc])* $variant,)*
        }

        impl Work {
            /// Every work buffer.
            pub const ALL: &'static [Work] = &[$(Work::$variant,)*];

            /// The binding name the kernels declare it by.
            pub fn name(self) -> &'static str {
                match self {
                    $(Work::$variant => $name,)*
                }
            }
        }
    };
}

work_buffers! {
    /// Sequence offsets, each sequence's first stored state and each token's sequence
    /// (`templates/lib/sequences.wgsl`), u32.
    Index => "index",
    /// The `Layer` uniform.
    Layer => "layer",
    /// The `Reduce` uniform of the dconv column sum.
    ReduceDconv => "reduce_dconv",
    /// The `Reduce` uniform of the dnorm column sum.
    ReduceDnorm => "reduce_dnorm",
    /// The `Reduce` uniform of the da_log column sum.
    ReduceDaLog => "reduce_da_log",
    /// The `Reduce` uniform of the ddt_bias column sum.
    ReduceDdtBias => "reduce_ddt_bias",
    /// The conv's output after SiLU, `[tokens, C]`.
    Y => "y",
    /// q̂ and k̂ per key head.
    QkHat => "qk_hat",
    /// ln g, β and their slopes per (token, value head), then Σq² + ε and Σk² + ε per (token, key
    /// head).
    Gates => "gates",
    /// The delta rule's output before the norm.
    O => "o",
    /// The gated norm's reciprocal RMS per (token, value head).
    Rstd => "rstd",
    /// Gradient of `o`.
    DO => "d_o",
    /// The per-element term of dnorm.
    DnormTerm => "dnorm_term",
    /// dq̂ and dk̂ per value head.
    DqkHatHeads => "dqk_hat_heads",
    /// Gradient of `y` (dv in its v block).
    Dy => "dy",
    /// The per-token term of da_log.
    DlogTerm => "dlog_term",
    /// Gradient of the conv's pre-activation.
    Dpre => "dpre",
    /// Partial column sums of the parameter gradients, each sum in its own span.
    Partial => "partial",
    /// Stored states: checkpoints (recurrent) or chunk-start states (chunked); after them, for the
    /// recurrent column-block backward, the forward's r = v − g·S_{t−1}ᵀk̂ per (token, value head)
    /// (`templates/recurrent/residuals.wgsl`).
    Ckpt => "ckpt",
    /// The recurrent backward's replay scratch.
    Scratch => "scratch",
    /// Partial sums of dℓ and dβ per (token, value head).
    GateGradParts => "gate_grad_parts",
    /// Gradients of the chunk-start states.
    Dckpt => "dckpt",
    /// f32 chunked: every chunk's forward products, then every chunk's backward scratch, then the
    /// dℓ/dβ partial sums (one buffer, so that its kernels fit the 10 storage buffers per stage SwiftShader offers).
    ChunkWork => "chunk_work",
    /// Tensor cores: every chunk's record (β, decays, span sums).
    Record => "record",
    /// Tensor cores: packed q̂ per key head (f16).
    QHalf => "q_half",
    /// Tensor cores: packed k̂ per key head (f16).
    KHalf => "k_half",
    /// Tensor cores: d¹-scaled q̂ (f16).
    QdHalf => "qd_half",
    /// Tensor cores: X¹ (f16).
    XHalf => "x_half",
    /// Tensor cores: W¹ (f16), formed by the backward.
    WHalf => "w_half",
    /// Tensor cores: Y (f16).
    YHalf => "y_half",
    /// Tensor cores: U (f16).
    UHalf => "u_half",
    /// Tensor cores: diag(λ) U (f16).
    LuHalf => "lu_half",
    /// Tensor cores: M (f16).
    MHalf => "m_half",
    /// Tensor cores: KK ⊙ M⁻ (f16).
    KmHalf => "km_half",
    /// Tensor cores: T (f16).
    THalf => "t_half",
    /// Tensor cores: P (f16).
    PHalf => "p_half",
    /// Tensor cores: the chunk-start states (f16).
    SHalf => "s_half",
    /// Tensor cores: the chunk-start states' per-column-block scales.
    SScale => "s_scale",
    /// Tensor cores: U in f32.
    UValues => "u_values",
    /// Tensor cores: dO (f16).
    DoHalf => "do_half",
    /// Tensor cores: Pᵀ dO (f16).
    Do1Half => "do1_half",
    /// Tensor cores: dO's scales.
    DoScale => "do_scale",
    /// Tensor cores: the local part of dU in f32.
    DuLocal => "du_local",
    /// Tensor cores: dS (f16).
    DsHalf => "ds_half",
    /// Tensor cores: dS's scales.
    DsScale => "ds_scale",
    /// Tensor cores: dU (f16).
    DuHalf => "du_half",
    /// Tensor cores: dU's scales.
    DuScale => "du_scale",
    /// Tensor cores: dY (f16).
    DyHalf => "dy_half",
    /// Tensor cores: dQK (f16).
    DqkHalf => "dqk_half",
    /// Tensor cores: H (f16).
    HHalf => "h_half",
    /// Tensor cores: the per-token gate terms.
    GateTerms => "gate_terms",
    /// Tensor cores: the per-chunk key terms.
    KeyTerms => "key_terms",
}

/// One buffer of a plan: a tensor of the layer's interface or a work buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BufferId {
    /// A tensor the caller writes or reads.
    Tensor(Tensor),
    /// A buffer between the kernels.
    Work(Work),
    /// The f32 copy the kernels compute on of a tensor the caller stores in halves
    /// (`plan::Storage`).
    Wide(Tensor),
}

impl BufferId {
    /// Its binding name (a wide copy's is the tensor's with `_f32`).
    pub fn name(self) -> &'static str {
        match self {
            BufferId::Tensor(t) => t.name(),
            BufferId::Work(w) => w.name(),
            BufferId::Wide(t) => wide_name(t),
        }
    }

    /// The buffer a kernel's binding of this name takes when the plan names no other.
    pub fn bound_by_name(name: &str) -> Option<BufferId> {
        let tensor = Tensor::ALL.iter().find(|t| t.name() == name).map(|&t| BufferId::Tensor(t));
        tensor.or_else(|| Work::ALL.iter().find(|w| w.name() == name).map(|&w| BufferId::Work(w)))
    }
}

/// The name of a tensor's wide copy.
fn wide_name(tensor: Tensor) -> &'static str {
    match tensor {
        Tensor::Qkv => "qkv_f32",
        Tensor::Z => "z_f32",
        Tensor::A => "a_f32",
        Tensor::B => "b_f32",
        Tensor::Out => "out_f32",
        Tensor::Dout => "dout_f32",
        Tensor::Dqkv => "dqkv_f32",
        Tensor::Dz => "dz_f32",
        Tensor::Da => "da_f32",
        Tensor::Db => "db_f32",
        _ => "wide",
    }
}

impl From<Tensor> for BufferId {
    fn from(t: Tensor) -> Self {
        BufferId::Tensor(t)
    }
}

impl From<Work> for BufferId {
    fn from(w: Work) -> Self {
        BufferId::Work(w)
    }
}

/// How a storage buffer's 4-byte words are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Element {
    /// One f32 per word.
    F32,
    /// One u32 per word.
    U32,
    /// Two f16 per word (the tensor-core kernels' packed operands, f16 storage).
    F16Pairs,
    /// Two bf16 per word (bf16 storage).
    Bf16Pairs,
}

/// What a buffer holds when the plan is laid out.
#[derive(Debug, Clone, PartialEq)]
pub enum Contents {
    /// `words` 4-byte words that the caller or the kernels write (zero words: an optional tensor
    /// the call does not have, still bound as one word).
    Storage {
        /// Length in words.
        words: usize,
        /// How the kernels read them.
        element: Element,
    },
    /// A storage buffer whose u32 words the plan fixes (the index).
    Fixed(Vec<u32>),
    /// A uniform buffer and its bytes.
    Uniform(Vec<u8>),
}

/// One buffer of a plan and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferSpec {
    /// Which buffer.
    pub id: BufferId,
    /// Its contents or size.
    pub contents: Contents,
}

impl BufferSpec {
    /// `words` f32.
    pub(crate) fn f32(id: impl Into<BufferId>, words: usize) -> Self {
        Self { id: id.into(), contents: Contents::Storage { words, element: Element::F32 } }
    }

    /// `values` f16, two to a word.
    pub(crate) fn f16(id: impl Into<BufferId>, values: usize) -> Self {
        Self { id: id.into(), contents: Contents::Storage { words: values.div_ceil(2), element: Element::F16Pairs } }
    }

    /// Storage words (a uniform's bytes over four).
    pub fn words(&self) -> usize {
        match &self.contents {
            Contents::Storage { words, .. } => *words,
            Contents::Fixed(words) => words.len(),
            Contents::Uniform(bytes) => bytes.len().div_ceil(4),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_buffer_is_found_by_its_own_name_and_names_are_unique() {
        let ids = Tensor::ALL.iter().map(|&t| BufferId::Tensor(t)).chain(Work::ALL.iter().map(|&w| BufferId::Work(w)));
        for id in ids {
            assert_eq!(BufferId::bound_by_name(id.name()), Some(id), "{id:?}");
        }
        assert_eq!(BufferId::bound_by_name("states"), None, "a role name is no buffer");
    }
}
