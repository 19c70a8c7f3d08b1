//! Tests of the `compiled_meta.json` / `distributed_meta.json` reader and writer.

use super::*;

/// `json.dumps(meta, indent=2)` of the sample, as Python prints it.
const PYTHON_DUMP: &str = "{\n  \"schema\": 1,\n  \"params\": [\n    {\n      \"name\": \"a\",\n      \"direction\": \"In\",\n      \"shape\": [\n        128,\n        -1\n      ],\n      \"dtype\": \"fp32\"\n    },\n    {\n      \"name\": \"n\",\n      \"direction\": \"In\",\n      \"shape\": null,\n      \"dtype\": \"int32\"\n    },\n    {\n      \"name\": \"c\\u00e9\",\n      \"direction\": \"Out\",\n      \"shape\": [],\n      \"dtype\": \"bfloat16\"\n    }\n  ],\n  \"num_return_types\": 1,\n  \"platform\": \"a2a3sim\",\n  \"backend_type\": \"Ascend910B\"\n}";

fn param(name: &str, direction: ParamDirection, shape: Option<Vec<i64>>, dtype: &str) -> ParamInfo {
    ParamInfo {
        name: name.to_string(),
        direction,
        shape,
        dtype: dtype.to_string(),
    }
}

fn sample() -> CompiledMeta {
    CompiledMeta {
        params: vec![
            param("a", ParamDirection::In, Some(vec![128, -1]), "fp32"),
            param("n", ParamDirection::In, None, "int32"),
            param("cé", ParamDirection::Out, Some(vec![]), "bfloat16"),
        ],
        num_return_types: 1,
        platform: Some("a2a3sim".to_string()),
        backend_type: BackendType::Ascend910B,
    }
}

#[test]
fn writes_python_json_dumps_bytes() {
    assert_eq!(sample().to_json_text(), PYTHON_DUMP);
    assert_eq!(
        CompiledMeta::parse(PYTHON_DUMP, Path::new("/b/m.json")),
        Ok(sample())
    );
}

#[test]
fn write_then_load_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let written = sample().write(dir.path()).unwrap();
    assert_eq!(written, dir.path().join(COMPILED_META_FILE));
    assert_eq!(CompiledMeta::load(dir.path()), Ok(sample()));
    assert_eq!(CompiledMeta::load(&written), Ok(sample()));
    assert_eq!(sample().output_indices(), vec![2]);
    assert!(sample().params[1].is_scalar());
    assert_eq!(sample().params[2].host_dtype(), Ok(DType::BFloat16));

    let dist = DistributedMeta {
        program: sample(),
        distributed_config: DistributedConfig::new(vec![0, 1], 2, "host_build_graph".into(), 4)
            .unwrap(),
    };
    dist.write(dir.path()).unwrap();
    assert_eq!(DistributedMeta::load(dir.path()), Ok(dist));
}

const PATH: &str = "/b/compiled_meta.json";

/// Asserts the error for `text` has `kind` and its message starts with
/// `head` (with `PATH` for the file).
fn check(text: &str, kind: MetaErrorKind, head: &str) {
    let err = CompiledMeta::parse(text, Path::new(PATH)).expect_err(text);
    assert_eq!(err.kind(), kind, "{err}");
    let msg = err.to_string();
    assert!(
        msg.starts_with(head),
        "text: {text}\n got: {msg}\nwant: {head}"
    );
}

fn invalid(detail: &str) -> String {
    format!("Invalid compiled_meta.json in {PATH}: {detail}")
}

const TAIL: &str = ". The metadata was written by a different pypto version or hand-edited — recompile via ir.compile() to refresh.";

