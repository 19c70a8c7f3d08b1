//! `pto deps-viewer`: `deps.json` as a text summary or a self-contained,
//! interactive HTML graph.
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
//! names and annotations.
//!
//! **HTML** (`deps_viewer.html`): one SVG, laid out by a Graphviz engine
//! when it is on `PATH` (run as a child process, see
//! [`layout::graphviz`]) and by the built-in layered layout otherwise
//! ([`layout::layered`]), so the page works on any machine. Nodes are
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
//! A `chip_swimlane_records.json` beside the input adds each task's
//! measured span to the details (`perf_sidecar: yes`); a `name_map_*.json`
//! beside it (the newest) names the kernels unless `--func-names` is given.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::atomic::AtomicFile;
use crate::deps::{DepsFile, EdgeSource, Overlap};
use crate::error::Problem;
use crate::task_id::TaskId;
use crate::tools::error::ToolError;
use crate::tools::html::{self, escape, num, Page};
use crate::tools::layout::{self, Engine, Layout, Size};
use crate::tools::names::{self, KernelNames, SiblingPolicy};

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

/// How the HTML graph is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutChoice {
    /// `dot` when it is on `PATH` and the graph has at most
    /// [`AUTO_GRAPHVIZ_MAX_NODES`] nodes, else the built-in layout.
    Auto,
    /// Always the built-in layered layout.
    Builtin,
    /// This Graphviz engine; the built-in layout (with a warning) when it is
    /// not on `PATH`.
    Graphviz(Engine),
}

/// Above this many nodes, [`LayoutChoice::Auto`] skips Graphviz, whose
/// `dot` takes minutes on graphs of many thousands of nodes.
pub const AUTO_GRAPHVIZ_MAX_NODES: usize = 2000;

/// What to show and where.
#[derive(Clone, Copy, Debug)]
pub struct DepsViewerOptions<'a> {
    /// The `deps.json`.
    pub input: &'a Path,
    /// The output; default `deps_viewer.{txt,html}` beside the input.
    pub output: Option<&'a Path>,
    /// Text or HTML.
    pub format: Format,
    /// The HTML layout (ignored for text).
    pub layout: LayoutChoice,
    /// A name map; default the newest `name_map*.json` beside the input.
    pub func_names: Option<&'a Path>,
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
    /// Unique `(pred, succ)` pairs.
    pub n_unique_edges: usize,
    /// `edges[]` entries.
    pub n_annotated_edges: usize,
    /// The layout used (HTML): `graphviz dot`, `built-in layered`.
    pub layout: Option<String>,
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

/// The HTML style class: which cores a task uses.
fn core_class(kind: Kind, kernel_ids: &[i32]) -> &'static str {
    if kind == Kind::Alloc {
        return "alloc";
    }
    let aic = kernel_ids.first().is_some_and(|&k| k >= 0);
    let aiv = kernel_ids.iter().skip(1).any(|&k| k >= 0);
    match (aic, aiv) {
        (true, true) => "mix",
        (true, false) => "aic",
        (false, true) => "aiv",
        (false, false) => "other",
    }
}

struct Node {
    id: TaskId,
    kind: Kind,
    kernel_ids: Vec<i32>,
    block_num: u32,
    early_dispatch: bool,
    name: String,
    preds: Vec<usize>,
    succs: Vec<usize>,
    /// Measured span (µs since the swimlane base) and cores, from the sidecar.
    timing: Option<(f64, f64, Vec<u32>)>,
}

struct Graph {
    nodes: Vec<Node>,
    /// Unique edges (pred, succ) as node indices, with their annotations.
    edges: Vec<(usize, usize)>,
    notes: Vec<Vec<String>>,
    explicit_only: Vec<bool>,
    partial_overlap: Vec<bool>,
    ring0: bool,
    n_annotated: usize,
    n_tensors: usize,
}

impl Graph {
    fn disp(&self, i: usize) -> String {
        let id = self.nodes[i].id;
        if self.ring0 {
            id.local().to_string()
        } else {
            format!("({}, {})", id.ring(), id.local())
        }
    }

