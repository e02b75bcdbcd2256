//! The curated record of measured figures: `bench/baselines/<device>.jsonl`, one JSON object a
//! line, one line per (run, shape, family, precision, storage). `cargo xtask bench-report append`
//! writes them from a side-by-side run's output; `BENCHMARKS.md` is generated from them.

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// A standard shape of the side-by-side (dk = dv = 128, kk = 4 throughout).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// `S1` … `S4` or `decode`.
    pub name: String,
    /// Sequences.
    pub batch: u64,
    /// Tokens per sequence.
    pub seq: u64,
    /// Key heads.
    pub nk: u64,
    /// Value heads.
    pub nv: u64,
    /// Key head dim.
    pub dk: u64,
    /// Value head dim.
    pub dv: u64,
}

/// The standard shapes: name, batch, tokens a sequence, key heads, value heads, and what each stands
/// for. `decode` is any batch of one token a sequence in Qwen3-Next's heads.
pub const SHAPES: [(&str, u64, u64, u64, u64, &str); 5] = [
    ("S1", 8, 1024, 16, 32, "Qwen3-Next's heads, a training batch of 8 sequences"),
    ("S2", 2, 4096, 16, 32, "the same tokens in 2 long sequences"),
    ("S3", 1, 8192, 16, 64, "one long sequence, twice the value heads"),
    ("S4", 1, 128, 2, 4, "few heads and tokens: latency, not throughput"),
    ("decode", 0, 1, 16, 32, "one new token for each of B sequences (B = 8 or 64)"),
];

impl Shape {
    /// The standard shape these dimensions are, if any.
    pub fn classify(batch: u64, seq: u64, nk: u64, nv: u64, dk: u64, dv: u64) -> Option<Self> {
        if (dk, dv) != (128, 128) {
            return None;
        }
        let (name, ..) =
            SHAPES.iter().find(|(_, b, t, k, v, _)| (*b == batch || *b == 0) && (*t, *k, *v) == (seq, nk, nv))?;
        Some(Shape { name: (*name).into(), batch, seq, nk, nv, dk, dv })
    }

    fn to_json(&self) -> Value {
        json!({"name": self.name, "batch": self.batch, "seq": self.seq, "nk": self.nk, "nv": self.nv,
               "dk": self.dk, "dv": self.dv})
    }

    fn from_json(v: &Value) -> Result<Self, String> {
        Ok(Shape {
            name: text(v, "name")?,
            batch: int(v, "batch")?,
            seq: int(v, "seq")?,
            nk: int(v, "nk")?,
            nv: int(v, "nv")?,
            dk: int(v, "dk")?,
            dv: int(v, "dv")?,
        })
    }
}

/// Another implementation's figure measured in the same run, at the same shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    /// `fla core bf16`, `fla core f32`, `fla layer bf16`, `fla decode`.
    pub name: String,
    /// Forward (or the decode step), ms.
    pub forward_ms: Option<f64>,
    /// Forward + backward, ms.
    pub step_ms: Option<f64>,
    /// The file it was read from.
    pub source: String,
}

/// One baseline row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The commit whose build ran.
    pub commit: String,
    /// The day it ran, `YYYY-MM-DD`.
    pub date: String,
    /// The adapter, as wgpu names it.
    pub device: String,
    /// Where it ran.
    pub shape: Shape,
    /// `recurrent`, `chunked`, or `decode` (the decode step, one dispatch a step).
    pub family: String,
    /// `f32` or `tensor-core`.
    pub precision: String,
    /// `f32`, `bf16` or `f16`: how the layer's inputs and outputs are stored.
    pub storage: String,
    /// Forward (the decode step: one step of a stream), ms of GPU time.
    pub forward_ms: Option<f64>,
    /// Forward + backward, ms of GPU time.
    pub step_ms: Option<f64>,
    /// Per kernel, each alone in a pass: (pass, kernel, ms).
    pub kernels: Vec<(String, String, f64)>,
    /// The anchors measured in the same run.
    pub anchors: Vec<Anchor>,
    /// How many runs the figures are the median of (1: one run's median).
    pub runs: u64,
    /// Where the raw output was (a path at the commit that recorded it, or outside the tree).
    pub source: String,
    /// What else to know (an override, a cap), or empty.
    pub note: String,
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("no field {key:?}"))
}

