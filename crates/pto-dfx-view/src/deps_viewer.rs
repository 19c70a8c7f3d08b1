//! `pto deps-viewer`: `deps.json` as a text summary or a self-contained,
//! interactive HTML graph, with Simpler's `--edge-mode` views.
//!
//! The nodes are the union of edge endpoints and of tasks with an active
//! kernel (a dummy task without edges is left out), sorted by task id. A
//! node's kind is `submit` (in `tasks[]` with a kernel), `dummy` (all
//! `kernel_ids` −1) or `alloc` (absent from `tasks[]`: an `alloc_tensors()`
//! pseudo-task that appears only as a creator edge's `pred`). Tasks show as
//! `<local>` when every node is in ring 0, otherwise `(<ring>, <local>)`.
//!
//! **Text** (`deps_viewer.txt` beside the input): a `SUMMARY`, a `TASK
//! INDEX` with one line per task (`TASK <disp> kind=<k> func_id=[a,b,c]
//! [name=<n>][ SPMD block num = N] fanin=<n> fanout=<m>`), then one
//! `=== TASK ... ===` block per task listing its predecessors (`<-`) and
//! successors (`->`) with the edges' annotations, in Simpler's layout plus
//! names and annotations. It is streamed to the file as it is formatted.
//!
//! **HTML** (`deps_viewer.html`): one SVG, laid out by Graphviz `dot`
//! when it is on `PATH` and the graph is small ([`LayoutChoice::Auto`]:
//! at most [`AUTO_GRAPHVIZ_MAX_NODES`] nodes, within
//! [`AUTO_GRAPHVIZ_BUDGET`]; run as a child process, see
//! [`layout::graphviz`](crate::layout::graphviz)) or by the engine asked
//! for within its budget, and by the built-in layered layout otherwise
//! ([`layout::layered`](crate::layout::layered)), so the
//! page works on any machine and never waits on Graphviz unbounded. Nodes are
//! styled by core kind (AIC box, AIV ellipse, MIX diamond, alloc dashed
//! note), SPMD nodes have a red border, explicit edges are dashed, a
//! TensorMap edge whose views only partly overlap is red. Labels read
//! `<disp> · <kernel> ↓fanin ↑fanout`, prefixed 🔥 for an alloc or
//! early-dispatch task and ⭐ for a task all of whose predecessors are 🔥
//! and not all allocs. Drag pans, the wheel zooms, `f` fits the graph, `r`
//! resets to 100 %, a click shows a task's details. The page fetches
//! nothing; every name is escaped. Opening it with `?selftest` makes the
//! page exercise its own controls and write the results into
//! `#selftest-result` (the Chromium tests read them).
//!
//! **Level of detail**: a graph of more than [`DEFAULT_LOD_ABOVE`] nodes (or the
//! `lod_above` of [`view_with_lod`], `--lod-above`) gets a different page, since no
//! browser draws a million-node SVG: one node per aggregate — the tasks of one ring
//! running one kernel combination, allocs and dummies by ring — on a grid of rings by
//! kernels, edges weighted by the number of shown dependencies between aggregates.
//! Clicking an aggregate lists its tasks as ranges in task order (at most 32 to a level,
//! at most 64 tasks to a leaf), each opened on click; a task shows its kind, kernels,
//! block num and its predecessors and successors as links that open them in turn. The
//! tasks travel as base64 columns the page decodes on the first click (the module
//! `lod` names them); pan, zoom, fit and the self-test are the per-task page's.
//!
//! **Edge modes** ([`EdgeMode`], Simpler's `--edge-mode`): `full` shows
//! every `(pred, succ)` pair; `reduced` drops the pairs a longer path
//! already implies (transitive reduction, [`reduction::redundant_edges`]),
//! except pairs with a `creator` annotation, which keep the creator alive;
//! `omitted` shows only what `reduced` drops. `reduced_dataflow` /
//! `omitted_dataflow` reduce without the creator protection and then put
//! back every implied creator pair unless each of its creator annotations
//! is an `INOUT` whose exact byte region (buffer address, dtype size,
//! offset, strides: [`reduction::byte_region`]) is fully covered both by
//! TensorMap dataflow into the consumer from an earlier output on a buffer
//! of the same creator and by TensorMap dataflow from the consumer to a
//! later `INOUT` of that creator; an `OUTPUT_EXISTING`, a missing view or
//! a region beyond [`reduction::MAX_INTERVALS`] keeps the pair. Text shows
//! only the selected pairs; HTML lays out the full graph and paints the
//! unselected edges in the background colour (`hidden-edge`), so every
//! mode has the same node placement. A reduction mode writes
//! `deps_viewer_<mode>.{txt,html}` by default and reports the removed
//! pairs ([`DepsViewerReport::reduction`]). A cycle, or a graph whose
//! reduction would cost more than [`reduction::WORK_PER_EDGE`] visits per
//! edge, is shown in full with a warning.
//!
//! **Memory** is linear: `deps.json` is read by the streaming
//! [`deps_scan`] (compact records, not the text nor a JSON tree; a file it
//! declines goes to the careful reader, which reports its damage), nodes
//! and edges are flat arrays (about 50 bytes per node and 40 per pair plus
//! the scan's records), and the text is written as it is formatted. The
//! numbers are in `docs/PERFORMANCE.md`.
//!
//! A `chip_swimlane_records.json` beside the input adds each task's
//! measured span to the details (`perf_sidecar: yes`); a `name_map_*.json`
//! beside it (the newest) names the kernels unless `--func-names` is given.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::ToolError;
use crate::layout::Engine;
use crate::names::{self, KernelNames, SiblingPolicy};
use crate::reduction::{self, Refused};
use pto_base::idmap::{self, IdMap};
use pto_base::json::push_u64;
use pto_dfx::atomic::AtomicFile;
use pto_dfx::deps::{ArgDirection, EdgeSource, Overlap};
use pto_dfx::deps_scan::{self, DepsScan, Detail, ScanEdge, Scanned};
use pto_dfx::dtype::DataType;
use pto_dfx::error::Problem;
use pto_dfx::task_id::TaskId;

mod lod;
mod page;

#[cfg(test)]
use page::node_label;
use page::write_html;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `deps_viewer.txt`.
    Text,
    /// `deps_viewer.html`.
    Html,
}

impl Format {
    /// The name in `format=<name>`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Html => "html",
        }
    }
}

/// Which `(pred, succ)` pairs a view shows (Simpler's `--edge-mode`; see
/// the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum EdgeMode {
    /// Every pair.
    #[default]
    Full,
    /// The transitive reduction; creator pairs always kept.
    Reduced,
    /// Only the pairs `Reduced` drops.
    Omitted,
    /// The reduction with creator pairs dropped only when dataflow proves them implied.
    ReducedDataflow,
    /// Only the pairs `ReducedDataflow` drops.
    OmittedDataflow,
}

