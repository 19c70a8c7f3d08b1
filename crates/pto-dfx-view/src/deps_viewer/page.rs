//! The HTML view of a dependency graph: layout, the SVG of edges and nodes, the per-node
//! details as JSON for the page's script, and the page's CSS and JavaScript (`page.css`,
//! `page.js` beside this module, included at build time).
//!
//! The page is streamed into the output file: the body is written in 64 KiB pieces.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{Adjacency, Graph, Kind, LayoutChoice, AUTO_GRAPHVIZ_BUDGET, AUTO_GRAPHVIZ_MAX_NODES};
use crate::error::ToolError;
use crate::html::{self, escape, num, Page};
use crate::layout::{self, Engine, Layout, Size};
use pto_dfx::atomic::AtomicFile;
use pto_dfx::deps_scan::DepsScan;
use pto_dfx::task_id::TaskId;

/// The HTML style class: which cores a task uses.
pub(super) fn core_class(kind: Kind, kernel_ids: &[i32]) -> &'static str {
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

pub(super) fn node_label(g: &Graph, adj: &Adjacency, i: usize) -> String {
    let mark = if g.fire(i) {
        "\u{1f525} "
    } else if g.star(adj, i) {
        "\u{2b50} "
    } else {
        ""
    };
    format!(
        "{mark}{} \u{b7} {} \u{2193}{} \u{2191}{}",
        g.disp(i),
        g.name(i),
        adj.preds(i).len(),
        adj.succs(i).len()
    )
}

fn dom_id(id: TaskId) -> String {
    format!("T{}_{}", id.ring(), id.local())
}

fn by_hint(g: &Graph, nodes: impl Iterator<Item = usize>) -> Value {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for j in nodes {
        *counts.entry(g.name(j)).or_default() += 1;
    }
    Value::Array(counts.into_iter().map(|(h, n)| json!([h, n])).collect())
}

/// Appends `{"<key>":<value>,...}` with keys in sorted order, each value made
/// by `value(i)` for item `i` of `keys`, safe for a script element.
fn push_sorted_object(
    body: &mut Body<'_>,
    keys: &[String],
    mut value: impl FnMut(usize) -> Option<Value>,
) -> Result<(), ToolError> {
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]));
    body.text.push('{');
    let mut first = true;
    for i in order {
        let i = i as usize;
        let Some(v) = value(i) else { continue };
        if !first {
            body.text.push(',');
        }
        first = false;
        body.text
            .push_str(&html::script_json(&Value::String(keys[i].clone())));
        body.text.push(':');
        body.text.push_str(&html::script_json(&v));
        body.flush_if_full()?;
    }
    body.text.push('}');
    Ok(())
}

/// The Graphviz engine `choice` asks for and its budget, if it is to be run.
fn graphviz_engine(
    choice: LayoutChoice,
    n_nodes: usize,
    warnings: &mut Vec<String>,
) -> Option<(Engine, Option<Duration>)> {
    match choice {
        LayoutChoice::Builtin => None,
        LayoutChoice::Auto => (n_nodes <= AUTO_GRAPHVIZ_MAX_NODES && Engine::Dot.is_available())
            .then_some((Engine::Dot, Some(AUTO_GRAPHVIZ_BUDGET))),
        LayoutChoice::Graphviz { engine, budget } if engine.is_available() => {
            Some((engine, budget))
        }
        LayoutChoice::Graphviz { engine, .. } => {
            warnings.push(format!(
                "graphviz `{}` is not on PATH; used the built-in layout (install graphviz for its layouts)",
                engine.program()
            ));
            None
        }
    }
}

/// Lays the graph out as `choice` says; returns the layout and its name. A Graphviz
/// engine that overruns its budget is killed and the built-in layout used, with a warning.
pub(super) fn lay_out(
    choice: LayoutChoice,
    sizes: &[Size],
    labels: &[String],
    edges: &[(usize, usize)],
    warnings: &mut Vec<String>,
) -> Result<(Layout, String), ToolError> {
    if let Some((engine, budget)) = graphviz_engine(choice, sizes.len(), warnings) {
        match layout::graphviz(engine, sizes, labels, edges, budget)? {
            Some(l) => return Ok((l, format!("graphviz {}", engine.program()))),
            None => warnings.push(format!(
                "graphviz `{}` did not lay out {} nodes within {} s and was stopped; used the \
                 built-in layout ({} waits longer)",
                engine.program(),
                sizes.len(),
                budget.unwrap_or_default().as_secs_f64(),
                match choice {
                    LayoutChoice::Auto => "`--engine dot --layout-timeout SECS`",
                    _ => "a larger `--layout-timeout`, or 0,",
                }
            )),
        }
    }
    Ok((
        layout::layered(sizes, edges),
        String::from("built-in layered"),
    ))
}

