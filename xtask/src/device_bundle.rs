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
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut args = vec!["test", "--release", "--no-run", "--message-format=json"];
    for p in DEVICE_PACKAGES {
        args.extend(["-p", p]);
    }
    let output = Command::new(&cargo)
        .args(&args)
        .current_dir(&root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !output.status.success() {
        return Err("building the test binaries failed".into());
    }
    let mut copied = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else { continue };
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
    let status = Command::new(&cargo).args(["build", "--release", "-p", "gdn-check"]).current_dir(&root).status();
    if !status.map(|s| s.success()).unwrap_or(false) {
        return Err("building gdn-check failed".into());
    }
    std::fs::copy(root.join("target/release/gdn-check"), bin.join("gdn-check"))
        .map_err(|e| format!("copying gdn-check: {e}"))?;
    copied.push("gdn-check".into());
    copied.sort();
    println!("bundled into {}: {}", bin.display(), copied.join(", "));
    Ok(())
}
