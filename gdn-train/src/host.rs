//! Host convenience on top of [`Tape`]: upload the parameters and inputs from slices, run, and
//! read the results back — for tests, tools and callers that keep their tensors on the host. Each
//! call holds the tape's lock from its first upload to its last read-back (see [`Tape`]).

use crate::Tensor;
use crate::progress::Progress;
use crate::{Error, Pass, Result, Tape};

/// The layer's parameters, row-major f32: `a_log`, `dt_bias` `[nv]`, `norm` `[dv]`, `conv` `[C, kk]`.
#[derive(Debug, Clone, Copy)]
pub struct Params<'a> {
    /// `[nv]`.
    pub a_log: &'a [f32],
    /// `[nv]`.
    pub dt_bias: &'a [f32],
    /// `[dv]`.
    pub norm: &'a [f32],
    /// `[C, kk]`.
    pub conv: &'a [f32],
}

/// The inputs of one forward, token-major f32 (see [`Tensor`] for the shapes).
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// `[tokens, C]`.
    pub qkv: &'a [f32],
    /// `[tokens, nv·dv]`.
    pub z: &'a [f32],
    /// `[tokens, nv]`.
    pub a: &'a [f32],
    /// `[tokens, nv]`.
    pub b: &'a [f32],
    /// `[sequences, nv, dk, dv]`, exactly when the tape was created with `initial_state`.
    pub h0: Option<&'a [f32]>,
    /// `[sequences, kk − 1, C]`, exactly when the tape was created with `conv_state` (zeros for
    /// fresh sequences).
    pub conv_state: Option<&'a [f32]>,
}

/// What the forward returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Outputs {
    /// `[tokens, nv·dv]`.
    pub out: Vec<f32>,
    /// `[sequences, nv, dk, dv]`.
    pub ht: Vec<f32>,
    /// The conv window after each sequence, `[sequences, kk − 1, C]`, when the tape has
    /// `conv_state`: the next call's `conv_state`.
    pub conv_state: Option<Vec<f32>>,
}

/// Every gradient of the backward.
#[derive(Debug, Clone, PartialEq)]
pub struct Gradients {
    /// `[tokens, C]`.
    pub dqkv: Vec<f32>,
    /// `[tokens, nv·dv]`.
    pub dz: Vec<f32>,
    /// `[tokens, nv]`.
    pub da: Vec<f32>,
    /// `[tokens, nv]`.
    pub db: Vec<f32>,
    /// `[sequences, nv, dk, dv]`, when the tape has `initial_state`.
    pub dh0: Option<Vec<f32>>,
    /// `[nv]`.
    pub da_log: Vec<f32>,
    /// `[nv]`.
    pub ddt_bias: Vec<f32>,
    /// `[dv]`.
    pub dnorm: Vec<f32>,
    /// `[C, kk]`.
    pub dconv: Vec<f32>,
    /// `[sequences, kk − 1, C]`, when the tape has `conv_state`: the gradient of the input conv
    /// window, to pass as the previous call's final conv state gradient.
    pub dconv_state: Option<Vec<f32>>,
}

/// Refuses a non-finite element of `a`, `a_log` or `dt_bias` (named `name`), as gdn-ref does: the
/// kernels cap the gate's exponent, which would turn it into a number, and Vulkan lets drivers
/// assume no NaN or infinity, so it cannot be relied on to propagate.
pub(crate) fn check_gate_finite(name: &'static str, data: &[f32]) -> Result<()> {
    match data.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(Error::Layer(gdn_ref::Error::NotFinite { name, index, value: f64::from(data[index]) })),
        None => Ok(()),
    }
}

/// Slices to upload into the tape, every one checked before any is written.
type Uploads<'a> = Vec<(Tensor, &'a [f32])>;