/// The body is written to the file whenever it passes this many bytes.
pub(super) const FLUSH: usize = 1 << 16;

/// The page body being built, written to `file` in pieces of about [`FLUSH`] bytes.
pub(super) struct Body<'f> {
    /// The text not yet written.
    pub(super) text: String,
    /// The page file.
    pub(super) file: &'f mut AtomicFile,
}

impl Body<'_> {
    /// Writes the text so far if it has passed [`FLUSH`] bytes.
    pub(super) fn flush_if_full(&mut self) -> Result<(), ToolError> {
        if self.text.len() >= FLUSH {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the text so far.
    pub(super) fn flush(&mut self) -> Result<(), ToolError> {
        self.file.write_all(self.text.as_bytes())?;
        self.text.clear();
        Ok(())
    }
}

/// Where each node is drawn: its label, box, DOM id, and the layout with its name.
struct Drawing {
    labels: Vec<String>,
    sizes: Vec<Size>,
    ids: Vec<String>,
    layout: Layout,
    used: String,
}

/// Labels and sizes every node and lays the graph out as `choice` says.
fn draw(
    g: &Graph,
    adj: &Adjacency,
    choice: LayoutChoice,
    warnings: &mut Vec<String>,
) -> Result<Drawing, ToolError> {
    let labels: Vec<String> = (0..g.nodes.len()).map(|i| node_label(g, adj, i)).collect();
    let sizes: Vec<Size> = labels
        .iter()
        .map(|l| Size {
            w: (l.chars().count() as f64 * 6.6 + 22.0).max(48.0),
            h: 26.0,
        })
        .collect();
    // Every pair is laid out, so each edge mode keeps the same placement.
    let edges: Vec<(usize, usize)> = g
        .pairs
        .iter()
        .map(|&(p, s)| (p as usize, s as usize))
        .collect();
    let (layout, used) = lay_out(choice, &sizes, &labels, &edges, warnings)?;
    Ok(Drawing {
        ids: g.nodes.iter().map(|n| dom_id(n.id)).collect(),
        labels,
        sizes,
        layout,
        used,
    })
}

/// The page's title: the input's file name and the counts of nodes and shown edges.
pub(super) fn page_title(g: &Graph, selected: &[bool], input: &Path) -> String {
    let file_name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| String::from("deps.json"));
    let n_shown = selected.iter().filter(|&&s| s).count();
    format!(
        "{file_name} \u{2014} {} nodes, {} edges",
        g.nodes.len(),
        n_shown
    )
}

/// Streams the page into `file` (the body in 64 KiB pieces); returns the layout used.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_html(
    g: &Graph,
    scan: &DepsScan,
    adj: &Adjacency,
    selected: &[bool],
    input: &Path,
    choice: LayoutChoice,
    warnings: &mut Vec<String>,
    file: &mut AtomicFile,
) -> Result<String, ToolError> {
    let drawing = draw(g, adj, choice, warnings)?;
    let title = page_title(g, selected, input);
    let page = Page {
        title: &title,
        style: STYLE,
        body: "",
        script: SCRIPT,
    };
    file.write_all(page.head().as_bytes())?;
    let mut body = Body {
        text: String::with_capacity(2 * FLUSH),
        file,
    };
    push_header(&mut body.text, &title, &drawing.used);
    push_svg_start(&mut body.text, &drawing.layout);
    write_edges(&mut body, g, scan, selected, &drawing.layout)?;
    body.text.push_str("</g>\n<g id=\"nodes\">\n");
    write_nodes(&mut body, g, &drawing)?;
    body.text.push_str("</g>\n</g></svg>\n<aside id=\"panel\" hidden><button id=\"close\" title=\"close\">\u{d7}</button><h2 id=\"panel-title\"></h2><pre id=\"panel-body\"></pre></aside></main>\n<pre id=\"selftest-result\" hidden></pre>\n");
    write_data(&mut body, g, adj, &drawing)?;
    body.text.push_str(&page.tail());
    body.flush()?;
    Ok(drawing.used)
}