impl EdgeMode {
    /// Simpler's name of the mode.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Reduced => "reduced",
            Self::Omitted => "omitted",
            Self::ReducedDataflow => "reduced_dataflow",
            Self::OmittedDataflow => "omitted_dataflow",
        }
    }

    const fn dataflow(self) -> bool {
        matches!(self, Self::ReducedDataflow | Self::OmittedDataflow)
    }

    const fn shows_omitted(self) -> bool {
        matches!(self, Self::Omitted | Self::OmittedDataflow)
    }
}

/// How the HTML graph is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutChoice {
    /// `dot` when it is on `PATH` and the graph has at most
    /// [`AUTO_GRAPHVIZ_MAX_NODES`] nodes, within [`AUTO_GRAPHVIZ_BUDGET`];
    /// else the built-in layout.
    Auto,
    /// Always the built-in layered layout.
    Builtin,
    /// This Graphviz engine, given at most `budget` (`None`: no limit); the
    /// built-in layout, with a warning, when it is not on `PATH` or the budget
    /// runs out.
    Graphviz {
        /// The engine.
        engine: Engine,
        /// How long it may run.
        budget: Option<Duration>,
    },
}

/// Above this many nodes, [`LayoutChoice::Auto`] skips Graphviz: `dot`'s time grows
/// much faster than the graph (a 1,604-node paged-attention graph did not finish in
/// ten minutes), while the built-in layout takes milliseconds at 10,000 nodes.
pub const AUTO_GRAPHVIZ_MAX_NODES: usize = 300;

/// How long [`LayoutChoice::Auto`] lets `dot` run before it falls back to the
/// built-in layout.
pub const AUTO_GRAPHVIZ_BUDGET: Duration = Duration::from_secs(10);

/// Above this many nodes the HTML page is the level-of-detail view (aggregates of
/// ring × kernel, opened on demand) instead of one drawn node per task: a browser lays out
/// and pans a per-task SVG of 10,000 nodes in about 2 s, and one of 1,000,000 not at all.
pub const DEFAULT_LOD_ABOVE: usize = 10_000;

/// What to show and where.
#[derive(Clone, Copy, Debug)]
pub struct DepsViewerOptions<'a> {
    /// The `deps.json`.
    pub input: &'a Path,
    /// The output; default `deps_viewer[_<mode>].{txt,html}` beside the input.
    pub output: Option<&'a Path>,
    /// Text or HTML.
    pub format: Format,
    /// The HTML layout (ignored for text).
    pub layout: LayoutChoice,
    /// A name map; default the newest `name_map*.json` beside the input.
    pub func_names: Option<&'a Path>,
    /// Which pairs to show.
    pub edge_mode: EdgeMode,
}

/// What a reduction mode removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The mode.
    pub mode: EdgeMode,
    /// Unique pairs before the reduction.
    pub n_pairs: usize,
    /// The pairs the reduction removes, as `<pred> -> <succ>` in the
    /// graph's task labels, in task order.
    pub removed: Vec<String>,
}

impl Reduction {
    /// Simpler's headline: `Transitive reduction: removed N redundant
    /// edge(s) of M (K kept)`.
    pub fn headline(&self) -> String {
        format!(
            "Transitive reduction: removed {} redundant edge(s) of {} ({} kept)",
            self.removed.len(),
            self.n_pairs,
            self.n_pairs - self.removed.len()
        )
    }
}

/// What the viewer wrote.
#[derive(Clone, Debug)]
pub struct DepsViewerReport {
    /// The file written.
    pub output: PathBuf,
    /// The format.
    pub format: Format,
    /// Nodes shown.
    pub n_nodes: usize,
    /// Unique `(pred, succ)` pairs shown.
    pub n_unique_edges: usize,
    /// `edges[]` entries of the pairs shown.
    pub n_annotated_edges: usize,
    /// The layout used (HTML): `graphviz dot`, `built-in layered`.
    pub layout: Option<String>,
    /// What a reduction mode removed (`None` for `full`, and when the
    /// graph could not be reduced: see `warnings`).
    pub reduction: Option<Reduction>,
    /// The number of aggregates when the HTML page is the level-of-detail view
    /// (`None`: one node per task, or text).
    pub aggregates: Option<usize>,
    /// Recoverable damage and fallbacks, each naming its file.
    pub warnings: Vec<String>,
}

impl DepsViewerReport {
    /// The one-line summary for stdout.
    pub fn summary_line(&self) -> String {
        format!(
            "Wrote {} ({} tasks, {} unique edges, {} annotated edges, format={})",
            self.output.display(),
            self.n_nodes,
            self.n_unique_edges,
            self.n_annotated_edges,
            self.format.as_str()
        )
    }
}

/// Node kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Submit,
    Dummy,
    Alloc,
}

impl Kind {
    const fn as_str(self) -> &'static str {
        match self {
            Self::Submit => "submit",
            Self::Dummy => "dummy",
            Self::Alloc => "alloc",
        }
    }
}

/// No index (`u32::MAX`).
const NONE: u32 = u32::MAX;

struct Node {
    id: TaskId,
    kind: Kind,
    kernel_ids: [i32; 3],
    block_num: u32,
    early_dispatch: bool,
    /// An index into `Graph::names`.
    name: u32,
    /// The `tasks[]` entry (`NONE` for an alloc).
    task: u32,
    /// An index into `Graph::timings` (`NONE`: not measured).
    timing: u32,
}

/// Successor and predecessor lists (CSR) of a set of pairs, self-pairs left out.
struct Adjacency {
    succ_off: Vec<u32>,
    /// Pair indices, by predecessor then successor.
    succ: Vec<u32>,
    pred_off: Vec<u32>,
    /// Pair indices, by successor then predecessor.
    pred: Vec<u32>,
}

impl Adjacency {
    fn new(n: usize, pairs: &[(u32, u32)], keep: impl Fn(usize) -> bool) -> Self {
        let mut succ_off = vec![0u32; n + 1];
        let mut pred_off = vec![0u32; n + 1];
        for (k, &(p, s)) in pairs.iter().enumerate() {
            if p != s && keep(k) {
                succ_off[p as usize + 1] += 1;
                pred_off[s as usize + 1] += 1;
            }
        }
        for i in 0..n {
            succ_off[i + 1] += succ_off[i];
            pred_off[i + 1] += pred_off[i];
        }
        let total = succ_off[n] as usize;
        let mut succ = vec![0u32; total];
        let mut pred = vec![0u32; total];
        let mut fs = succ_off.clone();
        let mut fp = pred_off.clone();
        // Pairs are sorted by (pred, succ): both lists come out sorted.
        for (k, &(p, s)) in pairs.iter().enumerate() {
            if p != s && keep(k) {
                succ[fs[p as usize] as usize] = k as u32;
                fs[p as usize] += 1;
                pred[fp[s as usize] as usize] = k as u32;
                fp[s as usize] += 1;
            }
        }
        Self {
            succ_off,
            succ,
            pred_off,
            pred,
        }
    }

    fn succs(&self, i: usize) -> &[u32] {
        &self.succ[self.succ_off[i] as usize..self.succ_off[i + 1] as usize]
    }

