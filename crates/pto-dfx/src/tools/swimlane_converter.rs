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

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender};

use crate::atomic::AtomicFile;
use crate::core_type::CoreType;
use crate::error::Problem;
use crate::swimlane::SchedPhaseKind;
use crate::task_id::TaskId;
use crate::tools::error::ToolError;
use crate::tools::idmap::{self, IdMap};
use crate::tools::load::{self, GraphTask, TaskGraph};
use crate::tools::names::{self, KernelNames, SiblingPolicy};
use crate::tools::perf::{self, Ns, PhaseSpan, Timeline};

pub mod overhead;
mod pipes;
mod summary;

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
    let dir = super::parent_dir(input);
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
    let dir = super::parent_dir(input);
    let mut warnings = Vec::new();

    let deps_path = match options.deps {
        Some(p) => Some(p.to_path_buf()),
        None => super::beside(dir, crate::deps::FILE_NAME, crate::compact::deps::FILE_NAME),
    };
    if let Some(deps) = &deps_path {
        warnings.extend(crate::provenance::mixed_programs(dir, &[input, deps]));
    }
    // The two big reads overlap: deps.json on a second thread while this
    // one reads and joins the swimlane rows.
    let (timeline, graph) = std::thread::scope(|scope| {
        let graph = deps_path
            .as_deref()
            .map(|p| scope.spawn(move || load::load_graph(p)));
        let timeline = load::load_swimlane(input)
            .map_err(ToolError::from)
            .and_then(|loaded| {
                let t = perf::join(&loaded.value, input)?;
                Ok((t, loaded.problems, loaded.value.metadata.timing))
            });
        let graph = graph.map(|h| match h.join() {
            Ok(res) => res,
            Err(panic) => std::panic::resume_unwind(panic),
        });
        (timeline, graph)
    });
    let (timeline, problems, timing) = timeline?;
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
                crate::deps::FILE_NAME,
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
    let model = Model::build(&timeline, graph.as_ref(), &names);
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
    let mut file = AtomicFile::create(&output)?;
    let (n_events, n_flows) =
        write_trace(&mut file, &timeline, &model, &names, &overhead, &tracks)?;
    file.commit()?;
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

// ---------------------------------------------------------------- model

const PID_ORCH: u32 = 1;
const PID_SCHED: u32 = 2;
const PID_SCHED_VIEW: u32 = 3;
const PID_WORKER: u32 = 4;
const TID_QUEUE: u64 = 3999;
const TID_H2D: u64 = 4100;
const TID_AICPU: u64 = 19_000;

/// Where a slice went: its track and interval.
#[derive(Clone, Copy, Debug, Default)]
struct Placed {
    tid: u64,
    ts: Ns,
    end: Ns,
}

impl Placed {
    /// The point of the slice nearest `t`: `t` itself from the slice's start
    /// up to, not including, its end (the end is the next slice's start
    /// when slices touch); a zero-length slice has only its start.
    fn at(&self, t: Ns) -> Ns {
        if self.end > self.ts {
            t.clamp(self.ts, self.end - 1)
        } else {
            self.ts
        }
    }
}

/// The two ends of a flow from slice `from` (near `want_from`) to slice `to`
/// (near `want_to`), each inside its slice ([`Placed::at`]), and never going
/// back in time (Perfetto sorts events by
/// time, so an `f` before its `s` would be dropped). `None` when `to` ends
/// before `from` starts.
fn flow_points(from: &Placed, want_from: Ns, to: &Placed, want_to: Ns) -> Option<(Ns, Ns)> {
    let a = from.at(want_from);
    let b = to.at(want_to);
    if a <= b {
        return Some((a, b));
    }
    let a = from.at(b);
    if a <= b {
        return Some((a, b));
    }
    let b = to.at(a);
    (a <= b).then_some((a, b))
}

/// Nesting-aware interval partitioning of one base track into sub-lanes.
///
/// `items` are `(ts, end, id)`; each goes to the first sub-lane where it
/// neither partly overlaps an open slice nor outlasts the innermost open
/// slice that contains it (touching is fine), and `out(id, k)` is told its
/// sub-lane `k`. Returns the number of sub-lanes used.
fn assign_lanes(items: &mut [(Ns, Ns, usize)], mut out: impl FnMut(usize, usize)) -> usize {
    items.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut stacks: Vec<Vec<Ns>> = Vec::new();
    for &(ts, end, id) in items.iter() {
        let mut placed = None;
        for (k, stack) in stacks.iter_mut().enumerate() {
            while stack.last().is_some_and(|&e| e <= ts) {
                stack.pop();
            }
            if stack.last().is_none_or(|&e| e >= end) {
                stack.push(end);
                placed = Some(k);
                break;
            }
        }
        let k = placed.unwrap_or_else(|| {
            stacks.push(vec![end]);
            stacks.len() - 1
        });
        out(id, k);
    }
    stacks.len()
}

/// A core lane's tid for sub-lane `k`: `10000 + 10·core + k`, overflowing
/// past nine sub-lanes into `2_000_000 + 1000·core + k`.
fn core_tid(core: u32, k: usize) -> u64 {
    if k < 10 {
        10_000 + 10 * u64::from(core) + k as u64
    } else {
        2_000_000 + 1000 * u64::from(core) + k as u64
    }
}

/// A scheduler thread's tid: outer phases on `30000 + 10·t` (sub-lanes
/// `+2..=+5`), `resolve` on `+1` (sub-lanes `+6..=+9`), overflow beyond.
fn sched_tid(thread: usize, inner: bool, k: usize) -> u64 {
    let base = 30_000 + 10 * thread as u64;
    match (inner, k) {
        (false, 0) => base,
        (true, 0) => base + 1,
        (false, 1..=4) => base + 1 + k as u64,
        (true, 1..=4) => base + 5 + k as u64,
        (inner, k) => 3_000_000 + 1000 * thread as u64 + 500 * u64::from(inner) + k as u64,
    }
}

fn core_name(t: CoreType, core: u32) -> String {
    match t {
        CoreType::Aic => format!("AIC_{core}"),
        CoreType::Aiv => format!("AIV_{core}"),
    }
}

fn lane_name(base: &str, k: usize) -> String {
    if k == 0 {
        base.to_string()
    } else {
        format!("{base}+{k}")
    }
}

/// A Worker View flow endpoint: a task bar, a dummy marker or an alloc bar.
#[derive(Clone, Copy, Debug)]
struct Anchor {
    place: Placed,
    /// The end that decides `hb_violation` (the kernel end of a task bar).
    end: Ns,
    /// The slice's event id (`bind_id`).
    event: u64,
}

/// The dependency graph over dense node ids: every task id of an edge,
/// successors as CSR lists in first-seen edge order, predecessors ordered
/// by each predecessor's first edge (Simpler's fanin order).
#[derive(Default)]
struct GraphCsr {
    index: IdMap<u64, usize>,
    ids: Vec<TaskId>,
    succ_off: Vec<usize>,
    succ: Vec<usize>,
    pred_off: Vec<usize>,
    pred: Vec<usize>,
}

impl GraphCsr {
    fn build(edges: &[(TaskId, TaskId)]) -> Self {
        let mut index: IdMap<u64, usize> = idmap::map_with_capacity(edges.len());
        let mut ids = Vec::new();
        let mut pairs = Vec::with_capacity(edges.len());
        for &(p, s) in edges {
            let mut node = |id: TaskId| {
                *index.entry(id.raw()).or_insert_with(|| {
                    ids.push(id);
                    ids.len() - 1
                })
            };
            let a = node(p);
            let b = node(s);
            pairs.push((a, b));
        }
        let n = ids.len();
        let csr = |pairs: &mut dyn Iterator<Item = (usize, usize)>| {
            let list: Vec<(usize, usize)> = pairs.collect();
            let mut off = vec![0usize; n + 1];
            for &(a, _) in &list {
                off[a + 1] += 1;
            }
            for k in 0..n {
                off[k + 1] += off[k];
            }
            let mut fill = off.clone();
            let mut out = vec![0usize; list.len()];
            for &(a, b) in &list {
                out[fill[a]] = b;
                fill[a] += 1;
            }
            (off, out)
        };
        let (succ_off, succ) = csr(&mut pairs.iter().copied());
        // A task's predecessors in Simpler's fanin order: by each
        // predecessor's first edge as a predecessor (its successor lists are
        // grouped per predecessor, in that order, then inverted).
        let mut pred_rank = vec![usize::MAX; n];
        let mut ranked = 0;
        for &(a, _) in &pairs {
            if pred_rank[a] == usize::MAX {
                pred_rank[a] = ranked;
                ranked += 1;
            }
        }
        let mut by_pred = pairs.clone();
        by_pred.sort_by_key(|&(a, _)| pred_rank[a]);
        let (pred_off, pred) = csr(&mut by_pred.iter().map(|&(a, b)| (b, a)));
        Self {
            index,
            ids,
            succ_off,
            succ,
            pred_off,
            pred,
        }
    }

