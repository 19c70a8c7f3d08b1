//! Graph layout for the HTML viewers: Graphviz when it is installed, our own
//! layered layout when it is not, the same [`Layout`] either way.
//!
//! [`layered`] is a Sugiyama-style layout in four steps, all linear or
//! `n log n` in the graph size so that 10,000 tasks take milliseconds:
//!
//! 1. **cycles**: edges that close a cycle (found by an iterative DFS) are
//!    reversed for the layering only; `deps.json` graphs are acyclic, so
//!    this is a guard;
//! 2. **layers**: longest path from the sources (a task sits one layer after
//!    its latest predecessor); then every source moves right to just before
//!    its first successor, so an `alloc` that feeds a late task does not sit
//!    far away in layer 0;
//! 3. **order**: within a layer, nodes start in input order and are then
//!    sorted by the barycenter of their neighbours' positions, sweeping
//!    forward over predecessors and back over successors, four times;
//! 4. **coordinates**: layers are columns (left to right) as wide as their
//!    widest node; nodes are stacked in order, each column centred.
//!
//! Edges are cubic Béziers from the source's right side to the target's
//! left side. No dummy nodes are inserted for long edges: they would
//! multiply the work on graphs where one producer feeds thousands of tasks.
//!
//! [`graphviz`] writes the graph as DOT with fixed node sizes, runs an
//! engine (`dot`, `sfdp`, `fdp`, `neato`, `circo`, `twopi`) as a child
//! process with `-Tplain`, and reads node centres and edge splines back;
//! a time budget kills the engine and lets the caller fall back to
//! [`layered`] instead of waiting on it.

use std::io::{Read, Write as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::error::ToolError;

/// A point in page units (CSS pixels; y grows downwards).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Point {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
}

/// A node's box size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
}

/// Positions for a graph.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Node centres, in input order.
    pub nodes: Vec<Point>,
    /// Per input edge: a cubic Bézier spline (`1 + 3k` points) from source
    /// to target, or a polyline when an engine gives another count.
    pub edges: Vec<Vec<Point>>,
    /// The drawing's width.
    pub width: f64,
    /// The drawing's height.
    pub height: f64,
}

const RANK_SEP: f64 = 56.0;
const NODE_SEP: f64 = 12.0;
const MARGIN: f64 = 16.0;

