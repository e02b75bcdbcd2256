//! The bench summary as the report reads it: JSON lines written by the gdn-train bench (`run`,
//! `tape`, `skipped`, `time`, `decode` records) and by `bench/side_by_side.sh` from fla's output (`fla`,
//! `fla_layer` records).
//! Unknown kinds (such as a `note`) are kept as notes; a malformed line is an error naming it.

use serde_json::Value;

/// A batch shape of one family's run.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// The family that ran it.
    pub family: String,
    /// The shape's name (`s1`, `tiny`, …).
    pub name: String,
    /// Sequences.
    pub b: u64,
    /// Tokens per sequence.
    pub t: u64,
    /// Key heads.
    pub nk: u64,
    /// Value heads.
    pub nv: u64,
    /// Key head dim.
    pub dk: u64,
    /// Value head dim (the key head dim where a record has none).
    pub dv: u64,
}

impl Shape {
    /// Tokens per step.
    pub fn tokens(&self) -> u64 {
        self.b * self.t
    }
}

/// One of our benches.
#[derive(Debug, Clone, PartialEq)]
pub struct Time {
    /// Where it ran.
    pub shape: Shape,
    /// `layer`, `fwd` or `bwd`.
    pub part: String,
    /// `forward`, `backward`, `step`, or a kernel's name.
    pub name: String,
    /// `gpu-timestamps` or `wall-clock`.
    pub clock: String,
    /// Dispatches it covers.
    pub dispatches: u64,
    /// Median, ms.
    pub median_ms: f64,
}

/// One decode-step bench: one new token for each of `sequences` sequences.
#[derive(Debug, Clone, PartialEq)]
pub struct Decode {
    /// The layer (`qwen3-next`).
    pub layer: String,
    /// Sequences in the step.
    pub sequences: u64,
    /// Their (sequence, value head) states.
    pub states: u64,
    /// The bytes those states hold, each read and written once a step.
    pub state_bytes: u64,
    /// `gpu-timestamps` or `wall-clock`.
    pub clock: String,
    /// Median of a step, ms.
    pub median_ms: f64,
}

/// One fla figure at one shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Fla {
    /// `fwd` or `bwd` (forward + backward).
    pub mode: String,
    /// `bfloat16` or `float32`.
    pub dtype: String,
    /// Sequences, tokens per sequence, key heads, value heads.
    pub b: u64,
    /// Tokens per sequence.
    pub t: u64,
    /// Key heads.
    pub h: u64,
    /// Value heads.
    pub hv: u64,
    /// GPU time of one CUDA graph replay (median), ms.
    pub graph_ms: f64,
}

/// Everything a summary holds.
#[derive(Debug, Default)]
pub struct Summary {
    /// The adapter of our run.
    pub adapter: Option<String>,
    /// Our benches, in file order.
    pub times: Vec<Time>,
    /// Each tape's device bytes.
    pub tapes: Vec<(Shape, u64)>,
    /// Shapes a family refused, and why.
    pub skipped: Vec<(Shape, String)>,
    /// The decode step's benches.
    pub decodes: Vec<Decode>,
    /// fla's graph figures (its core kernel).
    pub fla: Vec<Fla>,
    /// fla's whole layer (`fla_layer` records: conv, norms, gates, rule, gated RMSNorm), graph figures.
    pub fla_layers: Vec<Fla>,
    /// Records of other kinds, as text.
    pub notes: Vec<String>,
}

fn field<'a>(record: &'a Value, key: &str) -> Result<&'a Value, String> {
    record.get(key).ok_or_else(|| format!("no field {key:?}"))
}

fn text(record: &Value, key: &str) -> Result<String, String> {
    field(record, key)?.as_str().map(str::to_string).ok_or_else(|| format!("field {key:?} is not a string"))
}

fn int(record: &Value, key: &str) -> Result<u64, String> {
    field(record, key)?.as_u64().ok_or_else(|| format!("field {key:?} is not a whole number"))
}

fn float(record: &Value, key: &str) -> Result<f64, String> {
    field(record, key)?.as_f64().ok_or_else(|| format!("field {key:?} is not a number"))
}

