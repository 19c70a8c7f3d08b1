//! The compact forms (`chip_swimlane_records.bin`, `deps.bin`): both readers
//! on any bytes (errors, never a panic or an allocation beyond the input),
//! and for a file either reads: the write/read round trip, the JSON model
//! and its rendering (what `pto dfx-export` does), and the viewers' loaders
//! and the deps viewer's streamed scan, which must agree with the reader; a
//! swimlane file the reader takes also goes through `pto swimlane-converter`.
//! Mutations: libFuzzer's own with `fuzz/dicts/compact.dict` (the magics and
//! boundary integers), and structured ones ([`pto_fuzz::mutate::binary_word`]:
//! an aligned word set to an extreme value or with one bit flipped).
#![no_main]

use std::path::Path;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use pto_dfx::compact::{deps, swimlane};
use pto_dfx_view::{load, swimlane_converter};

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    if seed % 2 == 0 {
        if let Some(n) = pto_fuzz::mutate::binary_word(&mut data[..max_size], size, seed) {
            return n;
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, max_size)
});

fuzz_target!(|data: &[u8]| {
    let path = Path::new("records.bin");
    if let Ok(r) = swimlane::parse(data, path) {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join(swimlane::FILE_NAME);
        swimlane::write(
            &out,
            &r.header,
            r.workers
                .iter()
                .map(|w| (w.subtasks.iter().copied(), w.phases.iter().copied())),
            r.orchestrator.iter().copied(),
        )
        .expect("write");
        let again = swimlane::read(&out).expect("a written file reads back");
        assert_eq!(again, r, "write/read round trip");
        let model = r.to_model();
        let _ = pto_dfx::swimlane::render(&model);
        let loaded =
            load::parse_swimlane(data, path).expect("the loader takes what the reader takes");
        assert_eq!(loaded.value, model, "loader and reader agree");
        let _ = swimlane_converter::convert(&swimlane_converter::ConvertOptions {
            input: &out,
            output: Some(&dir.path().join("trace.json")),
            deps: None,
            func_names: None,
            kernel_config: None,
        });
    }
    if let Ok(r) = deps::parse(data, path) {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = dir.path().join(deps::FILE_NAME);
        deps::write_records(
            &out,
            r.schema,
            r.tasks.iter().map(|t| (t.task, t.args.iter().copied())),
            r.edges.iter().copied(),
        )
        .expect("write");
        let again = deps::read(&out).expect("a written file reads back");
        assert_eq!(again, r, "write/read round trip");
        let model = r.to_model();
        let _ = pto_dfx::deps::render(&model);
        // The deps viewer's streamed scan holds the same content.
        let scan = pto_dfx::deps_scan::DepsScan::read_compact(
            &out,
            pto_dfx::deps_scan::Detail::Full,
        )
        .expect("scan");
        assert_eq!(scan.to_file(), model, "scan and model agree");
        let _ = load::parse_graph(data, path).expect("the loader takes what the reader takes");
    }
});
