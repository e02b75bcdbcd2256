//! `cargo xtask bench-report`: the measured figures' record and what is made from it.
//!
//! - `append FILE…`: a side-by-side run's output (`bench/side_by_side.sh`'s `bench.jsonl`, see
//!   `gdn-train/benches/layer/summary.rs`, and its logs of `gdn-check run` / `decode` and fla's
//!   lines) becomes rows of `bench/baselines/<device>.jsonl` ([`baseline`]), and `BENCHMARKS.md` is
//!   regenerated.
//! - `render [--check]`: `BENCHMARKS.md` from the baselines ([`benchmarks`]); `--check` fails where
//!   the file is not what they give (`cargo test -p xtask` checks the same).
//! - `summary SUMMARY`: one run's `bench.jsonl` as a markdown report, ours against fla with ratios,
//!   and a chart of time against tokens per step, into `bench.md` and `bench.png`.

mod baseline;
mod benchmarks;
mod chart;
mod ingest;
mod summary;
mod table;
#[cfg(test)]
mod tidy;

use crate::verify::workspace_root;
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct ReportArgs {
    #[command(subcommand)]
    command: ReportCommand,
}

#[derive(Subcommand)]
enum ReportCommand {
    /// Append a run's figures to bench/baselines/<device>.jsonl and regenerate BENCHMARKS.md.
    Append(AppendArgs),
    /// Regenerate BENCHMARKS.md from bench/baselines/*.jsonl.
    Render {
        /// Change nothing: fail if BENCHMARKS.md is not what the baselines give.
        #[arg(long)]
        check: bool,
    },
    /// Render one run's summary (JSON lines) as bench.md (ours against fla) and bench.png (a chart).
    Summary(SummaryArgs),
}

