//! A TrueType font for the charts the tools draw with plotters (`gdn-check recall --chart`, `cargo
//! xtask bench-report`): plotters' bitmap backend reads one at run time, and a chart drawn without
//! one has no text.

use plotters::style::FontStyle;

/// Registers the first TrueType font found (`GDN_CHART_FONT`, else usual system paths) as
/// plotters' `sans-serif`; returns its path, or `None` when there is none.
pub fn register() -> Option<String> {
    let candidates = std::env::var("GDN_CHART_FONT").into_iter().chain(
        [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
            "/System/Library/Fonts/Supplemental/Arial.ttf",
            "C:\\Windows\\Fonts\\arial.ttf",
        ]
        .map(String::from),
    );
    for path in candidates {
        let Ok(bytes) = std::fs::read(&path) else { continue };
        if plotters::style::register_font("sans-serif", FontStyle::Normal, Box::leak(bytes.into_boxed_slice())).is_ok()
        {
            return Some(path);
        }
    }
    None
}