impl Tape {
    /// Uploads the parameters. A rejected call writes none of them.
    pub fn write_params(&self, params: &Params) -> Result<()> {
        let uploads = self.checked(vec![
            (Tensor::ALog, params.a_log),
            (Tensor::DtBias, params.dt_bias),
            (Tensor::Norm, params.norm),
            (Tensor::Conv, params.conv),
        ])?;
        self.upload_all(&self.lock(), &uploads)
    }

    /// Uploads the inputs of a forward. A rejected call writes none of them.
    pub fn write_inputs(&self, inputs: &Inputs) -> Result<()> {
        let uploads = self.input_uploads(inputs)?;
        self.upload_all(&self.lock(), &uploads)
    }

    /// Uploads the gradients arriving at the outputs. A rejected call writes neither.
    pub fn write_output_grads(&self, dout: &[f32], dht: Option<&[f32]>) -> Result<()> {
        let uploads = self.output_grad_uploads(dout, dht)?;
        self.upload_all(&self.lock(), &uploads)
    }

    /// Uploads the gradient arriving at the final conv state, `[sequences, kk − 1, C]` (tapes with
    /// `conv_state`). The backward reads it as it was last written: zero on a new tape.
    pub fn write_final_conv_state_grad(&self, d: &[f32]) -> Result<()> {
        let upload = self.optional(Tensor::DfinalConvState, Some(d), self.options().conv_state, "conv_state")?;
        self.upload_all(&self.lock(), &upload.into_iter().collect())
    }

