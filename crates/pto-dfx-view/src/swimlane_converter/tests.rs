//! Tests of the converter: small records in, a trace the checker accepts out.

use std::path::PathBuf;

use serde_json::Value;

use super::*;
use crate::trace_check;
use pto_dfx::task_id::TaskId;

/// The reference's §2.5 example, with a predecessor edge r1t0 → r1t1 and
/// t0 → both (deps below).
const RECORDS: &str = r#"{
  "chip_swimlane_level": 4,
  "metadata": {"clock_freq_hz": 50000000, "num_cores": 2, "core_types": ["aic", "aiv"], "core_to_thread": [0, 0]},
  "aicore_tasks": [
    [0, 4294967296, 1, 1100, 1400, 10],
    [1, 0, 1, 1000, 1050, 8],
    [1, 4294967297, 2, 1450, 1500, 8]
  ],
  "aicpu_tasks": [[0, 1, 1080, 1420], [1, 1, 980, 1060], [1, 2, 1430, 1520]],
  "aicpu_scheduler_phases": [[
    {"kind": "dispatch", "start_cycles": 975, "end_cycles": 985, "loop_iter": 1, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [0,1,0], "shared_at_end": [0,0,0]},
    {"kind": "complete", "start_cycles": 1055, "end_cycles": 1065, "loop_iter": 2, "tasks_processed": 1, "shared_at_start": [1,0,0], "shared_at_end": [1,0,0]},
    {"kind": "dispatch", "start_cycles": 1075, "end_cycles": 1085, "loop_iter": 3, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [1,0,0], "shared_at_end": [0,0,0]},
    {"kind": "complete", "start_cycles": 1415, "end_cycles": 1425, "loop_iter": 4, "tasks_processed": 1, "shared_at_start": [0,0,0], "shared_at_end": [0,1,0]},
    {"kind": "dispatch", "start_cycles": 1428, "end_cycles": 1435, "loop_iter": 5, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [0,1,0], "shared_at_end": [0,0,0]},
    {"kind": "complete", "start_cycles": 1515, "end_cycles": 1525, "loop_iter": 6, "tasks_processed": 1, "shared_at_start": [0,0,0], "shared_at_end": [0,0,0]},
    {"kind": "dummy_task", "start_cycles": 1526, "end_cycles": 1526, "loop_iter": 7, "tasks_processed": 1, "task_id": 4294967298, "shared_at_start": [0,0,0], "shared_at_end": [0,0,0]}
  ]],
  "aicpu_orchestrator_phases": [[
    {"submit_idx": 0, "task_id": 0, "start_cycles": 900, "end_cycles": 920},
    {"submit_idx": 1, "task_id": 4294967296, "start_cycles": 921, "end_cycles": 940},
    {"submit_idx": 2, "task_id": 4294967297, "start_cycles": 941, "end_cycles": 950},
    {"submit_idx": 3, "task_id": 8589934592, "start_cycles": 951, "end_cycles": 960}
  ]]
}"#;

const DEPS: &str = r#"{"tasks":[{"task_id":"0","scope":"auto","early_dispatch":false,"kernel_ids":[-1,0,-1],"block_num":1,"args":[]},{"task_id":"4294967296","scope":"manual","early_dispatch":false,"kernel_ids":[1,-1,-1],"block_num":1,"args":[]},{"task_id":"4294967297","scope":"manual","early_dispatch":false,"kernel_ids":[-1,2,-1],"block_num":4,"args":[]},{"task_id":"4294967298","scope":"manual","early_dispatch":false,"kernel_ids":[-1,-1,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"0","succ":"4294967296","arg":0,"source":"tensormap","flags":["wait"]},{"pred":"0","succ":"4294967297","arg":0,"source":"tensormap","flags":["wait"]},{"pred":"4294967296","succ":"4294967297","arg":1,"source":"tensormap","flags":["wait"]},{"pred":"4294967296","succ":"4294967297","arg":2,"source":"tensormap","flags":["wait"]}]}
"#;

const NAMES: &str = r#"{
  "level": 2,
  "orchestrator_name": "PagedAttn",
  "callable_id_to_name": {
    "0": "ADD",
    "1": "<script>alert(1)</script>"
  }
}"#;

struct Run {
    _dir: tempfile::TempDir,
    input: PathBuf,
    output: PathBuf,
}

fn setup(records: &str, deps: Option<&str>, names: Option<&str>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("chip_swimlane_records.json");
    std::fs::write(&input, records).unwrap();
    if let Some(d) = deps {
        std::fs::write(dir.path().join("deps.json"), d).unwrap();
    }
    if let Some(n) = names {
        std::fs::write(dir.path().join("name_map_Test_case.json"), n).unwrap();
    }
    let output = dir.path().join("out.json");
    Run {
        _dir: dir,
        input,
        output,
    }
}

