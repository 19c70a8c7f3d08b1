//! `pto swimlane-converter`, `deps-viewer`, `scope-stats-plot`,
//! `dump-viewer` and `critical-path`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pto_dfx_view::trace_check;
use serde_json::Value;

use crate::common::{self, text};

fn pto(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// `pto` run with `dir` as its working directory.
fn pto_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The reference's §2.5 records (level 4) with a third task.
const RECORDS: &str = r#"{
  "chip_swimlane_level": 4,
  "metadata": {"clock_freq_hz": 50000000, "num_cores": 2, "core_types": ["aic", "aiv"], "core_to_thread": [0, 0]},
  "aicore_tasks": [[0, 4294967296, 1, 1100, 1400, 10], [1, 0, 1, 1000, 1050, 8], [1, 4294967297, 2, 1450, 1500, 8]],
  "aicpu_tasks": [[0, 1, 1080, 1420], [1, 1, 980, 1060], [1, 2, 1430, 1520]],
  "aicpu_scheduler_phases": [[
    {"kind": "dispatch", "start_cycles": 975, "end_cycles": 985, "loop_iter": 1, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [0,1,0], "shared_at_end": [0,0,0]},
    {"kind": "complete", "start_cycles": 1055, "end_cycles": 1065, "loop_iter": 2, "tasks_processed": 1, "shared_at_start": [1,0,0], "shared_at_end": [1,0,0]}
  ]],
  "aicpu_orchestrator_phases": [[{"submit_idx": 0, "task_id": 0, "start_cycles": 900, "end_cycles": 920}]]
}"#;

const DEPS: &str = r#"{"tasks":[{"task_id":"0","scope":"auto","early_dispatch":false,"kernel_ids":[-1,0,-1],"block_num":1,"args":[]},{"task_id":"4294967296","scope":"manual","early_dispatch":false,"kernel_ids":[1,-1,-1],"block_num":1,"args":[]},{"task_id":"4294967297","scope":"manual","early_dispatch":false,"kernel_ids":[-1,2,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"0","succ":"4294967296","arg":0,"source":"tensormap","flags":["wait"]},{"pred":"0","succ":"4294967297","arg":0,"source":"tensormap","flags":["wait"]},{"pred":"4294967296","succ":"4294967297","arg":1,"source":"tensormap","flags":["wait"]}]}
"#;

const NAMES: &str = r#"{"level": 2, "orchestrator_name": "Demo", "callable_id_to_name": {"0": "ADD", "1": "<script>alert(1)</script>", "2": "SUB"}}"#;

/// A run directory with the three files.
fn run_dir(name: &str) -> PathBuf {
    let d = common::scratch("viewers", name);
    std::fs::write(d.join("chip_swimlane_records.json"), RECORDS).unwrap();
    std::fs::write(d.join("deps.json"), DEPS).unwrap();
    std::fs::write(d.join("name_map_Demo_case.json"), NAMES).unwrap();
    d
}

fn check_trace(path: &Path) -> Value {
    let trace: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    if let Err(errors) = trace_check::check(&trace) {
        panic!("{}:\n{}", path.display(), errors.join("\n"));
    }
    trace
}

