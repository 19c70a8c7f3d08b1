//! The viewers end to end: synthetic runs through the converter and the
//! trace checker, and every HTML page opened in headless Chromium.
//!
//! The HTML tests need Debian's `chromium` (or `$PTO_CHROMIUM`) and Graphviz
//! (`dot`) on `PATH`; CI installs both. Without them these tests fail with
//! a message saying what to install: a skipped browser test proves nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use pto_dfx_view::deps_viewer::{self, DepsViewerOptions, EdgeMode, Format, LayoutChoice};
use pto_dfx_view::layout::Engine;
use pto_dfx_view::swimlane_converter::{self, ConvertOptions};
use pto_dfx_view::{scope_stats_plot, trace_check};
use serde_json::Value;

use crate::synth;

/// The Chromium binary: `$PTO_CHROMIUM`, else the first of the usual names on `PATH`.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("PTO_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "headless Chromium is required to test the HTML viewers and was not found on PATH \
         (tried chromium, chromium-browser, google-chrome); install it with \
         `apt-get install chromium` or point $PTO_CHROMIUM at a Chrome binary"
    );
}

/// Opens `page?selftest` in headless Chromium and returns the DOM and the
/// JSON the page's self-test wrote into `#selftest-result`.
fn selftest(page: &Path) -> (String, Value) {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}?selftest", page.display());
    let out = Command::new(chromium())
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--window-size=1200,800",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let start = dom.find("<pre id=\"selftest-result\">").unwrap_or_else(|| {
        panic!(
            "no self-test result in the DOM of {url} (status {}); stderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let rest = &dom[start + "<pre id=\"selftest-result\">".len()..];
    let end = rest.find("</pre>").unwrap();
    let json = rest[..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    let value: Value = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
    (dom, value)
}

const EVIL: &str = "<script>alert(1)</script>";

fn write_evil_names(dir: &Path) {
    std::fs::write(
        dir.join("name_map_Evil_case.json"),
        format!(
            "{{\"level\": 2, \"orchestrator_name\": \"{}\", \"callable_id_to_name\": {{\"0\": \"{}\", \"1\": \"b&amp;\"}}}}",
            EVIL.replace('/', "\\/"),
            EVIL.replace('/', "\\/")
        ),
    )
    .unwrap();
}

fn check_graph_page(dom: &str, st: &Value, n_nodes: u64, n_edges: u64) {
    assert_eq!(st["nodes"], n_nodes, "{st}");
    assert_eq!(st["edges"], n_edges, "{st}");
    // One inline script plus the two JSON blocks: nothing injected.
    assert_eq!(st["scripts"], 3, "{st}");
    // `r` resets to 100 % at the origin, `f` fits the whole drawing in view.
    assert_eq!(
        st["afterR"],
        serde_json::json!({"s": 1, "x": 0, "y": 0}),
        "{st}"
    );
    assert_eq!(st["fits"], true, "{st}");
    let fit_scale = st["afterF"]["s"].as_f64().unwrap();
    let (w, h) = (
        st["width"].as_f64().unwrap(),
        st["height"].as_f64().unwrap(),
    );
    assert!(
        fit_scale > 0.0 && (w * fit_scale <= 1200.0) && (h * fit_scale <= 800.0),
        "{st}"
    );
    assert_eq!(st["drag"], serde_json::json!({"dx": 40, "dy": 25}), "{st}");
    assert_eq!(st["zoomIn"], true, "{st}");
    assert_eq!(
        st["reset"],
        serde_json::json!({"s": 1, "x": 0, "y": 0}),
        "{st}"
    );
    assert_eq!(st["panel"], true, "{st}");
    assert!(
        !dom.contains(EVIL),
        "the evil name reached the DOM as markup"
    );
}

fn write_deps(dir: &Path, deps: &pto_dfx::deps::DepsFile) -> PathBuf {
    let path = dir.join("deps.json");
    pto_dfx::deps::write(&path, deps).unwrap();
    path
}

#[test]
fn deps_viewer_html_builtin_layout_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let input = write_deps(dir.path(), &synth::deps_graph(200));
    write_evil_names(dir.path());
    let report = deps_viewer::view(&DepsViewerOptions {
        input: &input,
        output: None,
        format: Format::Html,
        layout: LayoutChoice::Builtin,
        func_names: None,
        edge_mode: EdgeMode::Full,
    })
    .unwrap();
    assert_eq!(report.layout.as_deref(), Some("built-in layered"));
    let (dom, st) = selftest(&report.output);
    check_graph_page(
        &dom,
        &st,
        report.n_nodes as u64,
        report.n_unique_edges as u64,
    );
    // The first node (r1t0, func 0) carries the evil name, rendered as text.
    assert!(st["firstText"].as_str().unwrap().contains(EVIL), "{st}");
    assert!(st["panelTitle"].as_str().unwrap().contains(EVIL), "{st}");
}

#[test]
fn deps_viewer_html_graphviz_layout_in_chromium() {
    assert!(
        Engine::Dot.is_available(),
        "Graphviz `dot` is required for this test (CI installs it): apt-get install graphviz"
    );
    let dir = tempfile::tempdir().unwrap();
    let input = write_deps(dir.path(), &synth::deps_graph(120));
    write_evil_names(dir.path());
    let report = deps_viewer::view(&DepsViewerOptions {
        input: &input,
        output: None,
        format: Format::Html,
        layout: LayoutChoice::Graphviz {
            engine: Engine::Dot,
            budget: None,
        },
        func_names: None,
        edge_mode: EdgeMode::Full,
    })
    .unwrap();
    assert_eq!(report.layout.as_deref(), Some("graphviz dot"));
    let (dom, st) = selftest(&report.output);
    check_graph_page(
        &dom,
        &st,
        report.n_nodes as u64,
        report.n_unique_edges as u64,
    );
}

/// The HTML view of `n` synthetic tasks with `layout`.
fn html_with(dir: &Path, n: usize, layout: LayoutChoice) -> deps_viewer::DepsViewerReport {
    let input = write_deps(dir, &synth::deps_graph(n));
    deps_viewer::view(&DepsViewerOptions {
        input: &input,
        output: None,
        format: Format::Html,
        layout,
        func_names: None,
        edge_mode: EdgeMode::Full,
    })
    .unwrap()
}

#[test]
fn deps_viewer_auto_layout_runs_dot_only_on_small_graphs() {
    assert!(
        Engine::Dot.is_available(),
        "Graphviz `dot` is required for this test (CI installs it): apt-get install graphviz"
    );
    let dir = tempfile::tempdir().unwrap();
    let small = html_with(dir.path(), 100, LayoutChoice::Auto);
    assert!(small.n_nodes <= deps_viewer::AUTO_GRAPHVIZ_MAX_NODES);
    assert_eq!(small.layout.as_deref(), Some("graphviz dot"));
    let large = html_with(dir.path(), 400, LayoutChoice::Auto);
    assert!(large.n_nodes > deps_viewer::AUTO_GRAPHVIZ_MAX_NODES);
    assert_eq!(large.layout.as_deref(), Some("built-in layered"));
    assert!(large.warnings.is_empty(), "{:?}", large.warnings);
}

#[test]
fn deps_viewer_graphviz_past_its_budget_falls_back_with_a_warning() {
    assert!(
        Engine::Dot.is_available(),
        "Graphviz `dot` is required for this test (CI installs it): apt-get install graphviz"
    );
    let dir = tempfile::tempdir().unwrap();
    let start = std::time::Instant::now();
    let report = html_with(
        dir.path(),
        3000,
        LayoutChoice::Graphviz {
            engine: Engine::Dot,
            budget: Some(std::time::Duration::from_millis(50)),
        },
    );
    assert_eq!(report.layout.as_deref(), Some("built-in layered"));
    assert!(
        report.warnings.iter().any(|w| w.contains("graphviz `dot` did not lay out")
            && w.contains("--layout-timeout")),
        "{:?}",
        report.warnings
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(30));
    let page = std::fs::read_to_string(&report.output).unwrap();
    assert!(page.contains("<svg id=\"graph\""));
}

#[test]
fn scope_stats_html_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("scope_stats.jsonl");
    let mut text = String::from("{\"version\": 6, \"fatal\": false, \"dropped\": 0, \"total\": 8, \"task_window_max\": [64, 64, 64, 64], \"heap_max\": [65536, 65536, 65536, 65536], \"dep_pool_max\": [64, 64, 64, 64], \"tensormap_max\": 32}\n");
    let rec = |site: &str, phase: &str, depth: i32, end: i32| {
        format!(
            "{{\"site\": \"{site}\", \"phase\": \"{phase}\", \"depth\": {depth}, \"ring\": {depth}, \"task_window_start\": 0, \"task_window_end\": {end}, \"heap_start\": 0, \"heap_end\": {}, \"dep_pool_start\": 0, \"dep_pool_end\": {end}, \"tensormap\": {end}}}\n",
            end * 1024
        )
    };
    text += &rec(EVIL, "begin", 0, 0);
    for (k, d) in [(10, 1), (50, 1), (20, 2)] {
        text += &rec("kernel.cpp:12", "begin", d, 0);
        text += &rec("kernel.cpp:12", "end", d, k);
    }
    text += &rec(EVIL, "end", 0, 5);
    std::fs::write(&input, text).unwrap();
    let report = scope_stats_plot::plot(&input, None).unwrap();
    assert_eq!(report.rings, [0, 1, 2]);
    let (dom, st) = selftest(&report.output);
    assert_eq!(st["charts"], 3, "{st}");
    assert_eq!(st["series"], 12, "{st}");
    // Resource panels: 3 ring resources × 3 rings + the global TensorMap; a pressure chart
    // (two lines) and an alloc chart per ring resource, one live-entries chart for the TensorMap.
    assert_eq!(st["panels"], 10, "{st}");
    assert_eq!(st["panelCharts"], 19, "{st}");
    assert_eq!(st["panelLines"], 28, "{st}");
    assert_eq!(st["top"], 4, "{st}");
    assert_eq!(st["scripts"], 1, "{st}");
    assert!(
        st["sites"].as_array().unwrap().iter().any(|s| s == EVIL),
        "{st}"
    );
    assert!(!dom.contains(EVIL));
}

