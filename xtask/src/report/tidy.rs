//! What `bench/` may hold, and that `BENCHMARKS.md` is what the baselines give: tests that run with
//! `cargo test -p xtask` (and so in `cargo xtask verify`).

use crate::verify::workspace_root;
use std::path::Path;

/// All of `bench/` together stays under this.
const MAX_BENCH_BYTES: u64 = 512 * 1024;

fn walk(dir: &Path, out: &mut Vec<(String, u64)>, root: &Path) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out, root);
        } else {
            let name = path.strip_prefix(root).unwrap().display().to_string();
            out.push((name, entry.metadata().unwrap().len()));
        }
    }
}

#[test]
fn bench_holds_only_scripts_and_baselines() {
    let root = workspace_root();
    let bench = root.join("bench");
    assert!(
        !bench.join("results").exists(),
        "bench/results/ is gone: raw logs stay outside the tree ($OUT, target/bench)"
    );
    let mut files = Vec::new();
    walk(&bench, &mut files, &bench);
    let mut wrong = Vec::new();
    for (name, _) in &files {
        let allowed = match name.split_once('/') {
            None => name.ends_with(".sh") || name.ends_with(".py"),
            Some(("baselines", file)) => !file.contains('/') && file.ends_with(".jsonl"),
            Some(_) => false,
        };
        if !allowed {
            wrong.push(name.as_str());
        }
    }
    assert!(
        wrong.is_empty(),
        "bench/ holds scripts (*.sh, *.py) and baselines/*.jsonl only; raw output goes to $OUT or target/bench: {wrong:?}"
    );
    let total: u64 = files.iter().map(|(_, n)| n).sum();
    assert!(total < MAX_BENCH_BYTES, "bench/ holds {total} bytes, over {MAX_BENCH_BYTES}: curate the baselines");
}

#[test]
fn benchmarks_md_is_what_the_baselines_give() {
    let root = workspace_root();
    let expected = super::generated(&root).unwrap();
    let actual = std::fs::read_to_string(root.join("BENCHMARKS.md")).unwrap();
    if actual != expected {
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| actual.lines().count().min(expected.lines().count()) + 1, |n| n + 1);
        panic!(
            "BENCHMARKS.md differs from what bench/baselines/*.jsonl give from line {line}: run `cargo xtask bench-report render`"
        );
    }
}
