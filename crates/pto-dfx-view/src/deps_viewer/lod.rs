//! The level-of-detail HTML page of a large dependency graph: one aggregate node per
//! (ring, kernel) — every task of one ring (scope depth) running one kernel combination,
//! allocs and dummies as their own kernels — with the number of dependencies between
//! aggregates on the edges; clicking an aggregate opens it as ranges of its tasks in task
//! order, a range opens into smaller ranges and then into tasks, and a task shows its
//! predecessors and successors as links that open their own aggregate and range.
//!
//! Only the aggregate graph is drawn (laid out like the per-task page, by
//! [`lay_out`](super::page::lay_out)); the tasks travel as compact little-endian columns,
//! base64 in `<script type="application/octet-stream">` elements, which the page decodes
//! on the first expansion (`lod.js`, included at build time after `page.js`, whose pan,
//! zoom, fit and panel it shares):
//!
//! - `col-order`: `u32` node indices grouped by aggregate (aggregate `a`'s tasks are
//!   `order[off[a]..off[a] + count[a]]`, in task order);
//! - `col-local`: `u32` local task id per node (the ring is its aggregate's);
//! - `col-flags`: `u8` per node, bit 0 early dispatch, bit 1 the ⭐ of the per-task page;
//! - `col-soff`, `col-succ`: the shown successors as CSR (`u32` offsets, `n + 1` of them,
//!   and `u32` node indices);
//! - `col-block`: `u32` pairs (node, SPMD block num) for the nodes with more than one block;
//! - `col-span`: with a swimlane beside the input, `f64` pairs per node: the measured
//!   start and end in µs (NaN: not measured); empty without one.
//!
//! The rest (aggregates, their edges, the tree's leaf and fan-out sizes) is one small JSON
//! block (`#lod`). Memory is a few words per node beyond the graph itself, and the page
//! about 20 bytes per node (43 with measured spans) and 5 per dependency.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use super::page::{self, Body, FLUSH};
use super::{Adjacency, Graph, Kind, LayoutChoice};
use crate::error::ToolError;
use crate::html::{self, escape, num, Page};
use crate::layout::{Layout, Point, Size};
use pto_dfx::atomic::AtomicFile;

/// At most this many tasks are listed one by one; a larger range opens into ranges.
const LEAF: usize = 64;

/// A range opens into at most this many ranges.
const FAN: usize = 32;

/// The nodes grouped by (ring, kernel), and the dependencies between the groups.
struct Aggregates {
    /// (ring, index into `Graph::names`) per aggregate, by ring then kernel name.
    keys: Vec<(u32, u32)>,
    /// Aggregate `a`'s nodes are `order[off[a]..off[a + 1]]`, ascending.
    off: Vec<u32>,
    order: Vec<u32>,
    /// (from, to, shown dependencies) between different aggregates, sorted.
    edges: Vec<(u32, u32, u64)>,
    /// Shown dependencies inside each aggregate.
    internal: Vec<u64>,
}

impl Aggregates {
    fn build(g: &Graph, adj: &Adjacency) -> Self {
        let mut index: HashMap<(u32, u32), u32> = HashMap::new();
        let mut keys: Vec<(u32, u32)> = Vec::new();
        let mut of: Vec<u32> = Vec::with_capacity(g.nodes.len());
        for n in &g.nodes {
            let key = (u32::from(n.id.ring()), n.name);
            of.push(*index.entry(key).or_insert_with(|| {
                keys.push(key);
                (keys.len() - 1) as u32
            }));
        }
        // Number the aggregates by ring, then kernel name.
        let mut sorted: Vec<u32> = (0..keys.len() as u32).collect();
        sorted.sort_by(|&a, &b| {
            let (ka, kb) = (keys[a as usize], keys[b as usize]);
            (ka.0, &g.names[ka.1 as usize], ka.1).cmp(&(kb.0, &g.names[kb.1 as usize], kb.1))
        });
        let mut rank = vec![0u32; keys.len()];
        for (r, &a) in sorted.iter().enumerate() {
            rank[a as usize] = r as u32;
        }
        for a in &mut of {
            *a = rank[*a as usize];
        }
        let keys: Vec<(u32, u32)> = sorted.iter().map(|&a| keys[a as usize]).collect();
        let (off, order) = group(&of, keys.len());
        let (edges, internal) = weigh(g, adj, &of, keys.len());
        Self {
            keys,
            off,
            order,
            edges,
            internal,
        }
    }

