//! Transitive reduction of a task graph and byte regions of tensor views,
//! for `pto deps-viewer --edge-mode`.
//!
//! [`redundant_edges`] marks every edge `(u, v)` whose order another path
//! `u → w → … → v` already implies. It needs no reachability sets (which
//! take memory quadratic in the graph): nodes get topological positions,
//! and for each node with two or more successors a depth-first search from
//! its successors' successors, bounded by the position of its farthest
//! successor, finds which of its successors are reached again. On the
//! graphs task submission makes (edges between nearby tasks, a few wide
//! creators) that visits each node a few times; a graph that would need
//! more than [`WORK_PER_EDGE`] visits per edge is refused rather than
//! ground through ([`Refused::TooLarge`]), as a graph with a cycle is
//! ([`Refused::Cycle`]), so the viewer shows the full graph and says why.
//!
//! [`byte_region`] turns a strided view into its sorted, disjoint byte
//! intervals, at most [`MAX_INTERVALS`] of them.

/// The most node visits per edge the reduction spends.
pub const WORK_PER_EDGE: u64 = 256;
/// The most intervals a region may have (Simpler's limit).
pub const MAX_INTERVALS: usize = 10_000;

/// Why a graph was not reduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The graph has a cycle (the reduction is defined on DAGs only).
    Cycle,
    /// It would take more than [`WORK_PER_EDGE`] visits per edge.
    TooLarge,
}

/// For unique edges `edges` over nodes `0..n`, whether each is redundant
/// (implied by a longer path).
pub fn redundant_edges(n: usize, edges: &[(u32, u32)]) -> Result<Vec<bool>, Refused> {
    // Successor lists (CSR) keeping each edge's index.
    let mut off = vec![0usize; n + 1];
    for &(u, _) in edges {
        off[u as usize + 1] += 1;
    }
    for k in 0..n {
        off[k + 1] += off[k];
    }
    let mut fill = off.clone();
    let mut succ = vec![(0u32, 0usize); edges.len()];
    let mut indeg = vec![0u32; n];
    for (i, &(u, v)) in edges.iter().enumerate() {
        succ[fill[u as usize]] = (v, i);
        fill[u as usize] += 1;
        indeg[v as usize] += 1;
    }
    // Kahn's order doubles as the cycle check.
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        let u = order[head] as usize;
        head += 1;
        for &(v, _) in &succ[off[u]..off[u + 1]] {
            indeg[v as usize] -= 1;
            if indeg[v as usize] == 0 {
                order.push(v);
            }
        }
    }
    if order.len() != n {
        return Err(Refused::Cycle);
    }
    let mut pos = vec![0u32; n];
    for (p, &v) in order.iter().enumerate() {
        pos[v as usize] = p as u32;
    }

    let budget = WORK_PER_EDGE.saturating_mul(edges.len() as u64 + n as u64);
    let mut work: u64 = 0;
    let mut redundant = vec![false; edges.len()];
    // Visit stamps: node v was reached in the search of node `stamp[v] - 1`.
    let mut stamp = vec![0u32; n];
    // Targets of the current search: successor → edge index.
    let mut target_edge = vec![usize::MAX; n];
    let mut stack: Vec<u32> = Vec::new();
    for u in 0..n {
        let out = &succ[off[u]..off[u + 1]];
        if out.len() < 2 {
            continue;
        }
        let limit = out.iter().map(|&(v, _)| pos[v as usize]).max().unwrap_or(0);
        for &(v, i) in out {
            target_edge[v as usize] = i;
        }
        let mark = u as u32 + 1;
        for &(w, _) in out {
            let w = w as usize;
            for &(x, _) in &succ[off[w]..off[w + 1]] {
                stack.push(x);
            }
            while let Some(x) = stack.pop() {
                let xi = x as usize;
                if stamp[xi] == mark || pos[xi] > limit {
                    continue;
                }
                stamp[xi] = mark;
                work += 1;
                if work > budget {
                    return Err(Refused::TooLarge);
                }
                if target_edge[xi] != usize::MAX {
                    redundant[target_edge[xi]] = true;
                }
                for &(y, _) in &succ[off[xi]..off[xi + 1]] {
                    if stamp[y as usize] != mark && pos[y as usize] <= limit {
                        stack.push(y);
                    }
                }
            }
        }
        for &(v, _) in out {
            target_edge[v as usize] = usize::MAX;
        }
    }
    Ok(redundant)
}