    fn build(
        file: &DepsFile,
        names: &KernelNames,
        timing: &HashMap<u64, (f64, f64, Vec<u32>)>,
    ) -> Self {
        let mut index: HashMap<u64, usize> = HashMap::new();
        let mut nodes: Vec<Node> = Vec::new();
        let task_of: HashMap<u64, usize> = file
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.task_id.raw(), i))
            .collect();
        let mut add = |id: TaskId, nodes: &mut Vec<Node>| -> usize {
            *index.entry(id.raw()).or_insert_with(|| {
                let (kind, kernel_ids, block_num, early) = match task_of.get(&id.raw()) {
                    Some(&t) => {
                        let t = &file.tasks[t];
                        let kind = if t.is_dummy() {
                            Kind::Dummy
                        } else {
                            Kind::Submit
                        };
                        (
                            kind,
                            t.kernel_ids.clone(),
                            t.block_num.max(1),
                            t.early_dispatch,
                        )
                    }
                    None => (Kind::Alloc, Vec::new(), 1, false),
                };
                let name = match kind {
                    Kind::Alloc => String::from("alloc"),
                    Kind::Dummy => String::from("dummy"),
                    Kind::Submit => {
                        let mut parts: Vec<String> = Vec::new();
                        for &k in kernel_ids.iter().filter(|&&k| k >= 0) {
                            let label = names.label(i64::from(k));
                            if !parts.contains(&label) {
                                parts.push(label);
                            }
                        }
                        parts.join("+")
                    }
                };
                nodes.push(Node {
                    id,
                    kind,
                    kernel_ids,
                    block_num,
                    early_dispatch: early,
                    name,
                    preds: Vec::new(),
                    succs: Vec::new(),
                    timing: timing.get(&id.raw()).cloned(),
                });
                nodes.len() - 1
            })
        };
        for t in &file.tasks {
            if !t.is_dummy() || timing.contains_key(&t.task_id.raw()) {
                add(t.task_id, &mut nodes);
            }
        }
        let mut pair_index: HashMap<(usize, usize), usize> = HashMap::new();
        let mut edges = Vec::new();
        let mut notes: Vec<Vec<String>> = Vec::new();
        let mut explicit_only = Vec::new();
        let mut partial_overlap = Vec::new();
        for e in &file.edges {
            let p = add(e.pred, &mut nodes);
            let s = add(e.succ, &mut nodes);
            let k = *pair_index.entry((p, s)).or_insert_with(|| {
                edges.push((p, s));
                notes.push(Vec::new());
                explicit_only.push(true);
                partial_overlap.push(false);
                edges.len() - 1
            });
            let mut note = String::from(e.source.as_str());
            if e.source != EdgeSource::Explicit {
                let _ = write!(note, " arg {}", e.arg);
            }
            if let Some(o) = e.overlap {
                let _ = write!(note, " {}", o.as_str());
                if o == Overlap::Other {
                    partial_overlap[k] = true;
                }
            }
            if e.source != EdgeSource::Explicit {
                explicit_only[k] = false;
            }
            notes[k].push(note);
        }
        // Sort nodes by id and renumber.
        let mut order: Vec<usize> = (0..nodes.len()).collect();
        order.sort_by_key(|&i| nodes[i].id);
        let mut new_of = vec![0usize; nodes.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old] = new;
        }
        let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
        let mut nodes: Vec<Node> = order.iter().filter_map(|&old| slots[old].take()).collect();
        let edges: Vec<(usize, usize)> = edges
            .into_iter()
            .map(|(p, s)| (new_of[p], new_of[s]))
            .collect();
        for &(p, s) in &edges {
            if p != s {
                nodes[p].succs.push(s);
                nodes[s].preds.push(p);
            }
        }
        for n in &mut nodes {
            n.succs.sort_unstable();
            n.preds.sort_unstable();
        }
        let ring0 = nodes.iter().all(|n| n.id.ring() == 0);
        Graph {
            nodes,
            edges,
            notes,
            explicit_only,
            partial_overlap,
            ring0,
            n_annotated: file.edges.len(),
            n_tensors: file.tensors.len(),
        }
    }

    fn func_label(&self, i: usize) -> String {
        let n = &self.nodes[i];
        let mut out = if n.kind == Kind::Submit {
            let ids: Vec<String> = n.kernel_ids.iter().map(i32::to_string).collect();
            format!("func_id=[{}]", ids.join(","))
        } else {
            String::from("func_id=none")
        };
        if n.kind == Kind::Submit && !n.name.is_empty() {
            let _ = write!(out, " name={}", n.name);
        }
        if n.block_num > 1 {
            let _ = write!(out, " SPMD block num = {}", n.block_num);
        }
        out
    }

    fn fire(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        n.kind == Kind::Alloc || n.early_dispatch
    }

    fn star(&self, i: usize) -> bool {
        let preds = &self.nodes[i].preds;
        !preds.is_empty()
            && preds.iter().all(|&p| self.fire(p))
            && preds.iter().any(|&p| self.nodes[p].kind != Kind::Alloc)
    }
}

