//! The decode check: a layer run a step at a time through a [`gdn_train::Decoder`] — sequences
//! joining and leaving a [`gdn_train::StatePool`], slots reused, each sequence at its own position
//! — against the one-shot forward of a tape over the same tokens, and against the f64 reference
//! on a sample of sequences; optionally with the device time of every step. Shared by the
//! `gdn-check decode` command and the device test suite.

use crate::OUTPUT_BAR;
use gdn_ref::compare::relative_error_f32;
use gdn_ref::sample::{Regime, Sampler};
use gdn_ref::{Batch, Layer, LayerConfig, LayerInputs};
use gdn_train::{
    Clock, Context, DecodeCapacity, DecodeInputs, Decoder, Params, SlotState, StatePool, Tape, TapeOptions,
};
use ndarray::{Axis, Slice};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Which sequences run, when they may join, and how the pool and the steps are sized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// Tokens of each sequence, each a positive multiple of `tokens`.
    pub lengths: Vec<usize>,
    /// The first step at which each sequence may join; it joins, in order, once a slot and a place
    /// in the step are free.
    pub joins: Vec<usize>,
    /// Whether each sequence starts from zero states (its slot cleared) rather than drawn ones.
    pub fresh: Vec<bool>,
    /// Slots in the pool.
    pub slots: usize,
    /// Most sequences per step.
    pub sequences: usize,
    /// New tokens per sequence per step.
    pub tokens: usize,
}

impl Schedule {
    /// `n` sequences of `steps · tokens` tokens from drawn states, all in every step, one slot each.
    pub fn lockstep(n: usize, steps: usize, tokens: usize) -> Self {
        Self {
            lengths: vec![steps * tokens; n],
            joins: vec![0; n],
            fresh: vec![false; n],
            slots: n,
            sequences: n,
            tokens,
        }
    }

    fn validate(&self) -> Result<(), String> {
        let n = self.lengths.len();
        if n == 0 || self.joins.len() != n || self.fresh.len() != n {
            return Err(format!("schedule: {n} lengths, {} joins, {} fresh flags", self.joins.len(), self.fresh.len()));
        }
        if self.tokens == 0 || self.lengths.iter().any(|&l| l == 0 || l % self.tokens != 0) {
            return Err(format!(
                "schedule: lengths {:?} must be positive multiples of T = {}",
                self.lengths, self.tokens
            ));
        }
        Ok(())
    }
}

/// The error of one tensor of the decoded run against one baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    /// `out`, `hT` or `conv_state`.
    pub tensor: &'static str,
    /// `tape` (the device's one-shot forward) or `gdn-ref` (the f64 reference, on the sample).
    pub against: &'static str,
    /// Relative RMS error.
    pub error: f64,
    /// The spec's f32 bar.
    pub bar: f64,
}

/// What a decoded run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The kernel the decoder ran (`decode_step`, or `decode_step_portable` on a device without
    /// subgroups).
    pub kernel: gdn_train::Kernel,
    /// Decode steps run (a step with no sequence in the pool is not counted).
    pub steps: usize,
    /// Every comparison.
    pub errors: Vec<DecodeError>,
    /// The device time of every step, when timed, and how it was measured.
    pub times: Option<(Vec<Duration>, Clock)>,
    /// When timed, a step's device time in a stream of steps recorded back to back in one compute
    /// pass (up to [`BACK_TO_BACK`] a pass: the median of up to [`BACK_TO_BACK_PASSES`] passes,
    /// divided by its steps), and the steps a pass held.
    pub back_to_back: Option<(Duration, usize)>,
}

impl Outcome {
    /// Whether every error is finite and within its bar.
    pub fn passes(&self) -> bool {
        self.errors.iter().all(|e| e.error.is_finite() && e.error <= e.bar)
    }

    /// A table: tensor, baseline, error, bar, verdict.
    pub fn table(&self) -> String {
        let mut out = format!("{:<11} {:<8} {:>10} {:>8}  verdict\n", "tensor", "against", "error", "bar");
        for e in &self.errors {
            let verdict = if e.error.is_finite() && e.error <= e.bar { "ok" } else { "FAIL" };
            out += &format!("{:<11} {:<8} {:>10.2e} {:>8.0e}  {verdict}\n", e.tensor, e.against, e.error, e.bar);
        }
        out
    }