    fn len(&self) -> usize {
        self.keys.len()
    }

    fn members(&self, a: usize) -> &[u32] {
        &self.order[self.off[a] as usize..self.off[a + 1] as usize]
    }

    /// Aggregate `a`'s label: `<kernel> · ring <r> · ×<tasks>`.
    fn label(&self, g: &Graph, a: usize) -> String {
        let (ring, name) = self.keys[a];
        format!(
            "{} \u{b7} ring {ring} \u{b7} \u{d7}{}",
            g.names[name as usize],
            self.members(a).len()
        )
    }
}

/// Node indices grouped by their aggregate (a counting sort, so each group stays in
/// node order): the groups' offsets and the indices.
fn group(of: &[u32], n_groups: usize) -> (Vec<u32>, Vec<u32>) {
    let mut off = vec![0u32; n_groups + 1];
    for &a in of {
        off[a as usize + 1] += 1;
    }
    for a in 0..n_groups {
        off[a + 1] += off[a];
    }
    let mut fill = off.clone();
    let mut order = vec![0u32; of.len()];
    for (i, &a) in of.iter().enumerate() {
        order[fill[a as usize] as usize] = i as u32;
        fill[a as usize] += 1;
    }
    (off, order)
}

/// The shown dependencies counted between aggregates (sorted) and inside each.
fn weigh(
    g: &Graph,
    adj: &Adjacency,
    of: &[u32],
    n_groups: usize,
) -> (Vec<(u32, u32, u64)>, Vec<u64>) {
    let mut between: HashMap<(u32, u32), u64> = HashMap::new();
    let mut internal = vec![0u64; n_groups];
    for (i, &a) in of.iter().enumerate() {
        for &k in adj.succs(i) {
            let b = of[g.pairs[k as usize].1 as usize];
            if a == b {
                internal[a as usize] += 1;
            } else {
                *between.entry((a, b)).or_default() += 1;
            }
        }
    }
    let mut edges: Vec<(u32, u32, u64)> =
        between.into_iter().map(|((a, b), n)| (a, b, n)).collect();
    edges.sort_unstable();
    (edges, internal)
}

/// Lays the aggregate graph out: a grid of rings (rows) by kernels (columns) unless a
/// Graphviz engine is asked for (`--engine`), which then lays it out as on the per-task
/// page. Returns the layout, its name and the labels.
fn draw(
    g: &Graph,
    aggs: &Aggregates,
    choice: LayoutChoice,
    warnings: &mut Vec<String>,
) -> Result<(Layout, String, Vec<String>), ToolError> {
    let labels: Vec<String> = (0..aggs.len()).map(|a| aggs.label(g, a)).collect();
    let sizes: Vec<Size> = labels.iter().map(|l| label_size(l)).collect();
    if let LayoutChoice::Graphviz { .. } = choice {
        let edges: Vec<(usize, usize)> = aggs
            .edges
            .iter()
            .map(|&(a, b, _)| (a as usize, b as usize))
            .collect();
        let (layout, used) = page::lay_out(choice, &sizes, &labels, &edges, warnings)?;
        return Ok((layout, used, labels));
    }
    let layout = grid(g, aggs, &sizes);
    Ok((layout, String::from("ring \u{d7} kernel grid"), labels))
}

/// A node's box for its label, as on the per-task page.
fn label_size(label: &str) -> Size {
    Size {
        w: (label.chars().count() as f64 * 6.6 + 22.0).max(48.0),
        h: 26.0,
    }
}

/// Space between grid columns and between rows (room for the edges' bends).
const GRID_GAP: (f64, f64) = (40.0, 70.0);