#[test]
fn malformed_sidecars_fail_with_pypto_texts() {
    use MetaErrorKind::{IncompatibleSchema, Invalid};
    check("{", Invalid, &invalid("not valid JSON ("));
    check(
        "[]",
        Invalid,
        &(invalid("expected a JSON object, got list") + TAIL),
    );
    check(
        "{\"schema\": 2, \"params\": []}",
        IncompatibleSchema,
        "Incompatible compiled_meta.json schema 2 (expected 1) in /b/compiled_meta.json. The metadata was written by a different pypto version — recompile via ir.compile() to refresh.",
    );
    check(
        "{\"params\": []}",
        IncompatibleSchema,
        "Incompatible compiled_meta.json schema None (expected 1)",
    );
    check(
        "{\"schema\": \"1\"}",
        IncompatibleSchema,
        "Incompatible compiled_meta.json schema '1' (expected 1)",
    );
    check(
        "{\"schema\": 1, \"params\": \"a\"}",
        Invalid,
        &(invalid("'params' must be a list, got str") + TAIL),
    );
    check(
        "{\"schema\": 1}",
        Invalid,
        &invalid("'params' must be a list, got NoneType"),
    );
    check(
        "{\"schema\": 1, \"params\": [\"a\"]}",
        Invalid,
        &invalid("params[0] must be an object, got str"),
    );
    let p = |fields: &str| format!("{{\"schema\": 1, \"params\": [{{{fields}}}]}}");
    check(
        &p("\"direction\": \"In\", \"shape\": null, \"dtype\": \"fp32\""),
        Invalid,
        &invalid("params[0] is malformed (missing key 'name')"),
    );
    check(
        &p("\"name\": 1, \"direction\": \"In\", \"shape\": null, \"dtype\": \"fp32\""),
        Invalid,
        &invalid("params[0] is malformed ('name' must be a string, got 1)"),
    );
    check(
        &p("\"name\": \"a\", \"direction\": \"mro\", \"shape\": null, \"dtype\": \"fp32\""),
        Invalid,
        &invalid(
            "params[0] is malformed ('direction' must be one of ['In', 'InOut', 'Out'], got 'mro')",
        ),
    );
    check(
        &p("\"name\": \"a\", \"direction\": \"In\", \"shape\": [1, true], \"dtype\": \"fp32\""),
        Invalid,
        &invalid("params[0] is malformed ('shape' must be null or a list of ints, got [1, True])"),
    );
    check(
        &p("\"name\": \"a\", \"direction\": \"In\", \"shape\": [1.0], \"dtype\": \"fp32\""),
        Invalid,
        &invalid("params[0] is malformed ('shape' must be null or a list of ints, got [1.0])"),
    );
    check(
        &p("\"name\": \"a\", \"direction\": \"In\", \"shape\": null, \"dtype\": \"fp99\""),
        Invalid,
        &invalid("params[0] is malformed (Unknown DataType string 'fp99'; known: ['bfloat16', "),
    );
    check(
        &p("\"name\": \"a\", \"direction\": \"In\", \"shape\": null, \"dtype\": 4"),
        Invalid,
        &invalid("params[0] is malformed ('dtype' must be a string, got 4)"),
    );
    check(
        "{\"schema\": 1, \"params\": [], \"num_return_types\": -1}",
        Invalid,
        &(invalid("'num_return_types' must be a non-negative integer, got -1") + TAIL),
    );
    check(
        "{\"schema\": 1, \"params\": [], \"num_return_types\": true}",
        Invalid,
        &invalid("'num_return_types' must be a non-negative integer, got True"),
    );
    check(
        "{\"schema\": 1, \"params\": [], \"backend_type\": \"mro\"}",
        Invalid,
        &invalid("'backend_type' must be one of ['Ascend910B', 'Ascend950'], got 'mro'"),
    );
    check(
        "{\"schema\": 1, \"params\": [], \"platform\": 5}",
        Invalid,
        &invalid("'platform' must be a string or absent, got int"),
    );
}

