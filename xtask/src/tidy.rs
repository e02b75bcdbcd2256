//! Tidy tests, run by `cargo test -p xtask` and so by `cargo xtask verify` (modelled on
//! rust-analyzer's `xtask/src/tidy.rs`):
//!
//! - no device timings (a figure with a unit of time or throughput) in the comments of `.rs`
//!   files or in `.wgsl` templates: figures rot, so they live in BENCHMARKS.md and `bench/`, and a
//!   comment keeps the reason and names the bench that shows it;
//! - every `.rs` file opens with a `//!` doc saying what the module is for;
//! - the README's "what a change touches" table names only paths that exist.

use crate::verify::workspace_root;
use std::path::{Path, PathBuf};

/// Folders never scanned: build output, version control, browser tooling, and `bench/`, whose
/// results are where figures belong.
const SKIPPED_DIRS: &[&str] = &["target", ".git", ".dev", "node_modules", "bench"];

/// Files (or folders, ending in `/`) whose comments may carry figures with units, and why.
const TIMINGS_ALLOWED: &[(&str, &str)] = &[(
    "xtask/src/report/",
    "the bench report parses, converts and renders figures: its comments and tests are about units",
)];

/// The units a timing ends with. A figure is a number followed by one of these (and not by a
/// letter or digit, so `16 usize` is no timing).
const UNITS: &[&str] = &["µs", "μs", "us", "ns", "ms", "TFLOP", "GFLOP", "TB/s", "GB/s", "TiB/s", "GiB/s", "tokens/s"];