/// The default output beside `input`.
pub fn default_output(input: &Path, format: Format) -> PathBuf {
    let dir = super::parent_dir(input);
    dir.join(match format {
        Format::Text => "deps_viewer.txt",
        Format::Html => "deps_viewer.html",
    })
}

/// Task spans from a swimlane file beside `deps` (µs, min start .. max end).
fn sidecar_timing(dir: &Path, warnings: &mut Vec<String>) -> HashMap<u64, (f64, f64, Vec<u32>)> {
    let path = dir.join(crate::swimlane::FILE_NAME);
    let mut out: HashMap<u64, (f64, f64, Vec<u32>)> = HashMap::new();
    if !path.is_file() {
        return out;
    }
    let timeline = crate::tools::load::load_swimlane(&path)
        .map_err(ToolError::from)
        .and_then(|l| crate::tools::perf::join(&l.value, &path));
    match timeline {
        Ok(t) => {
            for task in &t.tasks {
                let e = out
                    .entry(task.task_id.raw())
                    .or_insert((f64::MAX, 0.0, Vec::new()));
                e.0 = e.0.min(task.start as f64 / 1000.0);
                e.1 = e.1.max(task.end as f64 / 1000.0);
                if !e.2.contains(&task.core_id) {
                    e.2.push(task.core_id);
                }
            }
        }
        Err(e) => warnings.push(format!("perf sidecar not used: {e}")),
    }
    out
}

fn with_file(path: &Path, problems: Vec<Problem>) -> impl Iterator<Item = String> + '_ {
    problems
        .into_iter()
        .map(move |p| format!("{}: {p}", path.display()))
}

/// Writes the text or HTML view of `options.input` (see the module docs).
pub fn view(options: &DepsViewerOptions<'_>) -> Result<DepsViewerReport, ToolError> {
    let input = options.input;
    let dir = super::parent_dir(input);
    let mut warnings = Vec::new();
    let loaded = crate::deps::read(input)?;
    warnings.extend(with_file(input, loaded.problems));
    let (names, name_problems) =
        names::resolve(dir, options.func_names, None, SiblingPolicy::Newest)?;
    if let Some(src) = &names.source {
        warnings.extend(with_file(src, name_problems));
    }
    let timing = sidecar_timing(dir, &mut warnings);
    let graph = Graph::build(&loaded.value, &names, &timing);
    let output = match options.output {
        Some(p) => p.to_path_buf(),
        None => default_output(input, options.format),
    };
    let mut layout_used = None;
    let text = match options.format {
        // Kernel names come from files: no terminal escapes in the listing.
        Format::Text => crate::printable::printable(&render_text(
            &graph,
            input,
            !timing.is_empty(),
            !names.is_empty(),
        ))
        .into_owned(),
        Format::Html => {
            let (html, used) = render_html(&graph, input, options.layout, &mut warnings)?;
            layout_used = Some(used);
            html
        }
    };
    let mut file = AtomicFile::create(&output)?;
    file.write_all(text.as_bytes())?;
    file.commit()?;
    Ok(DepsViewerReport {
        output,
        format: options.format,
        n_nodes: graph.nodes.len(),
        n_unique_edges: graph.edges.len(),
        n_annotated_edges: graph.n_annotated,
        layout: layout_used,
        warnings,
    })
}