fn convert_ok(run: &Run) -> (ConvertReport, Value) {
    let report = convert(&ConvertOptions {
        input: &run.input,
        output: Some(&run.output),
        deps: None,
        func_names: None,
        kernel_config: None,
    })
    .unwrap();
    let trace: Value = serde_json::from_slice(&std::fs::read(&run.output).unwrap()).unwrap();
    if let Err(errors) = trace_check::check(&trace) {
        panic!("trace check failed:\n{}", errors.join("\n"));
    }
    (report, trace)
}

fn events(trace: &Value) -> &[Value] {
    trace["traceEvents"].as_array().unwrap()
}

fn names_of(trace: &Value, pid: u64, ph: &str) -> Vec<String> {
    events(trace)
        .iter()
        .filter(|e| e["pid"] == pid && e["ph"] == ph)
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect()
}

fn thread_names(trace: &Value) -> Vec<(u64, u64, String)> {
    events(trace)
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["tid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn full_example_has_every_lane_named_slices_and_flows() {
    let run = setup(RECORDS, Some(DEPS), Some(NAMES));
    let (report, trace) = convert_ok(&run);
    assert_eq!(report.n_tasks, 3);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(
        report
            .names
            .as_deref()
            .map(|p| p.ends_with("name_map_Test_case.json")),
        Some(true)
    );

    // Worker View: named kernels, SPMD suffix, the unnamed func_id 2.
    let worker = names_of(&trace, 4, "X");
    assert!(worker.contains(&"ADD(t0)".to_string()), "{worker:?}");
    assert!(
        worker.contains(&"<script>alert(1)</script>(r1t0)".to_string()),
        "{worker:?}"
    );
    assert!(
        worker.contains(&"func_2_c_spmd(r1t1)".to_string()),
        "{worker:?}"
    );
    assert!(worker.contains(&"dummy(r1t2)".to_string()), "{worker:?}");
    assert!(worker.contains(&"alloc(r2t0)".to_string()), "{worker:?}");
    // Scheduler View and scheduler phases.
    assert_eq!(names_of(&trace, 3, "X").len(), 3);
    let phases = names_of(&trace, 2, "X");
    assert!(
        phases.contains(&"dispatch(1)".to_string()) && phases.contains(&"complete(1)".to_string())
    );
    assert_eq!(names_of(&trace, 1, "X")[0], "submit(t0)");

    let threads = thread_names(&trace);
    for want in [
        (4, 10000, "AIC_0"),
        (4, 10010, "AIV_1"),
        (3, 10000, "AIC_0"),
        (2, 30000, "Sched_0"),
        (2, 3999, "shared_ready_queue (global)"),
        (1, 4000, "Orch_0"),
        (4, 19000, "AICPU_0"),
        (4, 19001, "AICPU_1"),
    ] {
        assert!(
            threads.iter().any(|(p, t, n)| (*p, *t, n.as_str()) == want),
            "{want:?} not in {threads:?}"
        );
    }
    let processes: Vec<&str> = events(&trace)
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        processes,
        [
            "Worker View",
            "Scheduler View",
            "AICPU Scheduler",
            "AICPU PagedAttn"
        ]
    );

    // Flows of every kind; the t0 → r1t1 edge's ends are both named dependency.
    let flows: Vec<&str> = events(&trace)
        .iter()
        .filter(|e| e["ph"] == "s")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for kind in [
        "dependency",
        "complete",
        "complete\u{2192}ready",
        "dispatch",
        "submit\u{2192}dispatch",
    ] {
        assert!(flows.contains(&kind), "{kind} not in {flows:?}");
    }
    // 3 unique edges, in both views.
    assert_eq!(
        flows
            .iter()
            .filter(|f| **f == "dependency" || **f == "hb_violation")
            .count(),
        6
    );

    // The t0 bar: receive (cycle 992) → end (1050); the base is the
    // orchestrator's first cycle (900): 92·20 ns = 1.84 µs, as Simpler shows.
    let t0 = events(&trace)
        .iter()
        .find(|e| e["pid"] == 4 && e["name"] == "ADD(t0)")
        .unwrap();
    assert_eq!(t0["ts"], serde_json::json!(1.84));
    assert_eq!(t0["dur"], serde_json::json!(1.16));
    assert_eq!(t0["args"]["fanout-hint"], "2: [r1t0, r1t1]");
    assert_eq!(t0["args"]["event-hint"], "Task:t0, FuncId:0, CoreId:1");

    // The ready-queue counter records changes, and always its final sample
    // (the last complete's end, 12.5 µs, repeating [0,0,0]).
    let queue: Vec<&Value> = events(&trace).iter().filter(|e| e["ph"] == "C").collect();
    assert_eq!(queue.len(), 6, "{queue:?}");
    assert_eq!(queue[5]["ts"], serde_json::json!(12.5));
    assert_eq!(
        queue[5]["args"],
        serde_json::json!({"AIC": 0, "AIV": 0, "MIX": 0})
    );

    // Table, TOTAL row and test time exactly as Simpler prints them.
    let text = report.summary.render();
    assert!(
        text.contains("\n0        ADD              1           1.00             1.60   62.5%              0.40             0.20          0.24           0.16\n"),
        "{text}"
    );
    assert!(
        text.contains("\nTOTAL                     3           8.00            10.20\n"),
        "{text}"
    );
    assert!(
        text.contains("\nTotal Test Time: 10.80 us (from earliest dispatch to latest finish)\n"),
        "{text}"
    );
    assert!(text.contains("  Source chip_swimlane_level: 4 (full collection with orchestrator phases; recorded in chip_swimlane_records.json)"), "{text}");
}