    fn node(&self, id: TaskId) -> Option<usize> {
        self.index.get(&id.raw()).copied()
    }

    fn succs(&self, k: usize) -> &[usize] {
        &self.succ[self.succ_off[k]..self.succ_off[k + 1]]
    }

    fn preds(&self, k: usize) -> &[usize] {
        &self.pred[self.pred_off[k]..self.pred_off[k + 1]]
    }
}

/// Everything placed, before writing.
struct Model {
    /// Per task row: its func_id (if resolved) and label.
    func: Vec<Option<i32>>,
    /// Per task row: its label's kernel part, an index into `bases`; the
    /// label is `<base>(<task>)`, written without building a string per row.
    label_base: Vec<u32>,
    bases: Vec<String>,
    /// Per task row: Worker View and Scheduler View placement.
    worker: Vec<Placed>,
    sched_view: Vec<Option<Placed>>,
    /// Per task group (rows with one task id): its row range.
    groups: Vec<(usize, usize)>,
    group_of: IdMap<u64, usize>,
    /// Flow nodes: the groups, then the task ids that have only AICPU bars
    /// (dummy markers, alloc bars). Per node: its Worker View anchors (CSR)
    /// and the logical subtask count its dependency flows carry.
    wanchor_off: Vec<usize>,
    wanchors: Vec<Anchor>,
    fan: Vec<u32>,
    /// Per group: its Scheduler View anchor rows (CSR).
    sanchor_off: Vec<usize>,
    sanchors: Vec<usize>,
    /// Unique dependency edges between flow nodes (pred, succ).
    edges: Vec<(usize, usize)>,
    /// The whole graph over dense ids (timed or not): successors and
    /// predecessors (CSR), for the hints and the complete→ready walk.
    graph: GraphCsr,
    /// Scheduler View event id per row (`u64::MAX` without a bar); marker
    /// and alloc bar ids follow from `marker_event_base`.
    sched_event: Vec<u64>,
    marker_event_base: u64,
    /// Scheduler phases: placement per (thread, index).
    phases: Vec<Vec<Placed>>,
    /// Dummy / predicated-skip markers: (thread, phase index, placement).
    markers: Vec<(usize, usize, Placed)>,
    /// Orchestrator records: placement per (lane, index); alloc bars.
    orch: Vec<Vec<Placed>>,
    allocs: Vec<(usize, usize, Placed)>,
    uploads: Vec<Placed>,
    /// Thread names: (pid, tid) → name.
    threads: Vec<(u32, u64, String)>,
    has_sched_view: bool,
}

fn group_label(
    func: Option<i32>,
    graph: Option<&GraphTask>,
    spmd: bool,
    names: &KernelNames,
    has_deps: bool,
) -> String {
    let mut name = match func {
        Some(id) => names.label(i64::from(id)),
        None if has_deps => match graph {
            Some(g) if g.is_dummy() => String::from("dummy"),
            _ => String::from("task"),
        },
        None => String::from("task"),
    };
    if spmd && !name.to_ascii_lowercase().contains("spmd") {
        name.push_str("_spmd");
    }
    name
}

