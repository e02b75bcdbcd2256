//! Headless Chromium for the browser check: installed from Debian's `chromium` package when absent
//! (the way `.ci/run` installs Mesa), started with the flags that give WebGPU an adapter on a
//! machine without a GPU (SwiftShader, Chromium's software Vulkan), and driven through its DevTools
//! protocol over `--remote-debugging-pipe` ([`super::cdp`]), which needs no websocket and no npm.
//!
//! The flags, as found on Debian 12's Chromium 148 on a GPU-less machine: `--enable-unsafe-webgpu`
//! is what exposes `navigator.gpu` with an adapter in headless mode; `--disable-gpu` must *not* be
//! given (it removes the GPU process, and with it the SwiftShader adapter); nothing else is needed
//! (`--use-webgpu-adapter=swiftshader` or `--use-angle=swiftshader` change nothing here).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Where Debian's package puts the browser.
const DEBIAN_CHROMIUM: &str = "/usr/bin/chromium";

/// Flags of every run, besides the profile folder and the DevTools pipe.
pub const FLAGS: &[&str] = &[
    "--headless=new",
    "--no-sandbox",
    "--enable-unsafe-webgpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-quic",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
    "--window-size=1280,1000",
];

/// The browser to run: `$CHROMIUM` when set, else Debian's, installed first if absent.
pub fn ensure_installed() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("CHROMIUM") {
        return Ok(PathBuf::from(path));
    }
    let path = PathBuf::from(DEBIAN_CHROMIUM);
    if path.exists() {
        return Ok(path);
    }
    println!("==> web: {DEBIAN_CHROMIUM} is absent; installing Debian's chromium package");
    let install = || apt(&["install", "-y", "chromium"]);
    if !install()? {
        println!("==> web: apt-get install failed; apt-get update, then again");
        if !apt(&["update"])? || !install()? {
            return Err("installing Debian's chromium package failed (apt-get output above)".into());
        }
    }
    if !path.exists() {
        return Err(format!("apt-get installed chromium but {DEBIAN_CHROMIUM} is still absent"));
    }
    Ok(path)
}

/// Runs apt-get, through sudo unless we are root; whether it succeeded.
fn apt(args: &[&str]) -> Result<bool, String> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .map_err(|e| format!("running id -u: {e}"))?;
    let mut command = if root { Command::new("apt-get") } else { Command::new("sudo") };
    if !root {
        command.arg("apt-get");
    }
    let status = command
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .status()
        .map_err(|e| format!("starting apt-get: {e}"))?;
    Ok(status.success())
}

/// A running browser and the two ends of its DevTools pipe.
pub struct Browser {
    /// The process (a shell that became Chromium).
    pub child: Child,
    /// What we write protocol messages to (Chromium's fd 3).
    pub to_browser: ChildStdin,
    /// What Chromium writes its messages to (its fd 4).
    pub from_browser: ChildStdout,
}

/// Starts `chromium` with [`FLAGS`], `extra` flags, a fresh profile in `profile` and the DevTools
/// pipe; its own output goes to `log`. Opens no page: the caller creates one through the protocol.
pub fn launch(chromium: &Path, profile: &Path, extra: &[String], log: &Path) -> Result<Browser, String> {
    if profile.exists() {
        std::fs::remove_dir_all(profile).map_err(|e| format!("clearing {}: {e}", profile.display()))?;
    }
    std::fs::create_dir_all(profile).map_err(|e| format!("creating {}: {e}", profile.display()))?;
    let log = File::create(log).map_err(|e| format!("creating {}: {e}", log.display()))?;
    // `--remote-debugging-pipe` reads fd 3 and writes fd 4. std sets only 0, 1 and 2, so a shell
    // moves our pipes there, then points 0 at /dev/null and 1 at the log (2).
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>&2"#)
        .arg(chromium)
        .args(FLAGS)
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--remote-debugging-pipe")
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .map_err(|e| format!("starting {}: {e}", chromium.display()))?;
    let to_browser = child.stdin.take().expect("piped");
    let from_browser = child.stdout.take().expect("piped");
    Ok(Browser { child, to_browser, from_browser })
}