/// The aggregates on a grid, one row per ring and one column per kernel (both sorted),
/// each edge a curve from box to box that bends to its left, so that the two directions
/// between a pair of aggregates do not overlap.
fn grid(g: &Graph, aggs: &Aggregates, sizes: &[Size]) -> Layout {
    let mut rings: Vec<u32> = aggs.keys.iter().map(|k| k.0).collect();
    rings.dedup();
    let mut kernels: Vec<(&str, u32)> = aggs
        .keys
        .iter()
        .map(|k| (g.names[k.1 as usize].as_str(), k.1))
        .collect();
    kernels.sort_unstable();
    kernels.dedup();
    let column = |name: u32| kernels.iter().position(|k| k.1 == name).unwrap_or(0);
    let mut col_w = vec![0.0f64; kernels.len()];
    for (a, k) in aggs.keys.iter().enumerate() {
        let c = column(k.1);
        col_w[c] = col_w[c].max(sizes[a].w);
    }
    let mut col_x = Vec::with_capacity(kernels.len());
    let mut x = 0.0;
    for w in &col_w {
        col_x.push(x + w / 2.0);
        x += w + GRID_GAP.0;
    }
    let nodes: Vec<Point> = aggs
        .keys
        .iter()
        .map(|k| Point {
            x: col_x[column(k.1)],
            y: rings.iter().position(|&r| r == k.0).unwrap_or(0) as f64 * (26.0 + GRID_GAP.1),
        })
        .collect();
    let edges = aggs
        .edges
        .iter()
        .map(|&(a, b, n)| {
            let (a, b) = (a as usize, b as usize);
            bend((nodes[a], sizes[a]), (nodes[b], sizes[b]), edge_width(n))
        })
        .collect();
    framed(nodes, edges, sizes)
}

/// The width of an edge standing for `n` dependencies: 1 plus half their decimal
/// logarithm, at most 4.
fn edge_width(n: u64) -> f64 {
    (1.0 + (n as f64).log10() / 2.0).min(4.0)
}

/// The curve from box `from` to box `to` for an edge `width` wide: a cubic Bézier from
/// border to border whose control points stand off to the left of the straight line,
/// ending where the arrow head reaches the border.
fn bend((p, ps): (Point, Size), (q, qs): (Point, Size), width: f64) -> Vec<Point> {
    let (dx, dy) = (q.x - p.x, q.y - p.y);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let (nx, ny) = (
        dy / len * 0.25 * len.min(240.0),
        -dx / len * 0.25 * len.min(240.0),
    );
    // Where the line from a box's centre towards (ux, uy) leaves the box.
    let exit = |c: Point, s: Size, ux: f64, uy: f64| {
        let t = (s.w / 2.0 / ux.abs().max(1e-9)).min(s.h / 2.0 / uy.abs().max(1e-9));
        Point {
            x: c.x + ux * t,
            y: c.y + uy * t,
        }
    };
    let c1 = Point {
        x: p.x + dx / 3.0 + nx,
        y: p.y + dy / 3.0 + ny,
    };
    let c2 = Point {
        x: p.x + 2.0 * dx / 3.0 + nx,
        y: p.y + 2.0 * dy / 3.0 + ny,
    };
    let start = exit(p, ps, c1.x - p.x, c1.y - p.y);
    // The arrow head starts where the curve ends, and the stroke's square end pokes
    // half its width past it.
    let end = exit(q, qs, c2.x - q.x, c2.y - q.y);
    let (ex, ey) = (end.x - c2.x, end.y - c2.y);
    let el = (ex * ex + ey * ey).sqrt().max(1.0);
    let back = ARROW_REACH + width / 2.0;
    let end = Point {
        x: end.x - ex / el * back,
        y: end.y - ey / el * back,
    };
    vec![start, c1, c2, end]
}

