//! Hostile inputs: every reader's work is bounded.
//!
//! Files over the size limit are refused before they are read; nesting stops
//! at serde_json's recursion limit (an error naming the file, not a stack
//! overflow) on the careful readers and on the viewers' fast passes alike; a
//! manifest claiming huge payloads reads no more of `args.bin` than it holds;
//! a broadcast view cannot make a gather allocate without bound; unmatched
//! scope records pair in linear time, exactly as the old pairwise scan did.

use std::path::Path;
use std::time::{Duration, Instant};

use pto_dfx::args_bin::{self, ArgsBin, GatherError};
use pto_dfx::scope_stats::{self, pair_scopes, ScopePhase, ScopeRecord};
use pto_dfx::{
    args_dump, deps, name_map, pmu, swimlane, Problem, ReadError, ReadErrorKind, MAX_FILE_BYTES,
};
use pto_dfx_view::{load, swimlane_converter};

use crate::common::{assert_names, data};

type Reader = fn(&Path) -> Result<(), ReadError>;

/// Every reader of a whole file, by the file name it is usually given.
const READERS: [(&str, Reader); 11] = [
    ("chip_swimlane_records.json", |p| {
        swimlane::read(p).map(|_| ())
    }),
    ("chip_swimlane_records.json", |p| {
        load::load_swimlane(p).map(|_| ())
    }),
    ("deps.json", |p| deps::read(p).map(|_| ())),
    ("deps.json", |p| load::load_graph(p).map(|_| ())),
    ("args_dump.json", |p| args_dump::read(p).map(|_| ())),
    ("args.bin", |p| ArgsBin::read(p).map(|_| ())),
    ("pmu.csv", |p| pmu::read(p).map(|_| ())),
    ("scope_stats.jsonl", |p| scope_stats::read(p).map(|_| ())),
    ("name_map_x.json", |p| name_map::read(p).map(|_| ())),
    ("chip_swimlane_records.bin", |p| {
        pto_dfx::compact::swimlane::read(p)
            .map(|_| ())
            .map_err(ReadError::from)
    }),
    ("deps.bin", |p| {
        pto_dfx::compact::deps::read(p)
            .map(|_| ())
            .map_err(ReadError::from)
    }),
];

fn assert_too_large(err: &ReadError, path: &Path, len: u64, limit: u64) {
    let text = assert_names(err, path, None);
    assert!(
        matches!(err.kind, ReadErrorKind::TooLarge { len: l, limit: m } if l == len && m == limit),
        "{text}"
    );
}

#[test]
fn oversized_files_are_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    for (name, read) in READERS {
        // A sparse file: nothing is written, and nothing may be read.
        let path = dir.path().join(name);
        std::fs::File::create(&path)
            .unwrap()
            .set_len(MAX_FILE_BYTES + 1)
            .unwrap();
        let start = Instant::now();
        let err = read(&path).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(5), "{name} read it");
        assert_too_large(&err, &path, MAX_FILE_BYTES + 1, MAX_FILE_BYTES);
        assert_eq!(
            err.to_string(),
            format!("cannot read {}: the file is 4294967297 bytes, more than the 4 GiB a DFX reader takes; it is not a file a run wrote, or the run was far larger than the viewers handle (record fewer tasks)", path.display())
        );
    }
    let bin = dir.path().join("args.bin");
    std::fs::File::create(&bin)
        .unwrap()
        .set_len(args_bin::MAX_BIN_BYTES + 1)
        .unwrap();
    let err = ArgsBin::read_for(&bin, &[]).unwrap_err();
    assert_too_large(
        &err,
        &bin,
        args_bin::MAX_BIN_BYTES + 1,
        args_bin::MAX_BIN_BYTES,
    );

    // The viewers report the same error.
    let input = dir.path().join("chip_swimlane_records.json");
    let err = swimlane_converter::convert(&swimlane_converter::ConvertOptions {
        input: &input,
        output: Some(&dir.path().join("out.json")),
        deps: None,
        func_names: None,
        kernel_config: None,
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("bytes, more than the 4 GiB a DFX reader takes"),
        "{err}"
    );
}

fn assert_recursion_limit(err: &ReadError, path: &Path) {
    let text = assert_names(err, path, None);
    assert!(
        matches!(
            err.kind,
            ReadErrorKind::Json {
                truncated: false,
                ..
            }
        ),
        "{text}"
    );
    assert!(text.contains("recursion limit exceeded"), "{text}");
}

