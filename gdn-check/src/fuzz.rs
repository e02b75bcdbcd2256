//! Shape fuzzing: proptest strategies over every dimension a case has, and a campaign that runs
//! them on the device, tracks the worst error per tensor, and shrinks any failure to a small case
//! whose seed is persisted in `tests/fuzz.proptest-regressions`, which the test suite replays.

use crate::report::show_bar;
use crate::{Case, Report, Tensor};
use gdn_ref::sample::Regime;
use gdn_ref::{Batch, LayerConfig};
use gdn_train::{Context, Family, Precision, Storage};
use proptest::prelude::*;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use std::cell::RefCell;
use std::collections::BTreeMap;

/// The regression file both the test suite and `gdn-check fuzz` read and extend.
pub const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fuzz.proptest-regressions");

/// The ranges a campaign draws from.
#[derive(Debug, Clone)]
pub struct Space {
    /// Head dims drawn for `dk` and `dv` (each a generated size).
    pub dims: Vec<usize>,
    /// Largest `B` of a fixed batch, and number of packed sequences.
    pub max_sequences: usize,
    /// Longest sequence.
    pub max_len: usize,
    /// Most key heads.
    pub max_nk: usize,
    /// Most value heads per key head.
    pub max_rep: usize,
    /// Longest checkpoint interval of the recurrent family.
    pub max_interval: usize,
    /// The families drawn from (their knobs are drawn too).
    pub families: Vec<Family>,
    /// The precision of the chunked family's products (the recurrent family is always f32).
    pub precision: Precision,
    /// How every case stores its activations and their gradients.
    pub storage: Storage,
}

/// Chunk sizes a campaign draws (those its precision accepts: multiples of [`Precision::min_chunk`]):
/// small ones put many chunk boundaries in short sequences, and the default 64.
pub const CHUNKS: [usize; 9] = [1, 2, 3, 4, 5, 8, 16, 32, 64];

impl Space {
    /// Small enough for a software rasteriser on two cores: the campaign `cargo xtask verify` runs.
    pub fn quick() -> Self {
        Self {
            dims: vec![8, 16, 24, 32, 48],
            max_sequences: 3,
            max_len: 72,
            max_nk: 2,
            max_rep: 4,
            max_interval: 6,
            families: Family::ALL.to_vec(),
            precision: Precision::F32,
            storage: Storage::F32,
        }
    }

    /// Every generated head size up to 128 and longer sequences, for a GPU.
    pub fn wide() -> Self {
        Self {
            dims: vec![8, 16, 24, 32, 48, 64, 80, 96, 128],
            max_sequences: 4,
            max_len: 80,
            max_nk: 3,
            max_rep: 4,
            max_interval: 40,
            families: Family::ALL.to_vec(),
            precision: Precision::F32,
            storage: Storage::F32,
        }
    }

    /// The strategy of cases.
    pub fn cases(&self) -> impl Strategy<Value = Case> + use<> {
        let dims = proptest::sample::select(self.dims.clone());
        let heads = (1..=self.max_nk, 1..=self.max_rep);
        let len = 1..=self.max_len;
        let fixed = (1..=self.max_sequences, len.clone()).prop_map(|(b, t)| Batch::Fixed { b, t });
        let packed = proptest::collection::vec(len, 1..=self.max_sequences.max(2)).prop_map(|lengths| {
            let mut cu_seqlens = vec![0];
            for l in lengths {
                cu_seqlens.push(cu_seqlens.last().expect("non-empty") + l);
            }
            Batch::Packed { cu_seqlens }
        });
        let regime = prop_oneof![
            4 => Just(Regime::Typical),
            1 => Just(Regime::DecayToOne),
            1 => Just(Regime::DecayToZero),
            1 => Just(Regime::WriteNothing),
            1 => Just(Regime::WriteAll),
        ];
        let (max_interval, precision, storage) = (self.max_interval, self.precision, self.storage);
        let chunks: Vec<usize> =
            CHUNKS.into_iter().filter(|&c| c.is_multiple_of(precision.min_chunk() as usize)).collect();
        let family =
            (proptest::sample::select(self.families.clone()), 1..=max_interval, proptest::sample::select(chunks))
                .prop_map(|(family, checkpoint_interval, chunk)| match family {
                    Family::Recurrent { .. } => Family::Recurrent { checkpoint_interval },
                    Family::Chunked { .. } => Family::Chunked { chunk },
                    // A family added to gdn-wgsl is drawn with its default knob.
                    other => other,
                });
        (
            (dims.clone(), dims, heads, 1..=4usize),
            prop_oneof![fixed, packed],
            (any::<bool>(), any::<bool>(), regime),
            (family, any::<u64>()),
        )
            .prop_map(move |((dk, dv, (nk, rep), kk), batch, (h0, dht, regime), (family, seed))| Case {
                config: LayerConfig::new(nk, nk * rep, dk, dv, kk).expect("strategy draws valid sizes"),
                batch,
                h0,
                dht,
                regime,
                family,
                precision: if family.computes_in(precision) { precision } else { Precision::F32 },
                storage,
                seed,
            })
    }
}

