//! The first step of `OutlineIncoreScopes`: mixed scopes and tiles that leave their scope.
//!
//! * **Mixed scopes.** A `pl.at(level=pl.Level.CORE_GROUP)` scope whose body holds cube
//!   tiles (Mat, Left, Right, Acc, Bias) and vector tiles is split in two: a scope of the
//!   cube statements followed by a scope of the vector statements, each outlined into a
//!   kernel of its own (`<hint>_aic`, `<hint>_aiv`). The body must be straight-line, and
//!   the vector part may read the cube part but not the other way round.
//! * **Tiles that leave their scope.** An accumulator, Mat or vector tile defined in a scope and
//!   read by a later scope of the same body (the matmul result of one scope that the next
//!   one adds to, or the cube half of a split scope) is handed over through a workspace
//!   tensor: `tensor.create` before the defining scope, a `tile.store` at its end, and in
//!   the reading scope a `tile.load` in place of the read (`tile.move(acc, Vec)` becomes
//!   that load; a vector or Mat tile read otherwise is loaded once, into its own memory, at
//!   the start of the scope).
//!
//! The split mode of `pl.at(optimizations=[pl.split(...)])` and the slot count of
//! `pl.cross_core_slot` change no result and are kept on the scope as attributes only.

use std::collections::{HashMap, HashSet};

use super::clone::{clone_body, VarMap};
use crate::error::CompileError;
use crate::ir::{
    stmt_exprs, vars_defined, walk_stmts, AttrValue, Attrs, Call, Callee, Expr, ScopeKind,
    ScopeStmt, Span, Stmt, StmtKind, Var,
};
use crate::types::{Level, MemorySpace, Type};

const STAGE: &str = "OutlineIncoreScopes";

/// The scope attribute marking a half of a mixed scope that has no `name_hint` (`"aic"` /
/// `"aiv"`): the outliner names the halves after one kernel name, as PyPTO does.
pub const ATTR_MIXED_HALF: &str = "mixed_half";

/// Splits the mixed scopes of `body` (at any depth) and hands tiles that leave their scope
/// to the later scopes that read them.
pub fn prepare(body: &[Stmt]) -> Result<Vec<Stmt>, CompileError> {
    let mut out = Vec::with_capacity(body.len());
    for s in body {
        match &s.kind {
            StmtKind::Scope(sc) if sc.kind == ScopeKind::At(Level::CoreGroup) => {
                match loop_per_task(sc, &s.span) {
                    Some(per_iteration) => out.extend(prepare(&[per_iteration])?),
                    None => out.extend(split_if_mixed(sc, &s.span)?),
                }
            }
            StmtKind::Scope(sc) => {
                let mut sc = sc.clone();
                sc.body = prepare(&sc.body)?;
                out.push(Stmt::new(StmtKind::Scope(sc), s.span.clone()));
            }
            StmtKind::For(f) => {
                let mut f = f.clone();
                f.body = prepare(&f.body)?;
                out.push(Stmt::new(StmtKind::For(f), s.span.clone()));
            }
            StmtKind::If(i) => {
                let mut i = i.clone();
                i.then_body = prepare(&i.then_body)?;
                i.else_body = prepare(&i.else_body)?;
                out.push(Stmt::new(StmtKind::If(i), s.span.clone()));
            }
            _ => out.push(s.clone()),
        }
    }
    hand_over_tiles(out)
}

fn perr(span: &Span, message: String, hint: &str) -> CompileError {
    CompileError::program(STAGE, span, message, hint)
}

fn tile_memory(v: &Var) -> Option<MemorySpace> {
    v.ty().as_tile().map(|t| t.memory)
}

fn is_cube(v: &Var) -> bool {
    tile_memory(v).is_some_and(MemorySpace::is_cube)
}

/// The tiles a statement reads (operands at any depth of its expressions).
fn reads_of(s: &Stmt) -> Vec<Var> {
    let mut out = Vec::new();
    walk_stmts(std::slice::from_ref(s), &mut |s| {
        stmt_exprs(s, &mut |e| e.for_each_var(&mut |v| out.push(v.clone())))
    });
    out
}

