//! The five diagnostics through a real replay: each artifact read back with the format
//! crate's readers, checked against what the run did.

use std::collections::BTreeSet;
use std::path::PathBuf;

use pto_build_output::read_npy;
use pto_runner::dfx_switches::DFX_SWITCHES;
use pto_runner::{replay, DfxOptions, ReplayOptions, RunConfig};

use crate::fixture::{scale_add, with_orchestration};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dfx")
}

fn run(dir: &std::path::Path, dfx: DfxOptions) -> pto_runner::ReplayOutcome {
    let mut config = RunConfig::new(None).unwrap();
    config.dfx = dfx;
    replay(
        dir,
        &config,
        &ReplayOptions {
            validate: true,
            recompile: true,
            rebuild_from_pto: true,
        },
    )
    .unwrap()
}

const ALL: DfxOptions = DfxOptions {
    chip_swimlane: 4,
    dump_args: 2,
    pmu: 2,
    dep_gen: true,
    scope_stats: true,
    predicted_timing: false,
};

/// One outer task, then four tasks in an inner manual scope with explicit deps (Simpler's
/// dep_gen validation graph), each kernel computing c = a + s * b on disjoint halves.
const KNOWN_GRAPH: &str = r#"
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 4};
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    ChipTensor a = orch_args.tensor(0).ref(), b = orch_args.tensor(1).ref(), c = orch_args.tensor(2).ref();
    uint64_t s = orch_args.scalar(0);
    CoreTaskArgs p0; p0.add_input(a, b); p0.add_output(c); p0.add_scalar(s);
    PTO2TaskId t0 = rt_submit_aiv_task(0, p0).task_id();
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        CoreTaskArgs p1; p1.add_input(a, b); p1.add_inout(c); p1.add_scalar(s); p1.set_dependencies(&t0, 1);
        PTO2TaskId t1 = rt_submit_aiv_task(0, p1).task_id();
        CoreTaskArgs p2; p2.add_input(a, b); p2.add_inout(c); p2.add_scalar(s); p2.set_dependencies(&t0, 1);
        PTO2TaskId t2 = rt_submit_aiv_task(0, p2).task_id();
        PTO2TaskId d3[2] = {t1, t2};
        CoreTaskArgs p3; p3.add_input(a, b); p3.add_inout(c); p3.add_scalar(s); p3.set_dependencies(d3, 2);
        PTO2TaskId t3 = rt_submit_aiv_task(0, p3).task_id();
        PTO2TaskId d4[2] = {t0, t3};
        CoreTaskArgs p4; p4.add_input(a, b); p4.add_output(c); p4.add_scalar(s); p4.set_dependencies(d4, 2);
        p4.dump(c);
        rt_submit_aiv_task(0, p4);
    }
}
"#;

