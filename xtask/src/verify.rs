//! The merge gate: every step a cargo invocation, run in order from the workspace root: format,
//! lints, tests, and the browser check (`cargo xtask web`). The tests include xtask's own tidy
//! tests (`tidy.rs`: no timings in comments, a doc on every module, a README change table that
//! matches the tree).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// One named step of the gate.
struct Step {
    name: &'static str,
    args: &'static [&'static str],
}

const STEPS: &[Step] = &[
    Step { name: "format", args: &["fmt", "--all", "--check"] },
    Step { name: "lints", args: &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"] },
    Step { name: "tests", args: &["test", "--workspace"] },
    // The browser check: every f32 kernel through Tint, and the layer's forward and backward in
    // Chromium's WebGPU against gdn-ref (installs Chromium when absent). The recurrent backwards
    // bind 11 and 12 storage buffers, over SwiftShader's 10: reported, not failed (the layer cases
    // run the chunked family, which fits).
    Step { name: "web", args: &["run", "-q", "-p", "xtask", "--", "web"] },
];

/// Runs every step; the first failure ends the gate.
pub fn run() -> Result<(), String> {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let started = Instant::now();
    for (n, step) in STEPS.iter().enumerate() {
        println!("==> verify {}/{}: {} (cargo {})", n + 1, STEPS.len(), step.name, step.args.join(" "));
        let step_start = Instant::now();
        let status = Command::new(&cargo)
            .args(step.args)
            .current_dir(&root)
            .status()
            .map_err(|e| format!("could not start cargo for step '{}': {e}", step.name))?;
        if !status.success() {
            return Err(format!("step '{}' failed ({status})", step.name));
        }
        println!("==> {} passed in {:.0?}", step.name, step_start.elapsed());
    }
    println!("==> verify passed in {:.0?}", started.elapsed());
    Ok(())
}

/// The directory above `xtask/`.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_path_buf()
}
