//! The run's machine-readable summary, one JSON object per line: the adapter, each tape's device
//! memory, each shape a family refused, and each bench's median (the layer's and the decode
//! step's) read back from the estimates criterion saved. Written to `GDN_BENCH_SUMMARY`, else `summary.jsonl` in criterion's directory;
//! `cargo xtask bench-report` renders it.

use crate::measure::Target;
use crate::shapes::Shape;
use gdn_train::{Clock, Context};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Where criterion writes its reports: `CRITERION_HOME`, else `criterion` in the target directory
/// the bench was built in.
pub fn criterion_home() -> PathBuf {
    std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).with_file_name("criterion"))
}

/// Records gathered while the benches are declared, completed from criterion's files at the end.
pub struct Summary {
    home: PathBuf,
    started: SystemTime,
    records: Vec<Value>,
    benches: Vec<(Value, PathBuf)>,
}

fn clock_name(clock: Clock) -> &'static str {
    match clock {
        Clock::GpuTimestamps => "gpu-timestamps",
        Clock::WallClock => "wall-clock",
    }
}

fn shape_fields(family: &str, shape: &Shape) -> Value {
    json!({
        "family": family, "shape": shape.name, "b": shape.b, "t": shape.t, "nk": shape.nk, "nv": shape.nv,
        "dk": shape.d, "dv": shape.d, "kk": shape.kk, "tokens": shape.tokens(),
    })
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
    base
}

impl Summary {
    /// A summary of a run on `ctx`, whose criterion reports go to `home`.
    pub fn new(ctx: &Context, home: PathBuf, shapes: &[Shape]) -> Self {
        let info = ctx.adapter_info();
        let run = json!({
            "kind": "run", "adapter": info.name, "backend": format!("{:?}", info.backend),
            "driver": format!("{} {}", info.driver, info.driver_info), "software": ctx.is_software(),
            "timestamps": ctx.device().features().contains(gdn_train::wgpu::Features::TIMESTAMP_QUERY),
            "shapes": shapes.iter().map(|s| s.name).collect::<Vec<_>>(),
        });
        Self { home, started: SystemTime::now(), records: vec![run], benches: Vec::new() }
    }

    /// A tape's device memory.
    pub fn tape(&mut self, family: &str, shape: &Shape, bytes: u64) {
        let extra =
            json!({"kind": "tape", "device_bytes": bytes, "bytes_per_token": bytes as f64 / shape.tokens() as f64});
        self.records.push(merge(shape_fields(family, shape), extra));
    }

    /// A shape the family could not run, and why.
    pub fn skipped(&mut self, family: &str, shape: &Shape, reason: &str) {
        self.records.push(merge(shape_fields(family, shape), json!({"kind": "skipped", "reason": reason})));
    }

    /// A declared bench, with the directory criterion saves it in (group `group`).
    pub fn bench(&mut self, family: &str, shape: &Shape, group: &str, target: Target, clock: Clock, dispatches: usize) {
        let (part, name) = target.id();
        let extra = json!({
            "kind": "time", "part": part, "name": name, "clock": clock_name(clock), "dispatches": dispatches,
        });
        self.benches.push((merge(shape_fields(family, shape), extra), self.home.join(group).join(part).join(name)));
    }

    /// A declared decode-step bench (`decode/qwen3-next/{name}`): `sequences` of qwen3-next, their
    /// `states` and the bytes those hold (read and written once a step).
    pub fn decode(&mut self, sequences: usize, states: usize, state_bytes: usize, clock: Clock, name: &str) {
        let record = json!({
            "kind": "decode", "layer": "qwen3-next", "sequences": sequences, "states": states,
            "state_bytes": state_bytes, "clock": clock_name(clock),
        });
        self.benches.push((record, self.home.join("decode").join("qwen3-next").join(name)));
    }

    /// Writes every record and each bench criterion measured in this run (whose estimates are
    /// newer than the run's start: a filtered-out bench or a `--test` run has none); returns the
    /// path and the number of benches written.
    pub fn write(self) -> Result<(PathBuf, usize), String> {
        let path =
            std::env::var_os("GDN_BENCH_SUMMARY").map(PathBuf::from).unwrap_or_else(|| self.home.join("summary.jsonl"));
        let mut lines: Vec<String> = self.records.iter().map(Value::to_string).collect();
        let mut measured = 0;
        for (record, dir) in self.benches {
            let file = dir.join("new").join("estimates.json");
            let fresh = std::fs::metadata(&file).and_then(|m| m.modified()).is_ok_and(|t| t >= self.started);
            if !fresh {
                continue;
            }
            let text = std::fs::read_to_string(&file).map_err(|e| format!("reading {}: {e}", file.display()))?;
            let estimates: Value =
                serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", file.display()))?;
            let ms = |key: &str| estimates[key]["point_estimate"].as_f64().map(|ns| ns / 1e6);
            let extra = json!({"median_ms": ms("median"), "mean_ms": ms("mean"), "std_dev_ms": ms("std_dev")});
            lines.push(merge(record, extra).to_string());
            measured += 1;
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, lines.join("\n") + "\n").map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok((path, measured))
    }
}
