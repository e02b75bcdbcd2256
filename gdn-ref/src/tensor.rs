//! The layer's tensors, listed once for every crate: what the caller gives (inputs, parameters,
//! gradients arriving at the outputs), what the forward and backward give back, and each one's
//! name, role, presence and length. gdn-train's tapes, gdn-wgsl's buffer plans and gdn-check's
//! comparisons all walk this list instead of writing their own.

use crate::LayerConfig;

/// One tensor of the layer's interface.
///
/// Token-major tensors are `[tokens, …]` row-major (`tokens = B·T`, or `Ttot` for a packed batch);
/// states are `[sequences, nv, dk, dv]`; conv windows are `[sequences, kk − 1, C]`, token-major
/// like qkv and oldest first (see [`crate::LayerInputs`] for the layout and its mapping to Hugging
/// Face's `conv_states`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Tensor {
    /// Input: raw qkv projection, `[tokens, C]`.
    Qkv,
    /// Input: output-gate logits, `[tokens, nv·dv]`.
    Z,
    /// Input: decay logits, `[tokens, nv]`.
    A,
    /// Input: write-strength logits, `[tokens, nv]`.
    B,
    /// Input: initial recurrent states (optional).
    H0,
    /// Input: the conv window before each sequence (optional).
    ConvState,
    /// Parameter `[nv]`.
    ALog,
    /// Parameter `[nv]`.
    DtBias,
    /// Parameter `[dv]`.
    Norm,
    /// Parameter `[C, kk]`.
    Conv,
    /// Output: the layer's output, `[tokens, nv·dv]`.
    Out,
    /// Output: the final recurrent states.
    Ht,
    /// Output: the conv window after each sequence (with a conv state).
    FinalConvState,
    /// Arriving at the outputs: gradient of `out`.
    Dout,
    /// Arriving at the outputs: gradient of the final states (optional).
    Dht,
    /// Arriving at the outputs: gradient of the final conv window (with a conv state).
    DfinalConvState,
    /// Gradient of `qkv`.
    Dqkv,
    /// Gradient of `z`.
    Dz,
    /// Gradient of `a`.
    Da,
    /// Gradient of `b`.
    Db,
    /// Gradient of `h0` (with an initial state).
    Dh0,
    /// Gradient of the input conv window (with a conv state).
    DconvState,
    /// Gradient of `a_log`.
    DaLog,
    /// Gradient of `dt_bias`.
    DdtBias,
    /// Gradient of `norm`.
    Dnorm,
    /// Gradient of `conv`.
    Dconv,
}

/// Who writes a tensor, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The caller, before the forward.
    Input,
    /// The caller: a learned parameter.
    Parameter,
    /// The forward.
    Output,
    /// The caller, before the backward: a gradient arriving at an output.
    OutputGrad,
    /// The backward.
    Gradient,
}

/// When a tensor exists: always, or with one of the optional states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Presence {
    /// Every layer call has it.
    Always,
    /// With an initial recurrent state (`h0`, `dh0`).
    InitialState,
    /// With a gradient arriving at the final states (`dhT`).
    FinalStateGrad,
    /// With a conv state carried across calls (in, out and both gradients).
    ConvState,
}

impl Tensor {
    /// Every tensor, inputs first, then parameters, outputs, output gradients and gradients.
    pub const ALL: [Tensor; 26] = [
        Tensor::Qkv,
        Tensor::Z,
        Tensor::A,
        Tensor::B,
        Tensor::H0,
        Tensor::ConvState,
        Tensor::ALog,
        Tensor::DtBias,
        Tensor::Norm,
        Tensor::Conv,
        Tensor::Out,
        Tensor::Ht,
        Tensor::FinalConvState,
        Tensor::Dout,
        Tensor::Dht,
        Tensor::DfinalConvState,
        Tensor::Dqkv,
        Tensor::Dz,
        Tensor::Da,
        Tensor::Db,
        Tensor::Dh0,
        Tensor::DconvState,
        Tensor::DaLog,
        Tensor::DdtBias,
        Tensor::Dnorm,
        Tensor::Dconv,
    ];