impl Model {
    fn build(t: &Timeline, graph: Option<&TaskGraph>, names: &KernelNames) -> Self {
        let n = t.tasks.len();
        let graph_index = graph.map(TaskGraph::index).unwrap_or_default();
        let graph_task = |id: TaskId| -> Option<&GraphTask> {
            let g = graph?;
            graph_index.get(&id.raw()).map(|&i| &g.tasks[i])
        };

        // Groups of rows with one task id (tasks are sorted by id).
        let mut groups = Vec::new();
        let mut group_of = idmap::map_with_capacity(n);
        let mut i = 0;
        while i < n {
            let id = t.tasks[i].task_id;
            let mut j = i + 1;
            while j < n && t.tasks[j].task_id == id {
                j += 1;
            }
            group_of.insert(id.raw(), groups.len());
            groups.push((i, j));
            i = j;
        }
        // SPMD by Simpler's rule: `block_num > 1` in `deps.json`; without a
        // `deps.json` entry, several rows all on one core type.
        let spmd: Vec<bool> = groups
            .iter()
            .map(|&(a, b)| match graph_task(t.tasks[a].task_id) {
                Some(g) => g.block_num > 1,
                None => {
                    b - a > 1
                        && t.tasks[a..b]
                            .iter()
                            .all(|x| x.core_type == t.tasks[a].core_type)
                }
            })
            .collect();

        // Labels.
        let mut func = Vec::with_capacity(n);
        let mut label_base = Vec::with_capacity(n);
        let mut bases: Vec<String> = Vec::new();
        let mut label_cache: HashMap<(Option<i32>, bool, bool), u32> = HashMap::new();
        for (gi, &(a, b)) in groups.iter().enumerate() {
            let g = graph_task(t.tasks[a].task_id);
            for task in &t.tasks[a..b] {
                let f = g.and_then(|g| g.func_id_for(task.core_type));
                func.push(f);
                let key = (f, spmd[gi], g.is_some_and(GraphTask::is_dummy));
                let base = *label_cache.entry(key).or_insert_with(|| {
                    bases.push(group_label(f, g, spmd[gi], names, graph.is_some()));
                    (bases.len() - 1) as u32
                });
                label_base.push(base);
            }
        }

        let mut threads: Vec<(u32, u64, String)> = Vec::new();

        // Worker View.
        let mut worker = vec![Placed::default(); n];
        let mut by_core: IdMap<u32, Vec<(Ns, Ns, usize)>> = idmap::map_with_capacity(128);
        for (i, task) in t.tasks.iter().enumerate() {
            let ts = if task.receive > 0 && task.receive <= task.start {
                task.receive
            } else {
                task.start
            };
            let end = task.end.max(ts);
            worker[i] = Placed { tid: 0, ts, end };
            by_core.entry(task.core_id).or_default().push((ts, end, i));
        }
        let mut cores: Vec<u32> = by_core.keys().copied().collect();
        cores.sort_unstable();
        for &core in &cores {
            let items = by_core
                .get_mut(&core)
                .map(std::mem::take)
                .unwrap_or_default();
            let mut items = items;
            let n_lanes = assign_lanes(&mut items, |idx, k| worker[idx].tid = core_tid(core, k));
            let base = core_name(t.core_type(core), core);
            for k in 0..n_lanes {
                threads.push((PID_WORKER, core_tid(core, k), lane_name(&base, k)));
            }
        }

        // Scheduler View.
        let has_sched_view = t.has_aicpu_times();
        let mut sched_view = vec![None; n];
        if has_sched_view {
            let mut by_core: IdMap<u32, Vec<(Ns, Ns, usize)>> = idmap::map_with_capacity(128);
            for (i, task) in t.tasks.iter().enumerate() {
                if let (Some(d), Some(f)) = (task.dispatch, task.finish) {
                    let end = f.max(d);
                    sched_view[i] = Some(Placed { tid: 0, ts: d, end });
                    by_core.entry(task.core_id).or_default().push((d, end, i));
                }
            }
            let mut cores: Vec<u32> = by_core.keys().copied().collect();
            cores.sort_unstable();
            for &core in &cores {
                let mut items = by_core
                    .get_mut(&core)
                    .map(std::mem::take)
                    .unwrap_or_default();
                let n_lanes = assign_lanes(&mut items, |idx, k| {
                    if let Some(p) = sched_view[idx].as_mut() {
                        p.tid = core_tid(core, k);
                    }
                });
                let base = core_name(t.core_type(core), core);
                for k in 0..n_lanes {
                    threads.push((PID_SCHED_VIEW, core_tid(core, k), lane_name(&base, k)));
                }
            }
        }

        // Scheduler phases.
        let mut phases: Vec<Vec<Placed>> = Vec::with_capacity(t.sched.len());
        let mut markers = Vec::new();
        for (thread, lane) in t.sched.iter().enumerate() {
            let mut placed = vec![Placed::default(); lane.len()];
            let mut outer = Vec::new();
            let mut inner = Vec::new();
            for (i, p) in lane.iter().enumerate() {
                let end = p.end.max(p.start);
                placed[i] = Placed {
                    tid: 0,
                    ts: p.start,
                    end,
                };
                match p.kind {
                    SchedPhaseKind::DummyTask | SchedPhaseKind::PredicatedSkip => {
                        // Stretched to at least 20 ns; laid out on AICPU_<thread> below.
                        markers.push((
                            thread,
                            i,
                            Placed {
                                tid: 0,
                                ts: p.start,
                                end: end.max(p.start + 20),
                            },
                        ));
                    }
                    SchedPhaseKind::Resolve => inner.push((p.start, end, i)),
                    _ => outer.push((p.start, end, i)),
                }
            }
            let n_outer = assign_lanes(&mut outer, |i, k| {
                placed[i].tid = sched_tid(thread, false, k)
            });
            let n_inner = assign_lanes(&mut inner, |i, k| {
                placed[i].tid = sched_tid(thread, true, k)
            });
            let name = format!("Sched_{thread}");
            for k in 0..n_outer {
                threads.push((PID_SCHED, sched_tid(thread, false, k), lane_name(&name, k)));
            }
            for k in 0..n_inner {
                threads.push((PID_SCHED, sched_tid(thread, true, k), lane_name(&name, k)));
            }
            phases.push(placed);
        }

        // Orchestrator records and alloc bars.
        let marker_tasks: std::collections::HashSet<u64> = markers
            .iter()
            .filter_map(|&(th, i, _)| t.sched[th][i].task_id.map(|x| x.raw()))
            .collect();
        // Simpler's scheduler thread count: the highest thread index named by
        // `core_to_thread` or holding records, plus one.
        let n_sched = t
            .core_to_thread
            .iter()
            .filter(|&&th| th >= 0 && crate::swimlane::is_core_thread(th))
            .map(|&th| th as usize + 1)
            .chain(
                t.sched
                    .iter()
                    .enumerate()
                    .filter(|(_, lane)| !lane.is_empty())
                    .map(|(th, _)| th + 1),
            )
            .max()
            .unwrap_or(t.sched.len());
        let mut orch = Vec::with_capacity(t.orch.len());
        let mut allocs = Vec::new();
        for (lane_idx, lane) in t.orch.iter().enumerate() {
            let mut placed = Vec::with_capacity(lane.len());
            let mut items = Vec::with_capacity(lane.len());
            for (i, o) in lane.iter().enumerate() {
                let end = o.end.max(o.start);
                placed.push(Placed {
                    tid: 0,
                    ts: o.start,
                    end,
                });
                items.push((o.start, end, i));
                let is_alloc = !t.host_mode
                    && !group_of.contains_key(&o.task_id.raw())
                    && !marker_tasks.contains(&o.task_id.raw())
                    && graph_task(o.task_id).is_none();
                if is_alloc {
                    allocs.push((
                        lane_idx,
                        i,
                        Placed {
                            tid: 0,
                            ts: o.start,
                            end,
                        },
                    ));
                }
            }
            let n_lanes = assign_lanes(&mut items, |i, k| {
                placed[i].tid = 4000 + lane_idx as u64 + 200 * k as u64;
            });
            let name = if t.host_mode {
                format!("Host_{lane_idx}")
            } else {
                format!("Orch_{lane_idx}")
            };
            for k in 0..n_lanes {
                threads.push((
                    PID_ORCH,
                    4000 + lane_idx as u64 + 200 * k as u64,
                    lane_name(&name, k),
                ));
            }
            orch.push(placed);
        }
        let mut uploads = Vec::with_capacity(t.uploads.len());
        if !t.uploads.is_empty() {
            let mut items: Vec<(Ns, Ns, usize)> = t
                .uploads
                .iter()
                .enumerate()
                .map(|(i, u)| (u.start, u.end.max(u.start), i))
                .collect();
            uploads = t
                .uploads
                .iter()
                .map(|u| Placed {
                    tid: 0,
                    ts: u.start,
                    end: u.end.max(u.start),
                })
                .collect();
            let n_lanes = assign_lanes(&mut items, |i, k| uploads[i].tid = TID_H2D + 10 * k as u64);
            for k in 0..n_lanes {
                threads.push((PID_ORCH, TID_H2D + 10 * k as u64, lane_name("H2D", k)));
            }
        }

        // AICPU_<i> lanes of the Worker View: markers on their scheduler
        // thread, alloc bars on `n_sched + orchestrator lane`.
        let mut aicpu: HashMap<usize, Vec<(Ns, Ns, usize)>> = HashMap::new();
        for (m, &(thread, _, p)) in markers.iter().enumerate() {
            aicpu.entry(thread).or_default().push((p.ts, p.end, m));
        }
        for (a, &(lane, _, p)) in allocs.iter().enumerate() {
            aicpu
                .entry(n_sched + lane)
                .or_default()
                .push((p.ts, p.end, markers.len() + a));
        }
        // Every AICPU thread is named, as in Simpler, with or without bars.
        let n_aicpu = n_sched + t.orch.len();
        for key in 0..n_aicpu {
            aicpu.entry(key).or_default();
        }
        let mut aicpu_keys: Vec<usize> = aicpu.keys().copied().collect();
        aicpu_keys.sort_unstable();
        let n_markers = markers.len();
        for key in aicpu_keys {
            let mut items = aicpu.remove(&key).unwrap_or_default();
            let tid_for = |k: usize| {
                if k == 0 {
                    TID_AICPU + key as u64
                } else {
                    4_000_000 + 1000 * key as u64 + k as u64
                }
            };
            let n_lanes = assign_lanes(&mut items, |idx, k| {
                if idx < n_markers {
                    markers[idx].2.tid = tid_for(k);
                } else {
                    allocs[idx - n_markers].2.tid = tid_for(k);
                }
            });
            for k in 0..n_lanes.max(1) {
                threads.push((
                    PID_WORKER,
                    tid_for(k),
                    lane_name(&format!("AICPU_{key}"), k),
                ));
            }
        }

        // Event ids, in Simpler's order: Worker View bars, Scheduler View
        // bars, dummy / predicated-skip markers, alloc bars.
        let mut next_event = n as u64;
        let mut sched_event = vec![u64::MAX; n];
        for (r, p) in sched_view.iter().enumerate() {
            if p.is_some() {
                sched_event[r] = next_event;
                next_event += 1;
            }
        }
        let marker_event = next_event;
        let alloc_event = marker_event + markers.len() as u64;

        // Flow anchors. Worker View: every row of a task, or for an SPMD task
        // its earliest bar per func_id (ties: the lower core); a task without
        // rows anchors on its dummy marker or alloc bars. Scheduler View: the
        // same over the dispatch → finish bars.
        let mut wanchor_off = Vec::with_capacity(groups.len() + 1);
        let mut wanchors: Vec<Anchor> = Vec::with_capacity(n);
        let mut sanchor_off = Vec::with_capacity(groups.len() + 1);
        let mut sanchors: Vec<usize> = Vec::with_capacity(n);
        let mut fan: Vec<u32> = Vec::with_capacity(groups.len());
        let earliest = |rows: std::ops::Range<usize>, key: &dyn Fn(usize) -> (Ns, u32)| {
            let mut picked: Vec<usize> = Vec::new();
            for r in rows {
                match picked.iter().position(|&x| func[x] == func[r]) {
                    Some(pos) if key(r) < key(picked[pos]) => picked[pos] = r,
                    Some(_) => {}
                    None => picked.push(r),
                }
            }
            picked
        };
        for (gi, &(a, b)) in groups.iter().enumerate() {
            wanchor_off.push(wanchors.len());
            sanchor_off.push(sanchors.len());
            let (wrows, srows) = if spmd[gi] {
                (
                    earliest(a..b, &|r| (worker[r].ts, t.tasks[r].core_id)),
                    earliest(a..b, &|r| {
                        (sched_view[r].map_or(Ns::MAX, |p| p.ts), t.tasks[r].core_id)
                    }),
                )
            } else {
                ((a..b).collect(), (a..b).collect())
            };
            wanchors.extend(wrows.into_iter().map(|r| Anchor {
                place: worker[r],
                end: t.tasks[r].end,
                event: r as u64,
            }));
            sanchors.extend(srows.into_iter().filter(|&r| sched_view[r].is_some()));
            fan.push(if spmd[gi] {
                graph_task(t.tasks[a].task_id).map_or((b - a) as u32, |g| g.block_num)
            } else {
                1
            });
        }
        sanchor_off.push(sanchors.len());
        let mut node_of: IdMap<u64, usize> = group_of.clone();
        let mut bars: Vec<(u64, Anchor)> = Vec::with_capacity(markers.len() + allocs.len());
        for (m, &(th, i, p)) in markers.iter().enumerate() {
            if let Some(id) = t.sched[th][i].task_id {
                bars.push((
                    id.raw(),
                    Anchor {
                        place: p,
                        end: p.end,
                        event: marker_event + m as u64,
                    },
                ));
            }
        }
        for (k, &(lane, i, p)) in allocs.iter().enumerate() {
            bars.push((
                t.orch[lane][i].task_id.raw(),
                Anchor {
                    place: p,
                    end: p.end,
                    event: alloc_event + k as u64,
                },
            ));
        }
        // Grouped by task id (stable: marker order within a task).
        bars.sort_by_key(|b| b.0);
        let mut k = 0;
        while k < bars.len() {
            let id = bars[k].0;
            let mut j = k;
            while j < bars.len() && bars[j].0 == id {
                j += 1;
            }
            if !group_of.contains_key(&id) {
                node_of.insert(id, fan.len());
                wanchor_off.push(wanchors.len());
                wanchors.extend(bars[k..j].iter().map(|b| b.1));
                fan.push(graph_task(TaskId(id)).map_or(1, |g| g.block_num.max(1)));
            }
            k = j;
        }
        wanchor_off.push(wanchors.len());

        // Dependency edges between flow nodes, and the whole graph.
        let mut edges = Vec::new();
        let graph_csr = GraphCsr::build(graph.map_or(&[][..], |g| &g.edges[..]));
        if let Some(g) = graph {
            edges.reserve(g.edges.len());
            for &(p, s) in &g.edges {
                if p == s {
                    continue;
                }
                if let (Some(&pn), Some(&sn)) = (node_of.get(&p.raw()), node_of.get(&s.raw())) {
                    edges.push((pn, sn));
                }
            }
        }
        if t.sched.iter().any(|lane| {
            lane.iter().any(|p| {
                matches!(p.kind, SchedPhaseKind::Complete | SchedPhaseKind::Dispatch)
                    && p.shared_at_end.is_some()
            })
        }) {
            threads.push((
                PID_SCHED,
                TID_QUEUE,
                String::from("shared_ready_queue (global)"),
            ));
        }

        Model {
            func,
            label_base,
            bases,
            worker,
            sched_view,
            groups,
            group_of,
            wanchor_off,
            wanchors,
            fan,
            sanchor_off,
            sanchors,
            edges,
            graph: graph_csr,
            sched_event,
            marker_event_base: marker_event,
            phases,
            markers,
            orch,
            allocs,
            uploads,
            threads,
            has_sched_view,
        }
    }

