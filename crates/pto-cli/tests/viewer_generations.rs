//! Every viewer reads both generations of Simpler's diagnostic files.
//!
//! One build directory (dsl_paged_attention: PTO-ISA kernels, dump marks, scopes and
//! dependencies) runs four times with all five diagnostics on: `--dfx-schema 2026-08` and
//! `2026-09`, each as JSON and as the compact files. Each set must be of its generation
//! (detected from content), and `swimlane-converter`, `deps-viewer` (text and HTML),
//! `scope-stats-plot`, `critical-path`, `dump-viewer` and `dfx-export` must read every set and
//! give the same essential result: the same tasks, edges, kernels, flows, scopes and
//! dumped tensors (times differ between runs, so they are left out of the cross-run
//! comparison). Then one run's records in every form (the 2026-09 compact files, their
//! export in each generation) give the same converter trace and critical-path report,
//! event for event.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::text;
use pto_dfx::DfxSchema;
use serde_json::Value;

/// Runs `pto ARGS`, asserting success; returns stdout and stderr.
fn pto(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_pto"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("PTO_DFX_SCHEMA")
        .env_remove("PTO_DFX_FORMAT")
        .env_remove("PTO_TIMING")
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "pto {}: {t}", args.join(" "));
    t
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Replays `build` with every diagnostic in `schema` and `format`; moves its
/// `dfx_outputs/` to `<build>/../<name>` and returns that.
fn run(build: &Path, schema: DfxSchema, format: &str) -> PathBuf {
    pto(&[
        "replay",
        s(build),
        "--validate",
        "--swimlane",
        "--dep-gen",
        "--scope-stats",
        "--dump-args",
        "--pmu",
        "--dfx-schema",
        schema.name(),
        "--dfx-format",
        format,
    ]);
    let dst = build
        .parent()
        .unwrap()
        .join(format!("{}_{format}", schema.name()));
    let _ = std::fs::remove_dir_all(&dst);
    std::fs::rename(build.join("dfx_outputs"), &dst).unwrap();
    dst
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The lines of `text` without those that name the input or hold times.
fn timeless(text: &str) -> String {
    text.lines()
        .filter(|l| !l.contains("source_deps_json") && !l.starts_with("TIMING "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What every viewer made of one set of files.
#[derive(Debug)]
struct Seen {
    /// The converter's trace.
    trace: Value,
    /// deps-viewer's text page, times and source left out.
    deps_text: String,
    /// The scope-stats page, its generation label left out.
    scope_page: String,
    /// critical-path's report.
    critical: String,
    /// dump-viewer's listing, its source line left out.
    dump_list: String,
    /// dump-viewer's `.npy` export: file name → bytes.
    dump_npy: BTreeMap<String, Vec<u8>>,
}

/// Runs every viewer over the diagnostics directory `dir`; `swimlane` is the records file
/// to convert (the JSON or the `.bin`), and the deps viewer reads `deps`.
fn view(dir: &Path, swimlane: &str, deps: &str) -> Seen {
    let trace_path = dir.join("trace.json");
    pto(&[
        "swimlane-converter",
        s(&dir.join(swimlane)),
        "-o",
        s(&trace_path),
    ]);
    let trace: Value = serde_json::from_slice(&read(&trace_path)).unwrap();

    let deps_txt = dir.join("deps_viewer.txt");
    pto(&["deps-viewer", s(&dir.join(deps)), "-o", s(&deps_txt)]);
    let deps_html = dir.join("deps_viewer.html");
    pto(&[
        "deps-viewer",
        s(&dir.join(deps)),
        "--format",
        "html",
        "--engine",
        "builtin",
        "-o",
        s(&deps_html),
    ]);
    assert!(
        String::from_utf8_lossy(&read(&deps_html)).contains("softmax"),
        "{}: no task in the page",
        deps_html.display()
    );

    let jsonl = dir.join("scope_stats/scope_stats.jsonl");
    let page = dir.join("scope_stats/scope_stats.html");
    let said = pto(&["scope-stats-plot", s(&jsonl), "-o", s(&page)]);
    // The DSL paged attention: the top-level scope, the manual one and a runtime scope per
    // loop body (PyPTO's placement, docs/DECISIONS.md).
    assert!(said.contains("11 scopes"), "{said}");
    let scope_page = String::from_utf8(read(&page))
        .unwrap()
        .replace("version 6", "GEN")
        .replace("generation 2026-09", "GEN");

    pto(&["critical-path", s(dir)]);
    let critical = String::from_utf8(read(&dir.join("critical_path_report.md"))).unwrap();
    // The title names the directory.
    let critical = critical.lines().skip(1).collect::<Vec<_>>().join("\n");

    let dump = dir.join("args_dump");
    let dump_list = pto(&["dump-viewer", s(&dump), "--list"])
        .lines()
        .filter(|l| !l.contains(" records · "))
        .collect::<Vec<_>>()
        .join("\n");
    pto(&["dump-viewer", s(&dump), "--export"]);
    let mut dump_npy = BTreeMap::new();
    for e in std::fs::read_dir(dump.join("npy")).unwrap().flatten() {
        dump_npy.insert(
            e.file_name().to_string_lossy().into_owned(),
            read(&e.path()),
        );
    }
    assert!(
        dump_npy.keys().any(|k| k.contains("_before_")),
        "{}: no input exported",
        dump.display()
    );

    Seen {
        trace,
        deps_text: timeless(&String::from_utf8(read(&deps_txt)).unwrap()),
        scope_page,
        critical,
        dump_list,
        dump_npy,
    }
}

/// The trace without times and placement: per task slice its name and dependency hints,
/// and the number of task, orchestrator and flow events of each phase and name (the
/// scheduler's phases and queue samples follow the run's timing).
fn trace_essence(trace: &Value) -> (Vec<String>, BTreeMap<String, usize>) {
    let events = trace["traceEvents"].as_array().unwrap();
    let mut tasks: Vec<String> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["cat"] == "event")
        .map(|e| {
            format!(
                "{} in={} out={}",
                e["name"], e["args"]["fanin-hint"], e["args"]["fanout-hint"]
            )
        })
        .collect();
    tasks.sort();
    let mut counts = BTreeMap::new();
    for e in events {
        if ["event", "orchestrator", "flow"].contains(&e["cat"].as_str().unwrap_or("")) {
            *counts
                .entry(format!("{} {} {}", e["ph"], e["cat"], e["name"]))
                .or_insert(0) += 1;
        }
    }
    (tasks, counts)
}

/// The critical-path report's task line (tasks and edges) and its section headings (which
/// tasks lie on the paths follows the run's timing).
fn critical_essence(report: &str) -> (String, Vec<String>) {
    let head = report
        .lines()
        .find(|l| l.starts_with("- tasks:"))
        .unwrap_or_else(|| panic!("no task line in\n{report}"))
        .to_string();
    let sections = report
        .lines()
        .filter(|l| l.starts_with("## "))
        .map(str::to_string)
        .collect();
    (head, sections)
}

fn detect(dir: &Path) -> [DfxSchema; 3] {
    [
        pto_dfx::deps::detect(&read(&dir.join("deps.json"))),
        pto_dfx::swimlane::detect(&read(&dir.join("chip_swimlane_records.json"))),
        pto_dfx::scope_stats::detect(&read(&dir.join("scope_stats/scope_stats.jsonl"))),
    ]
}

/// What the scope-stats page says that does not depend on when tasks retired: its summary
/// line (records, scopes, rings) and the scopes' sites, sorted. The counts live at a scope's
/// end (TensorMap entries, live at exit) and so the ranking depend on which producers had
/// retired by then, which differs from run to run.
fn scope_essence(page: &str) -> (String, Vec<String>) {
    let summary = page
        .split("<header>")
        .nth(1)
        .and_then(|h| h.split("dominant site").next())
        .unwrap_or_default()
        .to_string();
    let top = page.split("id=\"top\"").nth(1).unwrap_or_default();
    let mut sites: Vec<String> = top
        .split("<code>")
        .skip(1)
        .filter_map(|c| c.split("</code>").next())
        .map(str::to_string)
        .collect();
    sites.sort();
    (summary, sites)
}

#[test]
fn every_viewer_reads_both_generations_and_sees_the_same_run() {
    let build = common::example("viewer_generations", "dsl_paged_attention", "build");
    let mut seen: Vec<(String, Seen)> = Vec::new();
    let mut one_run: Vec<(String, Seen)> = Vec::new();
    for schema in DfxSchema::ALL {
        let json = run(&build, schema, "json");
        assert_eq!(detect(&json), [schema; 3], "{}", json.display());
        seen.push((
            format!("{schema} json"),
            view(&json, "chip_swimlane_records.json", "deps.json"),
        ));

        let compact = run(&build, schema, "compact");
        assert!(!compact.join("deps.json").exists());
        assert_eq!(
            pto_dfx::scope_stats::detect(&read(&compact.join("scope_stats/scope_stats.jsonl"))),
            schema
        );
        let from_bin = view(&compact, "chip_swimlane_records.bin", "deps.bin");
        // dfx-export writes the run's generation; the viewers read what it wrote.
        let said = pto(&["dfx-export", s(&compact)]);
        assert!(said.contains("deps.json"), "{said}");
        assert_eq!(detect(&compact), [schema; 3], "{}", compact.display());
        let exported = view(&compact, "chip_swimlane_records.json", "deps.json");
        if schema == DfxSchema::V2026_09 {
            // The same run's records in the other generation too.
            let other = compact.with_file_name("2026-09_compact_as_2026-08");
            let _ = std::fs::remove_dir_all(&other);
            common::copy_dir(&compact, &other);
            pto(&["dfx-export", s(&other), "--dfx-schema", "2026-08"]);
            let [deps, swimlane, _] = detect(&other);
            assert_eq!([deps, swimlane], [DfxSchema::V2026_08; 2]);
            one_run.push((format!("{schema} compact .bin"), from_bin));
            one_run.push((format!("{schema} compact, exported"), exported));
            one_run.push((
                "the same records exported as 2026-08".to_string(),
                view(&other, "chip_swimlane_records.json", "deps.json"),
            ));
        } else {
            seen.push((format!("{schema} compact .bin"), from_bin));
            seen.push((format!("{schema} compact, exported"), exported));
        }
    }

    // One run in every form: the same trace and report, event for event.
    let (first_name, first) = &one_run[0];
    for (name, other) in &one_run[1..] {
        assert!(
            first.trace == other.trace,
            "{name}: the converter's trace differs from {first_name}'s"
        );
        assert_eq!(first.critical, other.critical, "{name} vs {first_name}");
        assert_eq!(first.deps_text, other.deps_text, "{name} vs {first_name}");
    }

    // Different runs: the same tasks, edges, kernels, flows, scopes and dumps.
    seen.extend(one_run);
    let (first_name, first) = &seen[0];
    let trace = trace_essence(&first.trace);
    assert!(trace.0.len() >= 30, "{:?}", trace.0);
    assert!(
        trace
            .1
            .keys()
            .any(|k| k.starts_with("\"s\" \"flow\" \"dependency\"")),
        "{:?}",
        trace.1
    );
    let critical = critical_essence(&first.critical);
    assert!(
        critical.1.contains(&"## Static critical path".to_string())
            && first.critical.contains("observed critical path"),
        "{critical:?}"
    );
    for (name, other) in &seen[1..] {
        assert_eq!(
            trace,
            trace_essence(&other.trace),
            "{name} vs {first_name}: trace"
        );
        assert_eq!(
            first.deps_text, other.deps_text,
            "{name} vs {first_name}: deps-viewer"
        );
        assert_eq!(
            scope_essence(&first.scope_page),
            scope_essence(&other.scope_page),
            "{name} vs {first_name}: scope-stats-plot"
        );
        assert_eq!(
            critical,
            critical_essence(&other.critical),
            "{name} vs {first_name}: critical-path"
        );
        assert_eq!(
            first.dump_list, other.dump_list,
            "{name} vs {first_name}: dump-viewer"
        );
        // A dump after completion holds the whole output tensor, which the other batch's
        // tasks may or may not have written yet: only the inputs are the same across runs.
        let inputs = |m: &BTreeMap<String, Vec<u8>>| {
            m.iter()
                .filter(|(k, _)| k.contains("_before_"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<BTreeMap<_, _>>()
        };
        assert_eq!(
            first.dump_npy.keys().collect::<Vec<_>>(),
            other.dump_npy.keys().collect::<Vec<_>>(),
            "{name} vs {first_name}: dump-viewer --export"
        );
        assert!(
            inputs(&first.dump_npy) == inputs(&other.dump_npy),
            "{name} vs {first_name}: dump-viewer --export"
        );
    }
}
