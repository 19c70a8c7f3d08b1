//! `deps.json`: the careful reader, the viewers' fast graph pass and their
//! streaming scan (each equal to the careful reader on a clean file, and
//! accepting nothing it rejects), consistency checks and the writer's round
//! trip.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_dfx::{deps, deps_scan};
use pto_dfx_view::load::{self, TaskGraph};

fuzz_target!(|data: &[u8]| {
    let path = Path::new("deps.json");
    let careful = deps::parse(data, path);
    if let Ok(loaded) = &careful {
        let _ = loaded.value.check_consistency();
        let graph = TaskGraph::from_deps(&loaded.value);
        let _ = graph.index();
        if loaded.problems.is_empty() {
            if let Some(fast) = load::fast_graph(data) {
                assert_eq!(fast, graph, "fast and careful graphs disagree");
            }
            let text = deps::render(&loaded.value);
            let again = deps::parse(text.as_bytes(), path).expect("rendered file reads back");
            assert_eq!(again.value, loaded.value, "render/parse round trip");
        }
    }
    if load::fast_graph(data).is_some() {
        assert!(
            careful.is_ok(),
            "fast pass accepted a file the careful reader rejects"
        );
    }
    if let deps_scan::Scanned::Read(scan) = deps_scan::scan_bytes(data, deps_scan::Detail::Full) {
        let loaded = careful
            .as_ref()
            .expect("the scan accepted a file the careful reader rejects");
        assert!(
            loaded.problems.is_empty(),
            "the scan accepted a damaged file: {:?}",
            loaded.problems
        );
        assert_eq!(
            scan.to_file(),
            loaded.value,
            "scan and careful reader disagree"
        );
    }
    let _ = load::parse_graph(data, path);
});