/// Lays out `sizes.len()` nodes with `edges` (`(from, to)` indices) in
/// layers from left to right (see the module docs).
pub fn layered(sizes: &[Size], edges: &[(usize, usize)]) -> Layout {
    let n = sizes.len();
    let mut out = Layout {
        nodes: vec![Point::default(); n],
        edges: Vec::with_capacity(edges.len()),
        width: 2.0 * MARGIN,
        height: 2.0 * MARGIN,
    };
    if n == 0 {
        out.edges = edges.iter().map(|_| Vec::new()).collect();
        return out;
    }
    let valid: Vec<(usize, usize)> = edges
        .iter()
        .copied()
        .filter(|&(a, b)| a < n && b < n && a != b)
        .collect();
    let dag = break_cycles(n, &valid);
    let (succ_off, succ) = csr(n, dag.iter().copied());
    let (pred_off, pred) = csr(n, dag.iter().map(|&(a, b)| (b, a)));
    let layer = assign_layers(n, &succ_off, &succ, &pred_off);
    let n_layers = layer.iter().copied().max().unwrap_or(0) + 1;

    // Initial order: input order within each layer.
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); n_layers];
    for v in 0..n {
        layers[layer[v]].push(v);
    }
    let mut pos = vec![0.0f64; n];
    let place = |layers: &[Vec<usize>], pos: &mut [f64]| {
        for l in layers {
            let mid = (l.len() as f64 - 1.0) / 2.0;
            for (i, &v) in l.iter().enumerate() {
                pos[v] = i as f64 - mid;
            }
        }
    };
    place(&layers, &mut pos);
    for _ in 0..4 {
        for (off, adj, range) in [
            (&pred_off, &pred, (1..n_layers).collect::<Vec<_>>()),
            (
                &succ_off,
                &succ,
                (0..n_layers.saturating_sub(1)).rev().collect(),
            ),
        ] {
            for l in range {
                let mut keyed: Vec<(f64, usize)> = layers[l]
                    .iter()
                    .map(|&v| {
                        let nbrs = &adj[off[v]..off[v + 1]];
                        let key = if nbrs.is_empty() {
                            pos[v]
                        } else {
                            nbrs.iter().map(|&u| pos[u]).sum::<f64>() / nbrs.len() as f64
                        };
                        (key, v)
                    })
                    .collect();
                keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
                layers[l] = keyed.into_iter().map(|(_, v)| v).collect();
                let mid = (layers[l].len() as f64 - 1.0) / 2.0;
                for (i, &v) in layers[l].iter().enumerate() {
                    pos[v] = i as f64 - mid;
                }
            }
        }
    }

    // Coordinates.
    let row = sizes.iter().map(|s| s.h).fold(0.0, f64::max) + NODE_SEP;
    let max_len = layers.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let height = max_len * row;
    let mut x = MARGIN;
    for l in &layers {
        let w = l.iter().map(|&v| sizes[v].w).fold(0.0, f64::max);
        let top = MARGIN + (height - l.len() as f64 * row) / 2.0;
        for (i, &v) in l.iter().enumerate() {
            out.nodes[v] = Point {
                x: x + w / 2.0,
                y: top + i as f64 * row + row / 2.0,
            };
        }
        x += w + RANK_SEP;
    }
    out.width = x - RANK_SEP + MARGIN;
    out.height = height + 2.0 * MARGIN;
    for &(a, b) in edges {
        if a >= n || b >= n {
            out.edges.push(Vec::new());
            continue;
        }
        let (pa, pb) = (out.nodes[a], out.nodes[b]);
        let start = Point {
            x: pa.x + sizes[a].w / 2.0,
            y: pa.y,
        };
        let end = Point {
            x: pb.x - sizes[b].w / 2.0 - 2.0,
            y: pb.y,
        };
        let dx = ((end.x - start.x).abs() / 2.0).max(24.0);
        out.edges.push(vec![
            start,
            Point {
                x: start.x + dx,
                y: start.y,
            },
            Point {
                x: end.x - dx,
                y: end.y,
            },
            end,
        ]);
    }
    out
}

/// Compressed adjacency: offsets and targets.
fn csr(n: usize, pairs: impl Iterator<Item = (usize, usize)> + Clone) -> (Vec<usize>, Vec<usize>) {
    let mut off = vec![0usize; n + 1];
    for (a, _) in pairs.clone() {
        off[a + 1] += 1;
    }
    for i in 0..n {
        off[i + 1] += off[i];
    }
    let mut fill = off.clone();
    let mut adj = vec![0usize; off[n]];
    for (a, b) in pairs {
        adj[fill[a]] = b;
        fill[a] += 1;
    }
    (off, adj)
}

