//! `pto critical-path`: the static and the observed critical path of a run,
//! as a Markdown report (`critical_path_report.md` in the run's directory).
//!
//! Inputs, all in one directory (a run's `dfx_outputs/`): `deps.json`
//! (required), `chip_swimlane_records.json` (or the legacy
//! `l2_perf_records.json`; optional) and the newest `name_map*.json`.
//!
//! - **Static** (graph): the longest path over the `deps.json` edges,
//!   weighting each task by its measured duration (its first start to its
//!   last end over all its subtask rows) when a swimlane file exists, else by
//!   1 (so the path is the longest chain). `alloc_tensors` pseudo-tasks and
//!   tasks without timing weigh 0. Edges that close a cycle are ignored,
//!   with a warning.
//! - **Observed** (timed, needs the swimlane): from the task that finished
//!   last, walk back, as Simpler's blame walk does, through whichever
//!   candidate ended last: a data predecessor (a `deps.json` edge; the
//!   wait is a *data-wait*) or the task's core predecessor (the task with
//!   the latest end among those that started earlier on one of its cores;
//!   a *core-wait*), a data predecessor winning a tie, until a task has
//!   neither. Its time splits exactly into compute (the tasks' durations),
//!   stall (each task's start minus its chosen predecessor's end, negative
//!   when they overlap; data-wait + core-wait) and the front gap (the first
//!   task's start minus the run's first start), which add up to the
//!   makespan.
//! - **Perfetto copies**: when a `merged_swimlane*.json` (the newest) sits
//!   in the directory, `CPM_static.json` and `CPM_observed.json` are copies
//!   of it in which every Worker View bar (`pid` 4, `ph` `X`, with a
//!   `taskId`) of a task off the static / observed path is renamed
//!   `·(<task>)`, so the path stands out in Perfetto (pretty-printed with
//!   two-space indents, non-ASCII kept, a final newline). A timed task on
//!   the path without a Worker View bar is an error (the trace is from
//!   another run); alloc pseudo-tasks and untimed tasks have no bars and
//!   are not looked for.
//!
//! On a swimlane of `--timing predicted` (`metadata.timing = "predicted"`)
//! every duration is the timing model's predicted device time: the report
//! says so and gives the makespan, the static path and the compute time in
//! predicted core cycles too (at `predicted_timing.json`'s `core_clock_hz`).
//!
//! Kernel families (the name without a `_<n>` / `_aic` / `_aiv` suffix)
//! summarize where the path's time goes. The path tables list every task
//! up to 200 rows, else the first and last [`TABLE_ENDS`].

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::ToolError;
use crate::load::{self, TaskGraph};
use crate::names::{self, KernelNames, SiblingPolicy};
use crate::perf::{self, Ns};
use pto_base::idmap::{self, IdMap};
use pto_dfx::atomic::AtomicFile;
use pto_dfx::task_id::TaskId;

/// The report's file name.
pub const REPORT_FILE_NAME: &str = "critical_path_report.md";
/// The trace copy highlighting the static path.
pub const CPM_STATIC_FILE_NAME: &str = "CPM_static.json";
/// The trace copy highlighting the observed path.
pub const CPM_OBSERVED_FILE_NAME: &str = "CPM_observed.json";

/// What the analysis wrote.
#[derive(Clone, Debug)]
pub struct CriticalPathReport {
    /// `critical_path_report.md`.
    pub output: PathBuf,
    /// The report's text (also printed by the front end).
    pub markdown: String,
    /// The static path, first task first.
    pub static_path: Vec<TaskId>,
    /// The observed path, first task first (empty without a swimlane).
    pub observed_path: Vec<TaskId>,
    /// How each observed task was reached from its predecessor on the path
    /// (`None` for the first), in path order.
    pub observed_blame: Vec<Option<Blame>>,
    /// `CPM_static.json` and `CPM_observed.json`, when a merged trace was there.
    pub cpm_files: Vec<PathBuf>,
    /// Recoverable damage and caveats, each naming its file.
    pub warnings: Vec<String>,
    /// The swimlane's `metadata.timing` (`Some("predicted")` after `--timing predicted`:
    /// every duration is the timing model's predicted device time).
    pub timing: Option<String>,
    /// The makespan (first start to last end) in predicted core cycles, when the swimlane
    /// holds predicted time and `predicted_timing.json` names the model's clock.
    pub makespan_cycles: Option<u64>,
}

/// The clock of a predicted-time run: `predicted_timing.json`'s `core_clock_hz` in `dir`.
fn predicted_core_hz(dir: &Path) -> Option<f64> {
    let bytes = std::fs::read(dir.join("predicted_timing.json")).ok()?;
    let doc: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    doc.get("core_clock_hz")?.as_f64().filter(|hz| *hz > 0.0)
}

/// Which time a report's durations are.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Clock {
    /// The simulator's (or the device's) own clock.
    Recorded,
    /// The timing model's prediction, with its core clock when known.
    Predicted(Option<f64>),
}

impl Clock {
    /// Cycles of `ns` at the model's clock.
    fn cycles(self, ns: u128) -> Option<u64> {
        match self {
            Clock::Predicted(Some(hz)) => Some((ns as f64 * hz / 1e9).round() as u64),
            _ => None,
        }
    }

    /// ` (N cycles)` after a predicted duration, else nothing.
    fn suffix(self, ns: u128) -> String {
        self.cycles(ns)
            .map(|c| format!(" = {c} predicted cycles"))
            .unwrap_or_default()
    }
}

