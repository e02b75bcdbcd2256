//! `cargo xtask bench-report SUMMARY`: renders a bench summary (JSON lines: see
//! `gdn-train/benches/layer/summary.rs` and `bench/h200.sh`) as a markdown report, ours
//! against fla with ratios, and a chart of time against tokens per step, into `bench.md` and
//! `bench.png`.

mod chart;
mod summary;
mod table;

use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    /// The summary: JSON lines from the bench and from fla (bench/h200.sh writes bench.jsonl).
    summary: PathBuf,
    /// Directory for bench.md and bench.png (default: the summary's directory).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: &ReportArgs) -> Result<(), String> {
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
        // 16 MiB of states read and written in 25 µs.
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