/// One flow end: `(pid, tid, ts)`.
type End = (u64, u64, f64);

/// Both ends of every flow named `name`, by flow id.
fn flow_ends(trace: &Value, name: &str) -> Vec<(End, End)> {
    let mut by_id: std::collections::BTreeMap<u64, [Option<End>; 2]> =
        std::collections::BTreeMap::new();
    for e in events(trace) {
        if e["cat"] != "flow" || e["name"] != name {
            continue;
        }
        let end = (
            e["pid"].as_u64().unwrap(),
            e["tid"].as_u64().unwrap(),
            e["ts"].as_f64().unwrap(),
        );
        let slot = if e["ph"] == "s" { 0 } else { 1 };
        by_id.entry(e["id"].as_u64().unwrap()).or_default()[slot] = Some(end);
    }
    by_id
        .into_values()
        .map(|[s, f]| (s.unwrap(), f.unwrap()))
        .collect()
}

#[test]
fn flows_are_anchored_where_simpler_anchors_them() {
    let run = setup(RECORDS, Some(DEPS), Some(NAMES));
    let (_, trace) = convert_ok(&run);
    // dependency: bar start to bar start (t0 1.84 → r1t0 3.8, the reference's
    // excerpt), carrying bind ids and (input, output) = (succ, pred) counts.
    let dep = flow_ends(&trace, "dependency");
    assert!(
        dep.contains(&((4, 10010, 1.84), (4, 10000, 3.8))),
        "{dep:?}"
    );
    assert!(dep.contains(&((3, 10010, 1.6), (3, 10000, 3.6))), "{dep:?}");
    let to_spmd = events(&trace)
        .iter()
        .find(|e| e["name"] == "dependency" && e["ph"] == "f" && e["pid"] == 4 && e["ts"] == 10.84)
        .unwrap();
    assert_eq!(to_spmd["input_task_count"], 4, "{to_spmd}");
    assert_eq!(to_spmd["output_task_count"], 1, "{to_spmd}");
    let first = events(&trace)
        .iter()
        .find(|e| e["name"] == "dependency" && e["ph"] == "s" && e["ts"] == 1.84)
        .unwrap();
    assert_eq!(first["bind_id"], 0, "t0's Worker View bar is event 0");

    // complete: from each view's bar (10 ns before its end / finish) to the
    // last finish inside the complete phase that retired it.
    let complete = flow_ends(&trace, "complete");
    for want in [
        ((4, 10010, 2.99), (2, 30000, 3.2)),
        ((3, 10010, 3.19), (2, 30000, 3.2)),
        ((4, 10000, 9.99), (2, 30000, 10.4)),
        ((3, 10000, 10.39), (2, 30000, 10.4)),
        ((4, 10010, 11.99), (2, 30000, 12.4)),
        ((3, 10010, 12.39), (2, 30000, 12.4)),
    ] {
        assert!(complete.contains(&want), "{want:?} not in {complete:?}");
    }
    assert_eq!(complete.len(), 6, "{complete:?}");
    // complete→ready: released when the last fanin completes (r1t1 waits
    // for r1t0's complete, not t0's).
    let ready = flow_ends(&trace, "complete\u{2192}ready");
    assert_eq!(
        ready,
        [
            ((2, 30000, 3.29), (2, 30000, 3.6)),
            ((2, 30000, 10.49), (2, 30000, 10.6))
        ]
    );
    // dispatch: at the dispatch inside the phase, to the kernel start and
    // to the Scheduler View bar.
    let dispatch = flow_ends(&trace, "dispatch");
    assert!(
        dispatch.contains(&((2, 30000, 1.6), (4, 10010, 2.0))),
        "{dispatch:?}"
    );
    assert!(
        dispatch.contains(&((2, 30000, 1.6), (3, 10010, 1.6))),
        "{dispatch:?}"
    );
    assert_eq!(dispatch.len(), 6);
    // submit→dispatch: from the submit's end (1 ns inside it) to each row's dispatch.
    let submit = flow_ends(&trace, "submit\u{2192}dispatch");
    assert_eq!(
        submit,
        [
            ((1, 4000, 0.399), (2, 30000, 1.6)),
            ((1, 4000, 0.799), (2, 30000, 3.6)),
            ((1, 4000, 0.999), (2, 30000, 10.6))
        ]
    );

    // Complete phases carry Simpler's attribution counts.
    let c = events(&trace)
        .iter()
        .find(|e| e["pid"] == 2 && e["name"] == "complete(1)")
        .unwrap();
    assert_eq!(c["args"]["finishes_processed"], 1);
    assert_eq!(c["args"]["finish_rows_attributed"], 1);
    // Markers and alloc bars are events with ids after both views' bars.
    let alloc = events(&trace)
        .iter()
        .find(|e| e["name"] == "alloc(r2t0)")
        .unwrap();
    assert_eq!(alloc["id"], 7);
    assert_eq!(alloc["cat"], "event");
    assert_eq!(alloc["args"]["phase"], "alloc");
    assert_eq!(alloc["tid"], 19001);
}