fn convert_synthetic(n: usize, level: u8, seed: u64) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let (file, deps) = synth::generate(n, level, seed);
    let input = dir.path().join("chip_swimlane_records.json");
    pto_dfx::swimlane::write(&input, &file).unwrap();
    write_deps(dir.path(), &deps);
    write_evil_names(dir.path());
    let output = dir.path().join("trace.json");
    let report = swimlane_converter::convert(&ConvertOptions {
        input: &input,
        output: Some(&output),
        deps: None,
        func_names: None,
        kernel_config: None,
    })
    .unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    serde_json::from_slice(&std::fs::read(&output).unwrap()).unwrap()
}

#[test]
fn converter_output_passes_the_trace_checker_at_every_level() {
    for level in 1..=4u8 {
        let trace = convert_synthetic(1500, level, u64::from(level));
        match trace_check::check(&trace) {
            Ok(counts) => {
                assert!(counts.slices >= 1500, "level {level}: {counts:?}");
                if level >= 2 {
                    assert!(counts.flows > 1000, "level {level}: {counts:?}");
                }
            }
            Err(errors) => panic!("level {level}:\n{}", errors.join("\n")),
        }
        // The evil name is data in JSON, never a problem for the trace.
        let events = trace["traceEvents"].as_array().unwrap();
        assert!(events
            .iter()
            .any(|e| e["name"].as_str().is_some_and(|n| n.starts_with(EVIL))));
    }
}

