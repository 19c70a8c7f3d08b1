//! `pto swimlane-converter`: `chip_swimlane_records.json` → a Chrome
//! trace-event JSON that Perfetto and `chrome://tracing` load.
//!
//! The layout follows Simpler's `merged_swimlane.json` (reference §8):
//!
//! | pid | process | threads |
//! |---|---|---|
//! | 1 | `AICPU Orchestrator` / `AICPU <orchestrator_name>` / `Host Orchestrator` | `4000 + i` `Orch_i` (`Host_i`), `4100` `H2D` |
//! | 2 | `AICPU Scheduler` (level ≥ 3) | `30000 + 10·t` `Sched_t` (`resolve` on `+1`), `3999` ready-queue counter |
//! | 3 | `Scheduler View` (level ≥ 2) | `10000 + 10·core` `AIC_n` / `AIV_n`: dispatch → finish |
//! | 4 | `Worker View` | `10000 + 10·core`: receive → end per task; `19000 + i` `AICPU_i` for dummy tasks and `alloc` bars |
//! | 6 | `Pipe View (predicted)` (ours; `--timing predicted` runs only) | `10000 + 10·core + pipe` `<core> <pipe>`: the timing model's per-pipe busy intervals inside each task ([`PIPES_FILE_NAME`]; module `pipes`) |
//!
//! Slices are named `<kernel>(<task>)`: the task shows as `t<local>` or
//! `r<ring>t<local>`, the kernel is the name of the task's func_id for the
//! core type (resolved through `kernel_ids` of a `deps.json` beside the
//! input: AIC → slot 0, AIV → slot 1, else slot 2), `func_<n>_<letters>`
//! when the func_id has no name, and `task` without a `deps.json`; SPMD
//! tasks get `_spmd` before the parenthesis. A task is SPMD by Simpler's
//! rule: `block_num > 1` in `deps.json`, or, for a task `deps.json` does not
//! list, several rows all on one core type.
//!
//! Flows (`cat "flow"`), anchored where Simpler anchors them:
//!
//! | flow | from | to |
//! |---|---|---|
//! | `dependency` / `hb_violation` (pred ends after succ's bar starts) | pred's Worker View bar start | succ's bar start |
//! | the same in the Scheduler View (pred finishes after succ's dispatch) | pred's dispatch | succ's dispatch |
//! | `complete` | each anchor bar, 10 ns before its end (Worker View) or its finish (Scheduler View) | the last subtask's finish inside the `complete` phase that retired it |
//! | `complete→ready` | 10 ns before the end of the `complete` phase that satisfied the consumer's last fanin | the consumer's first dispatch |
//! | `dispatch` | the `dispatch` phase, at the dispatch | the Worker View bar at the kernel start, the Scheduler View bar at the dispatch |
//! | `submit→dispatch` | the end of the task's first orchestrator submit | the `dispatch` phase, at each row's dispatch |
//!
//! A dependency arrow anchors at every row of a task, an SPMD task's at its
//! earliest bar per func_id in each view (ties: the lower core); a task with
//! no rows anchors at its dummy marker or alloc bar. Dependency flows carry
//! `input_task_count` / `output_task_count` (the successor's and the
//! predecessor's SPMD subtask count, 1 otherwise). `bind_id` (a slice's
//! event id) is on the ends Simpler binds: both ends of a dependency, the
//! bar a `complete` leaves, the Scheduler View bar a `dispatch` reaches.
//! `fanin-hint` lists predecessors in Simpler's order (by each one's first
//! edge as a predecessor in `deps.json`). Every `AICPU_<i>` thread is named (scheduler threads, then
//! one per orchestrator lane). `--overhead` adds the eight `oh_*` counters
//! ([`overhead`]).
//!
//! Differences from Simpler's converter, on purpose:
//!
//! - times are written as µs with at most three decimals (whole ns), from
//!   the integer-ns [`perf`] timeline, so touching slices never overlap by
//!   rounding; a flow end Simpler puts on a slice's end (a submit's end) or
//!   outside any slice sits 1 ns inside it instead, and a flow whose end
//!   lies in no slice at all (a dispatch outside every `dispatch` phase) is
//!   left out, since Perfetto could not bind it;
//! - slices that would partly overlap on one track (a core dispatched again
//!   before its previous finish was seen, a stretched dummy marker) move to
//!   a sub-lane (`AIC_3+1`, tid `+k`), so Perfetto drops nothing;
//! - the `fanout-hint` / `fanin-hint` lists stop after 16 tasks (`, ...`;
//!   the count in front is the whole degree), so a 1000-way join does not
//!   write a thousand ids into every bar;
//! - every lane gets a `thread_sort_index` (Simpler sorts only the
//!   ready-queue counter), so sub-lanes stay beside their lane;
//! - events are one per line, and the default output name carries a UTC
//!   timestamp (`merged_swimlane_<YYYYmmdd_HHMMSS>.json`);
//! - the overhead counters' process is named (`AICPU Scheduler`) even at
//!   level 2, where Simpler leaves it unnamed;
//! - the graph-execution process (pid 5) and the calibrated host clock
//!   alignment are not produced;
//! - a predicted-time swimlane (`metadata.timing = "predicted"`) with its
//!   `predicted_pipes.json` beside it gains the pipe tracks of pid 6.
//!
//! The per-kernel summary ([`KernelSummary`]) is Simpler's stdout table.