/// The layout of `nodes` and `edges` moved so that everything, boxes and curves, lies
/// inside a margin of 16 units.
fn framed(mut nodes: Vec<Point>, mut edges: Vec<Vec<Point>>, sizes: &[Size]) -> Layout {
    let (mut lo, mut hi) = (
        Point {
            x: f64::MAX,
            y: f64::MAX,
        },
        Point {
            x: f64::MIN,
            y: f64::MIN,
        },
    );
    let mut take = |x: f64, y: f64| {
        lo = Point {
            x: lo.x.min(x),
            y: lo.y.min(y),
        };
        hi = Point {
            x: hi.x.max(x),
            y: hi.y.max(y),
        };
    };
    for (c, s) in nodes.iter().zip(sizes) {
        take(c.x - s.w / 2.0, c.y - s.h / 2.0);
        take(c.x + s.w / 2.0, c.y + s.h / 2.0);
    }
    // A cubic Bézier stays inside the box of its control points.
    for p in edges.iter().flatten() {
        take(p.x, p.y);
    }
    if nodes.is_empty() {
        (lo, hi) = (Point::default(), Point::default());
    }
    const MARGIN: f64 = 16.0;
    let shift = |p: &mut Point| {
        p.x += MARGIN - lo.x;
        p.y += MARGIN - lo.y;
    };
    nodes.iter_mut().for_each(shift);
    edges.iter_mut().flatten().for_each(shift);
    Layout {
        nodes,
        edges,
        width: hi.x - lo.x + 2.0 * MARGIN,
        height: hi.y - lo.y + 2.0 * MARGIN,
    }
}

/// What [`write_lod_html`] drew.
pub(super) struct LodDrawn {
    /// The layout used for the aggregate graph.
    pub(super) layout: String,
    /// How many aggregates.
    pub(super) aggregates: usize,
}

/// Streams the level-of-detail page of `g` into `file` (see the module docs); `above`
/// is the node count past which this page replaces the per-task one (shown in the header).
#[allow(clippy::too_many_arguments)]
pub(super) fn write_lod_html(
    g: &Graph,
    adj: &Adjacency,
    selected: &[bool],
    input: &Path,
    choice: LayoutChoice,
    above: usize,
    warnings: &mut Vec<String>,
    file: &mut AtomicFile,
) -> Result<LodDrawn, ToolError> {
    let aggs = Aggregates::build(g, adj);
    let (layout, used, labels) = draw(g, &aggs, choice, warnings)?;
    let title = page::page_title(g, selected, input);
    let style = format!("{}\n{STYLE}", page::STYLE);
    let script = format!("{}\n{SCRIPT}", page::SCRIPT);
    let shell = Page {
        title: &title,
        style: &style,
        body: "",
        script: &script,
    };
    file.write_all(shell.head().as_bytes())?;
    let mut body = Body {
        text: String::with_capacity(2 * FLUSH),
        file,
    };
    push_header(&mut body.text, &title, &used, aggs.len(), above);
    page::push_svg_start(&mut body.text, &layout);
    body.text.push_str(ARROW);
    push_edges(&mut body.text, &aggs, &labels, &layout);
    body.text.push_str("</g>\n<g id=\"nodes\">\n");
    push_nodes(&mut body.text, g, &aggs, &labels, &layout);
    body.text.push_str("</g>\n</g></svg>\n<aside id=\"panel\" class=\"lod\" hidden><button id=\"close\" title=\"close\">\u{d7}</button><h2 id=\"panel-title\"></h2><pre id=\"panel-body\"></pre><div id=\"lod-tree\"></div></aside></main>\n<pre id=\"selftest-result\" hidden></pre>\n<script type=\"application/json\" id=\"stats\">{}</script>\n");
    body.text
        .push_str("<script type=\"application/json\" id=\"lod\">");
    body.text
        .push_str(&html::script_json(&meta(g, &aggs, &labels)));
    body.text.push_str("</script>\n");
    write_columns(&mut body, g, adj, &aggs)?;
    body.text.push_str(&shell.tail());
    body.flush()?;
    Ok(LodDrawn {
        layout: used,
        aggregates: aggs.len(),
    })
}