/// A parameter name picks files under data/: `../../x` would read and write outside the
/// build directory, two equal names would share files. Both are malformed sidecars.
#[test]
fn parameter_names_are_unique_identifiers() {
    use MetaErrorKind::Invalid;
    let one = |name: &str| {
        format!(
            "{{\"schema\": 1, \"params\": [{{\"name\": {}, \"direction\": \"In\", \"shape\": null, \"dtype\": \"fp32\"}}]}}",
            serde_json::Value::from(name)
        )
    };
    for bad in ["../../x", "a/b", "x.npy", "", "1x", "a b", "x\n", "\u{7f}"] {
        check(
            &one(bad),
            Invalid,
            &invalid(&format!(
                "params[0] is malformed ('name' must be a plain identifier (a Python parameter name), got {}",
                crate::pyrepr::repr_str(bad)
            )),
        );
    }
    for good in ["x", "_t0", "q_cache__ssa_v1", "張量"] {
        CompiledMeta::parse(&one(good), Path::new(PATH)).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
    let entry = |name: &str| {
        format!(
            "{{\"name\": \"{name}\", \"direction\": \"In\", \"shape\": null, \"dtype\": \"fp32\"}}"
        )
    };
    check(
        &format!(
            "{{\"schema\": 1, \"params\": [{}, {}, {}]}}",
            entry("a"),
            entry("b"),
            entry("a")
        ),
        Invalid,
        &invalid("params[2] repeats the name 'a' of params[0]; parameter names must be unique"),
    );
}

#[test]
fn absent_optional_fields_take_defaults() {
    let meta = CompiledMeta::parse(
        "{\"schema\": 1, \"params\": [], \"platform\": null}",
        Path::new(PATH),
    )
    .unwrap();
    assert_eq!(
        meta,
        CompiledMeta {
            params: vec![],
            num_return_types: 0,
            platform: None,
            backend_type: BackendType::Ascend910B,
        }
    );
    // A fp8 parameter is a known PyPTO dtype even without a host type.
    let meta = CompiledMeta::parse(
        "{\"schema\": 1, \"params\": [{\"name\": \"x\", \"direction\": \"InOut\", \"shape\": [4], \"dtype\": \"fp8e4m3fn\"}], \"backend_type\": \"Ascend950\"}",
        Path::new(PATH),
    )
    .unwrap();
    assert_eq!(meta.backend_type, BackendType::Ascend950);
    assert!(meta.params[0].host_dtype().is_err());
}

#[test]
fn file_level_failures() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(COMPILED_META_FILE);
    // A missing build directory names the sidecar inside it.
    let gone = dir.path().join("gone");
    let err = CompiledMeta::load(&gone).unwrap_err();
    assert_eq!(err.path(), gone.join(COMPILED_META_FILE));
    let err = CompiledMeta::load(dir.path()).unwrap_err();
    assert_eq!(err.kind(), MetaErrorKind::NotFound);
    assert_eq!(err.path(), path);
    assert_eq!(
        err.to_string(),
        format!("{} not found — cannot reconstruct a compiled program from this directory. It predates the single-chip replay feature, is a distributed (L3+) build (use DistributedCompiledProgram.from_dir), or is the parent of a multi-orch build (load next_levels/<name>/ instead). Recompile via ir.compile() to refresh.", path.display())
    );
    let err = DistributedMeta::load(dir.path()).unwrap_err();
    assert_eq!(err.kind(), MetaErrorKind::NotFound);
    assert_eq!(
        err.to_string(),
        format!("{} not found — cannot reconstruct a distributed program from this directory. It predates the L3 replay feature or is not a distributed (L3+) build. Recompile via ir.compile() to refresh.", dir.path().join(DISTRIBUTED_META_FILE).display())
    );

    std::fs::write(&path, b"{\"schema\": \xff}").unwrap();
    let err = CompiledMeta::load(dir.path()).unwrap_err();
    assert_eq!(err.kind(), MetaErrorKind::Invalid);
    let want = format!(
        "Invalid compiled_meta.json in {}: is not valid UTF-8 text (",
        path.display()
    );
    assert!(err.to_string().starts_with(&want), "{err}");

    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    let err = CompiledMeta::load(dir.path()).unwrap_err();
    let want = format!(
        "Invalid compiled_meta.json in {}: cannot be read (",
        path.display()
    );
    assert!(err.to_string().starts_with(&want), "{err}");
}