use std::path::{Path, PathBuf};

use crate::error::ToolError;
use crate::load::{self};
use crate::names::{self, SiblingPolicy};
use crate::perf::{self};
use pto_dfx::error::Problem;

mod model;
pub mod overhead;
mod pipes;
mod summary;
mod trace;

#[cfg(test)]
use model::{assign_lanes, flow_points, GraphCsr, Placed};
use model::{core_name, Layout, Model};
#[cfg(test)]
use trace::push_us;
use trace::write_trace;

pub use pipes::{PID_PIPES, PIPES_FILE_NAME};

pub use summary::{KernelRow, KernelSummary};

/// What to convert and where to write it.
#[derive(Clone, Copy, Debug)]
pub struct ConvertOptions<'a> {
    /// The `chip_swimlane_records.json`.
    pub input: &'a Path,
    /// The trace to write; default `merged_swimlane_<YYYYmmdd_HHMMSS>.json` beside the input.
    pub output: Option<&'a Path>,
    /// The `deps.json`; default the one beside the input, if any.
    pub deps: Option<&'a Path>,
    /// A name map (`name_map_*.json`); wins over `kernel_config`.
    pub func_names: Option<&'a Path>,
    /// A `kernel_config.py` to take kernel names from.
    pub kernel_config: Option<&'a Path>,
}

/// Choices beyond [`ConvertOptions`] (see [`convert_with`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConvertExtras {
    /// Add Simpler's eight `oh_*` overhead counter tracks (`--overhead`;
    /// needs `deps.json`).
    pub overhead: bool,
}

/// What a conversion did.
#[derive(Clone, Debug)]
pub struct ConvertReport {
    /// The trace written.
    pub output: PathBuf,
    /// The `deps.json` used, if any.
    pub deps: Option<PathBuf>,
    /// The file kernel names came from, if any.
    pub names: Option<PathBuf>,
    /// Task rows (one per subtask) in the trace.
    pub n_tasks: usize,
    /// Events written.
    pub n_events: u64,
    /// Flows written (each an `s` and an `f`).
    pub n_flows: u64,
    /// `oh_*` counter samples written (`--overhead`).
    pub n_overhead_samples: usize,
    /// The predicted pipe intervals drawn ([`PIPES_FILE_NAME`]), if any.
    pub pipes: Option<PathBuf>,
    /// Pipe slices written.
    pub n_pipe_slices: usize,
    /// Recoverable damage in the inputs, each naming its file.
    pub warnings: Vec<String>,
    /// The per-kernel timing table.
    pub summary: KernelSummary,
}

/// The default output beside `input`, stamped with the current UTC time.
pub fn default_output(input: &Path) -> PathBuf {
    let dir = crate::parent_dir(input);
    dir.join(format!("merged_swimlane_{}.json", utc_stamp(now_secs())))
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `YYYYmmdd_HHMMSS` for seconds since the Unix epoch, in UTC.
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}_{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn with_file(path: &Path, problems: Vec<Problem>) -> impl Iterator<Item = String> + '_ {
    problems
        .into_iter()
        .map(move |p| format!("{}: {p}", path.display()))
}

/// Converts `options.input` into a trace (see the module docs).
pub fn convert(options: &ConvertOptions<'_>) -> Result<ConvertReport, ToolError> {
    convert_with(options, ConvertExtras::default())
}