/// The header: title, layout, what the aggregates are, the controls and the legend.
fn push_header(out: &mut String, title: &str, used: &str, n_aggs: usize, above: usize) {
    let _ = writeln!(
        out,
        "<header><h1>{}</h1><span class=\"hint\">layout: {} \u{b7} level of detail: {n_aggs} aggregates (ring \u{d7} kernel), shown for graphs above {above} nodes (<kbd>--lod-above</kbd>) \u{b7} drag to pan \u{b7} wheel to zoom \u{b7} <kbd>f</kbd> fit \u{b7} <kbd>r</kbd> reset \u{b7} click an aggregate to open its tasks</span>\
<span class=\"legend\"><i class=\"k-aic\"></i>AIC <i class=\"k-aiv\"></i>AIV <i class=\"k-mix\"></i>MIX <i class=\"k-alloc\"></i>alloc <i class=\"k-other\"></i>dummy/other <i class=\"k-spmd\"></i>has SPMD</span></header>",
        escape(title),
        escape(used)
    );
}

/// The aggregate edges' arrow head: a fixed size whatever the edge's width (the per-task
/// page's heads grow with the stroke).
const ARROW: &str = "<defs><marker id=\"arrow-agg\" viewBox=\"0 0 10 10\" refX=\"1\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"10\" markerHeight=\"10\" orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" fill=\"#888\"/></marker></defs>\n";

/// How far the arrow head reaches past the end of its curve.
const ARROW_REACH: f64 = 9.0;

/// One `<path>` per pair of aggregates with dependencies, its width growing with the
/// logarithm of their number.
fn push_edges(out: &mut String, aggs: &Aggregates, labels: &[String], layout: &Layout) {
    for (k, &(a, b, n)) in aggs.edges.iter().enumerate() {
        let pts = &layout.edges[k];
        if pts.len() < 2 {
            continue;
        }
        let width = edge_width(n);
        let _ = writeln!(
            out,
            "<path class=\"edge agg-edge\" data-from=\"{a}\" data-to=\"{b}\" style=\"stroke-width:{}\" d=\"{}\" marker-end=\"url(#arrow-agg)\"><title>{} \u{2192} {}: {n} dependencies</title></path>",
            num(width),
            page::edge_path(pts),
            escape(&labels[a as usize]),
            escape(&labels[b as usize])
        );
    }
}

/// One `<g class="node agg">` per aggregate, shaped by the cores its kernel uses.
fn push_nodes(out: &mut String, g: &Graph, aggs: &Aggregates, labels: &[String], layout: &Layout) {
    for (a, label) in labels.iter().enumerate() {
        let first = &g.nodes[aggs.members(a)[0] as usize];
        let class = page::core_class(first.kind, &first.kernel_ids);
        let spmd = aggs
            .members(a)
            .iter()
            .any(|&i| g.nodes[i as usize].block_num > 1);
        let c = layout.nodes[a];
        let _ = write!(
            out,
            "<g class=\"node agg k-{class}{}\" id=\"A{a}\" data-agg=\"{a}\" transform=\"translate({},{})\">",
            if spmd { " spmd" } else { "" },
            num(c.x),
            num(c.y)
        );
        page::push_shape(out, class, label_size(label));
        let label = escape(label);
        let _ = writeln!(
            out,
            "<text dy=\"0.35em\">{label}</text><title>{label}</title></g>"
        );
    }
}

/// The small JSON the script starts from: the aggregates and their edges, the node
/// count and the tree's sizes.
fn meta(g: &Graph, aggs: &Aggregates, labels: &[String]) -> Value {
    let list: Vec<Value> = (0..aggs.len())
        .map(|a| {
            let members = aggs.members(a);
            let first = &g.nodes[members[0] as usize];
            let count = |f: &dyn Fn(&super::Node) -> bool| {
                members.iter().filter(|&&i| f(&g.nodes[i as usize])).count()
            };
            let kernel_ids: &[i32] = if first.kind == Kind::Alloc {
                &[]
            } else {
                &first.kernel_ids
            };
            json!({
                "count": members.len(),
                "early": count(&|n| n.early_dispatch),
                "internal": aggs.internal[a],
                "kernel_ids": kernel_ids,
                "kind": first.kind.as_str(),
                "label": labels[a],
                "name": g.names[aggs.keys[a].1 as usize],
                "off": aggs.off[a],
                "ring": aggs.keys[a].0,
                "spmd": count(&|n| n.block_num > 1),
            })
        })
        .collect();
    let edges: Vec<Value> = aggs
        .edges
        .iter()
        .map(|&(a, b, n)| json!([a, b, n]))
        .collect();
    json!({
        "aggs": list,
        "edges": edges,
        "fan": FAN,
        "leaf": LEAF,
        "n": g.nodes.len(),
        "ring0": g.ring0,
    })
}