/// Which side of a mixed scope a statement belongs to: `Some(true)` cube, `Some(false)`
/// vector, `None` neither (it holds no tile).
fn side_of(s: &Stmt) -> Option<bool> {
    let defs = s.defs();
    if let Some(v) = defs.iter().find(|v| tile_memory(v).is_some()) {
        // A move out of the accumulator into the vector buffer is the vector side's read.
        return Some(is_cube(v));
    }
    let reads = reads_of(s);
    let tile = reads.iter().find(|v| tile_memory(v).is_some())?;
    Some(is_cube(tile))
}

/// Whether `body` defines both cube and vector tiles (at any depth).
fn is_mixed(body: &[Stmt]) -> bool {
    let defs = vars_defined(body);
    defs.iter().any(is_cube)
        && defs
            .iter()
            .any(|v| tile_memory(v).is_some_and(|m| !m.is_cube()))
}

/// A mixed scope whose body is one loop carrying only tensors becomes that loop with the
/// scope inside (one cube and one vector task per iteration instead of one pair for the
/// whole loop; the values computed are the same), so the straight-line split applies to
/// the iteration's body. `None` for any other scope.
fn loop_per_task(sc: &ScopeStmt, span: &Span) -> Option<Stmt> {
    let [only] = sc.body.as_slice() else {
        return None;
    };
    let StmtKind::For(f) = &only.kind else {
        return None;
    };
    if !is_mixed(&f.body) || f.iter_args.iter().any(|(v, _)| !v.ty().is_tensor()) {
        return None;
    }
    let mut inner = sc.clone();
    inner.body = f.body.clone();
    if inner.task_id.is_some() {
        return None;
    }
    let mut f = f.clone();
    f.body = vec![Stmt::new(StmtKind::Scope(Box::new(inner)), span.clone())];
    Some(Stmt::new(StmtKind::For(f), only.span.clone()))
}

/// The side of a loop or branch of a mixed scope: the one side whose tiles it defines
/// (`None` when it defines tiles of both, or none).
fn compound_side(s: &Stmt) -> Option<bool> {
    let body: Vec<Stmt> = match &s.kind {
        StmtKind::For(f) => f.body.clone(),
        StmtKind::If(i) => [i.then_body.clone(), i.else_body.clone()].concat(),
        _ => return None,
    };
    let mut defs = vars_defined(&body);
    defs.extend(s.defs());
    let sides: HashSet<bool> = defs
        .iter()
        .filter(|v| tile_memory(v).is_some())
        .map(is_cube)
        .collect();
    match sides.len() {
        1 => sides.into_iter().next(),
        _ => None,
    }
}

/// The refusal of a loop or branch of a mixed scope holding both cube and vector work; an
/// accumulator of the scope sliced in it gets the workaround of its own.
fn mixed_compound_error(s: &Stmt) -> CompileError {
    if let Some((acc, at)) = sliced_accumulator(s) {
        let acc = super::ssa::base_name(acc.name()).to_string();
        return perr(
            &at,
            format!("accumulator '{acc}' is sliced inside a loop or branch of a mixed pl.at scope that also holds vector work"),
            &format!("Move the accumulator to the vector buffer before the loop ({acc}_v = pl.move({acc}, target_memory=pl.Mem.Vec)) and slice {acc}_v inside it, or write the loop in a pl.at scope of its own."),
        );
    }
    perr(
        &s.span,
        "a loop or branch inside a pl.at scope that holds both cube and vector work".into(),
        "Keep each loop of a mixed scope to one side (cube or vector), or write the cube and the vector work in two pl.at scopes.",
    )
}