#[derive(Args)]
struct AppendArgs {
    /// The run's output: bench.jsonl and the parts' logs (gdn-check run / decode output, fla lines).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The commit whose build ran (`git rev-parse --short HEAD` where the binaries were built).
    #[arg(long)]
    commit: String,
    /// The day it ran, YYYY-MM-DD (default: today, UTC).
    #[arg(long)]
    date: Option<String>,
    /// Where the raw output is kept (default: the files' directory).
    #[arg(long)]
    source: Option<String>,
    /// A note for every row (an override, a cap).
    #[arg(long, default_value = "")]
    note: String,
    /// Print the rows; write nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Args)]
struct SummaryArgs {
    /// The summary: JSON lines from the bench and from fla (bench/side_by_side.sh writes bench.jsonl).
    summary: PathBuf,
    /// Directory for bench.md and bench.png (default: the summary's directory).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: &ReportArgs) -> Result<(), String> {
    match &args.command {
        ReportCommand::Append(a) => append(a),
        ReportCommand::Render { check } => render(&workspace_root(), *check),
        ReportCommand::Summary(a) => summary_report(a),
    }
}

/// Today as YYYY-MM-DD (UTC), from the days since 1970 (Howard Hinnant's civil_from_days).
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn append(args: &AppendArgs) -> Result<(), String> {
    let root = workspace_root();
    let mut files = Vec::new();
    for path in &args.files {
        let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        let shown = path.strip_prefix(&root).unwrap_or(path).display().to_string();
        files.push((shown, text));
    }
    let source = args.source.clone().unwrap_or_else(|| {
        let dir = args.files[0].parent().unwrap_or(Path::new("."));
        dir.strip_prefix(&root).unwrap_or(dir).display().to_string()
    });
    let meta = ingest::Meta {
        commit: args.commit.clone(),
        date: args.date.clone().unwrap_or_else(today),
        source,
        note: args.note.clone(),
    };
    let rows = ingest::rows(&files, &meta)?;
    if rows.is_empty() {
        return Err("no figure at a standard shape (S1-S4, decode) in these files".into());
    }
    let dir = baseline::dir(&root);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for row in &rows {
        let line = row.to_line();
        println!("{line}");
        if args.dry_run {
            continue;
        }
        let path = dir.join(format!("{}.jsonl", baseline::device_slug(&row.device)));
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text += &line;
        text += "\n";
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    if args.dry_run {
        return Ok(());
    }
    println!("{} rows appended", rows.len());
    render(&root, false)
}

/// BENCHMARKS.md as the baselines give it.
pub fn generated(root: &Path) -> Result<String, String> {
    let mut rows = Vec::new();
    for file in baseline::files(root)? {
        rows.extend(baseline::read(&file)?);
    }
    Ok(benchmarks::render(&rows, &baseline::history(root)?))
}

fn render(root: &Path, check: bool) -> Result<(), String> {
    let text = generated(root)?;
    let path = root.join("BENCHMARKS.md");
    let now = std::fs::read_to_string(&path).unwrap_or_default();
    if check {
        return if now == text {
            println!("BENCHMARKS.md is what the baselines give");
            Ok(())
        } else {
            Err("BENCHMARKS.md is not what bench/baselines/*.jsonl give: run `cargo xtask bench-report render`".into())
        };
    }
    std::fs::write(&path, &text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    println!("wrote {} ({} lines)", path.display(), text.lines().count());
    Ok(())
}

fn summary_report(args: &SummaryArgs) -> Result<(), String> {
    let text =
        std::fs::read_to_string(&args.summary).map_err(|e| format!("reading {}: {e}", args.summary.display()))?;
    let summary = summary::Summary::parse(&text).map_err(|e| format!("{}: {e}", args.summary.display()))?;
    let out = args.out.clone().unwrap_or_else(|| args.summary.parent().map(PathBuf::from).unwrap_or_default());
    std::fs::create_dir_all(&out).map_err(|e| format!("creating {}: {e}", out.display()))?;

    let series = chart::series(&summary);
    let png = out.join("bench.png");
    let chart = if series.is_empty() {
        println!("no layer figures to chart");
        None
    } else {
        let font = gdn_check::chart_font::register();
        if font.is_none() {
            println!("no TrueType font found (set GDN_CHART_FONT to a .ttf file): the chart has no text");
        }
        let on = summary.adapter.as_deref().map_or_else(String::new, |a| format!(", {a}"));
        let title = format!("Gated DeltaNet layer: GPU time against tokens per step{on}");
        chart::draw(&series, &png, font.is_some().then_some(title.as_str()))?;
        Some("bench.png")
    };
    let markdown = table::render(&summary, chart);
    let md = out.join("bench.md");
    std::fs::write(&md, &markdown).map_err(|e| format!("writing {}: {e}", md.display()))?;
    println!("{markdown}");
    println!(
        "wrote {}{}",
        md.display(),
        if chart.is_some() { format!(" and {}", png.display()) } else { String::new() }
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-written SAMPLE DATA (not measurements) in the summary's format.
    const SAMPLE: &str = include_str!("sample.jsonl");

    #[test]
    fn sample_parses_into_every_kind() {
        let s = summary::Summary::parse(SAMPLE).unwrap();
        assert_eq!(s.adapter.as_deref(), Some("SAMPLE adapter"));
        assert_eq!(s.times.len(), 13);
        assert_eq!(s.tapes.len(), 4);
        assert_eq!(s.skipped.len(), 1);
        assert_eq!(s.decodes.len(), 1);
        assert_eq!(s.fla.len(), 5, "eager lines and failed graphs are left out");
        assert!(s.notes[0].starts_with("SAMPLE DATA"));
        assert_eq!(
            s.shapes().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["s1", "s2", "s4", "tiny", "decode"]
        );
    }

    #[test]
    fn table_sets_ours_against_fla_at_the_same_shape() {
        let s = summary::Summary::parse(SAMPLE).unwrap();
        let md = table::render(&s, Some("bench.png"));
        // s1: forward 4.000 against fla bf16 0.500 (8×), step 80.000 against 2.000 (40×) and 5.000 (16×).
        let s1 = md.lines().find(|l| l.starts_with("| recurrent | s1:")).unwrap();
        assert_eq!(
            s1,
            "| recurrent | s1: 8×1024, 16/32 heads of 128 | 8192 | 4.000 | 76.000 | 80.000 | 0.500 | 2.000 | 5.000 \
             | 8.00× | 40.00× | 16.00× |"
        );
        let s2 = md.lines().find(|l| l.starts_with("| recurrent | s2:")).unwrap();
        assert!(s2.ends_with("| — | — | — | — | — | — |"), "no fla figure at s2: {s2}");
        let decode = md.lines().find(|l| l.starts_with("| recurrent | decode:")).unwrap();
        assert!(decode.contains("refused: scratch over 2 GiB"), "{decode}");
        assert!(md.contains("| recurrent | s1: 8×1024, 16/32 heads of 128 | 8192 | 512.0 | 65536 |"), "{md}");
        assert!(md.contains("| recurrent | s1 | bwd | recurrence_backward | 1 | 70.000 | 92.1 % |"), "{md}");
        assert!(md.contains("wall clock"), "the tiny shape's wall-clock figures are flagged: {md}");
        // The fixture's decode step: 16 MiB of states read and written in its time.
        assert!(md.contains("| qwen3-next | 8 | 256 | 25.00 | 1342 GB/s | gpu-timestamps |"), "{md}");
    }

    #[test]
    fn chart_series_and_a_png_without_text() {
        let s = summary::Summary::parse(SAMPLE).unwrap();
        let series = chart::series(&s);
        let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(
            labels,
            ["ours, recurrent, fwd+bwd", "ours, recurrent, fwd", "fla bf16 fwd+bwd", "fla bf16 fwd", "fla f32 fwd+bwd"]
        );
        assert_eq!(series[0].points[0], (8192.0, 80.0, "s1".into()));
        assert_eq!(series[2].points, [(8192.0, 2.0, "s1".into()), (128.0, 0.1, "s4".into())]);
        let png = std::env::temp_dir().join(format!("xtask-chart-{}.png", std::process::id()));
        chart::draw(&series, &png, None).unwrap();
        let bytes = std::fs::read(&png).unwrap();
        std::fs::remove_file(&png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        assert!(bytes.len() > 2000, "a chart with points, {} bytes", bytes.len());
    }
}