const DPATH: &str = "/b/distributed_meta.json";

fn check_dist(config: &str, head: &str) {
    let text = format!("{{\"schema\": 2, \"params\": [], \"distributed_config\": {config}}}");
    let err = DistributedMeta::parse(&text, Path::new(DPATH)).expect_err(&text);
    assert_eq!(err.kind(), MetaErrorKind::Invalid);
    let want = format!("Invalid distributed_meta.json in {DPATH}: {head}");
    assert!(
        err.to_string().starts_with(&want),
        "\n got: {err}\nwant: {want}"
    );
}

#[test]
fn distributed_config_validation() {
    check_dist("[]", "'distributed_config' must be an object, got list");
    check_dist(
        "null",
        "'distributed_config' must be an object, got NoneType",
    );
    check_dist(
        "{\"block_dim\": 1, \"a\": 2}",
        "'distributed_config' has unknown key(s) ['a', 'block_dim']; known: ['aicpu_thread_num', 'device_ids', 'num_sub_workers', 'runtime'].",
    );
    check_dist(
        "{\"device_ids\": [0, \"1\"]}",
        "'distributed_config.device_ids' must be a list of ints, got [0, '1']",
    );
    check_dist(
        "{\"device_ids\": 0}",
        "'distributed_config.device_ids' must be a list of ints, got 0",
    );
    check_dist(
        "{\"num_sub_workers\": \"2\"}",
        "'distributed_config.num_sub_workers' must be an int, got '2'",
    );
    check_dist(
        "{\"aicpu_thread_num\": 2.0}",
        "'distributed_config.aicpu_thread_num' must be an int, got 2.0",
    );
    check_dist(
        "{\"runtime\": 5}",
        "'distributed_config.runtime' must be a string, got 5",
    );
    check_dist(
        "{\"device_ids\": [0, 0]}",
        "'distributed_config' is invalid (DistributedConfig.device_ids must be distinct, got [0, 0]).",
    );
    check_dist(
        "{\"device_ids\": []}",
        "'distributed_config' is invalid (DistributedConfig.device_ids must not be empty)",
    );
    check_dist("{\"device_ids\": [1, -1]}", "'distributed_config' is invalid (DistributedConfig.device_ids must be non-negative device indices, got [1, -1])");
    check_dist(
        "{\"num_sub_workers\": -1}",
        "'distributed_config' is invalid (DistributedConfig.num_sub_workers must be non-negative, got -1)",
    );
    check_dist(
        "{\"num_sub_workers\": 1000000}",
        "'distributed_config' is invalid (DistributedConfig.num_sub_workers must be at most 1024 (MAX_SUB_WORKERS: the host runs one thread per sub-worker), got 1000000)",
    );
    let many: Vec<String> = (0..=1024).map(|i| i.to_string()).collect();
    check_dist(
        &format!("{{\"device_ids\": [{}]}}", many.join(", ")),
        "'distributed_config' is invalid (DistributedConfig.device_ids must list at most 1024 devices (MAX_DEVICES: one chip process each), got 1025 devices)",
    );
    check_dist(
        "{\"aicpu_thread_num\": 1}",
        "'distributed_config' is invalid (DistributedConfig.aicpu_thread_num must be 0 (architecture default) or at least 2, got 1)",
    );
    let err =
        DistributedMeta::parse("{\"schema\": 1, \"params\": []}", Path::new(DPATH)).unwrap_err();
    assert_eq!(err.kind(), MetaErrorKind::IncompatibleSchema);
    assert!(err.to_string().starts_with(
        "Incompatible distributed_meta.json schema 1 (expected 2) in /b/distributed_meta.json."
    ));
}

