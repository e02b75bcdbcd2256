//! The checkpoint loader against tiny safetensors files written here from known values, in both
//! naming schemes: every tensor lands where the operator's layout wants it (Qwen3-Next's per-key-head
//! grouping built row by row as transformers' `fix_query_key_value_ordering` reads it), bf16 / f16
//! widen exactly, and every bad file is a typed error naming the tensor. No device.

use gdn_train::checkpoint::{CheckpointProblem, HF_PREFIX, HfLayerConfig, LayerWeights, Scheme};
use gdn_train::{Error, LayerConfig};
use std::path::PathBuf;

/// nk = 2, nv = 4 (rep 2), dk = 3, dv = 2, kk = 3: C = 2·2·3 + 4·2 = 20; hidden 5.
fn sizes() -> HfLayerConfig {
    HfLayerConfig { layer: LayerConfig { nk: 2, nv: 4, dk: 3, dv: 2, kk: 3, rms_eps: 1e-5 }, hidden_size: 5 }
}

/// A fresh folder for one test's files.
fn folder(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gdn-checkpoint-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One tensor to write: name, safetensors dtype, shape, little-endian bytes.
struct Entry {
    name: String,
    dtype: &'static str,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

fn f32_entry(name: &str, shape: &[usize], values: &[f32]) -> Entry {
    assert_eq!(shape.iter().product::<usize>(), values.len(), "{name}");
    Entry {
        name: name.into(),
        dtype: "F32",
        shape: shape.into(),
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    }
}

/// A safetensors file, written by hand from the format's definition (8-byte header length, JSON
/// header, data) so that the test does not share the loader's parser.
fn write_safetensors(path: &std::path::Path, entries: &[Entry]) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for e in entries {
        let start = data.len();
        data.extend_from_slice(&e.bytes);
        header.insert(
            e.name.clone(),
            serde_json::json!({ "dtype": e.dtype, "shape": e.shape, "data_offsets": [start, data.len()] }),
        );
    }
    let header = serde_json::Value::Object(header).to_string().into_bytes();
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(&header);
    file.extend_from_slice(&data);
    std::fs::write(path, file).unwrap();
}

/// The layer in the operator's layout, each element telling where it belongs: tensor `tag`,
/// row, column.
struct Known {
    qkv: Vec<f32>,
    z: Vec<f32>,
    b: Vec<f32>,
    a: Vec<f32>,
    out: Vec<f32>,
    conv: Vec<f32>,
    a_log: Vec<f32>,
    dt_bias: Vec<f32>,
    norm: Vec<f32>,
}

fn matrix(tag: f32, rows: usize, cols: usize) -> Vec<f32> {
    (0..rows).flat_map(|r| (0..cols).map(move |c| tag * 1000.0 + r as f32 * 10.0 + c as f32)).collect()
}

fn known(config: &HfLayerConfig) -> Known {
    let (l, h) = (config.layer, config.hidden_size);
    Known {
        qkv: matrix(1.0, l.channels(), h),
        z: matrix(2.0, l.value_width(), h),
        b: matrix(3.0, l.nv, h),
        a: matrix(4.0, l.nv, h),
        out: matrix(5.0, h, l.value_width()),
        conv: matrix(6.0, l.channels(), l.kk),
        a_log: matrix(7.0, l.nv, 1),
        dt_bias: matrix(8.0, l.nv, 1),
        norm: matrix(9.0, l.dv, 1),
    }
}

/// Rows `first..first + n` of a row-major matrix of width `cols`.
fn rows(m: &[f32], cols: usize, first: usize, n: usize) -> &[f32] {
    &m[first * cols..(first + n) * cols]
}

/// The tensors both schemes name alike.
fn shared_entries(prefix: &str, config: &HfLayerConfig, w: &Known) -> Vec<Entry> {
    let (l, h) = (config.layer, config.hidden_size);
    vec![
        f32_entry(&format!("{prefix}conv1d.weight"), &[l.channels(), 1, l.kk], &w.conv),
        f32_entry(&format!("{prefix}A_log"), &[l.nv], &w.a_log),
        f32_entry(&format!("{prefix}dt_bias"), &[l.nv], &w.dt_bias),
        f32_entry(&format!("{prefix}norm.weight"), &[l.dv], &w.norm),
        f32_entry(&format!("{prefix}out_proj.weight"), &[h, l.value_width()], &w.out),
    ]
}

fn qwen35_entries(prefix: &str, config: &HfLayerConfig, w: &Known) -> Vec<Entry> {
    let (l, h) = (config.layer, config.hidden_size);
    let mut entries = vec![
        f32_entry(&format!("{prefix}in_proj_qkv.weight"), &[l.channels(), h], &w.qkv),
        f32_entry(&format!("{prefix}in_proj_z.weight"), &[l.value_width(), h], &w.z),
        f32_entry(&format!("{prefix}in_proj_b.weight"), &[l.nv, h], &w.b),
        f32_entry(&format!("{prefix}in_proj_a.weight"), &[l.nv, h], &w.a),
    ];
    entries.extend(shared_entries(prefix, config, w));
    entries
}

/// Qwen3-Next's merged projections, grouped as transformers' `fix_query_key_value_ordering`
/// reads them: `in_proj_qkvz` viewed `[nk, 2·dk + 2·rep·dv]`, each key head's group split
/// `[q (dk) | k (dk) | v (rep·dv) | z (rep·dv)]`, v and z then reshaped to `rep` value heads of
/// `dv`; `in_proj_ba` viewed `[nk, 2·rep]`, split `[b (rep) | a (rep)]`. Built one head at a time
/// from the operator-layout blocks.
fn grouped(config: &HfLayerConfig, w: &Known) -> (Vec<f32>, Vec<f32>) {
    let (l, h) = (config.layer, config.hidden_size);
    let rep = l.nv / l.nk;
    let (mut qkvz, mut ba) = (Vec::new(), Vec::new());
    for g in 0..l.nk {
        qkvz.extend_from_slice(rows(&w.qkv, h, g * l.dk, l.dk));
        qkvz.extend_from_slice(rows(&w.qkv, h, l.nk * l.dk + g * l.dk, l.dk));
        for r in 0..rep {
            qkvz.extend_from_slice(rows(&w.qkv, h, 2 * l.nk * l.dk + (g * rep + r) * l.dv, l.dv));
        }
        for r in 0..rep {
            qkvz.extend_from_slice(rows(&w.z, h, (g * rep + r) * l.dv, l.dv));
        }
        for r in 0..rep {
            ba.extend_from_slice(rows(&w.b, h, g * rep + r, 1));
        }
        for r in 0..rep {
            ba.extend_from_slice(rows(&w.a, h, g * rep + r, 1));
        }
    }
    (qkvz, ba)
}

fn qwen3_next_entries(prefix: &str, config: &HfLayerConfig, w: &Known) -> Vec<Entry> {
    let (l, h) = (config.layer, config.hidden_size);
    let (qkvz, ba) = grouped(config, w);
    let mut entries = vec![
        f32_entry(&format!("{prefix}in_proj_qkvz.weight"), &[l.channels() + l.value_width(), h], &qkvz),
        f32_entry(&format!("{prefix}in_proj_ba.weight"), &[2 * l.nv, h], &ba),
    ];
    entries.extend(shared_entries(prefix, config, w));
    entries
}

fn assert_lands(loaded: &LayerWeights, w: &Known) {
    assert_eq!(loaded.projections.qkv, w.qkv, "qkv");
    assert_eq!(loaded.projections.z, w.z, "z");
    assert_eq!(loaded.projections.b, w.b, "b");
    assert_eq!(loaded.projections.a, w.a, "a");
    assert_eq!(loaded.projections.out, w.out, "out_proj");
    assert_eq!(loaded.conv, w.conv, "conv");
    assert_eq!(loaded.a_log, w.a_log, "a_log");
    assert_eq!(loaded.dt_bias, w.dt_bias, "dt_bias");
    assert_eq!(loaded.norm, w.norm, "norm");
}

#[test]
fn qwen35_tensors_land_in_the_operator_layout() {
    let (config, dir) = (sizes(), folder("qwen35"));
    let w = known(&config);
    let path = dir.join("model.safetensors");
    write_safetensors(&path, &qwen35_entries("model.layers.3.linear_attn.", &config, &w));
    let loaded = LayerWeights::load(&path, HF_PREFIX, 3, &config).unwrap();
    assert_eq!(loaded.scheme, Scheme::Qwen35);
    assert_eq!((loaded.config, loaded.hidden_size), (config.layer, config.hidden_size));
    assert_lands(&loaded, &w);
    let params = loaded.params();
    assert_eq!(
        (params.a_log, params.dt_bias, params.norm, params.conv),
        (&w.a_log[..], &w.dt_bias[..], &w.norm[..], &w.conv[..])
    );
}

#[test]
fn qwen3_next_grouped_projections_are_ungrouped() {
    let (config, dir) = (sizes(), folder("next"));
    let w = known(&config);
    let path = dir.join("model.safetensors");
    write_safetensors(&path, &qwen3_next_entries("model.layers.0.linear_attn.", &config, &w));
    let loaded = LayerWeights::load(&path, HF_PREFIX, 0, &config).unwrap();
    assert_eq!(loaded.scheme, Scheme::Qwen3Next);
    assert_lands(&loaded, &w);
}

/// A few rows of the grouped file by hand (nk 2, rep 2, dk 3, dv 2: groups of 6 + 8 = 14 rows of
/// in_proj_qkvz, 4 of in_proj_ba), so the test's own grouping is checked too.
#[test]
fn qwen3_next_rows_by_hand() {
    let config = sizes();
    let w = known(&config);
    let (qkvz, ba) = grouped(&config, &w);
    let h = config.hidden_size;
    let row = |m: &[f32], r: usize| m[r * h..(r + 1) * h].to_vec();
    // Group 1 starts at row 14: q of key head 1 is qkv row 3, its k qkv row 6 + 3 = 9.
    assert_eq!(row(&qkvz, 14), row(&w.qkv, 3));
    assert_eq!(row(&qkvz, 14 + 3), row(&w.qkv, 9));
    // Then v of value heads 2 and 3 (qkv rows 12 + 4 … 12 + 7), then z of them (z rows 4 … 7).
    assert_eq!(row(&qkvz, 14 + 6), row(&w.qkv, 16));
    assert_eq!(row(&qkvz, 14 + 9), row(&w.qkv, 19));
    assert_eq!(row(&qkvz, 14 + 10), row(&w.z, 4));
    assert_eq!(row(&qkvz, 27), row(&w.z, 7));
    // Group 0's z follows its v: rows 6 + 4 = 10 … 13 are z rows 0 … 3.
    assert_eq!(row(&qkvz, 10), row(&w.z, 0));
    // in_proj_ba: [b2, b3, a2, a3] for key head 1.
    assert_eq!(row(&ba, 4), row(&w.b, 2));
    assert_eq!(row(&ba, 5), row(&w.b, 3));
    assert_eq!(row(&ba, 6), row(&w.a, 2));
    assert_eq!(row(&ba, 7), row(&w.a, 3));
}

/// Other head ratios (rep 1, rep 3, one key head), dk ≠ dv: both schemes of the same layer load alike.
#[test]
fn both_schemes_agree_at_other_head_ratios() {
    for (i, (nk, nv, dk, dv, kk)) in [(3, 3, 2, 4, 4), (1, 3, 4, 2, 1), (2, 6, 1, 3, 2)].into_iter().enumerate() {
        let config = HfLayerConfig { layer: LayerConfig { nk, nv, dk, dv, kk, rms_eps: 1e-6 }, hidden_size: 2 };
        let w = known(&config);
        let dir = folder(&format!("ratio{i}"));
        let (p35, pnext) = (dir.join("a.safetensors"), dir.join("b.safetensors"));
        write_safetensors(&p35, &qwen35_entries("m.", &config, &w));
        write_safetensors(&pnext, &qwen3_next_entries("m.", &config, &w));
        let (a, b) = (
            LayerWeights::load(&p35, "m.", 0, &config).unwrap(),
            LayerWeights::load(&pnext, "m.", 0, &config).unwrap(),
        );
        assert_lands(&a, &w);
        assert_lands(&b, &w);
    }
}

#[test]
fn half_precision_tensors_widen_exactly() {
    let (config, dir) = (sizes(), folder("halves"));
    let w = known(&config);
    let prefix = "model.layers.0.linear_attn.";
    let mut entries = qwen35_entries(prefix, &config, &w);
    // Values every format holds exactly.
    let small: Vec<f32> = (0..config.layer.nv).map(|i| i as f32 * 0.25 - 0.5).collect();
    let bf16: Vec<u8> = small.iter().flat_map(|&v| half::bf16::from_f32(v).to_le_bytes()).collect();
    let f16: Vec<u8> = small.iter().flat_map(|&v| half::f16::from_f32(v).to_le_bytes()).collect();
    for e in &mut entries {
        if e.name.ends_with("A_log") {
            (e.dtype, e.bytes) = ("BF16", bf16.clone());
        } else if e.name.ends_with("dt_bias") {
            (e.dtype, e.bytes) = ("F16", f16.clone());
        }
    }
    let path = dir.join("model.safetensors");
    write_safetensors(&path, &entries);
    let loaded = LayerWeights::load(&path, HF_PREFIX, 0, &config).unwrap();
    assert_eq!(loaded.a_log, small);
    assert_eq!(loaded.dt_bias, small);
}

fn problem(result: gdn_train::Result<LayerWeights>) -> CheckpointProblem {
    match result {
        Err(Error::Checkpoint { problem, .. }) => problem,
        other => panic!("expected a checkpoint error, got {other:?}"),
    }
}

#[test]
fn a_missing_tensor_is_named() {
    let (config, dir) = (sizes(), folder("missing"));
    let w = known(&config);
    let path = dir.join("model.safetensors");
    let mut entries = qwen3_next_entries("model.layers.0.linear_attn.", &config, &w);
    entries.retain(|e| !e.name.ends_with("A_log"));
    write_safetensors(&path, &entries);
    let err = LayerWeights::load(&path, HF_PREFIX, 0, &config).unwrap_err();
    assert!(err.to_string().contains("model.layers.0.linear_attn.A_log: missing (expected shape [4])"), "{err}");
    assert_eq!(
        problem(Err(err)),
        CheckpointProblem::Missing { tensor: "model.layers.0.linear_attn.A_log".into(), expected: vec![4] }
    );
}

#[test]
fn a_wrong_shape_is_named_with_the_expected_one() {
    let (config, dir) = (sizes(), folder("shape"));
    let w = known(&config);
    let path = dir.join("model.safetensors");
    let prefix = "model.layers.0.linear_attn.";
    let mut entries = qwen3_next_entries(prefix, &config, &w);
    // A squeezed conv weight [C, kk] instead of HF's [C, 1, kk].
    let conv = entries.iter_mut().find(|e| e.name.ends_with("conv1d.weight")).unwrap();
    conv.shape = vec![20, 3];
    write_safetensors(&path, &entries);
    assert_eq!(
        problem(LayerWeights::load(&path, HF_PREFIX, 0, &config)),
        CheckpointProblem::Shape {
            tensor: format!("{prefix}conv1d.weight"),
            expected: vec![20, 1, 3],
            got: vec![20, 3]
        }
    );
    // A hidden size other than the config's.
    let other = HfLayerConfig { hidden_size: 6, ..config };
    assert_eq!(
        problem(LayerWeights::load(&path, HF_PREFIX, 0, &other)),
        CheckpointProblem::Shape {
            tensor: format!("{prefix}in_proj_qkvz.weight"),
            expected: vec![28, 6],
            got: vec![28, 5]
        }
    );
}

#[test]
fn a_dtype_the_loader_does_not_read_is_named() {
    let (config, dir) = (sizes(), folder("dtype"));
    let w = known(&config);
    let path = dir.join("model.safetensors");
    let mut entries = qwen35_entries("p.", &config, &w);
    let e = entries.iter_mut().find(|e| e.name == "p.dt_bias").unwrap();
    (e.dtype, e.bytes) = ("I32", (0..4i32).flat_map(|v| v.to_le_bytes()).collect());
    let f = entries.iter_mut().find(|e| e.name == "p.norm.weight").unwrap();
    (f.dtype, f.bytes) = ("F64", (0..2).flat_map(|v| f64::from(v).to_le_bytes()).collect());
    write_safetensors(&path, &entries);
    let err = LayerWeights::load(&path, "p.", 0, &config).unwrap_err();
    assert!(err.to_string().contains("p.dt_bias: dtype I32; the loader reads BF16, F16 and F32"), "{err}");
    entries.retain(|e| e.name != "p.dt_bias");
    entries.push(f32_entry("p.dt_bias", &[4], &w.dt_bias));
    write_safetensors(&path, &entries);
    assert_eq!(
        problem(LayerWeights::load(&path, "p.", 0, &config)),
        CheckpointProblem::Dtype { tensor: "p.norm.weight".into(), got: "F64".into() }
    );
}

#[test]
fn neither_or_both_schemes_is_refused() {
    let (config, dir) = (sizes(), folder("scheme"));
    let w = known(&config);
    let path = dir.join("model.safetensors");
    write_safetensors(&path, &qwen35_entries("model.layers.1.linear_attn.", &config, &w));
    // Layer 0 is not in the file (a full-attention layer, say).
    let err = LayerWeights::load(&path, HF_PREFIX, 0, &config).unwrap_err();
    assert!(matches!(err, Error::Checkpoint { problem: CheckpointProblem::Scheme { .. }, .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("model.layers.0.linear_attn.in_proj_qkv.weight"), "{text}");
    assert!(text.contains("model.layers.0.linear_attn.in_proj_qkvz.weight"), "{text}");
    let mut entries = qwen35_entries("x.", &config, &w);
    entries.extend(qwen3_next_entries("x.", &config, &w).into_iter().take(2));
    write_safetensors(&path, &entries);
    let err = LayerWeights::load(&path, "x.", 0, &config).unwrap_err();
    assert!(err.to_string().contains("both x.in_proj_qkv.weight (Qwen3.5) and x.in_proj_qkvz.weight"), "{err}");
}

#[test]
fn unreadable_or_malformed_files_are_errors() {
    let (config, dir) = (sizes(), folder("malformed"));
    let w = known(&config);
    let absent = dir.join("absent.safetensors");
    assert!(matches!(problem(LayerWeights::load(&absent, HF_PREFIX, 0, &config)), CheckpointProblem::Io { .. }));
    let path = dir.join("model.safetensors");
    write_safetensors(&path, &qwen35_entries("p.", &config, &w));
    let bytes = std::fs::read(&path).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", vec![]),
        ("truncated data", bytes[..bytes.len() - 3].to_vec()),
        ("a header longer than the file", [u64::MAX.to_le_bytes().to_vec(), bytes[8..].to_vec()].concat()),
        ("a header that is not JSON", [12u64.to_le_bytes().to_vec(), b"not json at ".to_vec()].concat()),
    ];
    for (what, bytes) in cases {
        std::fs::write(&path, bytes).unwrap();
        let p = problem(LayerWeights::load(&path, "p.", 0, &config));
        assert!(matches!(p, CheckpointProblem::Format { format: "safetensors", .. }), "{what}: {p:?}");
    }
}

#[test]
fn invalid_sizes_are_refused_before_reading() {
    let dir = folder("sizes");
    let path = dir.join("model.safetensors");
    write_safetensors(&path, &[]);
    let bad = HfLayerConfig { layer: LayerConfig { nk: 2, nv: 3, dk: 1, dv: 1, kk: 1, rms_eps: 1e-6 }, hidden_size: 1 };
    let err = LayerWeights::load(&path, "p.", 0, &bad).unwrap_err();
    assert!(matches!(err, Error::Layer(gdn_ref::Error::HeadRatio { nk: 2, nv: 3 })), "{err:?}");
    let huge = HfLayerConfig {
        layer: LayerConfig { nk: 1, nv: 1, dk: usize::MAX / 2, dv: 1, kk: 1, rms_eps: 1e-6 },
        hidden_size: 1,
    };
    let err = LayerWeights::load(&path, "p.", 0, &huge).unwrap_err();
    assert!(matches!(err, Error::Layer(gdn_ref::Error::TooLarge { .. })), "{err:?}");
}

#[test]
fn config_json_gives_the_sizes() {
    // Qwen3-Next: top level; the defaults fill what save_pretrained leaves out (rms_norm_eps, kk).
    let next = r#"{"model_type": "qwen3_next", "hidden_size": 5, "linear_num_key_heads": 2,
        "linear_num_value_heads": 4, "linear_key_head_dim": 3, "linear_value_head_dim": 2}"#;
    let config = HfLayerConfig::from_json_str(next).unwrap();
    assert_eq!(
        config,
        HfLayerConfig { layer: LayerConfig { nk: 2, nv: 4, dk: 3, dv: 2, kk: 4, rms_eps: 1e-6 }, hidden_size: 5 }
    );
    // Qwen3.5 image-text: under text_config.
    let vl = r#"{"model_type": "qwen3_5", "text_config": {"model_type": "qwen3_5_text", "hidden_size": 8,
        "linear_num_key_heads": 1, "linear_num_value_heads": 2, "linear_key_head_dim": 4,
        "linear_value_head_dim": 4, "linear_conv_kernel_dim": 2, "rms_norm_eps": 1e-5}}"#;
    let config = HfLayerConfig::from_json_str(vl).unwrap();
    assert_eq!(
        config,
        HfLayerConfig { layer: LayerConfig { nk: 1, nv: 2, dk: 4, dv: 4, kk: 2, rms_eps: 1e-5 }, hidden_size: 8 }
    );
    // Defaults only for the model types whose classes are known.
    let err = HfLayerConfig::from_json_str(r#"{"model_type": "llama", "hidden_size": 4}"#).unwrap_err();
    assert!(err.to_string().contains("config key linear_num_key_heads: missing"), "{err}");
    let err =
        HfLayerConfig::from_json_str(r#"{"model_type": "qwen3_next", "linear_num_key_heads": "two"}"#).unwrap_err();
    assert!(err.to_string().contains("config key linear_num_key_heads: expected a non-negative integer"), "{err}");
    let err = HfLayerConfig::from_json_str("{").unwrap_err();
    assert!(matches!(err, Error::Checkpoint { problem: CheckpointProblem::Format { format: "config.json", .. }, .. }));
    let err = HfLayerConfig::from_json_str(r#"{"model_type": "qwen3_next", "linear_num_value_heads": 3}"#).unwrap_err();
    assert!(matches!(err, Error::Layer(gdn_ref::Error::HeadRatio { nk: 16, nv: 3 })), "{err:?}");
}

#[test]
fn load_beside_config_reads_config_json() {
    let (config, dir) = (sizes(), folder("beside"));
    let w = known(&config);
    let path = dir.join("model.safetensors");
    write_safetensors(&path, &qwen3_next_entries("model.layers.0.linear_attn.", &config, &w));
    let json = r#"{"model_type": "qwen3_next", "hidden_size": 5, "linear_num_key_heads": 2, "linear_num_value_heads": 4,
        "linear_key_head_dim": 3, "linear_value_head_dim": 2, "linear_conv_kernel_dim": 3, "rms_norm_eps": 1e-5}"#;
    std::fs::write(dir.join("config.json"), json).unwrap();
    let loaded = LayerWeights::load_beside_config(&path, HF_PREFIX, 0).unwrap();
    assert_eq!(loaded.config, config.layer);
    assert_lands(&loaded, &w);
}