/// Why an observed-path task waited for its predecessor on the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blame {
    /// A `deps.json` predecessor (Simpler's `data-wait`).
    DataWait,
    /// The task before it on one of its cores (Simpler's `core-wait`).
    CoreWait,
}

impl Blame {
    /// Simpler's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::DataWait => "data-wait",
            Self::CoreWait => "core-wait",
        }
    }
}

/// One task's measured span.
#[derive(Clone, Debug, Default)]
struct Span {
    start: Ns,
    end: Ns,
    cores: Vec<u32>,
}

/// The analysis over `dir` (a directory, or a file in it).
pub fn analyze(dir: &Path) -> Result<CriticalPathReport, ToolError> {
    let dir = if dir.is_file() {
        crate::parent_dir(dir)
    } else {
        dir
    };
    let Some(deps_path) = crate::beside(
        dir,
        pto_dfx::deps::FILE_NAME,
        pto_dfx::compact::deps::FILE_NAME,
    ) else {
        return Err(ToolError::Missing {
            path: dir.join(pto_dfx::deps::FILE_NAME),
            hint: String::from(
                "the critical path needs the dependency graph; run with `--dep-gen`",
            ),
        });
    };
    let mut warnings = Vec::new();
    let graph = load::load_graph(&deps_path)?;
    warnings.extend(
        graph
            .problems
            .iter()
            .map(|p| format!("{}: {p}", deps_path.display())),
    );
    let graph = graph.value;
    let (names, name_problems) = names::resolve(dir, None, None, SiblingPolicy::Newest)?;
    if let Some(src) = &names.source {
        warnings.extend(
            name_problems
                .iter()
                .map(|p| format!("{}: {p}", src.display())),
        );
    }

    // Timing.
    let swimlane = [
        pto_dfx::compact::swimlane::FILE_NAME,
        pto_dfx::swimlane::FILE_NAME,
        "l2_perf_records.json",
    ]
    .iter()
    .map(|n| dir.join(n))
    .find(|p| p.is_file());
    if let Some(lane) = &swimlane {
        warnings.extend(pto_dfx::provenance::mixed_programs(
            dir,
            &[&deps_path, lane],
        ));
    }
    let mut spans: IdMap<u64, Span> = idmap::map_with_capacity(graph.tasks.len());
    // Every timed row: (core, start, end, task id).
    let mut rows: Vec<(u32, Ns, Ns, u64)> = Vec::new();
    let mut timing = None;
    if let Some(path) = &swimlane {
        let loaded = load::load_swimlane(path)?;
        timing.clone_from(&loaded.value.metadata.timing);
        warnings.extend(
            loaded
                .problems
                .iter()
                .map(|p| format!("{}: {p}", path.display())),
        );
        let timeline = perf::join(&loaded.value, path)?;
        warnings.extend(
            timeline
                .problems
                .iter()
                .map(|p| format!("{}: {p}", path.display())),
        );
        for t in &timeline.tasks {
            rows.push((t.core_id, t.start, t.end, t.task_id.raw()));
            let s = spans.entry(t.task_id.raw()).or_insert(Span {
                start: t.start,
                end: t.end,
                cores: Vec::new(),
            });
            s.start = s.start.min(t.start);
            s.end = s.end.max(t.end);
            if !s.cores.contains(&t.core_id) {
                s.cores.push(t.core_id);
            }
        }
    }

    let mut nodes = Nodes::build(&graph, &spans);
    nodes.set_core_preds(rows);
    let (static_path, cyclic) = nodes.static_path(swimlane.is_some());
    if cyclic > 0 {
        warnings.push(format!(
            "{}: {cyclic} task(s) sit on dependency cycles; the static path ignores them",
            deps_path.display()
        ));
    }
    let observed = nodes.observed_path();
    let label = dir
        .canonicalize()
        .ok()
        .as_deref()
        .and_then(Path::file_name)
        .or_else(|| dir.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let clock = if timing.as_deref() == Some("predicted") {
        Clock::Predicted(predicted_core_hz(dir))
    } else {
        Clock::Recorded
    };
    let makespan_cycles = clock.cycles(u128::from(nodes.makespan()));
    let markdown = render(
        &label,
        &graph,
        &nodes,
        &names,
        &static_path,
        &observed,
        swimlane.as_deref(),
        clock,
    );
    let output = dir.join(REPORT_FILE_NAME);
    let mut file = AtomicFile::create(&output)?;
    file.write_all(markdown.as_bytes())?;
    file.commit()?;
    let mut cpm_files = Vec::new();
    if let Some(trace) = newest_merged_trace(dir) {
        let observed_nodes: Vec<usize> = observed.iter().map(|s| s.node).collect();
        for (name, path) in [
            (CPM_STATIC_FILE_NAME, &static_path),
            (CPM_OBSERVED_FILE_NAME, &observed_nodes),
        ] {
            let out = dir.join(name);
            write_cpm_trace(&trace, &out, &nodes, path)?;
            cpm_files.push(out);
        }
    }
    Ok(CriticalPathReport {
        output,
        markdown,
        static_path: static_path.iter().map(|&i| nodes.ids[i]).collect(),
        observed_path: observed.iter().map(|s| nodes.ids[s.node]).collect(),
        observed_blame: observed.iter().map(|s| s.wait.map(|(_, b)| b)).collect(),
        cpm_files,
        warnings,
        timing,
        makespan_cycles,
    })
}

/// The newest `merged_swimlane*.json` in `dir` (by modification time, then name).
fn newest_merged_trace(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let ok = name.starts_with("merged_swimlane") && name.ends_with(".json");
            let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            ok.then(|| (meta.modified().ok(), name, e.path()))
        })
        .max_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)))
        .map(|(_, _, p)| p)
}