/// A binary column being written: bytes are gathered and written as base64 in pieces
/// whose lengths are multiples of 3 (so the pieces join into one base64 text).
struct Column<'b, 'f> {
    body: &'b mut Body<'f>,
    bytes: Vec<u8>,
}

impl<'b, 'f> Column<'b, 'f> {
    /// Opens the `<script>` element `id`.
    fn open(body: &'b mut Body<'f>, id: &str) -> Self {
        let _ = write!(
            body.text,
            "<script type=\"application/octet-stream\" id=\"{id}\">"
        );
        Self {
            body,
            bytes: Vec::with_capacity(3 * FLUSH / 4 + 8),
        }
    }

    fn u8(&mut self, v: u8) -> Result<(), ToolError> {
        self.bytes.push(v);
        self.spill()
    }

    fn f64(&mut self, v: f64) -> Result<(), ToolError> {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self.spill()
    }

    fn u32(&mut self, v: u32) -> Result<(), ToolError> {
        self.bytes.extend_from_slice(&v.to_le_bytes());
        self.spill()
    }

    /// Encodes the gathered bytes once there are enough of them.
    fn spill(&mut self) -> Result<(), ToolError> {
        if self.bytes.len() >= 3 * FLUSH / 4 {
            let whole = self.bytes.len() / 3 * 3;
            html::push_base64(&mut self.body.text, &self.bytes[..whole]);
            self.bytes.drain(..whole);
            self.body.flush_if_full()?;
        }
        Ok(())
    }

    /// Encodes the rest and closes the element.
    fn close(self) -> Result<(), ToolError> {
        html::push_base64(&mut self.body.text, &self.bytes);
        self.body.text.push_str("</script>\n");
        self.body.flush_if_full()
    }
}

/// The per-node columns (see the module docs).
fn write_columns(
    body: &mut Body<'_>,
    g: &Graph,
    adj: &Adjacency,
    aggs: &Aggregates,
) -> Result<(), ToolError> {
    let mut c = Column::open(body, "col-order");
    for &i in &aggs.order {
        c.u32(i)?;
    }
    c.close()?;
    let mut c = Column::open(body, "col-local");
    for n in &g.nodes {
        c.u32(n.id.local())?;
    }
    c.close()?;
    let mut c = Column::open(body, "col-flags");
    for (i, n) in g.nodes.iter().enumerate() {
        c.u8(u8::from(n.early_dispatch) | (u8::from(g.star(adj, i)) << 1))?;
    }
    c.close()?;
    let mut c = Column::open(body, "col-soff");
    let mut total = 0u32;
    c.u32(0)?;
    for i in 0..g.nodes.len() {
        total += adj.succs(i).len() as u32;
        c.u32(total)?;
    }
    c.close()?;
    let mut c = Column::open(body, "col-succ");
    for i in 0..g.nodes.len() {
        for &k in adj.succs(i) {
            c.u32(g.pairs[k as usize].1)?;
        }
    }
    c.close()?;
    let mut c = Column::open(body, "col-block");
    for (i, n) in g.nodes.iter().enumerate() {
        if n.block_num > 1 {
            c.u32(i as u32)?;
            c.u32(n.block_num)?;
        }
    }
    c.close()?;
    let mut c = Column::open(body, "col-span");
    if !g.timings.is_empty() {
        for n in &g.nodes {
            let (start, end) = g
                .timings
                .get(n.timing as usize)
                .map_or((f64::NAN, f64::NAN), |t| {
                    (t.0 as f64 / 1e3, t.1 as f64 / 1e3)
                });
            c.f64(start)?;
            c.f64(end)?;
        }
    }
    c.close()
}