    fn preds(&self, i: usize) -> &[u32] {
        &self.pred[self.pred_off[i] as usize..self.pred_off[i + 1] as usize]
    }
}

struct Graph {
    nodes: Vec<Node>,
    names: Vec<String>,
    timings: Vec<(u64, u64, Vec<u32>)>,
    /// Unique pairs (pred, succ) as node indices, sorted.
    pairs: Vec<(u32, u32)>,
    /// Pair `k`'s annotations: `scan.edges[ann[ann_off[k]..ann_off[k + 1]]]`.
    ann_off: Vec<u32>,
    ann: Vec<u32>,
    ring0: bool,
}

impl Graph {
    fn disp(&self, i: usize) -> String {
        let mut out = String::new();
        self.push_disp(i, &mut out);
        out
    }

    /// Appends node `i`'s label (`<local>` or `(<ring>, <local>)`).
    fn push_disp(&self, i: usize, out: &mut String) {
        let id = self.nodes[i].id;
        if self.ring0 {
            push_u64(out, u64::from(id.local()));
        } else {
            out.push('(');
            push_u64(out, u64::from(id.ring()));
            out.push_str(", ");
            push_u64(out, u64::from(id.local()));
            out.push(')');
        }
    }

    fn name(&self, i: usize) -> &str {
        self.names
            .get(self.nodes[i].name as usize)
            .map_or("", String::as_str)
    }

    fn annotations<'a>(
        &'a self,
        scan: &'a DepsScan,
        k: usize,
    ) -> impl Iterator<Item = &'a ScanEdge> + 'a {
        let (a, b) = (self.ann_off[k] as usize, self.ann_off[k + 1] as usize);
        self.ann[a..b]
            .iter()
            .filter_map(move |&e| scan.edges.get(e as usize))
    }

    /// The annotations of pair `k` as the listing shows them.
    fn notes(&self, scan: &DepsScan, k: usize) -> String {
        let mut out = String::new();
        self.push_notes(scan, k, &mut out);
        out
    }

    fn push_notes(&self, scan: &DepsScan, k: usize, out: &mut String) {
        for (n, e) in self.annotations(scan, k).enumerate() {
            if n > 0 {
                out.push_str("; ");
            }
            out.push_str(e.source.as_str());
            if e.source != EdgeSource::Explicit {
                out.push_str(" arg ");
                if e.arg < 0 {
                    out.push('-');
                }
                push_u64(out, u64::from(e.arg.unsigned_abs()));
            }
            if let Some(o) = e.overlap {
                out.push(' ');
                out.push_str(o.as_str());
            }
        }
    }

    fn explicit_only(&self, scan: &DepsScan, k: usize) -> bool {
        self.annotations(scan, k)
            .all(|e| e.source == EdgeSource::Explicit)
    }

    fn partial_overlap(&self, scan: &DepsScan, k: usize) -> bool {
        self.annotations(scan, k)
            .any(|e| e.overlap == Some(Overlap::Other))
    }

    fn has_creator(&self, scan: &DepsScan, k: usize) -> bool {
        self.annotations(scan, k)
            .any(|e| e.source == EdgeSource::Creator)
    }

    fn index_of(&self, id: TaskId) -> Option<usize> {
        self.nodes.binary_search_by_key(&id, |n| n.id).ok()
    }

    fn build(
        scan: &DepsScan,
        names: &KernelNames,
        timing: IdMap<u64, (u64, u64, Vec<u32>)>,
    ) -> Self {
        // The last entry of a repeated task id wins, as with a map.
        let mut task_of: IdMap<u64, u32> = idmap::map_with_capacity(scan.tasks.len());
        for (i, t) in scan.tasks.iter().enumerate() {
            task_of.insert(t.task_id.raw(), i as u32);
        }
        let is_dummy = |t: &deps_scan::ScanTask| t.kernel_ids.iter().all(|&k| k < 0);
        let mut ids: Vec<TaskId> = Vec::with_capacity(scan.tasks.len() + scan.edges.len() / 4);
        for t in &scan.tasks {
            if !is_dummy(t) || timing.contains_key(&t.task_id.raw()) {
                ids.push(t.task_id);
            }
        }
        for e in &scan.edges {
            ids.push(e.pred);
            ids.push(e.succ);
        }
        ids.sort_unstable();
        ids.dedup();
        ids.shrink_to_fit();

        let mut name_list: Vec<String> = vec![String::from("alloc"), String::from("dummy")];
        let mut name_of: HashMap<[i32; 3], u32> = HashMap::new();
        let mut timings = Vec::with_capacity(timing.len());
        let mut timing = timing;
        let mut nodes: Vec<Node> = Vec::with_capacity(ids.len());
        for id in ids {
            let task = task_of.get(&id.raw()).copied();
            let (kind, kernel_ids, block_num, early) = match task {
                Some(t) => {
                    let t = &scan.tasks[t as usize];
                    let kind = if is_dummy(t) {
                        Kind::Dummy
                    } else {
                        Kind::Submit
                    };
                    (kind, t.kernel_ids, t.block_num.max(1), t.early_dispatch)
                }
                None => (Kind::Alloc, [-1; 3], 1, false),
            };
            let name = match kind {
                Kind::Alloc => 0,
                Kind::Dummy => 1,
                Kind::Submit => *name_of.entry(kernel_ids).or_insert_with(|| {
                    let mut parts: Vec<String> = Vec::new();
                    for &k in kernel_ids.iter().filter(|&&k| k >= 0) {
                        let label = names.label(i64::from(k));
                        if !parts.contains(&label) {
                            parts.push(label);
                        }
                    }
                    name_list.push(parts.join("+"));
                    (name_list.len() - 1) as u32
                }),
            };
            let timing = match timing.remove(&id.raw()) {
                Some(t) => {
                    timings.push(t);
                    (timings.len() - 1) as u32
                }
                None => NONE,
            };
            nodes.push(Node {
                id,
                kind,
                kernel_ids,
                block_num,
                early_dispatch: early,
                name,
                task: task.unwrap_or(NONE),
                timing,
            });
        }
        drop(task_of);
        let mut graph = Graph {
            nodes,
            names: name_list,
            timings,
            pairs: Vec::new(),
            ann_off: Vec::new(),
            ann: Vec::new(),
            ring0: true,
        };
        graph.ring0 = graph.nodes.iter().all(|n| n.id.ring() == 0);

        // Every annotation as (pred node, succ node, entry), grouped by pair.
        let mut triples: Vec<(u32, u32, u32)> = scan
            .edges
            .iter()
            .enumerate()
            .filter_map(|(k, e)| {
                let p = graph.index_of(e.pred)?;
                let s = graph.index_of(e.succ)?;
                Some((p as u32, s as u32, k as u32))
            })
            .collect();
        triples.sort_unstable();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut ann_off: Vec<u32> = Vec::new();
        let mut ann: Vec<u32> = Vec::with_capacity(triples.len());
        for (p, s, k) in triples {
            if pairs.last() != Some(&(p, s)) {
                pairs.push((p, s));
                ann_off.push(ann.len() as u32);
            }
            ann.push(k);
        }
        ann_off.push(ann.len() as u32);
        pairs.shrink_to_fit();
        graph.pairs = pairs;
        graph.ann_off = ann_off;
        graph.ann = ann;
        graph
    }

    fn func_label(&self, i: usize, out: &mut String) {
        let n = &self.nodes[i];
        if n.kind == Kind::Submit {
            out.push_str("func_id=[");
            for (j, &k) in n.kernel_ids.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                if k < 0 {
                    out.push('-');
                }
                push_u64(out, u64::from(k.unsigned_abs()));
            }
            out.push(']');
            let name = self.name(i);
            if !name.is_empty() {
                out.push_str(" name=");
                out.push_str(name);
            }
        } else {
            out.push_str("func_id=none");
        }
        if n.block_num > 1 {
            let _ = write!(out, " SPMD block num = {}", n.block_num);
        }
    }

    fn header(&self, i: usize, out: &mut String) {
        out.push_str("TASK ");
        self.push_disp(i, out);
        out.push_str(" kind=");
        out.push_str(self.nodes[i].kind.as_str());
        out.push(' ');
        self.func_label(i, out);
    }

    fn fire(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        n.kind == Kind::Alloc || n.early_dispatch
    }

    fn star(&self, adj: &Adjacency, i: usize) -> bool {
        let preds = adj.preds(i);
        !preds.is_empty()
            && preds
                .iter()
                .all(|&k| self.fire(self.pairs[k as usize].0 as usize))
            && preds
                .iter()
                .any(|&k| self.nodes[self.pairs[k as usize].0 as usize].kind != Kind::Alloc)
    }
}