fn render_text(g: &Graph, input: &Path, perf: bool, named: bool) -> String {
    let yes = |b: bool| if b { "yes" } else { "no" };
    let mut out = String::with_capacity(256 + 160 * g.nodes.len() + 40 * g.edges.len());
    let _ = writeln!(out, "SUMMARY");
    let _ = writeln!(out, "  source_deps_json: {}", input.display());
    let _ = writeln!(out, "  tasks: {}", g.nodes.len());
    let _ = writeln!(out, "  unique_task_edges: {}", g.edges.len());
    let _ = writeln!(out, "  annotated_edges: {}", g.n_annotated);
    let _ = writeln!(out, "  tensors: {}", g.n_tensors);
    let _ = writeln!(out, "  perf_sidecar: {}", yes(perf));
    let _ = writeln!(out, "  func_name_map: {}", yes(named));
    let _ = writeln!(out, "\nTASK INDEX");
    let headers: Vec<String> = (0..g.nodes.len())
        .map(|i| {
            format!(
                "TASK {} kind={} {}",
                g.disp(i),
                g.nodes[i].kind.as_str(),
                g.func_label(i)
            )
        })
        .collect();
    for (i, h) in headers.iter().enumerate() {
        let n = &g.nodes[i];
        let _ = writeln!(out, "{h} fanin={} fanout={}", n.preds.len(), n.succs.len());
    }
    let mut note_of: HashMap<(usize, usize), usize> = HashMap::with_capacity(g.edges.len());
    for (k, &e) in g.edges.iter().enumerate() {
        note_of.insert(e, k);
    }
    for (i, h) in headers.iter().enumerate() {
        let n = &g.nodes[i];
        let _ = writeln!(out, "\n=== {h} ===");
        if let Some((start, end, cores)) = &n.timing {
            let cores: Vec<String> = cores.iter().map(u32::to_string).collect();
            let _ = writeln!(
                out,
                "TIMING start_us={start:.3} end_us={end:.3} cores=[{}]",
                cores.join(",")
            );
        }
        let _ = writeln!(out, "FANIN {}", n.preds.len());
        for &p in &n.preds {
            let notes = note_of
                .get(&(p, i))
                .map(|&k| g.notes[k].join("; "))
                .unwrap_or_default();
            let _ = writeln!(out, "  <- {}  [{notes}]", g.disp(p));
        }
        let _ = writeln!(out, "FANOUT {}", n.succs.len());
        for &s in &n.succs {
            let notes = note_of
                .get(&(i, s))
                .map(|&k| g.notes[k].join("; "))
                .unwrap_or_default();
            let _ = writeln!(out, "  -> {}  [{notes}]", g.disp(s));
        }
    }
    out
}

fn node_label(g: &Graph, i: usize) -> String {
    let n = &g.nodes[i];
    let mark = if g.fire(i) {
        "\u{1f525} "
    } else if g.star(i) {
        "\u{2b50} "
    } else {
        ""
    };
    format!(
        "{mark}{} \u{b7} {} \u{2193}{} \u{2191}{}",
        g.disp(i),
        n.name,
        n.preds.len(),
        n.succs.len()
    )
}

fn dom_id(id: TaskId) -> String {
    format!("T{}_{}", id.ring(), id.local())
}

fn by_hint(g: &Graph, list: &[usize]) -> Value {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for &j in list {
        *counts.entry(g.nodes[j].name.as_str()).or_default() += 1;
    }
    Value::Array(counts.into_iter().map(|(h, n)| json!([h, n])).collect())
}

