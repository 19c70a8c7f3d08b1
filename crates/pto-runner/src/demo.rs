//! `pto demo`: the bundled examples, embedded in the binary, written out, replayed with
//! validation and summarised. The L3 examples run through the installed pypto package
//! ([`crate::l3::python_host`]); without one (or without torch) they are skipped with the
//! reason and how to get it, and the single-chip examples run as before.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::RunConfig;
use crate::error::RunnerError;
use crate::l3::python_host;
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

/// How one example of the demo ended.
#[derive(Debug)]
pub enum DemoResult {
    /// Validated against its golden.
    Passed,
    /// Ran, but an output does not match its golden.
    Mismatch,
    /// Failed to run (the error).
    Error(String),
    /// Not run (why, and how to make it run).
    Skipped(String),
}

/// One row of the demo's summary.
#[derive(Debug)]
pub struct DemoRow {
    /// Example name.
    pub name: String,
    /// Tasks run (0 on error; chip dispatches and SubWorker calls for an L3 example).
    pub n_tasks: u64,
    /// Wall time of the run.
    pub wall: Duration,
    /// How it ended.
    pub result: DemoResult,
}

/// Writes the examples to `out` and replays each with validation.
pub fn run_demo(out: &Path, config: &RunConfig) -> Result<Vec<DemoRow>, RunnerError> {
    let dirs = write_examples(out)?;
    let options = ReplayOptions {
        validate: true,
        recompile: true,
        rebuild_from_pto: true,
    };
    // Whether L3 examples can run here is the same for all of them: ask once.
    let mut python: Option<Result<(), String>> = None;
    let mut rows = Vec::new();
    for dir in dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if python_host::is_l3(&dir) {
            let usable = python.get_or_insert_with(|| {
                python_host::usable_interpreter(&dir)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            });
            let row = match usable {
                Err(why) => DemoRow {
                    name,
                    n_tasks: 0,
                    wall: Duration::ZERO,
                    result: DemoResult::Skipped(why.clone()),
                },
                Ok(()) => l3_row(name, &dir, config, &options),
            };
            rows.push(row);
            continue;
        }
        let row = match replay(&dir, config, &options) {
            Ok(o) => DemoRow {
                name,
                n_tasks: o.report.n_tasks,
                wall: o.report.wall,
                result: if o.passed() {
                    DemoResult::Passed
                } else {
                    DemoResult::Mismatch
                },
            },
            Err(e) => DemoRow {
                name,
                n_tasks: 0,
                wall: Duration::ZERO,
                result: DemoResult::Error(e.to_string()),
            },
        };
        rows.push(row);
    }
    Ok(rows)
}

/// The row of an L3 example, replayed through the pypto package.
fn l3_row(name: String, dir: &Path, config: &RunConfig, options: &ReplayOptions) -> DemoRow {
    match python_host::replay_captured(dir, config, options) {
        Ok(r) => DemoRow {
            name,
            n_tasks: r.n_tasks,
            wall: r.wall,
            result: match r.code {
                0 => DemoResult::Passed,
                1 => DemoResult::Mismatch,
                _ => DemoResult::Error(
                    r.output
                        .lines()
                        .rev()
                        .find(|l| l.starts_with("error: "))
                        .map(|l| l.trim_start_matches("error: ").to_string())
                        .unwrap_or_else(|| format!("the L3 replay exited with {}", r.code)),
                ),
            },
        },
        Err(e) => DemoRow {
            name,
            n_tasks: 0,
            wall: Duration::ZERO,
            result: DemoResult::Error(e.to_string()),
        },
    }
}
