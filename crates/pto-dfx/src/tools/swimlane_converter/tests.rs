//! Tests of the converter: small records in, a trace the checker accepts out.

use std::path::PathBuf;

use serde_json::Value;

use super::*;
use crate::tools::trace_check;

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

    // The ready-queue counter only records changes.
    let queue: Vec<&Value> = events(&trace).iter().filter(|e| e["ph"] == "C").collect();
    assert_eq!(queue.len(), 5, "{queue:?}");

    let text = report.summary.render();
    assert!(text.contains("ADD"), "{text}");
    assert!(text.contains("TOTAL"), "{text}");
    assert!(text.contains("Total Test Time: "), "{text}");
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
    assert!(text.contains("AICore Observed Span: 0.200 us"), "{text}");
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
    assert!(a <= b && a > 100 && b < 120, "{a} {b}");
    let early = Placed {
        tid: 0,
        ts: 0,
        end: 20,
    };
    assert_eq!(flow_points(&p, 190, &early, 5), None);
}