/// The edges with every cycle-closing edge reversed.
fn break_cycles(n: usize, edges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let (off, adj) = csr(n, edges.iter().copied());
    // 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; n];
    let mut back = std::collections::HashSet::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, off[root])];
        state[root] = 1;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if *next < off[v + 1] {
                let u = adj[*next];
                *next += 1;
                match state[u] {
                    0 => {
                        state[u] = 1;
                        stack.push((u, off[u]));
                    }
                    1 => {
                        back.insert((v, u));
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    edges
        .iter()
        .map(|&(a, b)| {
            if back.contains(&(a, b)) {
                (b, a)
            } else {
                (a, b)
            }
        })
        .collect()
}

/// Longest-path layers, then sources pulled right to their first successor.
fn assign_layers(n: usize, succ_off: &[usize], succ: &[usize], pred_off: &[usize]) -> Vec<usize> {
    let mut indeg: Vec<usize> = (0..n).map(|v| pred_off[v + 1] - pred_off[v]).collect();
    let mut queue: std::collections::VecDeque<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
    let mut layer = vec![0usize; n];
    while let Some(v) = queue.pop_front() {
        for &u in &succ[succ_off[v]..succ_off[v + 1]] {
            layer[u] = layer[u].max(layer[v] + 1);
            indeg[u] -= 1;
            if indeg[u] == 0 {
                queue.push_back(u);
            }
        }
    }
    for v in 0..n {
        let succs = &succ[succ_off[v]..succ_off[v + 1]];
        if pred_off[v + 1] == pred_off[v] && !succs.is_empty() {
            if let Some(first) = succs.iter().map(|&u| layer[u]).min() {
                layer[v] = first.saturating_sub(1);
            }
        }
    }
    layer
}

/// A Graphviz layout engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// `dot`: hierarchical.
    Dot,
    /// `sfdp`: scalable force-directed.
    Sfdp,
    /// `fdp`: force-directed.
    Fdp,
    /// `neato`: spring model.
    Neato,
    /// `circo`: circular.
    Circo,
    /// `twopi`: radial.
    Twopi,
}

impl Engine {
    /// The program name.
    pub const fn program(self) -> &'static str {
        match self {
            Self::Dot => "dot",
            Self::Sfdp => "sfdp",
            Self::Fdp => "fdp",
            Self::Neato => "neato",
            Self::Circo => "circo",
            Self::Twopi => "twopi",
        }
    }

    /// Whether the program is on `PATH`.
    pub fn is_available(self) -> bool {
        let Some(path) = std::env::var_os("PATH") else {
            return false;
        };
        std::env::split_paths(&path).any(|dir| {
            let candidate = dir.join(self.program());
            std::fs::metadata(&candidate).is_ok_and(|m| m.is_file())
        })
    }
}

/// A DOT string literal.
fn dot_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Lays out with a Graphviz engine (see the module docs); `labels` only
/// help engines that look at them, sizes are fixed.
///
/// `budget` bounds the engine's run: once it has passed, the child is killed
/// and `Ok(None)` tells the caller to lay the graph out another way (`dot`
/// takes minutes on graphs of a few thousand nodes). `None` waits for it.
pub fn graphviz(
    engine: Engine,
    sizes: &[Size],
    labels: &[String],
    edges: &[(usize, usize)],
    budget: Option<Duration>,
) -> Result<Option<Layout>, ToolError> {
    let dot = dot_source(sizes, labels, edges);
    let program = engine.program();
    let fail = |message: String| ToolError::Graphviz {
        engine: program.to_string(),
        message,
    };
    let mut child = Command::new(program)
        .arg("-Tplain")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot start it: {e}")))?;
    // Feed stdin and drain stdout / stderr on threads of their own, so that a large
    // graph cannot deadlock the pipes while this thread watches the clock.
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || match stdin {
        Some(mut pipe) => pipe.write_all(dot.as_bytes()),
        None => Err(std::io::Error::other("no stdin pipe")),
    });
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = match wait_within(&mut child, budget) {
        Ok(Some(status)) => status,
        Ok(None) => {
            // Killing the child closes its pipes, which ends the three threads.
            let _ = child.kill();
            let _ = child.wait();
            let _ = (writer.join(), stdout.join(), stderr.join());
            return Ok(None);
        }
        Err(e) => return Err(fail(format!("waiting for it failed: {e}"))),
    };
    let joined = |h: std::thread::JoinHandle<Vec<u8>>| h.join().unwrap_or_default();
    let (out, err) = (joined(stdout), joined(stderr));
    let written = writer
        .join()
        .map_err(|_| fail(String::from("the writer thread panicked")))?;
    if !status.success() {
        return Err(fail(format!(
            "{status}: {}",
            String::from_utf8_lossy(&err).trim()
        )));
    }
    written.map_err(|e| fail(format!("writing the graph failed: {e}")))?;
    parse_plain(&String::from_utf8_lossy(&out), sizes.len(), edges)
        .map(Some)
        .map_err(fail)
}