fn shape(record: &Value) -> Result<Shape, String> {
    Ok(Shape {
        family: text(record, "family")?,
        name: text(record, "shape")?,
        b: int(record, "b")?,
        t: int(record, "t")?,
        nk: int(record, "nk")?,
        nv: int(record, "nv")?,
        dk: int(record, "dk")?,
        dv: record.get("dv").and_then(Value::as_u64).map_or_else(|| int(record, "dk"), Ok)?,
    })
}

impl Summary {
    /// Parses JSON lines; blank lines are skipped. fla's eager figures and graph failures carry
    /// no `graph_ms` and are left out.
    pub fn parse(lines: &str) -> Result<Self, String> {
        let mut summary = Summary::default();
        for (n, line) in lines.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let record: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
            summary.add(&record).map_err(|e| format!("line {}: {e}", n + 1))?;
        }
        Ok(summary)
    }

    fn add(&mut self, r: &Value) -> Result<(), String> {
        match r.get("kind").and_then(Value::as_str) {
            Some("run") => self.adapter = Some(text(r, "adapter")?),
            Some("tape") => self.tapes.push((shape(r)?, int(r, "device_bytes")?)),
            Some("skipped") => self.skipped.push((shape(r)?, text(r, "reason")?)),
            Some("time") => self.times.push(Time {
                shape: shape(r)?,
                part: text(r, "part")?,
                name: text(r, "name")?,
                clock: text(r, "clock")?,
                dispatches: int(r, "dispatches")?,
                median_ms: float(r, "median_ms")?,
            }),
            Some("decode") => self.decodes.push(Decode {
                layer: text(r, "layer")?,
                sequences: int(r, "sequences")?,
                states: int(r, "states")?,
                state_bytes: int(r, "state_bytes")?,
                clock: text(r, "clock")?,
                median_ms: float(r, "median_ms")?,
            }),
            Some("fla") if r.get("graph_ms").is_some_and(Value::is_number) => self.fla.push(Fla {
                mode: text(r, "mode")?,
                dtype: text(r, "dtype")?,
                b: int(r, "B")?,
                t: int(r, "T")?,
                h: int(r, "H")?,
                hv: int(r, "HV")?,
                graph_ms: float(r, "graph_ms")?,
            }),
            Some("fla") => {}
            Some("fla_layer") if r.get("graph_ms").is_some_and(Value::is_number) => self.fla_layers.push(Fla {
                mode: text(r, "mode")?,
                dtype: text(r, "dtype")?,
                b: int(r, "B")?,
                t: int(r, "T")?,
                h: int(r, "NK")?,
                hv: int(r, "NV")?,
                graph_ms: float(r, "graph_ms")?,
            }),
            Some("fla_layer" | "fla_decode") => {}
            _ => self.notes.push(r.get("text").and_then(Value::as_str).map_or_else(|| r.to_string(), str::to_string)),
        }
        Ok(())
    }

    /// Every shape each family ran or refused, in file order, without repeats.
    pub fn shapes(&self) -> Vec<Shape> {
        let mut shapes: Vec<Shape> = Vec::new();
        let all = self.tapes.iter().map(|(s, _)| s).chain(self.skipped.iter().map(|(s, _)| s));
        for s in all.chain(self.times.iter().map(|t| &t.shape)) {
            if !shapes.contains(s) {
                shapes.push(s.clone());
            }
        }
        shapes
    }

    /// Our median of `part/name` at `shape`.
    pub fn ours(&self, shape: &Shape, part: &str, name: &str) -> Option<&Time> {
        self.times.iter().find(|t| &t.shape == shape && t.part == part && t.name == name)
    }

    /// fla's graph time at `shape`'s batch and heads (fla's heads are 128 wide).
    pub fn fla_at(&self, shape: &Shape, mode: &str, dtype: &str) -> Option<f64> {
        (shape.dk == 128)
            .then(|| {
                self.fla.iter().find(|f| {
                    f.mode == mode
                        && f.dtype == dtype
                        && (f.b, f.t, f.h, f.hv) == (shape.b, shape.t, shape.nk, shape.nv)
                })
            })
            .flatten()
            .map(|f| f.graph_ms)
    }
}