    /// The event id of dummy / predicated-skip marker `m`.
    fn marker_event(&self, m: usize) -> u64 {
        self.marker_event_base + m as u64
    }

    /// The event id of alloc bar `k`.
    fn alloc_event(&self, k: usize) -> u64 {
        self.marker_event_base + (self.markers.len() + k) as u64
    }

    /// Worker View anchors of flow node `k`.
    fn wanchors(&self, k: usize) -> &[Anchor] {
        &self.wanchors[self.wanchor_off[k]..self.wanchor_off[k + 1]]
    }

    /// Scheduler View anchor rows of group `g`.
    fn sanchors(&self, g: usize) -> &[usize] {
        &self.sanchors[self.sanchor_off[g]..self.sanchor_off[g + 1]]
    }
}

// ---------------------------------------------------------------- writer

/// The writer thread went away (its error explains why).
struct WriterGone;

/// Bytes per chunk handed to the writer thread.
const CHUNK: usize = 1 << 20;

/// Event output: one event per line, formatted here into 1 MiB chunks that
/// a writer thread passes to the file, so formatting and the `write` system
/// calls (a quarter of the time on a large trace) run on two cores. Spent
/// chunks come back for reuse; at most four are in flight.
struct TraceOut {
    buf: String,
    tx: SyncSender<String>,
    spare: Receiver<String>,
    n_events: u64,
    n_flows: u64,
}

impl TraceOut {
    fn begin(&mut self) {
        self.buf
            .push_str(if self.n_events == 0 { "\n" } else { ",\n" });
        self.n_events += 1;
    }