/// A copy of `trace` with the Worker View bars of tasks off `path` renamed
/// `·(<task>)` (see the module docs).
fn write_cpm_trace(
    trace: &Path,
    out: &Path,
    nodes: &Nodes,
    path: &[usize],
) -> Result<(), ToolError> {
    let invalid = |key: &str, reason: String| ToolError::Invalid {
        path: trace.to_path_buf(),
        key: key.to_string(),
        reason,
    };
    let bytes = pto_dfx::read_artifact(trace)?;
    let mut value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| invalid("traceEvents", format!("is not a readable trace: {e}")))?;
    drop(bytes);
    let on_path: std::collections::HashSet<u64> =
        path.iter().map(|&i| nodes.ids[i].raw()).collect();
    let mut has_bar: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let events = value
        .get_mut("traceEvents")
        .and_then(serde_json::Value::as_array_mut)
        .ok_or_else(|| invalid("traceEvents", String::from("is missing or not a list")))?;
    for ev in events.iter_mut() {
        let Some(obj) = ev.as_object_mut() else {
            continue;
        };
        let worker_bar = obj.get("pid").and_then(serde_json::Value::as_u64) == Some(4)
            && obj.get("ph").and_then(serde_json::Value::as_str) == Some("X");
        if !worker_bar {
            continue;
        }
        let Some(id) = obj
            .get("args")
            .and_then(|a| a.get("taskId"))
            .and_then(serde_json::Value::as_u64)
        else {
            continue;
        };
        if on_path.contains(&id) {
            has_bar.insert(id);
        } else {
            obj.insert(
                String::from("name"),
                serde_json::Value::String(format!("\u{b7}({})", TaskId(id))),
            );
        }
    }
    if let Some(&missing) = path
        .iter()
        .find(|&&i| nodes.spans[i].is_some() && !has_bar.contains(&nodes.ids[i].raw()))
    {
        return Err(invalid(
            "traceEvents",
            format!(
                "has no Worker View bar for critical task {}; convert this run's chip_swimlane_records.json again",
                nodes.ids[missing]
            ),
        ));
    }
    let mut text = serde_json::to_string_pretty(&value)
        .map_err(|e| invalid("traceEvents", format!("cannot be written: {e}")))?;
    text.push('\n');
    let mut file = AtomicFile::create(out)?;
    file.write_all(text.as_bytes())?;
    file.commit()?;
    Ok(())
}

/// The graph over dense indices.
struct Nodes {
    ids: Vec<TaskId>,
    /// `kernel_ids` of tasks in `tasks[]`; `None` for alloc pseudo-tasks.
    kernels: Vec<Option<[i32; 3]>>,
    spans: Vec<Option<Span>>,
    preds: Vec<Vec<usize>>,
    succs: Vec<Vec<usize>>,
    n_edges: usize,
    /// Each task's core predecessor (see the module docs).
    core_pred: Vec<Option<usize>>,
}

/// One step of the observed path.
struct Step {
    node: usize,
    /// Start minus the chosen predecessor's end, and why (`None` for the first task).
    wait: Option<(i128, Blame)>,
}

impl Nodes {
    fn build(graph: &TaskGraph, spans: &IdMap<u64, Span>) -> Self {
        let mut index: IdMap<u64, usize> = idmap::map_with_capacity(graph.tasks.len());
        let mut nodes = Nodes {
            ids: Vec::new(),
            kernels: Vec::new(),
            spans: Vec::new(),
            preds: Vec::new(),
            succs: Vec::new(),
            n_edges: 0,
            core_pred: Vec::new(),
        };
        let mut add = |id: TaskId, kernels: Option<[i32; 3]>, nodes: &mut Nodes| -> usize {
            *index.entry(id.raw()).or_insert_with(|| {
                nodes.ids.push(id);
                nodes.kernels.push(kernels);
                nodes.spans.push(spans.get(&id.raw()).cloned());
                nodes.preds.push(Vec::new());
                nodes.succs.push(Vec::new());
                nodes.ids.len() - 1
            })
        };
        for t in &graph.tasks {
            add(t.task_id, Some(t.kernel_ids), &mut nodes);
        }
        for &(p, s) in &graph.edges {
            if p == s {
                continue;
            }
            let a = add(p, None, &mut nodes);
            let b = add(s, None, &mut nodes);
            nodes.succs[a].push(b);
            nodes.preds[b].push(a);
            nodes.n_edges += 1;
        }
        nodes
    }