/// In a loop or branch, the first `tile.slice` of an accumulator defined outside it, with
/// the slice's span (a cube window the vector work of the same loop reads).
fn sliced_accumulator(s: &Stmt) -> Option<(Var, Span)> {
    let inner: HashSet<u64> = vars_defined(std::slice::from_ref(s))
        .iter()
        .map(Var::id)
        .collect();
    let mut found = None;
    walk_stmts(std::slice::from_ref(s), &mut |st| {
        let StmtKind::Assign { value, .. } = &st.kind else {
            return;
        };
        let Some(c) = value.as_call() else { return };
        let src = c.args.first().and_then(Expr::as_var);
        if let (Some("tile.slice"), Some(v)) = (c.op_name(), src) {
            if tile_memory(v) == Some(MemorySpace::Acc) && !inner.contains(&v.id()) {
                found.get_or_insert((v.clone(), st.span.clone()));
            }
        }
    });
    found
}

fn split_if_mixed(sc: &ScopeStmt, span: &Span) -> Result<Vec<Stmt>, CompileError> {
    let whole = || {
        vec![Stmt::new(
            StmtKind::Scope(Box::new(sc.clone())),
            span.clone(),
        )]
    };
    if !is_mixed(&sc.body) {
        return Ok(whole());
    }
    let mut sides: Vec<Option<bool>> = Vec::with_capacity(sc.body.len());
    for s in &sc.body {
        if matches!(s.kind, StmtKind::Assign { .. } | StmtKind::Eval(_)) {
            sides.push(side_of(s));
            continue;
        }
        // A loop or branch goes to a side whole: all its tiles must be of that side.
        match compound_side(s) {
            Some(side) => sides.push(Some(side)),
            None => return Err(mixed_compound_error(s)),
        }
    }
    let shared = assign_untiled(&sc.body, &mut sides)?;
    let vector_defs: HashSet<u64> = sc
        .body
        .iter()
        .zip(&sides)
        .enumerate()
        .filter(|(k, (_, side))| **side != Some(true) && !shared.contains(k))
        .map(|(_, pair)| pair)
        .flat_map(|(s, _)| s.defs())
        .map(|v| v.id())
        .collect();
    for (s, side) in sc.body.iter().zip(&sides) {
        if *side == Some(true) {
            if let Some(v) = reads_of(s).iter().find(|v| vector_defs.contains(&v.id())) {
                return Err(perr(
                    &s.span,
                    format!(
                        "the cube part of a mixed pl.at scope reads '{}', which its vector part computes",
                        super::ssa::base_name(v.name())
                    ),
                    "Only cube-to-vector hand-overs are supported: compute it in an earlier scope and pass a tensor.",
                ));
            }
        }
    }
    let part = |cube: bool, suffix: &str| -> Stmt {
        let mut part = sc.clone();
        let stmts: Vec<(Stmt, bool)> = sc
            .body
            .iter()
            .zip(&sides)
            .enumerate()
            .filter(|(k, (_, side))| (**side == Some(true)) == cube || shared.contains(k))
            .map(|(k, (s, _))| (s.clone(), shared.contains(&k)))
            .collect();
        part.body = if cube {
            fresh_shared(&stmts)
        } else {
            stmts.into_iter().map(|(s, _)| s).collect()
        };
        match sc.attrs.str("name_hint") {
            Some(h) => part
                .attrs
                .set("name_hint", AttrValue::Str(format!("{h}_{suffix}"))),
            None => part
                .attrs
                .set(ATTR_MIXED_HALF, AttrValue::Str(suffix.to_string())),
        }
        if cube {
            part.task_id = None;
        }
        Stmt::new(StmtKind::Scope(Box::new(part)), span.clone())
    };
    Ok(vec![part(true, "aic"), part(false, "aiv")])
}

/// The cube part's statements: those it shares with the vector part (scalars) define
/// fresh variables there, since each part becomes a kernel of its own; every other
/// statement keeps the variables it defines (the vector part reads them).
fn fresh_shared(stmts: &[(Stmt, bool)]) -> Vec<Stmt> {
    let mut map = VarMap::new();
    let same_name = |v: &Var| v.name().to_string();
    stmts
        .iter()
        .map(|(s, shared)| {
            let mut c = clone_body(std::slice::from_ref(s), &mut map, &same_name).remove(0);
            if !shared {
                let defs = s.defs();
                for v in &defs {
                    map.remove(&v.id());
                }
                match &mut c.kind {
                    StmtKind::Assign { targets, .. } => *targets = defs,
                    StmtKind::For(f) => f.results = defs,
                    StmtKind::If(i) => i.results = defs,
                    _ => {}
                }
            }
            c
        })
        .collect()
}

