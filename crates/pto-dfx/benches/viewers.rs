//! Viewer throughput on large synthetic runs (see docs/PERFORMANCE.md).
//!
//! ```sh
//! cargo bench -p pto-dfx --bench viewers            # 1,000,000 tasks, 10,000-node graph
//! PTO_BENCH_TASKS=200000 cargo bench -p pto-dfx --bench viewers
//! PTO_BENCH_DIR=/some/dir PTO_BENCH_ONLY=deps-text,convert cargo bench -p pto-dfx --bench viewers
//! ```
//!
//! `PTO_BENCH_DIR` keeps the generated inputs there (reused by the next
//! run of the same size); `PTO_BENCH_ONLY` picks scenarios by name
//! (`convert`, `deps-html`, `deps-text`, `deps-reduced`, `critical-path`).
//!
//! Scenarios, each timed end to end (read, process, write through the
//! atomic temp-file-and-rename path, fsync included) in a fresh child
//! process of this binary, whose peak resident memory (`VmHWM` from
//! `/proc/self/status`) is reported; the best of three rounds
//! (`PTO_BENCH_ROUNDS`) is kept:
//!
//! 1. `swimlane-converter`, level 2: `chip_swimlane_records.json` with N
//!    task rows plus a `deps.json` of ~1.5·N edges beside it;
//! 2. `swimlane-converter`, level 4: N/4 tasks with scheduler phases and
//!    orchestrator submits (about six records per task);
//! 3. `deps-viewer --format html --engine builtin` on a 10,000-node graph;
//!    (the level-2 input's size counts both files; the deps viewer reads
//!    only `deps.json`)
//! 4. `deps-viewer` text on the same graph;
//! 5. `deps-viewer` text on the level-2 run's `deps.json` (N tasks), in
//!    full and with `--edge-mode reduced`;
//! 6. `critical-path` on the level-2 run;
//! 7. the converter and the deps viewer text on a level-2 run whose `deps.json`
//!    carries Simpler's argument and edge views (`add_views`, about 0.9 KB per
//!    task: the shape of the files Simpler's dep_gen writes).
//!
//! Inputs come from the deterministic generator shared with the tests
//! (`tests/synth.rs`) and are written to a temporary directory first; only
//! the tool is timed.

#[path = "../tests/synth.rs"]
mod synth;

use std::path::Path;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

use pto_dfx::tools::deps_viewer::{self, DepsViewerOptions, EdgeMode, Format, LayoutChoice};
use pto_dfx::tools::swimlane_converter::{self, ConvertOptions};

/// `VmHWM` (peak resident set) of this process in MiB, if readable.
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn mib(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / (1024.0 * 1024.0))
}

/// Runs one scenario in this (child) process and prints
/// `RESULT <seconds> <output MiB> <peak MiB>`.
fn child(scenario: &str, dir: &Path) -> Res<()> {
    let start = Instant::now();
    let output_mib = match scenario {
        "convert" | "convert-views" => {
            let report = swimlane_converter::convert(&ConvertOptions {
                input: &dir.join("chip_swimlane_records.json"),
                output: Some(&dir.join("trace.json")),
                deps: None,
                func_names: None,
                kernel_config: None,
            })?;
            eprintln!(
                "  {} task rows, {} events, {} flows",
                report.n_tasks, report.n_events, report.n_flows
            );
            mib(&report.output)
        }
        "deps-html" | "deps-text" | "deps-reduced" | "deps-text-views" => {
            let edge_mode = if scenario == "deps-reduced" {
                EdgeMode::Reduced
            } else {
                EdgeMode::Full
            };
            let report = deps_viewer::view(&DepsViewerOptions {
                input: &dir.join("deps.json"),
                output: None,
                format: if scenario == "deps-html" {
                    Format::Html
                } else {
                    Format::Text
                },
                layout: LayoutChoice::Builtin,
                func_names: None,
                edge_mode,
            })?;
            eprintln!(
                "  {} nodes, {} edges",
                report.n_nodes, report.n_unique_edges
            );
            mib(&report.output)
        }
        "critical-path" => {
            let report = pto_dfx::tools::critical_path::analyze(dir)?;
            mib(&report.output)
        }
        other => return Err(format!("unknown scenario {other}").into()),
    };
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "RESULT {seconds} {output_mib} {}",
        peak_mib().unwrap_or(-1.0)
    );
    Ok(())
}