fn render_html(
    g: &Graph,
    input: &Path,
    choice: LayoutChoice,
    warnings: &mut Vec<String>,
) -> Result<(String, String), ToolError> {
    let labels: Vec<String> = (0..g.nodes.len()).map(|i| node_label(g, i)).collect();
    let sizes: Vec<Size> = labels
        .iter()
        .map(|l| Size {
            w: (l.chars().count() as f64 * 6.6 + 22.0).max(48.0),
            h: 26.0,
        })
        .collect();
    let engine = match choice {
        LayoutChoice::Builtin => None,
        LayoutChoice::Auto => (g.nodes.len() <= AUTO_GRAPHVIZ_MAX_NODES
            && Engine::Dot.is_available())
        .then_some(Engine::Dot),
        LayoutChoice::Graphviz(e) if e.is_available() => Some(e),
        LayoutChoice::Graphviz(e) => {
            warnings.push(format!(
                "graphviz `{}` is not on PATH; used the built-in layout (install graphviz for its layouts)",
                e.program()
            ));
            None
        }
    };
    let (layout, used): (Layout, String) = match engine {
        Some(e) => (
            layout::graphviz(e, &sizes, &labels, &g.edges)?,
            format!("graphviz {}", e.program()),
        ),
        None => (
            layout::layered(&sizes, &g.edges),
            String::from("built-in layered"),
        ),
    };

    // Data for the script: per-node details and SPMD badges.
    let mut stats = Map::new();
    let mut badges = Map::new();
    let mut ids = Vec::with_capacity(g.nodes.len());
    for (i, n) in g.nodes.iter().enumerate() {
        let id = dom_id(n.id);
        if n.block_num > 1 {
            badges.insert(id.clone(), json!(n.block_num));
        }
        let list = |l: &[usize]| -> Value {
            Value::Array(l.iter().take(200).map(|&j| json!(g.disp(j))).collect())
        };
        let mut s = Map::new();
        s.insert("block_num".into(), json!(n.block_num));
        s.insert("fanin".into(), json!(n.preds.len()));
        s.insert("fanout".into(), json!(n.succs.len()));
        s.insert("kernel_ids".into(), json!(n.kernel_ids));
        s.insert("kind".into(), json!(n.kind.as_str()));
        s.insert("label".into(), json!(labels[i]));
        s.insert("name_hint".into(), json!(n.name));
        s.insert("pred_by_hint".into(), by_hint(g, &n.preds));
        s.insert("preds".into(), list(&n.preds));
        s.insert("succ_by_hint".into(), by_hint(g, &n.succs));
        s.insert("succs".into(), list(&n.succs));
        s.insert("task".into(), json!(g.disp(i)));
        s.insert("task_id".into(), json!(n.id.raw().to_string()));
        if let Some((start, end, cores)) = &n.timing {
            s.insert("cores".into(), json!(cores));
            s.insert("end_us".into(), json!(end));
            s.insert("start_us".into(), json!(start));
        }
        stats.insert(id.clone(), Value::Object(s));
        ids.push(id);
    }

    let file_name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| String::from("deps.json"));
    let title = format!(
        "{file_name} \u{2014} {} nodes, {} edges",
        g.nodes.len(),
        g.edges.len()
    );

    let mut body = String::with_capacity(200 * g.nodes.len() + 120 * g.edges.len() + 4096);
    let _ = writeln!(
        body,
        "<header><h1>{}</h1><span class=\"hint\">layout: {} \u{b7} drag to pan \u{b7} wheel to zoom \u{b7} <kbd>f</kbd> fit \u{b7} <kbd>r</kbd> reset \u{b7} click a task for details</span>\
<span class=\"legend\"><i class=\"k-aic\"></i>AIC <i class=\"k-aiv\"></i>AIV <i class=\"k-mix\"></i>MIX <i class=\"k-alloc\"></i>alloc <i class=\"k-other\"></i>dummy/other <i class=\"k-spmd\"></i>SPMD</span></header>",
        escape(&title),
        escape(&used)
    );
    let _ = write!(
        body,
        "<main><svg id=\"graph\" data-w=\"{}\" data-h=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\
<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"1\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#888\"/></marker>\
<marker id=\"arrow-red\" viewBox=\"0 0 10 10\" refX=\"1\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#c62828\"/></marker></defs>\
<g id=\"viewport\">\n<g id=\"edges\">\n",
        num(layout.width),
        num(layout.height)
    );
    for (k, pts) in layout.edges.iter().enumerate() {
        if pts.len() < 2 {
            continue;
        }
        let (p, s) = g.edges[k];
        let mut d = format!("M{},{}", num(pts[0].x), num(pts[0].y));
        if (pts.len() - 1) % 3 == 0 {
            for c in pts[1..].chunks(3) {
                let _ = write!(
                    d,
                    "C{},{} {},{} {},{}",
                    num(c[0].x),
                    num(c[0].y),
                    num(c[1].x),
                    num(c[1].y),
                    num(c[2].x),
                    num(c[2].y)
                );
            }
        } else {
            for q in &pts[1..] {
                let _ = write!(d, "L{},{}", num(q.x), num(q.y));
            }
        }
        let mut class = String::from("edge");
        if g.explicit_only[k] {
            class.push_str(" explicit");
        }
        let marker = if g.partial_overlap[k] {
            class.push_str(" partial");
            "arrow-red"
        } else {
            "arrow"
        };
        let _ = writeln!(
            body,
            "<path class=\"{class}\" d=\"{d}\" marker-end=\"url(#{marker})\"><title>{} \u{2192} {}: {}</title></path>",
            escape(&g.disp(p)),
            escape(&g.disp(s)),
            escape(&g.notes[k].join("; "))
        );
    }
    body.push_str("</g>\n<g id=\"nodes\">\n");
    for (i, n) in g.nodes.iter().enumerate() {
        let c = layout.nodes[i];
        let (w, h) = (sizes[i].w, sizes[i].h);
        let class = core_class(n.kind, &n.kernel_ids);
        let spmd = if n.block_num > 1 { " spmd" } else { "" };
        let _ = write!(
            body,
            "<g class=\"node k-{class}{spmd}\" id=\"{}\" transform=\"translate({},{})\">",
            ids[i],
            num(c.x),
            num(c.y)
        );
        let (hw, hh) = (num(w / 2.0), num(h / 2.0));
        match class {
            "aiv" => {
                let _ = write!(body, "<ellipse rx=\"{hw}\" ry=\"{hh}\"/>");
            }
            "mix" => {
                let _ = write!(body, "<polygon points=\"-{hw},0 0,-{hh} {hw},0 0,{hh}\"/>");
            }
            _ => {
                let _ = write!(
                    body,
                    "<rect x=\"-{hw}\" y=\"-{hh}\" width=\"{}\" height=\"{}\" rx=\"5\"/>",
                    num(w),
                    num(h)
                );
            }
        }
        let _ = writeln!(
            body,
            "<text dy=\"0.35em\">{}</text><title>{}</title></g>",
            escape(&labels[i]),
            escape(&labels[i])
        );
    }
    body.push_str("</g>\n</g></svg>\n<aside id=\"panel\" hidden><button id=\"close\" title=\"close\">\u{d7}</button><h2 id=\"panel-title\"></h2><pre id=\"panel-body\"></pre></aside></main>\n<pre id=\"selftest-result\" hidden></pre>\n");
    let _ = write!(
        body,
        "<script type=\"application/json\" id=\"stats\">{}</script>\n<script type=\"application/json\" id=\"spmd\">{}</script>",
        html::script_json(&Value::Object(stats)),
        html::script_json(&Value::Object(badges))
    );
    let page = Page {
        title: &title,
        style: STYLE,
        body: &body,
        script: SCRIPT,
    };
    Ok((page.render(), used))
}

