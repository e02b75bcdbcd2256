//! A side-by-side run's output read into baseline rows: the bench parts' `bench.jsonl` (our
//! criterion summary and fla's records, see [`super::summary`]) and the logs the other parts write
//! (`gdn-check run` and `gdn-check decode` output, and fla's `FLA …`, `FLALAYER …`, `FLA_DECODE …`
//! lines). Figures of one shape measured several times in one run become one row holding the
//! median of each; fla's figures at the same shape in the same run are the row's anchors.

use super::baseline::{Anchor, Row, Shape};
use super::summary::Summary;

/// What a run's output does not say.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    /// The commit whose build ran.
    pub commit: String,
    /// The day it ran.
    pub date: String,
    /// Where the raw output is.
    pub source: String,
    /// A note for every row.
    pub note: String,
}

/// One of our figures before grouping.
#[derive(Debug, Clone)]
struct Measured {
    device: String,
    shape: Shape,
    family: String,
    precision: String,
    storage: String,
    forward_ms: Option<f64>,
    step_ms: Option<f64>,
    kernels: Vec<(String, String, f64)>,
}

/// One anchor figure before grouping: (name, batch, tokens, key heads, value heads), forward or
/// step, ms, file.
#[derive(Debug, Clone)]
struct Theirs {
    name: String,
    dims: (u64, u64, u64, u64),
    step: bool,
    ms: f64,
    file: String,
}

/// The lower median (a measured value, never an average of two).
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len().saturating_sub(1) / 2).copied()
}

/// µs as ms, the nearest double to the decimal figure (12.48 µs is 0.01248 ms, not 0.012480000000000001).
fn us_to_ms(us: f64) -> f64 {
    (us * 1e5).round() / 1e8
}

/// A criterion median to the precision the logs print: µs above 0.1 ms, 10 ns below.
fn round_ms(ms: f64) -> f64 {
    let scale = if ms >= 0.1 { 1e3 } else { 1e5 };
    (ms * scale).round() / scale
}

/// `key=value` pairs of one fla line.
fn pairs(line: &str) -> Vec<(&str, &str)> {
    line.split_whitespace().filter_map(|w| w.split_once('=')).collect()
}

fn fla_line(line: &str, file: &str) -> Option<Theirs> {
    let (tag, rest) = line.split_once(' ')?;
    let p = pairs(rest);
    let get = |k: &str| p.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    let num = |k: &str| get(k)?.parse::<u64>().ok();
    let dtype = |d: &str| if d == "float32" { "f32".to_string() } else { d.replace("bfloat16", "bf16") };
    match tag {
        "FLA" | "FLALAYER" => {
            if get("l2norm").is_some_and(|n| n != "kernel") {
                return None; // q, k normalised beforehand: not the figure we compare with
            }
            let ms = get("graph_ms")?.parse::<f64>().ok()?;
            let (h, hv) = if tag == "FLA" { (num("H")?, num("HV")?) } else { (num("NK")?, num("NV")?) };
            let kind = if tag == "FLA" { "core" } else { "layer" };
            Some(Theirs {
                name: format!("fla {kind} {}", dtype(get("dtype")?)),
                dims: (num("B")?, num("T")?, h, hv),
                step: get("mode")? == "bwd",
                ms,
                file: file.into(),
            })
        }
        "FLA_DECODE" => Some(Theirs {
            name: "fla decode".into(),
            dims: (num("B")?, 1, num("H")?, num("HV")?),
            step: false,
            ms: us_to_ms(get("stream_us")?.parse::<f64>().ok()?),
            file: file.into(),
        }),
        _ => None,
    }
}

/// The number before `unit` in `line` after `after`.
fn number_before(line: &str, after: &str, unit: &str) -> Option<f64> {
    let rest = &line[line.find(after)? + after.len()..];
    rest[..rest.find(unit)?].trim().parse().ok()
}