/// Which pairs a mode shows, and what its reduction removed.
fn select(
    g: &Graph,
    scan: &DepsScan,
    mode: EdgeMode,
    warnings: &mut Vec<String>,
) -> (Vec<bool>, Option<Reduction>) {
    let all = vec![true; g.pairs.len()];
    if mode == EdgeMode::Full {
        return (all, None);
    }
    // Self-pairs are never redundant and take no part in the reduction.
    let mut index: Vec<u32> = Vec::with_capacity(g.pairs.len());
    let mut proper: Vec<(u32, u32)> = Vec::with_capacity(g.pairs.len());
    for (k, &(p, s)) in g.pairs.iter().enumerate() {
        if p != s {
            index.push(k as u32);
            proper.push((p, s));
        }
    }
    let redundant = match reduction::redundant_edges(g.nodes.len(), &proper) {
        Ok(r) => r,
        Err(why) => {
            let why = match why {
                Refused::Cycle => "the graph has a cycle",
                Refused::TooLarge => "the reduction would take too long on this graph",
            };
            warnings.push(format!(
                "--edge-mode {}: {why}; showing the full graph",
                mode.as_str()
            ));
            return (all, None);
        }
    };
    drop(proper);
    // Tensor id → buffer address, for the dataflow proofs.
    let full_adj = mode.dataflow().then(|| {
        let tensors: HashMap<u64, u64> = scan
            .tensors
            .iter()
            .map(|t| (t.tensor_id, t.buffer_addr))
            .collect();
        (Adjacency::new(g.nodes.len(), &g.pairs, |_| true), tensors)
    });
    let mut removed = vec![false; g.pairs.len()];
    for (j, &k) in index.iter().enumerate() {
        if !redundant[j] {
            continue;
        }
        let k = k as usize;
        removed[k] = match &full_adj {
            None => !g.has_creator(scan, k),
            Some((adj, tensors)) => {
                !g.has_creator(scan, k) || creator_pair_implied(g, scan, adj, tensors, k)
            }
        };
    }
    let labels: Vec<String> = removed
        .iter()
        .enumerate()
        .filter(|(_, &r)| r)
        .map(|(k, _)| {
            let (p, s) = g.pairs[k];
            format!("{} -> {}", g.disp(p as usize), g.disp(s as usize))
        })
        .collect();
    let selected = if mode.shows_omitted() {
        removed
    } else {
        removed.iter().map(|r| !r).collect()
    };
    (
        selected,
        Some(Reduction {
            mode,
            n_pairs: g.pairs.len(),
            removed: labels,
        }),
    )
}

/// The byte region of a view of a known tensor, if exactly known.
fn view_region(
    scan: &DepsScan,
    tensors: &HashMap<u64, u64>,
    view: u32,
) -> Option<(u64, Vec<(u64, u64)>)> {
    let v = scan.view(view)?;
    let addr = *tensors.get(&v.tensor_id)?;
    let elem = DataType::from_name(scan.string(v.dtype))?.elem_size() as u64;
    let region =
        reduction::byte_region(addr, elem, v.start_offset, scan.shape(v), scan.strides(v))?;
    Some((addr, region))
}

/// A producer view's region, on the buffer and with the element size of its consumer view.
fn producer_region(
    scan: &DepsScan,
    tensors: &HashMap<u64, u64>,
    e: &ScanEdge,
) -> Option<Vec<(u64, u64)>> {
    let c = scan.view(e.consumer)?;
    let p = scan.view(e.producer)?;
    let addr = *tensors.get(&c.tensor_id)?;
    let elem = DataType::from_name(scan.string(c.dtype))?.elem_size() as u64;
    reduction::byte_region(addr, elem, p.start_offset, scan.shape(p), scan.strides(p))
}

/// The direction of task `node`'s arg `idx`.
fn arg_direction(g: &Graph, scan: &DepsScan, node: usize, idx: i32) -> Option<ArgDirection> {
    let t = scan.tasks.get(g.nodes[node].task as usize)?;
    scan.task_args(t)
        .iter()
        .find(|a| a.idx == idx)
        .map(|a| a.direction)
}