#[test]
fn deps_json_of_the_known_graph() {
    let dir = with_orchestration(&root(), "known_graph", KNOWN_GRAPH);
    let outcome = run(
        &dir,
        DfxOptions {
            dep_gen: true,
            ..Default::default()
        },
    );
    let deps = pto_dfx::deps::read(&dir.join("dfx_outputs/deps.json"))
        .unwrap()
        .value;
    let ids: Vec<String> = deps
        .tasks
        .iter()
        .map(|t| pto_dfx::format_task_display(t.task_id.0))
        .collect();
    assert_eq!(ids, ["t0", "r1t0", "r1t1", "r1t2", "r1t3"]);
    let edges: BTreeSet<(String, String)> = deps
        .edges
        .iter()
        .map(|e| {
            (
                pto_dfx::format_task_display(e.pred.0),
                pto_dfx::format_task_display(e.succ.0),
            )
        })
        .collect();
    let want: BTreeSet<(String, String)> = [
        ("t0", "r1t0"),
        ("t0", "r1t1"),
        ("r1t0", "r1t2"),
        ("r1t1", "r1t2"),
        ("t0", "r1t3"),
        ("r1t2", "r1t3"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(edges, want);
    assert!(deps.tasks[1..]
        .iter()
        .all(|t| t.scope == pto_dfx::deps::ScopeMode::Manual));
    // Every non-explicit edge names a tensor listed in `tensors`.
    let tensors: BTreeSet<u64> = deps.tensors.iter().map(|t| t.tensor_id).collect();
    for e in &deps.edges {
        if let Some(v) = &e.consumer {
            assert!(tensors.contains(&v.tensor_id));
        }
    }
    // The file is one line.
    let text = std::fs::read_to_string(dir.join("dfx_outputs/deps.json")).unwrap();
    assert_eq!(text.matches('\n').count(), 1);
    assert!(outcome
        .dfx
        .files
        .iter()
        .any(|f| f.ends_with("name_map_known_graph.json")));
}

/// Explicit dependencies in a manual scope with repeats and kinds (every kernel writes the
/// same c = a + s * b, so the unordered retain-only consumer races harmlessly).
const MANUAL_KINDS: &str = r#"
#include "pto_orchestration_api.h"
extern "C" __attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 4};
}
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    ChipTensor a = orch_args.tensor(0).ref(), b = orch_args.tensor(1).ref(), c = orch_args.tensor(2).ref();
    uint64_t s = orch_args.scalar(0);
    CoreTaskArgs p0; p0.add_input(a, b); p0.add_output(c); p0.add_scalar(s);
    PTO2TaskId t0 = rt_submit_aiv_task(0, p0).task_id();
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        PTO2TaskId d1[2] = {t0, t0};
        CoreTaskArgs p1; p1.add_input(a, b); p1.add_inout(c); p1.add_scalar(s); p1.set_dependencies(d1, 2);
        PTO2TaskId t1 = rt_submit_aiv_task(0, p1).task_id();
        PTO2TaskId d2[3] = {t0, t1, t1};
        DepFlags k2[3] = {DEP_WAIT, DEP_RETAIN, DEP_WAIT};
        CoreTaskArgs p2; p2.add_input(a, b); p2.add_inout(c); p2.add_scalar(s); p2.set_dependencies_with_kinds(d2, k2, 3);
        PTO2TaskId t2 = rt_submit_aiv_task(0, p2).task_id();
        DepFlags k3[1] = {DEP_RETAIN};
        CoreTaskArgs p3; p3.add_input(a, b); p3.add_inout(c); p3.add_scalar(s); p3.set_dependencies_with_kinds(&t2, k3, 1);
        rt_submit_aiv_task(0, p3);
    }
}
"#;

/// Edges into manual-scope tasks as Simpler's current dep_gen replay writes them: only the
/// explicit dependencies (no creator or TensorMap edge inside a manual scope), one edge per
/// distinct producer with the kinds OR'd over repeats, `arg` -1, no tensor fields.
#[test]
fn manual_scope_edges_are_the_explicit_dependencies_with_their_kinds() {
    let dir = with_orchestration(&root(), "manual_kinds", MANUAL_KINDS);
    run(
        &dir,
        DfxOptions {
            dep_gen: true,
            ..Default::default()
        },
    );
    let path = dir.join("dfx_outputs/deps.json");
    let deps = pto_dfx::deps::read(&path).unwrap().value;
    let ids: Vec<String> = deps
        .tasks
        .iter()
        .map(|t| pto_dfx::format_task_display(t.task_id.0))
        .collect();
    assert_eq!(ids, ["t0", "r1t0", "r1t1", "r1t2"]);
    let edges: Vec<(String, String, bool, bool)> = deps
        .edges
        .iter()
        .map(|e| {
            assert_eq!(e.source, pto_dfx::deps::EdgeSource::Explicit);
            assert_eq!(e.arg, -1);
            assert!(e.consumer.is_none() && e.producer.is_none());
            (
                pto_dfx::format_task_display(e.pred.0),
                pto_dfx::format_task_display(e.succ.0),
                e.flags.wait,
                e.flags.retain,
            )
        })
        .collect();
    let want: Vec<(String, String, bool, bool)> = [
        ("t0", "r1t0", true, true),
        ("t0", "r1t1", true, false),
        ("r1t0", "r1t1", true, true),
        ("r1t1", "r1t2", false, true),
    ]
    .iter()
    .map(|(a, b, w, r)| (a.to_string(), b.to_string(), *w, *r))
    .collect();
    assert_eq!(edges, want);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(
            r#"{"pred":"4294967297","succ":"4294967298","arg":-1,"source":"explicit","flags":["retain"]}"#
        ),
        "{text}"
    );
}

