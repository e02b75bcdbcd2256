//! `cargo xtask web`: the browser check. Writes the generated WGSL of every f32 kernel with a
//! manifest ([`kernels`]), serves the committed page `web/` and those files on 127.0.0.1
//! ([`server`]), opens the page in headless Chromium ([`chromium`], driven through [`cdp`]), waits
//! for the page to post its report, takes a screenshot of the page's result tables, and judges the
//! report ([`report`]): the adapter, the metric and executor self-tests, every plan's checks
//! against their bars, and every kernel compiled by Tint. Everything lands in `target/web/`.
//!
//! Why a browser at all: the README says the layer runs on the web, and a browser compiles WGSL
//! with its own compiler (Tint, in Chrome) under its own limits; only a browser can say whether it
//! does (issue 13).

mod cdp;
mod chromium;
mod kernels;
mod layer_cases;
mod report;
mod server;

use crate::verify::workspace_root;
use clap::Args;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// What the page and the browser tell the waiting command.
pub enum Event {
    /// The page posted a result.
    Posted(server::Posted),
    /// A line of the page's console.
    Console(String),
    /// An uncaught exception or a crash of the page.
    PageError(String),
    /// Chromium closed its end of the DevTools pipe (it exited).
    BrowserGone,
}

/// Options of `cargo xtask web`.
#[derive(Args)]
pub struct WebArgs {
    /// Seconds to wait for the page's report before failing: a guard against a hung page, well
    /// above the whole check's time on a 2-core machine (most of it SwiftShader compiling
    /// chunk_grad's four variants).
    #[arg(long, default_value_t = 420)]
    timeout: u64,
    /// A folder holding a plan.json (and the files it names) to run after the self-test; repeatable.
    #[arg(long, value_name = "DIR")]
    plan: Vec<PathBuf>,
    /// Compile only this kernel (by name, e.g. chunk_state); repeatable. All f32 kernels when absent.
    #[arg(long, value_name = "NAME")]
    kernel: Vec<String>,
    /// Do not run the layer's own cases (forward and backward against gdn-ref).
    #[arg(long)]
    no_layer: bool,
    /// Do not compile the kernels (runs the plans only).
    #[arg(long)]
    no_kernels: bool,
    /// Fail on kernel variants over the adapter's limits. By default they are reported only: the
    /// layer's plans take the kernels that fit the device, and its cases prove the layer runs.
    #[arg(long)]
    strict_limits: bool,
    /// Serve the page and wait, without starting Chromium: open the printed address yourself.
    #[arg(long)]
    serve: bool,
    /// An extra Chromium flag (e.g. --chromium-arg=--use-webgpu-adapter=swiftshader); repeatable.
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    chromium_arg: Vec<String>,
}

