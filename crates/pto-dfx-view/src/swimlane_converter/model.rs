//! The converter's model: every slice placed on its track (sub-lanes where slices would
//! partly overlap), event ids, flow anchors and the dependency graph, before anything is
//! written.

use std::collections::HashMap;

use super::{PID_ORCH, PID_SCHED, PID_SCHED_VIEW, PID_WORKER, TID_AICPU, TID_H2D, TID_QUEUE};
use crate::load::{GraphTask, TaskGraph};
use crate::names::KernelNames;
use crate::perf::{Ns, Timeline};
use pto_base::idmap::{self, IdMap};
use pto_dfx::core_type::CoreType;
use pto_dfx::swimlane::SchedPhaseKind;
use pto_dfx::task_id::TaskId;

/// Where a slice went: its track and interval.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Placed {
    pub(super) tid: u64,
    pub(super) ts: Ns,
    pub(super) end: Ns,
}

impl Placed {
    /// The point of the slice nearest `t`: `t` itself from the slice's start
    /// up to, not including, its end (the end is the next slice's start
    /// when slices touch); a zero-length slice has only its start.
    pub(super) fn at(&self, t: Ns) -> Ns {
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
pub(super) fn flow_points(
    from: &Placed,
    want_from: Ns,
    to: &Placed,
    want_to: Ns,
) -> Option<(Ns, Ns)> {
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
pub(super) fn assign_lanes(
    items: &mut [(Ns, Ns, usize)],
    mut out: impl FnMut(usize, usize),
) -> usize {
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

pub(super) fn core_name(t: CoreType, core: u32) -> String {
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
pub(super) struct Anchor {
    pub(super) place: Placed,
    /// The end that decides `hb_violation` (the kernel end of a task bar).
    pub(super) end: Ns,
    /// The slice's event id (`bind_id`).
    pub(super) event: u64,
}

/// The dependency graph over dense node ids: every task id of an edge,
/// successors as CSR lists in first-seen edge order, predecessors ordered
/// by each predecessor's first edge (Simpler's fanin order).
#[derive(Default)]
pub(super) struct GraphCsr {
    pub(super) index: IdMap<u64, usize>,
    pub(super) ids: Vec<TaskId>,
    pub(super) succ_off: Vec<usize>,
    pub(super) succ: Vec<usize>,
    pub(super) pred_off: Vec<usize>,
    pub(super) pred: Vec<usize>,
}

impl GraphCsr {
    pub(super) fn build(edges: &[(TaskId, TaskId)]) -> Self {
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

    pub(super) fn node(&self, id: TaskId) -> Option<usize> {
        self.index.get(&id.raw()).copied()
    }

    pub(super) fn succs(&self, k: usize) -> &[usize] {
        &self.succ[self.succ_off[k]..self.succ_off[k + 1]]
    }

    pub(super) fn preds(&self, k: usize) -> &[usize] {
        &self.pred[self.pred_off[k]..self.pred_off[k + 1]]
    }
}

/// What is placed from the swimlane records alone, before `deps.json` is needed: the row
/// groups, the Worker and Scheduler Views, the scheduler phases and their lanes (the first
/// of the trace's thread names). The converter places it while `deps.json` is still being
/// read.
pub(super) struct Layout {
    groups: Vec<(usize, usize)>,
    group_of: IdMap<u64, usize>,
    worker: Vec<Placed>,
    has_sched_view: bool,
    sched_view: Vec<Option<Placed>>,
    phases: Vec<Vec<Placed>>,
    markers: Vec<(usize, usize, Placed)>,
    threads: Threads,
}

impl Layout {
    /// Places what needs no `deps.json` (see [`Layout`]).
    pub(super) fn place(t: &Timeline) -> Self {
        let (groups, group_of) = task_groups(t);
        let mut threads: Threads = Vec::new();
        let worker = place_worker_view(t, &mut threads);
        let has_sched_view = t.has_aicpu_times();
        let sched_view = if has_sched_view {
            place_scheduler_view(t, &mut threads)
        } else {
            vec![None; t.tasks.len()]
        };
        let (phases, markers) = place_phases(t, &mut threads);
        Self {
            groups,
            group_of,
            worker,
            has_sched_view,
            sched_view,
            phases,
            markers,
            threads,
        }
    }
}

/// Everything placed, before writing.
pub(super) struct Model {
    /// Per task row: its func_id (if resolved) and label.
    pub(super) func: Vec<Option<i32>>,
    /// Per task row: its label's kernel part, an index into `bases`; the
    /// label is `<base>(<task>)`, written without building a string per row.
    pub(super) label_base: Vec<u32>,
    pub(super) bases: Vec<String>,
    /// Per task row: Worker View and Scheduler View placement.
    pub(super) worker: Vec<Placed>,
    pub(super) sched_view: Vec<Option<Placed>>,
    /// Per task group (rows with one task id): its row range.
    pub(super) groups: Vec<(usize, usize)>,
    pub(super) group_of: IdMap<u64, usize>,
    /// Flow nodes: the groups, then the task ids that have only AICPU bars
    /// (dummy markers, alloc bars). Per node: its Worker View anchors (CSR)
    /// and the logical subtask count its dependency flows carry.
    pub(super) wanchor_off: Vec<usize>,
    pub(super) wanchors: Vec<Anchor>,
    pub(super) fan: Vec<u32>,
    /// Per group: its Scheduler View anchor rows (CSR).
    pub(super) sanchor_off: Vec<usize>,
    pub(super) sanchors: Vec<usize>,
    /// Unique dependency edges between flow nodes (pred, succ).
    pub(super) edges: Vec<(usize, usize)>,
    /// The whole graph over dense ids (timed or not): successors and
    /// predecessors (CSR), for the hints and the complete→ready walk.
    pub(super) graph: GraphCsr,
    /// Scheduler View event id per row (`u64::MAX` without a bar); marker
    /// and alloc bar ids follow from `marker_event_base`.
    pub(super) sched_event: Vec<u64>,
    pub(super) marker_event_base: u64,
    /// Scheduler phases: placement per (thread, index).
    pub(super) phases: Vec<Vec<Placed>>,
    /// Dummy / predicated-skip markers: (thread, phase index, placement).
    pub(super) markers: Vec<(usize, usize, Placed)>,
    /// Orchestrator records: placement per (lane, index); alloc bars.
    pub(super) orch: Vec<Vec<Placed>>,
    pub(super) allocs: Vec<(usize, usize, Placed)>,
    pub(super) uploads: Vec<Placed>,
    /// Thread names: (pid, tid) → name.
    pub(super) threads: Vec<(u32, u64, String)>,
    pub(super) has_sched_view: bool,
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
    /// Places every slice of `t`, names every lane, numbers the events and anchors the
    /// flows (`graph` is the `deps.json`, if any).
    pub(super) fn build(
        t: &Timeline,
        layout: Layout,
        graph: Option<&TaskGraph>,
        names: &KernelNames,
    ) -> Self {
        // The whole graph's CSR needs only the edges: it is built on a thread of its own
        // while this one places the slices (a fifth of the build at 1M tasks).
        let edges = graph.map_or(&[][..], |g| &g.edges[..]);
        let (model, graph_csr) = pto_base::thread::beside(
            "pto-trace-graph",
            || Self::place(t, layout, graph, names),
            || GraphCsr::build(edges),
        );
        Self {
            graph: graph_csr,
            ..model
        }
    }

    /// Everything of [`Model::build`] but the whole graph's CSR (left empty).
    fn place(t: &Timeline, layout: Layout, graph: Option<&TaskGraph>, names: &KernelNames) -> Self {
        let Layout {
            groups,
            group_of,
            worker,
            has_sched_view,
            sched_view,
            phases,
            mut markers,
            mut threads,
        } = layout;
        let lookup = GraphLookup::new(graph);
        let spmd = spmd_groups(t, &groups, &lookup);
        let (func, label_base, bases) = row_labels(t, &groups, &spmd, &lookup, names);
        let (orch, mut allocs) = place_orchestrator(t, &group_of, &markers, &lookup, &mut threads);
        let uploads = place_uploads(t, &mut threads);
        place_aicpu_lanes(t, &mut markers, &mut allocs, &mut threads);

        // Event ids, in Simpler's order: Worker View bars, Scheduler View
        // bars, dummy / predicated-skip markers, alloc bars.
        let (sched_event, marker_event) = scheduler_events(&sched_view);
        let alloc_event = marker_event + markers.len() as u64;

        let mut anchors = group_anchors(t, &groups, &spmd, &func, &worker, &sched_view, &lookup);
        let mut bars: Vec<(u64, Anchor)> = Vec::with_capacity(markers.len() + allocs.len());
        for (m, &(th, i, p)) in markers.iter().enumerate() {
            if let Some(id) = t.sched[th][i].task_id {
                bars.push((id.raw(), bar_anchor(p, marker_event + m as u64)));
            }
        }
        for (k, &(lane, i, p)) in allocs.iter().enumerate() {
            bars.push((
                t.orch[lane][i].task_id.raw(),
                bar_anchor(p, alloc_event + k as u64),
            ));
        }
        let node_of = anchors.add_bar_nodes(bars, &group_of, &lookup);

        let edges = flow_edges(graph, &node_of);
        if has_ready_queue(t) {
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
            wanchor_off: anchors.wanchor_off,
            wanchors: anchors.wanchors,
            fan: anchors.fan,
            sanchor_off: anchors.sanchor_off,
            sanchors: anchors.sanchors,
            edges,
            graph: GraphCsr::default(),
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
    pub(super) fn marker_event(&self, m: usize) -> u64 {
        self.marker_event_base + m as u64
    }

    /// The event id of alloc bar `k`.
    pub(super) fn alloc_event(&self, k: usize) -> u64 {
        self.marker_event_base + (self.markers.len() + k) as u64
    }

    /// Worker View anchors of flow node `k`.
    pub(super) fn wanchors(&self, k: usize) -> &[Anchor] {
        &self.wanchors[self.wanchor_off[k]..self.wanchor_off[k + 1]]
    }

    /// Scheduler View anchor rows of group `g`.
    pub(super) fn sanchors(&self, g: usize) -> &[usize] {
        &self.sanchors[self.sanchor_off[g]..self.sanchor_off[g + 1]]
    }
}

/// Thread names, `(pid, tid, name)`, in the order the lanes are made.
type Threads = Vec<(u32, u64, String)>;

/// A placed bar on an AICPU lane: (scheduler thread or orchestrator lane, record index,
/// placement).
type AicpuBar = (usize, usize, Placed);

/// The `deps.json` entry of a task id, when there is a `deps.json`.
struct GraphLookup<'g> {
    graph: Option<&'g TaskGraph>,
    index: IdMap<u64, usize>,
}

impl<'g> GraphLookup<'g> {
    fn new(graph: Option<&'g TaskGraph>) -> Self {
        Self {
            graph,
            index: graph.map(TaskGraph::index).unwrap_or_default(),
        }
    }

    fn task(&self, id: TaskId) -> Option<&'g GraphTask> {
        let g = self.graph?;
        self.index.get(&id.raw()).map(|&i| &g.tasks[i])
    }
}

/// Groups of rows with one task id (tasks are sorted by id): each group's row range,
/// and the group of each task id.
fn task_groups(t: &Timeline) -> (Vec<(usize, usize)>, IdMap<u64, usize>) {
    let n = t.tasks.len();
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
    (groups, group_of)
}

/// Per group, whether it is SPMD by Simpler's rule: `block_num > 1` in `deps.json`;
/// without a `deps.json` entry, several rows all on one core type.
fn spmd_groups(t: &Timeline, groups: &[(usize, usize)], lookup: &GraphLookup<'_>) -> Vec<bool> {
    groups
        .iter()
        .map(|&(a, b)| match lookup.task(t.tasks[a].task_id) {
            Some(g) => g.block_num > 1,
            None => {
                b - a > 1
                    && t.tasks[a..b]
                        .iter()
                        .all(|x| x.core_type == t.tasks[a].core_type)
            }
        })
        .collect()
}

/// Per row, its func_id (if resolved) and its label's kernel part (an index into the
/// returned bases, one per distinct kernel part).
fn row_labels(
    t: &Timeline,
    groups: &[(usize, usize)],
    spmd: &[bool],
    lookup: &GraphLookup<'_>,
    names: &KernelNames,
) -> (Vec<Option<i32>>, Vec<u32>, Vec<String>) {
    let n = t.tasks.len();
    let mut func = Vec::with_capacity(n);
    let mut label_base = Vec::with_capacity(n);
    let mut bases: Vec<String> = Vec::new();
    let mut label_cache: IdMap<(Option<i32>, bool, bool), u32> = IdMap::default();
    for (gi, &(a, b)) in groups.iter().enumerate() {
        let g = lookup.task(t.tasks[a].task_id);
        for task in &t.tasks[a..b] {
            let f = g.and_then(|g| g.func_id_for(task.core_type));
            func.push(f);
            let key = (f, spmd[gi], g.is_some_and(GraphTask::is_dummy));
            let base = *label_cache.entry(key).or_insert_with(|| {
                bases.push(group_label(f, g, spmd[gi], names, lookup.graph.is_some()));
                (bases.len() - 1) as u32
            });
            label_base.push(base);
        }
    }
    (func, label_base, bases)
}

/// Lays each core's `(ts, end, row)` items out on sub-lanes, setting each row's tid with
/// `set`, and names the lanes under `pid` (cores in order).
fn place_core_lanes(
    t: &Timeline,
    pid: u32,
    mut by_core: IdMap<u32, Vec<(Ns, Ns, usize)>>,
    mut set: impl FnMut(usize, u64),
    threads: &mut Threads,
) {
    let mut cores: Vec<u32> = by_core.keys().copied().collect();
    cores.sort_unstable();
    for &core in &cores {
        let mut items = by_core
            .get_mut(&core)
            .map(std::mem::take)
            .unwrap_or_default();
        let n_lanes = assign_lanes(&mut items, |idx, k| set(idx, core_tid(core, k)));
        let base = core_name(t.core_type(core), core);
        for k in 0..n_lanes {
            threads.push((pid, core_tid(core, k), lane_name(&base, k)));
        }
    }
}

/// Worker View bars: receive (or start) → end per row, on its core's lanes.
fn place_worker_view(t: &Timeline, threads: &mut Threads) -> Vec<Placed> {
    let mut worker = vec![Placed::default(); t.tasks.len()];
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
    place_core_lanes(
        t,
        PID_WORKER,
        by_core,
        |idx, tid| worker[idx].tid = tid,
        threads,
    );
    worker
}

/// Scheduler View bars: dispatch → finish per row that has both, on its core's lanes.
fn place_scheduler_view(t: &Timeline, threads: &mut Threads) -> Vec<Option<Placed>> {
    let mut sched_view = vec![None; t.tasks.len()];
    let mut by_core: IdMap<u32, Vec<(Ns, Ns, usize)>> = idmap::map_with_capacity(128);
    for (i, task) in t.tasks.iter().enumerate() {
        if let (Some(d), Some(f)) = (task.dispatch, task.finish) {
            let end = f.max(d);
            sched_view[i] = Some(Placed { tid: 0, ts: d, end });
            by_core.entry(task.core_id).or_default().push((d, end, i));
        }
    }
    place_core_lanes(
        t,
        PID_SCHED_VIEW,
        by_core,
        |idx, tid| {
            if let Some(p) = sched_view[idx].as_mut() {
                p.tid = tid;
            }
        },
        threads,
    );
    sched_view
}

/// Scheduler phases per (thread, index), `resolve` on its own lanes; and the dummy /
/// predicated-skip markers, stretched to at least 20 ns, whose lanes
/// [`place_aicpu_lanes`] picks.
fn place_phases(t: &Timeline, threads: &mut Threads) -> (Vec<Vec<Placed>>, Vec<AicpuBar>) {
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
    (phases, markers)
}

/// Orchestrator records per (lane, index) on their lanes; and the alloc bars (records of
/// task ids with no row, no marker and no `deps.json` entry, device runs only), whose
/// lanes [`place_aicpu_lanes`] picks.
fn place_orchestrator(
    t: &Timeline,
    group_of: &IdMap<u64, usize>,
    markers: &[AicpuBar],
    lookup: &GraphLookup<'_>,
    threads: &mut Threads,
) -> (Vec<Vec<Placed>>, Vec<AicpuBar>) {
    let marker_tasks: std::collections::HashSet<u64> = markers
        .iter()
        .filter_map(|&(th, i, _)| t.sched[th][i].task_id.map(|x| x.raw()))
        .collect();
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
                && lookup.task(o.task_id).is_none();
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
    (orch, allocs)
}

/// Host uploads on the `H2D` lanes.
fn place_uploads(t: &Timeline, threads: &mut Threads) -> Vec<Placed> {
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
    uploads
}

/// Simpler's scheduler thread count: the highest thread index named by
/// `core_to_thread` or holding records, plus one.
fn n_sched_threads(t: &Timeline) -> usize {
    t.core_to_thread
        .iter()
        .filter(|&&th| th >= 0 && pto_dfx::swimlane::is_core_thread(th))
        .map(|&th| th as usize + 1)
        .chain(
            t.sched
                .iter()
                .enumerate()
                .filter(|(_, lane)| !lane.is_empty())
                .map(|(th, _)| th + 1),
        )
        .max()
        .unwrap_or(t.sched.len())
}

/// The `AICPU_<i>` lanes of the Worker View: markers on their scheduler thread, alloc
/// bars on `scheduler threads + orchestrator lane`; every AICPU thread is named, as in
/// Simpler, with or without bars.
fn place_aicpu_lanes(
    t: &Timeline,
    markers: &mut [AicpuBar],
    allocs: &mut [AicpuBar],
    threads: &mut Threads,
) {
    let n_sched = n_sched_threads(t);
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
}

/// The Scheduler View event id per row (`u64::MAX` without a bar; they follow the
/// Worker View's, one per row), and the first id after them (the markers').
fn scheduler_events(sched_view: &[Option<Placed>]) -> (Vec<u64>, u64) {
    let mut next_event = sched_view.len() as u64;
    let mut sched_event = vec![u64::MAX; sched_view.len()];
    for (r, p) in sched_view.iter().enumerate() {
        if p.is_some() {
            sched_event[r] = next_event;
            next_event += 1;
        }
    }
    (sched_event, next_event)
}

/// The flow anchors of [`Model`] (its fields of the same names), while they are built.
struct Anchors {
    wanchor_off: Vec<usize>,
    wanchors: Vec<Anchor>,
    fan: Vec<u32>,
    sanchor_off: Vec<usize>,
    sanchors: Vec<usize>,
}

/// The rows of `rows` that anchor an SPMD task: the earliest by `key` per func_id.
fn earliest(
    rows: std::ops::Range<usize>,
    func: &[Option<i32>],
    key: &dyn Fn(usize) -> (Ns, u32),
) -> Vec<usize> {
    let mut picked: Vec<usize> = Vec::new();
    for r in rows {
        match picked.iter().position(|&x| func[x] == func[r]) {
            Some(pos) if key(r) < key(picked[pos]) => picked[pos] = r,
            Some(_) => {}
            None => picked.push(r),
        }
    }
    picked
}

/// The anchors of the groups (flow nodes `0..groups.len()`). Worker View: every row of a
/// task, or for an SPMD task its earliest bar per func_id (ties: the lower core).
/// Scheduler View: the same over the dispatch → finish bars.
fn group_anchors(
    t: &Timeline,
    groups: &[(usize, usize)],
    spmd: &[bool],
    func: &[Option<i32>],
    worker: &[Placed],
    sched_view: &[Option<Placed>],
    lookup: &GraphLookup<'_>,
) -> Anchors {
    let n = t.tasks.len();
    let mut a = Anchors {
        wanchor_off: Vec::with_capacity(groups.len() + 1),
        wanchors: Vec::with_capacity(n),
        fan: Vec::with_capacity(groups.len()),
        sanchor_off: Vec::with_capacity(groups.len() + 1),
        sanchors: Vec::with_capacity(n),
    };
    for (gi, &(first, end)) in groups.iter().enumerate() {
        a.wanchor_off.push(a.wanchors.len());
        a.sanchor_off.push(a.sanchors.len());
        let (wrows, srows) = if spmd[gi] {
            (
                earliest(first..end, func, &|r| (worker[r].ts, t.tasks[r].core_id)),
                earliest(first..end, func, &|r| {
                    (sched_view[r].map_or(Ns::MAX, |p| p.ts), t.tasks[r].core_id)
                }),
            )
        } else {
            ((first..end).collect(), (first..end).collect())
        };
        a.wanchors.extend(wrows.into_iter().map(|r| Anchor {
            place: worker[r],
            end: t.tasks[r].end,
            event: r as u64,
        }));
        a.sanchors
            .extend(srows.into_iter().filter(|&r| sched_view[r].is_some()));
        a.fan.push(if spmd[gi] {
            lookup
                .task(t.tasks[first].task_id)
                .map_or((end - first) as u32, |g| g.block_num)
        } else {
            1
        });
    }
    a.sanchor_off.push(a.sanchors.len());
    a
}

/// The anchor of a marker or alloc bar: the bar itself, event id `event`.
fn bar_anchor(place: Placed, event: u64) -> Anchor {
    Anchor {
        place,
        end: place.end,
        event,
    }
}

impl Anchors {
    /// Adds a flow node for each task id without rows, anchored on its `bars` (marker and
    /// alloc bars by task id); returns the flow node of every task id.
    fn add_bar_nodes(
        &mut self,
        mut bars: Vec<(u64, Anchor)>,
        group_of: &IdMap<u64, usize>,
        lookup: &GraphLookup<'_>,
    ) -> IdMap<u64, usize> {
        let mut node_of: IdMap<u64, usize> = group_of.clone();
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
                node_of.insert(id, self.fan.len());
                self.wanchor_off.push(self.wanchors.len());
                self.wanchors.extend(bars[k..j].iter().map(|b| b.1));
                self.fan
                    .push(lookup.task(TaskId(id)).map_or(1, |g| g.block_num.max(1)));
            }
            k = j;
        }
        self.wanchor_off.push(self.wanchors.len());
        node_of
    }
}

/// Unique dependency edges between flow nodes (self-edges and edges of tasks without a
/// node left out).
fn flow_edges(graph: Option<&TaskGraph>, node_of: &IdMap<u64, usize>) -> Vec<(usize, usize)> {
    let mut edges = Vec::new();
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
    edges
}

/// Whether any `complete` / `dispatch` phase carries the ready-queue sizes (then the
/// `shared_ready_queue` counter has a lane).
fn has_ready_queue(t: &Timeline) -> bool {
    t.sched.iter().any(|lane| {
        lane.iter().any(|p| {
            matches!(p.kind, SchedPhaseKind::Complete | SchedPhaseKind::Dispatch)
                && p.shared_at_end.is_some()
        })
    })
}