#[test]
fn swimlane_rows_are_tasks_times_blocks_at_every_level() {
    let dir = with_orchestration(
        &root(),
        "spmd_swimlane",
        &KNOWN_GRAPH.replace(
            "p0.add_scalar(s);",
            "p0.add_scalar(s); p0.launch_spec.set_block_num(3);",
        ),
    );
    for level in 1..=4u8 {
        run(
            &dir,
            DfxOptions {
                chip_swimlane: level,
                ..Default::default()
            },
        );
        let f = pto_dfx::swimlane::read(&dir.join("dfx_outputs/chip_swimlane_records.json"))
            .unwrap()
            .value;
        assert_eq!(f.level.number(), level);
        // Five tasks, the first with three blocks.
        assert_eq!(f.aicore_tasks.len(), 7, "level {level}");
        assert_eq!(f.aicpu_tasks.len(), if level >= 2 { 7 } else { 0 });
        assert_eq!(f.scheduler_phases.is_some(), level >= 3);
        assert_eq!(!f.metadata.core_to_thread.is_empty(), level >= 3);
        assert_eq!(
            f.orchestrator_phases.as_ref().map(|o| o[0].len()),
            (level == 4).then_some(5)
        );
        assert_eq!(f.metadata.clock_freq_hz, 50_000_000);
        // The join key (core, reg_task_id) is unique.
        let keys: BTreeSet<(u32, u32)> = f
            .aicore_tasks
            .iter()
            .map(|r| (r.core_id, r.reg_task_id))
            .collect();
        assert_eq!(keys.len(), 7);
        for r in &f.aicore_tasks {
            assert!(r.start_cycles > 0 && r.end_cycles >= r.start_cycles);
        }
    }
}

#[test]
fn dumped_bytes_equal_the_tensors() {
    let dir = scale_add(&root(), "dump_full");
    run(
        &dir,
        DfxOptions {
            dump_args: 2,
            ..Default::default()
        },
    );
    let dump_dir = dir.join("dfx_outputs/args_dump");
    let manifest = pto_dfx::args_dump::read(&dump_dir.join("args_dump.json"))
        .unwrap()
        .value;
    let bin = std::fs::read(dump_dir.join("args.bin")).unwrap();
    let slice = |arg: u32, stage: pto_dfx::args_dump::DumpStage| {
        let r = manifest
            .args
            .iter()
            .find(|r| r.arg_index == arg && r.stage == stage)
            .unwrap();
        bin[r.bin_offset as usize..(r.bin_offset + r.bin_size) as usize].to_vec()
    };
    use pto_dfx::args_dump::DumpStage::*;
    assert_eq!(
        slice(0, BeforeDispatch),
        read_npy(&dir.join("data/in/a.npy")).unwrap().data
    );
    assert_eq!(
        slice(1, BeforeDispatch),
        read_npy(&dir.join("data/in/b.npy")).unwrap().data
    );
    assert_eq!(
        slice(2, AfterCompletion),
        read_npy(&dir.join("data/actual/c.npy")).unwrap().data
    );
    // The scalar is recorded with its value.
    let s = manifest.args.iter().find(|r| r.arg_index == 3).unwrap();
    assert_eq!(s.kind, pto_dfx::args_dump::ArgKind::Scalar);
    assert_eq!(manifest.total_args, 4);
}

#[test]
fn partial_dump_keeps_only_marked_arguments() {
    let dir = with_orchestration(&root(), "dump_partial", KNOWN_GRAPH);
    run(
        &dir,
        DfxOptions {
            dump_args: 1,
            ..Default::default()
        },
    );
    let manifest = pto_dfx::args_dump::read(&dir.join("dfx_outputs/args_dump/args_dump.json"))
        .unwrap()
        .value;
    assert_eq!(manifest.args.len(), 1);
    assert_eq!(
        pto_dfx::format_task_display(manifest.args[0].task_id.0),
        "r1t3"
    );
    assert_eq!(manifest.args[0].arg_index, 2);

    // Hybrid: metadata for every argument, payload only for the marked one.
    run(
        &dir,
        DfxOptions {
            dump_args: 3,
            ..Default::default()
        },
    );
    let manifest = pto_dfx::args_dump::read(&dir.join("dfx_outputs/args_dump/args_dump.json"))
        .unwrap()
        .value;
    assert!(manifest.args.len() > 10);
    assert_eq!(manifest.args.iter().filter(|r| r.bin_size > 0).count(), 1);
}