/// The graph as DOT, with fixed node sizes (points to inches).
fn dot_source(sizes: &[Size], labels: &[String], edges: &[(usize, usize)]) -> String {
    let mut dot = String::with_capacity(64 * (sizes.len() + edges.len()) + 256);
    dot.push_str("digraph deps {\n  rankdir=LR; concentrate=false; nodesep=0.17; ranksep=0.78;\n");
    dot.push_str("  node [shape=box, fixedsize=true, fontname=\"Helvetica\", fontsize=10];\n");
    for (i, s) in sizes.iter().enumerate() {
        let label = labels.get(i).map(String::as_str).unwrap_or("");
        dot.push_str(&format!(
            "  n{i} [width={:.4}, height={:.4}, label={}];\n",
            s.w / 72.0,
            s.h / 72.0,
            dot_str(label)
        ));
    }
    for &(a, b) in edges {
        dot.push_str(&format!("  n{a} -> n{b};\n"));
    }
    dot.push_str("}\n");
    dot
}

/// Reads a child's pipe to its end on a thread of its own.
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// Waits for `child` to exit, at most `budget` (`Ok(None)`: still running then).
fn wait_within(child: &mut Child, budget: Option<Duration>) -> std::io::Result<Option<ExitStatus>> {
    let Some(budget) = budget else {
        return child.wait().map(Some);
    };
    let deadline = Instant::now() + budget;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Splits a `-Tplain` line into tokens, keeping quoted strings whole.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let start = i;
        if bytes[i] == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(bytes.len());
        } else {
            while i < bytes.len() && bytes[i] != b' ' {
                i += 1;
            }
        }
        out.push(&line[start..i]);
    }
    out
}