fn text(v: &Value, key: &str) -> Result<String, String> {
    field(v, key)?.as_str().map(str::to_string).ok_or_else(|| format!("field {key:?} is not a string"))
}

fn int(v: &Value, key: &str) -> Result<u64, String> {
    field(v, key)?.as_u64().ok_or_else(|| format!("field {key:?} is not a whole number"))
}

fn opt_ms(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn put_ms(map: &mut Map<String, Value>, key: &str, ms: Option<f64>) {
    if let Some(ms) = ms {
        map.insert(key.into(), json!(ms));
    }
}

impl Row {
    /// The row as one JSON line (keys sorted).
    pub fn to_line(&self) -> String {
        let mut map = Map::new();
        map.insert("commit".into(), json!(self.commit));
        map.insert("date".into(), json!(self.date));
        map.insert("device".into(), json!(self.device));
        map.insert("shape".into(), self.shape.to_json());
        map.insert("family".into(), json!(self.family));
        map.insert("precision".into(), json!(self.precision));
        map.insert("storage".into(), json!(self.storage));
        put_ms(&mut map, "forward_ms", self.forward_ms);
        put_ms(&mut map, "step_ms", self.step_ms);
        if !self.kernels.is_empty() {
            map.insert(
                "kernels".into(),
                json!(self.kernels.iter().map(|(p, k, ms)| json!([p, k, ms])).collect::<Vec<_>>()),
            );
        }
        let anchors: Vec<Value> = self
            .anchors
            .iter()
            .map(|a| {
                let mut m = Map::new();
                m.insert("name".into(), json!(a.name));
                put_ms(&mut m, "forward_ms", a.forward_ms);
                put_ms(&mut m, "step_ms", a.step_ms);
                m.insert("source".into(), json!(a.source));
                Value::Object(m)
            })
            .collect();
        map.insert("anchors".into(), Value::Array(anchors));
        map.insert("runs".into(), json!(self.runs));
        map.insert("source".into(), json!(self.source));
        if !self.note.is_empty() {
            map.insert("note".into(), json!(self.note));
        }
        Value::Object(map).to_string()
    }

    /// Reads one line.
    pub fn from_line(line: &str) -> Result<Self, String> {
        let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let kernels = match v.get("kernels") {
            None => Vec::new(),
            Some(k) => k
                .as_array()
                .ok_or("field \"kernels\" is not a list")?
                .iter()
                .map(|e| match e.as_array().map(Vec::as_slice) {
                    Some([p, k, ms]) => Ok((
                        p.as_str().unwrap_or_default().to_string(),
                        k.as_str().unwrap_or_default().to_string(),
                        ms.as_f64().ok_or("a kernel's ms is not a number")?,
                    )),
                    _ => Err("a kernel is not [pass, name, ms]".to_string()),
                })
                .collect::<Result<_, _>>()?,
        };
        let anchors = field(&v, "anchors")?
            .as_array()
            .ok_or("field \"anchors\" is not a list")?
            .iter()
            .map(|a| {
                Ok(Anchor {
                    name: text(a, "name")?,
                    forward_ms: opt_ms(a, "forward_ms"),
                    step_ms: opt_ms(a, "step_ms"),
                    source: text(a, "source")?,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Row {
            commit: text(&v, "commit")?,
            date: text(&v, "date")?,
            device: text(&v, "device")?,
            shape: Shape::from_json(field(&v, "shape")?)?,
            family: text(&v, "family")?,
            precision: text(&v, "precision")?,
            storage: text(&v, "storage")?,
            forward_ms: opt_ms(&v, "forward_ms"),
            step_ms: opt_ms(&v, "step_ms"),
            kernels,
            anchors,
            runs: int(&v, "runs")?,
            source: text(&v, "source")?,
            note: v.get("note").and_then(Value::as_str).unwrap_or_default().to_string(),
        })
    }

    /// What the row measures, apart from when and where: rows with equal keys are one series.
    pub fn key(&self) -> (String, u64, String, String, String) {
        (self.shape.name.clone(), self.shape.batch, self.family.clone(), self.precision.clone(), self.storage.clone())
    }
}

/// The file a device's rows go to: `h100`, `h200`, or the adapter's name in lower case.
pub fn device_slug(device: &str) -> String {
    let upper = device.to_uppercase();
    for gpu in ["H100", "H200", "B200", "A100"] {
        if upper.contains(gpu) {
            return gpu.to_lowercase();
        }
    }
    let slug: String = device.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    slug.split('-').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("-")
}

/// The baselines directory of the workspace.
pub fn dir(root: &Path) -> PathBuf {
    root.join("bench").join("baselines")
}

/// Every baseline file (`<device>.jsonl`, not `history.jsonl`), by name.
pub fn files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = dir(root);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.ends_with("history.jsonl"))
        .collect();
    files.sort();
    Ok(files)
}

/// Reads every row of `path`.
pub fn read(path: &Path) -> Result<Vec<Row>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, l)| Row::from_line(l).map_err(|e| format!("{}:{}: {e}", path.display(), n + 1)))
        .collect()
}

