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
//! (`convert`, `deps-html`, `deps-html-lod`, `deps-text`, `deps-reduced`, `critical-path`).
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
//! 3. `deps-viewer --format html --engine builtin` on a 10,000-node graph,
//!    one drawn node per task (the level-2 input's size counts both files; the
//!    deps viewer reads only `deps.json`, and the swimlane beside it for spans);
//!    and the level-of-detail page of the level-2 run's N tasks (`deps-html-lod`,
//!    JSON and compact input);
//! 4. `deps-viewer` text on the same graph;
//! 5. `deps-viewer` text on the level-2 run's `deps.json` (N tasks), in
//!    full and with `--edge-mode reduced`;
//! 6. `critical-path` on the level-2 run;
//! 7. the converter and the deps viewer text on a level-2 run whose `deps.json`
//!    carries Simpler's argument and edge views (`add_views`, about 0.9 KB per
//!    task: the shape of the files Simpler's dep_gen writes);
//! 8. the converter, the deps viewer text and the critical path on the same
//!    records in the compact form (`--dfx-format compact`:
//!    `chip_swimlane_records.bin`, `deps.bin`; scenarios `…-compact`), so
//!    both inputs appear side by side.
//!
//! Inputs come from the deterministic generator shared with the tests
//! (`tests/synth.rs`) and are written to a temporary directory first; only
//! the tool is timed.

#[path = "../tests/synth.rs"]
mod synth;

use std::path::Path;
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