    /// Sets each task's core predecessor from the timed rows.
    fn set_core_preds(&mut self, mut rows: Vec<(u32, Ns, Ns, u64)>) {
        let index: HashMap<u64, usize> = self
            .ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.raw(), i))
            .collect();
        self.core_pred = vec![None; self.ids.len()];
        let mut best_end: Vec<Ns> = vec![0; self.ids.len()];
        rows.sort_unstable();
        let mut k = 0;
        while k < rows.len() {
            let core = rows[k].0;
            // The row with the latest end so far on this core: (end, node).
            let mut latest: Option<(Ns, usize)> = None;
            while k < rows.len() && rows[k].0 == core {
                let (_, _, end, id) = rows[k];
                k += 1;
                let Some(&v) = index.get(&id) else { continue };
                if let Some((e, u)) = latest.filter(|&(_, u)| u != v) {
                    if self.core_pred[v].is_none() || e > best_end[v] {
                        self.core_pred[v] = Some(u);
                        best_end[v] = e;
                    }
                }
                if latest.is_none_or(|(e, _)| end > e) {
                    latest = Some((end, v));
                }
            }
        }
    }

    /// First start to last end of the timed tasks.
    fn makespan(&self) -> Ns {
        let spans = self.spans.iter().flatten();
        let t0 = spans.clone().map(|s| s.start).min().unwrap_or(0);
        let t1 = spans.map(|s| s.end).max().unwrap_or(0);
        t1.saturating_sub(t0)
    }

    fn duration(&self, i: usize) -> Ns {
        self.spans[i]
            .as_ref()
            .map_or(0, |s| s.end.saturating_sub(s.start))
    }

    /// The longest weighted path (first task first) and the number of tasks
    /// left out because they sit on cycles.
    fn static_path(&self, timed: bool) -> (Vec<usize>, usize) {
        let n = self.ids.len();
        let weight = |i: usize| -> u128 {
            if timed {
                u128::from(self.duration(i))
            } else {
                u128::from(self.kernels[i].is_some())
            }
        };
        let mut indeg: Vec<usize> = self.preds.iter().map(Vec::len).collect();
        let mut queue: std::collections::VecDeque<usize> =
            (0..n).filter(|&v| indeg[v] == 0).collect();
        let mut dist = vec![0u128; n];
        let mut from: Vec<Option<usize>> = vec![None; n];
        let mut done = 0;
        while let Some(v) = queue.pop_front() {
            done += 1;
            dist[v] += weight(v);
            for &u in &self.succs[v] {
                if dist[v] > dist[u] || (dist[v] == dist[u] && from[u].is_none()) {
                    dist[u] = dist[v];
                    from[u] = Some(v);
                }
                indeg[u] -= 1;
                if indeg[u] == 0 {
                    queue.push_back(u);
                }
            }
        }
        // Nodes on cycles never reach indegree 0; their dist is incomplete.
        let settled: Vec<bool> = indeg.iter().map(|&d| d == 0).collect();
        let Some(end) = (0..n)
            .filter(|&v| settled[v])
            .max_by(|&a, &b| dist[a].cmp(&dist[b]).then(b.cmp(&a)))
        else {
            return (Vec::new(), n - done);
        };
        let mut path = vec![end];
        let mut cur = end;
        while let Some(p) = from[cur] {
            path.push(p);
            cur = p;
        }
        path.reverse();
        (path, n - done)
    }

    /// From the last task to finish, back through the predecessor that
    /// finished last (first task first).
    fn observed_path(&self) -> Vec<Step> {
        let Some(last) = (0..self.ids.len())
            .filter(|&i| self.spans[i].is_some())
            .max_by_key(|&i| {
                (
                    self.spans[i].as_ref().map_or(0, |s| s.end),
                    std::cmp::Reverse(i),
                )
            })
        else {
            return Vec::new();
        };
        let mut steps = Vec::new();
        let mut seen = vec![false; self.ids.len()];
        let mut cur = last;
        loop {
            seen[cur] = true;
            let data = self.preds[cur]
                .iter()
                .copied()
                .filter(|&p| !seen[p])
                .filter_map(|p| self.spans[p].as_ref().map(|s| (s.end, p)))
                .max_by_key(|&(end, p)| (end, std::cmp::Reverse(p)))
                .map(|(end, p)| (end, p, Blame::DataWait));
            let core = self
                .core_pred
                .get(cur)
                .copied()
                .flatten()
                .filter(|&p| !seen[p])
                .and_then(|p| self.spans[p].as_ref().map(|s| (s.end, p, Blame::CoreWait)));
            // The later end wins; a data predecessor wins a tie.
            let pred = match (data, core) {
                (Some(d), Some(c)) if c.0 > d.0 => Some(c),
                (Some(d), _) => Some(d),
                (None, c) => c,
            };
            let start = self.spans[cur].as_ref().map_or(0, |s| s.start);
            match pred {
                Some((end, p, blame)) => {
                    steps.push(Step {
                        node: cur,
                        wait: Some((i128::from(start) - i128::from(end), blame)),
                    });
                    cur = p;
                }
                None => {
                    steps.push(Step {
                        node: cur,
                        wait: None,
                    });
                    break;
                }
            }
        }
        // Each wait was recorded on the successor of its edge, so after the
        // reversal it still sits on the task it delayed.
        steps.reverse();
        steps
    }

    fn kernel(&self, i: usize, names: &KernelNames) -> String {
        match self.kernels[i] {
            None => String::from("alloc"),
            Some(k) => match k.iter().copied().find(|&x| x >= 0) {
                Some(id) => names.label(i64::from(id)),
                None => String::from("dummy"),
            },
        }
    }
}

/// The kernel family: the name without a `_<digits>` and/or `_aic`/`_aiv` suffix.
pub fn kernel_family(name: &str) -> &str {
    let mut s = name;
    for suffix in ["_aic", "_aiv"] {
        if let Some(stripped) = s.strip_suffix(suffix) {
            s = stripped;
            break;
        }
    }
    if let Some(pos) = s.rfind('_') {
        let tail = &s[pos + 1..];
        if !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit()) && pos > 0 {
            s = &s[..pos];
        }
    }
    s
}

fn us(ns: u128) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}

fn signed_us(ns: i128) -> String {
    format!("{:.3}", ns as f64 / 1000.0)
}

fn pct(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:.1}%", part * 100.0 / whole)
    } else {
        String::from("-")
    }
}

/// Path tables show at most this many rows at each end.
pub const TABLE_ENDS: usize = 100;