/// [`convert`] with `extras` (the overhead counters).
pub fn convert_with(
    options: &ConvertOptions<'_>,
    extras: ConvertExtras,
) -> Result<ConvertReport, ToolError> {
    let input = options.input;
    let dir = crate::parent_dir(input);
    let mut warnings = Vec::new();

    let deps_path = match options.deps {
        Some(p) => Some(p.to_path_buf()),
        None => crate::beside(
            dir,
            pto_dfx::deps::FILE_NAME,
            pto_dfx::compact::deps::FILE_NAME,
        ),
    };
    if let Some(deps) = &deps_path {
        warnings.extend(pto_dfx::provenance::mixed_programs(dir, &[input, deps]));
    }
    // The two big reads overlap: deps.json on a second thread while this
    // one reads and joins the swimlane rows and places what needs no deps.
    let (timeline, graph) = std::thread::scope(|scope| {
        let graph = deps_path
            .as_deref()
            .map(|p| scope.spawn(move || load::load_graph(p)));
        let timeline = load::load_swimlane(input)
            .map_err(ToolError::from)
            .and_then(|loaded| {
                let t = perf::join(&loaded.value, input)?;
                let layout = Layout::place(&t);
                Ok((t, layout, loaded.problems, loaded.value.metadata.timing))
            });
        let graph = graph.map(|h| match h.join() {
            Ok(res) => res,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        (timeline, graph)
    });
    let (timeline, layout, problems, timing) = timeline?;
    warnings.extend(with_file(input, problems));
    warnings.extend(with_file(input, timeline.problems.clone()));
    let graph = match (graph, &deps_path) {
        (Some(g), Some(p)) => {
            let g = g?;
            warnings.extend(with_file(p, g.problems));
            Some(g.value)
        }
        _ => {
            warnings.push(format!(
                "no {} beside {}: no dependency arrows, and tasks are labelled task(...)",
                pto_dfx::deps::FILE_NAME,
                input.display()
            ));
            None
        }
    };
    let (names, name_problems) = names::resolve(
        dir,
        options.func_names,
        options.kernel_config,
        SiblingPolicy::Unique,
    )?;
    if let Some(src) = &names.source {
        warnings.extend(with_file(src, name_problems));
    } else {
        warnings.extend(name_problems.into_iter().map(|p| p.to_string()));
    }

    let output = match options.output {
        Some(p) => p.to_path_buf(),
        None => default_output(input),
    };
    let model = Model::build(&timeline, layout, graph.as_ref(), &names);
    let summary = KernelSummary::build(&timeline, &model.func, &names);
    let overhead = match (extras.overhead, &graph) {
        (true, Some(g)) => overhead::samples(&timeline, &g.edges),
        (true, None) => {
            warnings.push(String::from(
                "--overhead needs deps.json for task readiness; no deps found, Overhead Analysis track skipped",
            ));
            Vec::new()
        }
        (false, _) => Vec::new(),
    };
    let pipes_path = dir.join(PIPES_FILE_NAME);
    let pipes_used =
        pipes_path.is_file() && pipes::belongs(dir, input, &pipes_path, timing.as_deref());
    if pipes_path.is_file() && !pipes_used && timing.as_deref() == Some("predicted") {
        warnings.push(format!(
            "{} comes from another run than {}: no pipe tracks",
            pipes_path.display(),
            input.display()
        ));
    }
    let tracks = if pipes_used {
        pipes::load(&pipes_path, &timeline, &mut warnings)?
    } else {
        pipes::PipeTracks::default()
    };
    let (n_events, n_flows) = write_trace(&output, &timeline, &model, &names, &overhead, &tracks)?;
    Ok(ConvertReport {
        output,
        deps: deps_path,
        names: names.source.clone(),
        n_tasks: timeline.tasks.len(),
        n_events,
        n_flows,
        n_overhead_samples: overhead.len(),
        pipes: pipes_used.then_some(pipes_path),
        n_pipe_slices: tracks.slices.len(),
        warnings,
        summary,
    })
}

// ------------------------------------------------ processes and fixed threads

const PID_ORCH: u32 = 1;
const PID_SCHED: u32 = 2;
const PID_SCHED_VIEW: u32 = 3;
const PID_WORKER: u32 = 4;
const TID_QUEUE: u64 = 3999;
const TID_H2D: u64 = 4100;
const TID_AICPU: u64 = 19_000;

#[cfg(test)]
mod tests;
