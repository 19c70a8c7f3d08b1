//! `pto demo`: the bundled examples, embedded in the binary, written out, replayed with
//! validation and summarised.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::RunConfig;
use crate::error::RunnerError;
use crate::replay::{replay, ReplayOptions};

include!(concat!(env!("OUT_DIR"), "/examples.rs"));

/// The names of the bundled examples, in order.
pub fn example_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = EXAMPLE_FILES
        .iter()
        .filter_map(|(p, _)| p.split('/').next())
        .collect();
    names.dedup();
    names
}

/// Writes every bundled example under `out` (one directory each); returns their paths.
pub fn write_examples(out: &Path) -> Result<Vec<PathBuf>, RunnerError> {
    for (rel, bytes) in EXAMPLE_FILES {
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| RunnerError::Io {
                action: "creating",
                path: parent.to_path_buf(),
                source,
            })?;
        }
        std::fs::write(&path, bytes).map_err(|source| RunnerError::Io {
            action: "writing",
            path: path.clone(),
            source,
        })?;
    }
    Ok(example_names().into_iter().map(|n| out.join(n)).collect())
}

/// One row of the demo's summary.
#[derive(Debug)]
pub struct DemoRow {
    /// Example name.
    pub name: String,
    /// Tasks run (0 on error).
    pub n_tasks: u64,
    /// Wall time of the run.
    pub wall: Duration,
    /// `Ok(true)` passed, `Ok(false)` mismatched, `Err` failed to run.
    pub result: Result<bool, String>,
}

/// Writes the examples to `out` and replays each with validation.
pub fn run_demo(out: &Path, config: &RunConfig) -> Result<Vec<DemoRow>, RunnerError> {
    let dirs = write_examples(out)?;
    let options = ReplayOptions {
        validate: true,
        recompile: true,
        rebuild_from_pto: true,
    };
    let mut rows = Vec::new();
    for dir in dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let row = match replay(&dir, config, &options) {
            Ok(o) => DemoRow {
                name,
                n_tasks: o.report.n_tasks,
                wall: o.report.wall,
                result: Ok(o.passed()),
            },
            Err(e) => DemoRow {
                name,
                n_tasks: 0,
                wall: Duration::ZERO,
                result: Err(e.to_string()),
            },
        };
        rows.push(row);
    }
    Ok(rows)
}