#[test]
fn distributed_defaults_and_exact_text() {
    let meta = DistributedMeta::parse("{\"schema\": 2, \"params\": []}", Path::new(DPATH)).unwrap();
    assert_eq!(meta.distributed_config, DistributedConfig::default());
    assert_eq!(meta.distributed_config.device_ids(), &[0]);
    assert_eq!(
        meta.distributed_config.runtime(),
        "tensormap_and_ringbuffer"
    );
    assert_eq!(
        meta.to_json_text(),
        "{\n  \"schema\": 2,\n  \"params\": [],\n  \"num_return_types\": 0,\n  \"platform\": null,\n  \"backend_type\": \"Ascend910B\",\n  \"distributed_config\": {\n    \"device_ids\": [\n      0\n    ],\n    \"num_sub_workers\": 0,\n    \"runtime\": \"tensormap_and_ringbuffer\",\n    \"aicpu_thread_num\": 0\n  }\n}"
    );
}

/// Hostile sidecars: nesting stops at serde_json's recursion limit (an
/// error, not a stack overflow), an oversized file is refused before it is
/// read, and a static shape whose bytes overflow is malformed.
#[test]
fn hostile_sidecars_are_bounded() {
    let deep = format!(
        "{{\"schema\": 1, \"params\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    check(
        &deep,
        MetaErrorKind::Invalid,
        &invalid("not valid JSON (recursion limit exceeded at line 1 column 151)"),
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(COMPILED_META_FILE);
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(MAX_SIDECAR_BYTES + 1).unwrap();
    let err = CompiledMeta::load(dir.path()).unwrap_err();
    assert_eq!(err.kind(), MetaErrorKind::Invalid);
    assert_eq!(
        err.to_string(),
        format!(
            "Invalid compiled_meta.json in {}: is 67108865 bytes, more than the 64 MiB a sidecar may have{TAIL}",
            path.display()
        )
    );

    let p = |shape: &str| {
        format!("{{\"schema\": 1, \"params\": [{{\"name\": \"a\", \"direction\": \"Out\", \"shape\": {shape}, \"dtype\": \"fp32\"}}]}}")
    };
    check(
        &p("[4611686018427387904, 2]"),
        MetaErrorKind::Invalid,
        &(invalid("params[0] is malformed ('shape' [4611686018427387904, 2] of fp32 holds more bytes than a tensor can (the size overflows 63 bits))") + TAIL),
    );
    // Dynamic dimensions are not counted; the largest addressable size passes.
    let meta = CompiledMeta::parse(&p("[-1, 1152921504606846975, -1]"), Path::new(PATH)).unwrap();
    assert_eq!(
        meta.params[0].shape,
        Some(vec![-1, 1152921504606846975, -1])
    );
}

#[test]
fn load_program_skips_only_the_distributed_config_block() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DISTRIBUTED_META_FILE);
    std::fs::write(
        &path,
        "{\"schema\": 2, \"params\": [{\"name\": \"x\", \"direction\": \"In\", \"shape\": [4], \"dtype\": \"fp32\"}], \"distributed_config\": {\"device_ids\": [0, 0]}}",
    )
    .unwrap();
    let err = DistributedMeta::load(dir.path()).unwrap_err();
    assert!(
        err.to_string()
            .contains("DistributedConfig.device_ids must be distinct"),
        "{err}"
    );
    // A caller with its own DistributedConfig (PyPTO's from_dir override) gets the program.
    let program = DistributedMeta::load_program(dir.path()).unwrap();
    assert_eq!(program.params.len(), 1);
    // The rest is still checked.
    std::fs::write(
        &path,
        "{\"schema\": 2, \"params\": [{\"name\": \"x\", \"direction\": \"Sideways\", \"shape\": [4], \"dtype\": \"fp32\"}]}",
    )
    .unwrap();
    let err = DistributedMeta::load_program(dir.path()).unwrap_err();
    assert!(err.to_string().contains("params[0] is malformed"), "{err}");
}