/// Reads node centres and edge splines from `-Tplain` output.
fn parse_plain(text: &str, n: usize, edges: &[(usize, usize)]) -> Result<Layout, String> {
    let num = |t: Option<&&str>, what: &str| -> Result<f64, String> {
        t.and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| format!("unreadable {what} in its -Tplain output"))
    };
    let node_index = |name: &str| {
        name.strip_prefix('n')
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|&i| i < n)
    };
    let mut layout = Layout {
        nodes: vec![Point::default(); n],
        edges: vec![Vec::new(); edges.len()],
        width: 0.0,
        height: 0.0,
    };
    let mut height_in = 0.0;
    let mut seen = vec![false; n];
    // Edges in the output follow the input order per (tail, head) pair.
    let mut slots: std::collections::HashMap<(usize, usize), std::collections::VecDeque<usize>> =
        std::collections::HashMap::new();
    for (i, &e) in edges.iter().enumerate() {
        slots.entry(e).or_default().push_back(i);
    }
    let mut raw_edges: Vec<(usize, Vec<(f64, f64)>)> = Vec::new();
    for line in text.lines() {
        let t = tokens(line);
        match t.first().copied() {
            Some("graph") => {
                layout.width = num(t.get(2), "graph width")? * 72.0;
                height_in = num(t.get(3), "graph height")?;
                layout.height = height_in * 72.0;
            }
            Some("node") => {
                let Some(i) = t.get(1).and_then(|s| node_index(s)) else {
                    continue;
                };
                let x = num(t.get(2), "node x")?;
                let y = num(t.get(3), "node y")?;
                layout.nodes[i] = Point { x, y };
                seen[i] = true;
            }
            Some("edge") => {
                let (Some(a), Some(b)) = (
                    t.get(1).and_then(|s| node_index(s)),
                    t.get(2).and_then(|s| node_index(s)),
                ) else {
                    continue;
                };
                let count = num(t.get(3), "edge point count")? as usize;
                // Two tokens per point follow: the line bounds the capacity.
                let mut pts = Vec::with_capacity(count.min(t.len() / 2));
                for k in 0..count {
                    pts.push((
                        num(t.get(4 + 2 * k), "edge x")?,
                        num(t.get(5 + 2 * k), "edge y")?,
                    ));
                }
                if let Some(slot) = slots.get_mut(&(a, b)).and_then(|q| q.pop_front()) {
                    raw_edges.push((slot, pts));
                }
            }
            _ => {}
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(format!(
            "node n{missing} is missing from its -Tplain output"
        ));
    }
    let flip = |x: f64, y: f64| Point {
        x: x * 72.0,
        y: (height_in - y) * 72.0,
    };
    for p in &mut layout.nodes {
        *p = flip(p.x, p.y);
    }
    for (slot, pts) in raw_edges {
        layout.edges[slot] = pts.into_iter().map(|(x, y)| flip(x, y)).collect();
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sizes(n: usize) -> Vec<Size> {
        vec![Size { w: 40.0, h: 20.0 }; n]
    }

    #[test]
    fn layers_follow_longest_paths_and_sources_move_right() {
        // 0 → 1 → 2 → 3, 0 → 3, 4 → 3 (a late source).
        let edges = [(0, 1), (1, 2), (2, 3), (0, 3), (4, 3)];
        let l = layered(&sizes(5), &edges);
        let xs: Vec<f64> = l.nodes.iter().map(|p| p.x).collect();
        assert!(xs[0] < xs[1] && xs[1] < xs[2] && xs[2] < xs[3], "{xs:?}");
        assert_eq!(xs[4], xs[2], "the source sits just before its successor");
        assert_eq!(l.edges.len(), 5);
        for (e, &(a, b)) in l.edges.iter().zip(&edges) {
            assert_eq!(e.len(), 4);
            assert!(e[0].x > l.nodes[a].x && e[3].x < l.nodes[b].x);
        }
        assert!(l.width > xs[3] && l.height > 0.0);
    }

    #[test]
    fn barycenters_untangle_crossings() {
        // Two chains listed crosswise: 0→3, 1→2; layer 1 order follows the sources.
        let l = layered(&sizes(4), &[(0, 3), (1, 2)]);
        assert!(l.nodes[3].y < l.nodes[2].y, "{:?}", l.nodes);
    }

    #[test]
    fn cycles_and_bad_edges_do_not_break_it() {
        let l = layered(&sizes(3), &[(0, 1), (1, 2), (2, 0), (1, 1), (0, 9)]);
        assert_eq!(l.nodes.len(), 3);
        assert_eq!(l.edges.len(), 5);
        assert!(l.edges[4].is_empty());
        let empty = layered(&[], &[]);
        assert!(empty.nodes.is_empty());
    }

    #[test]
    fn plain_output_parses() {
        let text = "graph 1 2.5 1.0\nnode n0 0.5 0.5 0.5 0.3 \"a b\" solid box black lightgrey\nnode n1 2 0.5 0.5 0.3 \"c\" solid box black lightgrey\nedge n0 n1 4 0.75 0.5 1 0.5 1.5 0.5 1.75 0.5 solid black\nstop\n";
        let l = parse_plain(text, 2, &[(0, 1)]).unwrap();
        assert_eq!(l.nodes[0], Point { x: 36.0, y: 36.0 });
        assert_eq!(l.edges[0].len(), 4);
        assert_eq!(l.width, 180.0);
        assert!(parse_plain("graph 1 1 1\nstop\n", 1, &[]).is_err());
        assert_eq!(
            tokens("node n0 1 \"a \\\" b\" x"),
            ["node", "n0", "1", "\"a \\\" b\"", "x"]
        );
    }

    #[test]
    fn graphviz_dot_child_process() {
        assert!(
            Engine::Dot.is_available(),
            "Graphviz `dot` is not on PATH; the tests need it (CI installs it): apt-get install graphviz"
        );
        let labels = vec![String::from("a \"quoted\" name"), String::from("b")];
        let l = graphviz(Engine::Dot, &sizes(2), &labels, &[(0, 1)], None)
            .unwrap()
            .expect("no budget: it finishes");
        assert!(l.nodes[0].x < l.nodes[1].x, "rankdir=LR: {:?}", l.nodes);
        assert!(l.edges[0].len() >= 4);
    }

    #[test]
    fn graphviz_over_budget_is_killed() {
        // A 3,000-node graph that `dot` needs seconds for; a 20 ms budget ends it.
        let n = 3000;
        let edges: Vec<(usize, usize)> = (0..n - 1)
            .flat_map(|i| [(i, i + 1), (i / 2, i + 1)])
            .collect();
        let start = Instant::now();
        let got = graphviz(
            Engine::Dot,
            &sizes(n),
            &[],
            &edges,
            Some(Duration::from_millis(20)),
        )
        .unwrap();
        assert!(got.is_none(), "dot finished a 3,000-node graph in 20 ms?");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