/// `word N` in a layer line (`nk 16`).
fn dim(line: &str, word: &str) -> Option<u64> {
    let at = line.find(&format!(" {word} "))? + word.len() + 2;
    line[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// One `gdn-check run` or `gdn-check decode` output, from its `adapter:` line on.
fn block(lines: &[&str]) -> Option<Measured> {
    let device = lines.first()?.strip_prefix("adapter: ")?;
    let device = device.split(" (").next()?.trim().to_string();
    let layer = lines.iter().find(|l| l.starts_with("layer: "))?;
    let (nk, nv, dk, dv) = (dim(layer, "nk")?, dim(layer, "nv")?, dim(layer, "dk")?, dim(layer, "dv")?);
    let timestamps = |l: &&str| l.contains("GpuTimestamps");
    if layer.contains(" sequences × ") {
        // gdn-check decode: "8 sequences × 200 steps of 1 token(s)"
        let tail = layer.split("; ").nth(1)?;
        let sequences: u64 = tail.split_whitespace().next()?.parse().ok()?;
        if !tail.contains("of 1 token(s)") || !lines.iter().any(timestamps) {
            return None;
        }
        let stream = lines.iter().find_map(|l| number_before(l, "median pass:", "µs a step"))?;
        return Some(Measured {
            device,
            shape: Shape::classify(sequences, 1, nk, nv, dk, dv)?,
            family: "decode".into(),
            precision: "f32".into(),
            storage: "f32".into(),
            forward_ms: Some(us_to_ms(stream)),
            step_ms: None,
            kernels: Vec::new(),
        });
    }
    let batch = layer.split("; batch ").nth(1)?;
    let mut bt = batch.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty());
    let (b, t): (u64, u64) = (bt.next()?.parse().ok()?, bt.next()?.parse().ok()?);
    let family = layer.split("family ").nth(1)?.split(|c: char| !c.is_alphanumeric()).next()?.to_lowercase();
    let precision = layer.split("precision ").nth(1)?.split_whitespace().next()?.trim_end_matches(',').to_string();
    let times = lines.iter().position(|l| l.starts_with("device time") && timestamps(l))?;
    let mut forward = None;
    let mut step = None;
    let mut kernels = Vec::new();
    let mut in_kernels = false;
    for line in &lines[times + 1..] {
        let l = line.trim();
        if line.starts_with("per kernel") {
            in_kernels = timestamps(line);
            continue;
        }
        if let Some(ms) = l.strip_prefix("forward + backward").and_then(|r| number_before(r, "", " ms")) {
            step = Some(ms);
        } else if let Some(ms) = l.strip_prefix("forward ").and_then(|r| number_before(r, "", " ms")) {
            forward.get_or_insert(ms);
        } else if in_kernels && (l.starts_with("fwd ") || l.starts_with("bwd ")) {
            let mut words = l.split_whitespace();
            let (pass, name) = (words.next()?, words.next()?);
            if let Some(ms) = words.next().and_then(|w| w.parse().ok()) {
                kernels.push((pass.to_string(), name.to_string(), ms));
            }
        } else if l.is_empty() && in_kernels {
            in_kernels = false;
        }
    }
    let storage = if kernels.iter().any(|(_, k, _)| k.ends_with("_bf16")) {
        "bf16"
    } else if kernels.iter().any(|(_, k, _)| k.ends_with("_f16")) {
        "f16"
    } else {
        "f32"
    };
    Some(Measured {
        device,
        shape: Shape::classify(b, t, nk, nv, dk, dv)?,
        family,
        precision,
        storage: storage.into(),
        forward_ms: forward,
        step_ms: step,
        kernels,
    })
}

fn from_text(text: &str, file: &str, ours: &mut Vec<Measured>, theirs: &mut Vec<Theirs>) {
    let lines: Vec<&str> = text.lines().collect();
    theirs.extend(lines.iter().filter_map(|l| fla_line(l.trim(), file)));
    let starts: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with("adapter: ")).collect();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(lines.len());
        ours.extend(block(&lines[start..end]));
    }
}

fn from_summary(s: &Summary, file: &str, ours: &mut Vec<Measured>, theirs: &mut Vec<Theirs>) {
    let device = s.adapter.clone().unwrap_or_else(|| "unknown adapter".into());
    for shape in s.shapes() {
        let Some(standard) = Shape::classify(shape.b, shape.t, shape.nk, shape.nv, shape.dk, shape.dv) else {
            continue;
        };
        let time = |name: &str| {
            s.ours(&shape, "layer", name).filter(|t| t.clock == "gpu-timestamps").map(|t| round_ms(t.median_ms))
        };
        let (forward_ms, step_ms) = (time("forward"), time("step"));
        if forward_ms.is_none() && step_ms.is_none() {
            continue;
        }
        let (family, precision) = match shape.family.strip_suffix("-tc") {
            Some(f) => (f.to_string(), "tensor-core".to_string()),
            None => (shape.family.clone(), "f32".to_string()),
        };
        let kernels = s
            .times
            .iter()
            .filter(|t| t.shape == shape && t.part != "layer" && t.clock == "gpu-timestamps")
            .map(|t| (t.part.clone(), t.name.clone(), round_ms(t.median_ms)))
            .collect();
        ours.push(Measured {
            device: device.clone(),
            shape: standard,
            family,
            precision,
            storage: "f32".into(),
            forward_ms,
            step_ms,
            kernels,
        });
    }
    for d in s.decodes.iter().filter(|d| d.layer == "qwen3-next" && d.clock == "gpu-timestamps") {
        if let Some(shape) = Shape::classify(d.sequences, 1, 16, 32, 128, 128) {
            ours.push(Measured {
                device: device.clone(),
                shape,
                family: "decode".into(),
                precision: "f32".into(),
                storage: "f32".into(),
                forward_ms: Some(round_ms(d.median_ms)),
                step_ms: None,
                kernels: Vec::new(),
            });
        }
    }
    for (f, kind) in s.fla.iter().map(|f| (f, "core")).chain(s.fla_layers.iter().map(|f| (f, "layer"))) {
        let dtype = if f.dtype == "float32" { "f32" } else { "bf16" };
        theirs.push(Theirs {
            name: format!("fla {kind} {dtype}"),
            dims: (f.b, f.t, f.h, f.hv),
            step: f.mode == "bwd",
            ms: round_ms(f.graph_ms),
            file: file.into(),
        });
    }
}