/// On `cpu` the counter columns are the host's own, as the workers opened them (none when
/// `perf_event_open` is not permitted here).
#[test]
fn pmu_on_cpu_has_the_host_counters_the_workers_opened() {
    let dir = scale_add(&root(), "pmu_cpu");
    let mut config = RunConfig::new(Some("cpu")).unwrap();
    config.dfx = DfxOptions {
        pmu: 2,
        ..Default::default()
    };
    let outcome = replay(
        &dir,
        &config,
        &ReplayOptions {
            validate: true,
            recompile: true,
            rebuild_from_pto: true,
        },
    )
    .unwrap();
    assert!(outcome.passed());
    let names = outcome
        .report
        .dfx
        .workers
        .iter()
        .find(|w| !w.pmu_names.is_empty())
        .map(|w| w.pmu_names.clone())
        .unwrap_or_default();
    let pmu = std::fs::read_to_string(dir.join("dfx_outputs/pmu.csv")).unwrap();
    let header: Vec<&str> = pmu.lines().next().unwrap().split(',').collect();
    assert_eq!(header[6..header.len() - 1], names[..], "{pmu}");
    let row: Vec<&str> = pmu.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row.len(), header.len(), "{pmu}");
}

#[test]
fn every_flag_on_and_none() {
    let dir = scale_add(&root(), "all_flags");
    let outcome = run(&dir, ALL);
    assert!(outcome.passed());
    let out = dir.join("dfx_outputs");
    for f in [
        "chip_swimlane_records.json",
        "deps.json",
        "args_dump/args_dump.json",
        "args_dump/args.bin",
        "pmu.csv",
        "scope_stats/scope_stats.jsonl",
        "name_map_all_flags.json",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    // A single-chip device-orchestration capture: Simpler starts no clock-correlation
    // session for it (only host orchestration or an L3 capture does), so no anchors.
    let lanes = std::fs::read_to_string(out.join("chip_swimlane_records.json")).unwrap();
    assert!(lanes.contains("\"chip_swimlane_level\": 4"), "{lanes}");
    for key in [
        "clock_anchors",
        "orchestrator_source",
        "host_clock_domain_id",
    ] {
        assert!(!lanes.contains(key), "{key}");
    }
    let pmu = std::fs::read_to_string(out.join("pmu.csv")).unwrap();
    assert!(
        pmu.starts_with("thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,"),
        "{pmu}"
    );
    assert_eq!(pmu.lines().count(), 2, "one row per task: {pmu}");
    // a2a3sim, event type 2: Simpler's PIPE_UTILIZATION columns; the AIV kernel's time is
    // its vec_busy_cycles (= pmu_total_cycles), the counters not modelled are 0.
    assert_eq!(
        pmu.lines().next(),
        Some("thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,vec_busy_cycles,cube_busy_cycles,scalar_busy_cycles,mte1_busy_cycles,mte2_busy_cycles,mte3_busy_cycles,icache_miss,icache_req,event_type")
    );
    let row: Vec<&str> = pmu.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[4], "1", "AIV");
    assert_eq!(row[6], row[5], "vec busy = total: {pmu}");
    assert!(row[7..14].iter().all(|v| *v == "0"), "{pmu}");
    assert_eq!(row[14], "2");
    // The columns are modelled: no worker opened or sampled this host's counters.
    assert!(
        outcome
            .report
            .dfx
            .workers
            .iter()
            .all(|w| w.pmu_names.is_empty()),
        "a2a3sim opened host counters"
    );
    let names = pto_dfx::name_map::read(&out.join("name_map_all_flags.json"))
        .unwrap()
        .value;
    assert_eq!(names.orchestrator_name.as_deref(), Some("scale_add"));
    let stats = pto_dfx::scope_stats::read(&out.join("scope_stats/scope_stats.jsonl"))
        .unwrap()
        .value;
    assert_eq!(stats.meta.version, Some(6));
    assert_eq!(stats.records.len(), 4, "root and one scope, begin and end");
    // Simpler's executor opens the root scope with no PTO2_SCOPE, so no site is pending.
    assert_eq!(stats.records[0].site, "(unknown):0");
    assert_eq!(stats.records[3].site, "(unknown):0");
    assert_eq!(
        stats.records[1].site.split(':').next(),
        Some("scale_add.cpp")
    );

    let clean = scale_add(&root(), "no_flags");
    let outcome = run(&clean, DfxOptions::default());
    assert!(outcome.dfx.files.is_empty());
    assert!(!clean.join("dfx_outputs").exists());
}

