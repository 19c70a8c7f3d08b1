//! Memory planning: the address of every `pto.alloc_tile` without `addr` (levels 1–2) and of
//! every reserved pipe buffer.
//!
//! Tiles get a live range over the function's ops in program order, from their
//! `alloc_tile` to their last use (views of a tile — `subview`, `treshape`, `bitcast` —
//! count as uses of it; a use inside a loop that the tile was allocated outside of keeps it
//! alive to the end of that loop; a tile that escapes through `scf.yield`, a call or
//! `return` lives to the end of the function). Each memory is then filled first-fit by
//! address in allocation order, reusing the space of tiles that are dead, with the
//! alignment of that memory (UB 32 B, L1/L0A/L0B 512 B, L0C 1024 B). A tile that does not
//! fit is an error naming it, its memory and what is live.
//!
//! Reserved buffers (`pto.reserve_buffer`) with `base` keep it; with `auto = true` they are
//! placed before any tile at level 1–2 (live for the whole function) and at the top of
//! their memory at level 3, where the kernel owns the addresses of its tiles.

use std::collections::HashMap;

use crate::error::{Diag, DiagResult, ErrorKind};
use crate::ir::{Block, Func, Module, OpKind, ValueId};
use crate::source::Span;
use crate::types::{Arch, TileLoc};
use crate::Level;

/// The planned addresses of a module.
#[derive(Debug, Default)]
pub struct Plan {
    /// Byte offset of each planned tile, by (function index, alloc_tile result).
    pub tiles: HashMap<(usize, ValueId), u64>,
    /// Byte offset of each reserved buffer, by (function name, buffer name).
    pub reserved: HashMap<(String, String), u64>,
}