struct Row {
    scenario: String,
    input_mib: f64,
    output_mib: f64,
    seconds: f64,
    peak_mib: f64,
}

/// Runs `scenario` on `dir` in a fresh child process (so its peak memory
/// is its own) and reads back its result line.
fn measure(label: String, scenario: &str, dir: &Path, input_mib: f64) -> Res<Row> {
    let exe = std::env::current_exe()?;
    let out = std::process::Command::new(exe)
        .arg("--scenario")
        .arg(scenario)
        .arg(dir)
        .stderr(std::process::Stdio::inherit())
        .output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .ok_or_else(|| format!("scenario {scenario} failed: {text}"))?;
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(f64::NAN))
        .collect();
    if v.len() != 3 {
        return Err(format!("scenario {scenario}: bad result line {line:?}").into());
    }
    Ok(Row {
        scenario: label,
        input_mib,
        output_mib: v[1],
        seconds: v[0],
        peak_mib: v[2],
    })
}

/// Gives every task Simpler's argument records (two INPUT views and an OUTPUT slot) and
/// every creator / TensorMap edge its consumer view (TensorMap edges also the producer view
/// and an overlap class), with one tensor record per task: a `deps.json` shaped like the
/// ones Simpler's dep_gen writes (about 0.9 KB per task).
fn add_views(deps: &mut pto_dfx::deps::DepsFile) {
    use pto_dfx::deps::{
        ArgDirection, DepsArg, DepsTensor, EdgeSource, Overlap, ProducerView, TensorView,
    };
    let view = |t: u64| TensorView {
        tensor_id: pto_dfx::deps::tensor_id(0x1_0000_0000 + t * 0x10000, 0),
        dtype: "FLOAT32".to_string(),
        shape: vec![128, 128],
        start_offset: 0,
        strides: vec![128, 1],
    };
    for (k, t) in deps.tasks.iter_mut().enumerate() {
        let k = k as u64;
        t.args = vec![
            DepsArg {
                idx: 0,
                direction: ArgDirection::Input,
                tensor: Some(view(k)),
            },
            DepsArg {
                idx: 1,
                direction: ArgDirection::Input,
                tensor: Some(view(k + 1)),
            },
            DepsArg {
                idx: 2,
                direction: ArgDirection::Output,
                tensor: None,
            },
        ];
        deps.tensors.push(DepsTensor {
            tensor_id: view(k).tensor_id,
            buffer_addr: 0x1_0000_0000 + k * 0x10000,
            version: 0,
            dtype: "FLOAT32".to_string(),
            buffer_numel: 16384,
        });
    }
    for (k, e) in deps.edges.iter_mut().enumerate() {
        if e.source == EdgeSource::Explicit {
            continue;
        }
        e.consumer = Some(view(k as u64));
        if e.source == EdgeSource::Tensormap {
            e.overlap = Some(Overlap::Covered);
            e.producer = Some(ProducerView {
                shape: vec![128, 128],
                start_offset: 0,
                strides: vec![128, 1],
            });
        }
    }
}