/// `None` to show row `k` of `n`; `Some(skipped)` for a hidden row, with the
/// number of hidden rows on the first one (and 0 on the others).
fn elide(k: usize, n: usize) -> Option<usize> {
    if n <= 2 * TABLE_ENDS || k < TABLE_ENDS || k >= n - TABLE_ENDS {
        None
    } else if k == TABLE_ENDS {
        Some(n - 2 * TABLE_ENDS)
    } else {
        Some(0)
    }
}

/// A Markdown table cell (a name from an input file): no raw HTML, control characters or
/// broken cells (see [`pto_dfx::printable::markdown`]).
fn cell(text: &str) -> String {
    pto_dfx::printable::markdown(text)
}

/// What every part of the report reads.
struct ReportInput<'a> {
    graph: &'a TaskGraph,
    nodes: &'a Nodes,
    names: &'a KernelNames,
    static_path: &'a [usize],
    observed: &'a [Step],
    /// Whether a swimlane gave the tasks their times.
    timed: bool,
    clock: Clock,
    /// The first timed start.
    t0: Ns,
    /// First timed start to last end.
    makespan: u128,
}

impl ReportInput<'_> {
    /// Task `i`'s cores, start, end and duration cells (µs since `t0`), or dashes.
    fn span_cells(&self, i: usize) -> String {
        let t0 = self.t0;
        match &self.nodes.spans[i] {
            Some(s) => {
                let cores: Vec<String> = s.cores.iter().map(u32::to_string).collect();
                format!(
                    "{} | {} | {} | {}",
                    cores.join(", "),
                    us(u128::from(s.start.saturating_sub(t0))),
                    us(u128::from(s.end.saturating_sub(t0))),
                    us(u128::from(s.end.saturating_sub(s.start)))
                )
            }
            None => String::from("- | - | - | -"),
        }
    }
}

/// The report: summary, kernel families, the static path and (timed) the observed one.
#[allow(clippy::too_many_arguments)]
fn render(
    label: &str,
    graph: &TaskGraph,
    nodes: &Nodes,
    names: &KernelNames,
    static_path: &[usize],
    observed: &[Step],
    swimlane: Option<&Path>,
    clock: Clock,
) -> String {
    let t0 = nodes
        .spans
        .iter()
        .flatten()
        .map(|s| s.start)
        .min()
        .unwrap_or(0);
    let t_end = nodes
        .spans
        .iter()
        .flatten()
        .map(|s| s.end)
        .max()
        .unwrap_or(0);
    let r = ReportInput {
        graph,
        nodes,
        names,
        static_path,
        observed,
        timed: swimlane.is_some(),
        clock,
        t0,
        makespan: u128::from(t_end.saturating_sub(t0)),
    };
    let mut out = summary_head(label, &r);
    if r.timed {
        push_timed_summary(&mut out, &r);
    } else {
        push_untimed_summary(&mut out, &r);
    }
    push_families(&mut out, &r);
    push_static_table(&mut out, &r);
    if r.timed {
        push_observed_table(&mut out, &r);
    }
    if let Some(p) = swimlane {
        let _ = writeln!(
            out,
            "\nTimes are µs since the run's first timed start, from `{}`.",
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
    }
    out
}

/// The title, the counts, and whether the times are predicted.
fn summary_head(label: &str, r: &ReportInput<'_>) -> String {
    let (graph, nodes, clock) = (r.graph, r.nodes, r.clock);
    let n_timed = nodes.spans.iter().filter(|s| s.is_some()).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Critical path: `{}`\n",
        pto_dfx::printable::printable(label)
            .replace('`', "'")
            .replace(['\n', '\r', '\t'], " ")
    );
    let _ = writeln!(
        out,
        "- tasks: {} ({} timed) | dependency edges: {} unique ({} annotated)",
        nodes.ids.len(),
        n_timed,
        nodes.n_edges,
        graph.n_annotated_edges
    );
    if let Clock::Predicted(hz) = clock {
        let _ = writeln!(
            out,
            "- **timing: predicted device time** (`--timing predicted`): every duration is the timing model's schedule{}, not the simulator's host time (docs/TIMING.md)",
            hz.map(|hz| format!(" at its {:.2} GHz core clock", hz / 1e9))
                .unwrap_or_default()
        );
    }
    out
}

