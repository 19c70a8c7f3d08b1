//! `chip_swimlane_records.json`: the careful reader, the viewers' fast pass
//! (which must agree with it whenever it accepts a file), the join, the
//! writer's round trip, and `pto swimlane-converter` over every file the reader
//! takes (in bounded memory: `-rss_limit_mb`). Mutations: libFuzzer's own with
//! the field names of `fuzz/dicts/swimlane.dict`, and structured ones
//! ([`pto_fuzz::mutate::json_number`]: a number set to an extreme value or with
//! one bit flipped, what found `core_to_thread[69] = 2^29`).
#![no_main]

use std::path::Path;

use libfuzzer_sys::{fuzz_mutator, fuzz_target};
use pto_dfx::swimlane;
use pto_dfx_view::{load, perf, swimlane_converter};

fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    if seed % 2 == 0 {
        if let Some(n) = pto_fuzz::mutate::json_number(&mut data[..max_size], size, seed) {
            return n;
        }
    }
    libfuzzer_sys::fuzzer_mutate(data, size, max_size)
});

fuzz_target!(|data: &[u8]| {
    let path = Path::new("chip_swimlane_records.json");
    let careful = swimlane::parse(data, path);
    if let Some(fast) = load::fast_swimlane(data) {
        let careful = careful.as_ref().unwrap_or_else(|e| {
            panic!("fast pass accepted a file the careful reader rejects: {e}")
        });
        assert!(
            careful.problems.is_empty(),
            "fast pass accepted a damaged file: {:?}",
            careful.problems
        );
        assert_eq!(fast, careful.value, "fast and careful readers disagree");
    }
    let _ = load::parse_swimlane(data, path);
    if let Ok(loaded) = careful {
        let _ = perf::join(&loaded.value, path);
        let dir = tempfile::tempdir().expect("temp dir");
        let input = dir.path().join("chip_swimlane_records.json");
        std::fs::write(&input, data).expect("write");
        let _ = swimlane_converter::convert(&swimlane_converter::ConvertOptions {
            input: &input,
            output: Some(&dir.path().join("trace.json")),
            deps: None,
            func_names: None,
            kernel_config: None,
        });
        if loaded.problems.is_empty() {
            let text = swimlane::render(&loaded.value);
            let again = swimlane::parse(text.as_bytes(), path).expect("rendered file reads back");
            assert_eq!(again.value, loaded.value, "render/parse round trip");
        }
    }
});
