//! The viewers over a run directory: `deps.json` and
//! `chip_swimlane_records.json` (split at `pto_fuzz::SEPARATOR`) through the
//! swimlane converter, the critical path and the deps viewer (text and HTML
//! with the built-in layout), as `pto` runs them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pto_dfx_view::deps_viewer::{self, DepsViewerOptions, EdgeMode, Format, LayoutChoice};
use pto_dfx_view::{critical_path, swimlane_converter};

fuzz_target!(|data: &[u8]| {
    let (deps, swimlane) = pto_fuzz::split2(data);
    let dir = tempfile::tempdir().expect("temp dir");
    let deps_path = dir.path().join("deps.json");
    let swimlane_path = dir.path().join("chip_swimlane_records.json");
    std::fs::write(&deps_path, deps).expect("write deps");
    if !swimlane.is_empty() {
        std::fs::write(&swimlane_path, swimlane).expect("write swimlane");
        let out = dir.path().join("trace.json");
        let _ = swimlane_converter::convert(&swimlane_converter::ConvertOptions {
            input: &swimlane_path,
            output: Some(&out),
            deps: Some(&deps_path),
            func_names: None,
            kernel_config: None,
        });
    }
    let _ = critical_path::analyze(dir.path());
    for format in [Format::Text, Format::Html] {
        let _ = deps_viewer::view(&DepsViewerOptions {
            input: &deps_path,
            output: Some(&dir.path().join("view.out")),
            format,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: EdgeMode::Full,
        });
    }
    // The reductions walk the graph: every mode over the same input (text only, the
    // reduction is shared by both formats).
    for edge_mode in [
        EdgeMode::Reduced,
        EdgeMode::Omitted,
        EdgeMode::ReducedDataflow,
        EdgeMode::OmittedDataflow,
    ] {
        let _ = deps_viewer::view(&DepsViewerOptions {
            input: &deps_path,
            output: Some(&dir.path().join("view.out")),
            format: Format::Text,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode,
        });
    }
});
