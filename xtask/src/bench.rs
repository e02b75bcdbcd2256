//! `cargo xtask bench`: runs the layer's criterion benches (`gdn-train/benches/layer`),
//! saves or compares named baselines and prints each bench's ratio to the baseline, or bundles
//! the release bench binary into `.dev/bin` for a GPU machine without a toolchain.

use crate::verify::workspace_root;
use clap::Args;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

/// Name of the bundled bench binary in `.dev/bin`.
pub const BUNDLED: &str = "bench-gdn-train-layer";

#[derive(Args)]
pub struct BenchArgs {
    /// Save this run as the named baseline (criterion's --save-baseline).
    #[arg(long, value_name = "NAME", conflicts_with = "compare")]
    save: Option<String>,
    /// Compare with the named baseline and print each bench's ratio to it.
    #[arg(long, value_name = "NAME")]
    compare: Option<String>,
    /// Build the bench binary in release mode into .dev/bin instead of running it.
    #[arg(long, conflicts_with_all = ["save", "compare"])]
    device_bundle: bool,
    /// Arguments for the bench binary, after `--` (a filter such as `/layer/`, `--quick`).
    #[arg(last = true)]
    criterion: Vec<String>,
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// Where criterion keeps its reports and baselines: `CRITERION_HOME`, else `criterion` in the
/// target directory. The bench is run with `CRITERION_HOME` set to it, so both agree.
pub fn criterion_home(root: &Path) -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    root.join(target).join("criterion")
}

pub fn run(args: &BenchArgs) -> Result<(), String> {
    let root = workspace_root();
    if args.device_bundle {
        return bundle(&root);
    }
    let home = criterion_home(&root);
    let mut command = Command::new(cargo());
    command.args(["bench", "-p", "gdn-train", "--bench", "layer", "--"]).env("CRITERION_HOME", &home);
    if let Some(name) = &args.save {
        command.args(["--save-baseline", name]);
    }
    if let Some(name) = &args.compare {
        command.args(["--baseline", name]);
    }
    command.args(&args.criterion).current_dir(&root);
    let started = SystemTime::now();
    let status = command.status().map_err(|e| format!("running cargo bench: {e}"))?;
    if !status.success() {
        return Err(format!("cargo bench failed ({status})"));
    }
    if let Some(name) = &args.compare {
        let ratios = compare(&home, name, started)?;
        if ratios.is_empty() {
            return Err(format!("no bench of this run has a baseline {name:?} in {}", home.display()));
        }
        println!("\n{}", ratio_table(name, &ratios));
    }
    Ok(())
}

/// A bench's median now and in the baseline, in nanoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    /// The bench's id, `family-shape/part/name`.
    pub id: String,
    /// Median of this run.
    pub now: f64,
    /// Median of the baseline.
    pub base: f64,
}

/// Every bench under `home` measured since `since` that has `baseline` saved, sorted by id.
pub fn compare(home: &Path, baseline: &str, since: SystemTime) -> Result<Vec<Ratio>, String> {
    let mut ratios = Vec::new();
    let mut stack = vec![home.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(entry.path());
            }
        }
        let (new, base) = (dir.join("new/estimates.json"), dir.join(baseline).join("estimates.json"));
        let fresh = std::fs::metadata(&new).and_then(|m| m.modified()).is_ok_and(|t| t >= since);
        if !fresh || !base.is_file() {
            continue;
        }
        let id = read_json(&dir.join("new/benchmark.json"))?["full_id"].as_str().unwrap_or_default().to_string();
        let median = |file: &Path| -> Result<f64, String> {
            read_json(file)?["median"]["point_estimate"]
                .as_f64()
                .ok_or_else(|| format!("{} has no median", file.display()))
        };
        ratios.push(Ratio { id, now: median(&new)?, base: median(&base)? });
    }
    ratios.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(ratios)
}

fn read_json(file: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", file.display()))
}

/// One line per bench: the medians and `now / base` (above 1: slower than the baseline).
pub fn ratio_table(baseline: &str, ratios: &[Ratio]) -> String {
    let width = ratios.iter().map(|r| r.id.len()).max().unwrap_or(0).max(5);
    let mut out = format!("{:<width$}  {:>12}  {:>12}  {:>7}\n", "bench", baseline, "now", "ratio");
    for r in ratios {
        let ms = |ns: f64| format!("{:.4} ms", ns / 1e6);
        let flag = if r.now > 1.05 * r.base {
            "  slower"
        } else if r.now < r.base / 1.05 {
            "  faster"
        } else {
            ""
        };
        out += &format!("{:<width$}  {:>12}  {:>12}  {:>6.3}×{flag}\n", r.id, ms(r.base), ms(r.now), r.now / r.base);
    }
    out
}

/// Builds the bench binary in release mode and copies it to `.dev/bin/bench-gdn-train-layer`.
fn bundle(root: &Path) -> Result<(), String> {
    let output = Command::new(cargo())
        .args(["bench", "-p", "gdn-train", "--bench", "layer", "--no-run", "--message-format=json"])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !output.status.success() {
        return Err("building the bench binary failed".into());
    }
    let exe = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|m| m["target"]["name"] == "layer" && m["executable"].is_string())
        .and_then(|m| m["executable"].as_str().map(str::to_string))
        .ok_or("cargo built no bench executable named layer")?;
    let bin = root.join(".dev/bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("creating {}: {e}", bin.display()))?;
    std::fs::copy(&exe, bin.join(BUNDLED)).map_err(|e| format!("copying {exe}: {e}"))?;
    println!("bundled into {}: {BUNDLED}", bin.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_table_flags_changes_over_five_percent() {
        let ratios = [
            Ratio { id: "recurrent-s1/layer/forward".into(), now: 5.0e6, base: 4.0e6 },
            Ratio { id: "recurrent-s1/layer/step".into(), now: 80.0e6, base: 80.4e6 },
            Ratio { id: "recurrent-s4/fwd/conv_forward".into(), now: 1.0e4, base: 2.0e4 },
        ];
        let table = ratio_table("main", &ratios);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert!(lines[1].contains("4.0000 ms") && lines[1].contains("5.0000 ms"), "{table}");
        assert!(lines[1].ends_with("1.250×  slower"), "{table}");
        assert!(lines[2].ends_with("0.995×"), "{table}");
        assert!(lines[3].ends_with("0.500×  faster"), "{table}");
    }

    #[test]
    fn compare_reads_fresh_estimates_against_the_baseline() {
        let home = std::env::temp_dir().join(format!("xtask-compare-{}", std::process::id()));
        let bench = home.join("recurrent-tiny/layer/forward");
        for (dir, median) in [("new", 3.0e6), ("main", 2.0e6)] {
            std::fs::create_dir_all(bench.join(dir)).unwrap();
            let estimates = format!(r#"{{"median": {{"point_estimate": {median}}}}}"#);
            std::fs::write(bench.join(dir).join("estimates.json"), estimates).unwrap();
        }
        std::fs::write(bench.join("new/benchmark.json"), r#"{"full_id": "recurrent-tiny/layer/forward"}"#).unwrap();
        let before = SystemTime::UNIX_EPOCH;
        let ratios = compare(&home, "main", before).unwrap();
        assert_eq!(ratios, [Ratio { id: "recurrent-tiny/layer/forward".into(), now: 3.0e6, base: 2.0e6 }]);
        assert!(compare(&home, "other", before).unwrap().is_empty());
        let later = SystemTime::now() + std::time::Duration::from_secs(3600);
        assert!(compare(&home, "main", later).unwrap().is_empty());
        std::fs::remove_dir_all(&home).unwrap();
    }
}