#[test]
fn every_aicpu_thread_is_named_and_dummy_tasks_anchor_dependencies() {
    // Three scheduler threads (core_to_thread names thread 2; thread 1 has a
    // dummy marker) and one orchestrator: AICPU_0..AICPU_3 are all named; the
    // dummy r1t5 has no rows, so its edge to t0 starts at its marker.
    let records = r#"{"chip_swimlane_level": 4, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 1, "core_types": ["aiv"], "core_to_thread": [2]},
      "aicore_tasks": [[0, 0, 1, 1000, 1100, 0]], "aicpu_tasks": [[0, 1, 990, 1110]],
      "aicpu_scheduler_phases": [[], [{"kind": "dummy_task", "start_cycles": 500, "end_cycles": 500, "loop_iter": 1, "tasks_processed": 1, "task_id": 4294967301, "shared_at_start": [0,0,0], "shared_at_end": [0,0,0]}], [{"kind": "dispatch", "start_cycles": 980, "end_cycles": 995, "loop_iter": 1, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [0,1,0], "shared_at_end": [0,0,0]}]],
      "aicpu_orchestrator_phases": [[{"submit_idx": 0, "task_id": 0, "start_cycles": 400, "end_cycles": 450}]]}"#;
    let deps = r#"{"tasks":[{"task_id":"0","scope":"auto","kernel_ids":[-1,3,-1],"block_num":1,"args":[]},{"task_id":"4294967301","scope":"auto","kernel_ids":[-1,-1,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"4294967301","succ":"0","arg":-1,"source":"explicit","flags":["wait","retain"]}]}"#;
    let run = setup(records, Some(deps), None);
    let (_, trace) = convert_ok(&run);
    let threads = thread_names(&trace);
    for k in 0..4u64 {
        let want = (4, 19_000 + k, format!("AICPU_{k}"));
        assert!(threads.contains(&want), "{want:?} not in {threads:?}");
    }
    let dep = flow_ends(&trace, "dependency");
    assert_eq!(dep, [((4, 19001, 0.1), (4, 10000, 0.6))], "{dep:?}");
}

