//! `pmu.csv`: the reader and the writer's round trip.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_dfx::pmu;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("pmu.csv");
    let Ok(loaded) = pmu::parse(data, path) else {
        return;
    };
    if loaded.problems.is_empty() && !loaded.value.rows.is_empty() {
        if let Ok(text) = pmu::render(&loaded.value.rows) {
            let again = pmu::parse(text.as_bytes(), path).expect("rendered file reads back");
            assert_eq!(
                again.value.rows, loaded.value.rows,
                "render/parse round trip"
            );
        }
    }
});