struct Alloc {
    value: ValueId,
    loc: TileLoc,
    size: u64,
    start: usize,
    end: usize,
    span: Span,
    name: String,
    what: String,
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

/// Plans every function of `module`.
pub fn plan(module: &Module, arch: Arch, level: Level) -> DiagResult<Plan> {
    let mut out = Plan::default();
    for (fi, f) in module.funcs.iter().enumerate() {
        plan_func(fi, f, arch, level, &mut out)?;
    }
    Ok(out)
}

#[derive(Default)]
struct Walk {
    pos: usize,
    /// alloc root of each tile value (allocs map to themselves).
    root: HashMap<ValueId, ValueId>,
    def: HashMap<ValueId, usize>,
    end: HashMap<ValueId, usize>,
    escape: Vec<ValueId>,
    /// (alloc value, op index) in order, with the info needed later.
    allocs: Vec<(ValueId, usize, Span)>,
    reserves: Vec<(String, TileLoc, i64, bool, Option<i64>, Span)>,
}

impl Walk {
    fn use_at(&mut self, v: ValueId, pos: usize, loops: &[(usize, usize)]) {
        let Some(&root) = self.root.get(&v) else {
            return;
        };
        let def = self.def.get(&root).copied().unwrap_or(0);
        let mut end = pos;
        for &(ls, le) in loops {
            if ls > def {
                end = end.max(le);
            }
        }
        let e = self.end.entry(root).or_insert(def);
        *e = (*e).max(end);
    }
}

/// Number of ops in `b`, nested ones included.
fn count(b: &Block) -> usize {
    b.ops
        .iter()
        .map(|op| 1 + op.blocks().iter().map(|b| count(b)).sum::<usize>())
        .sum()
}

fn scan(b: &Block, w: &mut Walk, loops: &mut Vec<(usize, usize)>) {
    for op in &b.ops {
        let pos = w.pos;
        w.pos += 1;
        let mut uses: Vec<ValueId> = Vec::new();
        match &op.kind {
            OpKind::AllocTile { .. } => {
                if let Some(&r) = op.results.first() {
                    w.root.insert(r, r);
                    w.def.insert(r, pos);
                    w.allocs.push((r, pos, op.span));
                }
            }
            OpKind::SubView { source, .. }
            | OpKind::Reinterpret { source, .. }
            | OpKind::TAssign { tile: source, .. } => {
                if let (Some(&r), Some(&root)) = (op.results.first(), w.root.get(source)) {
                    w.root.insert(r, root);
                }
                uses.push(*source);
            }
            OpKind::ReserveBuffer {
                name,
                size,
                location,
                auto_alloc,
                base,
            } => w
                .reserves
                .push((name.clone(), *location, *size, *auto_alloc, *base, op.span)),
            OpKind::Yield(vs) | OpKind::Return(vs) => w.escape.extend(vs.iter().copied()),
            OpKind::Call { args, .. } => w.escape.extend(args.iter().copied()),
            OpKind::For { iter_args, .. } => {
                w.escape.extend(iter_args.iter().map(|(_, init)| *init))
            }
            OpKind::While { inits, .. } => w.escape.extend(inits.iter().copied()),
            OpKind::Tile { ins, outs, .. } => {
                uses.extend(ins.iter().copied());
                uses.extend(outs.iter().copied());
            }
            OpKind::SetValidShape { tile, .. } => uses.push(*tile),
            OpKind::TPush { tile, .. } => uses.push(*tile),
            OpKind::CommCopy { stages, .. } => uses.extend(stages.iter().copied()),
            _ => {}
        }
        for u in uses {
            w.use_at(u, pos, loops);
        }
        let nested = op.blocks();
        if !nested.is_empty() {
            let inner: usize = nested.iter().map(|b| count(b)).sum();
            let is_loop = matches!(op.kind, OpKind::For { .. } | OpKind::While { .. });
            if is_loop {
                loops.push((pos, pos + inner));
            }
            for nb in nested {
                scan(nb, w, loops);
            }
            if is_loop {
                loops.pop();
            }
        }
    }
}

fn kib(v: u64) -> String {
    if v.is_multiple_of(1024) {
        format!("{} KiB", v / 1024)
    } else {
        format!("{v} bytes")
    }
}

fn plan_func(fi: usize, f: &Func, arch: Arch, level: Level, out: &mut Plan) -> DiagResult<()> {
    let Some(body) = &f.body else { return Ok(()) };
    let mut w = Walk::default();
    scan(body, &mut w, &mut Vec::new());
    let last = w.pos;
    for v in std::mem::take(&mut w.escape) {
        if let Some(&root) = w.root.get(&v) {
            w.end.insert(root, last);
        }
    }
    // Per memory: occupied (start, end-of-life, addr, size) blocks.
    let mut occupied: HashMap<TileLoc, Vec<(usize, u64, u64, String)>> = HashMap::new();
    for (name, loc, size, auto_alloc, base, span) in &w.reserves {
        let size = u64::try_from(*size).map_err(|_| {
            Diag::at(
                ErrorKind::Invalid,
                *span,
                format!("reserved buffer \"{name}\" has a negative size"),
            )
        })?;
        let cap = arch.capacity(*loc);
        let addr = match (base, auto_alloc, level) {
            (Some(b), _, _) => u64::try_from(*b).map_err(|_| {
                Diag::at(
                    ErrorKind::Invalid,
                    *span,
                    format!("reserved buffer \"{name}\" has a negative base"),
                )
            })?,
            (None, _, Level::Level3) => {
                if size > cap {
                    return Err(Diag::at(
                        ErrorKind::Memory,
                        *span,
                        format!("reserved buffer \"{name}\" ({size} bytes) does not fit in {} ({} on {})", loc.memory_name(), kib(cap), arch.name()),
                    ));
                }
                (cap - size) / loc.alignment() * loc.alignment()
            }
            (None, _, _) => {
                let blocks = occupied.entry(*loc).or_default();
                let addr = blocks
                    .iter()
                    .map(|(_, a, s, _)| align_up(a + s, loc.alignment()))
                    .max()
                    .unwrap_or(0);
                blocks.push((
                    usize::MAX,
                    addr,
                    size,
                    format!("reserved buffer \"{name}\""),
                ));
                addr
            }
        };
        if addr.checked_add(size).is_none_or(|e| e > cap) {
            return Err(Diag::at(
                ErrorKind::Memory,
                *span,
                format!(
                    "reserved buffer \"{name}\" ({size} bytes at {addr}) does not fit in {} ({} on {})",
                    loc.memory_name(),
                    kib(cap),
                    arch.name()
                ),
            ));
        }
        if base.is_some() && level != Level::Level3 {
            // An explicitly placed buffer is off limits for the tiles too.
            occupied.entry(*loc).or_default().push((
                usize::MAX,
                addr,
                size,
                format!("reserved buffer \"{name}\""),
            ));
        }
        out.reserved.insert((f.name.clone(), name.clone()), addr);
    }
    if level == Level::Level3 {
        return Ok(());
    }
    let mut allocs = Vec::new();
    for (v, pos, span) in &w.allocs {
        let Some(t) = f.ty(*v).tile() else { continue };
        let Some(size) = t.bytes() else {
            return Err(Diag::at(ErrorKind::Memory, *span, "tile size overflows"));
        };
        allocs.push(Alloc {
            value: *v,
            loc: t.loc,
            size,
            start: *pos,
            end: w.end.get(v).copied().unwrap_or(*pos),
            span: *span,
            name: f.name_of(*v).to_string(),
            what: t.describe(),
        });
    }
    for a in allocs {
        let cap = arch.capacity(a.loc);
        let align = a.loc.alignment();
        let blocks = occupied.entry(a.loc).or_default();
        // Keep only blocks still live when `a` starts (reserved buffers live forever).
        blocks.retain(|(end, _, _, _)| *end >= a.start);
        let mut live: Vec<(u64, u64)> = blocks
            .iter()
            .map(|(_, addr, size, _)| (*addr, *size))
            .collect();
        live.sort_unstable();
        let mut addr = 0u64;
        for (b_addr, b_size) in &live {
            if addr + a.size <= *b_addr {
                break;
            }
            addr = addr.max(align_up(b_addr + b_size, align));
        }
        if addr.checked_add(a.size).is_none_or(|e| e > cap) {
            let used: u64 = live.iter().map(|(_, s)| s).sum();
            let mut names: Vec<String> = blocks
                .iter()
                .take(8)
                .map(|(_, _, _, n)| n.clone())
                .collect();
            if blocks.len() > 8 {
                names.push(format!("and {} more", blocks.len() - 8));
            }
            return Err(Diag::at(
                ErrorKind::Memory,
                a.span,
                format!(
                    "tile %{} ({}, {} bytes) does not fit in {}: {} on {}, {} bytes already live ({})",
                    a.name,
                    a.what,
                    a.size,
                    a.loc.memory_name(),
                    kib(cap),
                    arch.name(),
                    used,
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ),
            ));
        }
        blocks.push((a.end, addr, a.size, format!("%{}", a.name)));
        out.tiles.insert((fi, a.value), addr);
    }
    Ok(())
}