#[test]
fn overhead_counters_follow_the_model() {
    let run = setup(RECORDS, Some(DEPS), None);
    let report = convert_with(
        &ConvertOptions {
            input: &run.input,
            output: Some(&run.output),
            deps: None,
            func_names: None,
            kernel_config: None,
        },
        ConvertExtras { overhead: true },
    )
    .unwrap();
    let trace: Value = serde_json::from_slice(&std::fs::read(&run.output).unwrap()).unwrap();
    if let Err(errors) = trace_check::check(&trace) {
        panic!("trace check failed:\n{}", errors.join("\n"));
    }
    let oh: Vec<&Value> = events(&trace)
        .iter()
        .filter(|e| e["cat"] == "overhead")
        .collect();
    assert_eq!(oh.len(), report.n_overhead_samples);
    // Simpler's key order and shape.
    let first = serde_json::to_string(oh[0]).unwrap();
    assert!(first.starts_with("{\"ph\":\"C\",\"cat\":\"overhead\",\"name\":\"oh_aic_idle\",\"pid\":2,\"tid\":9101,\"ts\":2.0,\"args\":{\"oh_aic_idle\":1}"), "{first}");
    // r1t0 is ready when t0 ends (3.0) and dispatched at 3.6 while its AIC is idle.
    let series = |name: &str| -> Vec<(f64, i64)> {
        oh.iter()
            .filter(|e| e["name"] == name)
            .map(|e| (e["ts"].as_f64().unwrap(), e["args"][name].as_i64().unwrap()))
            .collect()
    };
    assert_eq!(series("oh_aic_overhead"), [(2.0, 0), (3.0, 1), (3.6, 0)]);
    assert_eq!(series("oh_aic_ready"), [(2.0, 0), (3.0, 1), (3.6, 0)]);

    // Without a deps.json: a warning, no counters.
    let run = setup(RECORDS, None, None);
    let report = convert_with(
        &ConvertOptions {
            input: &run.input,
            output: Some(&run.output),
            deps: None,
            func_names: None,
            kernel_config: None,
        },
        ConvertExtras { overhead: true },
    )
    .unwrap();
    assert_eq!(report.n_overhead_samples, 0);
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("--overhead needs deps.json")),
        "{:?}",
        report.warnings
    );
}

#[test]
fn without_deps_tasks_are_labelled_task_and_there_are_no_dependency_arrows() {
    let run = setup(RECORDS, None, None);
    let (report, trace) = convert_ok(&run);
    assert!(
        report.warnings.iter().any(|w| w.contains("no deps.json")),
        "{:?}",
        report.warnings
    );
    let worker = names_of(&trace, 4, "X");
    assert!(worker.contains(&"task(t0)".to_string()), "{worker:?}");
    assert!(!events(&trace).iter().any(|e| e["name"] == "dependency"));
    assert!(report.summary.render().contains("func_-1_"));
}

#[test]
fn accepts_five_column_rows_and_level_one() {
    let records = r#"{"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 1, "core_types": ["aiv"]},
      "aicore_tasks": [[0, 0, 1, 100, 200], [0, 1, 2, 200, 300]], "aicpu_tasks": []}"#;
    let run = setup(records, None, None);
    let (report, trace) = convert_ok(&run);
    assert_eq!(report.n_tasks, 2);
    // Touching bars on one core stay on one lane.
    let lanes: Vec<&Value> = events(&trace)
        .iter()
        .filter(|e| e["ph"] == "X")
        .map(|e| &e["tid"])
        .collect();
    assert!(lanes.iter().all(|t| **t == 10000), "{lanes:?}");
    assert!(
        names_of(&trace, 3, "X").is_empty(),
        "no Scheduler View at level 1"
    );
    let text = report.summary.render();
    // The span runs from the first receive (here the start) to the last end,
    // and Simpler's TOTAL row has no latency at level 1.
    assert!(
        text.contains(
            "\nAICore Observed Span: 0.20 us (from earliest AICore receive to latest AICore end)\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\n-1       func_-1_         2           0.10                -       -                 -                -             -           0.00\n"),
        "{text}"
    );
    assert!(
        text.contains("\nTOTAL                     2           0.20                -\n"),
        "{text}"
    );
}

#[test]
fn overlapping_bars_on_one_core_move_to_a_sub_lane() {
    let records = r#"{"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 1, "core_types": ["aic"]},
      "aicore_tasks": [[0, 0, 1, 100, 300, 0], [0, 1, 2, 200, 400, 0], [0, 2, 3, 150, 180, 0]],
      "aicpu_tasks": [[0, 1, 90, 310], [0, 2, 190, 410], [0, 3, 140, 190]]}"#;
    let run = setup(records, None, None);
    let (_, trace) = convert_ok(&run);
    let threads = thread_names(&trace);
    assert!(
        threads.contains(&(4, 10001, "AIC_0+1".to_string())),
        "{threads:?}"
    );
}

