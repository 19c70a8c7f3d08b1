//! `scope_stats.jsonl`: the reader, the scope pairing, the HTML plot and the
//! writer's round trip.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use pto_dfx::scope_stats;
use pto_dfx_view::scope_stats_plot;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("scope_stats.jsonl");
    let Ok(loaded) = scope_stats::parse(data, path) else {
        return;
    };
    let (pairs, _) = scope_stats::pair_scopes(&loaded.value.records);
    for p in &pairs {
        let (b, e) = (&loaded.value.records[p.begin], &loaded.value.records[p.end]);
        for r in scope_stats::ScopeResource::ALL {
            let _ = r.metrics(b, e);
            let _ = r.risk(b, e);
            let _ = loaded.value.meta.capacity(r, e.ring_index().unwrap_or(0));
        }
    }
    if loaded.problems.is_empty() {
        let text = scope_stats::render(&loaded.value);
        let again = scope_stats::parse(text.as_bytes(), path).expect("rendered file reads back");
        assert_eq!(again.value, loaded.value, "render/parse round trip");
    }
    // The plot, through files as `pto scope-stats-plot` runs it.
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("scope_stats.jsonl");
    std::fs::write(&input, data).expect("write input");
    let _ = scope_stats_plot::plot(&input, Some(&dir.path().join("out.html")));
});