/// The header: title, the layout used, the controls and the legend of node kinds.
fn push_header(out: &mut String, title: &str, used: &str) {
    let _ = writeln!(
        out,
        "<header><h1>{}</h1><span class=\"hint\">layout: {} \u{b7} drag to pan \u{b7} wheel to zoom \u{b7} <kbd>f</kbd> fit \u{b7} <kbd>r</kbd> reset \u{b7} click a task for details</span>\
<span class=\"legend\"><i class=\"k-aic\"></i>AIC <i class=\"k-aiv\"></i>AIV <i class=\"k-mix\"></i>MIX <i class=\"k-alloc\"></i>alloc <i class=\"k-other\"></i>dummy/other <i class=\"k-spmd\"></i>SPMD</span></header>",
        escape(title),
        escape(used)
    );
}

/// The SVG's start: its size, the three arrow heads, and the opening of the edge group.
pub(super) fn push_svg_start(out: &mut String, layout: &Layout) {
    let _ = write!(
        out,
        "<main><svg id=\"graph\" data-w=\"{}\" data-h=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">\
<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"1\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#888\"/></marker>\
<marker id=\"arrow-red\" viewBox=\"0 0 10 10\" refX=\"1\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#c62828\"/></marker>\
<marker id=\"arrow-hidden\" viewBox=\"0 0 10 10\" refX=\"1\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#eef2f7\"/></marker></defs>\
<g id=\"viewport\">\n<g id=\"edges\">\n",
        num(layout.width),
        num(layout.height)
    );
}

/// One `<path>` per laid-out pair: the unselected first, so the selected are drawn above.
fn write_edges(
    body: &mut Body<'_>,
    g: &Graph,
    scan: &DepsScan,
    selected: &[bool],
    layout: &Layout,
) -> Result<(), ToolError> {
    for pass in [false, true] {
        for (k, pts) in layout.edges.iter().enumerate() {
            if pts.len() < 2 || selected[k] != pass {
                continue;
            }
            let (p, s) = g.pairs[k];
            let (class, marker) = edge_style(g, scan, k, pass);
            let _ = writeln!(
                body.text,
                "<path class=\"{class}\" d=\"{}\" marker-end=\"url(#{marker})\"><title>{} \u{2192} {}: {}</title></path>",
                edge_path(pts),
                escape(&g.disp(p as usize)),
                escape(&g.disp(s as usize)),
                escape(&g.notes(scan, k))
            );
            body.flush_if_full()?;
        }
    }
    Ok(())
}

