//! The `gdn-check` command on bad arguments and environments: a one-line message naming what was
//! wrong and exit status 2 — never a panic (status 101) — and nothing run before the check.
//! `GDN_CHECK_BIN` names the binary where it is not where cargo built it (a GPU machine running
//! the bundled test binaries: `bench/side_by_side.sh tests`).

use std::process::{Command, Output};

fn gdn_check(args: &[&str], env: &[(&str, &str)]) -> Output {
    let binary = std::env::var_os("GDN_CHECK_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_gdn-check").into());
    let mut command = Command::new(binary);
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
fn counts_that_would_be_clamped_or_overflow_are_refused_by_name() {
    refused(&gdn_check(&["run", "--repeat", "0"], &[]), &["--repeat", "at least 1"]);
    refused(&gdn_check(&["fuzz", "--jobs", "0"], &[]), &["--jobs", "at least 1"]);
    let output = gdn_check(&["run", "--batch", "18446744073709551615", "--seq", "1"], &[]);
    refused(&output, &["--batch 18446744073709551615", "tokens a call"]);
    refused(&gdn_check(&["run", "--batch", "65536", "--seq", "65536"], &[]), &["--seq 65536", "tokens a call"]);
}

#[test]
fn decode_states_past_the_host_memory_or_past_usize_are_refused() {
    let output = gdn_check(&["decode", "--sequences", "100000000"], &[]);
    refused(&output, &["--sequences 100000000", "GiB of host memory"]);
    let output = gdn_check(&["decode", "--sequences", "18446744073709551615"], &[]);
    refused(&output, &["--sequences 18446744073709551615", "overflow"]);
}

#[test]
fn a_soak_longer_than_a_clock_holds_is_refused() {
    for minutes in ["1e300", "nan", "-1"] {
        let output = gdn_check(&["soak", &format!("--minutes={minutes}")], &[]);
        refused(&output, &["--minutes", "must be a non-negative number"]);
    }
}

#[test]
fn a_family_knob_given_to_another_family_or_to_auto_is_refused() {
    let refusals = [
        (&["run", "--checkpoint-interval", "8"][..], "--checkpoint-interval is the recurrent family's knob"),
        (&["run", "--chunk", "32"], "--chunk is the chunked family's knob"),
        (&["run", "--family", "recurrent", "--chunk", "32"], "--chunk is the chunked family's knob"),
        (&["run", "--family", "chunked", "--checkpoint-interval", "8"], "--checkpoint-interval is the recurrent"),
    ];
    for (args, message) in refusals {
        refused(&gdn_check(args, &[]), &[message]);
    }
}

/// Where the adapter lacks tensor cores (lavapipe), a tensor-core campaign names what is missing
/// instead of reporting a failed case; where it has them, the campaign runs.
#[test]
fn a_tensor_core_campaign_names_what_the_adapter_lacks() {
    let ctx = gdn_train::Context::new().unwrap_or_else(|e| panic!("device tests need a GPU adapter: {e}"));
    let campaigns = [
        ["fuzz", "--precision", "tensor-core", "--cases", "1"],
        ["soak", "--precision", "tensor-core", "--minutes", "0"],
    ];
    for args in campaigns {
        let output = gdn_check(&args, &[]);
        match ctx.supports(gdn_train::Precision::TensorCore) {
            Err(missing) => refused(&output, &["--precision tensor-core", &missing.to_string()]),
            Ok(()) => assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stdout)),
        }
    }
}

#[test]
fn a_recall_task_with_nothing_to_learn_or_no_step_size_is_refused() {
    refused(&gdn_check(&["recall", "--values", "1"], &[]), &["values must be at least 2"]);
    for rate in ["nan", "0", "-1", "inf"] {
        let rate = format!("--learning-rate={rate}");
        refused(&gdn_check(&["recall", &rate], &[]), &["learning_rate must be a positive number"]);
    }
}

