//! The chart: GPU time against tokens per step, log-log, our families beside fla, drawn to a PNG
//! with plotters' bitmap backend. Text needs a TrueType font read at run time (`GDN_CHART_FONT`,
//! else a few usual system paths): without one the chart is drawn without any text, and the
//! markdown's key says what each marker is.

use super::summary::{Shape, Summary};
use plotters::prelude::*;
use std::path::Path;

/// How a series' points are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    /// A circle, filled or hollow.
    Circle(bool),
    /// A filled triangle.
    Triangle,
    /// A square, filled or hollow.
    Square(bool),
    /// A cross.
    Cross,
}

/// One series of points (tokens per step, ms, shape name).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its legend.
    pub label: String,
    /// Its colour.
    pub color: RGBColor,
    /// Its marker.
    pub marker: Marker,
    /// Its points.
    pub points: Vec<(f64, f64, String)>,
}

const FAMILY_COLORS: [RGBColor; 4] =
    [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44), RGBColor(148, 103, 189)];
const FLA_BF16: RGBColor = RGBColor(255, 127, 14);
const FLA_F32: RGBColor = RGBColor(110, 110, 110);

/// Our forward and forward + backward per family, and fla's graph figures at the same shapes.
pub fn series(summary: &Summary) -> Vec<Series> {
    let shapes = summary.shapes();
    let mut families: Vec<&str> = Vec::new();
    for s in &shapes {
        if !families.contains(&s.family.as_str()) {
            families.push(&s.family);
        }
    }
    let mut out = Vec::new();
    for (n, family) in families.iter().enumerate() {
        let color = FAMILY_COLORS[n % FAMILY_COLORS.len()];
        for (name, label, filled) in [("step", "fwd+bwd", true), ("forward", "fwd", false)] {
            let points = shapes
                .iter()
                .filter(|s| s.family == *family)
                .filter_map(|s| {
                    summary.ours(s, "layer", name).map(|t| (s.tokens() as f64, t.median_ms, s.name.clone()))
                })
                .collect();
            out.push(Series {
                label: format!("ours, {family}, {label}"),
                color,
                marker: Marker::Circle(filled),
                points,
            });
        }
    }
    let mut fla_shapes: Vec<&Shape> = Vec::new();
    for s in &shapes {
        if !fla_shapes.iter().any(|f| (f.b, f.t, f.nk, f.nv, f.dk) == (s.b, s.t, s.nk, s.nv, s.dk)) {
            fla_shapes.push(s);
        }
    }
    for (mode, dtype, label, color, marker) in [
        ("bwd", "bfloat16", "fla bf16 fwd+bwd", FLA_BF16, Marker::Triangle),
        ("fwd", "bfloat16", "fla bf16 fwd", FLA_BF16, Marker::Square(false)),
        ("bwd", "float32", "fla f32 fwd+bwd", FLA_F32, Marker::Cross),
    ] {
        let points = fla_shapes
            .iter()
            .filter_map(|s| summary.fla_at(s, mode, dtype).map(|ms| (s.tokens() as f64, ms, s.name.clone())))
            .collect();
        out.push(Series { label: label.into(), color, marker, points });
    }
    out.retain(|s| !s.points.is_empty());
    out
}

/// Draws `series` into a PNG at `path`. With a `title`, also the axes' numbers, the point names
/// and a legend (text needs `gdn_check::chart_font::register` to have found a font); without, no text at all.
pub fn draw(series: &[Series], path: &Path, title: Option<&str>) -> Result<(), String> {
    let text = title.is_some();
    let err = |e: &dyn std::fmt::Display| format!("drawing {}: {e}", path.display());
    let points = || series.iter().flat_map(|s| &s.points);
    let bounds = |f: fn(&(f64, f64, String)) -> f64| {
        points().map(f).fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)))
    };
    let ((x0, x1), (y0, y1)) = (bounds(|p| p.0), bounds(|p| p.1));
    if !(x0.is_finite() && y0 > 0.0) {
        return Err(format!("drawing {}: no positive figures to plot", path.display()));
    }
    let root = BitMapBackend::new(path, (1100, 700)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    // Without text there are no label areas at all: plotters measures labels with the font.
    builder.margin(24).x_label_area_size(if text { 56 } else { 0 }).y_label_area_size(if text { 80 } else { 0 });
    if let Some(title) = title {
        builder.caption(title, ("sans-serif", 24));
    }
    let mut chart = builder
        .build_cartesian_2d((x0 / 2.0..x1 * 2.0).log_scale(), (y0 / 2.0..y1 * 2.0).log_scale())
        .map_err(|e| err(&e))?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc("tokens per step")
            .y_desc("ms of GPU time")
            .x_label_formatter(&|tokens| format!("{tokens:.0}"))
            .label_style(("sans-serif", 16));
    }
    mesh.draw().map_err(|e| err(&e))?;
    for s in series {
        let (color, at) = (s.color, s.points.iter().map(|p| (p.0, p.1)));
        let style = move |filled: bool| if filled { color.filled() } else { color.stroke_width(2) };
        let drawn = match s.marker {
            Marker::Circle(filled) => chart.draw_series(at.map(|c| Circle::new(c, 7, style(filled)))),
            Marker::Triangle => chart.draw_series(at.map(|c| TriangleMarker::new(c, 8, style(true)))),
            Marker::Square(filled) => {
                chart.draw_series(at.map(|c| EmptyElement::at(c) + Rectangle::new([(-6, -6), (6, 6)], style(filled))))
            }
            Marker::Cross => chart.draw_series(at.map(|c| Cross::new(c, 7, style(false)))),
        }
        .map_err(|e| err(&e))?;
        if text {
            let marker = s.marker;
            drawn.label(&s.label).legend(move |(x, y)| -> DynElement<'static, _, _> {
                match marker {
                    Marker::Circle(filled) => Circle::new((x + 8, y), 6, style(filled)).into_dyn(),
                    Marker::Triangle => TriangleMarker::new((x + 8, y), 7, style(true)).into_dyn(),
                    Marker::Square(filled) => {
                        Rectangle::new([(x + 3, y - 5), (x + 13, y + 5)], style(filled)).into_dyn()
                    }
                    Marker::Cross => Cross::new((x + 8, y), 6, style(false)).into_dyn(),
                }
            });
            let names = s.points.iter().map(|(x, y, name)| {
                EmptyElement::at((*x, *y))
                    + Text::new(name.clone(), (10, -14), ("sans-serif", 14).into_font().color(&color))
            });
            chart.draw_series(names).map_err(|e| err(&e))?;
        }
    }
    if text {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 16))
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}