    /// The inputs of a forward, checked.
    fn input_uploads<'a>(&self, inputs: &Inputs<'a>) -> Result<Uploads<'a>> {
        let mut uploads = self.checked(vec![
            (Tensor::Qkv, inputs.qkv),
            (Tensor::Z, inputs.z),
            (Tensor::A, inputs.a),
            (Tensor::B, inputs.b),
        ])?;
        let options = self.options();
        uploads.extend(self.optional(Tensor::H0, inputs.h0, options.initial_state, "initial_state")?);
        uploads.extend(self.optional(Tensor::ConvState, inputs.conv_state, options.conv_state, "conv_state")?);
        Ok(uploads)
    }

    /// The gradients arriving at the outputs, checked.
    fn output_grad_uploads<'a>(&self, dout: &'a [f32], dht: Option<&'a [f32]>) -> Result<Uploads<'a>> {
        let mut uploads = self.checked(vec![(Tensor::Dout, dout)])?;
        uploads.extend(self.optional(Tensor::Dht, dht, self.options().final_state_grad, "final_state_grad")?);
        Ok(uploads)
    }

    /// `uploads`, each checked by [`Tape::check_write`], and those the gate caps checked finite.
    fn checked<'a>(&self, uploads: Uploads<'a>) -> Result<Uploads<'a>> {
        for &(which, data) in &uploads {
            self.check_write(which, data)?;
            if matches!(which, Tensor::A | Tensor::ALog | Tensor::DtBias) {
                check_gate_finite(which.name(), data)?;
            }
        }
        Ok(uploads)
    }

    /// An optional tensor, which must be given exactly when the tape has room for it (`option` of
    /// [`crate::TapeOptions`]), checked; `None` when there is nothing to upload (an empty conv
    /// window with `kk = 1` included).
    fn optional<'a>(
        &self,
        which: Tensor,
        data: Option<&'a [f32]>,
        room: bool,
        option: &str,
    ) -> Result<Option<(Tensor, &'a [f32])>> {
        match (data, room) {
            (Some([]), true) if self.len(which) == 0 => Ok(None),
            (Some(data), true) => self.check_write(which, data).map(|()| Some((which, data))),
            (data, room) => presence(which.name(), data.is_some(), room, option).map(|()| None),
        }
    }

    /// Writes checked `uploads`, holding the tape's lock (`_progress`). Out of staging memory
    /// stops at the tensor it happened on, as [`Error::OutOfMemory`]: the pass is not run, and
    /// what the last pass computed stays readable.
    fn upload_all(&self, _progress: &Progress, uploads: &Uploads) -> Result<()> {
        uploads.iter().try_for_each(|&(which, data)| self.upload(which, data))
    }

    /// Uploads `inputs`, runs the forward and reads `out` and `hT` back.
    pub fn run_forward(&self, inputs: &Inputs) -> Result<Outputs> {
        let uploads = self.input_uploads(inputs)?;
        let mut progress = self.lock();
        self.upload_all(&progress, &uploads)?;
        self.run_pass(&mut progress, Pass::Forward)?;
        self.outputs_held(&mut progress)
    }

    /// Uploads the output gradients, runs the backward (after a forward on the same tape: before
    /// any, [`Error::Order`]) and reads every gradient back. On a tape with `conv_state`, the
    /// gradient of the final conv state is the one [`Tape::write_final_conv_state_grad`] last
    /// uploaded (zero if never).
    pub fn run_backward(&self, dout: &[f32], dht: Option<&[f32]>) -> Result<Gradients> {
        let uploads = self.output_grad_uploads(dout, dht)?;
        let mut progress = self.lock();
        progress.check_pass(Pass::Backward, true, &|| self.context().wait())?;
        self.upload_all(&progress, &uploads)?;
        self.run_pass(&mut progress, Pass::Backward)?;
        self.gradients_held(&mut progress)
    }

    /// Reads `out`, `hT` (and the final conv state) back, waiting for the queue; before any
    /// forward, [`Error::Order`].
    pub fn read_outputs(&self) -> Result<Outputs> {
        self.outputs_held(&mut self.lock())
    }

    /// Reads every gradient back, waiting for the queue; before any backward, [`Error::Order`].
    pub fn read_gradients(&self) -> Result<Gradients> {
        self.gradients_held(&mut self.lock())
    }

    fn outputs_held(&self, progress: &mut Progress) -> Result<Outputs> {
        Ok(Outputs {
            out: self.read_held(progress, Tensor::Out)?,
            ht: self.read_held(progress, Tensor::Ht)?,
            conv_state: self.read_optional(progress, Tensor::FinalConvState, self.options().conv_state)?,
        })
    }

    fn gradients_held(&self, progress: &mut Progress) -> Result<Gradients> {
        let options = self.options();
        Ok(Gradients {
            dqkv: self.read_held(progress, Tensor::Dqkv)?,
            dz: self.read_held(progress, Tensor::Dz)?,
            da: self.read_held(progress, Tensor::Da)?,
            db: self.read_held(progress, Tensor::Db)?,
            dh0: self.read_optional(progress, Tensor::Dh0, options.initial_state)?,
            da_log: self.read_held(progress, Tensor::DaLog)?,
            ddt_bias: self.read_held(progress, Tensor::DdtBias)?,
            dnorm: self.read_held(progress, Tensor::Dnorm)?,
            dconv: self.read_held(progress, Tensor::Dconv)?,
            dconv_state: self.read_optional(progress, Tensor::DconvState, options.conv_state)?,
        })
    }

    /// Reads `which` back when the tape has room for it (`room`).
    fn read_optional(&self, progress: &mut Progress, which: Tensor, room: bool) -> Result<Option<Vec<f32>>> {
        if room { self.read_held(progress, which).map(Some) } else { Ok(None) }
    }
}

/// An optional tensor `name` is given exactly when the tape has room for it (`option` of
/// [`crate::TapeOptions`]); otherwise [`Error::Presence`] says which way it is wrong.
pub(crate) fn presence(name: &'static str, given: bool, room: bool, option: &str) -> Result<()> {
    let reason = match (given, room) {
        (true, true) | (false, false) => return Ok(()),
        (true, false) => format!("given, but the tape was created without {option}"),
        (false, true) => format!("missing: the tape was created with {option}"),
    };
    Err(Error::Presence { name, reason })
}