    fn flush_if_full(&mut self) -> Result<(), WriterGone> {
        if self.buf.len() >= CHUNK {
            let next = self
                .spare
                .try_recv()
                .unwrap_or_else(|_| String::with_capacity(CHUNK + CHUNK / 2));
            let full = std::mem::replace(&mut self.buf, next);
            self.tx.send(full).map_err(|_| WriterGone)?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<(u64, u64), WriterGone> {
        self.buf.push_str("\n]}\n");
        let last = std::mem::take(&mut self.buf);
        self.tx.send(last).map_err(|_| WriterGone)?;
        Ok((self.n_events, self.n_flows))
    }

    fn process(&mut self, pid: u32, name: &str, sort: u32) {
        self.begin();
        self.buf.push_str("{\"args\":{\"name\":");
        push_str(&mut self.buf, name);
        self.buf
            .push_str("},\"cat\":\"__metadata\",\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
        push_u64(&mut self.buf, u64::from(pid));
        self.buf.push_str(",\"tid\":0}");
        self.begin();
        self.buf.push_str("{\"args\":{\"sort_index\":");
        push_u64(&mut self.buf, u64::from(sort));
        self.buf.push_str(
            "},\"cat\":\"__metadata\",\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":",
        );
        push_u64(&mut self.buf, u64::from(pid));
        self.buf.push_str(",\"tid\":0}");
    }

    fn thread(&mut self, pid: u32, tid: u64, name: &str) {
        self.begin();
        self.buf.push_str("{\"args\":{\"name\":");
        push_str(&mut self.buf, name);
        self.buf
            .push_str("},\"cat\":\"__metadata\",\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
        push_u64(&mut self.buf, u64::from(pid));
        self.buf.push_str(",\"tid\":");
        push_u64(&mut self.buf, tid);
        self.buf.push('}');
        self.begin();
        self.buf.push_str("{\"args\":{\"sort_index\":");
        push_u64(&mut self.buf, if tid == TID_QUEUE { 100 } else { tid });
        self.buf.push_str(
            "},\"cat\":\"__metadata\",\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":",
        );
        push_u64(&mut self.buf, u64::from(pid));
        self.buf.push_str(",\"tid\":");
        push_u64(&mut self.buf, tid);
        self.buf.push('}');
    }

    /// The tail of an `X` event after its `args`, in Simpler's key order:
    /// `cat`, `cname`, `id`, `name`, `ph`, `pid`, `tid`, `ts`, `dur`. `name`
    /// writes the quoted name.
    fn slice_tail(
        &mut self,
        cat: &str,
        cname: Option<&str>,
        id: Option<u64>,
        name: impl FnOnce(&mut String),
        pid: u32,
        p: &Placed,
    ) {
        self.buf.push_str(",\"cat\":\"");
        self.buf.push_str(cat);
        self.buf.push('"');
        if let Some(c) = cname {
            self.buf.push_str(",\"cname\":\"");
            self.buf.push_str(c);
            self.buf.push('"');
        }
        if let Some(id) = id {
            self.buf.push_str(",\"id\":");
            push_u64(&mut self.buf, id);
        }
        self.buf.push_str(",\"name\":");
        name(&mut self.buf);
        self.buf.push_str(",\"ph\":\"X\",\"pid\":");
        push_u64(&mut self.buf, u64::from(pid));
        self.buf.push_str(",\"tid\":");
        push_u64(&mut self.buf, p.tid);
        self.buf.push_str(",\"ts\":");
        push_us(&mut self.buf, p.ts);
        self.buf.push_str(",\"dur\":");
        push_us(&mut self.buf, p.end - p.ts);
        self.buf.push('}');
    }

    /// A flow from slice `from` (on its pid, near its wanted time) to slice
    /// `to`, placed by [`flow_points`]; nothing when no placement exists.
    /// `counts` are `(input_task_count, output_task_count)`, `binds` the
    /// event ids (Simpler's `bind_id`) of the slices each end binds to, where
    /// Simpler writes one.
    fn flow(
        &mut self,
        name: &str,
        from: (u32, &Placed, Ns),
        to: (u32, &Placed, Ns),
        counts: Option<(u32, u32)>,
        binds: (Option<u64>, Option<u64>),
    ) {
        let Some((a, b)) = flow_points(from.1, from.2, to.1, to.2) else {
            return;
        };
        let id = self.n_flows;
        self.n_flows += 1;
        let ends = [
            ("s", from.0, from.1.tid, a, binds.0),
            ("f", to.0, to.1.tid, b, binds.1),
        ];
        for (ph, pid, tid, ts, bind) in ends {
            self.begin();
            self.buf.push_str("{\"cat\":\"flow\",\"id\":");
            push_u64(&mut self.buf, id);
            self.buf.push_str(",\"name\":\"");
            self.buf.push_str(name);
            self.buf.push_str("\",\"ph\":\"");
            self.buf.push_str(ph);
            self.buf.push_str("\",\"pid\":");
            push_u64(&mut self.buf, u64::from(pid));
            self.buf.push_str(",\"tid\":");
            push_u64(&mut self.buf, tid);
            self.buf.push_str(",\"ts\":");
            push_us(&mut self.buf, ts);
            if ph == "f" {
                self.buf.push_str(",\"bp\":\"e\"");
            }
            if let Some((i, o)) = counts {
                self.buf.push_str(",\"input_task_count\":");
                push_u64(&mut self.buf, u64::from(i));
                self.buf.push_str(",\"output_task_count\":");
                push_u64(&mut self.buf, u64::from(o));
            }
            if let Some(bind) = bind {
                self.buf.push_str(",\"bind_id\":");
                push_u64(&mut self.buf, bind);
            }
            self.buf.push('}');
        }
    }
}

/// A JSON string literal (quote, backslash and control characters escaped).
fn push_str(buf: &mut String, text: &str) {
    buf.push('"');
    for c in text.chars() {
        match c {
            '"' => buf.push_str("\\\""),
            '\\' => buf.push_str("\\\\"),
            '\n' => buf.push_str("\\n"),
            '\r' => buf.push_str("\\r"),
            '\t' => buf.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(buf, "\\u{:04x}", c as u32);
            }
            c => buf.push(c),
        }
    }
    buf.push('"');
}

/// A decimal integer, without the formatting machinery (the hot path
/// writes tens of millions of them).
fn push_u64(buf: &mut String, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        buf.push(char::from(d));
    }
}

/// A task's display form: `t<local>` or `r<ring>t<local>`.
fn push_task(buf: &mut String, id: TaskId) {
    if id.ring() != 0 {
        buf.push('r');
        push_u64(buf, u64::from(id.ring()));
    }
    buf.push('t');
    push_u64(buf, u64::from(id.local()));
}

/// A quoted `<base>(<task>)` label.
fn push_label(buf: &mut String, base: &str, id: TaskId) {
    push_str(buf, base);
    buf.pop();
    buf.push('(');
    push_task(buf, id);
    buf.push_str(")\"");
}

/// `ns` as µs with at most three decimals and at least one (`1.84`, `3.0`).
fn push_us(buf: &mut String, ns: Ns) {
    push_u64(buf, ns / 1000);
    let frac = (ns % 1000) as u32;
    buf.push('.');
    if frac == 0 {
        buf.push('0');
        return;
    }
    let digits = [frac / 100, frac / 10 % 10, frac % 10];
    let keep = if frac.is_multiple_of(100) {
        1
    } else if frac.is_multiple_of(10) {
        2
    } else {
        3
    };
    for &d in &digits[..keep] {
        buf.push(char::from(b'0' + d as u8));
    }
}

/// `{"event-hint":"Task:<disp>, FuncId:<id>, CoreId:<core>"` (the args object opened).
fn event_hint(buf: &mut String, task: &perf::PerfTask, func: Option<i32>) {
    buf.push_str("{\"event-hint\":\"Task:");
    push_task(buf, task.task_id);
    buf.push_str(", FuncId:");
    match func {
        Some(f) => push_u64(buf, f as u64),
        None => buf.push_str("-1"),
    }
    buf.push_str(", CoreId:");
    push_u64(buf, u64::from(task.core_id));
    buf.push('"');
}

/// `,"<key>":"<n>: [t1, r1t2, ...]"` over graph nodes `list` (at most 16 shown).
fn hint_list(buf: &mut String, key: &str, list: &[usize], ids: &[TaskId]) {
    buf.push_str(",\"");
    buf.push_str(key);
    buf.push_str("\":\"");
    push_u64(buf, list.len() as u64);
    buf.push_str(": [");
    for (k, &node) in list.iter().take(16).enumerate() {
        if k > 0 {
            buf.push_str(", ");
        }
        push_task(buf, ids[node]);
    }
    if list.len() > 16 {
        buf.push_str(", ...");
    }
    buf.push_str("]\"");
}

fn phase_cname(kind: &SchedPhaseKind) -> &'static str {
    match kind {
        SchedPhaseKind::Complete => "good",
        SchedPhaseKind::Dispatch => "terrible",
        SchedPhaseKind::AsyncPoll => "yellow",
        SchedPhaseKind::Release => "olive",
        SchedPhaseKind::Dummy | SchedPhaseKind::DummyTask => "grey",
        SchedPhaseKind::EarlyDispatch | SchedPhaseKind::GraphPrepare => "rail_animation",
        SchedPhaseKind::Drain => "cq_build_running",
        SchedPhaseKind::DrainPrepare => "cq_build_attempt_runnable",
        SchedPhaseKind::DrainPublish => "cq_build_attempt_passed",
        SchedPhaseKind::Resolve => "vsync_highlight_color",
        _ => "generic_work",
    }
}

/// Phases of one kind on one thread, sorted by start, for containment lookups.
struct PhaseIndex {
    /// Per thread: (start, end, phase index) of `complete` phases.
    complete: Vec<Vec<(Ns, Ns, usize)>>,
    /// Per thread: the same for `dispatch` phases.
    dispatch: Vec<Vec<(Ns, Ns, usize)>>,
}

impl PhaseIndex {
    fn build(sched: &[Vec<PhaseSpan>]) -> Self {
        let pick = |kind: SchedPhaseKind| -> Vec<Vec<(Ns, Ns, usize)>> {
            sched
                .iter()
                .map(|lane| {
                    let mut v: Vec<(Ns, Ns, usize)> = lane
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.kind == kind)
                        .map(|(i, p)| (p.start, p.end.max(p.start), i))
                        .collect();
                    v.sort_unstable();
                    v
                })
                .collect()
        };
        Self {
            complete: pick(SchedPhaseKind::Complete),
            dispatch: pick(SchedPhaseKind::Dispatch),
        }
    }