const STYLE: &str = r#"html, body { margin: 0; height: 100%; font: 13px Helvetica, Arial, sans-serif; color: #222; }
body { display: flex; flex-direction: column; }
header { padding: 6px 12px; border-bottom: 1px solid #ddd; display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 15px; margin: 0; }
.hint, .legend { color: #666; }
.legend i { display: inline-block; width: 12px; height: 10px; margin: 0 3px 0 8px; border: 1px solid #555; vertical-align: middle; }
main { flex: 1; position: relative; overflow: hidden; }
#graph { width: 100%; height: 100%; display: block; cursor: grab; background: #fafbfc; touch-action: none; }
#graph.dragging { cursor: grabbing; }
.edge { fill: none; stroke: #999; stroke-width: 1; }
.edge.explicit { stroke-dasharray: 4 3; stroke: #aaa; }
.edge.partial { stroke: #c62828; }
.edge.hl { stroke: #1565c0; stroke-width: 2; }
.node { cursor: pointer; }
.node rect, .node ellipse, .node polygon { stroke: #555; stroke-width: 1; }
.node text { font-size: 11px; text-anchor: middle; pointer-events: none; }
.k-aic rect, i.k-aic { fill: #66A3FF; background: #66A3FF; }
.k-aiv ellipse, i.k-aiv { fill: #FFB366; background: #FFB366; }
.k-mix polygon, i.k-mix { fill: #66CC99; background: #66CC99; }
.k-alloc rect, i.k-alloc { fill: #EAEAEA; background: #EAEAEA; stroke-dasharray: 3 2; }
.k-other rect, i.k-other { fill: #E0E0E0; background: #E0E0E0; }
.spmd rect, .spmd ellipse, .spmd polygon, i.k-spmd { stroke: #C62828; stroke-width: 1.5; }
.node.selected rect, .node.selected ellipse, .node.selected polygon { stroke: #1565c0; stroke-width: 3; }
#panel { position: absolute; top: 8px; right: 8px; width: 340px; max-height: calc(100% - 16px); overflow: auto; background: #fff; border: 1px solid #ccc; box-shadow: 0 2px 8px rgba(0,0,0,.15); padding: 8px 12px; }
#panel h2 { font-size: 14px; margin: 0 24px 6px 0; word-break: break-all; }
#panel pre { white-space: pre-wrap; margin: 0; font-size: 12px; }
#close { position: absolute; top: 4px; right: 6px; border: 0; background: none; font-size: 18px; cursor: pointer; }"#;

const SCRIPT: &str = r#"(function () {
  'use strict';
  var svg = document.getElementById('graph');
  var vp = document.getElementById('viewport');
  var W = +svg.getAttribute('data-w') || 1, H = +svg.getAttribute('data-h') || 1;
  var stats = JSON.parse(document.getElementById('stats').textContent);
  var view = { s: 1, x: 0, y: 0 };
  function apply() {
    vp.setAttribute('transform', 'translate(' + view.x + ',' + view.y + ') scale(' + view.s + ')');
  }
  function fit() {
    var r = svg.getBoundingClientRect(), m = 12;
    var s = Math.min((r.width - 2 * m) / W, (r.height - 2 * m) / H);
    if (!isFinite(s) || s <= 0) { s = 1; }
    view.s = s; view.x = (r.width - W * s) / 2; view.y = (r.height - H * s) / 2;
    apply();
  }
  function reset() { view.s = 1; view.x = 0; view.y = 0; apply(); }
  function zoomAt(cx, cy, factor) {
    var s = Math.min(40, Math.max(0.005, view.s * factor));
    factor = s / view.s;
    view.x = cx - (cx - view.x) * factor; view.y = cy - (cy - view.y) * factor; view.s = s;
    apply();
  }
  var drag = null;
  svg.addEventListener('pointerdown', function (e) {
    if (e.button !== 0) { return; }
    drag = { x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moved: false };
    svg.classList.add('dragging');
  });
  window.addEventListener('pointermove', function (e) {
    if (!drag) { return; }
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (Math.abs(dx) + Math.abs(dy) > 2) { drag.moved = true; }
    view.x = drag.vx + dx; view.y = drag.vy + dy; apply();
  });
  window.addEventListener('pointerup', function () {
    if (drag) { svg.classList.remove('dragging'); lastDragMoved = drag.moved; }
    drag = null;
  });
  var lastDragMoved = false;
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    var r = svg.getBoundingClientRect();
    zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
  }, { passive: false });
  document.addEventListener('keydown', function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (e.key === 'f' || e.key === 'F') { fit(); }
    else if (e.key === 'r' || e.key === 'R') { reset(); }
    else if (e.key === 'Escape') { hidePanel(); }
  });
  var panel = document.getElementById('panel');
  var selected = null;
  function hidePanel() {
    panel.hidden = true;
    if (selected) { selected.classList.remove('selected'); selected = null; }
  }
  document.getElementById('close').addEventListener('click', hidePanel);
  function show(node) {
    var d = stats[node.id];
    if (!d) { return; }
    if (selected) { selected.classList.remove('selected'); }
    selected = node; node.classList.add('selected');
    document.getElementById('panel-title').textContent = d.label;
    var lines = [
      'task ' + d.task + '  (id ' + d.task_id + ')',
      'kind ' + d.kind + (d.kernel_ids.length ? '  kernel_ids [' + d.kernel_ids.join(', ') + ']' : ''),
      'kernel ' + d.name_hint + (d.block_num > 1 ? '  SPMD block num ' + d.block_num : ''),
    ];
    if (d.start_us !== undefined) {
      lines.push('measured ' + d.start_us.toFixed(3) + ' .. ' + d.end_us.toFixed(3) + ' us (' + (d.end_us - d.start_us).toFixed(3) + ' us) on cores ' + d.cores.join(', '));
    }
    lines.push('', 'fanin ' + d.fanin + ': ' + d.pred_by_hint.map(function (p) { return p[0] + ' x' + p[1]; }).join(', '));
    lines.push('  ' + d.preds.join(', ') + (d.preds.length < d.fanin ? ', ...' : ''));
    lines.push('fanout ' + d.fanout + ': ' + d.succ_by_hint.map(function (p) { return p[0] + ' x' + p[1]; }).join(', '));
    lines.push('  ' + d.succs.join(', ') + (d.succs.length < d.fanout ? ', ...' : ''));
    document.getElementById('panel-body').textContent = lines.join('\n');
    panel.hidden = false;
  }
  document.getElementById('nodes').addEventListener('click', function (e) {
    if (lastDragMoved) { lastDragMoved = false; return; }
    var n = e.target.closest ? e.target.closest('g.node') : null;
    if (n) { show(n); }
  });
  fit();

  if (/[?&]selftest\b/.test(location.search)) {
    var out = {};
    var snap = function () { return { s: view.s, x: view.x, y: view.y }; };
    var key = function (k) { document.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true })); };
    out.nodes = document.querySelectorAll('#nodes g.node').length;
    out.edges = document.querySelectorAll('#edges path.edge').length;
    out.scripts = document.scripts.length;
    out.width = W; out.height = H;
    key('r'); out.afterR = snap();
    key('f'); out.afterF = snap();
    var r = svg.getBoundingClientRect(), b = vp.getBoundingClientRect();
    out.fits = b.left >= r.left - 1 && b.top >= r.top - 1 && b.right <= r.right + 1 && b.bottom <= r.bottom + 1;
    var before = snap();
    svg.dispatchEvent(new PointerEvent('pointerdown', { clientX: 100, clientY: 100, button: 0, bubbles: true }));
    window.dispatchEvent(new PointerEvent('pointermove', { clientX: 140, clientY: 125, bubbles: true }));
    window.dispatchEvent(new PointerEvent('pointerup', { clientX: 140, clientY: 125, bubbles: true }));
    out.drag = { dx: view.x - before.x, dy: view.y - before.y };
    lastDragMoved = false;
    var s0 = view.s;
    svg.dispatchEvent(new WheelEvent('wheel', { deltaY: -200, clientX: r.left + 50, clientY: r.top + 50, bubbles: true, cancelable: true }));
    out.zoomIn = view.s > s0;
    key('r'); out.reset = snap();
    var first = document.querySelector('#nodes g.node');
    if (first) {
      first.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      out.panel = !panel.hidden;
      out.panelTitle = document.getElementById('panel-title').textContent;
    }
    out.firstText = first ? first.querySelector('text').textContent : null;
    var res = document.getElementById('selftest-result');
    res.textContent = JSON.stringify(out);
    res.hidden = false;
  }
})();"#;

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
        })
        .unwrap();
        let text = std::fs::read_to_string(&report.output).unwrap();
        (dir, report, text)
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
        let file = crate::deps::parse(deps.as_bytes(), Path::new("d"))
            .unwrap()
            .value;
        let g = Graph::build(&file, &KernelNames::default(), &HashMap::new());
        assert_eq!(g.disp(0), "0");
        assert_eq!(g.disp(1), "1");
        assert_eq!(node_label(&g, 1), "1 \u{b7} func_0_a \u{2193}1 \u{2191}0");
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
        })
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&input.display().to_string()) && msg.contains("`tensors`"),
            "{msg}"
        );
    }
}