/// One entry of the history (`bench/baselines/history.jsonl`): a change that moved a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// The commit (or commits) of the change.
    pub commit: String,
    /// `h100` or `h200`.
    pub device: String,
    /// What was timed: `S4 fwd+bwd, recurrent`.
    pub figure: String,
    /// Before, ms.
    pub before_ms: f64,
    /// After, ms.
    pub after_ms: f64,
    /// What changed.
    pub what: String,
    /// The diary section (in git history) it is from.
    pub source: String,
}

/// Reads the history.
pub fn history(root: &Path) -> Result<Vec<Change>, String> {
    let path = dir(root).join("history.jsonl");
    let lines = std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in lines.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let parse = || -> Result<Change, String> {
            let v: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
            let ms = |k: &str| field(&v, k)?.as_f64().ok_or_else(|| format!("field {k:?} is not a number"));
            Ok(Change {
                date: text(&v, "date")?,
                commit: text(&v, "commit")?,
                device: text(&v, "device")?,
                figure: text(&v, "figure")?,
                before_ms: ms("before_ms")?,
                after_ms: ms("after_ms")?,
                what: text(&v, "what")?,
                source: text(&v, "source")?,
            })
        };
        out.push(parse().map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_classified_and_rows_round_trip() {
        assert_eq!(Shape::classify(8, 1024, 16, 32, 128, 128).unwrap().name, "S1");
        assert_eq!(Shape::classify(64, 1, 16, 32, 128, 128).unwrap().name, "decode");
        assert!(Shape::classify(8, 1024, 16, 32, 64, 64).is_none());
        assert!(Shape::classify(16, 128, 16, 32, 128, 128).is_none());
        let row = Row {
            commit: "abc1234".into(),
            date: "2026-01-01".into(),
            device: "SAMPLE adapter".into(),
            shape: Shape::classify(1, 128, 2, 4, 128, 128).unwrap(),
            family: "recurrent".into(),
            precision: "f32".into(),
            storage: "f32".into(),
            forward_ms: Some(0.5),
            step_ms: None,
            kernels: vec![("fwd".into(), "k".into(), 0.25)],
            anchors: vec![Anchor {
                name: "fla core bf16".into(),
                forward_ms: Some(0.1),
                step_ms: None,
                source: "x".into(),
            }],
            runs: 1,
            source: "s".into(),
            note: String::new(),
        };
        assert_eq!(Row::from_line(&row.to_line()).unwrap(), row);
        assert_eq!(device_slug("NVIDIA H100 80GB HBM3"), "h100");
        assert_eq!(device_slug("llvmpipe (LLVM 17, 256 bits)"), "llvmpipe-llvm-17-256-bits");
    }
}