    /// The phase of `list` containing `at` (or, with `next`, the first one
    /// starting after it).
    fn find(list: &[(Ns, Ns, usize)], at: Ns, next: bool) -> Option<usize> {
        let idx = list.partition_point(|p| p.0 <= at);
        if idx > 0 && list[idx - 1].1 >= at {
            return Some(list[idx - 1].2);
        }
        if next {
            list.get(idx).map(|p| p.2)
        } else {
            None
        }
    }

    /// Thread candidates for a core: its `core_to_thread` entry, else all.
    fn threads(t: &Timeline, core: u32, n: usize) -> std::ops::Range<usize> {
        match t.core_to_thread.get(core as usize) {
            Some(&th) if th >= 0 && (th as usize) < n => th as usize..th as usize + 1,
            _ => 0..n,
        }
    }

    fn lookup(
        &self,
        which: &[Vec<(Ns, Ns, usize)>],
        t: &Timeline,
        core: u32,
        at: Ns,
        next: bool,
    ) -> Option<(usize, usize)> {
        let range = Self::threads(t, core, which.len());
        for th in range.clone() {
            if let Some(i) = Self::find(&which[th], at, false) {
                return Some((th, i));
            }
        }
        if next {
            for th in range {
                if let Some(i) = Self::find(&which[th], at, true) {
                    return Some((th, i));
                }
            }
        }
        None
    }
}

/// Writes the trace to `file`: events are formatted on this thread and
/// written by a second one (see [`TraceOut`]). Returns `(events, flows)`.
fn write_trace(
    file: &mut AtomicFile,
    t: &Timeline,
    model: &Model,
    names: &KernelNames,
    overhead: &[overhead::Sample],
    tracks: &pipes::PipeTracks,
) -> Result<(u64, u64), ToolError> {
    let path = file.path().to_path_buf();
    let (tx, rx) = std::sync::mpsc::sync_channel::<String>(4);
    let (spare_tx, spare_rx) = std::sync::mpsc::channel::<String>();
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> Result<(), crate::error::WriteError> {
            for mut chunk in rx {
                file.write_all(chunk.as_bytes())?;
                chunk.clear();
                // The formatter may be gone already; the chunk is then dropped.
                let _ = spare_tx.send(chunk);
            }
            Ok(())
        });
        let out = TraceOut {
            buf: String::with_capacity(CHUNK + CHUNK / 2),
            tx,
            spare: spare_rx,
            n_events: 0,
            n_flows: 0,
        };
        let produced = produce_trace(out, t, model, names, overhead, tracks);
        let written = match writer.join() {
            Ok(res) => res,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        // The writer's error explains why the formatter stopped.
        written?;
        produced.map_err(|WriterGone| {
            ToolError::Write(crate::error::WriteError::io(
                &path,
                "writing",
                std::io::Error::other("the writer thread stopped early"),
            ))
        })
    })
}

