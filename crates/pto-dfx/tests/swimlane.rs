//! `chip_swimlane_records.json`: golden layout, round trips, damage.

use std::path::Path;

use pto_dfx::swimlane::{
    self, AicoreTaskRow, AicpuTaskRow, ClockAnchorError, ClockAnchorSample, ClockAnchors,
    HostCapture, HostOrchestrationMetadata, HostSubmitRecord, HostUploadRecord, OrchPhaseRecord,
    PopCounts, SchedPhaseKind, SchedPhaseRecord, SwimlaneFile, SwimlaneLevel, SwimlaneMetadata,
};
use pto_dfx::{CoreType, DfxSchema, ReadErrorKind, TaskId};

use crate::common::*;

fn aicore(core: u32, token: u64, reg: u32, start: u64, end: u64, r2s: u32) -> AicoreTaskRow {
    AicoreTaskRow {
        run_epoch: None,
        core_id: core,
        task_token: TaskId(token),
        reg_task_id: reg,
        start_cycles: start,
        end_cycles: end,
        receive_to_start_cycles: r2s,
    }
}

fn aicpu(core: u32, reg: u32, dispatch: u64, finish: u64) -> AicpuTaskRow {
    AicpuTaskRow {
        run_epoch: None,
        core_id: core,
        reg_task_id: reg,
        dispatch_cycles: dispatch,
        finish_cycles: finish,
    }
}

/// The records of the reference example (§2.5).
fn example() -> SwimlaneFile {
    SwimlaneFile {
        level: SwimlaneLevel::OrchPhases,
        metadata: SwimlaneMetadata {
            host_clock_domain_id: None,
            runtime: None,
            clock_freq_hz: 50_000_000,
            num_cores: 2,
            core_types: vec![CoreType::Aic, CoreType::Aiv],
            host: None,
            clock_anchors: None,
            core_to_thread: vec![0, 0],
            timing: None,
        },
        aicore_tasks: vec![
            aicore(0, 4_294_967_296, 1, 1100, 1400, 10),
            aicore(1, 0, 1, 1000, 1050, 8),
            aicore(1, 4_294_967_297, 2, 1450, 1500, 8),
        ],
        aicpu_tasks: vec![
            aicpu(0, 1, 1080, 1420),
            aicpu(1, 1, 980, 1060),
            aicpu(1, 2, 1430, 1520),
        ],
        scheduler_phases: Some(vec![vec![
            SchedPhaseRecord {
                run_epoch: None,
                kind: SchedPhaseKind::Dispatch,
                start_cycles: 975,
                end_cycles: 985,
                loop_iter: 1,
                tasks_processed: 1,
                pop: Some(PopCounts { hit: 1, miss: 0 }),
                task_id: None,
                shared_at_start: Some([0, 1, 0]),
                shared_at_end: Some([0, 0, 0]),
            },
            SchedPhaseRecord {
                run_epoch: None,
                kind: SchedPhaseKind::Complete,
                start_cycles: 1055,
                end_cycles: 1065,
                loop_iter: 2,
                tasks_processed: 1,
                pop: None,
                task_id: None,
                shared_at_start: Some([1, 0, 0]),
                shared_at_end: Some([1, 0, 0]),
            },
        ]]),
        orchestrator_phases: Some(vec![vec![OrchPhaseRecord {
            run_epoch: None,
            submit_idx: 0,
            task_id: TaskId(0),
            start_cycles: 900,
            end_cycles: 920,
        }]]),
        host_orchestrator_phases: None,
        host_device_uploads: None,
    }
}

