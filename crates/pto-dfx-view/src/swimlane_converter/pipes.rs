//! The pipe tracks of a predicted-time swimlane (`--timing predicted`).
//!
//! In predicted mode the runner writes [`PIPES_FILE_NAME`] beside the swimlane: for every
//! modelled subtask its task, the core the timing model placed it on, its start and cycles in
//! the model's schedule, and the busy intervals of its core's pipes (MTE2, MTE1, CUBE, VEC,
//! FIXP, MTE3, SCALAR) in cycles from its start:
//!
//! ```json
//! {"timing": "predicted", "core_clock_hz": 1850000000, "subtasks": [
//! {"task": 4294967296, "core": 24, "start_cycle": 1850, "cycles": 975,
//!  "spans": [["MTE2", 1, 120], ["VEC", 120, 278]]}
//! ]}
//! ```
//!
//! The converter draws them in their own process, `Pipe View (predicted)` (pid
//! [`PID_PIPES`]): one track per core and pipe that was ever busy, named `<core> <pipe>`
//! (`AIV_24 MTE2`), tid `10000 + 10·core + pipe` so a core's pipes sort together in the
//! model's pipe order. Each interval is a slice named after its pipe, scaled into its task's
//! Worker View bar (the bar's duration over the subtask's cycles: the swimlane's counter
//! ticks are coarser than a cycle, so a slice never leaves its bar by rounding).
//!
//! Subtasks are matched to swimlane rows by task id and core; rows of one task on one core
//! pair up in start order. The file is used when the swimlane says `metadata.timing =
//! "predicted"` or the provenance sidecar says both files come from one run, and never when
//! the sidecar says they come from different runs.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;

use crate::perf::{Ns, Timeline};

/// The pipe-interval file's name (beside `chip_swimlane_records.json`).
pub const PIPES_FILE_NAME: &str = pto_dfx::swimlane::PREDICTED_PIPES_FILE_NAME;

/// The pipe tracks' process id.
pub const PID_PIPES: u32 = 6;

/// The timing model's pipes, in track order.
const PIPES: [pto_timing::Pipe; pto_timing::N_PIPES] = pto_timing::Pipe::ALL;

#[derive(Deserialize)]
struct File {
    timing: String,
    subtasks: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    task: u64,
    core: u32,
    start_cycle: u64,
    cycles: u64,
    spans: Vec<(String, u64, u64)>,
}

/// One pipe slice, placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PipeSlice {
    /// Its track.
    pub tid: u64,
    /// Index of the pipe in the model's order.
    pub pipe: usize,
    /// Start and end on the trace's timeline.
    pub ts: Ns,
    pub end: Ns,
    /// The swimlane row (task) it belongs to.
    pub row: usize,
    /// Its interval in cycles from the subtask's start.
    pub cycles: (u64, u64),
}

/// The pipe tracks: thread names and slices.
#[derive(Clone, Debug, Default)]
pub(super) struct PipeTracks {
    /// `(tid, name)` per track.
    pub threads: Vec<(u64, String)>,
    /// Slices, by row.
    pub slices: Vec<PipeSlice>,
}

/// A core's pipe track.
fn pipe_tid(core: u32, pipe: usize) -> u64 {
    10_000 + 10 * u64::from(core) + pipe as u64
}

/// The pipe name of each slice.
pub(super) fn pipe_name(pipe: usize) -> &'static str {
    PIPES.get(pipe).map_or("?", |p| p.name())
}

/// Whether the file beside `input` belongs with it: never when the provenance sidecar says
/// they come from different runs; else when the swimlane holds predicted time or the sidecar
/// says they come from one run.
pub(super) fn belongs(dir: &Path, input: &Path, pipes: &Path, timing: Option<&str>) -> bool {
    let provenance = pto_dfx::provenance::Provenance::read(dir);
    match (provenance.origin(dir, input), provenance.origin(dir, pipes)) {
        (Some(a), Some(b)) => a.run == b.run,
        _ => timing == Some("predicted"),
    }
}