/// The makespan, the static path's time, and the observed path's time split into
/// compute, stall (data-wait, core-wait) and the front gap, which tile the makespan.
fn push_timed_summary(out: &mut String, r: &ReportInput<'_>) {
    let (nodes, static_path, observed, clock, t0, makespan) = (
        r.nodes,
        r.static_path,
        r.observed,
        r.clock,
        r.t0,
        r.makespan,
    );
    let _ = writeln!(
        out,
        "- **makespan**: {} µs{} (first start to last end of the timed tasks)",
        us(makespan),
        clock.suffix(makespan)
    );
    let static_time: u128 = static_path
        .iter()
        .map(|&i| u128::from(nodes.duration(i)))
        .sum();
    let _ = writeln!(
            out,
            "- **static critical path** (longest over `deps.json` edges, weighted by measured duration): {} µs{} over {} tasks ({} of makespan)",
            us(static_time),
            clock.suffix(static_time),
            static_path.len(),
            pct(static_time as f64, makespan as f64)
        );
    let compute: u128 = observed
        .iter()
        .map(|s| u128::from(nodes.duration(s.node)))
        .sum();
    let wait_of = |b: Blame| -> i128 {
        observed
            .iter()
            .filter_map(|s| s.wait)
            .filter(|w| w.1 == b)
            .map(|w| w.0)
            .sum()
    };
    let (data_wait, core_wait) = (wait_of(Blame::DataWait), wait_of(Blame::CoreWait));
    let waits = data_wait + core_wait;
    let front = observed
        .first()
        .and_then(|s| nodes.spans[s.node].as_ref())
        .map_or(0, |s| i128::from(s.start) - i128::from(t0));
    let _ = writeln!(
            out,
            "- **observed critical path** (from the last task to finish, back through the predecessor that finished last): {} tasks",
            observed.len()
        );
    let m = makespan as f64;
    let _ = writeln!(
        out,
        "  - compute: {} µs{} ({})",
        us(compute),
        clock.suffix(compute),
        pct(compute as f64, m)
    );
    let _ = writeln!(
        out,
        "  - stall (start minus the chosen predecessor's end): {} µs ({})",
        signed_us(waits),
        pct(waits as f64, m)
    );
    let _ = writeln!(
        out,
        "    - data-wait: {} µs ({})",
        signed_us(data_wait),
        pct(data_wait as f64, m)
    );
    let _ = writeln!(
        out,
        "    - core-wait: {} µs ({})",
        signed_us(core_wait),
        pct(core_wait as f64, m)
    );
    let _ = writeln!(
        out,
        "  - front gap (before the path's first task): {} µs ({})",
        signed_us(front),
        pct(front as f64, m)
    );
    let total = compute as i128 + waits + front;
    let _ = writeln!(
        out,
        "  - tiling check: compute + stall + front gap = {} µs vs makespan {} µs ({})",
        signed_us(total),
        us(makespan),
        if total == makespan as i128 {
            "exact"
        } else {
            "not exact: the path does not end at the last finish"
        }
    );
}

/// Without a swimlane: the static path's length in tasks, and why there is no observed path.
fn push_untimed_summary(out: &mut String, r: &ReportInput<'_>) {
    let (nodes, static_path) = (r.nodes, r.static_path);
    let _ = writeln!(
        out,
        "- **static critical path** (longest over `deps.json` edges, unit weights): {} tasks",
        static_path
            .iter()
            .filter(|&&i| nodes.kernels[i].is_some())
            .count()
    );
    let _ = writeln!(
            out,
            "- **observed critical path**: not available, there is no `chip_swimlane_records.json` here (run with `--swimlane`)"
        );
}

/// Per kernel family: tasks (and, timed, µs) on each path.
fn push_families(out: &mut String, r: &ReportInput<'_>) {
    let (nodes, names, static_path, observed, timed) =
        (r.nodes, r.names, r.static_path, r.observed, r.timed);
    let mut families: BTreeMap<String, [u128; 4]> = BTreeMap::new();
    for &i in static_path {
        let e = families
            .entry(kernel_family(&nodes.kernel(i, names)).to_string())
            .or_default();
        e[0] += 1;
        e[1] += u128::from(nodes.duration(i));
    }
    for s in observed {
        let e = families
            .entry(kernel_family(&nodes.kernel(s.node, names)).to_string())
            .or_default();
        e[2] += 1;
        e[3] += u128::from(nodes.duration(s.node));
    }
    let _ = writeln!(out, "\n## Kernel families on the paths\n");
    if timed {
        let _ = writeln!(
            out,
            "| kernel family | static: tasks | static: µs | observed: tasks | observed: µs |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|");
        for (f, v) in &families {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                cell(f),
                v[0],
                us(v[1]),
                v[2],
                us(v[3])
            );
        }
    } else {
        let _ = writeln!(out, "| kernel family | static: tasks |");
        let _ = writeln!(out, "|---|---:|");
        for (f, v) in &families {
            let _ = writeln!(out, "| {} | {} |", cell(f), v[0]);
        }
    }
}

/// The static path's table (elided past 200 rows).
fn push_static_table(out: &mut String, r: &ReportInput<'_>) {
    let (nodes, names, static_path, timed) = (r.nodes, r.names, r.static_path, r.timed);
    let _ = writeln!(out, "\n## Static critical path\n");
    if timed {
        let _ = writeln!(
            out,
            "| # | task | kernel | cores | start µs | end µs | duration µs |"
        );
        let _ = writeln!(out, "|---:|---|---|---|---:|---:|---:|");
    } else {
        let _ = writeln!(out, "| # | task | kernel |");
        let _ = writeln!(out, "|---:|---|---|");
    }
    for (k, &i) in static_path.iter().enumerate() {
        if let Some(skip) = elide(k, static_path.len()) {
            if skip > 0 {
                let _ = writeln!(
                    out,
                    "| ... | {skip} more tasks | |{}",
                    if timed { " | | | |" } else { "" }
                );
            }
            continue;
        }
        let head = format!(
            "| {} | {} | {}",
            k + 1,
            nodes.ids[i],
            cell(&nodes.kernel(i, names))
        );
        if timed {
            let _ = writeln!(out, "{head} | {} |", r.span_cells(i));
        } else {
            let _ = writeln!(out, "{head} |");
        }
    }
}