/// Formats every event into `out` (see the module docs for the order).
fn produce_trace(
    mut out: TraceOut,
    t: &Timeline,
    model: &Model,
    names: &KernelNames,
    overhead: &[overhead::Sample],
    tracks: &pipes::PipeTracks,
) -> Result<(u64, u64), WriterGone> {
    out.buf.push_str("{\"traceEvents\":[");

    // Metadata: every process and thread that carries an event (the
    // overhead counters live under the AICPU Scheduler process).
    let mut pids: Vec<u32> = model.threads.iter().map(|x| x.0).collect();
    if !overhead.is_empty() {
        pids.push(PID_SCHED);
    }
    if !tracks.threads.is_empty() {
        pids.push(PID_PIPES);
    }
    pids.sort_unstable();
    pids.dedup();
    for &pid in pids.iter().rev() {
        let name = match pid {
            PID_ORCH if t.host_mode => String::from("Host Orchestrator"),
            PID_ORCH => match &names.orchestrator_name {
                Some(n) => format!("AICPU {n}"),
                None => String::from("AICPU Orchestrator"),
            },
            PID_SCHED => String::from("AICPU Scheduler"),
            PID_SCHED_VIEW => String::from("Scheduler View"),
            PID_PIPES => String::from("Pipe View (predicted)"),
            _ => String::from("Worker View"),
        };
        out.process(pid, &name, pid);
    }
    let pipe_threads: Vec<(u32, u64, String)> = tracks
        .threads
        .iter()
        .map(|(tid, name)| (PID_PIPES, *tid, name.clone()))
        .collect();
    let mut threads: Vec<&(u32, u64, String)> = model.threads.iter().chain(&pipe_threads).collect();
    threads.sort_by_key(|x| (std::cmp::Reverse(x.0), x.1));
    for (pid, tid, name) in threads {
        out.thread(*pid, *tid, name);
    }

    // Pipe View slices (predicted time).
    for s in &tracks.slices {
        let task = &t.tasks[s.row];
        out.begin();
        out.buf.push_str("{\"args\":{\"taskId\":");
        push_u64(&mut out.buf, task.task_id.raw());
        out.buf.push_str(",\"task\":");
        push_str(&mut out.buf, &task.task_id.to_string());
        out.buf.push_str(",\"start-cycle\":");
        push_u64(&mut out.buf, s.cycles.0);
        out.buf.push_str(",\"cycles\":");
        push_u64(&mut out.buf, s.cycles.1 - s.cycles.0);
        out.buf.push('}');
        let place = Placed {
            tid: s.tid,
            ts: s.ts,
            end: s.end,
        };
        out.slice_tail(
            "pipe",
            None,
            None,
            |b| push_str(b, pipes::pipe_name(s.pipe)),
            PID_PIPES,
            &place,
        );
        out.flush_if_full()?;
    }

    // Worker View bars.
    let g = &model.graph;
    for &(a, b) in &model.groups {
        let node = g.node(t.tasks[a].task_id);
        let fanout = node.map_or(&[][..], |k| g.succs(k));
        let fanin = node.map_or(&[][..], |k| g.preds(k));
        for r in a..b {
            let task = &t.tasks[r];
            let p = &model.worker[r];
            out.begin();
            out.buf.push_str("{\"args\":");
            event_hint(&mut out.buf, task, model.func[r]);
            hint_list(&mut out.buf, "fanout-hint", fanout, &g.ids);
            hint_list(&mut out.buf, "fanin-hint", fanin, &g.ids);
            out.buf.push_str(",\"duration-us\":");
            push_us(&mut out.buf, p.end - p.ts);
            out.buf.push_str(",\"kernel-duration-us\":");
            push_us(&mut out.buf, task.exec());
            out.buf.push_str(",\"local_setup_us\":");
            push_us(&mut out.buf, task.start.saturating_sub(task.receive));
            out.buf.push_str(",\"taskId\":");
            push_u64(&mut out.buf, task.task_id.raw());
            out.buf.push('}');
            let base = &model.bases[model.label_base[r] as usize];
            out.slice_tail(
                "event",
                None,
                Some(r as u64),
                |b| push_label(b, base, task.task_id),
                PID_WORKER,
                p,
            );
            out.flush_if_full()?;
        }
    }

    // Scheduler View bars.
    for (r, placed) in model.sched_view.iter().enumerate() {
        let Some(p) = placed else { continue };
        let task = &t.tasks[r];
        out.begin();
        out.buf.push_str("{\"args\":");
        event_hint(&mut out.buf, task, model.func[r]);
        out.buf.push_str(",\"dispatch-time-us\":");
        push_us(&mut out.buf, p.ts);
        out.buf.push_str(",\"finish-time-us\":");
        push_us(&mut out.buf, p.end);
        out.buf.push_str(",\"aicpu-duration-us\":");
        push_us(&mut out.buf, p.end - p.ts);
        out.buf.push_str(",\"taskId\":");
        push_u64(&mut out.buf, task.task_id.raw());
        out.buf.push('}');
        let base = &model.bases[model.label_base[r] as usize];
        out.slice_tail(
            "event",
            None,
            Some(model.sched_event[r]),
            |b| push_label(b, base, task.task_id),
            PID_SCHED_VIEW,
            p,
        );
        out.flush_if_full()?;
    }

    // Scheduler phases, then the ready-queue counter.
    let index = PhaseIndex::build(&t.sched);
    let attributed = finish_rows_attributed(t, &index);
    let mut queue: Vec<(Ns, [i16; 3])> = Vec::new();
    for (th, lane) in t.sched.iter().enumerate() {
        for (i, ph) in lane.iter().enumerate() {
            if matches!(
                ph.kind,
                SchedPhaseKind::DummyTask | SchedPhaseKind::PredicatedSkip
            ) {
                continue;
            }
            let p = &model.phases[th][i];
            out.begin();
            out.buf.push_str("{\"args\":{\"phase\":");
            push_str(&mut out.buf, ph.kind.as_str());
            let _ = write!(
                out.buf,
                ",\"loop_iter\":{},\"tasks_processed\":{}",
                ph.loop_iter, ph.tasks_processed
            );
            // Simpler 6ebaf77 shows no pop_hit / pop_miss on a phase slice.
            if let (Some(s), Some(e)) = (ph.shared_at_start, ph.shared_at_end) {
                let _ = write!(
                    out.buf,
                    ",\"shared_at_start (aic,aiv,mix)\":[{},{},{}],\"shared_at_end (aic,aiv,mix)\":[{},{},{}]",
                    s[0], s[1], s[2], e[0], e[1], e[2]
                );
            }
            if ph.kind == SchedPhaseKind::Complete {
                let _ = write!(
                    out.buf,
                    ",\"finishes_processed\":{},\"finish_rows_attributed\":{}",
                    ph.tasks_processed,
                    attributed.get(&(th, i)).copied().unwrap_or(0)
                );
            }
            out.buf.push('}');
            let name = format!("{}({})", ph.kind.as_str(), ph.tasks_processed);
            out.slice_tail(
                "scheduler",
                Some(phase_cname(&ph.kind)),
                None,
                |b| push_str(b, &name),
                PID_SCHED,
                p,
            );
            if matches!(ph.kind, SchedPhaseKind::Complete | SchedPhaseKind::Dispatch) {
                if let Some(e) = ph.shared_at_end {
                    queue.push((p.end, e));
                }
            }
            out.flush_if_full()?;
        }
    }
    // One sample per complete / dispatch phase at its end, in time order,
    // repeats included (Simpler's converter writes every one).
    queue.sort_by_key(|q| q.0);
    for &(ts, v) in &queue {
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"args\":{{\"AIC\":{},\"AIV\":{},\"MIX\":{}}},\"cat\":\"queue\",\"name\":\"shared_ready_queue\",\"ph\":\"C\",\"pid\":{PID_SCHED},\"tid\":{TID_QUEUE},\"ts\":",
            v[0], v[1], v[2]
        );
        push_us(&mut out.buf, ts);
        out.buf.push('}');
    }

    // Dummy / predicated-skip markers on AICPU_<thread>.
    for (m, &(th, i, ref p)) in model.markers.iter().enumerate() {
        let ph = &t.sched[th][i];
        let disp = ph.task_id.map(|x| x.to_string());
        let name = if ph.kind == SchedPhaseKind::DummyTask {
            format!("dummy({})", disp.as_deref().unwrap_or("unknown"))
        } else {
            ph.task_id
                .and_then(|id| model.group_of.get(&id.raw()))
                .map(|&g| {
                    let r = model.groups[g].0;
                    format!(
                        "{}({})",
                        model.bases[model.label_base[r] as usize], t.tasks[r].task_id
                    )
                })
                .unwrap_or_else(|| format!("task({})", disp.as_deref().unwrap_or("unknown")))
        };
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"args\":{{\"loop_iter\":{},\"task_id\":",
            ph.loop_iter
        );
        match ph.task_id {
            Some(id) => push_u64(&mut out.buf, id.raw()),
            None => out.buf.push_str("null"),
        }
        out.buf.push_str(",\"event-hint\":");
        push_str(&mut out.buf, &name);
        if ph.kind == SchedPhaseKind::DummyTask {
            out.buf.push_str(",\"phase\":\"dummy_task\"}");
        } else {
            out.buf.push_str(",\"predicated_pass\":false}");
        }
        out.slice_tail(
            "event",
            None,
            Some(model.marker_event(m)),
            |b| push_str(b, &name),
            PID_WORKER,
            p,
        );
    }

    // Host uploads.
    for (u, p) in t.uploads.iter().zip(&model.uploads) {
        out.begin();
        let _ = write!(out.buf, "{{\"args\":{{\"bytes\":{}}}", u.bytes);
        out.slice_tail(
            "host_h2d",
            Some("thread_state_iowait"),
            None,
            |b| push_str(b, &u.phase),
            PID_ORCH,
            p,
        );
    }

    // Orchestrator submits and alloc bars.
    for (lane_idx, lane) in t.orch.iter().enumerate() {
        for (i, o) in lane.iter().enumerate() {
            out.begin();
            let _ = write!(
                out.buf,
                "{{\"args\":{{\"phase\":\"orch_submit\",\"submit_idx\":{},\"task_id\":{}}}",
                o.submit_idx,
                o.task_id.raw()
            );
            let name = format!("submit({})", o.task_id);
            out.slice_tail(
                "orchestrator",
                Some("rail_animation"),
                None,
                |b| push_str(b, &name),
                PID_ORCH,
                &model.orch[lane_idx][i],
            );
            out.flush_if_full()?;
        }
    }
    for (k, &(lane_idx, i, ref p)) in model.allocs.iter().enumerate() {
        let o = &t.orch[lane_idx][i];
        let name = format!("alloc({})", o.task_id);
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"args\":{{\"phase\":\"alloc\",\"task_id\":{},\"event-hint\":",
            o.task_id.raw()
        );
        push_str(&mut out.buf, &name);
        out.buf.push('}');
        out.slice_tail(
            "event",
            Some("olive"),
            Some(model.alloc_event(k)),
            |b| push_str(b, &name),
            PID_WORKER,
            p,
        );
    }

    // Flows. Dependencies: Worker View (bar start to bar start), then
    // Scheduler View (dispatch to dispatch).
    for &(pn, sn) in &model.edges {
        let counts = Some((model.fan[sn], model.fan[pn]));
        for pa in model.wanchors(pn) {
            for sa in model.wanchors(sn) {
                let name = if pa.end > sa.place.ts {
                    "hb_violation"
                } else {
                    "dependency"
                };
                out.flow(
                    name,
                    (PID_WORKER, &pa.place, pa.place.ts),
                    (PID_WORKER, &sa.place, sa.place.ts),
                    counts,
                    (Some(pa.event), Some(sa.event)),
                );
            }
        }
        out.flush_if_full()?;
    }
    if model.has_sched_view {
        for &(pg, sg) in &model.edges {
            if pg >= model.groups.len() || sg >= model.groups.len() {
                continue;
            }
            let counts = Some((model.fan[sg], model.fan[pg]));
            for &pa in model.sanchors(pg) {
                for &sa in model.sanchors(sg) {
                    let (Some(pp), Some(sp)) = (&model.sched_view[pa], &model.sched_view[sa])
                    else {
                        continue;
                    };
                    let name = if pp.end > sp.ts {
                        "hb_violation"
                    } else {
                        "dependency"
                    };
                    out.flow(
                        name,
                        (PID_SCHED_VIEW, pp, pp.ts),
                        (PID_SCHED_VIEW, sp, sp.ts),
                        counts,
                        (Some(model.sched_event[pa]), Some(model.sched_event[sa])),
                    );
                }
            }
            out.flush_if_full()?;
        }
    }

    if !t.sched.is_empty() {
        complete_flows(&mut out, t, model, &index)?;
        // dispatch: the dispatch phase → the Worker View and Scheduler View bars.
        for (r, task) in t.tasks.iter().enumerate() {
            let Some(d) = task.dispatch else { continue };
            let Some((th, i)) = index.lookup(&index.dispatch, t, task.core_id, d, false) else {
                continue;
            };
            let dp = &model.phases[th][i];
            out.flow(
                "dispatch",
                (PID_SCHED, dp, d),
                (PID_WORKER, &model.worker[r], task.start),
                None,
                (None, None),
            );
            if let Some(sp) = &model.sched_view[r] {
                out.flow(
                    "dispatch",
                    (PID_SCHED, dp, d),
                    (PID_SCHED_VIEW, sp, d),
                    None,
                    (None, Some(model.sched_event[r])),
                );
            }
            out.flush_if_full()?;
        }
        // submit→dispatch: each row's first orchestrator submit (its end) →
        // the dispatch phase that dispatched the row.
        if !t.host_mode && !t.orch.is_empty() {
            let mut submit_of: IdMap<u64, (usize, usize)> =
                idmap::map_with_capacity(model.groups.len());
            for (lane_idx, lane) in t.orch.iter().enumerate() {
                for (i, o) in lane.iter().enumerate() {
                    submit_of.entry(o.task_id.raw()).or_insert((lane_idx, i));
                }
            }
            for task in &t.tasks {
                let Some(d) = task.dispatch else { continue };
                let Some(&(lane_idx, i)) = submit_of.get(&task.task_id.raw()) else {
                    continue;
                };
                let Some((th, di)) = index.lookup(&index.dispatch, t, task.core_id, d, false)
                else {
                    continue;
                };
                let op = &model.orch[lane_idx][i];
                out.flow(
                    "submit\u{2192}dispatch",
                    (PID_ORCH, op, op.end),
                    (PID_SCHED, &model.phases[th][di], d),
                    None,
                    (None, None),
                );
                out.flush_if_full()?;
            }
        }
    }

    // Overhead counters (--overhead), Simpler's key order.
    for s in overhead {
        let (name, tid) = overhead::SERIES[s.series];
        out.begin();
        let _ = write!(
            out.buf,
            "{{\"ph\":\"C\",\"cat\":\"overhead\",\"name\":\"{name}\",\"pid\":{PID_SCHED},\"tid\":{tid},\"ts\":"
        );
        push_us(&mut out.buf, s.ts);
        let _ = write!(out.buf, ",\"args\":{{\"{name}\":{}}}}}", s.value);
        out.flush_if_full()?;
    }
    out.finish()
}