    /// The median step time, when timed.
    pub fn median_time(&self) -> Option<Duration> {
        let (times, _) = self.times.as_ref()?;
        let mut sorted = times.clone();
        sorted.sort();
        sorted.get(sorted.len() / 2).copied()
    }
}

fn to_f32<'a>(values: impl IntoIterator<Item = &'a f64>) -> Vec<f32> {
    values.into_iter().map(|&v| v as f32).collect()
}

fn to_f64(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v)).collect()
}

/// Whether [`run`] times the decode step after checking it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Check only.
    Untimed,
    /// Check, then time a step of every sequence at once in steady state.
    SteadyState,
}

/// Runs `schedule` for `config` on inputs drawn from `seed`: through the decoder step by step
/// (the output poisoned with NaN before every step, unused slots holding NaN), through a tape in
/// one call, and through the reference on the first `reference_sequences` sequences; with
/// [`Timing::SteadyState`], then times a step of every sequence at once in steady state
/// ([`steady_times`]).
pub fn run(
    ctx: &Context,
    config: &LayerConfig,
    schedule: &Schedule,
    seed: u64,
    reference_sequences: usize,
    timing: Timing,
) -> Result<Outcome, String> {
    schedule.validate()?;
    let err = |e: gdn_train::Error| e.to_string();
    let cu: Vec<usize> = std::iter::once(0)
        .chain(schedule.lengths.iter().scan(0, |end, l| {
            *end += l;
            Some(*end)
        }))
        .collect();
    let batch = Batch::Packed { cu_seqlens: cu.clone() };
    let mut sampler = Sampler::new(seed);
    let params = sampler.params(config, Regime::Typical);
    let mut x = sampler.inputs(config, &batch, true, Regime::Typical);
    let mut window = sampler.conv_state(config, &batch);
    let h0 = x.h0.as_mut().expect("drawn with h0");
    for (n, _) in schedule.fresh.iter().enumerate().filter(|(_, fresh)| **fresh) {
        h0.index_axis_mut(Axis(0), n).fill(0.0);
        window.index_axis_mut(Axis(0), n).fill(0.0);
    }
    x.conv_state = Some(window);

    let (a_log, dt_bias, norm, conv) =
        (to_f32(&params.a_log), to_f32(&params.dt_bias), to_f32(&params.norm), to_f32(&params.conv));
    let device_params = Params { a_log: &a_log, dt_bias: &dt_bias, norm: &norm, conv: &conv };
    let (qkv, z, a, b) = (to_f32(&x.qkv), to_f32(&x.z), to_f32(&x.a), to_f32(&x.b));
    let h0 = to_f32(x.h0.as_ref().expect("drawn with h0"));
    let window = to_f32(x.conv_state.as_ref().expect("drawn"));

    // The one-shot forward on the device.
    let tc = *config;
    let options = TapeOptions { initial_state: true, conv_state: true, backward: false, ..TapeOptions::default() };
    let tape = Tape::new(ctx, tc, gdn_train::Batch::Packed { cu_seqlens: cu.clone() }, options).map_err(err)?;
    tape.write_params(&device_params).map_err(err)?;
    let inputs = gdn_train::Inputs { qkv: &qkv, z: &z, a: &a, b: &b, h0: Some(&h0), conv_state: Some(&window) };
    let whole = tape.run_forward(&inputs).map_err(err)?;
    drop(tape);

    // The decoded run.
    let (c, v, nv) = (config.channels(), config.value_width(), config.nv);
    let (state_len, window_len) = (nv * config.dk * config.dv, (config.kk - 1) * c);
    let pool = StatePool::new(ctx, tc, schedule.slots).map_err(err)?;
    let poison = SlotState { state: vec![f32::NAN; state_len], conv_state: vec![f32::NAN; window_len] };
    for slot in 0..schedule.slots {
        pool.write_slot(slot, &poison).map_err(err)?;
    }
    let capacity = DecodeCapacity { sequences: schedule.sequences, tokens: schedule.tokens };
    let decoder = Decoder::new(ctx, &pool, &device_params, capacity).map_err(err)?;
    let t = schedule.tokens;
    let mut out = vec![f32::NAN; qkv.len() / c * v];
    let mut finals: Vec<Option<SlotState>> = vec![None; schedule.lengths.len()];
    let mut free: Vec<u32> = (0..schedule.slots as u32).rev().collect();
    let mut pending: VecDeque<usize> = (0..schedule.lengths.len()).collect();
    let mut active: Vec<(usize, u32, usize)> = Vec::new(); // (sequence, slot, position)
    let (mut steps, mut decoded) = (0, 0);
    while !(pending.is_empty() && active.is_empty()) {
        while let Some(&n) = pending.front() {
            if schedule.joins[n] > steps || active.len() == schedule.sequences || free.is_empty() {
                break;
            }
            pending.pop_front();
            let slot = free.pop().expect("checked non-empty");
            if schedule.fresh[n] {
                pool.clear_slot(slot as usize).map_err(err)?;
            } else {
                let states = SlotState {
                    state: h0[n * state_len..][..state_len].to_vec(),
                    conv_state: window[n * window_len..][..window_len].to_vec(),
                };
                pool.write_slot(slot as usize, &states).map_err(err)?;
            }
            active.push((n, slot, 0));
        }
        if active.is_empty() {
            steps += 1;
            continue;
        }
        let turn = steps % active.len();
        active.rotate_left(turn);
        let first = |n: usize, pos: usize| cu[n] + pos;
        let rows: Vec<usize> = active.iter().flat_map(|&(n, _, pos)| (0..t).map(move |j| first(n, pos) + j)).collect();
        let gather = |src: &[f32], width: usize| -> Vec<f32> {
            rows.iter().flat_map(|&r| src[r * width..][..width].iter().copied()).collect()
        };
        let step_inputs = (gather(&qkv, c), gather(&z, v), gather(&a, nv), gather(&b, nv));
        let step_inputs = DecodeInputs { qkv: &step_inputs.0, z: &step_inputs.1, a: &step_inputs.2, b: &step_inputs.3 };
        let slots: Vec<u32> = active.iter().map(|&(_, slot, _)| slot).collect();
        decoder.fill_output_with_nan().map_err(err)?;
        decoder.write_inputs(&step_inputs, slots.len(), t).map_err(err)?;
        decoder.step(&slots, t).map_err(err)?;
        let got = decoder.read_out(rows.len()).map_err(err)?;
        for (row, values) in rows.iter().zip(got.chunks(v)) {
            out[row * v..][..v].copy_from_slice(values);
        }
        for entry in &mut active {
            entry.2 += t;
        }
        for &(n, slot, pos) in &active {
            if pos == schedule.lengths[n] {
                finals[n] = Some(pool.read_slot(slot as usize).map_err(err)?);
                free.push(slot);
            }
        }
        active.retain(|&(n, _, pos)| pos < schedule.lengths[n]);
        steps += 1;
        decoded += 1;
    }
    let finals: Vec<SlotState> = finals.into_iter().map(|f| f.expect("every sequence ran to its end")).collect();
    let ht: Vec<f32> = finals.iter().flat_map(|f| f.state.iter().copied()).collect();
    let conv_state: Vec<f32> = finals.iter().flat_map(|f| f.conv_state.iter().copied()).collect();

    let mut errors = Vec::new();
    let mut add = |tensor, against, got: &[f32], want: Vec<f64>| {
        let error = if got.len() == want.len() { relative_error_f32(&to_f64(got), &want) } else { f64::INFINITY };
        errors.push(DecodeError { tensor, against, error, bar: OUTPUT_BAR });
    };
    let whole_window = whole.conv_state.as_deref().unwrap_or_default();
    add("out", "tape", &out, to_f64(&whole.out));
    add("hT", "tape", &ht, to_f64(&whole.ht));
    add("conv_state", "tape", &conv_state, to_f64(whole_window));

    // The reference on the first sequences: a prefix of the packed batch.
    let k = reference_sequences.clamp(1, schedule.lengths.len());
    let (tokens, sequences) = (Slice::from(..cu[k]), Slice::from(..k));
    let sample = LayerInputs {
        qkv: x.qkv.slice_axis(Axis(1), tokens).to_owned(),
        z: x.z.slice_axis(Axis(1), tokens).to_owned(),
        a: x.a.slice_axis(Axis(1), tokens).to_owned(),
        b: x.b.slice_axis(Axis(1), tokens).to_owned(),
        h0: x.h0.as_ref().map(|h| h.slice_axis(Axis(0), sequences).to_owned()),
        conv_state: x.conv_state.as_ref().map(|w| w.slice_axis(Axis(0), sequences).to_owned()),
        cu_seqlens: Some(cu[..=k].to_vec()),
    };
    let want = Layer::new(*config, params).and_then(|l| l.forward(&sample)).map_err(|e| e.to_string())?;
    add("out", "gdn-ref", &out[..cu[k] * v], want.out.iter().copied().collect());
    add("hT", "gdn-ref", &ht[..k * state_len], want.ht.iter().copied().collect());
    add("conv_state", "gdn-ref", &conv_state[..k * window_len], want.conv_state.iter().copied().collect());
    let (times, back_to_back) = match timing {
        Timing::SteadyState => {
            let (times, clock, back_to_back) = steady_times(ctx, &decoder, schedule).map_err(err)?;
            (Some((times, clock)), Some(back_to_back))
        }
        Timing::Untimed => (None, None),
    };
    Ok(Outcome { kernel: decoder.kernel(), steps: decoded, errors, times, back_to_back })
}