#[test]
fn malformed_inputs_name_the_file_and_the_key() {
    for (text, key) in [
        (&RECORDS[..200], None),
        ("{\"chip_swimlane_level\": 9, \"metadata\": {\"clock_freq_hz\": 1}, \"aicore_tasks\": [], \"aicpu_tasks\": []}", Some("chip_swimlane_level")),
        ("{\"chip_swimlane_level\": 2, \"aicore_tasks\": [], \"aicpu_tasks\": []}", Some("metadata")),
    ] {
        let run = setup(text, None, None);
        let err = convert(&ConvertOptions {
            input: &run.input,
            output: Some(&run.output),
            deps: None,
            func_names: None,
            kernel_config: None,
        })
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&run.input.display().to_string()), "{msg}");
        if let Some(key) = key {
            assert!(msg.contains(&format!("`{key}`")), "{msg}");
        } else {
            assert!(msg.contains("truncated JSON"), "{msg}");
        }
        assert!(!run.output.exists());
    }
    // A broken deps.json beside the input is an error naming it.
    let run = setup(RECORDS, Some("{\"tasks\": []}"), None);
    let err = convert(&ConvertOptions {
        input: &run.input,
        output: Some(&run.output),
        deps: None,
        func_names: None,
        kernel_config: None,
    })
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("deps.json") && msg.contains("`tensors`"),
        "{msg}"
    );
}

#[test]
fn names_from_kernel_config_and_default_output_name() {
    let run = setup(RECORDS, Some(DEPS), None);
    let dir = run.input.parent().unwrap();
    let kc = dir.join("kernel_config.py");
    std::fs::write(&kc, "KERNELS = [{\"func_id\": 0, \"name\": \"from_kc\"}]\n").unwrap();
    let report = convert(&ConvertOptions {
        input: &run.input,
        output: None,
        deps: None,
        func_names: None,
        kernel_config: Some(&kc),
    })
    .unwrap();
    let name = report
        .output
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        name.starts_with("merged_swimlane_")
            && name.ends_with(".json")
            && name.len() == "merged_swimlane_20260101_000000.json".len(),
        "{name}"
    );
    assert_eq!(report.output.parent(), Some(dir));
    let trace: Value = serde_json::from_slice(&std::fs::read(&report.output).unwrap()).unwrap();
    assert!(names_of(&trace, 4, "X").contains(&"from_kc(t0)".to_string()));
}

#[test]
fn utc_stamps() {
    assert_eq!(utc_stamp(0), "19700101_000000");
    assert_eq!(utc_stamp(1_700_000_000), "20231114_221320");
    assert_eq!(utc_stamp(951_782_400), "20000229_000000");
}

#[test]
fn microsecond_text() {
    let mut s = String::new();
    for ns in [0, 1840, 3000, 1, 10, 120_450] {
        push_us(&mut s, ns);
        s.push(' ');
    }
    assert_eq!(s, "0.0 1.84 3.0 0.001 0.01 120.45 ");
}

#[test]
fn lanes_nest_and_split() {
    let mut items = vec![(0, 10, 0), (2, 5, 1), (5, 12, 2), (10, 20, 3)];
    let mut got = vec![usize::MAX; 4];
    let n = assign_lanes(&mut items, |id, k| got[id] = k);
    // (2,5) nests in (0,10); (5,12) partly overlaps (0,10): a second lane;
    // (10,20) touches (0,10) but overlaps (5,12): back to lane 0.
    assert_eq!(got, [0, 0, 1, 0]);
    assert_eq!(n, 2);
    let p = Placed {
        tid: 0,
        ts: 100,
        end: 200,
    };
    let q = Placed {
        tid: 0,
        ts: 50,
        end: 120,
    };
    // A flow from p's end to q's start would go back in time; it is moved.
    let (a, b) = flow_points(&p, 190, &q, 60).unwrap();
    assert!(a <= b && a >= 100 && b < 120, "{a} {b}");
    let early = Placed {
        tid: 0,
        ts: 0,
        end: 20,
    };
    assert_eq!(flow_points(&p, 190, &early, 5), None);
}