/// A host-orchestrated level-3 file using every optional part.
fn host_example() -> SwimlaneFile {
    SwimlaneFile {
        level: SwimlaneLevel::SchedPhases,
        metadata: SwimlaneMetadata {
            host_clock_domain_id: None,
            runtime: None,
            clock_freq_hz: 50_000_000,
            num_cores: 3,
            core_types: vec![CoreType::Aic, CoreType::Aiv, CoreType::Aiv],
            host: Some(HostOrchestrationMetadata::simpler_defaults(
                1000,
                Some(HostCapture {
                    status: "complete".into(),
                    expected_records: 2,
                    recorded_records: 2,
                    pool_records: 2,
                    dropped_records: 0,
                    error: None,
                }),
            )),
            clock_anchors: Some(ClockAnchors {
                schema_version: 1,
                provider: "acl".into(),
                device_timestamp_unit: "syscnt_cycles".into(),
                raw_device_timestamp_unit: "syscnt_cycles".into(),
                samples_per_position: 3,
                samples: vec![
                    ClockAnchorSample {
                        position: "pre_host_orchestration".into(),
                        sample_idx: 0,
                        host_before_ns: 900,
                        raw_device_timestamp: 40,
                        device_cycles: 40,
                        host_after_ns: 940,
                        rtt_ns: 40,
                        uncertainty_ns: 20,
                        error: None,
                    },
                    ClockAnchorSample {
                        position: "post_device_execution".into(),
                        sample_idx: 1,
                        host_before_ns: 5000,
                        raw_device_timestamp: 0,
                        device_cycles: 0,
                        host_after_ns: 5001,
                        rtt_ns: 1,
                        uncertainty_ns: 1,
                        error: Some(ClockAnchorError {
                            stage: "get_timestamp".into(),
                            code: -7,
                        }),
                    },
                ],
            }),
            core_to_thread: vec![0, 1, -1],
            timing: None,
        },
        aicore_tasks: vec![aicore(1, 0, 1, 100, 200, 3)],
        aicpu_tasks: vec![],
        scheduler_phases: Some(vec![
            vec![SchedPhaseRecord {
                run_epoch: None,
                kind: SchedPhaseKind::GraphPrepare,
                start_cycles: 10,
                end_cycles: 20,
                loop_iter: 0,
                tasks_processed: 0,
                pop: None,
                task_id: Some(TaskId::new(1, 1024)),
                shared_at_start: Some([-1, 0, 3]),
                shared_at_end: Some([0, 0, 0]),
            }],
            vec![],
        ]),
        orchestrator_phases: None,
        host_orchestrator_phases: Some(vec![
            HostSubmitRecord {
                submit_idx: 0,
                task_id: TaskId(0),
                start_host_ns: 1000,
                end_host_ns: 1100,
            },
            HostSubmitRecord {
                submit_idx: 1,
                task_id: TaskId(1),
                start_host_ns: 1200,
                end_host_ns: 1300,
            },
        ]),
        host_device_uploads: Some(vec![HostUploadRecord {
            phase: "graph_upload".into(),
            start_host_ns: 1400,
            end_host_ns: 1500,
            detail: 4096,
        }]),
    }
}

/// The golden file of [`host_example`]: the layout §2.2 and §2.4 describe (the reference
/// has no full host-mode example; one-line `host_capture` / `clock_anchors` objects with
/// `", "` separators are our reading). `pto-dfx-view`'s pinned converter output reads it too.
pub(crate) const HOST_EXAMPLE_FILE: &str = "chip_swimlane_records_host.json";

#[test]
fn golden_example_reads_and_renders_byte_exact() {
    let path = data(swimlane::FILE_NAME);
    let loaded = swimlane::read(&path).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, example());
    assert_eq!(
        swimlane::render(&example()),
        golden_text(swimlane::FILE_NAME)
    );
}

#[test]
fn host_mode_layout_and_round_trip() {
    let text = golden_text(HOST_EXAMPLE_FILE);
    assert_eq!(swimlane::render(&host_example()), text);
    let loaded = swimlane::parse(text.as_bytes(), Path::new("h.json")).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, host_example());
}

#[test]
fn write_then_read_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    for (i, file) in [example(), host_example()].into_iter().enumerate() {
        let path = dir.path().join(format!("run{i}")).join(swimlane::FILE_NAME);
        swimlane::write(&path, &file).unwrap();
        let loaded = swimlane::read(&path).unwrap();
        assert_eq!(loaded.problems, vec![]);
        assert_eq!(loaded.value, file);
    }
}

/// A 2026-08 file (no `metadata.runtime`) whose rows and records carry `run_epoch` is read
/// with them; written back, it keeps them (the fuzzer found them dropped).
#[test]
fn epochs_in_a_2026_08_file_survive_a_round_trip() {
    let mut file = example();
    file.aicore_tasks[2].run_epoch = Some(8);
    for lane in file.orchestrator_phases.iter_mut().flatten() {
        lane[0].run_epoch = Some(3);
    }
    for lane in file.scheduler_phases.iter_mut().flatten() {
        lane[1].run_epoch = Some(5);
    }
    let text = swimlane::render(&file);
    assert!(!text.contains("\"runtime\""), "still a 2026-08 file");
    let loaded = swimlane::parse(text.as_bytes(), Path::new("x.json")).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, file);
    // Rows without one are written as before.
    assert_eq!(
        swimlane::render(&example()),
        golden_text(swimlane::FILE_NAME)
    );
}