/// What a campaign found.
#[derive(Debug, Clone)]
pub struct Campaign {
    /// Cases run, shrinking steps included.
    pub cases_run: usize,
    /// The worst error per tensor and whether it was judged (`true`: against a bar; `false`: only
    /// reported, see [`crate::bar`]), with the factor its sums' cancellation widened that case's
    /// bar by ([`crate::TensorError::cancellation`]) and the case that produced it.
    pub worst: BTreeMap<(Tensor, bool), (f64, f64, Case)>,
    /// Why the campaign failed, if it did.
    pub failure: Option<Failure>,
}

/// A failed campaign.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The minimal failing case after shrinking (none when the campaign was aborted).
    pub case: Option<Case>,
    /// The failing case's report, or why the campaign was aborted.
    pub reason: String,
}

impl Campaign {
    /// A table: tensor, worst error, bar (and the factor that case's cancelling sums widened it
    /// by), the case.
    pub fn table(&self) -> String {
        let mut out = format!("{:<9} {:>10} {:>16}  case\n", "tensor", "worst", "bar");
        for ((tensor, _), (error, widened, case)) in &self.worst {
            let bar = show_bar(crate::bar(*tensor, case.precision, case.regime, case.storage));
            let bar = if *widened > 1.0 { format!("{bar} × {widened:.1}") } else { bar };
            out += &format!("{:<9} {:>10.2e} {:>16}  {case:?}\n", tensor.name(), error, bar);
        }
        out
    }
}

/// Runs `cases` cases drawn from `space` on `jobs` threads sharing the device (and its pipelines),
/// after replaying the persisted regressions; `progress` is called after every case, from the
/// thread that ran it. Job `j` draws its share of the cases from its own RNG, seeded by
/// [`job_seed`]: one job draws exactly the cases of `seed`, and a campaign's cases depend only on
/// `seed`, `cases` and `jobs`, never on timing.
pub fn campaign(
    ctx: &Context,
    space: &Space,
    cases: u32,
    seed: u64,
    jobs: u32,
    progress: impl Fn(&Case, &Report) + Sync,
) -> Campaign {
    let jobs = jobs.clamp(1, cases.max(1));
    let parts: Vec<Campaign> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..jobs)
            .map(|j| {
                let share = cases / jobs + u32::from(j < cases % jobs);
                let progress = &progress;
                scope.spawn(move || campaign_job(ctx, space, share, job_seed(seed, j), progress))
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(j, handle)| {
                handle.join().unwrap_or_else(|_| Campaign {
                    cases_run: 0,
                    worst: BTreeMap::new(),
                    failure: Some(Failure { case: None, reason: format!("campaign job {j} panicked") }),
                })
            })
            .collect()
    });
    let mut merged = Campaign { cases_run: 0, worst: BTreeMap::new(), failure: None };
    for part in parts {
        merged.cases_run += part.cases_run;
        for (key, (error, widened, case)) in part.worst {
            merged.note(key, error, widened, case);
        }
        merged.failure = merged.failure.or(part.failure);
    }
    merged
}

/// The seed of job `job` of a campaign seeded by `seed`: `seed` itself for job 0.
pub fn job_seed(seed: u64, job: u32) -> u64 {
    seed ^ (u64::from(job) << 32)
}

impl Campaign {
    /// Keeps `error` of `key` (its bar widened by `widened`) if it is the worst so far (a NaN
    /// always is).
    fn note(&mut self, key: (Tensor, bool), error: f64, widened: f64, case: Case) {
        if self.worst.get(&key).is_none_or(|(w, _, _)| !w.is_nan() && (error.is_nan() || error > *w)) {
            self.worst.insert(key, (error, widened, case));
        }
    }
}

/// One job of [`campaign`]: `cases` cases on the calling thread, shrinking the first failure.
fn campaign_job(ctx: &Context, space: &Space, cases: u32, seed: u64, progress: &impl Fn(&Case, &Report)) -> Campaign {
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS))),
        max_shrink_iters: 256,
        ..Config::default()
    };
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes));
    let found = RefCell::new(Campaign { cases_run: 0, worst: BTreeMap::new(), failure: None });
    let result = runner.run(&space.cases(), |case| {
        let report = case.run(ctx).map_err(|e| TestCaseError::fail(e.to_string()))?;
        progress(&case, &report);
        let mut found = found.borrow_mut();
        found.cases_run += 1;
        for e in &report.errors {
            found.note((e.tensor, e.bar.is_some()), e.error, e.cancellation, case.clone());
        }
        if report.passes() { Ok(()) } else { Err(TestCaseError::fail(report.table())) }
    });
    let mut found = found.into_inner();
    found.failure = match result {
        Ok(()) => None,
        Err(TestError::Fail(reason, case)) => Some(Failure { case: Some(case), reason: reason.to_string() }),
        Err(TestError::Abort(reason)) => Some(Failure { case: None, reason: format!("campaign aborted: {reason}") }),
    };
    found
}