/// Flow ends that Simpler's converter binds to a slice carry `bind_id`, and
/// only those: both ends of a dependency, the source of a `complete` (the bar
/// it leaves), the Scheduler View end of a `dispatch`. Each names the id of a
/// slice on the same track that holds the end's time.
#[test]
fn flow_ends_carry_bind_id_where_simpler_writes_one() {
    let run = setup(RECORDS, Some(DEPS), None);
    let (_, trace) = convert_ok(&run);
    let evs = events(&trace);
    let mut seen = std::collections::BTreeSet::new();
    for e in evs.iter().filter(|e| e["cat"] == "flow") {
        let (name, ph, pid) = (
            e["name"].as_str().unwrap(),
            e["ph"].as_str().unwrap(),
            e["pid"].as_u64().unwrap(),
        );
        let want = match (name, ph) {
            ("dependency" | "hb_violation", _) => true,
            ("complete", "s") => true,
            ("dispatch", "f") => pid == PID_SCHED_VIEW as u64,
            _ => false,
        };
        assert_eq!(e.get("bind_id").is_some(), want, "{e}");
        if let Some(id) = e.get("bind_id") {
            let ts = e["ts"].as_f64().unwrap();
            let bound = evs.iter().any(|x| {
                x["ph"] == "X"
                    && x.get("id") == Some(id)
                    && x["pid"] == e["pid"]
                    && x["tid"] == e["tid"]
                    && x["ts"].as_f64().unwrap() <= ts + 1e-9
                    && ts <= x["ts"].as_f64().unwrap() + x["dur"].as_f64().unwrap() + 1e-9
            });
            assert!(bound, "bind_id {id} names no slice holding {e}");
            seen.insert((name.to_string(), ph.to_string()));
        }
    }
    for k in [("complete", "s"), ("dispatch", "f"), ("dependency", "s")] {
        assert!(
            seen.contains(&(k.0.to_string(), k.1.to_string())),
            "no bound {k:?}"
        );
    }
}

/// Every complete / dispatch phase gives one ready-queue sample at its end,
/// repeats included (Simpler writes them all).
#[test]
fn ready_queue_keeps_repeated_samples() {
    // The second dispatch leaves the queue as the complete before it did.
    let records = RECORDS.replace(
        r#""loop_iter": 3, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [1,0,0], "shared_at_end": [0,0,0]"#,
        r#""loop_iter": 3, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [1,0,0], "shared_at_end": [1,0,0]"#,
    );
    assert_ne!(records, RECORDS);
    let run = setup(&records, Some(DEPS), None);
    let (_, trace) = convert_ok(&run);
    let samples: Vec<(f64, i64)> = events(&trace)
        .iter()
        .filter(|e| e["name"] == "shared_ready_queue" && e["ph"] == "C")
        .map(|e| {
            (
                e["ts"].as_f64().unwrap(),
                e["args"]["AIC"].as_i64().unwrap() * 10 + e["args"]["AIV"].as_i64().unwrap(),
            )
        })
        .collect();
    // Six phases: ends 985, 1065, 1085, 1425, 1435, 1525 cycles at 50 MHz.
    let values: Vec<i64> = samples.iter().map(|s| s.1).collect();
    assert_eq!(values, [0, 10, 10, 1, 0, 0], "{samples:?}");
}

/// A task's fanin list is in Simpler's order: predecessors by their first
/// edge as a predecessor, not by the order of the edges into the task.
#[test]
fn fanin_lists_follow_the_predecessors_first_edges() {
    let id = |n: u32| TaskId::new(1, n);
    // B -> X first, then A -> C, B -> C: C's edges name A first, but B was a
    // predecessor first.
    let (a, b, c, x) = (id(1), id(2), id(3), id(4));
    let g = GraphCsr::build(&[(b, x), (a, c), (b, c)]);
    let preds: Vec<TaskId> = g
        .preds(g.node(c).unwrap())
        .iter()
        .map(|&k| g.ids[k])
        .collect();
    assert_eq!(preds, [b, a]);
    let succs: Vec<TaskId> = g
        .succs(g.node(b).unwrap())
        .iter()
        .map(|&k| g.ids[k])
        .collect();
    assert_eq!(succs, [x, c]);
}

/// A predicted-time swimlane: two tasks (ticks at 50 MHz: 20 ns each) and their pipes.
const PREDICTED: &str = r#"{
  "chip_swimlane_level": 1,
  "metadata": {"clock_freq_hz": 50000000, "num_cores": 2, "core_types": ["aic", "aiv"], "timing": "predicted"},
  "aicore_tasks": [[0, 4294967296, 1, 100, 150, 0], [1, 4294967297, 1, 150, 170, 0]],
  "aicpu_tasks": []
}"#;

const PIPES: &str = r#"{"timing": "predicted", "core_clock_hz": 1850000000, "subtasks": [
{"task": 4294967296, "core": 0, "start_cycle": 0, "cycles": 1000, "spans": [["MTE2", 0, 400], ["CUBE", 400, 900], ["FIXP", 900, 1000]]},
{"task": 4294967297, "core": 1, "start_cycle": 1000, "cycles": 400, "spans": [["VEC", 100, 300], ["WARP", 0, 1]]},
{"task": 99, "core": 1, "start_cycle": 0, "cycles": 10, "spans": [["VEC", 0, 10]]}
]}"#;