#[test]
fn a_large_file_is_written_streamed_with_the_exact_bytes_of_render() {
    // Tens of thousands of rows and records: the writer spills its buffer many times on
    // the way and renders each large section in two halves on two threads.
    let mut file = example();
    let n = 40_000u64;
    file.aicore_tasks = (0..n)
        .map(|i| aicore((i % 2) as u32, i, i as u32, 1000 + i, 1100 + i, 8))
        .collect();
    file.aicpu_tasks = (0..n)
        .map(|i| aicpu((i % 2) as u32, i as u32, 990 + i, 1110 + i))
        .collect();
    let lane = file.scheduler_phases.as_ref().unwrap()[0].clone();
    let long: Vec<_> = (0..n as usize)
        .map(|i| lane[i % lane.len()].clone())
        .collect();
    file.scheduler_phases = Some(vec![long.clone(), long]);
    let dir = tempfile::tempdir().unwrap();
    for (k, file) in [file.clone(), file.with_schema(DfxSchema::V2026_09, 3)]
        .into_iter()
        .enumerate()
    {
        let path = dir.path().join(format!("{k}")).join(swimlane::FILE_NAME);
        swimlane::write(&path, &file).unwrap();
        let written = std::fs::read(&path).unwrap();
        assert!(written.len() > 1 << 20, "{} bytes", written.len());
        assert!(written == swimlane::render(&file).as_bytes());
        // The reader, which shares nothing with the writer, gets every row back in order.
        let loaded = swimlane::read(&path).unwrap();
        assert_eq!(loaded.problems, vec![]);
        assert_eq!(loaded.value, file, "{k}");
    }
}

#[test]
fn level_one_file_has_empty_aicpu_list_and_no_phases() {
    let mut file = example();
    file.level = SwimlaneLevel::AicoreTiming;
    file.aicore_tasks.truncate(1);
    file.aicpu_tasks.clear();
    file.scheduler_phases = None;
    file.orchestrator_phases = None;
    file.metadata.core_to_thread.clear();
    let text = swimlane::render(&file);
    assert_eq!(
        text,
        "{\n  \"chip_swimlane_level\": 1,\n  \"metadata\": {\n    \"clock_freq_hz\": 50000000,\n    \"num_cores\": 2,\n    \"core_types\": [\"aic\", \"aiv\"]\n  },\n  \"aicore_tasks\": [\n    [0, 4294967296, 1, 1100, 1400, 10]\n  ],\n  \"aicpu_tasks\": []\n}\n"
    );
    let loaded = swimlane::parse(text.as_bytes(), Path::new("x")).unwrap();
    assert_eq!(loaded.value, file);
}

#[test]
fn timing_key_is_written_after_core_types_and_read_back() {
    let mut file = example();
    file.metadata.timing = Some("predicted".to_string());
    let text = swimlane::render(&file);
    assert!(
        text.contains("\"core_types\": [\"aic\", \"aiv\"],\n    \"timing\": \"predicted\""),
        "{text}"
    );
    let loaded = swimlane::parse(text.as_bytes(), Path::new("x")).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, file);
    // A number where the name belongs: a problem, read as host time.
    let bad = text.replace("\"predicted\"", "7");
    let loaded = swimlane::parse(bad.as_bytes(), Path::new("x")).unwrap();
    assert_eq!(loaded.value.metadata.timing, None);
    assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
}

#[test]
fn archived_five_column_rows_and_legacy_phase_records_are_read() {
    let text = r#"{"chip_swimlane_level": 3, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 1, "core_types": ["aic"]},
        "aicore_tasks": [[0, 7, 1, 100, 200]], "aicpu_tasks": [[0, 1, 90, 210]],
        "aicpu_scheduler_phases": [[{"kind": "fanout", "start_cycles": 1, "end_cycles": 2, "loop_iter": 3, "tasks_processed": 4}]]}"#;
    let loaded = swimlane::parse(text.as_bytes(), Path::new("old.json")).unwrap();
    assert_eq!(loaded.problems, vec![]);
    let file = loaded.value;
    assert_eq!(file.aicore_tasks, vec![aicore(0, 7, 1, 100, 200, 0)]);
    let lanes = file.scheduler_phases.unwrap();
    let record = &lanes[0][0];
    assert_eq!(record.kind, SchedPhaseKind::Other("fanout".into()));
    assert_eq!((record.shared_at_start, record.shared_at_end), (None, None));
    assert!(file.metadata.core_to_thread.is_empty());
}