/// Runs the browser check; an error names what failed or what did not happen in time.
pub fn run(args: &WebArgs) -> Result<(), String> {
    let started = Instant::now();
    let root = workspace_root();
    let out =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target")).join("web");
    let (gen_dir, results) = (out.join("gen"), out.join("results"));
    for dir in [&gen_dir, &results] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| format!("clearing {}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let chromium = if args.serve { None } else { Some(chromium::ensure_installed()?) };

    let mut mounts = vec![("/".to_string(), root.join("web")), ("/gen/".to_string(), gen_dir.clone())];
    let mut plans = vec!["selftest/plan.json".to_string()];
    for (i, dir) in args.plan.iter().enumerate() {
        if !dir.join("plan.json").is_file() {
            return Err(format!("--plan {}: no plan.json there", dir.display()));
        }
        let dir = dir.canonicalize().map_err(|e| format!("--plan {}: {e}", dir.display()))?;
        mounts.push((format!("/plans/{i}/"), dir));
        plans.push(format!("plans/{i}/plan.json"));
    }
    let mut ran = HashMap::new();
    if !args.no_layer {
        let (names, shaders) = layer_cases::write(&gen_dir.join("layer"))?;
        for name in names {
            plans.push(format!("gen/layer/{name}/plan.json"));
        }
        ran = shaders;
        println!(
            "==> web: {} layer cases (plans from gdn-wgsl, expected values from gdn-ref)",
            plans.len() - 1 - args.plan.len()
        );
    }
    let kernels = if args.no_kernels {
        None
    } else {
        let count = kernels::write(&gen_dir.join("kernels"), &args.kernel, &ran)?;
        println!(
            "==> web: {count} kernel variants (f32; dk×dv in {:?}) written to {}",
            kernels::DIMS,
            gen_dir.display()
        );
        Some("gen/kernels/manifest.json")
    };
    let config = json!({ "plans": plans, "selfTest": "selftest/plan.json", "kernels": kernels });
    std::fs::write(gen_dir.join("config.json"), config.to_string()).map_err(|e| format!("writing config.json: {e}"))?;

    let (events_tx, events) = channel();
    let server = server::start(mounts, results.clone(), events_tx.clone())?;
    let page = format!("{}/index.html", server.origin);
    let Some(chromium) = chromium else {
        println!("==> web: serving {page} (results go to {}); Ctrl-C ends", results.display());
        for event in events {
            if let Event::Posted(posted) = event {
                println!("==> web: the page posted {}", posted.name);
                if let Err(failed) = report::judge(&posted.json, &results, args.strict_limits) {
                    println!("{failed}");
                }
            }
        }
        return Ok(());
    };

    let log = out.join("chromium.log");
    let browser = chromium::launch(&chromium, &out.join("profile"), &args.chromium_arg, &log)?;
    let mut child = browser.child;
    let console_log =
        std::fs::File::create(out.join("console.log")).map_err(|e| format!("creating console.log: {e}"))?;
    let mut cdp = cdp::Cdp::new(browser.to_browser, browser.from_browser, events_tx, console_log);
    let outcome = drive(&mut cdp, &page, &events, args.timeout, &out, &log);
    let _ = cdp.call("Browser.close", json!({}), None);
    wait_or_kill(&mut child);
    let report = outcome?;
    println!("==> web: results in {} (report.json, screenshot.png, console.log)", out.display());
    let verdict = report::judge(&report, &results, args.strict_limits);
    println!("==> web: {} in {:.1?}", if verdict.is_ok() { "passed" } else { "failed" }, started.elapsed());
    verdict
}

/// Opens the page, waits for its report, takes the screenshot; returns the report.
fn drive(
    cdp: &mut cdp::Cdp,
    page: &str,
    events: &std::sync::mpsc::Receiver<Event>,
    timeout: u64,
    out: &Path,
    log: &Path,
) -> Result<serde_json::Value, String> {
    let started = Instant::now();
    let target = cdp
        .call("Target.createTarget", json!({ "url": "about:blank" }), None)
        .map_err(|e| format!("Chromium did not start (see {}): {e}", log.display()))?;
    let target_id = target["targetId"].as_str().ok_or("Target.createTarget returned no targetId")?.to_string();
    let attached = cdp.call("Target.attachToTarget", json!({ "targetId": target_id, "flatten": true }), None)?;
    let session = attached["sessionId"].as_str().ok_or("Target.attachToTarget returned no sessionId")?.to_string();
    let session = Some(session.as_str());
    cdp.call("Runtime.enable", json!({}), session)?;
    cdp.call("Page.enable", json!({}), session)?;
    cdp.call("Page.navigate", json!({ "url": page }), session)?;
    println!("==> web: Chromium opened {page}");

    let deadline = started + Duration::from_secs(timeout);
    let mut last_line = String::from("(the page logged nothing)");
    let report = loop {
        match events.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Event::Posted(posted)) if posted.name == "report" => break posted.json,
            Ok(Event::Posted(posted)) => println!("==> web: the page posted {}", posted.name),
            Ok(Event::Console(line)) => {
                if let Some(progress) = line.strip_prefix("log: progress: ") {
                    if progress.starts_with("plan")
                        || progress.starts_with("compiling")
                        || progress.starts_with("request")
                    {
                        println!("    page: {progress}");
                    }
                } else {
                    println!("    page {line}");
                }
                last_line = line;
            }
            Ok(Event::PageError(error)) => {
                println!("    page: {error}");
                last_line = error;
            }
            Ok(Event::BrowserGone) => {
                return Err(format!(
                    "Chromium exited before the page posted its report (its output: {}; the page's last line: {last_line})",
                    log.display()
                ));
            }
            Err(RecvTimeoutError::Timeout) => {
                // What the browser shows by then says how far it got.
                let _ = screenshot(cdp, session, &out.join("screenshot.png"));
                return Err(format!(
                    "the page did not post its report within {timeout} s (raise --timeout?); its last line: {last_line}; \
                     screenshot.png shows the page then"
                ));
            }
            Err(RecvTimeoutError::Disconnected) => return Err("the server and the browser both went away".into()),
        }
    };
    println!("==> web: the page reported after {:.1?}", started.elapsed());
    screenshot(cdp, session, &out.join("screenshot.png"))?;
    Ok(report)
}

/// A PNG of the page's report element (`#report`), the whole of it however long.
fn screenshot(cdp: &mut cdp::Cdp, session: Option<&str>, file: &Path) -> Result<(), String> {
    let rect = cdp.call(
        "Runtime.evaluate",
        json!({
            "expression": "(() => { const r = document.getElementById('report').getBoundingClientRect(); \
                           return { x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height }; })()",
            "returnByValue": true,
        }),
        session,
    )?;
    let mut clip = rect["result"]["value"].clone();
    if !clip["width"].is_number() {
        return Err(format!("the page has no #report element to photograph: {rect}"));
    }
    clip["scale"] = json!(1);
    let shot = cdp.call(
        "Page.captureScreenshot",
        json!({ "format": "png", "clip": clip, "captureBeyondViewport": true }),
        session,
    )?;
    let data = shot["data"].as_str().ok_or("Page.captureScreenshot returned no data")?;
    let png = cdp::base64_decode(data)?;
    std::fs::write(file, png).map_err(|e| format!("writing {}: {e}", file.display()))
}

/// Gives Chromium a few seconds to exit after Browser.close, then kills it.
fn wait_or_kill(child: &mut std::process::Child) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}