/// The bytes a view covers: `buffer_addr + elem_size · (start_offset +
/// Σ i_d · strides[d])` for every index, each `elem_size` long, merged into
/// sorted disjoint `[start, end)` intervals. `None` when it is not exactly
/// known or too complex: shape and strides of different lengths, more than
/// [`MAX_INTERVALS`] intervals, an arithmetic overflow, an empty view.
pub fn byte_region(
    buffer_addr: u64,
    elem_size: u64,
    start_offset: u64,
    shape: &[u32],
    strides: &[u32],
) -> Option<Vec<(u64, u64)>> {
    if shape.len() != strides.len() || elem_size == 0 || shape.contains(&0) {
        return None;
    }
    // Runs: the innermost dimension is one run when its stride is 1.
    let (outer, run_elems) = match (shape.last(), strides.last()) {
        (Some(&n), Some(&1)) => (shape.len() - 1, u64::from(n)),
        (Some(_), Some(_)) => (shape.len(), 1),
        _ => (0, 1),
    };
    let mut count: u64 = 1;
    for &d in &shape[..outer] {
        count = count.checked_mul(u64::from(d))?;
        if count > MAX_INTERVALS as u64 {
            return None;
        }
    }
    let run_bytes = run_elems.checked_mul(elem_size)?;
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(count as usize);
    let mut index = vec![0u32; outer];
    loop {
        let mut elem = start_offset;
        for (d, &i) in index.iter().enumerate() {
            elem = elem.checked_add(u64::from(i).checked_mul(u64::from(strides[d]))?)?;
        }
        let start = buffer_addr.checked_add(elem.checked_mul(elem_size)?)?;
        out.push((start, start.checked_add(run_bytes)?));
        // Next index, last outer dimension fastest.
        let mut d = outer;
        loop {
            if d == 0 {
                return Some(merge(out));
            }
            d -= 1;
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

/// Sorted, disjoint, touching intervals joined.
pub fn merge(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// `a ∩ b` of two merged interval lists.
pub fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if lo < hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// Whether merged `cover` contains all of merged `region`.
pub fn covers(cover: &[(u64, u64)], region: &[(u64, u64)]) -> bool {
    let mut j = 0;
    for &(a, b) in region {
        while j < cover.len() && cover[j].1 <= a {
            j += 1;
        }
        match cover.get(j) {
            Some(&(c, d)) if c <= a && b <= d => {}
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removed(n: usize, edges: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let r = redundant_edges(n, edges).unwrap();
        edges
            .iter()
            .zip(r)
            .filter(|(_, x)| *x)
            .map(|(e, _)| *e)
            .collect()
    }

    #[test]
    fn diamonds_stay_and_shortcuts_go() {
        // Simpler's cases: a diamond keeps every edge; a multi-hop shortcut goes.
        assert!(removed(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]).is_empty());
        assert_eq!(removed(4, &[(0, 1), (0, 3), (1, 2), (2, 3)]), [(0, 3)]);
        assert_eq!(redundant_edges(2, &[(0, 1), (1, 0)]), Err(Refused::Cycle));
        // Node order is not topological order.
        assert_eq!(removed(3, &[(2, 0), (2, 1), (1, 0)]), [(2, 0)]);
    }

    #[test]
    fn matches_the_reachability_definition_on_random_dags() {
        let mut seed = 0x1234_5678_u64;
        let mut next = |bound: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            (seed >> 33) % bound
        };
        for _ in 0..200 {
            let n = 2 + next(14) as usize;
            let mut edges = Vec::new();
            for v in 1..n {
                for u in 0..v {
                    if next(3) == 0 {
                        edges.push((u as u32, v as u32));
                    }
                }
            }
            let got = redundant_edges(n, &edges).unwrap();
            // Brute force: reach[u] over paths of length ≥ 1.
            let mut reach = vec![vec![false; n]; n];
            for u in (0..n).rev() {
                for &(a, b) in &edges {
                    if a as usize == u {
                        reach[u][b as usize] = true;
                        let via = reach[b as usize].clone();
                        for (r, v) in reach[u].iter_mut().zip(via) {
                            *r |= v;
                        }
                    }
                }
            }
            for (k, &(u, v)) in edges.iter().enumerate() {
                let implied = edges
                    .iter()
                    .any(|&(a, w)| a == u && w != v && reach[w as usize][v as usize]);
                assert_eq!(got[k], implied, "{edges:?} edge {k}");
            }
        }
    }

    #[test]
    fn regions_of_strided_views() {
        // [2, 4] rows of a row-major [2, 4] f32 buffer at 4096: one run of 32 bytes.
        assert_eq!(
            byte_region(4096, 4, 0, &[2, 4], &[4, 1]),
            Some(vec![(4096, 4128)])
        );
        // A column slice [2, 1] of a [2, 4] f32 buffer: two 4-byte pieces.
        assert_eq!(
            byte_region(0, 4, 1, &[2, 1], &[4, 1]),
            Some(vec![(4, 8), (20, 24)])
        );
        // Every other element.
        assert_eq!(
            byte_region(0, 2, 0, &[3], &[2]),
            Some(vec![(0, 2), (4, 6), (8, 10)])
        );
        assert_eq!(byte_region(0, 4, 0, &[20_000], &[2]), None, "too complex");
        assert_eq!(byte_region(0, 4, 0, &[2], &[1, 1]), None, "ranks differ");
        assert_eq!(
            byte_region(u64::MAX - 2, 4, 0, &[1], &[1]),
            None,
            "overflow"
        );
        let a = vec![(0, 10), (20, 30)];
        assert_eq!(intersect(&a, &[(5, 25)]), vec![(5, 10), (20, 25)]);
        assert!(covers(&[(0, 40)], &a));
        assert!(!covers(&[(0, 25)], &a));
        assert!(covers(&merge(vec![(10, 20), (0, 10), (20, 30)]), &a));
    }
}