/// Reads `path` and places its intervals on `t`'s rows. Recoverable damage (a pipe name or
/// subtask that matches nothing) goes to `warnings`; a file that does not parse is an error
/// naming it.
pub(super) fn load(
    path: &Path,
    t: &Timeline,
    warnings: &mut Vec<String>,
) -> Result<PipeTracks, crate::error::ToolError> {
    let bytes = pto_dfx::read_artifact(path)?;
    let file: File = serde_json::from_slice(&bytes).map_err(|e| {
        crate::error::ToolError::invalid(
            path,
            "(file)",
            format!("is not a pipe-interval file ({e}); re-run with --timing predicted --swimlane"),
        )
    })?;
    if file.timing != "predicted" {
        warnings.push(format!(
            "{}: `timing` is {:?}, not \"predicted\"; pipe tracks skipped",
            path.display(),
            file.timing
        ));
        return Ok(PipeTracks::default());
    }
    Ok(place(t, file.subtasks, path, warnings))
}

fn place(
    t: &Timeline,
    mut entries: Vec<Entry>,
    path: &Path,
    warnings: &mut Vec<String>,
) -> PipeTracks {
    // Rows per (task, core) in start order.
    let mut rows: HashMap<(u64, u32), Vec<usize>> = HashMap::new();
    for (i, task) in t.tasks.iter().enumerate() {
        rows.entry((task.task_id.raw(), task.core_id))
            .or_default()
            .push(i);
    }
    for list in rows.values_mut() {
        list.sort_by_key(|&i| (t.tasks[i].start, i));
    }
    entries.sort_by_key(|e| (e.task, e.core, e.start_cycle));
    let mut taken: HashMap<(u64, u32), usize> = HashMap::new();
    let mut used = vec![[false; PIPES.len()]; 0];
    let mut cores: Vec<u32> = Vec::new();
    let mut out = PipeTracks::default();
    let (mut unmatched, mut unknown) = (0usize, Vec::new());
    for e in entries {
        let key = (e.task, e.core);
        let k = taken.entry(key).or_insert(0);
        let Some(&row) = rows.get(&key).and_then(|l| l.get(*k)) else {
            unmatched += 1;
            continue;
        };
        *k += 1;
        if e.cycles == 0 {
            continue;
        }
        let task = &t.tasks[row];
        let dur = u128::from(task.end.saturating_sub(task.start));
        let at =
            |c: u64| task.start + (dur * u128::from(c.min(e.cycles)) / u128::from(e.cycles)) as Ns;
        let slot = match cores.iter().position(|&c| c == e.core) {
            Some(s) => s,
            None => {
                cores.push(e.core);
                used.push([false; PIPES.len()]);
                cores.len() - 1
            }
        };
        for (name, s, end) in e.spans {
            let Some(pipe) = PIPES.iter().position(|p| p.name() == name) else {
                if !unknown.contains(&name) {
                    unknown.push(name);
                }
                continue;
            };
            if end <= s {
                continue;
            }
            used[slot][pipe] = true;
            out.slices.push(PipeSlice {
                tid: pipe_tid(e.core, pipe),
                pipe,
                ts: at(s),
                end: at(end),
                row,
                cycles: (s, end),
            });
        }
    }
    if unmatched > 0 {
        warnings.push(format!(
            "{}: {unmatched} subtask(s) match no swimlane row (task and core); their pipe intervals are left out",
            path.display()
        ));
    }
    if !unknown.is_empty() {
        warnings.push(format!(
            "{}: unknown pipe name(s) {}; expected one of {}",
            path.display(),
            unknown.join(", "),
            PIPES.map(|p| p.name()).join(", ")
        ));
    }
    for (slot, &core) in cores.iter().enumerate() {
        let base = super::core_name(t.core_type(core), core);
        for (pipe, p) in PIPES.iter().enumerate() {
            if used[slot][pipe] {
                out.threads
                    .push((pipe_tid(core, pipe), format!("{base} {}", p.name())));
            }
        }
    }
    out.slices.sort_by_key(|s| (s.row, s.tid, s.ts));
    out
}
