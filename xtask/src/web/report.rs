//! Judges the page's report and says what it found: the adapter and its limits, the self-tests,
//! every plan check (tensor, error, bar, verdict) and every kernel variant Tint compiled or refused.
//! The same text goes to the terminal and to `summary.md` beside the report.
//!
//! The check fails on: no adapter or a page that stopped, a failing self-test, a plan that could
//! not run or a tensor over its bar, and a kernel Tint refuses. A kernel over the adapter's limits
//! is reported (the layer's plans take the kernels that fit the device, so its cases show whether
//! the layer runs there); `--strict-limits` fails on it too.

use serde_json::Value;
use std::fmt::Write;
use std::path::Path;

/// The limits the summary names.
const LIMITS: [&str; 5] = [
    "maxStorageBuffersPerShaderStage",
    "maxComputeWorkgroupStorageSize",
    "maxStorageBufferBindingSize",
    "maxComputeInvocationsPerWorkgroup",
    "maxBufferSize",
];

/// An error as the page sent it: a number, or "Infinity" / "NaN" as text.
fn error_text(value: &Value) -> String {
    match value {
        Value::Number(n) => {
            n.as_f64().map(|x| if x == 0.0 { "0".into() } else { format!("{x:.2e}") }).unwrap_or_default()
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first line of a message, at most `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_string()
    }
}

/// Prints the summary, writes it to `dir/summary.md`, and fails naming every failure.
pub fn judge(report: &Value, dir: &Path, strict_limits: bool) -> Result<(), String> {
    let mut s = String::new();
    let mut failures: Vec<String> = Vec::new();
    let adapter = &report["adapter"];
    if adapter.is_null() {
        if report["fatal"].is_null() {
            failures.push("the page reported no WebGPU adapter".into());
        }
    } else {
        let name: Vec<&str> = ["vendor", "architecture", "device", "description"]
            .iter()
            .filter_map(|key| adapter[*key].as_str().filter(|v| !v.is_empty()))
            .collect();
        let fallback = if adapter["isFallbackAdapter"] == Value::Bool(true) { " (a fallback adapter)" } else { "" };
        let _ = writeln!(s, "adapter: {}{fallback}", name.join(" / "));
        let features: Vec<&str> =
            adapter["features"].as_array().map(|f| f.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let subgroups = if features.contains(&"subgroups") {
            format!("yes, sizes {}–{}", adapter["subgroupMinSize"], adapter["subgroupMaxSize"])
        } else {
            "no".into()
        };
        let _ = writeln!(s, "  subgroups: {subgroups}; shader-f16: {}", features.contains(&"shader-f16"));
        for limit in LIMITS {
            let _ = writeln!(s, "  {limit}: {}", adapter["limits"][limit]);
        }
        let _ = writeln!(s, "  features: {}", features.join(", "));
    }
    if let Some(fatal) = report["fatal"].as_str() {
        failures.push(format!("the page stopped: {}", first_line(fatal, 300)));
    }
    if let Some(lost) = report["deviceLost"].as_str() {
        failures.push(format!("the device was lost: {lost}"));
    }
    for error in report["uncapturedErrors"].as_array().into_iter().flatten() {
        failures.push(format!("uncaptured WebGPU error: {}", first_line(error.as_str().unwrap_or("?"), 300)));
    }

    let self_tests = report["selfTest"].as_array().cloned().unwrap_or_default();
    let failed: Vec<&Value> = self_tests.iter().filter(|t| t["ok"] != Value::Bool(true)).collect();
    let _ = writeln!(s, "\nself-tests: {} of {} pass", self_tests.len() - failed.len(), self_tests.len());
    for t in failed {
        let name = t["name"].as_str().unwrap_or("?");
        let _ = writeln!(s, "  FAIL {name} {}", t["detail"].as_str().unwrap_or(""));
        failures.push(format!("self-test failed: {name}"));
    }

    let plans = report["plans"].as_array().cloned().unwrap_or_default();
    if !plans.is_empty() {
        let _ = writeln!(s, "\n| case | tensor | error | bar | verdict |\n| --- | --- | --- | --- | --- |");
    }
    for plan in &plans {
        let name = plan["name"].as_str().unwrap_or("?");
        if let Some(error) = plan["error"].as_str() {
            let _ = writeln!(s, "| {name} | — | could not run: {} | | FAIL |", first_line(error, 300));
            failures.push(format!("plan {name:?} could not run: {}", first_line(error, 300)));
        }
        for check in plan["checks"].as_array().into_iter().flatten() {
            let tensor =
                format!("{} ({})", check["buffer"].as_str().unwrap_or("?"), check["after"].as_str().unwrap_or("?"));
            let pass = check["pass"] == Value::Bool(true);
            let detail =
                check["detail"].as_str().filter(|d| !d.is_empty()).map(|d| format!(" ({d})")).unwrap_or_default();
            let _ = writeln!(
                s,
                "| {name} | {tensor} | {} | {} | {}{detail} |",
                error_text(&check["error"]),
                error_text(&check["bar"]),
                if pass { "pass" } else { "FAIL" }
            );
            if !pass {
                failures.push(format!(
                    "{name}: {tensor} error {} over its bar {}",
                    error_text(&check["error"]),
                    error_text(&check["bar"])
                ));
            }
        }
    }

    if let Some(kernels) = report["kernels"]["kernels"].as_array() {
        let count = |verdict: &str| kernels.iter().filter(|k| k["verdict"] == verdict).count();
        let ran = kernels.iter().filter(|k| k["ranIn"].is_string()).count();
        let _ = writeln!(
            s,
            "\nkernels in Tint: {} variants, {} compiled ({ran} of them in the layer cases), {} refused by Tint, {} over the limits",
            kernels.len(),
            count("compiled"),
            count("tint error"),
            count("over limits")
        );
        for k in kernels.iter().filter(|k| k["verdict"] != "compiled") {
            let dims = match k["dims"].as_array() {
                Some(d) => format!("{}x{}", d[0], d[1]),
                None => "any".into(),
            };
            let name = format!("{} {dims}", k["kernel"].as_str().unwrap_or("?"));
            if k["verdict"] == "over limits" {
                let fits = &k["fits"];
                let mut over = Vec::new();
                if fits["storage"] == Value::Bool(false) {
                    over.push(format!(
                        "{} storage buffers > {}",
                        k["storageBuffers"], adapter["limits"]["maxStorageBuffersPerShaderStage"]
                    ));
                }
                if fits["workgroupMemory"] == Value::Bool(false) {
                    over.push(format!(
                        "{} B workgroup memory > {}",
                        k["workgroupBytes"], adapter["limits"]["maxComputeWorkgroupStorageSize"]
                    ));
                }
                if fits["invocations"] == Value::Bool(false) {
                    over.push(format!(
                        "{} invocations > {}",
                        k["workgroupSize"], adapter["limits"]["maxComputeInvocationsPerWorkgroup"]
                    ));
                }
                let _ = writeln!(s, "  over limits: {name}: {}", over.join(", "));
                if strict_limits {
                    failures.push(format!("{name} is over the adapter's limits ({})", over.join(", ")));
                }
            } else {
                let message = k["messages"]
                    .as_array()
                    .and_then(|m| m.iter().find(|m| m["type"] == "error"))
                    .map(|m| {
                        format!(
                            "{}:{} {} [{}]",
                            m["line"],
                            m["column"],
                            m["text"].as_str().unwrap_or(""),
                            m["source"].as_str().unwrap_or("")
                        )
                    })
                    .or_else(|| k["pipelineError"].as_str().map(str::to_string))
                    .unwrap_or_else(|| "no message".into());
                let _ = writeln!(s, "  refused by Tint: {name}: {}", first_line(&message, 400));
                // Tint's notes (the uniformity analysis's chain of reasons, for one).
                for note in k["messages"].as_array().into_iter().flatten().filter(|m| m["type"] != "error").take(6) {
                    let text = note["text"].as_str().unwrap_or("");
                    let _ = writeln!(
                        s,
                        "      {}:{} {text} [{}]",
                        note["line"],
                        note["column"],
                        note["source"].as_str().unwrap_or("")
                    );
                }
                failures.push(format!("Tint refuses {name}"));
            }
        }
        // The kernels not compiled, grouped by reason, in the manifest's order.
        let skipped = report["kernels"]["skipped"].as_array().cloned().unwrap_or_default();
        let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
        for k in &skipped {
            let (name, reason) = (k["kernel"].as_str().unwrap_or("?"), k["reason"].as_str().unwrap_or(""));
            match reasons.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, names)) => names.push(name),
                None => reasons.push((reason, vec![name])),
            }
        }
        for (reason, names) in reasons {
            let _ = writeln!(s, "  not compiled: {} ({reason})", names.join(", "));
        }
    }
    let _ = writeln!(s, "\npage time: {:.1} s", report["ms"].as_f64().unwrap_or(0.0) / 1000.0);
    print!("{s}");
    let file = dir.join("summary.md");
    std::fs::write(&file, s + &kernel_table(report)).map_err(|e| format!("writing {}: {e}", file.display()))?;
    if failures.is_empty() { Ok(()) } else { Err(format!("the browser check failed:\n  {}", failures.join("\n  "))) }
}

/// Every kernel variant in one markdown table (for `summary.md`; the terminal gets the failures).
fn kernel_table(report: &Value) -> String {
    let Some(kernels) = report["kernels"]["kernels"].as_array() else { return String::new() };
    let limits = &report["device"]["limits"];
    let mut s = format!(
        "\n| kernel | dk×dv | storage buffers (limit {}) | workgroup bytes (limit {}) | verdict | ms |\n| --- | --- | --- | --- | --- | --- |\n",
        limits["maxStorageBuffersPerShaderStage"], limits["maxComputeWorkgroupStorageSize"]
    );
    for k in kernels {
        let dims = k["dims"].as_array().map(|d| format!("{}×{}", d[0], d[1])).unwrap_or_else(|| "any".into());
        let _ = writeln!(
            s,
            "| {} | {dims} | {} | {} | {} | {:.0} |",
            k["kernel"].as_str().unwrap_or("?"),
            k["storageBuffers"],
            k["workgroupBytes"],
            k["verdict"].as_str().unwrap_or("?"),
            k["ms"].as_f64().unwrap_or(0.0)
        );
    }
    s
}
