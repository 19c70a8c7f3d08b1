//! `scope_stats.jsonl`: golden layout, derived metrics, pairing, damage.

use std::path::Path;

use pto_dfx::scope_stats::{
    self, pair_scopes, RingMetrics, ScopePair, ScopePhase, ScopeRecord, ScopeResource,
    ScopeStatsFile, ScopeStatsMeta,
};
use pto_dfx::ReadErrorKind;

use crate::common::*;

fn record(site: &str, phase: ScopePhase, depth: i32, values: [i64; 7]) -> ScopeRecord {
    let [tw_start, tw_end, heap_start, heap_end, dp_start, dp_end, tensormap] = values;
    ScopeRecord {
        buf_seq: None,
        run_epoch: None,
        site: site.into(),
        phase,
        depth,
        ring: depth.min(3),
        task_window_start: tw_start as i32,
        task_window_end: tw_end as i32,
        heap_start: heap_start as u64,
        heap_end: heap_end as u64,
        dep_pool_start: dp_start as i32,
        dep_pool_end: dp_end as i32,
        tensormap: tensormap as i32,
    }
}

/// The records of the reference example (§6.2).
fn example() -> ScopeStatsFile {
    let mut meta = ScopeStatsMeta::new([16384; 4], [268_435_456; 4], [16384; 4], 65536);
    meta.total = 4;
    let site = "example_orchestration.cpp:77";
    ScopeStatsFile {
        meta,
        records: vec![
            record(site, ScopePhase::Begin, 1, [0, 0, 0, 0, 1, 1, 0]),
            record(site, ScopePhase::End, 1, [0, 4, 0, 8192, 1, 6, 5]),
        ],
    }
}

#[test]
fn golden_example_reads_and_renders_byte_exact() {
    let path = data(scope_stats::FILE_NAME);
    let loaded = scope_stats::read(&path).unwrap();
    assert_eq!(loaded.value, example());
    // The documented example omits the root scope's two records.
    assert_eq!(problem_keys(&loaded.problems), vec!["records"]);
    assert_eq!(
        loaded.problems[0].message,
        "2 records read but the metadata says total 4 − dropped 0 = 4"
    );
    assert_eq!(
        scope_stats::render(&example()),
        golden_text(scope_stats::FILE_NAME)
    );
}

#[test]
fn derived_metrics_follow_the_report_formulas() {
    let file = example();
    let (begin, end) = (&file.records[0], &file.records[1]);
    let m = |r| ScopeResource::metrics(r, begin, end);
    let same = |v| {
        Some(RingMetrics {
            scope_high_water: v,
            real_occupancy: v,
            scope_alloc: v,
        })
    };
    assert_eq!(m(ScopeResource::TaskWindow), same(4));
    assert_eq!(m(ScopeResource::Heap), same(8192));
    assert_eq!(m(ScopeResource::DepPool), same(5));
    assert_eq!(m(ScopeResource::Tensormap), None);
    assert_eq!(ScopeResource::Tensormap.risk(begin, end), 5);

    // Distinct values for each formula.
    let begin = record("a.cpp:1", ScopePhase::Begin, 2, [2, 5, 100, 300, 10, 12, 1]);
    let end = record("a.cpp:1", ScopePhase::End, 2, [4, 9, 250, 700, 11, 20, 7]);
    assert_eq!(
        ScopeResource::TaskWindow.metrics(&begin, &end),
        Some(RingMetrics {
            scope_high_water: 9 - 2,
            real_occupancy: 9 - 4,
            scope_alloc: 9 - 5,
        })
    );
    assert_eq!(
        ScopeResource::Heap.metrics(&begin, &end),
        Some(RingMetrics {
            scope_high_water: 600,
            real_occupancy: 450,
            scope_alloc: 400,
        })
    );
    assert_eq!(ScopeResource::DepPool.risk(&begin, &end), 10);
    assert_eq!(ScopeResource::Tensormap.risk(&begin, &end), 7);

    let meta = &file.meta;
    assert_eq!(meta.capacity(ScopeResource::Heap, 1), Some(268_435_456));
    assert_eq!(meta.capacity(ScopeResource::TaskWindow, 3), Some(16384));
    assert_eq!(meta.capacity(ScopeResource::DepPool, 4), None);
    assert_eq!(meta.capacity(ScopeResource::Tensormap, 9), Some(65536));
}