#[test]
fn deep_nesting_is_an_error_on_every_reader_path() {
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let p = Path::new("x.json");
    // The careful readers, nesting where a value is expected.
    let swimlane_text = format!(
        r#"{{"chip_swimlane_level": 1, "metadata": {{"clock_freq_hz": 1, "num_cores": 0, "core_types": []}}, "aicore_tasks": {deep}, "aicpu_tasks": []}}"#
    );
    assert_recursion_limit(
        &swimlane::parse(swimlane_text.as_bytes(), p).unwrap_err(),
        p,
    );
    // The fast passes skip some values unread (`IgnoredAny`): nesting there too.
    let ignored = swimlane_text.replace(&deep, "[]").replace(
        "\"aicpu_tasks\": []",
        &format!("\"aicpu_tasks\": [], \"host_device_uploads\": {deep}"),
    );
    assert!(load::fast_swimlane(ignored.as_bytes()).is_none());
    assert_recursion_limit(&load::parse_swimlane(ignored.as_bytes(), p).unwrap_err(), p);
    let deps_text = format!(
        r#"{{"tasks":[{{"task_id":"0","scope":"auto","kernel_ids":[-1,0,-1],"block_num":1,"args":[{deep}]}}],"tensors":[],"edges":[]}}"#
    );
    assert!(load::fast_graph(deps_text.as_bytes()).is_none());
    assert_recursion_limit(&load::parse_graph(deps_text.as_bytes(), p).unwrap_err(), p);
    assert_recursion_limit(&deps::parse(deps_text.as_bytes(), p).unwrap_err(), p);
    let manifest = format!(r#"{{"dump_args_level": 1, "args": {deep}}}"#);
    assert_recursion_limit(&args_dump::parse(manifest.as_bytes(), p).unwrap_err(), p);
    let names = format!(r#"{{"level": 2, "callable_id_to_name": {{"0": {deep}}}}}"#);
    assert_recursion_limit(&name_map::parse(names.as_bytes(), p).unwrap_err(), p);
    // scope_stats.jsonl: a deep metadata line is an error, a deep record line a skipped line.
    assert_recursion_limit(&scope_stats::parse(deep.as_bytes(), p).unwrap_err(), p);
    let meta = std::fs::read_to_string(data("scope_stats.jsonl")).unwrap();
    let meta_line = meta.lines().next().unwrap();
    let loaded = scope_stats::parse(format!("{meta_line}\n{deep}\n").as_bytes(), p).unwrap();
    assert!(
        loaded.problems[0]
            .message
            .contains("recursion limit exceeded"),
        "{:?}",
        loaded.problems
    );
}

#[test]
fn payload_claims_read_no_more_than_the_file_holds() {
    let mut manifest = args_dump::read(&data("args_dump.json")).unwrap().value;
    let bin_path = data("args.bin");
    let len = std::fs::metadata(&bin_path).unwrap().len();
    manifest.args[0].bin_offset = 0;
    manifest.args[0].bin_size = u64::MAX;
    manifest.args[1].bin_offset = 1 << 63;
    manifest.args[1].bin_size = 1 << 63;
    let bin = ArgsBin::read_for(&bin_path, &manifest.args).unwrap();
    assert_eq!(bin.bytes.len() as u64, len);
    let problems = bin.check(&manifest.args);
    assert_eq!(
        problems.iter().map(|p| p.key.as_str()).collect::<Vec<_>>(),
        ["args[0]", "args[1]"]
    );
    // Only what the entries reach is read.
    manifest.args[0].bin_size = 4;
    manifest.args[1].bin_size = 0;
    manifest.args.truncate(2);
    let bin = ArgsBin::read_for(&bin_path, &manifest.args).unwrap();
    assert_eq!(bin.bytes.len(), 4);
    assert_eq!(bin.check(&manifest.args), Vec::<Problem>::new());
}

#[test]
fn broadcast_views_cannot_allocate_without_bound() {
    // One byte of storage, 2^62 logical bytes through a zero stride.
    assert_eq!(
        args_bin::gather_logical(&[7], 1, &[1 << 62], &[0], 0),
        Err(GatherError::TooLarge { bytes: 1 << 62 })
    );
    // A small broadcast still gathers.
    assert_eq!(
        args_bin::gather_logical(&[7], 1, &[3], &[0], 0).unwrap(),
        [7, 7, 7]
    );
}

fn record(site: &str, phase: ScopePhase, depth: i32) -> ScopeRecord {
    ScopeRecord {
        buf_seq: None,
        run_epoch: None,
        site: site.to_string(),
        phase,
        depth,
        ring: depth.min(3),
        task_window_start: 0,
        task_window_end: 0,
        heap_start: 0,
        heap_end: 0,
        dep_pool_start: 0,
        dep_pool_end: 0,
        tensormap: 0,
    }
}

/// The pairing as it was first written (a scan of the open stack per end):
/// the specification the linear pairing must match.
fn pair_scopes_reference(records: &[ScopeRecord]) -> (Vec<(usize, usize)>, Vec<Problem>) {
    let mut open: Vec<usize> = Vec::new();
    let mut pairs = Vec::new();
    let mut problems = Vec::new();
    for (i, r) in records.iter().enumerate() {
        match r.phase {
            ScopePhase::Begin => open.push(i),
            ScopePhase::End => {
                let found = open
                    .iter()
                    .rposition(|&b| records[b].site == r.site && records[b].depth == r.depth);
                match found {
                    Some(pos) => {
                        for &unclosed in &open[pos + 1..] {
                            problems.push(Problem {
                                key: format!("records[{unclosed}]"),
                                message: format!(
                                    "begin at {} closed by no end",
                                    records[unclosed].site
                                ),
                            });
                        }
                        pairs.push((open[pos], i));
                        open.truncate(pos);
                    }
                    None => problems.push(Problem {
                        key: format!("records[{i}]"),
                        message: format!(
                            "end at {} (depth {}) has no matching begin",
                            r.site, r.depth
                        ),
                    }),
                }
            }
        }
    }
    for unclosed in open {
        problems.push(Problem {
            key: format!("records[{unclosed}]"),
            message: format!("begin at {} closed by no end", records[unclosed].site),
        });
    }
    (pairs, problems)
}

#[test]
fn scope_pairing_is_linear_and_matches_the_pairwise_scan() {
    // Random record streams over few sites and depths: same pairs, same problems.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..200 {
        let n = (next() % 300) as usize;
        let records: Vec<ScopeRecord> = (0..n)
            .map(|_| {
                let site = ["a:1", "b:2", "c:3"][(next() % 3) as usize];
                let phase = if next() % 2 == 0 {
                    ScopePhase::Begin
                } else {
                    ScopePhase::End
                };
                record(site, phase, (next() % 3) as i32)
            })
            .collect();
        let (pairs, problems) = pair_scopes(&records);
        let (want_pairs, want_problems) = pair_scopes_reference(&records);
        let pairs: Vec<(usize, usize)> = pairs.iter().map(|p| (p.begin, p.end)).collect();
        assert_eq!(pairs, want_pairs);
        assert_eq!(problems, want_problems);
    }
    // Many open begins and many ends that match none: the pairwise scan
    // compared every end with every begin (minutes in a debug build).
    let n = 100_000;
    let mut records: Vec<ScopeRecord> = (0..n)
        .map(|i| record(&format!("open.cpp:{i}"), ScopePhase::Begin, 1))
        .collect();
    records.extend((0..n).map(|i| record(&format!("stray.cpp:{i}"), ScopePhase::End, 1)));
    let start = Instant::now();
    let (pairs, problems) = pair_scopes(&records);
    let elapsed = start.elapsed();
    assert!(pairs.is_empty());
    assert_eq!(problems.len(), 2 * n);
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
}

/// One flipped bit in `chip_swimlane_records.json` (`metadata.core_to_thread[1] = 2^29`)
/// sent `pto swimlane-converter` past 6 GB and 60 s (a lane named per scheduler thread up
/// to the highest one named): every reader refuses the entry, and the converter runs in
/// bounded time and memory, reporting it.
#[test]
fn a_core_to_thread_entry_past_the_limit_is_refused_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data("chip_swimlane_records.json")).unwrap();
    let records: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut records = records;
    let md = records["metadata"].as_object_mut().unwrap();
    let cores = md["num_cores"].as_u64().unwrap() as usize;
    let mut ctt = vec![serde_json::json!(0); cores];
    ctt[cores - 1] = serde_json::json!(1u64 << 29);
    md.insert("core_to_thread".into(), serde_json::Value::Array(ctt));
    let path = dir.path().join("chip_swimlane_records.json");
    std::fs::write(&path, serde_json::to_string(&records).unwrap()).unwrap();
    let want = format!(
        "is 536870912, past the {} scheduler threads a run has at most; ignored core_to_thread",
        swimlane::MAX_SCHED_THREADS
    );
    let key = format!("metadata.core_to_thread[{}]", cores - 1);
    for loaded in [
        swimlane::read(&path).unwrap(),
        load::load_swimlane(&path).unwrap(),
    ] {
        assert!(loaded.value.metadata.core_to_thread.is_empty());
        assert!(
            loaded
                .problems
                .iter()
                .any(|p| p.key == key && p.message == want),
            "{:?}",
            loaded.problems
        );
    }
    let start = Instant::now();
    let out = dir.path().join("out.json");
    swimlane_converter::convert(&swimlane_converter::ConvertOptions {
        input: &path,
        output: Some(&out),
        deps: None,
        func_names: None,
        kernel_config: None,
    })
    .unwrap();
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(std::fs::metadata(&out).unwrap().len() < 64 << 20);
}
