//! `chip_swimlane_records.json`: the careful reader, the viewers' fast pass
//! (which must agree with it whenever it accepts a file), the join, and the
//! writer's round trip.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_dfx::swimlane;
use pto_dfx::tools::{load, perf};

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
        if loaded.problems.is_empty() {
            let text = swimlane::render(&loaded.value);
            let again = swimlane::parse(text.as_bytes(), path).expect("rendered file reads back");
            assert_eq!(again.value, loaded.value, "render/parse round trip");
        }
    }
});