/// The SVG path through `pts`: cubic Béziers when the points come in threes after the
/// first (Graphviz's splines), else straight segments.
pub(super) fn edge_path(pts: &[layout::Point]) -> String {
    let mut d = format!("M{},{}", num(pts[0].x), num(pts[0].y));
    if (pts.len() - 1).is_multiple_of(3) {
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
    d
}

/// Pair `k`'s CSS classes and arrow head: dashed if only explicit, faint if not shown
/// (`shown` false), red if its regions overlap only in part.
fn edge_style(g: &Graph, scan: &DepsScan, k: usize, shown: bool) -> (String, &'static str) {
    let mut class = String::from("edge");
    if g.explicit_only(scan, k) {
        class.push_str(" explicit");
    }
    let marker = if !shown {
        class.push_str(" hidden-edge");
        "arrow-hidden"
    } else if g.partial_overlap(scan, k) {
        class.push_str(" partial");
        "arrow-red"
    } else {
        "arrow"
    };
    (class, marker)
}

/// One `<g>` per node: its shape (by the cores it uses), label and tooltip.
fn write_nodes(body: &mut Body<'_>, g: &Graph, drawing: &Drawing) -> Result<(), ToolError> {
    for (i, n) in g.nodes.iter().enumerate() {
        let c = drawing.layout.nodes[i];
        let class = core_class(n.kind, &n.kernel_ids);
        let spmd = if n.block_num > 1 { " spmd" } else { "" };
        let _ = write!(
            body.text,
            "<g class=\"node k-{class}{spmd}\" id=\"{}\" transform=\"translate({},{})\">",
            drawing.ids[i],
            num(c.x),
            num(c.y)
        );
        push_shape(&mut body.text, class, drawing.sizes[i]);
        let label = escape(&drawing.labels[i]);
        let _ = writeln!(
            body.text,
            "<text dy=\"0.35em\">{label}</text><title>{label}</title></g>"
        );
        body.flush_if_full()?;
    }
    Ok(())
}

/// The node's shape for its core class: an ellipse for AIV, a diamond for MIX, else a
/// rounded box.
pub(super) fn push_shape(out: &mut String, class: &str, size: Size) {
    let (w, h) = (size.w, size.h);
    let (hw, hh) = (num(w / 2.0), num(h / 2.0));
    match class {
        "aiv" => {
            let _ = write!(out, "<ellipse rx=\"{hw}\" ry=\"{hh}\"/>");
        }
        "mix" => {
            let _ = write!(out, "<polygon points=\"-{hw},0 0,-{hh} {hw},0 0,{hh}\"/>");
        }
        _ => {
            let _ = write!(
                out,
                "<rect x=\"-{hw}\" y=\"-{hh}\" width=\"{}\" height=\"{}\" rx=\"5\"/>",
                num(w),
                num(h)
            );
        }
    }
}

/// The data for the script: per-node details (`#stats`) and SPMD badges (`#spmd`), as
/// compact JSON with sorted keys.
fn write_data(
    body: &mut Body<'_>,
    g: &Graph,
    adj: &Adjacency,
    drawing: &Drawing,
) -> Result<(), ToolError> {
    body.text
        .push_str("<script type=\"application/json\" id=\"stats\">");
    push_sorted_object(body, &drawing.ids, |i| {
        Some(node_details(g, adj, &drawing.labels[i], i))
    })?;
    body.text
        .push_str("</script>\n<script type=\"application/json\" id=\"spmd\">");
    push_sorted_object(body, &drawing.ids, |i| {
        let b = g.nodes[i].block_num;
        (b > 1).then(|| json!(b))
    })?;
    body.text.push_str("</script>");
    Ok(())
}

/// Node `i`'s details for the panel: kind, kernels, fan-in and fan-out (the first 200 of
/// each, and counts by kernel name) and, with a swimlane beside the input, its measured span.
fn node_details(g: &Graph, adj: &Adjacency, label: &str, i: usize) -> Value {
    let n = &g.nodes[i];
    let pred_nodes = || adj.preds(i).iter().map(|&k| g.pairs[k as usize].0 as usize);
    let succ_nodes = || adj.succs(i).iter().map(|&k| g.pairs[k as usize].1 as usize);
    let list = |l: &mut dyn Iterator<Item = usize>| -> Value {
        Value::Array(l.take(200).map(|j| json!(g.disp(j))).collect())
    };
    let mut s = Map::new();
    s.insert("block_num".into(), json!(n.block_num));
    s.insert("fanin".into(), json!(adj.preds(i).len()));
    s.insert("fanout".into(), json!(adj.succs(i).len()));
    let kernel_ids: &[i32] = if n.kind == Kind::Alloc {
        &[]
    } else {
        &n.kernel_ids
    };
    s.insert("kernel_ids".into(), json!(kernel_ids));
    s.insert("kind".into(), json!(n.kind.as_str()));
    s.insert("label".into(), json!(label));
    s.insert("name_hint".into(), json!(g.name(i)));
    s.insert("pred_by_hint".into(), by_hint(g, pred_nodes()));
    s.insert("preds".into(), list(&mut pred_nodes()));
    s.insert("succ_by_hint".into(), by_hint(g, succ_nodes()));
    s.insert("succs".into(), list(&mut succ_nodes()));
    s.insert("task".into(), json!(g.disp(i)));
    s.insert("task_id".into(), json!(n.id.raw().to_string()));
    if let Some((start, end, cores)) = g.timings.get(n.timing as usize) {
        s.insert("cores".into(), json!(cores));
        s.insert("end_us".into(), json!(*end as f64 / 1000.0));
        s.insert("start_us".into(), json!(*start as f64 / 1000.0));
    }
    Value::Object(s)
}

/// The graph page's CSS (`page.css`, included at build time; the file's final
/// newline is dropped, as the page shell adds its own).
pub(super) const STYLE: &str = include_str!("page.css").trim_ascii_end();

/// The graph page's script (`page.js`, included at build time; the final newline
/// is dropped, as for [`STYLE`]).
pub(super) const SCRIPT: &str = include_str!("page.js").trim_ascii_end();