#[test]
fn converter_flows_cover_every_kind_at_level_four() {
    let trace = convert_synthetic(600, 4, 11);
    let events = trace["traceEvents"].as_array().unwrap();
    for kind in [
        "dependency",
        "complete",
        "complete\u{2192}ready",
        "dispatch",
        "submit\u{2192}dispatch",
    ] {
        assert!(
            events.iter().any(|e| e["ph"] == "s" && e["name"] == kind),
            "no {kind} flow"
        );
    }
    // Occasional early dispatches put some bars on sub-lanes.
    assert!(events.iter().any(|e| e["name"] == "thread_name"
        && e["args"]["name"].as_str().is_some_and(|n| n.contains('+'))));
    // SPMD tasks are labelled as such.
    assert!(events
        .iter()
        .any(|e| e["ph"] == "X" && e["name"].as_str().is_some_and(|n| n.contains("_spmd("))));
}

/// An aggregate: a ring and a kernel combination (`[-2]` for an alloc, which has none).
type AggKey = (u8, Vec<i32>);

/// Each task's shown neighbours on one side.
type Neighbours = std::collections::BTreeMap<
    pto_dfx::task_id::TaskId,
    std::collections::BTreeSet<pto_dfx::task_id::TaskId>,
>;

/// What the level-of-detail page of `deps` must show, worked out here from the file
/// itself: the aggregates and their tasks, the pairs of different aggregates with a
/// dependency, and each node's predecessors and successors.
struct LodExpect {
    members: std::collections::BTreeMap<AggKey, Vec<pto_dfx::task_id::TaskId>>,
    agg_pairs: std::collections::BTreeSet<(AggKey, AggKey)>,
    preds: Neighbours,
    succs: Neighbours,
}

