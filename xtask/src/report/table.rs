//! The summary as markdown: ours against fla at each shape (GPU time against GPU time, with the
//! ratios), the decode step, each tape's device memory, and our time per kernel.

use super::summary::{Shape, Summary};
use std::fmt::Write;

fn ms(value: Option<f64>) -> String {
    value.map_or_else(|| "—".into(), |v| if v < 0.1 { format!("{v:.4}") } else { format!("{v:.3}") })
}

fn ratio(ours: Option<f64>, theirs: Option<f64>) -> String {
    match (ours, theirs) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}×", a / b),
        _ => "—".into(),
    }
}

fn describe(s: &Shape) -> String {
    format!("{}: {}×{}, {}/{} heads of {}", s.name, s.b, s.t, s.nk, s.nv, s.dk)
}

/// The whole report.
pub fn render(summary: &Summary, chart: Option<&str>) -> String {
    let mut out = String::new();
    for note in &summary.notes {
        let _ = writeln!(out, "> {note}\n");
    }
    if let Some(adapter) = &summary.adapter {
        let _ = writeln!(out, "Ours measured on {adapter}.\n");
    }
    out += &versus_fla(summary);
    out += &decode(summary);
    out += &memory(summary);
    out += &kernels(summary);
    if let Some(chart) = chart {
        let _ = writeln!(
            out,
            "![time against tokens per step]({chart})\n\nChart: GPU time (ms, log scale) against tokens per step \
             (log scale). Filled circles: our forward + backward, one colour per family; hollow circles: our \
             forward. Filled triangles: fla bf16 forward + backward; hollow squares: fla bf16 forward; crosses: \
             fla f32 forward + backward.\n"
        );
    }
    out
}

fn versus_fla(summary: &Summary) -> String {
    let mut out = String::from(
        "## Ours against fla (ms of GPU time; ratio = ours / fla, above 1 we are slower)\n\n\
         | family | shape | tokens | fwd | bwd | fwd+bwd | fla bf16 fwd | fla bf16 fwd+bwd | fla f32 fwd+bwd \
         | fwd ratio (bf16) | fwd+bwd ratio (bf16) | fwd+bwd ratio (f32) |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    let mut wall_clock = false;
    for shape in summary.shapes() {
        let refused = summary.skipped.iter().find(|(s, _)| s == &shape).map(|(_, reason)| reason);
        let mut ours = |name: &str| {
            let time = summary.ours(&shape, "layer", name);
            wall_clock |= time.is_some_and(|t| t.clock != "gpu-timestamps");
            time.map(|t| t.median_ms)
        };
        let (fwd, bwd, step) = (ours("forward"), ours("backward"), ours("step"));
        let fla_fwd = summary.fla_at(&shape, "fwd", "bfloat16");
        let fla_step = summary.fla_at(&shape, "bwd", "bfloat16");
        let fla_step_f32 = summary.fla_at(&shape, "bwd", "float32");
        let cells = match refused {
            Some(reason) => format!("refused: {} | — | —", reason.replace('|', "/")),
            None => format!("{} | {} | {}", ms(fwd), ms(bwd), ms(step)),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {cells} | {} | {} | {} | {} | {} | {} |",
            shape.family,
            describe(&shape),
            shape.tokens(),
            ms(fla_fwd),
            ms(fla_step),
            ms(fla_step_f32),
            ratio(fwd, fla_fwd),
            ratio(step, fla_step),
            ratio(step, fla_step_f32),
        );
    }
    if wall_clock {
        out += "\nSome of our figures are wall clock (the adapter had no timestamp queries): not GPU time.\n";
    }
    out + "\nfla: flash-linear-attention's chunked kernel, one CUDA graph replayed (GPU time), core kernel only \
           (L2 norm in kernel, gates given). Ours: the whole layer (conv, norms, gates, recurrence, gated RMSNorm; \
           backward with every parameter gradient), GPU timestamps, criterion's median.\n\n"
}

fn decode(summary: &Summary) -> String {
    if summary.decodes.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Decode step (one new token for each sequence; steps back to back in one compute pass)\n\n\
         | layer | sequences | states | µs per step | state traffic (read + write) | clock |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for d in &summary.decodes {
        let gb_per_s = 2.0 * d.state_bytes as f64 / (d.median_ms * 1e-3) / 1e9;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.2} | {gb_per_s:.0} GB/s | {} |",
            d.layer,
            d.sequences,
            d.states,
            d.median_ms * 1e3,
            d.clock
        );
    }
    out + "\n"
}

fn memory(summary: &Summary) -> String {
    let mut out = String::from(
        "## Device memory of a tape\n\nA tape allocates every buffer when it is made and a step allocates nothing on the \
         device, so this is also the peak device memory of a step (uploads and read-backs pass through \
         wgpu's staging buffers besides).\n\n| family | shape | tokens | MiB | bytes per token |\n| --- | --- | --- | --- | --- |\n",
    );
    for (shape, bytes) in &summary.tapes {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} | {:.0} |",
            shape.family,
            describe(shape),
            shape.tokens(),
            *bytes as f64 / f64::from(1 << 20),
            *bytes as f64 / shape.tokens() as f64
        );
    }
    out + "\n"
}

fn kernels(summary: &Summary) -> String {
    let mut out = String::from(
        "## Per kernel (ms; each dispatch in a compute pass of its own; share of its whole pass)\n\n\
         | family | shape | pass | kernel | dispatches | ms | share |\n| --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for t in summary.times.iter().filter(|t| t.part != "layer") {
        let pass = if t.part == "fwd" { "forward" } else { "backward" };
        let whole = summary.ours(&t.shape, "layer", pass).map(|w| w.median_ms);
        let share = whole.map_or_else(|| "—".into(), |w| format!("{:.1} %", 100.0 * t.median_ms / w));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {share} |",
            t.shape.family,
            t.shape.name,
            t.part,
            t.name,
            t.dispatches,
            ms(Some(t.median_ms))
        );
    }
    out + "\n"
}