#[test]
fn predicted_pipes_become_core_tracks_inside_their_tasks() {
    let run = setup(PREDICTED, None, None);
    let dir = run.input.parent().unwrap().to_path_buf();
    std::fs::write(dir.join(PIPES_FILE_NAME), PIPES).unwrap();
    let (report, trace) = convert_ok(&run);
    assert_eq!(
        report.pipes.as_deref(),
        Some(dir.join(PIPES_FILE_NAME).as_path())
    );
    assert_eq!(report.n_pipe_slices, 4);
    let w = report.warnings.join("\n");
    assert!(
        w.contains("1 subtask(s) match no swimlane row") && w.contains("WARP"),
        "{w}"
    );
    let pid = u64::from(PID_PIPES);
    let mut tracks: Vec<(u64, String)> = thread_names(&trace)
        .into_iter()
        .filter(|t| t.0 == pid)
        .map(|t| (t.1, t.2))
        .collect();
    tracks.sort();
    let names: Vec<&str> = tracks.iter().map(|t| t.1.as_str()).collect();
    assert_eq!(
        names,
        ["AIC_0 MTE2", "AIC_0 CUBE", "AIC_0 FIXP", "AIV_1 VEC"]
    );
    assert!(names_of(&trace, 0, "M").is_empty());
    // Scaled into the bar (the trace starts at the first start): task 0 runs 0..1 µs for
    // 1000 cycles, task 1 1.0..1.4 µs for 400.
    let slices: Vec<(String, f64, f64)> = events(&trace)
        .iter()
        .filter(|e| e["pid"] == pid && e["ph"] == "X")
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            (name, e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap())
        })
        .collect();
    assert_eq!(
        slices,
        [
            ("MTE2".to_string(), 0.0, 0.4),
            ("CUBE".to_string(), 0.4, 0.5),
            ("FIXP".to_string(), 0.9, 0.1),
            ("VEC".to_string(), 1.1, 0.2),
        ]
    );

    // A pipe file of another run (by the provenance sidecar) is not drawn.
    std::fs::write(
        dir.join(pto_dfx::provenance::FILE_NAME),
        r#"{"version": 1, "files": {
          "chip_swimlane_records.json": {"program": "p", "run": "2"},
          "predicted_pipes.json": {"program": "p", "run": "1"}}}"#,
    )
    .unwrap();
    let (report, trace) = convert_ok(&run);
    assert_eq!((report.pipes, report.n_pipe_slices), (None, 0));
    assert!(report
        .warnings
        .iter()
        .any(|w| w.contains("comes from another run")));
    assert!(thread_names(&trace).iter().all(|t| t.0 != pid));
}

/// A task dispatched while its submit still runs (the submit ends at cycle 1050, the
/// dispatch is at 990; the trace starts at the submit, 400): Simpler 6ebaf77 starts the `submit→dispatch` flow at the
/// submit's end, after the flow's own end (Perfetto drops such a backward arrow); ours
/// starts it at the dispatch, inside the submit slice. Listed in COMPATIBILITY (the
/// issue's "flows that start at dispatch instead of after it"; 6311 of 100,352 on the
/// 100k-task comparison). The scheduler lane carries no `pop_hit` / `pop_miss` args, as
/// Simpler's.
#[test]
fn a_flow_from_a_submit_that_ends_after_the_dispatch_starts_at_the_dispatch() {
    let records = r#"{"chip_swimlane_level": 4, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 1, "core_types": ["aiv"], "core_to_thread": [0]},
      "aicore_tasks": [[0, 0, 1, 1000, 1100, 0]], "aicpu_tasks": [[0, 1, 990, 1110]],
      "aicpu_scheduler_phases": [[{"kind": "dispatch", "start_cycles": 980, "end_cycles": 995, "loop_iter": 1, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 2, "shared_at_start": [0,1,0], "shared_at_end": [0,0,0]}]],
      "aicpu_orchestrator_phases": [[{"submit_idx": 0, "task_id": 0, "start_cycles": 400, "end_cycles": 1050}]]}"#;
    let run = setup(records, None, None);
    let (_, trace) = convert_ok(&run);
    let flows = flow_ends(&trace, "submit\u{2192}dispatch");
    assert_eq!(flows.len(), 1, "{flows:?}");
    let ((_, _, start), (_, _, end)) = flows[0];
    assert_eq!((start, end), (0.59, 0.59), "{flows:?}");
    let dispatch = events(&trace)
        .iter()
        .find(|e| e["cat"] == "scheduler" && e["name"] == "dispatch(1)")
        .unwrap_or_else(|| panic!("no dispatch slice"));
    assert!(
        dispatch["args"].get("pop_hit").is_none() && dispatch["args"].get("pop_miss").is_none(),
        "{dispatch}"
    );
}
