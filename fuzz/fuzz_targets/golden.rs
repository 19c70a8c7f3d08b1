//! `golden.py`: the RTOL / ATOL literal reader.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_build_output::golden::parse_tolerances;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(tol) = parse_tolerances(text, Path::new("/b/golden.py")) {
        assert!(tol.rtol.is_finite() && tol.rtol >= 0.0, "{tol:?}");
        assert!(tol.atol.is_finite() && tol.atol >= 0.0, "{tol:?}");
    }
});