#[test]
fn swimlane_converter_writes_a_checked_trace_and_a_summary() {
    let d = run_dir("convert");
    let o = pto(&[
        "swimlane-converter",
        s(&d.join("chip_swimlane_records.json")),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("Func_ID") && out.contains("ADD") && out.contains("TOTAL"),
        "{out}"
    );
    assert!(out.contains("Total Test Time: "), "{out}");
    let merged: Vec<PathBuf> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("merged_swimlane_")
        })
        .collect();
    assert_eq!(merged.len(), 1, "{merged:?}");
    assert!(
        out.contains(&format!("Wrote {}", merged[0].display())),
        "{out}"
    );
    let trace = check_trace(&merged[0]);
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == 4)
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["ADD(t0)", "<script>alert(1)</script>(r1t0)", "SUB(r1t1)"]
    );

    // -o, and names from a kernel_config.py (the name map is passed explicitly elsewhere).
    let kc = d.join("kernel_config.py");
    std::fs::write(&kc, "KERNELS = [{\"func_id\": 0, \"name\": \"kc_add\"}]\n").unwrap();
    let out_path = d.join("custom.json");
    let o = pto(&[
        "swimlane-converter",
        s(&d.join("chip_swimlane_records.json")),
        "-o",
        s(&out_path),
        "-k",
        s(&kc),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let trace = check_trace(&out_path);
    assert!(trace.to_string().contains("kc_add(t0)"));

    // --overhead: the eight oh_* tracks under the AICPU Scheduler (pid 2).
    let oh_path = d.join("overhead.json");
    let o = pto(&[
        "swimlane-converter",
        s(&d.join("chip_swimlane_records.json")),
        "-o",
        s(&oh_path),
        "--overhead",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Overhead Analysis: "), "{out}");
    let trace = check_trace(&oh_path);
    let series: std::collections::BTreeSet<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "overhead" && e["pid"] == 2 && e["ph"] == "C")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(
        series.contains("oh_has_overhead") && series.contains("oh_all_overhead"),
        "{series:?}"
    );
}

/// Regression: a bare file name has an empty parent, which named no
/// directory, so the name map beside it was not found.
#[test]
fn bare_file_names_find_their_siblings() {
    let d = run_dir("relative");
    let o = pto_in(
        &d,
        &[
            "swimlane-converter",
            "chip_swimlane_records.json",
            "-o",
            "t.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("  ADD  "),
        "{}",
        text(&o)
    );
    assert!(check_trace(&d.join("t.json"))
        .to_string()
        .contains("\"ADD(t0)\""));
    let o = pto_in(&d, &["deps-viewer", "deps.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let body = std::fs::read_to_string(d.join("deps_viewer.txt")).unwrap();
    assert!(
        body.contains("func_name_map: yes") && body.contains("perf_sidecar: yes"),
        "{body}"
    );
    let o = pto_in(&d, &["critical-path", "."]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("| ADD |"),
        "{}",
        text(&o)
    );
}

#[test]
fn swimlane_converter_accepts_five_column_rows() {
    let d = common::scratch("viewers", "five_columns");
    let input = d.join("chip_swimlane_records.json");
    std::fs::write(
        &input,
        r#"{"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 50000000, "num_cores": 1, "core_types": ["aiv"]},
  "aicore_tasks": [[0, 0, 1, 100, 200], [0, 1, 2, 210, 300]], "aicpu_tasks": [[0, 1, 90, 205], [0, 2, 205, 310]]}"#,
    )
    .unwrap();
    let o = pto(&["swimlane-converter", s(&input), "-o", s(&d.join("t.json"))]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // No deps.json: a warning on stderr, task(...) labels.
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("warning: no deps.json"),
        "{}",
        text(&o)
    );
    let trace = check_trace(&d.join("t.json"));
    assert!(trace.to_string().contains("\"task(t1)\""));
}

#[test]
fn malformed_inputs_exit_2_naming_file_and_key() {
    let d = common::scratch("viewers", "malformed");
    let cases: [(&str, &str, Option<&str>); 3] = [
        ("truncated.json", &RECORDS[..120], None),
        ("level.json", "{\"chip_swimlane_level\": 7, \"metadata\": {\"clock_freq_hz\": 1}, \"aicore_tasks\": [], \"aicpu_tasks\": []}", Some("chip_swimlane_level")),
        ("nokey.json", "{\"chip_swimlane_level\": 2, \"metadata\": {\"clock_freq_hz\": 1, \"num_cores\": 0, \"core_types\": []}, \"aicpu_tasks\": []}", Some("aicore_tasks")),
    ];
    for (name, content, key) in cases {
        let input = d.join(name);
        std::fs::write(&input, content).unwrap();
        let o = pto(&["swimlane-converter", s(&input)]);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("error: cannot read "), "{err}");
        assert!(err.contains(s(&input)), "{err}");
        match key {
            Some(k) => assert!(err.contains(&format!("`{k}`")), "{err}"),
            None => assert!(err.contains("truncated JSON"), "{err}"),
        }
    }
    let deps = d.join("deps.json");
    std::fs::write(&deps, "{\"tasks\": [], \"edges\": []}").unwrap();
    let o = pto(&["deps-viewer", s(&deps)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`tensors`"),
        "{}",
        text(&o)
    );
    let stats = d.join("scope_stats.jsonl");
    std::fs::write(&stats, "{\"version\": 6, \"fatal\": fal").unwrap();
    let o = pto(&["scope-stats-plot", s(&stats)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(s(&stats)),
        "{}",
        text(&o)
    );
    let o = pto(&["swimlane-converter", s(&d.join("absent.json"))]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// Simpler's observed reduction of this graph (reference §9.3).
#[test]
fn deps_viewer_edge_modes_print_simplers_reduction() {
    let d = run_dir("deps_reduced");
    let input = d.join("deps.json");
    let o = pto(&["deps-viewer", s(&input), "--edge-mode", "reduced"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(
            "Transitive reduction: removed 1 redundant edge(s) of 3 (2 kept)\n  - (0, 0) -> (1, 1)\n"
        ),
        "{out}"
    );
    let body = std::fs::read_to_string(d.join("deps_viewer_reduced.txt")).unwrap();
    assert!(body.contains("  unique_task_edges: 2\n"), "{body}");
    assert!(
        body.contains("TASK (0, 0) kind=submit func_id=[-1,0,-1] name=ADD fanin=0 fanout=1\n"),
        "{body}"
    );
    let o = pto(&[
        "deps-viewer",
        s(&input),
        "--edge-mode",
        "omitted_dataflow",
        "--format",
        "html",
        "--engine",
        "builtin",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let html = std::fs::read_to_string(d.join("deps_viewer_omitted_dataflow.html")).unwrap();
    assert_eq!(
        html.matches("hidden-edge\"").count(),
        2,
        "two of three edges hidden"
    );
    let o = pto(&["deps-viewer", s(&input), "--edge-mode", "transitive"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn deps_viewer_layout_timeout_is_checked_and_reaches_graphviz() {
    let d = run_dir("deps_timeout");
    let input = d.join("deps.json");
    let html = [
        "deps-viewer",
        s(&input),
        "--format",
        "html",
        "--engine",
        "dot",
    ];
    let o = pto(&[&html[..], &["--layout-timeout=-1"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("`--layout-timeout -1`"), "{}", text(&o));
    // A budget dot meets on three nodes: its layout is used.
    let o = pto(&[&html[..], &["--layout-timeout", "60"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("layout: graphviz dot"),
        "{}",
        text(&o)
    );
}

#[test]
fn deps_viewer_text_by_default_and_html_on_request() {
    let d = run_dir("deps");
    let input = d.join("deps.json");
    let o = pto(&["deps-viewer", s(&input)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let txt = d.join("deps_viewer.txt");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!(
            "Wrote {} (3 tasks, 3 unique edges, 3 annotated edges, format=text)",
            txt.display()
        )
    );
    let body = std::fs::read_to_string(&txt).unwrap();
    assert!(
        body.contains("  perf_sidecar: yes\n  func_name_map: yes\n"),
        "{body}"
    );
    assert!(
        body.contains("TASK (0, 0) kind=submit func_id=[-1,0,-1] name=ADD fanin=0 fanout=2\n"),
        "{body}"
    );

    let o = pto(&[
        "deps-viewer",
        s(&input),
        "--format",
        "html",
        "--engine",
        "builtin",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("layout: built-in layered"),
        "{}",
        text(&o)
    );
    let html = std::fs::read_to_string(d.join("deps_viewer.html")).unwrap();
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;")
            && !html.contains("<script>alert(1)")
    );

    let o = pto(&["deps-viewer", s(&input), "--engine", "dot"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("`--engine` applies to `--format html` only")
    );
    let o = pto(&["deps-viewer", s(&input), "--lod-above", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("`--lod-above` applies to `--format html` only"));
}

#[test]
fn deps_viewer_lod_above_writes_the_level_of_detail_page() {
    let d = run_dir("deps-lod");
    let input = d.join("deps.json");
    let html = |lod: &str| {
        let o = pto(&[
            "deps-viewer",
            s(&input),
            "--format",
            "html",
            "--lod-above",
            lod,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let page = std::fs::read_to_string(d.join("deps_viewer.html")).unwrap();
        (String::from_utf8_lossy(&o.stdout).into_owned(), page)
    };
    // Three tasks: above 2 the aggregates, at 3 one node per task.
    let (out, page) = html("2");
    assert!(
        out.contains("; layout: ring \u{d7} kernel grid; level of detail: ")
            && out
                .trim_end()
                .ends_with(" aggregates (more than --lod-above 2 nodes)"),
        "{out}"
    );
    assert!(page.contains("id=\"col-order\"") && page.contains("class=\"node agg "));
    let (out, page) = html("3");
    assert!(!out.contains("level of detail"), "{out}");
    assert!(!page.contains("col-order") && page.contains("id=\"T0_0\""));
    let o = pto(&[
        "deps-viewer",
        s(&input),
        "--format",
        "html",
        "--lod-above",
        "-1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn scope_stats_plot_writes_the_page_beside_the_input() {
    let d = common::scratch("viewers", "scope");
    let input = d.join("scope_stats.jsonl");
    std::fs::write(
        &input,
        "{\"version\": 6, \"fatal\": false, \"dropped\": 0, \"total\": 2, \"task_window_max\": [16, 16, 16, 16], \"heap_max\": [1024, 1024, 1024, 1024], \"dep_pool_max\": [16, 16, 16, 16], \"tensormap_max\": 8}\n\
{\"site\": \"a.cpp:1\", \"phase\": \"begin\", \"depth\": 1, \"ring\": 1, \"task_window_start\": 0, \"task_window_end\": 0, \"heap_start\": 0, \"heap_end\": 0, \"dep_pool_start\": 0, \"dep_pool_end\": 0, \"tensormap\": 0}\n\
{\"site\": \"a.cpp:1\", \"phase\": \"end\", \"depth\": 1, \"ring\": 1, \"task_window_start\": 0, \"task_window_end\": 4, \"heap_start\": 0, \"heap_end\": 512, \"dep_pool_start\": 0, \"dep_pool_end\": 3, \"tensormap\": 2}\n",
    )
    .unwrap();
    let o = pto(&["scope-stats-plot", s(&input)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let page = d.join("scope_stats.html");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!(
        "Wrote {} (2 records, 1 scopes, rings [1])",
        page.display()
    )));
    assert!(std::fs::read_to_string(page)
        .unwrap()
        .contains("<figure class=\"chart\" data-ring=\"1\">"));
}

#[test]
fn critical_path_prints_and_writes_the_report() {
    let d = run_dir("critical");
    let o = pto(&["critical-path", s(&d)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let report = std::fs::read_to_string(d.join("critical_path_report.md")).unwrap();
    assert!(out.starts_with(&report), "{out}");
    assert!(
        report.contains("**static critical path**")
            && report.contains("**observed critical path**"),
        "{report}"
    );
    assert!(report.contains("| 1 | t0 | ADD |"), "{report}");
    let empty = common::scratch("viewers", "critical_empty");
    let o = pto(&["critical-path", s(&empty)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("deps.json not found"),
        "{}",
        text(&o)
    );
}

/// The hints a real run prints are commands that work, and their outputs check out.
#[test]
fn hints_printed_by_a_replay_run_work() {
    let dir = common::example("viewers", "vector_add", "hints");
    let o = pto(&[
        "replay",
        s(&dir),
        "--swimlane",
        "--dep-gen",
        "--scope-stats",
        "--dump-args",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let hints: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("view them with:"))
        .skip(1)
        .take_while(|l| l.starts_with("  pto "))
        .map(str::trim)
        .collect();
    for tool in [
        "swimlane-converter",
        "deps-viewer",
        "critical-path",
        "dump-viewer",
        "scope-stats-plot",
    ] {
        assert!(
            hints.iter().any(|h| h.starts_with(&format!("pto {tool} "))),
            "no {tool} hint in:\n{out}"
        );
    }
    for hint in &hints {
        let args: Vec<&str> = hint.split_whitespace().skip(1).collect();
        let o = pto(&args);
        assert_eq!(o.status.code(), Some(0), "`{hint}`:\n{}", text(&o));
    }
    let dfx = dir.join("dfx_outputs");
    let merged = std::fs::read_dir(&dfx)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("merged_swimlane_")
        })
        .unwrap();
    check_trace(&merged);
    for f in [
        "deps_viewer.html",
        "critical_path_report.md",
        "scope_stats/scope_stats.html",
    ] {
        assert!(dfx.join(f).is_file(), "{f} missing");
    }
    // The dump exports with Simpler's names.
    let o = pto(&["dump-viewer", s(&dfx.join("args_dump")), "--export"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let npy: Vec<String> = std::fs::read_dir(dfx.join("args_dump/npy"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !npy.is_empty()
            && npy
                .iter()
                .all(|n| n.starts_with("task_0x") && n.ends_with(".npy")),
        "{npy:?}"
    );
    let o = pto(&[
        "dump-viewer",
        s(&dfx.join("args_dump")),
        "--export",
        "--format",
        "txt",
        "--stage",
        "after",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(std::fs::read_dir(dfx.join("args_dump/txt"))
        .unwrap()
        .flatten()
        .all(|e| e.file_name().to_string_lossy().contains("_after_")));
    // A filter that matches nothing is a clean "no": exit 1 with the valid values.
    let o = pto(&["dump-viewer", s(&dfx.join("args_dump")), "--task", "0x7777"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("valid values: 0x"),
        "{}",
        text(&o)
    );
    // `--format` without `--export` is a usage error.
    let o = pto(&["dump-viewer", s(&dfx.join("args_dump")), "--format", "txt"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// A kernel name holding terminal escapes reaches no terminal or text file raw: the text
/// listing, the swimlane summary and the warnings show it escaped.
#[test]
fn terminal_escapes_in_names_are_shown_escaped() {
    let d = run_dir("escapes");
    std::fs::write(
        d.join("name_map_Demo_case.json"),
        r#"{"level": 2, "orchestrator_name": "Demo", "callable_id_to_name": {"0": "ADD\u001b[2J\u001b]0;owned\u0007", "1": "MUL", "2": "SUB\u202e"}}"#,
    )
    .unwrap();
    let o = pto(&["deps-viewer", s(&d.join("deps.json"))]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let body = std::fs::read_to_string(d.join("deps_viewer.txt")).unwrap();
    assert!(
        body.contains("name=ADD\\u{001b}[2J\\u{001b}]0;owned\\u{0007}")
            && body.contains("SUB\\u{202e}"),
        "{body}"
    );
    let o = pto(&[
        "swimlane-converter",
        s(&d.join("chip_swimlane_records.json")),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    for out in [&o.stdout, &o.stderr] {
        let t = String::from_utf8_lossy(out);
        assert!(!t.contains('\u{1b}') && !t.contains('\u{202e}'), "{t}");
    }
}