/// Statements that hold no tile (scalars, windows) go with the side that reads them. One
/// read by both sides is copied into both when it only computes scalars (an offset from
/// the loop index); any other is refused. Returns the copied statements' indices.
fn assign_untiled(
    body: &[Stmt],
    sides: &mut [Option<bool>],
) -> Result<HashSet<usize>, CompileError> {
    let mut shared = HashSet::new();
    for i in (0..body.len()).rev() {
        if sides[i].is_some() {
            continue;
        }
        let defs: HashSet<u64> = body[i].defs().iter().map(Var::id).collect();
        let mut readers = HashSet::new();
        for (j, s) in body.iter().enumerate().skip(i + 1) {
            if reads_of(s).iter().any(|v| defs.contains(&v.id())) {
                readers.insert(sides[j].unwrap_or(false));
                if shared.contains(&j) {
                    readers.insert(true);
                }
            }
        }
        let scalar = matches!(body[i].kind, StmtKind::Assign { .. })
            && body[i]
                .defs()
                .iter()
                .all(|v| matches!(v.ty(), Type::Scalar(_)));
        if readers.len() > 1 && scalar {
            shared.insert(i);
            sides[i] = Some(false);
            continue;
        }
        if readers.len() > 1 {
            return Err(perr(
                &body[i].span,
                "a value of a mixed pl.at scope is used by both its cube and its vector part"
                    .into(),
                "Compute it before the scope (in the orchestration) and use it in both parts.",
            ));
        }
        sides[i] = Some(readers.into_iter().next().unwrap_or(false));
    }
    Ok(shared)
}

fn op(name: &str, args: Vec<Expr>, kwargs: Attrs, span: &Span) -> Result<Expr, CompileError> {
    let ty = crate::ops::deduce(name, &args, &kwargs).map_err(|e| {
        perr(
            span,
            format!("{name}: {e}"),
            "This is a compiler bug: please report it.",
        )
    })?;
    Ok(Expr::Call(Box::new(Call {
        callee: Callee::Op(name.to_string()),
        args,
        kwargs,
        attrs: Attrs::new(),
        ty,
        span: span.clone(),
        submit: None,
    })))
}

fn zeros(n: usize) -> Expr {
    Expr::List(vec![Expr::index(0); n])
}

/// A tile handed from one scope to later ones: its workspace and the stored value of it.
struct HandOver {
    tile: Var,
    stored: Var,
}

fn hand_over_tiles(mut body: Vec<Stmt>) -> Result<Vec<Stmt>, CompileError> {
    let mut i = 0;
    while i < body.len() {
        let StmtKind::Scope(sc) = &body[i].kind else {
            i += 1;
            continue;
        };
        if sc.kind != ScopeKind::At(Level::CoreGroup) {
            i += 1;
            continue;
        }
        let later_reads: HashSet<u64> = {
            let mut ids = HashSet::new();
            for s in &body[i + 1..] {
                ids.extend(reads_deep(s).iter().map(Var::id));
            }
            ids
        };
        let leaving: Vec<Var> = vars_defined(&sc.body)
            .into_iter()
            .filter(|v| tile_memory(v).is_some() && later_reads.contains(&v.id()))
            .collect();
        if leaving.is_empty() {
            i += 1;
            continue;
        }
        let span = body[i].span.clone();
        let mut sc = sc.clone();
        let mut creates = Vec::new();
        let mut handed = Vec::new();
        for tile in leaving {
            let (create, store, h) = workspace(&tile, &span)?;
            creates.push(create);
            sc.body.push(store);
            handed.push(h);
        }
        body[i] = Stmt::new(StmtKind::Scope(sc), span.clone());
        for s in body.iter_mut().skip(i + 1) {
            receive(s, &handed)?;
        }
        let n = creates.len();
        body.splice(i..i, creates);
        i += n + 1;
    }
    Ok(body)
}