    /// Its name: the field of [`crate::LayerInputs`], [`crate::Gradients`], … and the binding
    /// name of the kernels that read or write it.
    pub fn name(self) -> &'static str {
        match self {
            Tensor::Qkv => "qkv",
            Tensor::Z => "z",
            Tensor::A => "a",
            Tensor::B => "b",
            Tensor::H0 => "h0",
            Tensor::ConvState => "conv_state",
            Tensor::ALog => "a_log",
            Tensor::DtBias => "dt_bias",
            Tensor::Norm => "norm",
            Tensor::Conv => "conv",
            Tensor::Out => "out",
            Tensor::Ht => "ht",
            Tensor::FinalConvState => "final_conv_state",
            Tensor::Dout => "dout",
            Tensor::Dht => "dht",
            Tensor::DfinalConvState => "dfinal_conv_state",
            Tensor::Dqkv => "dqkv",
            Tensor::Dz => "dz",
            Tensor::Da => "da",
            Tensor::Db => "db",
            Tensor::Dh0 => "dh0",
            Tensor::DconvState => "dconv_state",
            Tensor::DaLog => "da_log",
            Tensor::DdtBias => "ddt_bias",
            Tensor::Dnorm => "dnorm",
            Tensor::Dconv => "dconv",
        }
    }

    /// Who writes it.
    pub fn role(self) -> Role {
        match self {
            Tensor::Qkv | Tensor::Z | Tensor::A | Tensor::B | Tensor::H0 | Tensor::ConvState => Role::Input,
            Tensor::ALog | Tensor::DtBias | Tensor::Norm | Tensor::Conv => Role::Parameter,
            Tensor::Out | Tensor::Ht | Tensor::FinalConvState => Role::Output,
            Tensor::Dout | Tensor::Dht | Tensor::DfinalConvState => Role::OutputGrad,
            Tensor::Dqkv
            | Tensor::Dz
            | Tensor::Da
            | Tensor::Db
            | Tensor::Dh0
            | Tensor::DconvState
            | Tensor::DaLog
            | Tensor::DdtBias
            | Tensor::Dnorm
            | Tensor::Dconv => Role::Gradient,
        }
    }

    /// When it exists.
    pub fn presence(self) -> Presence {
        match self {
            Tensor::H0 | Tensor::Dh0 => Presence::InitialState,
            Tensor::Dht => Presence::FinalStateGrad,
            Tensor::ConvState | Tensor::FinalConvState | Tensor::DfinalConvState | Tensor::DconvState => {
                Presence::ConvState
            }
            _ => Presence::Always,
        }
    }

    /// Whether the caller writes it (inputs, parameters, gradients arriving at the outputs).
    pub fn caller_written(self) -> bool {
        matches!(self.role(), Role::Input | Role::Parameter | Role::OutputGrad)
    }

    /// Its shape for `config` over `tokens` tokens in `sequences` sequences (token-major tensors
    /// flattened to `[tokens, …]`).
    pub fn shape(self, config: &LayerConfig, tokens: usize, sequences: usize) -> Vec<usize> {
        let state = vec![sequences, config.nv, config.dk, config.dv];
        let window = vec![sequences, config.kk - 1, config.channels()];
        match self {
            Tensor::Qkv | Tensor::Dqkv => vec![tokens, config.channels()],
            Tensor::Z | Tensor::Out | Tensor::Dout | Tensor::Dz => vec![tokens, config.value_width()],
            Tensor::A | Tensor::B | Tensor::Da | Tensor::Db => vec![tokens, config.nv],
            Tensor::H0 | Tensor::Ht | Tensor::Dht | Tensor::Dh0 => state,
            Tensor::ConvState | Tensor::FinalConvState | Tensor::DfinalConvState | Tensor::DconvState => window,
            Tensor::ALog | Tensor::DtBias | Tensor::DaLog | Tensor::DdtBias => vec![config.nv],
            Tensor::Norm | Tensor::Dnorm => vec![config.dv],
            Tensor::Conv | Tensor::Dconv => vec![config.channels(), config.kk],
        }
    }

    /// Its elements for `config` over `tokens` tokens in `sequences` sequences, `None` where the
    /// product overflows `usize`.
    pub fn len(self, config: &LayerConfig, tokens: usize, sequences: usize) -> Option<usize> {
        self.shape(config, tokens, sequences).iter().try_fold(1usize, |n, &d| n.checked_mul(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_holds_each_tensor_once_under_its_own_name() {
        let mut names: Vec<&str> = Tensor::ALL.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Tensor::ALL.len());
        let mut sorted = Tensor::ALL;
        sorted.sort();
        assert_eq!(sorted, Tensor::ALL, "ALL lists the tensors in declaration order");
    }

    #[test]
    fn gradients_have_the_shape_of_what_they_differentiate() {
        let config = LayerConfig::new(2, 4, 8, 6, 4).unwrap();
        let pairs = [
            (Tensor::Qkv, Tensor::Dqkv),
            (Tensor::Z, Tensor::Dz),
            (Tensor::A, Tensor::Da),
            (Tensor::B, Tensor::Db),
            (Tensor::H0, Tensor::Dh0),
            (Tensor::ConvState, Tensor::DconvState),
            (Tensor::ALog, Tensor::DaLog),
            (Tensor::DtBias, Tensor::DdtBias),
            (Tensor::Norm, Tensor::Dnorm),
            (Tensor::Conv, Tensor::Dconv),
            (Tensor::Out, Tensor::Dout),
            (Tensor::Ht, Tensor::Dht),
            (Tensor::FinalConvState, Tensor::DfinalConvState),
        ];
        for (x, dx) in pairs {
            assert_eq!(x.shape(&config, 7, 2), dx.shape(&config, 7, 2), "{x:?}");
            assert_eq!(x.presence() == Presence::Always, dx.presence() == Presence::Always || x == Tensor::Ht);
        }
        assert_eq!(Tensor::Qkv.len(&config, usize::MAX, 1), None);
    }
}