/// What [`steady_times`] measures: each single step's time and its clock, and a step's share of a
/// back-to-back pass with the steps that pass held.
type SteadyTimes = (Vec<Duration>, Clock, (Duration, usize));

/// Steps timed after the check, with every sequence at once.
const TIMED_STEPS: usize = 200;
/// The most steps a back-to-back timing records in one compute pass (fewer where a pass would
/// take longer than a twentieth of a second: a software adapter's).
pub const BACK_TO_BACK: usize = 100;
/// The most back-to-back passes timed (fewer past half a second).
pub const BACK_TO_BACK_PASSES: usize = 20;

/// The device time of a step of `schedule.sequences` sequences in steady state, on the inputs left
/// in the decoder (the pool's states change; the check is done by then): back-to-back steps for
/// half a second first, because an idle GPU runs its first dispatches at low clocks (a step timed
/// as the check ran, between host round trips, ran several times slower than in steady state), then [`TIMED_STEPS`] steps timed one at a time (each a pass of its own between
/// host round trips: a step's latency), then [`BACK_TO_BACK_PASSES`] passes of [`BACK_TO_BACK`]
/// steps (a step's share of a stream of them, as an engine records many layers' steps).
fn steady_times(ctx: &Context, decoder: &Decoder, schedule: &Schedule) -> Result<SteadyTimes, gdn_train::Error> {
    let slots: Vec<u32> = (0..schedule.sequences.min(schedule.slots) as u32).collect();
    let warm_up = Instant::now();
    while warm_up.elapsed() < Duration::from_millis(500) {
        for _ in 0..20 {
            decoder.step(&slots, schedule.tokens)?;
        }
        ctx.wait()?;
    }
    let mut times = Vec::with_capacity(TIMED_STEPS);
    let mut clock = Clock::WallClock;
    for _ in 0..TIMED_STEPS {
        let (time, how) = decoder.time_step(&slots, schedule.tokens)?;
        times.push(time);
        clock = how;
    }
    let mut sorted = times.clone();
    sorted.sort();
    let single = sorted[sorted.len() / 2].max(Duration::from_nanos(1));
    let steps = (Duration::from_millis(50).as_nanos() / single.as_nanos()).clamp(1, BACK_TO_BACK as u128) as usize;
    let (started, mut passes) = (Instant::now(), Vec::new());
    while passes.len() < BACK_TO_BACK_PASSES && (passes.is_empty() || started.elapsed() < Duration::from_millis(500)) {
        passes.push(decoder.time_steps(&slots, schedule.tokens, steps)?.0);
    }
    passes.sort();
    Ok((times, clock, (passes[passes.len() / 2] / steps as u32, steps)))
}