/// The workspace of `tile`: its `tensor.create` and the `tile.store` into it.
fn workspace(tile: &Var, span: &Span) -> Result<(Stmt, Stmt, HandOver), CompileError> {
    let t = tile
        .ty()
        .as_tile()
        .cloned()
        .ok_or_else(|| perr(span, "a hand-over of a value that is not a tile".into(), ""))?;
    if !matches!(
        t.memory,
        MemorySpace::Acc | MemorySpace::Vec | MemorySpace::Mat
    ) {
        return Err(perr(
            span,
            format!(
                "tile '{}' (pl.Mem.{}) is computed in one pl.at scope and used in another",
                super::ssa::base_name(tile.name()),
                t.memory.name()
            ),
            "Only accumulator, Mat and vector tiles are handed between scopes: load the operand again in the later scope.",
        ));
    }
    let base = super::ssa::base_name(tile.name()).to_string();
    let mut kw = Attrs::new();
    kw.set("shape", AttrValue::Ints(vec![t.rows, t.cols]));
    kw.set("dtype", AttrValue::DType(t.dtype));
    let create_expr = op("tensor.create", Vec::new(), kw, span)?;
    let ws = Var::new(&format!("{base}_ws"), create_expr.ty());
    let store_expr = op(
        "tile.store",
        vec![Expr::Var(tile.clone()), zeros(2), Expr::Var(ws.clone())],
        Attrs::new(),
        span,
    )?;
    let stored = Var::new(&format!("{base}_ws"), store_expr.ty());
    let create = Stmt::new(
        StmtKind::Assign {
            targets: vec![ws],
            value: create_expr,
        },
        span.clone(),
    );
    let store = Stmt::new(
        StmtKind::Assign {
            targets: vec![stored.clone()],
            value: store_expr,
        },
        span.clone(),
    );
    Ok((
        create,
        store,
        HandOver {
            tile: tile.clone(),
            stored,
        },
    ))
}

fn load_of(h: &HandOver, memory: MemorySpace, span: &Span) -> Result<Expr, CompileError> {
    let t = h
        .tile
        .ty()
        .as_tile()
        .cloned()
        .unwrap_or_else(|| unreachable!());
    let mut kw = Attrs::new();
    kw.set("shapes", AttrValue::Ints(vec![t.rows, t.cols]));
    kw.set("target_memory", AttrValue::Memory(memory));
    op(
        "tile.load",
        vec![Expr::Var(h.stored.clone()), zeros(2)],
        kw,
        span,
    )
}

/// Rewrites the reads of handed-over tiles in a later statement: in a `pl.at` scope they
/// become loads of the workspace; elsewhere they are left for the outliner to refuse.
fn receive(s: &mut Stmt, handed: &[HandOver]) -> Result<(), CompileError> {
    let StmtKind::Scope(sc) = &mut s.kind else {
        return Ok(());
    };
    if sc.kind != ScopeKind::At(Level::CoreGroup) {
        for inner in sc.body.iter_mut() {
            receive(inner, handed)?;
        }
        return Ok(());
    }
    let mut front = Vec::new();
    let mut renamed: HashMap<u64, Var> = HashMap::new();
    for h in handed {
        moves_to_loads(&mut sc.body, h)?;
        let mut read_elsewhere = None;
        for st in sc.body.iter() {
            if reads_deep(st).iter().any(|v| v.id() == h.tile.id()) {
                read_elsewhere.get_or_insert(st.span.clone());
            }
        }
        let Some(span) = read_elsewhere else { continue };
        // A Mat or vector tile is loaded again from the workspace into its own memory; an
        // accumulator (written only by a matmul) cannot be.
        let memory = match tile_memory(&h.tile) {
            Some(MemorySpace::Mat) => MemorySpace::Mat,
            Some(m) if m.is_cube() => {
                return Err(perr(
                    &span,
                    format!(
                        "accumulator tile '{}' of an earlier pl.at scope is used here as a cube operand",
                        super::ssa::base_name(h.tile.name())
                    ),
                    "Use it in vector operations (it is moved to the vector buffer), or compute it in this scope.",
                ))
            }
            _ => MemorySpace::Vec,
        };
        let fresh = h.tile.fresh(super::ssa::base_name(h.tile.name()));
        front.push(Stmt::new(
            StmtKind::Assign {
                targets: vec![fresh.clone()],
                value: load_of(h, memory, &span)?,
            },
            span,
        ));
        renamed.insert(h.tile.id(), fresh);
    }
    if !renamed.is_empty() {
        rename_reads(&mut sc.body, &renamed);
    }
    front.append(&mut sc.body);
    sc.body = front;
    Ok(())
}