/// Whether the structurally implied creator pair `k` (creator `c`,
/// consumer `s`) may go in the dataflow modes (see the module docs).
fn creator_pair_implied(
    g: &Graph,
    scan: &DepsScan,
    adj: &Adjacency,
    tensors: &HashMap<u64, u64>,
    k: usize,
) -> bool {
    let (c, s) = (g.pairs[k].0 as usize, g.pairs[k].1 as usize);
    // The creator's other consumers (those it has a creator annotation to).
    let owned: HashSet<usize> = adj
        .succs(c)
        .iter()
        .map(|&j| j as usize)
        .filter(|&j| g.has_creator(scan, j))
        .map(|j| g.pairs[j].1 as usize)
        .collect();
    for e in g
        .annotations(scan, k)
        .filter(|e| e.source == EdgeSource::Creator)
    {
        if arg_direction(g, scan, s, e.arg) != Some(ArgDirection::Inout) {
            // OUTPUT_EXISTING (a reuse boundary), or not an INOUT: kept.
            return false;
        }
        let Some((addr, region)) = view_region(scan, tensors, e.consumer) else {
            return false;
        };
        // Into s: TensorMap flow from an earlier output of the creator's buffer.
        let mut inflow: Vec<(u64, u64)> = Vec::new();
        for &j in adj.preds(s) {
            let q = g.pairs[j as usize].0 as usize;
            if q == c || !owned.contains(&q) {
                continue;
            }
            for f in g.annotations(scan, j as usize) {
                if f.source != EdgeSource::Tensormap || f.arg != e.arg {
                    continue;
                }
                let (Some((a, cons)), Some(prod)) = (
                    view_region(scan, tensors, f.consumer),
                    producer_region(scan, tensors, f),
                ) else {
                    continue;
                };
                if a == addr {
                    inflow.extend(reduction::intersect(&cons, &prod));
                }
            }
            if inflow.len() > reduction::MAX_INTERVALS {
                return false;
            }
        }
        if !reduction::covers(&reduction::merge(inflow), &region) {
            return false;
        }
        // Out of s: TensorMap flow to a later INOUT of the creator's buffer.
        let mut outflow: Vec<(u64, u64)> = Vec::new();
        for &j in adj.succs(s) {
            let r = g.pairs[j as usize].1 as usize;
            if !owned.contains(&r) {
                continue;
            }
            for f in g.annotations(scan, j as usize) {
                if f.source != EdgeSource::Tensormap
                    || arg_direction(g, scan, r, f.arg) != Some(ArgDirection::Inout)
                {
                    continue;
                }
                let (Some((a, cons)), Some(prod)) = (
                    view_region(scan, tensors, f.consumer),
                    producer_region(scan, tensors, f),
                ) else {
                    continue;
                };
                if a == addr {
                    outflow.extend(reduction::intersect(&cons, &prod));
                }
            }
            if outflow.len() > reduction::MAX_INTERVALS {
                return false;
            }
        }
        if !reduction::covers(&reduction::merge(outflow), &region) {
            return false;
        }
    }
    true
}

/// The default output beside `input`: `deps_viewer.{txt,html}`, or
/// `deps_viewer_<mode>.{txt,html}` for a reduction mode.
pub fn default_output(input: &Path, format: Format, mode: EdgeMode) -> PathBuf {
    let dir = crate::parent_dir(input);
    let stem = match mode {
        EdgeMode::Full => String::from("deps_viewer"),
        m => format!("deps_viewer_{}", m.as_str()),
    };
    dir.join(match format {
        Format::Text => format!("{stem}.txt"),
        Format::Html => format!("{stem}.html"),
    })
}

/// Task spans from a swimlane file beside `deps` (ns since the swimlane base, min start ..
/// max end, and the cores).
fn sidecar_timing(dir: &Path, warnings: &mut Vec<String>) -> IdMap<u64, (u64, u64, Vec<u32>)> {
    let mut out: IdMap<u64, (u64, u64, Vec<u32>)> = IdMap::default();
    let Some(path) = crate::beside(
        dir,
        pto_dfx::swimlane::FILE_NAME,
        pto_dfx::compact::swimlane::FILE_NAME,
    ) else {
        return out;
    };
    let timeline = crate::load::load_swimlane(&path)
        .map_err(ToolError::from)
        .and_then(|l| crate::perf::join(&l.value, &path));
    match timeline {
        Ok(t) => {
            out.reserve(t.tasks.len());
            for task in &t.tasks {
                let e = out
                    .entry(task.task_id.raw())
                    .or_insert((u64::MAX, 0, Vec::new()));
                e.0 = e.0.min(task.start);
                e.1 = e.1.max(task.end);
                if !e.2.contains(&task.core_id) {
                    e.2.push(task.core_id);
                }
            }
        }
        Err(e) => warnings.push(format!("perf sidecar not used: {e}")),
    }
    out
}

/// A task id listed more than once in `tasks[]` (a run writes each task once): the graph
/// shows the last entry, and the warning names the id, so the merge is not silent.
fn warn_duplicate_tasks(input: &Path, scan: &DepsScan, warnings: &mut Vec<String>) {
    let mut seen: IdMap<u64, u32> = idmap::map_with_capacity(scan.tasks.len());
    for t in &scan.tasks {
        *seen.entry(t.task_id.raw()).or_insert(0) += 1;
    }
    let mut repeated: Vec<(u64, u32)> = seen.into_iter().filter(|&(_, n)| n > 1).collect();
    if repeated.is_empty() {
        return;
    }
    repeated.sort_unstable();
    let shown: Vec<String> = repeated
        .iter()
        .take(5)
        .map(|&(id, n)| format!("{} ({n} times)", TaskId(id)))
        .collect();
    warnings.push(format!(
        "{}: {} task id(s) appear more than once in tasks[]: {}{}; a run writes each task once, so the file is damaged or merged from several runs; each is shown with its last entry",
        input.display(),
        repeated.len(),
        shown.join(", "),
        if repeated.len() > 5 { ", …" } else { "" }
    ));
}

fn with_file(path: &Path, problems: Vec<Problem>) -> impl Iterator<Item = String> + '_ {
    problems
        .into_iter()
        .map(move |p| format!("{}: {p}", path.display()))
}

/// Reads `deps.json` by the streaming scan, or by the careful reader when
/// the scan declines (its problems become warnings).
fn read_deps(
    input: &Path,
    detail: Detail,
    warnings: &mut Vec<String>,
) -> Result<DepsScan, ToolError> {
    if pto_dfx::compact::sniff(input) == Some(pto_dfx::compact::CompactKind::Deps) {
        return Ok(DepsScan::read_compact(input, detail)?);
    }
    match deps_scan::scan_file(input, detail)? {
        Scanned::Read(scan) => Ok(scan),
        Scanned::Declined => {
            let loaded = pto_dfx::deps::read(input)?;
            warnings.extend(with_file(input, loaded.problems));
            Ok(DepsScan::from_file(&loaded.value))
        }
    }
}

/// Writes the text or HTML view of `options.input` (see the module docs); an HTML page of
/// more than [`DEFAULT_LOD_ABOVE`] nodes is the level-of-detail view.
pub fn view(options: &DepsViewerOptions<'_>) -> Result<DepsViewerReport, ToolError> {
    view_with_lod(options, DEFAULT_LOD_ABOVE)
}