/// The level-of-detail page's CSS (`lod.css`, included at build time after `page.css`).
const STYLE: &str = include_str!("lod.css").trim_ascii_end();

/// The level-of-detail page's script (`lod.js`, included at build time after `page.js`).
const SCRIPT: &str = include_str!("lod.js").trim_ascii_end();

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::KernelNames;
    use pto_base::idmap::IdMap;
    use pto_dfx::deps_scan::{self, Detail, Scanned};

    /// Ring 1: tasks 0, 1 run kernel 0, task 2 kernel 1; ring 0: task 0 kernel 0; an alloc
    /// (ring 2) feeds ring 1's task 0. Dependencies 0→1 (inside), 0→2 and 1→2 (kernel 0
    /// to kernel 1), ring 0's task to ring 1's task 2, a repeated pair counted once.
    const DEPS: &str = r#"{"tasks":[
        {"task_id":"0","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]},
        {"task_id":"4294967296","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]},
        {"task_id":"4294967297","scope":"auto","kernel_ids":[0,-1,-1],"block_num":3,"args":[]},
        {"task_id":"4294967298","scope":"auto","kernel_ids":[-1,1,-1],"block_num":1,"args":[]}],
      "tensors":[],"edges":[
        {"pred":"8589934592","succ":"4294967296","arg":0,"source":"creator","flags":["wait","retain"]},
        {"pred":"4294967296","succ":"4294967297","arg":0,"source":"tensormap","flags":["wait"]},
        {"pred":"4294967296","succ":"4294967298","arg":0,"source":"tensormap","flags":["wait"]},
        {"pred":"4294967297","succ":"4294967298","arg":0,"source":"tensormap","flags":["wait"]},
        {"pred":"4294967297","succ":"4294967298","arg":1,"source":"tensormap","flags":["wait"]},
        {"pred":"0","succ":"4294967298","arg":-1,"source":"explicit","flags":["wait"]}]}"#;

    fn graph() -> Graph {
        let Scanned::Read(scan) = deps_scan::scan_bytes(DEPS.as_bytes(), Detail::Graph) else {
            panic!("declined");
        };
        Graph::build(&scan, &KernelNames::default(), IdMap::default())
    }

    #[test]
    fn aggregates_group_by_ring_and_kernel_and_count_dependencies() {
        let g = graph();
        let adj = Adjacency::new(g.nodes.len(), &g.pairs, |_| true);
        let aggs = Aggregates::build(&g, &adj);
        let labels: Vec<String> = (0..aggs.len()).map(|a| aggs.label(&g, a)).collect();
        assert_eq!(
            labels,
            [
                "func_0_a \u{b7} ring 0 \u{b7} \u{d7}1",
                "func_0_a \u{b7} ring 1 \u{b7} \u{d7}2",
                "func_1_b \u{b7} ring 1 \u{b7} \u{d7}1",
                "alloc \u{b7} ring 2 \u{b7} \u{d7}1",
            ]
        );
        // Nodes in id order: (0,0), (1,0), (1,1), (1,2), (2,0).
        assert_eq!(aggs.order, [0, 1, 2, 3, 4]);
        assert_eq!(aggs.off, [0, 1, 3, 4, 5]);
        assert_eq!(aggs.internal, [0, 1, 0, 0]);
        assert_eq!(aggs.edges, [(0, 2, 1), (1, 2, 2), (3, 1, 1)]);
        // Only the shown pairs count: without (1,0)→(1,2), one dependency from kernel 0.
        let hidden = g.pairs.iter().position(|&p| p == (1, 3)).unwrap();
        let adj = Adjacency::new(g.nodes.len(), &g.pairs, |k| k != hidden);
        assert_eq!(
            Aggregates::build(&g, &adj).edges,
            [(0, 2, 1), (1, 2, 1), (3, 1, 1)]
        );
    }

    #[test]
    fn the_page_carries_the_columns() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        std::fs::write(&input, DEPS).unwrap();
        let options = super::super::DepsViewerOptions {
            input: &input,
            output: None,
            format: super::super::Format::Html,
            layout: LayoutChoice::Builtin,
            func_names: None,
            edge_mode: super::super::EdgeMode::Full,
        };
        let report = super::super::view_with_lod(&options, 4).unwrap();
        assert_eq!(report.aggregates, Some(4));
        let page = std::fs::read_to_string(&report.output).unwrap();
        let column = |id: &str| -> String {
            let open = format!("<script type=\"application/octet-stream\" id=\"{id}\">");
            let start = page.find(&open).unwrap() + open.len();
            page[start..start + page[start..].find("</script>").unwrap()].to_string()
        };
        let words = |v: &[u32]| {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            let mut out = String::new();
            html::push_base64(&mut out, &bytes);
            out
        };
        assert_eq!(column("col-order"), words(&[0, 1, 2, 3, 4]));
        assert_eq!(column("col-local"), words(&[0, 0, 1, 2, 0]));
        assert_eq!(column("col-soff"), words(&[0, 1, 3, 4, 4, 5]));
        assert_eq!(column("col-succ"), words(&[3, 2, 3, 3, 1]));
        assert_eq!(column("col-block"), words(&[2, 3]));
        // (1,2)'s predecessors are all run: no ⭐; nothing dispatched early.
        let mut flags = String::new();
        html::push_base64(&mut flags, &[0, 0, 0, 0, 0]);
        assert_eq!(column("col-flags"), flags);
        assert_eq!(column("col-span"), "", "no swimlane beside the input");
        assert!(page.contains("level of detail: 4 aggregates"));
        assert!(page.contains("data-from=\"1\" data-to=\"2\""));
        // At or below the threshold: the per-task page.
        let report = super::super::view_with_lod(&options, 5).unwrap();
        assert_eq!(report.aggregates, None);
        let page = std::fs::read_to_string(&report.output).unwrap();
        assert!(page.contains("id=\"T1_2\"") && !page.contains("col-order"));
    }

    #[test]
    fn a_swimlane_beside_adds_the_measured_spans() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("deps.json");
        std::fs::write(&input, r#"{"tasks":[{"task_id":"0","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]},{"task_id":"1","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]},{"task_id":"2","scope":"auto","kernel_ids":[0,-1,-1],"block_num":1,"args":[]}],"tensors":[],"edges":[{"pred":"0","succ":"1","arg":0,"source":"tensormap","flags":["wait"]},{"pred":"1","succ":"2","arg":0,"source":"tensormap","flags":["wait"]}]}"#).unwrap();
        // 1 GHz: cycles are ns; the base is the first dispatch (990). Task 2 has no record.
        std::fs::write(
            dir.path().join("chip_swimlane_records.json"),
            r#"{"chip_swimlane_level": 2, "metadata": {"clock_freq_hz": 1000000000, "num_cores": 2, "core_types": ["aic", "aiv"]},
              "aicore_tasks": [[0, 0, 1, 1000, 2000, 0], [1, 1, 1, 2500, 3250, 0]],
              "aicpu_tasks": [[0, 1, 990, 2010], [1, 1, 2490, 3260]]}"#,
        )
        .unwrap();
        let report = super::super::view_with_lod(
            &super::super::DepsViewerOptions {
                input: &input,
                output: None,
                format: super::super::Format::Html,
                layout: LayoutChoice::Builtin,
                func_names: None,
                edge_mode: super::super::EdgeMode::Full,
            },
            0,
        )
        .unwrap();
        let page = std::fs::read_to_string(&report.output).unwrap();
        let bytes: Vec<u8> = [0.01, 1.01, 1.51, 2.26, f64::NAN, f64::NAN]
            .iter()
            .flat_map(|x: &f64| x.to_le_bytes())
            .collect();
        let mut expected = String::new();
        html::push_base64(&mut expected, &bytes);
        assert!(
            page.contains(&format!("id=\"col-span\">{expected}</script>")),
            "{page}"
        );
    }
}