use pto_dfx_view::deps_viewer::{self, DepsViewerOptions, EdgeMode, Format, LayoutChoice};
use pto_dfx_view::swimlane_converter::{self, ConvertOptions};

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
    // `…-compact`: the same records in the compact form (`--dfx-format compact`).
    // They are in `compact/` (only there, so that the JSON scenarios read JSON).
    let compact_dir = dir.join("compact");
    let (scenario, dir, swimlane_name, deps_name) = match scenario.strip_suffix("-compact") {
        Some(s) => (
            s,
            compact_dir.as_path(),
            "chip_swimlane_records.bin",
            "deps.bin",
        ),
        None => (scenario, dir, "chip_swimlane_records.json", "deps.json"),
    };
    let output_mib = match scenario {
        "convert" | "convert-views" => {
            let report = swimlane_converter::convert(&ConvertOptions {
                input: &dir.join(swimlane_name),
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
        "deps-html" | "deps-html-lod" | "deps-text" | "deps-reduced" | "deps-text-views" => {
            let edge_mode = if scenario == "deps-reduced" {
                EdgeMode::Reduced
            } else {
                EdgeMode::Full
            };
            // `deps-html` is the per-task page at any size, `deps-html-lod` the default
            // (the level-of-detail page above 10,000 nodes).
            let lod_above = if scenario == "deps-html" {
                usize::MAX
            } else {
                deps_viewer::DEFAULT_LOD_ABOVE
            };
            let report = deps_viewer::view_with_lod(
                &DepsViewerOptions {
                    input: &dir.join(deps_name),
                    output: None,
                    format: if scenario.starts_with("deps-html") {
                        Format::Html
                    } else {
                        Format::Text
                    },
                    layout: LayoutChoice::Builtin,
                    func_names: None,
                    edge_mode,
                },
                lod_above,
            )?;
            eprintln!(
                "  {} nodes, {} edges",
                report.n_nodes, report.n_unique_edges
            );
            mib(&report.output)
        }
        "critical-path" => {
            let report = pto_dfx_view::critical_path::analyze(dir)?;
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

fn compact_mib(dir: &Path) -> f64 {
    let dir = dir.join("compact");
    mib(&dir.join("chip_swimlane_records.bin")) + mib(&dir.join("deps.bin"))
}

fn generate_run(dir: &Path, n: usize, level: u8) -> Res<f64> {
    if dir.join("compact/deps.bin").is_file() {
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
    write_compact(&dir.join("compact"), &file, &deps)?;
    Ok(mib(&dir.join("chip_swimlane_records.json")) + mib(&dir.join("deps.json")))
}

/// The records of a synthetic run in the compact form. The synthetic files are in ticks of
/// 50 MHz (20 ns), so records of `cycles × 20` ns give back the same ticks; views get the
/// buffer of their tensor record (`tensors[]`), or their id as an address when there is none.
fn write_compact(
    dir: &Path,
    file: &pto_dfx::swimlane::SwimlaneFile,
    deps: &pto_dfx::deps::DepsFile,
) -> Res<()> {
    use pto_dfx::compact::{deps as cdeps, swimlane as cswim};
    use std::collections::HashMap;
    let ns = |c: u64| c * (1_000_000_000 / file.metadata.clock_freq_hz.max(1));
    let aicpu: HashMap<(u32, u32), &pto_dfx::swimlane::AicpuTaskRow> = file
        .aicpu_tasks
        .iter()
        .map(|r| ((r.core_id, r.reg_task_id), r))
        .collect();
    let subtasks: Vec<cswim::Subtask> = file
        .aicore_tasks
        .iter()
        .map(|r| {
            let cpu = aicpu.get(&(r.core_id, r.reg_task_id));
            cswim::Subtask {
                core: r.core_id,
                task: r.task_token.raw(),
                reg_task_id: r.reg_task_id,
                dispatch_ns: cpu.map_or(0, |c| ns(c.dispatch_cycles)),
                receive_ns: ns(r
                    .start_cycles
                    .saturating_sub(u64::from(r.receive_to_start_cycles))),
                start_ns: ns(r.start_cycles),
                end_ns: ns(r.end_cycles),
                finish_ns: cpu.map_or(0, |c| ns(c.finish_cycles)),
            }
        })
        .collect();
    let lanes: Vec<Vec<cswim::Phase>> = file
        .scheduler_phases
        .iter()
        .flatten()
        .map(|lane| {
            lane.iter()
                .map(|p| cswim::Phase {
                    kind: p.kind.code().unwrap_or(0),
                    start_ns: ns(p.start_cycles),
                    end_ns: ns(p.end_cycles),
                    loop_iter: p.loop_iter,
                    tasks_processed: p.tasks_processed,
                    pop_hit: p.pop.map_or(0, |x| x.hit),
                    pop_miss: p.pop.map_or(0, |x| x.miss),
                    shared_at_start: p.shared_at_start.unwrap_or_default(),
                    shared_at_end: p.shared_at_end.unwrap_or_default(),
                })
                .collect()
        })
        .collect();
    let orch: Vec<cswim::Orch> = file
        .orchestrator_phases
        .iter()
        .flatten()
        .flatten()
        .map(|o| cswim::Orch {
            submit_idx: o.submit_idx,
            task: o.task_id.raw(),
            start_ns: ns(o.start_cycles),
            end_ns: ns(o.end_cycles),
        })
        .collect();
    std::fs::create_dir_all(dir)?;
    let header = cswim::SwimlaneHeader {
        level: file.level.number(),
        clock_freq_hz: file.metadata.clock_freq_hz,
        core_types: file.metadata.core_types.clone(),
        core_to_thread: file.metadata.core_to_thread.clone(),
        schema: file.schema(),
        run_epoch: 0,
        predicted: false,
    };
    // One worker holds the subtasks, one lane per scheduler thread.
    let n = lanes.len().max(1);
    let empty: Vec<cswim::Subtask> = Vec::new();
    let no_phases: Vec<cswim::Phase> = Vec::new();
    cswim::write(
        &dir.join(cswim::FILE_NAME),
        &header,
        (0..n).map(|w| {
            (
                if w == 0 { &subtasks } else { &empty }.iter().copied(),
                lanes.get(w).unwrap_or(&no_phases).iter().copied(),
            )
        }),
        orch.iter().copied(),
    )?;

    let buffers: HashMap<u64, &pto_dfx::deps::DepsTensor> =
        deps.tensors.iter().map(|t| (t.tensor_id, t)).collect();
    let view = |v: &pto_dfx::deps::TensorView| {
        let (addr, version, bytes) = buffers.get(&v.tensor_id).map_or((v.tensor_id, 0, 0), |t| {
            (t.buffer_addr, t.version, t.buffer_numel * 4)
        });
        let mut shapes = [0u32; cdeps::MAX_DIMS];
        let mut strides = [0u32; cdeps::MAX_DIMS];
        for (d, s) in shapes.iter_mut().zip(&v.shape) {
            *d = *s;
        }
        for (d, s) in strides.iter_mut().zip(&v.strides) {
            *d = *s;
        }
        cdeps::View {
            addr,
            buffer_bytes: bytes,
            start_offset: v.start_offset,
            version,
            dtype: 0,
            ndims: v.shape.len().min(cdeps::MAX_DIMS) as u8,
            shapes,
            strides,
        }
    };
    let tasks: Vec<(cdeps::Task, Vec<cdeps::Arg>)> = deps
        .tasks
        .iter()
        .map(|t| {
            let mut kernel_ids = [-1; 3];
            for (d, k) in kernel_ids.iter_mut().zip(&t.kernel_ids) {
                *d = *k;
            }
            let args = t
                .args
                .iter()
                .map(|a| cdeps::Arg {
                    ty: match a.direction {
                        pto_dfx::deps::ArgDirection::Input => cdeps::ArgType::Input,
                        pto_dfx::deps::ArgDirection::Output => cdeps::ArgType::Output,
                        pto_dfx::deps::ArgDirection::Inout => cdeps::ArgType::InOut,
                        pto_dfx::deps::ArgDirection::OutputExisting => {
                            cdeps::ArgType::OutputExisting
                        }
                    },
                    view: a.tensor.as_ref().map(view),
                })
                .collect();
            (
                cdeps::Task {
                    task: t.task_id.raw(),
                    manual_scope: t.scope == pto_dfx::deps::ScopeMode::Manual,
                    early_dispatch: t.early_dispatch,
                    is_alloc: false,
                    kernel_ids,
                    block_num: t.block_num,
                },
                args,
            )
        })
        .collect();
    let edges: Vec<cdeps::Edge> = deps
        .edges
        .iter()
        .map(|e| cdeps::Edge {
            pred: e.pred.raw(),
            succ: e.succ.raw(),
            arg: e.arg,
            source: e.source,
            wait: e.flags.wait,
            retain: e.flags.retain,
            overlap: e.overlap,
            consumer: e.consumer.as_ref().map(view),
            producer: e.producer.as_ref().map(|p| {
                let g = view(&pto_dfx::deps::TensorView {
                    tensor_id: 0,
                    dtype: String::new(),
                    shape: p.shape.clone(),
                    start_offset: p.start_offset,
                    strides: p.strides.clone(),
                });
                cdeps::Geometry {
                    start_offset: g.start_offset,
                    ndims: g.ndims,
                    shapes: g.shapes,
                    strides: g.strides,
                }
            }),
        })
        .collect();
    cdeps::write_records(
        &dir.join(cdeps::FILE_NAME),
        pto_dfx::DfxSchema::V2026_08,
        tasks.iter().map(|(t, a)| (*t, a.iter().copied())),
        edges.iter().copied(),
    )?;
    Ok(())
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
            format!("deps-viewer html, level of detail, level 2 run, {n} tasks"),
            "deps-html-lod",
            &level2,
            level2_mib,
        ),
        (
            format!("deps-viewer html, level of detail, level 2 run, {n} tasks, compact input"),
            "deps-html-lod-compact",
            &level2,
            compact_mib(&level2),
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
        (
            format!("swimlane-converter, level 2, {n} tasks, compact input"),
            "convert-compact",
            &level2,
            compact_mib(&level2),
        ),
        (
            format!(
                "swimlane-converter, level 4, {} tasks, compact input",
                n / 4
            ),
            "convert-compact",
            &level4,
            compact_mib(&level4),
        ),
        (
            format!("deps-viewer text, level 2 run, {n} tasks, compact input"),
            "deps-text-compact",
            &level2,
            compact_mib(&level2),
        ),
        (
            format!("swimlane-converter, level 2, {n} tasks, Simpler-shaped deps, compact input"),
            "convert-views-compact",
            &views,
            compact_mib(&views),
        ),
        (
            format!("deps-viewer text, {n} tasks, Simpler-shaped deps, compact input"),
            "deps-text-views-compact",
            &views,
            compact_mib(&views),
        ),
        (
            format!("critical-path, level 2, {n} tasks, compact input"),
            "critical-path-compact",
            &level2,
            compact_mib(&level2),
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
