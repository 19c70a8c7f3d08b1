//! The sidecars: `compiled_meta.json` and `distributed_meta.json`, and the
//! writer's round trip.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_build_output::{CompiledMeta, DistributedMeta};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/b/compiled_meta.json");
    if let Ok(meta) = CompiledMeta::parse(text, path) {
        let _ = meta.output_indices();
        for p in &meta.params {
            let _ = p.host_dtype();
        }
        let again = CompiledMeta::parse(&meta.to_json_text(), path).expect("round trip");
        assert_eq!(again, meta);
    }
    let path = Path::new("/b/distributed_meta.json");
    if let Ok(meta) = DistributedMeta::parse(text, path) {
        let again = DistributedMeta::parse(&meta.to_json_text(), path).expect("round trip");
        assert_eq!(again, meta);
    }
});