#[test]
fn a_bounds_check_switch_that_is_neither_on_nor_off_says_so() {
    let output = gdn_check(&["run", "--batch", "1", "--seq", "1"], &[("GDN_BOUNDS_CHECKS", "maybe")]);
    refused(&output, &["GDN_BOUNDS_CHECKS=\"maybe\"", "0 turns the kernels' bounds checks off"]);
}

#[test]
fn a_backend_variable_naming_no_backend_says_so() {
    let output = gdn_check(&["run", "--batch", "1", "--seq", "1"], &[("WGPU_BACKEND", "bogus")]);
    refused(&output, &["WGPU_BACKEND=\"bogus\"", "\"bogus\" is not a backend"]);
}

#[test]
fn a_storage_buffer_cap_that_is_no_count_says_so_and_one_that_is_lays_the_layer_out_for_it() {
    let output = gdn_check(&["run", "--batch", "1", "--seq", "1"], &[("GDN_MAX_STORAGE_BUFFERS", "twelve")]);
    refused(&output, &["GDN_MAX_STORAGE_BUFFERS=\"twelve\"", "a count of storage buffers"]);
    // Capped at 12, the recurrent family's few-heads backward keeps the norm's backward and the
    // sums' totals in dispatches of their own (the fused totals bind 15), within its bars.
    let args = ["run", "--nk", "1", "--nv", "2", "--dk", "16", "--dv", "16", "--seq", "9", "--family", "recurrent"];
    let output =
        gdn_check(&[&args[..], &["--repeat", "1", "--profile"]].concat(), &[("GDN_MAX_STORAGE_BUFFERS", "12")]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    for kernel in
        ["bwd norm_backward", "bwd qk_norm_conv_backward", "bwd conv_backward_input_sums", "bwd column_sums_finish"]
    {
        assert!(stdout.contains(kernel), "{kernel} not in {stdout}");
    }
    assert!(stdout.contains("all tensors within their bars"), "{stdout}");
}

#[test]
fn absurd_batches_are_refused_by_the_memory_they_exceed() {
    for args in [["--batch", "50000000"], ["--seq", "1000000000"]] {
        let output = gdn_check(&["run", args[0], args[1]], &[]);
        refused(&output, &["the batch needs", "GiB of host memory", "this machine has available"]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(!stdout.contains("reference check"), "{stdout}");
    }
}

#[test]
fn memory_is_checked_before_the_reference_runs() {
    // 4 Mi tokens of qwen3-next: 128 GiB of qkv, past every binding limit, and half a TiB of host
    // tensors, more than the machines this runs on have. Once, the f64 reference ran on the whole
    // sequence first (minutes of CPU), then the tape was refused.
    let start = std::time::Instant::now();
    let output = gdn_check(&["run", "--seq", "4194304"], &[]);
    refused(&output, &["the batch needs", "host memory"]);
    assert!(!String::from_utf8_lossy(&output.stdout).contains("reference check"));
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}

#[test]
fn no_reference_sequences_means_no_reference_check() {
    let args = ["run", "--preset", "qwen3.5-small", "--seq", "2", "--repeat", "1", "--reference-sequences", "0"];
    let output = gdn_check(&args, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("no reference check (--reference-sequences 0)"), "{stdout}");
    assert!(!stdout.contains("reference check (gdn-ref"), "{stdout}");
    assert!(stdout.contains("device time"), "{stdout}");
}

#[test]
fn the_reference_can_check_a_sample_of_heads() {
    let args = ["run", "--nk", "4", "--nv", "8", "--dk", "16", "--dv", "16", "--seq", "24", "--reference-heads", "1"];
    let output = gdn_check(&args, &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("sequences [0] of 1 and key heads [3] of 4"), "{stdout}");
    assert!(stdout.contains("all tensors within their bars"), "{stdout}");
}

#[test]
fn kernel_statistics_are_printed_or_the_missing_extension_is_named() {
    // NVIDIA's driver reports registers per kernel; lavapipe offers no pipeline statistics, and
    // the command must say which extension it lacks rather than panic or print nothing.
    let output = gdn_check(&["kernel-stats", "--kernel", "conv_forward"], &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    if output.status.success() {
        assert!(stdout.lines().any(|l| l.starts_with("conv_forward") && l.contains("Register")), "{stdout}");
    } else {
        refused(&output, &["VK_KHR_pipeline_executable_properties"]);
    }
}

/// A small Qwen3.5 checkpoint (nk 1, nv 2, dk = dv = 16, kk 4, hidden 8) of deterministic
/// pseudo-random weights at the scales of a real one, with its `config.json`, in a fresh folder.
fn small_qwen3_5_checkpoint() -> std::path::PathBuf {
    use safetensors::{Dtype, tensor::TensorView};
    let dir = std::env::temp_dir().join(format!("gdn-check-cli-checkpoint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (nk, nv, d, kk, hidden) = (1usize, 2usize, 16usize, 4usize, 8usize);
    let channels = 2 * nk * d + nv * d;
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut draw = |n: usize, low: f64, high: f64| -> Vec<u8> {
        (0..n).flat_map(|_| ((low + (high - low) * uniform()) as f32).to_le_bytes()).collect()
    };
    let scale = 1.7 / (hidden as f64).sqrt();
    let tensors: Vec<(&str, Vec<usize>, Vec<u8>)> = vec![
        ("in_proj_qkv.weight", vec![channels, hidden], draw(channels * hidden, -scale, scale)),
        ("in_proj_z.weight", vec![nv * d, hidden], draw(nv * d * hidden, -scale, scale)),
        ("in_proj_b.weight", vec![nv, hidden], draw(nv * hidden, -scale, scale)),
        ("in_proj_a.weight", vec![nv, hidden], draw(nv * hidden, -scale, scale)),
        ("conv1d.weight", vec![channels, 1, kk], draw(channels * kk, -0.8, 0.8)),
        ("dt_bias", vec![nv], draw(nv, -0.5, 0.5)),
        ("A_log", vec![nv], draw(nv, -1.0, 2.5)),
        ("norm.weight", vec![d], draw(d, 0.7, 1.3)),
        ("out_proj.weight", vec![hidden, nv * d], draw(hidden * nv * d, -0.25, 0.25)),
    ];
    let views = tensors.iter().map(|(name, shape, bytes)| {
        (format!("model.layers.0.linear_attn.{name}"), TensorView::new(Dtype::F32, shape.clone(), bytes).unwrap())
    });
    let path = dir.join("model.safetensors");
    safetensors::serialize_to_file(views, None, &path).unwrap();
    let config = format!(
        r#"{{"model_type": "qwen3_5_text", "hidden_size": {hidden}, "linear_num_key_heads": {nk},
        "linear_num_value_heads": {nv}, "linear_key_head_dim": {d}, "linear_value_head_dim": {d},
        "linear_conv_kernel_dim": {kk}, "rms_norm_eps": 1e-6}}"#
    );
    std::fs::write(dir.join("config.json"), config).unwrap();
    path
}

#[test]
fn a_checkpoint_layer_runs_against_the_reference_and_a_missing_one_is_named() {
    let path = small_qwen3_5_checkpoint();
    let file = path.to_str().unwrap();
    let output = gdn_check(&["checkpoint", file, "--seq", "40", "--batch", "2"], &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    for word in ["Qwen35", "nk 1, nv 2, dk 16, dv 16, kk 4, hidden 8", "dqkv", "all tensors within their bars"] {
        assert!(stdout.contains(word), "{word:?} not in {stdout}");
    }
    refused(&gdn_check(&["checkpoint", file, "--layer", "1"], &[]), &["model.layers.1.linear_attn."]);
    refused(&gdn_check(&["checkpoint", file, "--seq", "0"], &[]), &["--seq", "tokens"]);
}