#[test]
fn damaged_rows_and_records_are_skipped_with_problems() {
    let text = r#"{"chip_swimlane_level": 4, "metadata": {"clock_freq_hz": 50000000, "core_types": ["aic", "vec"]},
        "aicore_tasks": [[0, 1, 1, 10, 20, 1], [0, 1, 2], [0, "x", 1, 1, 1, 1], [1, 2, 2, 30, 40, 2]],
        "aicpu_tasks": [[0, 1, 5, 25], [5000000000, 1, 1, 1]],
        "aicpu_scheduler_phases": [[{"kind": "dispatch", "start_cycles": 1}], {"not": "a lane"}],
        "aicpu_orchestrator_phases": [[{"submit_idx": 0, "task_id": 0, "start_cycles": 1, "end_cycles": 2}]],
        "host_orchestrator_phases": [[{"submit_idx": 0, "task_id": 0, "start_host_ns": 1, "end_host_ns": 2}]]}"#;
    let loaded = swimlane::parse(text.as_bytes(), Path::new("bad.json")).unwrap();
    let file = &loaded.value;
    assert_eq!(
        file.aicore_tasks,
        vec![aicore(0, 1, 1, 10, 20, 1), aicore(1, 2, 2, 30, 40, 2)]
    );
    assert_eq!(file.aicpu_tasks, vec![aicpu(0, 1, 5, 25)]);
    assert_eq!(file.scheduler_phases, Some(vec![vec![], vec![]]));
    assert_eq!(file.metadata.core_types, vec![CoreType::Aic, CoreType::Aiv]);
    assert_eq!(file.metadata.num_cores, 2);
    assert_eq!(
        problem_keys(&loaded.problems),
        vec![
            "metadata.core_types[1]",
            "metadata.num_cores",
            "aicore_tasks[1]",
            "aicore_tasks[2][1]",
            "aicpu_tasks[1]",
            "aicpu_scheduler_phases[0][0].end_cycles",
            "aicpu_scheduler_phases[1]",
            "aicpu_orchestrator_phases",
        ]
    );
    let text = loaded.problems[3].to_string();
    assert_eq!(
        text,
        "`aicore_tasks[2][1]`: should be an unsigned integer, found a string; skipped it"
    );
    assert!(loaded.problems[7].message.contains("mixed clock domains"));
}

#[test]
fn truncated_file_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(swimlane::FILE_NAME);
    let full = golden(swimlane::FILE_NAME);
    std::fs::write(&path, &full[..full.len() / 2]).unwrap();
    let err = swimlane::read(&path).unwrap_err();
    assert_truncated(&err, &path);
}

#[test]
fn bad_levels_are_errors_naming_the_key() {
    let path = Path::new("/runs/x/chip_swimlane_records.json");
    for level in ["0", "5", "-1", "\"4\"", "2.0"] {
        let text = format!(
            r#"{{"chip_swimlane_level": {level}, "metadata": {{"clock_freq_hz": 1}}, "aicore_tasks": [], "aicpu_tasks": []}}"#
        );
        let err = swimlane::parse(text.as_bytes(), path).unwrap_err();
        assert_invalid(&err, path, "chip_swimlane_level");
        assert!(err.to_string().contains("expected 1, 2, 3 or 4"), "{err}");
    }
}

#[test]
fn missing_and_mistyped_keys_are_errors_naming_the_key() {
    let path = Path::new("/runs/x/chip_swimlane_records.json");
    let parse = |text: &str| swimlane::parse(text.as_bytes(), path).unwrap_err();

    let err = parse(r#"{"metadata": {"clock_freq_hz": 1}, "aicore_tasks": [], "aicpu_tasks": []}"#);
    assert_missing(&err, path, "chip_swimlane_level");

    let err = parse(
        r#"{"chip_swimlane_level": 1, "metadata": {}, "aicore_tasks": [], "aicpu_tasks": []}"#,
    );
    assert_missing(&err, path, "metadata.clock_freq_hz");
    assert_eq!(
        err.to_string(),
        "cannot read /runs/x/chip_swimlane_records.json: missing key `metadata.clock_freq_hz`"
    );

    let err = parse(
        r#"{"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": 0}, "aicore_tasks": [], "aicpu_tasks": []}"#,
    );
    assert_invalid(&err, path, "metadata.clock_freq_hz");

    let err = parse(
        r#"{"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": "50MHz"}, "aicore_tasks": [], "aicpu_tasks": []}"#,
    );
    assert_wrong_type(&err, path, "metadata.clock_freq_hz");
    assert!(err
        .to_string()
        .ends_with("should be an unsigned integer, found a string"));

    let err = parse(
        r#"{"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": 1}, "aicore_tasks": {}, "aicpu_tasks": []}"#,
    );
    assert_wrong_type(&err, path, "aicore_tasks");

    let err = parse(
        r#"{"chip_swimlane_level": 1, "metadata": {"clock_freq_hz": 1}, "aicore_tasks": []}"#,
    );
    assert_missing(&err, path, "aicpu_tasks");

    let err = parse("[1, 2]");
    assert_wrong_type(&err, path, "(root)");
}

#[test]
fn unreadable_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.json");
    let err = swimlane::read(&path).unwrap_err();
    assert_names(&err, &path, None);
    assert!(matches!(err.kind, ReadErrorKind::Io { .. }));
}
