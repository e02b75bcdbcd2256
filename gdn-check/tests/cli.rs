//! The `gdn-check` command on bad arguments and environments: a one-line message naming what was
//! wrong and exit status 2 — never a panic (status 101) — and nothing run before the check.

use std::process::{Command, Output};

fn gdn_check(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_gdn-check"));
    command.args(args).env("XDG_RUNTIME_DIR", "/tmp");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("gdn-check starts")
}

/// Asserts exit status 2 with a message on stderr containing every one of `words`.
fn refused(output: &Output, words: &[&str]) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for word in words {
        assert!(stderr.contains(word), "{word:?} not in {stderr}");
    }
}

#[test]
fn an_empty_batch_is_refused_by_name() {
    refused(&gdn_check(&["run", "--batch", "0"], &[]), &["--batch", "at least 1"]);
    refused(&gdn_check(&["run", "--seq", "0"], &[]), &["--seq", "at least 1"]);
}

#[test]
fn a_backend_variable_naming_no_backend_says_so() {
    let output = gdn_check(&["run", "--batch", "1", "--seq", "1"], &[("WGPU_BACKEND", "bogus")]);
    refused(&output, &["WGPU_BACKEND=\"bogus\"", "\"bogus\" is not a backend"]);
}