fn lod_expect(deps: &pto_dfx::deps::DepsFile) -> LodExpect {
    use pto_dfx::task_id::TaskId;
    use std::collections::{BTreeMap, BTreeSet};
    let kernels: BTreeMap<TaskId, Vec<i32>> = deps
        .tasks
        .iter()
        .map(|t| (t.task_id, t.kernel_ids.clone()))
        .collect();
    // An alloc has no kernel: a key no task has.
    let key = |id: TaskId| {
        (
            id.ring(),
            kernels.get(&id).cloned().unwrap_or_else(|| vec![-2]),
        )
    };
    let mut nodes: BTreeSet<TaskId> = kernels.keys().copied().collect();
    let mut e = LodExpect {
        members: BTreeMap::new(),
        agg_pairs: BTreeSet::new(),
        preds: BTreeMap::new(),
        succs: BTreeMap::new(),
    };
    for d in &deps.edges {
        nodes.insert(d.pred);
        nodes.insert(d.succ);
        if d.pred != d.succ {
            e.preds.entry(d.succ).or_default().insert(d.pred);
            e.succs.entry(d.pred).or_default().insert(d.succ);
            if key(d.pred) != key(d.succ) {
                e.agg_pairs.insert((key(d.pred), key(d.succ)));
            }
        }
    }
    for id in nodes {
        e.members.entry(key(id)).or_default().push(id);
    }
    e
}

/// Levels of ranges above the tasks in an aggregate of `n` tasks (at most 64 tasks to a
/// leaf, ranges at most 32-way).
fn range_levels(n: usize) -> usize {
    let (mut levels, mut span) = (0, 64);
    while span < n {
        levels += 1;
        span *= 32;
    }
    levels
}

