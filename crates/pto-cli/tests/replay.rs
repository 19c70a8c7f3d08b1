//! The `pto` binary as a user runs it: exit codes, messages, the demo, two-pass swimlane.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::text;

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli", name)
}

fn example(name: &str, as_name: &str) -> PathBuf {
    common::example("cli", name, as_name)
}

fn pto(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn replay_validate_passes_and_mismatch_exits_1() {
    let dir = example("vector_add", "ok");
    let o = pto(&["replay", dir.to_str().unwrap(), "--validate"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("c: PASS (16384/16384 elements matched)"),
        "{}",
        text(&o)
    );
    assert!(dir.join("data/actual/c.npy").exists());

    // Corrupt the golden: a clean "no", exit 1, with the mismatch report.
    let golden = dir.join("data/out/c.npy");
    let mut bytes = std::fs::read(&golden).unwrap();
    let n = bytes.len();
    bytes[n - 4..].copy_from_slice(&1234.5f32.to_le_bytes());
    std::fs::write(&golden, bytes).unwrap();
    let o = pto(&["replay", dir.to_str().unwrap(), "--validate"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("Mismatched elements: 1/16384") && t.contains("FAIL"),
        "{t}"
    );
}

/// `pto replay` with a cold compiler cache and `PTO_COMPILE_PROGRESS` set to `progress`.
fn cold_replay(name: &str, progress: &str) -> Output {
    let dir = example("vector_add", name);
    let cache = scratch(&format!("{name}_cache"));
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(["replay", dir.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .env("PTO_CACHE_DIR", &cache)
        .env("PTO_COMPILE_PROGRESS", progress)
        .output()
        .unwrap()
}

#[test]
fn compiles_name_their_unit_on_stderr() {
    let o = cold_replay("progress_each", "each");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("pto: compiling ") && err.contains("(orchestration)"),
        "{err}"
    );
    assert!(err.contains("(AIV kernel)"), "{err}");
    // A threshold no compile reaches prints nothing; a bad value is named.
    let o = cold_replay("progress_slow", "600");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(!text(&o).contains("compiling"), "{}", text(&o));
    let o = cold_replay("progress_bad", "often");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("PTO_COMPILE_PROGRESS"), "{}", text(&o));
}

#[test]
fn bad_input_exits_2_naming_the_file_and_the_fix() {
    let root = scratch("bad");
    let missing = root.join("nope");
    let o = pto(&["replay", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("nope"), "{}", text(&o));

    let empty = root.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = pto(&["replay", empty.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("is not a build_output directory (missing kernel_config.py and orchestration/host_orch.py)"), "{}", text(&o));

    let dir = example("vector_add", "bad_config");
    std::fs::write(
        dir.join("kernel_config.py"),
        "KERNELS = [\n  {\"func_id\": 0,}\n]\nexec('x')\n",
    )
    .unwrap();
    let o = pto(&["replay", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("kernel_config.py") && text(&o).contains("line"),
        "{}",
        text(&o)
    );

    let dir = example("vector_add", "no_input");
    std::fs::remove_file(dir.join("data/in/a.npy")).unwrap();
    let o = pto(&["replay", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("data/in/a.npy"), "{}", text(&o));

    let o = pto(&["replay", dir.to_str().unwrap(), "--platform", "a5"]);
    assert_eq!(o.status.code(), Some(2));
    let o = pto(&["replay", dir.to_str().unwrap(), "--log-level", "loud"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("unknown log level"), "{}", text(&o));
}

#[test]
fn hardware_platform_says_no_device() {
    let dir = example("vector_add", "hw");
    let o = pto(&["replay", dir.to_str().unwrap(), "--platform", "a2a3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("no Ascend device on this machine"),
        "{}",
        text(&o)
    );
}

/// Every example the binary bundles (the list `pto demo` runs, not a copy of it) runs and
/// validates, the L3 ones through the pypto package; each row counts the tasks it ran.
#[test]
fn demo_runs_every_example_from_any_directory() {
    let names = pto_runner::demo::example_names();
    assert!(
        names.contains(&"vector_add") && names.contains(&"l3_hello_rank"),
        "{names:?}"
    );
    let out = scratch("demo");
    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(["demo", "--out", out.to_str().unwrap()])
        .current_dir(std::env::temp_dir())
        .env("PTO_PYTHON", common::pypto_python())
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    for name in &names {
        let line = common::demo_row(&t, name).unwrap_or_else(|| panic!("{name} missing: {t}"));
        assert!(line.ends_with("PASS"), "{line}");
        let tasks: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(tasks > 0, "{line}");
        assert!(out.join(name).is_dir(), "{name}");
    }
    // One row per example, nothing else between the header and the footer.
    let rows = t
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| names.contains(&w))
        })
        .count();
    assert_eq!(rows, names.len(), "{t}");
}

#[test]
fn two_pass_swimlane_on_cpu_leaves_deps_and_resolvable_records() {
    let dir = example("bgemm", "two_pass");
    let o = pto(&[
        "replay",
        dir.to_str().unwrap(),
        "--platform",
        "cpu",
        "--swimlane",
        "--validate",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("[swimlane] run 1/2") && t.contains("[swimlane] run 2/2"),
        "{t}"
    );
    let out = dir.join("dfx_outputs");
    let deps = pto_dfx::deps::read(&out.join("deps.json")).unwrap().value;
    let lanes = pto_dfx::swimlane::read(&out.join("chip_swimlane_records.json"))
        .unwrap()
        .value;
    assert_eq!(lanes.metadata.clock_freq_hz, 1_000_000_000);
    // Every swimlane row's task is in the graph, so its kernel name resolves.
    let ids: std::collections::HashSet<u64> = deps.tasks.iter().map(|t| t.task_id.0).collect();
    assert_eq!(lanes.aicore_tasks.len(), 128);
    assert!(lanes
        .aicore_tasks
        .iter()
        .all(|r| ids.contains(&r.task_token.0)));
    // The staged spec and inputs are removed after a successful capture.
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("_dep_gen"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn failed_graph_capture_warns_keeps_the_spec_and_still_times() {
    let dir = example("vector_add", "two_pass_fail");
    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args([
            "replay",
            dir.to_str().unwrap(),
            "--platform",
            "cpu",
            "--swimlane",
        ])
        .env("PTO_DEP_GEN_CAPTURE", "false")
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(
        t.contains("dep_gen graph capture subprocess failed (exit 1)")
            && t.contains("Inputs kept at"),
        "{t}"
    );
    let out = dir.join("dfx_outputs");
    assert!(out.join("chip_swimlane_records.json").exists());
    assert!(!out.join("deps.json").exists());
    assert!(std::fs::read_dir(&out).unwrap().flatten().any(|e| e
        .file_name()
        .to_string_lossy()
        .starts_with("_dep_gen_spec_")));
}

#[test]
fn all_five_diagnostics_on_paged_attention() {
    let dir = example("paged_attention", "all_dfx");
    let o = pto(&[
        "replay",
        dir.to_str().unwrap(),
        "--validate",
        "--swimlane",
        "--dump-args",
        "2",
        "--pmu",
        "--dep-gen",
        "--scope-stats",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let out = dir.join("dfx_outputs");
    assert!(pto_dfx::swimlane::read(&out.join("chip_swimlane_records.json")).is_ok());
    assert!(pto_dfx::deps::read(&out.join("deps.json")).is_ok());
    assert!(pto_dfx::args_dump::read(&out.join("args_dump/args_dump.json")).is_ok());
    assert!(pto_dfx::scope_stats::read(&out.join("scope_stats/scope_stats.jsonl")).is_ok());
    assert!(pto_dfx::name_map::read(&out.join("name_map_paged_attention.json")).is_ok());
    assert!(
        std::fs::read_to_string(out.join("pmu.csv"))
            .unwrap()
            .lines()
            .count()
            > 1
    );
    assert!(
        t.contains("pto deps-viewer")
            && t.contains("pto scope-stats-plot")
            && t.contains("pto dump-viewer"),
        "{t}"
    );
}

#[test]
fn ring_overrides_from_the_command_line() {
    let dir = example("paged_attention", "rings");
    let o = pto(&["replay", dir.to_str().unwrap(), "--ring-task-window", "4"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("task window 4 of ring 1 cannot hold") && t.contains("raise ring_task_window"),
        "{t}"
    );
    assert_eq!(
        t.matches("PTO2_ERROR_FLOW_CONTROL_DEADLOCK").count(),
        1,
        "reported once: {t}"
    );
    let o = pto(&[
        "replay",
        dir.to_str().unwrap(),
        "--ring-task-window",
        "0,64,0,0",
        "--validate",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = pto(&["replay", dir.to_str().unwrap(), "--ring-heap", "1000"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("ring_heap must be >= 1024 (bytes per ring), got 1000"),
        "{}",
        text(&o)
    );
    // Simpler's runtime takes any heap of at least 1024 bytes (PyPTO's RunConfig alone asks
    // a power of two): 1.5 MiB on ring 1, as Simpler's heap_empty_ring_rebase scene passes.
    let o = pto(&[
        "replay",
        dir.to_str().unwrap(),
        "--ring-heap",
        "0,1572864,0,0",
        "--validate",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn a_malformed_ring_flag_is_a_usage_error() {
    let dir = example("vector_add", "ring_parse");
    let o = pto(&["replay", dir.to_str().unwrap(), "--ring-dep-pool", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("`lots` is not a number"), "{}", text(&o));
}

/// Orchestrations written the way Simpler's own examples are (manual scope with reused
/// arguments and explicit dependencies; SPMD sync-start with a5's names behind its include
/// guard and a predicated branch) replay unchanged over the bundled kernels and validate on
/// both simulated platforms.
#[test]
fn simpler_style_orchestrations_validate_on_a2a3sim_and_a5sim() {
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/simpler");
    for (example_name, orch_file, fixture) in [
        (
            "paged_attention",
            "paged_attention.cpp",
            "paged_attention_manual_scope.cpp",
        ),
        ("vector_add", "vector_add.cpp", "vector_add_sync_start.cpp"),
    ] {
        for platform in ["a2a3sim", "a5sim"] {
            let dir = example(example_name, &format!("simpler_{example_name}_{platform}"));
            std::fs::copy(
                fixtures.join(fixture),
                dir.join("orchestration").join(orch_file),
            )
            .unwrap();
            let o = pto(&[
                "replay",
                dir.to_str().unwrap(),
                "--validate",
                "--platform",
                platform,
            ]);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{fixture} on {platform}: {}",
                text(&o)
            );
            assert!(
                text(&o).contains("PASS"),
                "{fixture} on {platform}: {}",
                text(&o)
            );
        }
    }
}

/// The issue's "done when": a build directory whose data PyPTO wrote as `.pt`
/// (`torch.save`, by real torch from `PTO_PYTHON`) validates with `pto replay DIR
/// --validate` run with no Python on its PATH, writes `data/actual/c.pt` that torch
/// loads, and benchmarks with `pto bench`.
#[test]
fn a_directory_pypto_wrote_as_pt_validates_without_python() {
    let Some(python) = std::env::var_os("PTO_PYTHON") else {
        println!("note: PTO_PYTHON is not set, so no torch-written directory was made (CI sets it; the runner's tests cover .pt data written by our writer)");
        return;
    };
    let dir = example("vector_add", "pt_from_torch");
    let to_pt = r#"
import sys, numpy as np, torch
from pathlib import Path
for sub in ("in", "out"):
    for npy in sorted((Path(sys.argv[1]) / "data" / sub).glob("*.npy")):
        torch.save(torch.from_numpy(np.load(npy)), npy.with_suffix(".pt"))
        npy.unlink()
"#;
    let o = Command::new(&python)
        .args(["-c", to_pt])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(dir.join("data/in/a.pt").exists() && !dir.join("data/in/a.npy").exists());

    let bare = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pto"));
        cmd.args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("NO_COLOR", "1");
        if let Some(cache) = std::env::var_os("PTO_CACHE_DIR") {
            cmd.env("PTO_CACHE_DIR", cache);
        }
        cmd.output().unwrap()
    };
    let o = bare(&["replay", dir.to_str().unwrap(), "--validate"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("c: PASS (16384/16384 elements matched)"),
        "{}",
        text(&o)
    );
    let actual = dir.join("data/actual/c.pt");
    assert!(actual.exists() && !dir.join("data/actual/c.npy").exists());
    let check = r#"
import sys, torch
a = torch.load(sys.argv[1], weights_only=True)
g = torch.load(sys.argv[2], weights_only=True)
assert a.dtype == g.dtype and a.shape == g.shape and torch.allclose(a, g), (a, g)
print("torch agrees")
"#;
    let o = Command::new(&python)
        .args(["-c", check])
        .arg(&actual)
        .arg(dir.join("data/out/c.pt"))
        .output()
        .unwrap();
    assert!(
        o.status.success() && text(&o).contains("torch agrees"),
        "{}",
        text(&o)
    );

    let o = bare(&[
        "bench",
        dir.to_str().unwrap(),
        "--rounds",
        "2",
        "--warmup",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn compact_format_in_a_chip_process_exports_to_simplers_json() {
    let dir = example("paged_attention", "compact");
    let o = pto(&[
        "replay",
        dir.to_str().unwrap(),
        "--validate",
        "--swimlane",
        "--dep-gen",
        "--dfx-format",
        "compact",
    ]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    assert!(t.contains("pto dfx-export "), "{t}");
    let out = dir.join("dfx_outputs");
    for (bin, json) in [
        ("chip_swimlane_records.bin", "chip_swimlane_records.json"),
        ("deps.bin", "deps.json"),
    ] {
        assert!(out.join(bin).is_file(), "{bin}: {t}");
        assert!(!out.join(json).exists(), "{json}");
    }
    let records = pto_dfx::compact::swimlane::read(&out.join("chip_swimlane_records.bin")).unwrap();
    let o = pto(&["dfx-export", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("Wrote "), "{}", text(&o));
    // Simpler's readers take the exported files, and they hold the compact records.
    let lanes = pto_dfx::swimlane::read(&out.join("chip_swimlane_records.json"))
        .unwrap()
        .value;
    assert_eq!(lanes, records.to_model());
    let deps = pto_dfx::deps::read(&out.join("deps.json")).unwrap();
    assert!(deps.problems.is_empty(), "{:?}", deps.problems);
    assert!(deps.value.check_consistency().is_empty());
    // The viewers read the compact files by their content.
    let o = pto(&["critical-path", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn compact_format_two_pass_and_a_bad_environment_value() {
    let dir = example("vector_add", "compact_two_pass");
    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args([
            "replay",
            dir.to_str().unwrap(),
            "--platform",
            "cpu",
            "--swimlane",
        ])
        .env("PTO_DFX_FORMAT", "compact")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{t}");
    let out = dir.join("dfx_outputs");
    assert!(out.join("chip_swimlane_records.bin").is_file(), "{t}");
    // The graph pass wrote the same form.
    assert!(out.join("deps.bin").is_file(), "{t}");
    assert!(!out.join("deps.json").exists());

    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(["replay", dir.to_str().unwrap(), "--swimlane"])
        .env("PTO_DFX_FORMAT", "yaml")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("PTO_DFX_FORMAT must be 'json' or 'compact', got 'yaml'"),
        "{}",
        text(&o)
    );
}
