//! The offline viewers: diagnostic artifacts in, traces, reports and HTML out.
//!
//! Each tool is a function over files, with no runtime behind it; the `pto`
//! command line calls them (`pto swimlane-converter`, `pto deps-viewer`, ...)
//! and prints what they return. Libraries never print: every tool returns a
//! report (files written, the text for stdout, warnings) or a [`ToolError`]
//! that names the file and the key.
//!
//! | Module | Tool | Input → output |
//! |---|---|---|
//! | [`swimlane_converter`] | `pto swimlane-converter` | `chip_swimlane_records.json` (+ `deps.json`, names) → Chrome trace JSON |
//! | [`deps_viewer`] | `pto deps-viewer` | `deps.json` → `deps_viewer.txt` or a self-contained `deps_viewer.html` |
//! | [`scope_stats_plot`] | `pto scope-stats-plot` | `scope_stats.jsonl` → `scope_stats.html` |
//! | [`dump_viewer`] | `pto dump-viewer` | `args_dump/` → a listing, `.npy` or `.txt` exports |
//! | [`critical_path`] | `pto critical-path` | `deps.json` (+ swimlane) → `critical_path_report.md` |
//! | [`dfx_export`] | `pto dfx-export` | `chip_swimlane_records.bin`, `deps.bin` → their JSON files |
//!
//! Every viewer that reads the swimlane records or the dependency graph
//! takes either form, told apart by magic ([`pto_dfx::compact::sniff`]):
//! given `deps.json` or `chip_swimlane_records.json` it also looks for the
//! `.bin` beside it when the JSON is absent.
//!
//! Shared pieces: [`load`] reads the two big inputs fast (falling back to
//! the careful readers on damage), [`perf`] joins and times swimlane rows,
//! [`names`] finds kernel names, [`layout`] lays out graphs when Graphviz is
//! absent, [`html`] escapes and wraps pages, and [`trace_check`] checks a
//! trace the way Perfetto will read it.

pub mod critical_path;
pub mod deps_viewer;
pub mod dfx_export;
pub mod dump_viewer;
pub mod error;
pub mod html;
pub mod layout;
pub mod load;
pub mod names;
pub mod perf;
pub mod reduction;
pub mod scope_stats_plot;
pub mod swimlane_converter;
pub mod trace_check;

pub use error::ToolError;

use std::path::Path;

/// The directory holding `path`: its parent, or `.` for a bare file name
/// (whose `parent()` is the empty path, which names no directory).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// The swimlane records or the dependency graph in `dir`: the compact file
/// (`bin`) when it is there (faster to read), else the JSON file (`json`).
/// A run leaves one form (publishing one removes the other); after
/// `pto dfx-export` both hold the same records.
pub fn beside(dir: &Path, json: &str, bin: &str) -> Option<std::path::PathBuf> {
    [bin, json]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}