fn generate_run(dir: &Path, n: usize, level: u8) -> Res<f64> {
    if dir.join("deps.json").is_file() {
        return Ok(mib(&dir.join("chip_swimlane_records.json")) + mib(&dir.join("deps.json")));
    }
    std::fs::create_dir_all(dir)?;
    let (file, mut deps) = synth::generate(n, level, 42);
    if dir
        .file_name()
        .is_some_and(|d| d.to_string_lossy().ends_with("_views"))
    {
        add_views(&mut deps);
    }
    pto_dfx::swimlane::write(&dir.join("chip_swimlane_records.json"), &file)?;
    pto_dfx::deps::write(&dir.join("deps.json"), &deps)?;
    Ok(mib(&dir.join("chip_swimlane_records.json")) + mib(&dir.join("deps.json")))
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--scenario") {
        let (Some(scenario), Some(dir)) = (args.get(pos + 1), args.get(pos + 2)) else {
            return Err("usage: viewers --scenario NAME DIR".into());
        };
        return child(scenario, Path::new(dir));
    }
    let n: usize = std::env::var("PTO_BENCH_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let n_nodes: usize = std::env::var("PTO_BENCH_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let rounds: usize = std::env::var("PTO_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // PTO_BENCH_DIR keeps the inputs (generated once per size) for profiling.
    let temp = tempfile::tempdir()?;
    let root = match std::env::var_os("PTO_BENCH_DIR") {
        Some(d) => std::path::PathBuf::from(d).join(format!("n{n}")),
        None => temp.path().to_path_buf(),
    };
    let only: Option<String> = std::env::var("PTO_BENCH_ONLY").ok();
    let level2 = root.join("level2");
    let level2_mib = generate_run(&level2, n, 2)?;
    let views = root.join("level2_views");
    let views_mib = if only
        .as_deref()
        .is_none_or(|o| o.split(',').any(|x| x.ends_with("-views")))
    {
        generate_run(&views, n, 2)?
    } else {
        0.0
    };
    let level4 = root.join("level4");
    let level4_mib = generate_run(&level4, n / 4, 4)?;
    let graph = root.join("graph");
    std::fs::create_dir_all(&graph)?;
    pto_dfx::deps::write(&graph.join("deps.json"), &synth::deps_graph(n_nodes))?;
    let graph_mib = mib(&graph.join("deps.json"));

    let scenarios: Vec<(String, &str, &Path, f64)> = vec![
        (
            format!("swimlane-converter, level 2, {n} tasks"),
            "convert",
            &level2,
            level2_mib,
        ),
        (
            format!("swimlane-converter, level 4, {} tasks", n / 4),
            "convert",
            &level4,
            level4_mib,
        ),
        (
            format!("deps-viewer html, built-in layout, {n_nodes} tasks"),
            "deps-html",
            &graph,
            graph_mib,
        ),
        (
            format!("deps-viewer text, {n_nodes} tasks"),
            "deps-text",
            &graph,
            graph_mib,
        ),
        (
            format!("deps-viewer text, level 2 run, {n} tasks"),
            "deps-text",
            &level2,
            level2_mib,
        ),
        (
            format!("deps-viewer text --edge-mode reduced, level 2 run, {n} tasks"),
            "deps-reduced",
            &level2,
            level2_mib,
        ),
        (
            format!("swimlane-converter, level 2, {n} tasks, Simpler-shaped deps.json"),
            "convert-views",
            &views,
            views_mib,
        ),
        (
            format!("deps-viewer text, {n} tasks, Simpler-shaped deps.json"),
            "deps-text-views",
            &views,
            views_mib,
        ),
        (
            format!("critical-path, level 2, {n} tasks"),
            "critical-path",
            &level2,
            level2_mib,
        ),
    ];
    let mut rows = Vec::new();
    for (label, scenario, dir, input) in scenarios {
        // PTO_BENCH_ONLY=deps-text,convert runs only those scenarios.
        if only
            .as_deref()
            .is_some_and(|o| !o.split(',').any(|x| x == scenario))
        {
            continue;
        }
        // The best of `rounds` runs (the machine is shared); peak memory of that run.
        let mut best: Option<Row> = None;
        for _ in 0..rounds.max(1) {
            let row = measure(label.clone(), scenario, dir, input)?;
            if best.as_ref().is_none_or(|b| row.seconds < b.seconds) {
                best = Some(row);
            }
        }
        rows.extend(best);
    }

    println!("| scenario | input (MiB) | output (MiB) | time (s) | peak RSS (MiB) |");
    println!("|---|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {:.1} | {:.1} | {:.2} | {:.0} |",
            r.scenario, r.input_mib, r.output_mib, r.seconds, r.peak_mib
        );
    }
    Ok(())
}