/// The observed path's table with each task's wait and blame (elided past 200 rows).
fn push_observed_table(out: &mut String, r: &ReportInput<'_>) {
    let (nodes, names, observed) = (r.nodes, r.names, r.observed);
    let _ = writeln!(out, "\n## Observed critical path\n");
    let _ = writeln!(
        out,
        "| # | task | kernel | cores | start µs | end µs | duration µs | wait before µs | blame |"
    );
    let _ = writeln!(out, "|---:|---|---|---|---:|---:|---:|---:|---|");
    for (k, s) in observed.iter().enumerate() {
        if let Some(skip) = elide(k, observed.len()) {
            if skip > 0 {
                let _ = writeln!(out, "| ... | {skip} more tasks | | | | | | | |");
            }
            continue;
        }
        let (wait, blame) = match s.wait {
            Some((w, b)) => (signed_us(w), b.as_str()),
            None => (String::from("-"), "front-gap"),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {wait} | {blame} |",
            k + 1,
            nodes.ids[s.node],
            cell(&nodes.kernel(s.node, names)),
            r.span_cells(s.node)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// t0 → r1t0 → r1t1 and t0 → r1t1; alloc r2t0 → t0. 1 GHz: cycles are ns.
    const RECORDS: &str = r#"{"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 2, "core_types": ["aic", "aiv"]},
      "aicore_tasks": [[0, 0, 1, 1000, 2000, 0], [1, 4294967296, 1, 2100, 2600, 0], [0, 4294967297, 2, 2700, 4000, 0], [1, 4294967297, 2, 2650, 3900, 0]],
      "aicpu_tasks": [[0, 1, 990, 2010], [1, 1, 2090, 2610], [0, 2, 2690, 4010], [1, 2, 2640, 3910]]}"#;
    const DEPS: &str = r#"{"tasks":[{"task_id":"0","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]},{"task_id":"4294967296","scope":"auto","kernel_ids":[-1,1,-1],"block_num":1,"args":[]},{"task_id":"4294967297","scope":"auto","kernel_ids":[2,3,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"8589934592","succ":"0","arg":0,"source":"creator","flags":["wait","retain"]},{"pred":"0","succ":"4294967296","arg":0,"source":"tensormap","flags":["wait"]},{"pred":"4294967296","succ":"4294967297","arg":0,"source":"tensormap","flags":["wait"]},{"pred":"0","succ":"4294967297","arg":1,"source":"tensormap","flags":["wait"]}]}"#;

    fn setup(records: bool) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("deps.json"), DEPS).unwrap();
        if records {
            std::fs::write(dir.path().join("chip_swimlane_records.json"), RECORDS).unwrap();
        }
        std::fs::write(
            dir.path().join("name_map_x.json"),
            r#"{"0": "qk_matmul_0", "1": "softmax|x", "2": "mix_aic", "3": "mix_aiv"}"#,
        )
        .unwrap();
        dir
    }

    #[test]
    fn timed_paths_and_exact_tiling() {
        let dir = setup(true);
        let report = analyze(dir.path()).unwrap();
        let ids: Vec<String> = report.static_path.iter().map(TaskId::to_string).collect();
        assert_eq!(ids, ["r2t0", "t0", "r1t0", "r1t1"]);
        let ids: Vec<String> = report.observed_path.iter().map(TaskId::to_string).collect();
        assert_eq!(ids, ["t0", "r1t0", "r1t1"]);
        let md = &report.markdown;
        assert_eq!(report.output, dir.path().join(REPORT_FILE_NAME));
        assert_eq!(std::fs::read_to_string(&report.output).unwrap(), *md);
        // Makespan 1000..4000 ns; static: 1000 + 500 + 1350 ns.
        assert!(md.contains("- **makespan**: 3.000 µs"), "{md}");
        assert!(
            md.contains("2.850 µs over 4 tasks (95.0% of makespan)"),
            "{md}"
        );
        assert!(md.contains("  - compute: 2.850 µs (95.0%)"), "{md}");
        // Waits: r1t0 starts 100 ns after t0; r1t1 starts 50 ns after r1t0.
        assert!(
            md.contains("  - stall (start minus the chosen predecessor's end): 0.150 µs (5.0%)\n    - data-wait: 0.150 µs (5.0%)\n    - core-wait: 0.000 µs (0.0%)\n"),
            "{md}"
        );
        assert!(md.contains("(exact)"), "{md}");
        assert!(
            md.contains(
                "| 3 | r1t1 | mix_aic | 0, 1 | 1.650 | 3.000 | 1.350 | 0.050 | data-wait |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 1 | t0 | qk_matmul_0 | 0 | 0.000 | 1.000 | 1.000 | - | front-gap |"),
            "{md}"
        );
        assert!(report.cpm_files.is_empty(), "no merged trace here");
        assert!(md.contains("| softmax\\|x |"), "{md}");
        assert!(md.contains("| qk_matmul | 1 | 1.000 | 1 | 1.000 |"), "{md}");
    }

    /// Kernel names come from an editable file: in the Markdown report they carry no raw
    /// HTML and no terminal escape.
    #[test]
    fn core_waits_and_cpm_traces() {
        // r1t2 has no data predecessor; it waits for r1t1 on core 1.
        let dir = setup(true);
        let records = RECORDS
            .replace(
                ", [1, 4294967297, 2, 2650, 3900, 0]]",
                ", [1, 4294967297, 2, 2650, 3900, 0], [1, 4294967298, 3, 4200, 4500, 0]]",
            )
            .replace(
                ", [1, 2, 2640, 3910]]",
                ", [1, 2, 2640, 3910], [1, 3, 4100, 4510]]",
            );
        std::fs::write(dir.path().join("chip_swimlane_records.json"), records).unwrap();
        let deps = DEPS.replace(
            r#"],"tensors""#,
            r#",{"task_id":"4294967298","scope":"auto","kernel_ids":[-1,1,-1],"block_num":1,"args":[]}],"tensors""#,
        );
        std::fs::write(dir.path().join("deps.json"), deps).unwrap();
        let converted =
            crate::swimlane_converter::convert(&crate::swimlane_converter::ConvertOptions {
                input: &dir.path().join("chip_swimlane_records.json"),
                output: Some(&dir.path().join("merged_swimlane.json")),
                deps: None,
                func_names: None,
                kernel_config: None,
            })
            .unwrap();
        let report = analyze(dir.path()).unwrap();
        let ids: Vec<String> = report.observed_path.iter().map(TaskId::to_string).collect();
        assert_eq!(ids, ["t0", "r1t0", "r1t1", "r1t2"]);
        assert_eq!(
            report.observed_blame,
            [
                None,
                Some(Blame::DataWait),
                Some(Blame::DataWait),
                Some(Blame::CoreWait)
            ]
        );
        let md = &report.markdown;
        // r1t2 starts at 4200; r1t1, before it on core 1, ends at 4000 (its last row).
        assert!(md.contains("    - core-wait: 0.200 µs (5.7%)\n"), "{md}");
        assert!(md.contains("| 0.200 | core-wait |"), "{md}");
        assert!(md.contains("(exact)"), "{md}");

        assert_eq!(
            report.cpm_files,
            [
                dir.path().join(CPM_STATIC_FILE_NAME),
                dir.path().join(CPM_OBSERVED_FILE_NAME)
            ]
        );
        let read = |p: &Path| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
        };
        let trace = read(&converted.output);
        let names = |v: &serde_json::Value| -> Vec<(u64, String)> {
            v["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["pid"] == 4 && e["ph"] == "X" && e["args"]["taskId"].is_u64())
                .map(|e| {
                    (
                        e["args"]["taskId"].as_u64().unwrap(),
                        e["name"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        // The static path (r2t0, t0, r1t0, r1t1) keeps its names; r1t2 is dimmed.
        let st = names(&read(&report.cpm_files[0]));
        let before = names(&trace);
        assert_eq!(st.len(), before.len());
        for ((id, name), (_, old)) in st.iter().zip(&before) {
            if *id == 4294967298 {
                assert_eq!(name, "\u{b7}(r1t2)");
            } else {
                assert_eq!(name, old);
            }
        }
        // The observed path covers every timed task: nothing renamed.
        assert_eq!(names(&read(&report.cpm_files[1])), before);
        let text = std::fs::read_to_string(&report.cpm_files[0]).unwrap();
        assert!(
            text.ends_with("}\n") && text.contains("\n  \"traceEvents\": [\n"),
            "indent 2"
        );
        assert!(text.contains("\u{b7}(r1t2)"), "non-ASCII kept");

        // A trace from another run: a critical task has no bar.
        std::fs::write(
            dir.path().join("merged_swimlane.json"),
            r#"{"traceEvents": [{"pid": 4, "ph": "X", "name": "x", "args": {"taskId": 99}}]}"#,
        )
        .unwrap();
        let msg = analyze(dir.path()).unwrap_err().to_string();
        assert!(
            msg.contains("no Worker View bar for critical task"),
            "{msg}"
        );
    }

    #[test]
    fn hostile_names_are_escaped_in_the_report() {
        let dir = setup(true);
        std::fs::write(
            dir.path().join("name_map_x.json"),
            r#"{"0": "<img src=x onerror=alert(1)>", "1": "k\u001b[2J", "2": "a", "3": "b"}"#,
        )
        .unwrap();
        let md = analyze(dir.path()).unwrap().markdown;
        assert!(!md.contains('<') && !md.contains('\u{1b}'), "{md}");
        assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"), "{md}");
        assert!(md.contains("k\\\\u{001b}[2J"), "{md}");
    }

    #[test]
    fn without_swimlane_uses_unit_weights() {
        let dir = setup(false);
        let report = analyze(dir.path()).unwrap();
        assert_eq!(report.static_path.len(), 4);
        assert!(report.observed_path.is_empty());
        assert!(
            report.markdown.contains("unit weights): 3 tasks"),
            "{}",
            report.markdown
        );
        assert!(report.markdown.contains("not available"));
    }

    #[test]
    fn missing_deps_and_bad_swimlane_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let msg = analyze(dir.path()).unwrap_err().to_string();
        assert!(
            msg.contains("deps.json not found") && msg.contains("--dep-gen"),
            "{msg}"
        );
        let dir = setup(false);
        std::fs::write(
            dir.path().join("chip_swimlane_records.json"),
            "{\"chip_swimlane_level\": 2}",
        )
        .unwrap();
        let msg = analyze(dir.path()).unwrap_err().to_string();
        assert!(
            msg.contains("chip_swimlane_records.json") && msg.contains("`metadata`"),
            "{msg}"
        );
    }

    #[test]
    fn long_tables_keep_their_ends() {
        assert_eq!(elide(5, 10), None);
        let n = 2 * TABLE_ENDS + 7;
        assert_eq!(elide(TABLE_ENDS - 1, n), None);
        assert_eq!(elide(TABLE_ENDS, n), Some(7));
        assert_eq!(elide(TABLE_ENDS + 6, n), Some(0));
        assert_eq!(elide(TABLE_ENDS + 7, n), None);
    }

    #[test]
    fn families() {
        assert_eq!(kernel_family("qk_matmul_3"), "qk_matmul");
        assert_eq!(kernel_family("qk_matmul_3_aic"), "qk_matmul");
        assert_eq!(kernel_family("mix_aiv"), "mix");
        assert_eq!(kernel_family("_7"), "_7");
        assert_eq!(kernel_family("plain"), "plain");
    }
}
