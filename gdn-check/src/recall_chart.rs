//! The recall model's learning curves drawn to a PNG: loss above, accuracy below with chance marked,
//! against the training step (text where a font is found, `gdn_check::chart_font`).

use gdn_check::chart_font;
use gdn_check::recall::StepRecord;
use plotters::prelude::*;
use std::path::Path;

/// What a panel plots of each step.
type Measure = fn(&StepRecord) -> f32;

/// Draws `records` into `path`.
pub fn draw(records: &[StepRecord], chance: f32, path: &Path) -> Result<(), String> {
    let err = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    let text = chart_font::register().is_some();
    let steps = records.len().max(2) as f64;
    let max_loss = records.iter().map(|r| f64::from(r.loss)).fold(0.0, f64::max).max(1e-3);
    let root = BitMapBackend::new(path, (900, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (top, bottom) = root.split_vertically(350);
    let panels: [(_, &str, f64, Measure, RGBColor); 2] = [
        (top, "loss (cross-entropy over the queries)", max_loss * 1.05, |r| r.loss, RED),
        (bottom, "accuracy (dashed: chance)", 1.0, |r| r.accuracy, BLUE),
    ];
    for (n, (area, what, y_max, value, color)) in panels.into_iter().enumerate() {
        let mut builder = ChartBuilder::on(&area);
        builder.margin(16).x_label_area_size(if text { 40 } else { 0 }).y_label_area_size(if text { 60 } else { 0 });
        if text {
            builder.caption(what, ("sans-serif", 20));
        }
        let mut chart = builder.build_cartesian_2d(0.0..steps, 0.0..y_max).map_err(|e| err(&e))?;
        let mut mesh = chart.configure_mesh();
        if text {
            mesh.x_desc("step").x_label_formatter(&|x| format!("{x:.0}")).label_style(("sans-serif", 14));
        }
        mesh.draw().map_err(|e| err(&e))?;
        let points = records.iter().map(|r| (r.step as f64, f64::from(value(r))));
        chart.draw_series(LineSeries::new(points, color.stroke_width(2))).map_err(|e| err(&e))?;
        if n == 1 {
            let level = f64::from(chance);
            let dashes = (0..(steps as usize / 8).max(1))
                .map(|i| PathElement::new([(i as f64 * 8.0, level), (i as f64 * 8.0 + 4.0, level)], BLACK));
            chart.draw_series(dashes).map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))
}
