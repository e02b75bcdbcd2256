//! Builds what a GPU machine with no Rust toolchain runs: the `gdn-check` binary and the
//! integration-test binaries of the crates that touch the device (their unit tests need none), in
//! release mode, copied to `.dev/bin` under stable names (`test-<crate>-<target>`). The device tool
//! carries at most 64 MiB, so these binaries are linked without symbols (`[profile.release]`).

use crate::verify::workspace_root;
use std::process::{Command, Stdio};

/// Packages whose test binaries need a device.
const DEVICE_PACKAGES: [&str; 2] = ["gdn-train", "gdn-check"];

pub fn run() -> Result<(), String> {
    let root = workspace_root();
    let bin = root.join(".dev/bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("creating {}: {e}", bin.display()))?;
    let mut args = vec!["test", "--release", "--no-run"];
    for p in DEVICE_PACKAGES {
        args.extend(["-p", p]);
    }
    let mut copied = Vec::new();
    for message in cargo_artifacts(&root, &args)? {
        let (Some(exe), Some(target), Some(package)) =
            (message["executable"].as_str(), message["target"]["name"].as_str(), message["package_id"].as_str())
        else {
            continue;
        };
        let Some(crate_name) =
            DEVICE_PACKAGES.iter().find(|p| package.contains(&format!("/{p}#")) || package.contains(&format!("{p}@")))
        else {
            continue;
        };
        if !message["target"]["kind"].as_array().is_some_and(|kinds| kinds.iter().any(|k| k == "test")) {
            continue;
        }
        let name = format!("test-{crate_name}-{target}");
        std::fs::copy(exe, bin.join(&name)).map_err(|e| format!("copying {exe}: {e}"))?;
        copied.push(name);
    }
    // The binary cargo reports, wherever CARGO_TARGET_DIR puts it.
    let gdn_check = cargo_artifacts(&root, &["build", "--release", "-p", "gdn-check", "--bin", "gdn-check"])?
        .into_iter()
        .find_map(|message| message["executable"].as_str().map(String::from))
        .ok_or("cargo reported no gdn-check executable")?;
    std::fs::copy(&gdn_check, bin.join("gdn-check")).map_err(|e| format!("copying {gdn_check}: {e}"))?;
    copied.push("gdn-check".into());
    copied.sort();
    println!("bundled into {}: {}", bin.display(), copied.join(", "));
    Ok(())
}

/// Runs cargo with `args` and JSON messages in `root`, and returns its compiler-artifact messages.
fn cargo_artifacts(root: &std::path::Path, args: &[&str]) -> Result<Vec<serde_json::Value>, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(&cargo)
        .args(args)
        .arg("--message-format=json")
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("cargo {} failed", args.join(" ")));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact")
        .collect())
}
