//! GM layout inference for tensor views: which `pto::Layout` (ND or DN) each
//! `GlobalTensor` gets.
//!
//! The rule (our statement of ptoas's): an explicit `{layout = #pto.layout<...>}` (or a
//! layout parameter of the view type) is authoritative. Otherwise the view's static shape
//! and strides, right-aligned to 5-D, decide from the two minor dimensions `[R, C]` with
//! strides `[sR, sC]`: row-major (`sC == 1`, `sR == C`) is ND, column-major (`sR == 1`,
//! `sC == R`) is DN. When both fit — a `[M, 1]` column or a `[1, N]` row — the vector tiles
//! that load from or store to the view break the tie (a ColMajor tile gives DN, the
//! `[M,1]`-with-strides-`[1,M]` case of PyPTO's row reductions), else ND. Dynamic views are
//! ND. Partitions inherit their source's layout. With inference disabled, views keep their
//! declared layout or ND.

use std::collections::HashMap;

use crate::analysis::Consts;
use crate::ir::{find_attr, walk, Func, OpKind, ValueId};
use crate::types::{BLayout, Layout, TileLoc, Type};

/// The layout of every view value of a function.
pub fn infer(f: &Func, consts: &Consts, infer: bool) -> HashMap<ValueId, Layout> {
    let mut out = HashMap::new();
    let Some(body) = &f.body else { return out };
    // Roots and their partitions.
    let mut root_of: HashMap<ValueId, ValueId> = HashMap::new();
    let mut roots = Vec::new();
    walk(body, &mut |op| match &op.kind {
        OpKind::MakeTensorView { .. } => {
            if let Some(&r) = op.results.first() {
                root_of.insert(r, r);
                roots.push((r, op));
            }
        }
        OpKind::PartitionView { source, .. } => {
            if let (Some(&r), Some(&root)) = (op.results.first(), root_of.get(source)) {
                root_of.insert(r, root);
            }
        }
        _ => {}
    });
    // Tie-break preferences from vector tiles loading / storing each root's partitions.
    let mut prefs: HashMap<ValueId, Vec<Layout>> = HashMap::new();
    walk(body, &mut |op| {
        if let OpKind::Tile {
            name, ins, outs, ..
        } = &op.kind
        {
            let (view, tile) = match name.as_str() {
                "tload" | "tprefetch" => (ins.first(), outs.first()),
                "tstore" => (outs.first(), ins.first()),
                _ => (None, None),
            };
            if let (Some(v), Some(t)) = (view, tile) {
                if let (Some(root), Some(tt)) = (root_of.get(v), f.ty(*t).tile()) {
                    if tt.loc == TileLoc::Vec {
                        prefs.entry(*root).or_default().push(match tt.blayout {
                            BLayout::RowMajor => Layout::Nd,
                            BLayout::ColMajor => Layout::Dn,
                        });
                    }
                }
            }
        }
    });
    for (root, op) in roots {
        let OpKind::MakeTensorView {
            shape,
            strides,
            attrs,
            ..
        } = &op.kind
        else {
            continue;
        };
        let declared = find_attr(attrs, "layout")
            .and_then(|a| a.pto_value())
            .and_then(Layout::from_name)
            .or(match f.ty(root) {
                Type::TensorView { layout, .. } => *layout,
                _ => None,
            });
        let layout = match declared {
            Some(l) => l,
            None if !infer => Layout::Nd,
            None => {
                let type_shape = match f.ty(root) {
                    Type::TensorView { shape, .. } => shape.clone(),
                    _ => Vec::new(),
                };
                let dims: Option<Vec<i64>> = shape
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        consts
                            .get(*v)
                            .or_else(|| type_shape.get(i).and_then(|d| d.value()))
                    })
                    .collect();
                let strides: Option<Vec<i64>> = strides.iter().map(|v| consts.get(*v)).collect();
                let pref = prefs.get(&root).and_then(|p| {
                    let first = *p.first()?;
                    p.iter().all(|l| *l == first).then_some(first)
                });
                match (dims, strides) {
                    (Some(d), Some(s)) => infer_static(&d, &s, pref),
                    _ => Layout::Nd,
                }
            }
        };
        out.insert(root, layout);
    }
    for (v, root) in root_of {
        if let Some(l) = out.get(&root).copied() {
            out.insert(v, l);
        }
    }
    out
}

/// The layout of a static view from its two minor dimensions.
pub fn infer_static(shape: &[i64], strides: &[i64], preferred: Option<Layout>) -> Layout {
    let n = shape.len();
    if n == 0 || strides.len() != n {
        return Layout::Nd;
    }
    let (rows, cols) = if n >= 2 {
        (shape[n - 2], shape[n - 1])
    } else {
        (1, shape[0])
    };
    let (rs, cs) = if n >= 2 {
        (strides[n - 2], strides[n - 1])
    } else {
        (cols.saturating_mul(strides[0]), strides[0])
    };
    let nd = (cols == 1 || cs == 1) && (rows == 1 || (cols == 1 && rs == 1) || rs == cols);
    let dn = (rows == 1 || rs == 1) && (cols == 1 || (rows == 1 && cs == 1) || cs == rows);
    match (nd, dn) {
        (true, true) => match preferred {
            Some(Layout::Dn) => Layout::Dn,
            _ => Layout::Nd,
        },
        (false, true) => Layout::Dn,
        _ => Layout::Nd,
    }
}