#[test]
fn scopes_pair_innermost_first() {
    use ScopePhase::{Begin, End};
    let z = [0; 7];
    let records = vec![
        record("root.cpp:1", Begin, 0, z),
        record("a.cpp:5", Begin, 1, z),
        record("b.cpp:9", Begin, 2, z),
        record("b.cpp:9", End, 2, z),
        record("c.cpp:3", End, 2, z),
        record("a.cpp:5", End, 1, z),
        record("d.cpp:4", Begin, 1, z),
    ];
    let (pairs, problems) = pair_scopes(&records);
    assert_eq!(
        pairs,
        vec![
            ScopePair { begin: 2, end: 3 },
            ScopePair { begin: 1, end: 5 }
        ]
    );
    assert_eq!(
        problem_keys(&problems),
        vec!["records[4]", "records[0]", "records[6]"]
    );
    assert_eq!(
        problems[0].message,
        "end at c.cpp:3 (depth 2) has no matching begin"
    );
}

#[test]
fn write_then_read_round_trips() {
    let mut file = example();
    file.meta.total = 2;
    file.meta.fatal = true;
    file.meta.heap_max = [1, 2, 3, u64::MAX];
    file.records
        .push(record("x.cpp:2", ScopePhase::Begin, 5, [0; 7]));
    file.meta.total = 3;
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join(scope_stats::DIR_NAME)
        .join(scope_stats::FILE_NAME);
    scope_stats::write(&path, &file).unwrap();
    let loaded = scope_stats::read(&path).unwrap();
    assert_eq!(loaded.problems, vec![]);
    assert_eq!(loaded.value, file);
    assert_eq!(loaded.value.records[2].ring, 3);
}

#[test]
fn damaged_lines_are_skipped_with_problems() {
    let golden = golden_text(scope_stats::FILE_NAME);
    let mut lines: Vec<&str> = golden.lines().collect();
    // Widened arrays as the doc shows them (2 entries).
    let meta = lines[0]
        .replace("[16384, 16384, 16384, 16384]", "[16384, 16384]")
        .replace("\"total\": 4", "\"total\": 3");
    lines[0] = &meta;
    let bad_phase = lines[1].replace("\"begin\"", "\"middle\"");
    let cut = &lines[2][..lines[2].len() - 20];
    let wrong_ring = lines[1].replace("\"ring\": 1", "\"ring\": 7");
    let text = [
        lines[0],
        lines[1],
        bad_phase.as_str(),
        &wrong_ring,
        cut,
        lines[2],
    ]
    .join("\n");
    let loaded = scope_stats::parse(text.as_bytes(), Path::new("s.jsonl")).unwrap();
    assert_eq!(loaded.value.records.len(), 3);
    assert_eq!(loaded.value.meta.task_window_max, [16384, 16384, 0, 0]);
    assert_eq!(
        problem_keys(&loaded.problems),
        vec![
            "line 1: task_window_max",
            "line 1: dep_pool_max",
            "line 3: phase",
            "line 4: ring",
            "line 5",
        ]
    );
    assert!(loaded.problems[4]
        .message
        .starts_with("truncated JSON (EOF while parsing"));
}

#[test]
fn malformed_metadata_is_an_error_naming_file_and_key() {
    let p = Path::new("/o/scope_stats/scope_stats.jsonl");
    let err = scope_stats::parse(b"\n", p).unwrap_err();
    assert!(matches!(err.kind, ReadErrorKind::Empty { .. }));
    assert_names(&err, p, None);

    let golden = golden_text(scope_stats::FILE_NAME);
    let first = golden.lines().next().unwrap();
    let err = scope_stats::parse(&first.as_bytes()[..50], p).unwrap_err();
    assert_truncated(&err, p);

    let no_tensormap = first.replace(", \"tensormap_max\": 65536", "");
    let err = scope_stats::parse(no_tensormap.as_bytes(), p).unwrap_err();
    assert_missing(&err, p, "line 1: tensormap_max");

    let wrong = first.replace("\"fatal\": false", "\"fatal\": 0");
    let err = scope_stats::parse(wrong.as_bytes(), p).unwrap_err();
    assert_wrong_type(&err, p, "line 1: fatal");
}
