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
//!   last, walk back through the predecessor (a `deps.json` edge) that
//!   finished last, until a task has no timed predecessor. Its time splits
//!   exactly into compute (the tasks' durations), dependency waits (each
//!   task's start minus its chosen predecessor's end; negative when they
//!   overlap) and the front gap (the first task's start minus the run's first
//!   start), which add up to the makespan.
//!
//! Kernel families (the name without a `_<n>` / `_aic` / `_aiv` suffix)
//! summarize where the path's time goes. The path tables list every task
//! up to 200 rows, else the first and last [`TABLE_ENDS`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::atomic::AtomicFile;
use crate::task_id::TaskId;
use crate::tools::error::ToolError;
use crate::tools::idmap::{self, IdMap};
use crate::tools::load::{self, TaskGraph};
use crate::tools::names::{self, KernelNames, SiblingPolicy};
use crate::tools::perf::{self, Ns};

/// The report's file name.
pub const REPORT_FILE_NAME: &str = "critical_path_report.md";

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
    /// Recoverable damage and caveats, each naming its file.
    pub warnings: Vec<String>,
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
        super::parent_dir(dir)
    } else {
        dir
    };
    let deps_path = dir.join(crate::deps::FILE_NAME);
    if !deps_path.is_file() {
        return Err(ToolError::Missing {
            path: deps_path,
            hint: String::from(
                "the critical path needs the dependency graph; run with `--dep-gen`",
            ),
        });
    }
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
    let swimlane = [crate::swimlane::FILE_NAME, "l2_perf_records.json"]
        .iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file());
    let mut spans: IdMap<u64, Span> = idmap::map_with_capacity(graph.tasks.len());
    if let Some(path) = &swimlane {
        let loaded = load::load_swimlane(path)?;
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

    let nodes = Nodes::build(&graph, &spans);
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
    let markdown = render(
        &label,
        &graph,
        &nodes,
        &names,
        &static_path,
        &observed,
        swimlane.as_deref(),
    );
    let output = dir.join(REPORT_FILE_NAME);
    let mut file = AtomicFile::create(&output)?;
    file.write_all(markdown.as_bytes())?;
    file.commit()?;
    Ok(CriticalPathReport {
        output,
        markdown,
        static_path: static_path.iter().map(|&i| nodes.ids[i]).collect(),
        observed_path: observed.iter().map(|s| nodes.ids[s.node]).collect(),
        warnings,
    })
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
}

/// One step of the observed path.
struct Step {
    node: usize,
    /// Start minus the chosen predecessor's end (`None` for the first task).
    wait: Option<i128>,
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
            let pred = self.preds[cur]
                .iter()
                .copied()
                .filter(|&p| !seen[p])
                .filter_map(|p| self.spans[p].as_ref().map(|s| (s.end, p)))
                .max_by_key(|&(end, p)| (end, std::cmp::Reverse(p)));
            let start = self.spans[cur].as_ref().map_or(0, |s| s.start);
            match pred {
                Some((end, p)) => {
                    steps.push(Step {
                        node: cur,
                        wait: Some(i128::from(start) - i128::from(end)),
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
/// broken cells (see [`crate::printable::markdown`]).
fn cell(text: &str) -> String {
    crate::printable::markdown(text)
}

#[allow(clippy::too_many_arguments)]
fn render(
    label: &str,
    graph: &TaskGraph,
    nodes: &Nodes,
    names: &KernelNames,
    static_path: &[usize],
    observed: &[Step],
    swimlane: Option<&Path>,
) -> String {
    let timed = swimlane.is_some();
    let n_timed = nodes.spans.iter().filter(|s| s.is_some()).count();
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
    let makespan = u128::from(t_end.saturating_sub(t0));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Critical path: `{}`\n",
        crate::printable::printable(label)
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
    if timed {
        let _ = writeln!(
            out,
            "- **makespan**: {} µs (first start to last end of the timed tasks)",
            us(makespan)
        );
        let static_time: u128 = static_path
            .iter()
            .map(|&i| u128::from(nodes.duration(i)))
            .sum();
        let _ = writeln!(
            out,
            "- **static critical path** (longest over `deps.json` edges, weighted by measured duration): {} µs over {} tasks ({} of makespan)",
            us(static_time),
            static_path.len(),
            pct(static_time as f64, makespan as f64)
        );
        let compute: u128 = observed
            .iter()
            .map(|s| u128::from(nodes.duration(s.node)))
            .sum();
        let waits: i128 = observed.iter().filter_map(|s| s.wait).sum();
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
            "  - compute: {} µs ({})",
            us(compute),
            pct(compute as f64, m)
        );
        let _ = writeln!(
            out,
            "  - dependency wait (start minus the predecessor's end): {} µs ({})",
            signed_us(waits),
            pct(waits as f64, m)
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
            "  - tiling check: compute + wait + front gap = {} µs vs makespan {} µs ({})",
            signed_us(total),
            us(makespan),
            if total == makespan as i128 {
                "exact"
            } else {
                "not exact: the path does not end at the last finish"
            }
        );
    } else {
        let _ =
            writeln!(
            out,
            "- **static critical path** (longest over `deps.json` edges, unit weights): {} tasks",
            static_path.iter().filter(|&&i| nodes.kernels[i].is_some()).count()
        );
        let _ = writeln!(
            out,
            "- **observed critical path**: not available, there is no `chip_swimlane_records.json` here (run with `--swimlane`)"
        );
    }

    // Kernel families.
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

    let span_cells = |i: usize| -> String {
        match &nodes.spans[i] {
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
    };
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
            let _ = writeln!(out, "{head} | {} |", span_cells(i));
        } else {
            let _ = writeln!(out, "{head} |");
        }
    }
    if timed {
        let _ = writeln!(out, "\n## Observed critical path\n");
        let _ = writeln!(
            out,
            "| # | task | kernel | cores | start µs | end µs | duration µs | wait before µs |"
        );
        let _ = writeln!(out, "|---:|---|---|---|---:|---:|---:|---:|");
        for (k, s) in observed.iter().enumerate() {
            if let Some(skip) = elide(k, observed.len()) {
                if skip > 0 {
                    let _ = writeln!(out, "| ... | {skip} more tasks | | | | | | |");
                }
                continue;
            }
            let wait = s.wait.map_or_else(|| String::from("-"), signed_us);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {wait} |",
                k + 1,
                nodes.ids[s.node],
                cell(&nodes.kernel(s.node, names)),
                span_cells(s.node)
            );
        }
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
            md.contains("  - dependency wait (start minus the predecessor's end): 0.150 µs (5.0%)"),
            "{md}"
        );
        assert!(md.contains("(exact)"), "{md}");
        assert!(
            md.contains("| 3 | r1t1 | mix_aic | 0, 1 | 1.650 | 3.000 | 1.350 | 0.050 |"),
            "{md}"
        );
        assert!(md.contains("| softmax\\|x |"), "{md}");
        assert!(md.contains("| qk_matmul | 1 | 1.000 | 1 | 1.000 |"), "{md}");
    }

    /// Kernel names come from an editable file: in the Markdown report they carry no raw
    /// HTML and no terminal escape.
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