/// [`view`], with the HTML page the level-of-detail view when the graph has more than
/// `lod_above` nodes (`0`: always; `usize::MAX`: never); see the module docs.
pub fn view_with_lod(
    options: &DepsViewerOptions<'_>,
    lod_above: usize,
) -> Result<DepsViewerReport, ToolError> {
    let input = options.input;
    let dir = crate::parent_dir(input);
    let mut warnings = Vec::new();
    let detail = if options.edge_mode.dataflow() {
        Detail::Full
    } else {
        Detail::Graph
    };
    let scan = read_deps(input, detail, &mut warnings)?;
    let (names, name_problems) =
        names::resolve(dir, options.func_names, None, SiblingPolicy::Newest)?;
    if let Some(src) = &names.source {
        warnings.extend(with_file(src, name_problems));
    }
    let timing = sidecar_timing(dir, &mut warnings);
    let perf = !timing.is_empty();
    warn_duplicate_tasks(input, &scan, &mut warnings);
    let mut graph = Graph::build(&scan, &names, timing);
    if options.format == Format::Text {
        // Names come from files: no terminal escapes in the listing.
        for n in &mut graph.names {
            if let std::borrow::Cow::Owned(clean) = pto_dfx::printable::printable(n) {
                *n = clean;
            }
        }
    }
    let (selected, reduction) = select(&graph, &scan, options.edge_mode, &mut warnings);
    let output = match options.output {
        Some(p) => p.to_path_buf(),
        None => default_output(input, options.format, options.edge_mode),
    };
    let n_unique = selected.iter().filter(|&&s| s).count();
    let n_annotated = (0..graph.pairs.len())
        .filter(|&k| selected[k])
        .map(|k| (graph.ann_off[k + 1] - graph.ann_off[k]) as usize)
        .sum();
    let adj = Adjacency::new(graph.nodes.len(), &graph.pairs, |k| selected[k]);
    let mut layout_used = None;
    let mut aggregates = None;
    let mut file = AtomicFile::create(&output)?;
    match options.format {
        Format::Text => write_text(
            &graph,
            &scan,
            &adj,
            &TextSummary {
                input,
                n_unique,
                n_annotated,
                perf,
                named: !names.is_empty(),
            },
            &mut file,
        )?,
        Format::Html if graph.nodes.len() > lod_above => {
            let drawn = lod::write_lod_html(
                &graph,
                &adj,
                &selected,
                input,
                options.layout,
                lod_above,
                &mut warnings,
                &mut file,
            )?;
            layout_used = Some(drawn.layout);
            aggregates = Some(drawn.aggregates);
        }
        Format::Html => {
            let used = write_html(
                &graph,
                &scan,
                &adj,
                &selected,
                input,
                options.layout,
                &mut warnings,
                &mut file,
            )?;
            layout_used = Some(used);
        }
    }
    file.commit()?;
    Ok(DepsViewerReport {
        output,
        format: options.format,
        n_nodes: graph.nodes.len(),
        n_unique_edges: n_unique,
        n_annotated_edges: n_annotated,
        layout: layout_used,
        reduction,
        aggregates,
        warnings,
    })
}

struct TextSummary<'a> {
    input: &'a Path,
    n_unique: usize,
    n_annotated: usize,
    perf: bool,
    named: bool,
}

