//! Both generations of the DFX files (`--dfx-schema 2026-08|2026-09`) through a real replay:
//! key and column orders of each, detection from content, and every viewer reading both.

use std::path::{Path, PathBuf};

use pto_dfx::DfxSchema;
use pto_dfx_view::{critical_path, deps_viewer, dump_viewer, scope_stats_plot, swimlane_converter};
use pto_runner::{replay, DfxOptions, ReplayOptions, RunConfig};

use crate::fixture::scale_add;

const ALL: DfxOptions = DfxOptions {
    chip_swimlane: 4,
    dump_args: 2,
    pmu: 2,
    dep_gen: true,
    scope_stats: true,
    predicted_timing: false,
};

/// Replays a fresh scale_add build with every diagnostic in `schema` and returns its
/// `dfx_outputs/`.
fn run(name: &str, schema: DfxSchema) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("generations");
    let dir = scale_add(&root, name);
    let mut config = RunConfig::new(None).unwrap();
    config.dfx = ALL;
    config.dfx_schema = Some(schema);
    let options = ReplayOptions {
        validate: true,
        recompile: true,
        rebuild_from_pto: true,
    };
    replay(&dir, &config, &options).unwrap();
    dir.join("dfx_outputs")
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

fn check_2026_08(out: &Path) {
    let deps = read(&out.join("deps.json"));
    assert!(deps.starts_with("{\"tasks\":["), "{}", &deps[..40]);
    assert_eq!(pto_dfx::deps::detect(deps.as_bytes()), DfxSchema::V2026_08);
    let scope = read(&out.join("scope_stats/scope_stats.jsonl"));
    assert!(scope.starts_with("{\"version\": 6, \"fatal\": "), "{scope}");
    assert!(!scope.contains("run_epoch"));
    assert_eq!(
        pto_dfx::scope_stats::detect(scope.as_bytes()),
        DfxSchema::V2026_08
    );
    let swim = read(&out.join("chip_swimlane_records.json"));
    assert_eq!(
        pto_dfx::swimlane::detect(swim.as_bytes()),
        DfxSchema::V2026_08
    );
    let v: serde_json::Value = serde_json::from_str(&swim).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "chip_swimlane_level",
            "metadata",
            "aicore_tasks",
            "aicpu_tasks",
            "aicpu_scheduler_phases",
            "aicpu_orchestrator_phases"
        ]
    );
    assert!(v["aicore_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r.as_array().unwrap().len() == 6));
    assert!(v["metadata"].get("runtime").is_none());
}

fn check_2026_09(out: &Path) {
    let deps = read(&out.join("deps.json"));
    assert!(
        deps.starts_with("{\"runtime\":\"tensormap_and_ringbuffer\",\"tasks\":["),
        "{}",
        &deps[..60]
    );
    assert_eq!(pto_dfx::deps::detect(deps.as_bytes()), DfxSchema::V2026_09);
    let scope = read(&out.join("scope_stats/scope_stats.jsonl"));
    let mut lines = scope.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("{\"fatal\": false, \"dropped\": 0, \"total\": "));
    for l in lines {
        assert!(
            l.contains(", \"tensormap\": ") && l.ends_with(", \"buf_seq\": 0}"),
            "{l}"
        );
        let epoch: serde_json::Value = serde_json::from_str(l).unwrap();
        assert!(epoch["run_epoch"].as_u64().unwrap() >= 1, "{l}");
    }
    assert_eq!(
        pto_dfx::scope_stats::detect(scope.as_bytes()),
        DfxSchema::V2026_09
    );
    let swim = read(&out.join("chip_swimlane_records.json"));
    assert!(swim.starts_with(
        "{\n  \"chip_swimlane_level\": 4,\n  \"metadata\": {\n    \"runtime\": \"tensormap_and_ringbuffer\",\n    \"clock_freq_hz\": "
    ));
    assert!(!swim.contains("schema_version") && !swim.contains("aicpu_tasks"));
    assert_eq!(
        pto_dfx::swimlane::detect(swim.as_bytes()),
        DfxSchema::V2026_09
    );
    let v: serde_json::Value = serde_json::from_str(&swim).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "chip_swimlane_level",
            "metadata",
            "aicore_tasks",
            "scheduler_tasks",
            "scheduler_records",
            "aicpu_orchestrator_phases"
        ]
    );
    let rows = v["aicore_tasks"].as_array().unwrap();
    let epoch = rows[0][6].as_u64().unwrap();
    assert!(rows
        .iter()
        .all(|r| r.as_array().unwrap().len() == 7 && r[6] == epoch));
    assert_eq!(v["scheduler_tasks"]["producer"], "aicpu");
    assert!(v["scheduler_tasks"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r.as_array().unwrap().len() == 5 && r[4] == epoch));
    let stream = &v["scheduler_records"]["streams"][0];
    let stream_keys: Vec<&str> = stream
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        stream_keys,
        [
            "platform",
            "producer",
            "scheduler_id",
            "worker_id",
            "core_type",
            "physical_core_id",
            "capture",
            "records",
            "metrics"
        ]
    );
    let record_keys: Vec<&str> = stream["records"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        record_keys,
        [
            "start_cycles",
            "end_cycles",
            "run_epoch",
            "loop_iter",
            "kind",
            "tasks_processed",
            "task_id"
        ]
    );
    assert_eq!(v["aicpu_orchestrator_phases"][0][0]["run_epoch"], epoch);
}

/// Every viewer reads the outputs, with no warning.
fn view_all(out: &Path) {
    let swim = out.join("chip_swimlane_records.json");
    let trace = out.join("merged.json");
    let r = swimlane_converter::convert(&swimlane_converter::ConvertOptions {
        input: &swim,
        output: Some(&trace),
        deps: None,
        func_names: None,
        kernel_config: None,
    })
    .unwrap();
    assert!(r.warnings.is_empty() && r.n_tasks > 0, "{:?}", r.warnings);
    assert!(r.n_flows > 0, "flows need deps.json's edges");
    let deps = out.join("deps.json");
    let r = deps_viewer::view(&deps_viewer::DepsViewerOptions {
        input: &deps,
        output: Some(&out.join("deps.txt")),
        format: deps_viewer::Format::Text,
        layout: deps_viewer::LayoutChoice::Auto,
        func_names: None,
        edge_mode: deps_viewer::EdgeMode::Full,
    })
    .unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let r = scope_stats_plot::plot(&out.join("scope_stats/scope_stats.jsonl"), None).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let r = critical_path::analyze(out).unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    dump_viewer::load(&out.join("args_dump")).unwrap();
}

#[test]
fn both_generations_are_written_and_read() {
    let old = run("gen_2026_08", DfxSchema::V2026_08);
    check_2026_08(&old);
    view_all(&old);
    let new = run("gen_2026_09", DfxSchema::V2026_09);
    check_2026_09(&new);
    view_all(&new);
    // The same graph in both.
    let a = pto_dfx::deps::read(&old.join("deps.json")).unwrap().value;
    let b = pto_dfx::deps::read(&new.join("deps.json")).unwrap().value;
    assert_eq!(a.edges.len(), b.edges.len());
    assert_eq!(
        b.with_schema(DfxSchema::V2026_08).tasks.len(),
        a.tasks.len()
    );
}

/// `run_epoch` counts the runs of the process: a later run has a larger one.
#[test]
fn run_epoch_counts_runs() {
    let first = pto_runner::dfx_output::next_run_epoch();
    let second = pto_runner::dfx_output::next_run_epoch();
    assert!(first >= 1 && second > first);
}