#[test]
fn no_timings_in_comments_or_templates() {
    let root = workspace_root();
    let mut found = Vec::new();
    for path in files(&root, &["rs", "wgsl"]) {
        let relative = relative(&root, &path);
        let allowed =
            |(path, _): &&(&str, &str)| *path == relative || (path.ends_with('/') && relative.starts_with(path));
        if TIMINGS_ALLOWED.iter().any(|entry| allowed(&entry)) {
            continue;
        }
        let text = read(&path);
        for (line, comment) in comments(&text) {
            if let Some(figure) = timing(&comment) {
                let comment = comment.trim_start_matches(['/', '!', '*']).trim();
                found.push(format!("{relative}:{line}: `{figure}` in `{comment}`"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "device timings in comments (keep the reason, name the bench that shows it, e.g. \
         \"see BENCHMARKS.md, S4\"):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_module_has_a_doc() {
    let root = workspace_root();
    let missing: Vec<String> = files(&root, &["rs"])
        .into_iter()
        .filter(|path| !read(path).trim_start().starts_with("//!"))
        .map(|path| relative(&root, &path))
        .collect();
    assert!(missing.is_empty(), ".rs files without a leading `//!` doc:\n{}", missing.join("\n"));
}

#[test]
fn the_readme_change_table_names_paths_that_exist() {
    let root = workspace_root();
    let readme = read(&root.join("README.md"));
    let rows = change_table(&readme).expect("README.md has a \"What a change touches\" section with a table");
    assert!(rows.len() > 1, "the change table has rows: {rows:?}");
    let mut named = 0;
    let mut missing = Vec::new();
    for row in &rows {
        for path in row_paths(row) {
            named += 1;
            if !exists(&root, &path) {
                missing.push(path);
            }
        }
    }
    assert!(named > 0, "the change table names no path: {rows:?}");
    assert!(
        missing.is_empty(),
        "README's \"What a change touches\" names paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// Every file under `root` with one of `extensions`, outside [`SKIPPED_DIRS`], sorted.
fn files(root: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                if !SKIPPED_DIRS.contains(&name) && !name.starts_with('.') {
                    dirs.push(path);
                }
            } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.contains(&e)) {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// `path` relative to `root`, with `/` separators.
fn relative(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

/// The comments of a Rust or WGSL source, with the line each starts on (1-based): line comments
/// (doc comments included) and block comments, skipping string, raw-string and char literals.
fn comments(text: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize, s: &str| s.chars().enumerate().all(|(k, c)| chars.get(i + k) == Some(&c));
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if at(i, "//") {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |n| i + n);
            found.push((line, chars[i + 2..end].iter().collect()));
            i = end;
        } else if at(i, "/*") {
            let (start, mut depth) = (line, 0);
            let mut body = String::new();
            while i < chars.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    body.push(chars[i]);
                    i += 1;
                }
            }
            found.push((start, body));
        } else if c == 'r' && (at(i + 1, "\"") || at(i + 1, "#")) && (i == 0 || !is_ident(chars[i - 1])) {
            // A raw string `r#"…"#`, or an identifier starting with r (`r#type`, no quote).
            let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            i += 2 + hashes;
            while i < chars.len() && !at(i, &close) {
                line += usize::from(chars[i] == '\n');
                i += 1;
            }
            i += close.chars().count();
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                line += usize::from(chars[i] == '\n');
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\''), or a lifetime or label ('a), which ends at no quote.
            if chars.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    found
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The first figure with a unit in `comment` ([`UNITS`]): a number not glued to a word before it,
/// then optional spaces, then the unit, not glued to a word after it.
fn timing(comment: &str) -> Option<String> {
    let chars: Vec<char> = comment.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == '.')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_digit() || (chars[i] == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
        {
            i += 1;
        }
        let mut j = i;
        while j < chars.len() && matches!(chars[j], ' ' | '\u{a0}' | '\u{202f}' | '\u{2009}') {
            j += 1;
        }
        let rest: String = chars[j..].iter().collect();
        for unit in UNITS {
            if let Some(after) = rest.strip_prefix(unit) {
                let glued = after
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() && !unit.starts_with("TFLOP") && !unit.starts_with("GFLOP"));
                if !glued {
                    let number: String = chars[start..i].iter().collect();
                    return Some(format!("{number} {unit}"));
                }
            }
        }
    }
    None
}

/// The rows of the first table after the README's heading that names "what a change touches".
fn change_table(readme: &str) -> Option<Vec<String>> {
    let mut lines =
        readme.lines().skip_while(|l| !(l.starts_with('#') && l.to_lowercase().contains("what a change touches")));
    lines.next()?;
    let rows: Vec<String> = lines
        .take_while(|l| !l.starts_with('#'))
        .skip_while(|l| !l.trim_start().starts_with('|'))
        .take_while(|l| l.trim_start().starts_with('|'))
        .filter(|l| !l.contains("---"))
        .map(str::to_string)
        .collect();
    (!rows.is_empty()).then_some(rows)
}

/// The paths a table row names: its code spans that look like a path (a `/` or a file
/// extension, no spaces, no `::`), with `{a,b}` alternatives expanded.
fn row_paths(row: &str) -> Vec<String> {
    let spans = row.split('`').skip(1).step_by(2);
    let looks_like_path = |s: &&str| {
        !s.contains(' ')
            && !s.contains("::")
            && (s.contains('/') || [".rs", ".wgsl", ".md", ".toml", ".sh"].iter().any(|e| s.ends_with(e)))
    };
    spans.filter(looks_like_path).flat_map(expand_braces).collect()
}

/// `a/{b,c}.rs` → `a/b.rs`, `a/c.rs` (one level of braces).
fn expand_braces(path: &str) -> Vec<String> {
    match (path.find('{'), path.find('}')) {
        (Some(open), Some(close)) if open < close => path[open + 1..close]
            .split(',')
            .map(|alternative| format!("{}{alternative}{}", &path[..open], &path[close + 1..]))
            .flat_map(|p| expand_braces(&p))
            .collect(),
        _ => vec![path.to_string()],
    }
}

/// Whether `path` (relative to `root`) exists; a segment `<name>` (or one containing it, as in
/// `<family>.rs`) matches any entry with the same text around the placeholder.
fn exists(root: &Path, path: &str) -> bool {
    let mut candidates = vec![root.to_path_buf()];
    for segment in path.trim_end_matches('/').split('/') {
        let (before, after) = match (segment.find('<'), segment.find('>')) {
            (Some(open), Some(close)) if open < close => (&segment[..open], Some(&segment[close + 1..])),
            _ => (segment, None),
        };
        candidates = candidates
            .into_iter()
            .flat_map(|dir| match after {
                None => vec![dir.join(segment)].into_iter().filter(|p| p.exists()).collect::<Vec<_>>(),
                Some(after) => std::fs::read_dir(&dir)
                    .map(|entries| {
                        entries
                            .filter_map(|e| e.ok())
                            .filter(|e| {
                                let name = e.file_name().to_string_lossy().to_string();
                                name.len() > before.len() + after.len()
                                    && name.starts_with(before)
                                    && name.ends_with(after)
                            })
                            .map(|e| e.path())
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect();
    }
    !candidates.is_empty()
}

#[test]
fn the_scanner_finds_timings_in_comments_only() {
    let source = "fn f() { let s = \"48 µs // 3 ms\"; } // the column backward 48 µs\n\
                  /// a doc with 1.5 TFLOP/s\n\
                  /* a block\n with 12 GB/s */\n\
                  // 16 usize, f32 ms, 5 s, Duration::from_millis(50)\n\
                  let c = '\"'; // 7 msg\n\
                  let r = r#\"// 9 ms\"#;\n";
    let found: Vec<(usize, Option<String>)> = comments(source).into_iter().map(|(l, c)| (l, timing(&c))).collect();
    assert_eq!(
        found,
        vec![
            (1, Some("48 µs".into())),
            (2, Some("1.5 TFLOP".into())),
            (3, Some("12 GB/s".into())),
            (5, None),
            (6, None),
        ]
    );
}

#[test]
fn change_table_paths_expand_and_match_placeholders() {
    assert_eq!(row_paths("| a | `x/{a,b}.rs` and `Family::ALL`, `not a path` |"), ["x/a.rs", "x/b.rs"]);
    let root = workspace_root();
    assert!(exists(&root, "xtask/src/<name>.rs"));
    assert!(exists(&root, "xtask/src/"));
    assert!(!exists(&root, "xtask/src/<name>.nothing"));
    let readme = "# x\n## What a change touches\n\ntext\n\n| to | files |\n| --- | --- |\n| a | `b/c` |\n\nafter\n";
    assert_eq!(change_table(readme), Some(vec!["| to | files |".into(), "| a | `b/c` |".into()]));
}