/// The rows of one run, from its output files (path as recorded, text).
pub fn rows(files: &[(String, String)], meta: &Meta) -> Result<Vec<Row>, String> {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for (path, text) in files {
        if text.trim_start().starts_with('{') {
            let summary = Summary::parse(text).map_err(|e| format!("{path}: {e}"))?;
            from_summary(&summary, path, &mut ours, &mut theirs);
        } else {
            from_text(text, path, &mut ours, &mut theirs);
        }
    }
    let mut groups: Vec<Vec<Measured>> = Vec::new();
    for m in ours {
        let same = |g: &&mut Vec<Measured>| {
            let f = &g[0];
            (&f.device, &f.shape, &f.family, &f.precision, &f.storage)
                == (&m.device, &m.shape, &m.family, &m.precision, &m.storage)
        };
        match groups.iter_mut().find(same) {
            Some(g) => g.push(m),
            None => groups.push(vec![m]),
        }
    }
    let mut rows = Vec::new();
    for g in groups {
        let first = &g[0];
        let pick = |f: fn(&Measured) -> Option<f64>| median(g.iter().filter_map(f).collect());
        let kernels = first
            .kernels
            .iter()
            .enumerate()
            .map(|(i, (pass, name, _))| {
                let all =
                    g.iter().filter_map(|m| m.kernels.get(i).filter(|k| (&k.0, &k.1) == (pass, name)).map(|k| k.2));
                (pass.clone(), name.clone(), median(all.collect()).unwrap_or_default())
            })
            .collect();
        let s = &first.shape;
        let dims = (s.batch, s.seq, s.nk, s.nv);
        let mut anchors: Vec<Anchor> = Vec::new();
        for t in theirs.iter().filter(|t| t.dims == dims && (t.name == "fla decode") == (first.family == "decode")) {
            if anchors.iter().any(|a| a.name == t.name) {
                continue;
            }
            let same: Vec<&Theirs> = theirs.iter().filter(|u| u.dims == dims && u.name == t.name).collect();
            let of = |step: bool| median(same.iter().filter(|u| u.step == step).map(|u| u.ms).collect());
            let mut files: Vec<&str> = same.iter().map(|u| u.file.as_str()).collect();
            files.dedup();
            anchors.push(Anchor {
                name: t.name.clone(),
                forward_ms: of(false),
                step_ms: of(true),
                source: files.join(", "),
            });
        }
        anchors.sort_by(|a, b| a.name.cmp(&b.name));
        rows.push(Row {
            commit: meta.commit.clone(),
            date: meta.date.clone(),
            device: first.device.clone(),
            shape: first.shape.clone(),
            family: first.family.clone(),
            precision: first.precision.clone(),
            storage: first.storage.clone(),
            forward_ms: pick(|m| m.forward_ms),
            step_ms: pick(|m| m.step_ms),
            kernels,
            anchors,
            runs: g.len() as u64,
            source: meta.source.clone(),
            note: meta.note.clone(),
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-written SAMPLE output in gdn-check's and fla_bench.py's formats (not measurements).
    const RUN: &str = "\
===== gdn-check run
adapter: SAMPLE GPU (Vulkan, DiscreteGpu, driver sample)
layer: qwen3-next (sample): nk 2, nv 4, dk 128, dv 128, kk 4; batch 1 × 128 tokens; family Recurrent { checkpoint_interval: 4 } (fitted to the batch), precision f32
tape: 29.4 MiB of device memory, 241126 bytes per token

device time, median of 20 (GpuTimestamps):
  forward                  0.050 ms        3490401 tokens/s
  backward                 0.100 ms        1955990 tokens/s
  forward + backward       0.150 ms        1253526 tokens/s

per kernel, median of 20 (GpuTimestamps): alone, each in a pass of its own; in the pass, its share:
                                                  alone  in the pass
  fwd recurrence_forward_chunks                0.026 ms     0.029 ms
  bwd norm_backward                            0.007 ms     0.009 ms

all tensors within their bars
adapter: SAMPLE GPU (Vulkan, DiscreteGpu, driver sample)
layer: qwen3-next (sample): nk 2, nv 4, dk 128, dv 128, kk 4; batch 1 × 128 tokens; family Recurrent { checkpoint_interval: 4 } (fitted to the batch), precision f32
device time, median of 20 (GpuTimestamps):
  forward                  0.040 ms        3490401 tokens/s
  forward + backward       0.170 ms        1253526 tokens/s
adapter: SAMPLE GPU (Vulkan, DiscreteGpu, driver sample)
layer: qwen3-next (sample): nk 16, nv 32, dk 128, dv 128, kk 4; 8 sequences × 200 steps of 1 token(s): 256 (sequence, value head) states, 16.0 MiB
decode step of all 8 sequences, median of 200 after 0.5 s of warm-up (GpuTimestamps): 16.29 µs
back to back, 100 steps in one compute pass (a stream of steps, as an engine records them), median pass: 12.41 µs a step; 2703.2 GB/s
FLA mode=fwd dtype=bfloat16 B=1 T=128 H=2 HV=4 l2norm=kernel eager_ms=0.704
FLA mode=fwd dtype=bfloat16 B=1 T=128 H=2 HV=4 l2norm=kernel graph_ms=0.036 graph_min_ms=0.035
FLA mode=bwd dtype=bfloat16 B=1 T=128 H=2 HV=4 l2norm=kernel graph_ms=0.105 graph_min_ms=0.104
FLALAYER mode=bwd dtype=bfloat16 B=1 T=128 NK=2 NV=4 graph_ms=0.2 graph_min_ms=0.19
FLA_DECODE B=8 H=16 HV=32 states=256 graph_us=15.23 stream_us=12.48
";

    #[test]
    fn logs_become_rows_with_medians_and_anchors() {
        let meta =
            Meta { commit: "abc1234".into(), date: "2026-01-01".into(), source: "out".into(), note: String::new() };
        let rows = rows(&[("out/layer.txt".into(), RUN.into())], &meta).unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        let s4 = &rows[0];
        assert_eq!((s4.shape.name.as_str(), s4.family.as_str(), s4.runs), ("S4", "recurrent", 2));
        assert_eq!((s4.forward_ms, s4.step_ms), (Some(0.04), Some(0.15)), "lower medians");
        assert_eq!(s4.kernels[0], ("fwd".into(), "recurrence_forward_chunks".into(), 0.026));
        assert_eq!(s4.anchors.len(), 2);
        assert_eq!(
            (s4.anchors[0].name.as_str(), s4.anchors[0].forward_ms, s4.anchors[0].step_ms),
            ("fla core bf16", Some(0.036), Some(0.105))
        );
        assert_eq!((s4.anchors[1].name.as_str(), s4.anchors[1].step_ms), ("fla layer bf16", Some(0.2)));
        let decode = &rows[1];
        assert_eq!((decode.shape.name.as_str(), decode.shape.batch, decode.family.as_str()), ("decode", 8, "decode"));
        assert_eq!(decode.forward_ms, Some(0.01241));
        assert_eq!(decode.anchors[0].forward_ms, Some(0.01248));
    }

    #[test]
    fn a_summary_becomes_rows() {
        let s = include_str!("sample.jsonl");
        let meta =
            Meta { commit: "abc1234".into(), date: "2026-01-01".into(), source: "out".into(), note: String::new() };
        let rows = rows(&[("out/bench.jsonl".into(), s.into())], &meta).unwrap();
        let s1 = rows.iter().find(|r| r.shape.name == "S1" && r.family == "recurrent").unwrap();
        assert_eq!((s1.forward_ms, s1.step_ms), (Some(4.0), Some(80.0)));
        assert!(s1.anchors.iter().any(|a| a.name == "fla core bf16" && a.step_ms == Some(2.0)), "{:?}", s1.anchors);
        assert!(rows.iter().all(|r| r.shape.name != "tiny"), "non-standard shapes are left out");
    }
}