/// Every `x = tile.move(tile, Vec)` of a handed-over accumulator in `body`, loops and
/// branches included (an accumulator computed before a loop and read by the vector work
/// in it), becomes `x = tile.load(ws, ...)`.
fn moves_to_loads(body: &mut [Stmt], h: &HandOver) -> Result<(), CompileError> {
    for st in body.iter_mut() {
        if let Some(load) = move_to_load(st, h)? {
            *st = load;
            continue;
        }
        match &mut st.kind {
            StmtKind::For(f) => moves_to_loads(&mut f.body, h)?,
            StmtKind::If(i) => {
                moves_to_loads(&mut i.then_body, h)?;
                moves_to_loads(&mut i.else_body, h)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// `x = tile.move(tile, Vec)` of a handed-over accumulator or Mat tile →
/// `x = tile.load(ws, ...)`.
fn move_to_load(st: &Stmt, h: &HandOver) -> Result<Option<Stmt>, CompileError> {
    let StmtKind::Assign { targets, value } = &st.kind else {
        return Ok(None);
    };
    let Some(c) = value.as_call() else {
        return Ok(None);
    };
    let from_tile = c.args.first().and_then(Expr::as_var).map(Var::id) == Some(h.tile.id());
    if c.op_name() != Some("tile.move") || !from_tile {
        return Ok(None);
    }
    let Some(memory) = c.kwargs.memory("target_memory") else {
        return Ok(None);
    };
    if memory != MemorySpace::Vec {
        return Ok(None);
    }
    let load = load_of(h, memory, &st.span)?;
    Ok(Some(Stmt::new(
        StmtKind::Assign {
            targets: targets.clone(),
            value: load,
        },
        st.span.clone(),
    )))
}

/// Renames the reads of `body` (nested bodies included) through `renamed`.
fn rename_reads(body: &mut [Stmt], renamed: &HashMap<u64, Var>) {
    let mut map = |v: &Var| renamed.get(&v.id()).cloned().unwrap_or_else(|| v.clone());
    for s in body.iter_mut() {
        match &mut s.kind {
            StmtKind::Assign { value, .. } | StmtKind::Eval(value) => value.map_vars(&mut map),
            StmtKind::Return(vs) => vs.iter_mut().for_each(|e| e.map_vars(&mut map)),
            StmtKind::For(f) => {
                for e in [&mut f.start, &mut f.stop, &mut f.step] {
                    e.map_vars(&mut map);
                }
                f.iter_args
                    .iter_mut()
                    .for_each(|(_, e)| e.map_vars(&mut map));
                f.yields.iter_mut().for_each(|e| e.map_vars(&mut map));
                rename_reads(&mut f.body, renamed);
            }
            StmtKind::If(i) => {
                i.cond.map_vars(&mut map);
                i.then_yields.iter_mut().for_each(|e| e.map_vars(&mut map));
                i.else_yields.iter_mut().for_each(|e| e.map_vars(&mut map));
                rename_reads(&mut i.then_body, renamed);
                rename_reads(&mut i.else_body, renamed);
            }
            StmtKind::Scope(sc) => {
                sc.deps.iter_mut().for_each(|e| e.map_vars(&mut map));
                rename_reads(&mut sc.body, renamed);
            }
        }
    }
}

/// The variables a statement reads, nested bodies included.
fn reads_deep(s: &Stmt) -> Vec<Var> {
    let mut out = Vec::new();
    walk_stmts(std::slice::from_ref(s), &mut |st| out.extend(reads_of(st)));
    out
}