/// Each switch of the table, alone, writes its artifact and no other switch's: a switch
/// added to the table without a writer (or to `ALL`) fails here.
#[test]
fn each_switch_alone_writes_its_artifact() {
    for s in &DFX_SWITCHES {
        let value = (s.get)(&ALL);
        assert_ne!(value, 0, "ALL turns {} on", s.name);
        let mut options = DfxOptions::default();
        (s.set)(&mut options, value);
        let dir = scale_add(&root(), &format!("alone_{}", s.name));
        assert!(run(&dir, options).passed());
        let out = dir.join("dfx_outputs");
        for other in &DFX_SWITCHES {
            let written = other.artifact_in(&out).exists();
            assert_eq!(
                written,
                other.name == s.name,
                "{} alone: {}",
                s.name,
                other.artifact
            );
        }
    }
}

/// Simpler's converter reports an edge whose predecessor finishes after its successor is
/// dispatched as a happens-before violation: every unit's finish is stamped before the
/// unit counts as done, so none appears, however the workers interleave.
#[test]
fn no_record_shows_a_predecessor_finishing_after_its_successor_is_dispatched() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/paged_attention");
    let dir = root().join("happens_before");
    let _ = std::fs::remove_dir_all(&dir);
    let copied = std::process::Command::new("cp")
        .arg("-r")
        .arg(&src)
        .arg(&dir)
        .status()
        .unwrap();
    assert!(copied.success());
    for round in 0..3 {
        run(
            &dir,
            DfxOptions {
                chip_swimlane: 2,
                dep_gen: true,
                ..Default::default()
            },
        );
        let lane = pto_dfx::swimlane::read(&dir.join("dfx_outputs/chip_swimlane_records.json"))
            .unwrap()
            .value;
        let deps = pto_dfx::deps::read(&dir.join("dfx_outputs/deps.json"))
            .unwrap()
            .value;
        // (core, reg_task_id) joins a scheduler row to its task.
        let task_of: std::collections::HashMap<(u32, u32), u64> = lane
            .aicore_tasks
            .iter()
            .map(|r| ((r.core_id, r.reg_task_id), r.task_token.0))
            .collect();
        let mut first_dispatch = std::collections::HashMap::<u64, u64>::new();
        let mut last_finish = std::collections::HashMap::<u64, u64>::new();
        for r in &lane.aicpu_tasks {
            let task = task_of[&(r.core_id, r.reg_task_id)];
            let d = first_dispatch.entry(task).or_insert(u64::MAX);
            *d = (*d).min(r.dispatch_cycles);
            let f = last_finish.entry(task).or_insert(0);
            *f = (*f).max(r.finish_cycles);
        }
        let mut checked = 0;
        for e in &deps.edges {
            let (Some(&finish), Some(&dispatch)) =
                (last_finish.get(&e.pred.0), first_dispatch.get(&e.succ.0))
            else {
                continue;
            };
            assert!(
                finish <= dispatch,
                "round {round}: {} finishes at {finish} after {} is dispatched at {dispatch}",
                pto_dfx::format_task_display(e.pred.0),
                pto_dfx::format_task_display(e.succ.0)
            );
            checked += 1;
        }
        assert!(
            checked > 10,
            "round {round}: only {checked} edges had records"
        );
    }
}