#[test]
fn deps_viewer_level_of_detail_in_chromium() {
    use pto_dfx::task_id::TaskId;
    let dir = tempfile::tempdir().unwrap();
    // Rings 0 and 1, five kernels, allocs in ring 2; the largest aggregate needs two levels
    // of ranges.
    let (swimlane, deps) = synth::generate(16_000, 2, 5);
    let input = write_deps(dir.path(), &deps);
    pto_dfx::swimlane::write(&dir.path().join("chip_swimlane_records.json"), &swimlane).unwrap();
    write_evil_names(dir.path());
    let opts = DepsViewerOptions {
        input: &input,
        output: None,
        format: Format::Html,
        layout: LayoutChoice::Builtin,
        func_names: None,
        edge_mode: EdgeMode::Full,
    };
    // The default threshold keeps the per-task page up to 10,000 nodes; a low one does not.
    let small_dir = dir.path().join("small");
    std::fs::create_dir_all(&small_dir).unwrap();
    let small = write_deps(&small_dir, &synth::deps_graph(300));
    let per_task = deps_viewer::view(&DepsViewerOptions {
        input: &small,
        ..opts
    })
    .unwrap();
    assert_eq!(per_task.aggregates, None);
    let report = deps_viewer::view_with_lod(&opts, 1000).unwrap();
    let want = lod_expect(&deps);
    assert_eq!(report.aggregates, Some(want.members.len()));
    let (dom, st) = selftest(&report.output);
    // page.js's controls on the aggregate graph.
    assert_eq!(st["nodes"], want.members.len(), "{st}");
    assert_eq!(st["edges"], want.agg_pairs.len(), "{st}");
    assert_eq!(st["fits"], true, "{st}");
    assert_eq!(st["drag"], serde_json::json!({"dx": 40, "dy": 25}), "{st}");
    assert_eq!(st["zoomIn"], true, "{st}");
    // The inline script, the two JSON blocks and seven columns: nothing injected.
    assert_eq!(st["scripts"], 10, "{st}");
    assert!(
        !dom.contains(EVIL),
        "the evil name reached the DOM as markup"
    );
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt; · ring 0"));

    let l = &st["lod"];
    assert_eq!(l["n"], report.n_nodes, "{st}");
    assert_eq!(l["total"], report.n_nodes, "{st}");
    assert_eq!(l["aggregates"], want.members.len(), "{st}");
    // The largest aggregate opened: its ranges cover it, two levels down to at most 64 tasks.
    let (big_key, big) = want.members.iter().max_by_key(|(_, m)| m.len()).unwrap();
    assert_eq!(l["panel"], true, "{st}");
    assert_eq!(l["count"], big.len(), "{st}");
    assert!(
        l["title"].as_str().unwrap().ends_with(&format!(
            "ring {} \u{b7} \u{d7}{}",
            big_key.0,
            big.len()
        )),
        "{st}"
    );
    assert!(l["hl"].as_u64().unwrap() > 0, "{st}");
    assert_eq!(l["topSum"], big.len(), "{st}");
    assert_eq!(
        range_levels(big.len()),
        2,
        "the test wants two levels: {}",
        big.len()
    );
    assert_eq!(l["depth"], 2, "{st}");
    // Ranges split evenly: no runt levels, no leaf of more than 64 tasks.
    let top = l["topItems"].as_u64().unwrap();
    assert!((2..=32).contains(&top), "{st}");
    let leaf = l["leafTasks"].as_u64().unwrap();
    assert!(leaf > 32 && leaf <= 64, "{st}");
    // The first task, with its predecessors and successors in task order.
    let disp = |id: &TaskId| format!("({}, {})", id.ring(), id.local());
    let first = big[0];
    assert!(
        l["task"]
            .as_str()
            .unwrap()
            .contains(&format!("{} \u{b7} ", disp(&first))),
        "{st}"
    );
    let listed = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let expect = |m: &Neighbours| {
        m.get(&first)
            .map_or_else(Vec::new, |s| s.iter().map(disp).collect())
    };
    // The swimlane beside the input gives the task its measured span.
    assert!(
        l["detail"].as_str().unwrap().contains("\nmeasured "),
        "{st}"
    );
    assert_eq!(listed(&l["preds"]), expect(&want.preds), "{st}");
    assert_eq!(listed(&l["succs"]), expect(&want.succs), "{st}");
    // Following a link opens that task, in its own aggregate and range.
    let followed = l["followed"].as_str().unwrap();
    assert!(
        l["landed"]
            .as_str()
            .unwrap()
            .contains(&format!("{followed} \u{b7} ")),
        "{st}"
    );
    assert_eq!(l["closed"], true, "{st}");
}