/// Per complete phase `(thread, index)`: the task rows whose finish it
/// contains (or, for a finish between phases, the next one on the row's
/// `core_to_thread` thread) — Simpler's `finish_rows_attributed`.
fn finish_rows_attributed(t: &Timeline, index: &PhaseIndex) -> HashMap<(usize, usize), u32> {
    let mut out: HashMap<(usize, usize), u32> = HashMap::new();
    for task in &t.tasks {
        let Some(f) = task.finish else { continue };
        let Some(&th) = t.core_to_thread.get(task.core_id as usize) else {
            continue;
        };
        if th < 0 || th as usize >= index.complete.len() {
            continue;
        }
        let th = th as usize;
        if let Some(i) = PhaseIndex::find(&index.complete[th], f, true) {
            *out.entry((th, i)).or_default() += 1;
        }
    }
    out
}

/// The `complete` and `complete→ready` flows, as Simpler draws them (both
/// need `core_to_thread`).
///
/// `complete`: a task is complete when its last subtask's finish is seen;
/// the phase is the `complete` phase on that core's thread containing the
/// finish (else the next one to start). An arrow leaves each of the task's
/// anchors in each view (10 ns before the bar's end in the Worker View,
/// before the finish in the Scheduler View) and lands at the finish inside
/// that phase (at its start when it does not contain the finish).
///
/// `complete→ready`: walking the complete phases by end time, each
/// completed task satisfies one fanin of each successor; the phase that
/// satisfies the last one (every `deps.json` predecessor counted, timed or
/// not) released the successor: an arrow leaves it 10 ns before its end and
/// lands at the successor's first dispatch, unless that dispatch came first.
fn complete_flows(
    out: &mut TraceOut,
    t: &Timeline,
    model: &Model,
    index: &PhaseIndex,
) -> Result<(), WriterGone> {
    if t.core_to_thread.is_empty() {
        return Ok(());
    }
    let thread_of = |core: u32| -> Option<usize> {
        let th = *t.core_to_thread.get(core as usize)?;
        (th >= 0).then_some(th as usize)
    };
    let mut completed_by: Vec<Option<(usize, usize)>> = vec![None; model.groups.len()];
    for (g, done) in completed_by.iter_mut().enumerate() {
        let (a, b) = model.groups[g];
        // The first row with the latest finish.
        let mut last: Option<(Ns, usize)> = None;
        for r in a..b {
            if let Some(f) = t.tasks[r].finish {
                if last.is_none_or(|(lf, _)| f > lf) {
                    last = Some((f, r));
                }
            }
        }
        let Some((finish, r)) = last else { continue };
        let Some(th) = thread_of(t.tasks[r].core_id).filter(|&th| th < index.complete.len()) else {
            continue;
        };
        let Some(pi) = PhaseIndex::find(&index.complete[th], finish, true) else {
            continue;
        };
        *done = Some((th, pi));
        let phase = &t.sched[th][pi];
        let land = if phase.start <= finish && finish <= phase.end.max(phase.start) {
            finish
        } else {
            phase.start
        };
        let dst = &model.phases[th][pi];
        for a in model.wanchors(g) {
            out.flow(
                "complete",
                (PID_WORKER, &a.place, a.end.saturating_sub(10)),
                (PID_SCHED, dst, land),
                None,
                (Some(a.event), None),
            );
        }
        for &r in model.sanchors(g) {
            if let Some(sp) = &model.sched_view[r] {
                out.flow(
                    "complete",
                    (PID_SCHED_VIEW, sp, sp.end.saturating_sub(10)),
                    (PID_SCHED, dst, land),
                    None,
                    (Some(model.sched_event[r]), None),
                );
            }
        }
        out.flush_if_full()?;
    }

    // complete→ready.
    let gr = &model.graph;
    let mut by_phase: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for (g, done) in completed_by.iter().enumerate() {
        if let Some(k) = done {
            by_phase.entry(*k).or_default().push(g);
        }
    }
    let mut order: Vec<(Ns, usize, usize, usize)> = Vec::new();
    for (th, list) in index.complete.iter().enumerate() {
        for (pos, &(_, end, i)) in list.iter().enumerate() {
            order.push((end, th, pos, i));
        }
    }
    order.sort_unstable();
    let mut satisfied = vec![0u32; gr.ids.len()];
    for &(end, th, _, i) in &order {
        let Some(done) = by_phase.get(&(th, i)) else {
            continue;
        };
        let src = &model.phases[th][i];
        for &g in done {
            let Some(k) = gr.node(t.tasks[model.groups[g].0].task_id) else {
                continue;
            };
            for &c in gr.succs(k) {
                satisfied[c] += 1;
                if satisfied[c] as usize != gr.preds(c).len() {
                    continue;
                }
                let Some(&cg) = model.group_of.get(&gr.ids[c].raw()) else {
                    continue;
                };
                let (a, b) = model.groups[cg];
                let mut first: Option<(Ns, usize)> = None;
                for r in a..b {
                    if let Some(d) = t.tasks[r].dispatch {
                        if first.is_none_or(|(fd, _)| d < fd) {
                            first = Some((d, r));
                        }
                    }
                }
                let Some((d, r)) = first else { continue };
                if d < end {
                    continue;
                }
                let Some(dth) = thread_of(t.tasks[r].core_id) else {
                    continue;
                };
                let Some(di) = index
                    .dispatch
                    .get(dth)
                    .and_then(|list| PhaseIndex::find(list, d, false))
                else {
                    continue;
                };
                out.flow(
                    "complete\u{2192}ready",
                    (PID_SCHED, src, end.saturating_sub(10)),
                    (PID_SCHED, &model.phases[dth][di], d),
                    None,
                    (None, None),
                );
            }
        }
        out.flush_if_full()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