/// Streams the listing. Kernel names and the input path come from files, so
/// they go through [`pto_dfx::printable::printable`] (no terminal escapes);
/// everything else is ASCII this function writes.
fn write_text(
    g: &Graph,
    scan: &DepsScan,
    adj: &Adjacency,
    sum: &TextSummary<'_>,
    file: &mut AtomicFile,
) -> Result<(), ToolError> {
    const FLUSH: usize = 1 << 16;
    let mut out = String::with_capacity(2 * FLUSH);
    let flush = |out: &mut String, file: &mut AtomicFile| -> Result<(), ToolError> {
        file.write_all(out.as_bytes())?;
        out.clear();
        Ok(())
    };
    let yes = |b: bool| if b { "yes" } else { "no" };
    let _ = writeln!(out, "SUMMARY");
    let _ = writeln!(
        out,
        "  source_deps_json: {}",
        pto_dfx::printable::printable(&sum.input.display().to_string())
    );
    let _ = writeln!(out, "  tasks: {}", g.nodes.len());
    let _ = writeln!(out, "  unique_task_edges: {}", sum.n_unique);
    let _ = writeln!(out, "  annotated_edges: {}", sum.n_annotated);
    let _ = writeln!(out, "  tensors: {}", scan.n_tensors);
    let _ = writeln!(out, "  perf_sidecar: {}", yes(sum.perf));
    let _ = writeln!(out, "  func_name_map: {}", yes(sum.named));
    let _ = writeln!(out, "\nTASK INDEX");
    for i in 0..g.nodes.len() {
        g.header(i, &mut out);
        out.push_str(" fanin=");
        push_u64(&mut out, adj.preds(i).len() as u64);
        out.push_str(" fanout=");
        push_u64(&mut out, adj.succs(i).len() as u64);
        out.push('\n');
        if out.len() >= FLUSH {
            flush(&mut out, file)?;
        }
    }
    for i in 0..g.nodes.len() {
        out.push_str("\n=== ");
        g.header(i, &mut out);
        out.push_str(" ===\n");
        if let Some((start, end, cores)) = g.timings.get(g.nodes[i].timing as usize) {
            // µs with three decimals, from integer ns.
            let us = |out: &mut String, ns: u64| {
                push_u64(out, ns / 1000);
                let frac = ns % 1000;
                out.push('.');
                out.push_str(if frac < 10 {
                    "00"
                } else if frac < 100 {
                    "0"
                } else {
                    ""
                });
                push_u64(out, frac);
            };
            out.push_str("TIMING start_us=");
            us(&mut out, *start);
            out.push_str(" end_us=");
            us(&mut out, *end);
            out.push_str(" cores=[");
            for (j, c) in cores.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                push_u64(&mut out, u64::from(*c));
            }
            out.push_str("]\n");
        }
        out.push_str("FANIN ");
        push_u64(&mut out, adj.preds(i).len() as u64);
        out.push('\n');
        for &k in adj.preds(i) {
            out.push_str("  <- ");
            g.push_disp(g.pairs[k as usize].0 as usize, &mut out);
            out.push_str("  [");
            g.push_notes(scan, k as usize, &mut out);
            out.push_str("]\n");
        }
        out.push_str("FANOUT ");
        push_u64(&mut out, adj.succs(i).len() as u64);
        out.push('\n');
        for &k in adj.succs(i) {
            out.push_str("  -> ");
            g.push_disp(g.pairs[k as usize].1 as usize, &mut out);
            out.push_str("  [");
            g.push_notes(scan, k as usize, &mut out);
            out.push_str("]\n");
        }
        if out.len() >= FLUSH {
            flush(&mut out, file)?;
        }
    }
    flush(&mut out, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPS: &str = r#"{"tasks":[{"task_id":"0","scope":"auto","early_dispatch":false,"kernel_ids":[-1,0,-1],"block_num":1,"args":[]},{"task_id":"4294967296","scope":"manual","early_dispatch":false,"kernel_ids":[1,-1,-1],"block_num":1,"args":[]},{"task_id":"4294967297","scope":"manual","early_dispatch":true,"kernel_ids":[1,2,-1],"block_num":4,"args":[]},{"task_id":"4294967298","scope":"manual","early_dispatch":false,"kernel_ids":[-1,-1,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"0","succ":"4294967296","arg":0,"source":"tensormap","flags":["wait"],"overlap":"covered"},{"pred":"0","succ":"4294967297","arg":0,"source":"tensormap","flags":["wait"],"overlap":"other"},{"pred":"4294967296","succ":"4294967297","arg":-1,"source":"explicit","flags":["wait","retain"]},{"pred":"4294967296","succ":"4294967297","arg":2,"source":"creator","flags":["wait","retain"]},{"pred":"8589934592","succ":"0","arg":1,"source":"creator","flags":["wait","retain"]}]}
"#;

    fn run(format: Format, names: Option<&str>) -> (tempfile::TempDir, DepsViewerReport, String) {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        std::fs::write(&input, DEPS).unwrap();
        if let Some(n) = names {
            std::fs::write(dir.path().join("name_map_T_c.json"), n).unwrap();
        }
        let report = view(&DepsViewerOptions {
            input: &input,
            output: None,
            format,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: EdgeMode::Full,
        })
        .unwrap();
        let text = std::fs::read_to_string(&report.output).unwrap();
        (dir, report, text)
    }

    /// Duplicate task ids were merged silently: the viewer warns, naming them.
    #[test]
    fn duplicate_task_ids_are_a_warning_naming_them() {
        let (_dir, report, _) = run(Format::Text, None);
        assert!(!report.warnings.iter().any(|w| w.contains("more than once")));
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        let first = r#"{"task_id":"0","scope":"auto","early_dispatch":false,"kernel_ids":[-1,0,-1],"block_num":1,"args":[]}"#;
        assert!(DEPS.contains(first));
        std::fs::write(&input, DEPS.replacen(first, &format!("{first},{first}"), 1)).unwrap();
        let report = view(&DepsViewerOptions {
            input: &input,
            output: None,
            format: Format::Text,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: EdgeMode::Full,
        })
        .unwrap();
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.contains("1 task id(s) appear more than once in tasks[]: t0 (2 times)")),
            "{:?}",
            report.warnings
        );
    }

    #[test]
    fn text_summary_index_and_details() {
        let (dir, report, text) = run(Format::Text, Some(r#"{"0": "QK", "1": "SF"}"#));
        assert_eq!(report.output, dir.path().join("deps_viewer.txt"));
        assert_eq!(
            report.n_nodes, 4,
            "dummy without edges is left out, alloc added"
        );
        assert_eq!(report.n_unique_edges, 4);
        assert_eq!(report.n_annotated_edges, 5);
        assert!(report
            .summary_line()
            .ends_with("(4 tasks, 4 unique edges, 5 annotated edges, format=text)"));
        let expected_head = format!(
            "SUMMARY\n  source_deps_json: {}\n  tasks: 4\n  unique_task_edges: 4\n  annotated_edges: 5\n  tensors: 0\n  perf_sidecar: no\n  func_name_map: yes\n\nTASK INDEX\n\
TASK (0, 0) kind=submit func_id=[-1,0,-1] name=QK fanin=1 fanout=2\n\
TASK (1, 0) kind=submit func_id=[1,-1,-1] name=SF fanin=1 fanout=1\n\
TASK (1, 1) kind=submit func_id=[1,2,-1] name=SF+func_2_c SPMD block num = 4 fanin=2 fanout=0\n\
TASK (2, 0) kind=alloc func_id=none fanin=0 fanout=1\n\
\n=== TASK (0, 0) kind=submit func_id=[-1,0,-1] name=QK ===\nFANIN 1\n  <- (2, 0)  [creator arg 1]\nFANOUT 2\n  -> (1, 0)  [tensormap arg 0 covered]\n  -> (1, 1)  [tensormap arg 0 other]\n",
            dir.path().join("deps.json").display()
        );
        assert!(text.starts_with(&expected_head), "{text}");
        assert!(
            text.contains("  <- (1, 0)  [explicit; creator arg 2]\n"),
            "{text}"
        );
        assert!(text.ends_with('\n'));
    }

    #[test]
    fn ring_zero_graphs_show_plain_locals() {
        let deps = r#"{"tasks":[{"task_id":"0","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]},{"task_id":"1","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"0","succ":"1","arg":0,"source":"tensormap","flags":["wait"]}]}"#;
        let Scanned::Read(scan) = deps_scan::scan_bytes(deps.as_bytes(), Detail::Graph) else {
            panic!("declined");
        };
        let g = Graph::build(&scan, &KernelNames::default(), IdMap::default());
        let adj = Adjacency::new(g.nodes.len(), &g.pairs, |_| true);
        assert_eq!(g.disp(0), "0");
        assert_eq!(g.disp(1), "1");
        assert_eq!(
            node_label(&g, &adj, 1),
            "1 \u{b7} func_0_a \u{2193}1 \u{2191}0"
        );
    }

    #[test]
    fn a_swimlane_beside_adds_measured_spans() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        std::fs::write(&input, r#"{"tasks":[{"task_id":"0","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]},{"task_id":"1","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"0","succ":"1","arg":0,"source":"tensormap","flags":["wait"]}]}"#).unwrap();
        // 1 GHz: cycles are ns; the base is the first dispatch (990).
        std::fs::write(
            dir.path().join("chip_swimlane_records.json"),
            r#"{"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 2, "core_types": ["aic", "aiv"]},
              "aicore_tasks": [[0, 0, 1, 1000, 2000, 0], [1, 1, 1, 2500, 3250, 0]],
              "aicpu_tasks": [[0, 1, 990, 2010], [1, 1, 2490, 3260]]}"#,
        )
        .unwrap();
        let report = view(&DepsViewerOptions {
            input: &input,
            output: None,
            format: Format::Text,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: EdgeMode::Full,
        })
        .unwrap();
        let text = std::fs::read_to_string(&report.output).unwrap();
        assert!(text.contains("  perf_sidecar: yes\n"), "{text}");
        assert!(
            text.contains("=== TASK 0 kind=submit func_id=[0,-1,-1] name=func_0_a ===\nTIMING start_us=0.010 end_us=1.010 cores=[0]\n"),
            "{text}"
        );
        assert!(
            text.contains("TIMING start_us=1.510 end_us=2.260 cores=[1]\n"),
            "{text}"
        );
    }

    #[test]
    fn html_escapes_names_and_embeds_data() {
        let (dir, report, html) = run(
            Format::Html,
            Some(r#"{"0": "<script>alert(1)</script>", "1": "a\"b"}"#),
        );
        assert_eq!(report.output, dir.path().join("deps_viewer.html"));
        assert_eq!(report.layout.as_deref(), Some("built-in layered"));
        assert!(!html.contains("<script>alert(1)</script>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"));
        assert!(html.contains("<title>deps.json \u{2014} 4 nodes, 4 edges</title>"));
        assert!(html.contains("id=\"T1_1\""));
        assert!(html.contains("class=\"node k-mix spmd\""));
        assert!(html.contains("class=\"node k-alloc\""));
        assert!(html.contains("class=\"edge partial\""));
        assert!(html.contains("\u{1f525} (1, 1)"), "early dispatch marker");
        assert!(html.contains("\u{1f525} (2, 0)"), "alloc marker");
        // (0, 0)'s only predecessor is an alloc: no star.
        assert!(!html.contains("\u{2b50}"));
    }

    /// Creator 100 (an alloc) owns one FLOAT32 [4] buffer that tasks 1, 2
    /// and 3 update in turn (INOUT, TensorMap flow 1 → 2 → 3), plus an
    /// explicit shortcut 1 → 3.
    fn dataflow_deps(middle: &str) -> String {
        let view =
            r#""tensor_id":"7","dtype":"FLOAT32","shape":[4],"start_offset":"0","strides":[1]"#;
        let cons = r#""tensor_id":"7","consumer_dtype":"FLOAT32","consumer_shape":[4],"consumer_start_offset":"0","consumer_strides":[1]"#;
        let prod = r#""producer_shape":[4],"producer_start_offset":"0","producer_strides":[1]"#;
        let task = |id: u32, ty: &str| {
            format!(
                r#"{{"task_id":"{id}","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[{{"idx":0,"type":"{ty}",{view}}}]}}"#
            )
        };
        let creator = |succ: u32| {
            format!(
                r#"{{"pred":"100","succ":"{succ}","arg":0,"source":"creator","flags":["wait","retain"],{cons}}}"#
            )
        };
        let flow = |pred: u32, succ: u32| {
            format!(
                r#"{{"pred":"{pred}","succ":"{succ}","arg":0,"source":"tensormap","flags":["wait"],"overlap":"covered",{cons},{prod}}}"#
            )
        };
        format!(
            r#"{{"tasks":[{},{},{}],"tensors":[{{"tensor_id":"7","buffer_addr":"4096","version":0,"dtype":"FLOAT32","buffer_numel":"4"}}],"edges":[{},{},{},{},{},{{"pred":"1","succ":"3","arg":-1,"source":"explicit","flags":["wait","retain"]}}]}}"#,
            task(1, "INOUT"),
            task(2, middle),
            task(3, "INOUT"),
            creator(1),
            creator(2),
            creator(3),
            flow(1, 2),
            flow(2, 3)
        )
    }

    fn run_mode(deps: &str, mode: EdgeMode) -> (tempfile::TempDir, DepsViewerReport, String) {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        std::fs::write(&input, deps).unwrap();
        let report = view(&DepsViewerOptions {
            input: &input,
            output: None,
            format: Format::Text,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: mode,
        })
        .unwrap();
        let text = std::fs::read_to_string(&report.output).unwrap();
        (dir, report, text)
    }

    #[test]
    fn edge_modes_reduce_protect_creators_and_prove_dataflow() {
        let deps = dataflow_deps("INOUT");
        // Structural: 100→2 (via 1), 100→3 and 1→3 (via 2) are implied.
        let (dir, report, text) = run_mode(&deps, EdgeMode::Reduced);
        assert_eq!(report.output, dir.path().join("deps_viewer_reduced.txt"));
        let r = report.reduction.clone().unwrap();
        assert_eq!(r.removed, ["1 -> 3"], "creator pairs are protected");
        assert_eq!(
            r.headline(),
            "Transitive reduction: removed 1 redundant edge(s) of 6 (5 kept)"
        );
        assert_eq!(report.n_unique_edges, 5);
        assert!(text.contains("  unique_task_edges: 5\n"), "{text}");
        assert!(!text.contains("  -> 3  [explicit]"), "{text}");

        let (dir, report, text) = run_mode(&deps, EdgeMode::Omitted);
        assert_eq!(report.output, dir.path().join("deps_viewer_omitted.txt"));
        assert_eq!(report.n_unique_edges, 1);
        assert!(text.contains("=== TASK 1 kind=submit func_id=[0,-1,-1] name=func_0_a ===\nFANIN 0\nFANOUT 1\n  -> 3  [explicit]\n"), "{text}");

        // Dataflow: 100→2 is covered by 1's output flowing in and by the
        // flow on to 3's INOUT; 100→3 has no later INOUT, so it stays.
        let (_, report, _) = run_mode(&deps, EdgeMode::ReducedDataflow);
        let r = report.reduction.unwrap();
        assert_eq!(r.removed, ["1 -> 3", "100 -> 2"]);
        assert_eq!(report.n_unique_edges, 4);
        let (_, report, text) = run_mode(&deps, EdgeMode::OmittedDataflow);
        assert_eq!(report.n_unique_edges, 2);
        assert!(text.contains("  -> 2  [creator arg 0]\n"), "{text}");

        // An OUTPUT_EXISTING consumer is a reuse boundary: never dropped.
        let (_, report, _) = run_mode(&dataflow_deps("OUTPUT_EXISTING"), EdgeMode::ReducedDataflow);
        assert_eq!(report.reduction.unwrap().removed, ["1 -> 3"]);
        // A shrunk inflow no longer covers the region.
        let partial = deps.replacen(r#""producer_shape":[4]"#, r#""producer_shape":[2]"#, 1);
        let (_, report, _) = run_mode(&partial, EdgeMode::ReducedDataflow);
        assert_eq!(report.reduction.unwrap().removed, ["1 -> 3"]);

        // A cycle: the full graph, with a warning.
        let cyclic = deps.replace(
            r#"{"pred":"1","succ":"3","arg":-1"#,
            r#"{"pred":"3","succ":"1","arg":-1"#,
        );
        let (_, report, _) = run_mode(&cyclic, EdgeMode::Reduced);
        assert!(report.reduction.is_none());
        assert_eq!(report.n_unique_edges, 6);
        assert!(
            report.warnings[0].contains("cycle"),
            "{:?}",
            report.warnings
        );
    }

    #[test]
    fn html_keeps_every_edge_and_hides_the_unselected() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        std::fs::write(&input, dataflow_deps("INOUT")).unwrap();
        let opts = |mode| DepsViewerOptions {
            input: &input,
            output: None,
            format: Format::Html,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: mode,
        };
        let full = view(&opts(EdgeMode::Full)).unwrap();
        let reduced = view(&opts(EdgeMode::Reduced)).unwrap();
        assert_eq!(reduced.output, dir.path().join("deps_viewer_reduced.html"));
        let full = std::fs::read_to_string(full.output).unwrap();
        let reduced = std::fs::read_to_string(reduced.output).unwrap();
        let paths = |h: &str| h.matches("<path class=\"edge").count();
        assert_eq!(paths(&full), 6);
        assert_eq!(paths(&reduced), 6);
        assert_eq!(reduced.matches("hidden-edge\"").count(), 1);
        assert!(!full.contains("hidden-edge\""));
        // Same placement: the node groups are identical apart from labels' counts.
        let nodes = |h: &str| -> Vec<String> {
            h.lines()
                .filter(|l| l.starts_with("<g class=\"node"))
                .map(|l| l.split("<text").next().unwrap_or("").to_string())
                .collect()
        };
        assert_eq!(nodes(&full), nodes(&reduced));
        // The hidden edge is drawn first, under the selected ones.
        let first = reduced.find("<path class=\"edge").unwrap();
        assert!(reduced[first..].starts_with("<path class=\"edge explicit hidden-edge\""));
    }

    #[test]
    fn missing_key_names_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        std::fs::write(&input, "{\"tasks\": [], \"edges\": []}").unwrap();
        let err = view(&DepsViewerOptions {
            input: &input,
            output: None,
            format: Format::Text,
            layout: LayoutChoice::Auto,
            func_names: None,
            edge_mode: EdgeMode::Full,
        })
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&input.display().to_string()) && msg.contains("`tensors`"),
            "{msg}"
        );
    }
}
