//! `OutlineIncoreScopes`: every `with pl.at(level=pl.Level.CORE_GROUP)` scope becomes an
//! `InCore` kernel `<parent>_incore_<k>` and one dispatch of it in place of the scope.
//!
//! * **Inputs** are the values the body reads but does not define, in first-read order;
//!   the dispatch passes them 1:1. A tensor that the body only writes (the target of a
//!   `pl.store`) becomes an `Out` parameter, one it reads and writes `InOut`, others
//!   `In`; scalars are `In`. Dump marks are bookkeeping, not reads: they never make a
//!   tensor `InOut`.
//! * **Outputs** are the values defined in the body and used after the scope: tensors
//!   written with `pl.store` (returned by the kernel, bound by the dispatch).
//! * **Dumps.** The scope's `dump_vars` become the dispatch's: the entries the scope
//!   captures, sorted by argument index; an entry the scope does not capture is dropped
//!   silently (a forward-sticky tag reaches only the dispatches that take the tensor).
//! * The dispatch is a `pl.submit` when the scope has `as tid` or `deps=`, else a plain
//!   call. A parent of type `Opaque` becomes an `Orchestration`.
//! * First, [`super::mixed`] splits scopes holding cube and vector work in two and hands
//!   tiles that leave a scope to the later scopes through workspace tensors.

use std::collections::{HashMap, HashSet};

use super::clone::{clone_body, VarMap};
use crate::error::CompileError;
use crate::ir::{
    stmt_exprs, vars_defined, vars_read, walk_stmts, AttrValue, Attrs, Call, Callee, Expr,
    Function, Param, Program, ScopeKind, ScopeStmt, Span, Stmt, StmtKind, Var, ATTR_DUMP_VARS,
};
use crate::types::{FunctionType, Level, ParamDirection, Type};

const STAGE: &str = "OutlineIncoreScopes";

/// Runs the pass.
pub fn run(mut program: Program) -> Result<Program, CompileError> {
    let mut new_functions = Vec::new();
    let names: HashSet<String> = program.functions.iter().map(|f| f.name.clone()).collect();
    for f in program.functions.iter_mut() {
        if f.ftype.is_kernel() {
            reject_nested_scopes(&f.body, "a kernel function")?;
            continue;
        }
        f.body = super::mixed::prepare(&f.body)?;
        let reads = read_counts(&f.body);
        let mut ctx = Outliner {
            parent: f.name.clone(),
            counter: 0,
            reads,
            made: Vec::new(),
            taken: names.clone(),
            half_base: None,
        };
        f.body = ctx.body(&f.body)?;
        if !ctx.made.is_empty() && f.ftype == FunctionType::Opaque {
            f.ftype = FunctionType::Orchestration;
        }
        new_functions.extend(ctx.made);
    }
    program.functions.extend(new_functions);
    Ok(program)
}

fn reject_nested_scopes(body: &[Stmt], inside: &str) -> Result<(), CompileError> {
    let mut found = None;
    walk_stmts(body, &mut |s| {
        if let StmtKind::Scope(sc) = &s.kind {
            if matches!(sc.kind, ScopeKind::At(_)) && found.is_none() {
                found = Some(s.span.clone());
            }
        }
    });
    match found {
        Some(span) => Err(CompileError::program(
            STAGE,
            &span,
            format!("a pl.at scope inside {inside}"),
            "pl.at scopes belong to orchestration code; a kernel body is already on a core.",
        )),
        None => Ok(()),
    }
}

/// How many times each variable is read in a body (operands only).
/// Roots the tensor results of the loops and ifs in `body`: a loop's result names the
/// tensor its yield names (a store into the carried tensor), an if's the one its branches
/// yield. Repeated until stable, so an outer loop sees the roots of the inner ones.
fn carried_roots(body: &[Stmt], root: &mut HashMap<u64, u64>) {
    loop {
        let before = root.len();
        walk_stmts(body, &mut |s| {
            let (results, yields) = match &s.kind {
                StmtKind::For(f) => (&f.results, &f.yields),
                StmtKind::If(i) => (&i.results, &i.then_yields),
                _ => return,
            };
            for (r, y) in results.iter().zip(yields) {
                let src = y.as_var().and_then(|y| root.get(&y.id()).copied());
                if let (Type::Tensor(_), Some(src)) = (r.ty(), src) {
                    root.entry(r.id()).or_insert(src);
                }
            }
        });
        if root.len() == before {
            return;
        }
    }
}

fn read_counts(body: &[Stmt]) -> HashMap<u64, usize> {
    let mut counts = HashMap::new();
    walk_stmts(body, &mut |s| {
        stmt_exprs(s, &mut |e| {
            e.for_each_var(&mut |v| *counts.entry(v.id()).or_insert(0) += 1)
        })
    });
    counts
}

struct Outliner {
    parent: String,
    counter: usize,
    reads: HashMap<u64, usize>,
    made: Vec<Function>,
    taken: HashSet<String>,
    /// The name of the mixed scope whose cube half was just outlined (its vector half,
    /// next, takes the same name with `_aiv`).
    half_base: Option<String>,
}

impl Outliner {
    fn body(&mut self, body: &[Stmt]) -> Result<Vec<Stmt>, CompileError> {
        let mut out = Vec::with_capacity(body.len());
        for s in body {
            match &s.kind {
                StmtKind::Scope(sc) if sc.kind == ScopeKind::At(Level::CoreGroup) => {
                    out.push(self.outline(sc, &s.span)?);
                }
                StmtKind::Scope(sc) if matches!(sc.kind, ScopeKind::At(_)) => {
                    let ScopeKind::At(level) = sc.kind else {
                        continue;
                    };
                    return Err(CompileError::program(
                        STAGE,
                        &s.span,
                        format!(
                            "pl.at(level=pl.Level.{}) is not supported yet: only pl.Level.CORE_GROUP scopes are outlined",
                            level.name()
                        ),
                        "Use pl.at(level=pl.Level.CORE_GROUP) for a kernel; chip- and host-level scopes need the distributed compiler.",
                    ));
                }
                StmtKind::Scope(sc) => {
                    let mut sc = sc.clone();
                    sc.body = self.body(&sc.body)?;
                    out.push(Stmt::new(StmtKind::Scope(sc), s.span.clone()));
                }
                StmtKind::For(f) => {
                    let mut f = f.clone();
                    f.body = self.body(&f.body)?;
                    out.push(Stmt::new(StmtKind::For(f), s.span.clone()));
                }
                StmtKind::If(i) => {
                    let mut i = i.clone();
                    i.then_body = self.body(&i.then_body)?;
                    i.else_body = self.body(&i.else_body)?;
                    out.push(Stmt::new(StmtKind::If(i), s.span.clone()));
                }
                _ => out.push(s.clone()),
            }
        }
        Ok(out)
    }

    /// The kernel name of scope `sc`: its `name_hint`, else `<parent>_incore_<k>`; the
    /// halves of an unnamed mixed scope are `<parent>_incore_<k>_aic` / `_aiv`, as PyPTO's
    /// `ExpandMixedKernel` names them.
    fn kernel_name(&mut self, sc: &ScopeStmt) -> String {
        let Some(half) = sc.attrs.str(super::mixed::ATTR_MIXED_HALF) else {
            return self.fresh_name(sc.attrs.str("name_hint"));
        };
        let base = match (half, self.half_base.take()) {
            ("aiv", Some(base)) => base,
            _ => self.fresh_name(None),
        };
        if half == "aic" {
            self.half_base = Some(base.clone());
        }
        let mut name = format!("{base}_{half}");
        let mut k = 1;
        while !self.taken.insert(name.clone()) {
            name = format!("{base}_{half}_{k}");
            k += 1;
        }
        name
    }

    fn fresh_name(&mut self, hint: Option<&str>) -> String {
        if let Some(h) = hint {
            if self.taken.insert(h.to_string()) {
                return h.to_string();
            }
        }
        loop {
            let name = format!("{}_incore_{}", self.parent, self.counter);
            self.counter += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }

    fn outline(&mut self, sc: &ScopeStmt, span: &Span) -> Result<Stmt, CompileError> {
        reject_nested_scopes(&sc.body, "a pl.at scope")?;
        let inputs = scope_inputs(sc, span)?;
        let (root, read_roots, written_roots) = tensor_roots(&sc.body);

        // Outputs: defined here, read after the scope.
        let inside = read_counts(&sc.body);
        let mut outputs: Vec<Var> = Vec::new();
        for v in vars_defined(&sc.body) {
            let total = self.reads.get(&v.id()).copied().unwrap_or(0);
            let here = inside.get(&v.id()).copied().unwrap_or(0);
            if total > here {
                match v.ty() {
                    Type::Tensor(_) if root.contains_key(&v.id()) => outputs.push(v),
                    other => {
                        return Err(CompileError::program(
                            STAGE,
                            span,
                            format!(
                                "'{}' ({}) is computed inside this pl.at scope and used after it; only tensors written with pl.store leave a kernel",
                                super::ssa::base_name(v.name()),
                                other.describe()
                            ),
                            "Store the value into a tensor (pl.store(tile, offsets, out)) and use that tensor after the scope.",
                        ))
                    }
                }
            }
        }

        let name = self.kernel_name(sc);
        let mut map: VarMap = HashMap::new();
        let mut params = Vec::new();
        let mut param_names: HashSet<String> = HashSet::new();
        for v in &inputs {
            let base = super::ssa::base_name(v.name()).to_string();
            let mut pname = base.clone();
            let mut k = 1;
            while !param_names.insert(pname.clone()) {
                pname = format!("{base}_{k}");
                k += 1;
            }
            let p = v.fresh(&pname);
            map.insert(v.id(), p.clone());
            let direction = if matches!(v.ty(), Type::Tensor(_)) {
                match (
                    written_roots.contains(&v.id()),
                    read_roots.contains(&v.id()),
                ) {
                    (true, false) => ParamDirection::Out,
                    (true, true) => ParamDirection::InOut,
                    _ => ParamDirection::In,
                }
            } else {
                ParamDirection::In
            };
            params.push(Param { var: p, direction });
        }
        let keep = |v: &Var| v.name().to_string();
        let mut body = clone_body(&sc.body, &mut map, &keep);
        let ret: Vec<Expr> = outputs
            .iter()
            .map(|o| Expr::Var(map.get(&o.id()).cloned().unwrap_or_else(|| o.clone())))
            .collect();
        body.push(Stmt::new(StmtKind::Return(ret), span.clone()));
        self.made.push(Function {
            name: name.clone(),
            ftype: FunctionType::InCore,
            params,
            return_types: outputs.iter().map(|o| o.ty().clone()).collect(),
            body,
            span: span.clone(),
            attrs: Attrs::new(),
        });

        Ok(dispatch(sc, name, &inputs, &outputs, span))
    }
}

/// The variables the body of scope `sc` reads from outside it: no tiles, no task ids.
fn scope_inputs(sc: &ScopeStmt, span: &Span) -> Result<Vec<Var>, CompileError> {
    let defined: HashSet<u64> = vars_defined(&sc.body).iter().map(Var::id).collect();
    let inputs: Vec<Var> = vars_read(&sc.body)
        .into_iter()
        .filter(|v| !defined.contains(&v.id()))
        .collect();
    for v in &inputs {
        if matches!(v.ty(), Type::Tile(_)) {
            return Err(CompileError::program(
                STAGE,
                span,
                format!(
                    "tile '{}' is defined outside this pl.at scope and used inside it; tiles cannot cross a kernel boundary",
                    super::ssa::base_name(v.name())
                ),
                "Load the tile inside the scope, or store it to a tensor first.",
            ));
        }
        if matches!(v.ty(), Type::TaskId) {
            return Err(CompileError::program(
                STAGE,
                span,
                format!(
                    "task id '{}' is used inside a pl.at scope",
                    super::ssa::base_name(v.name())
                ),
                "Pass task ids through deps=[...] of pl.at, not into its body.",
            ));
        }
    }
    Ok(inputs)
}

/// The tensors of `body` and what they alias: (each alias's root tensor, the roots read,
/// the roots written).
fn tensor_roots(body: &[Stmt]) -> (HashMap<u64, u64>, HashSet<u64>, HashSet<u64>) {
    // Store targets and their aliases (the result of pl.store names the same tensor).
    let mut root: HashMap<u64, u64> = HashMap::new();
    let mut written: HashSet<u64> = HashSet::new();
    let mut read: HashSet<u64> = HashSet::new();
    walk_stmts(body, &mut |s| {
        let store_target = |e: &Expr| -> Option<u64> {
            let c = e.as_call()?;
            if c.op_name() == Some("tile.store") {
                c.args.get(2).and_then(Expr::as_var).map(Var::id)
            } else {
                None
            }
        };
        // A window taken in the scope (tensor.slice) names the tensor it views.
        let slice_source = |e: &Expr| -> Option<u64> {
            let c = e.as_call()?;
            if c.op_name() == Some("tensor.slice") {
                c.args.first().and_then(Expr::as_var).map(Var::id)
            } else {
                None
            }
        };
        if let StmtKind::Assign { targets, value } = &s.kind {
            if let (Some(t), [res]) = (
                store_target(value).or_else(|| slice_source(value)),
                targets.as_slice(),
            ) {
                let r = *root.get(&t).unwrap_or(&t);
                root.insert(res.id(), r);
            }
        }
        // A tensor a loop carries is, inside the body, the tensor it starts as.
        if let StmtKind::For(f) = &s.kind {
            for (v, init) in &f.iter_args {
                if let (Type::Tensor(_), Some(i)) = (v.ty(), init.as_var()) {
                    root.insert(v.id(), *root.get(&i.id()).unwrap_or(&i.id()));
                }
            }
        }
        stmt_exprs(s, &mut |e| {
            let target = store_target(e);
            e.for_each_call(&mut |c| {
                for (i, a) in c.args.iter().enumerate() {
                    let Some(v) = a.as_var() else { continue };
                    // A store writes its target; an atomic add also reads it.
                    if c.op_name() == Some("tile.store")
                        && i == 2
                        && c.kwargs.str("atomic") != Some("add")
                    {
                        continue;
                    }
                    // Taking a window reads nothing by itself.
                    if c.op_name() == Some("tensor.slice") && i == 0 {
                        continue;
                    }
                    read.insert(v.id());
                }
            });
            if let Some(t) = target {
                written.insert(t);
            }
            if e.as_call().is_none() {
                e.for_each_var(&mut |v| {
                    read.insert(v.id());
                });
            }
        });
    });
    carried_roots(body, &mut root);
    let rooted = |id: u64| *root.get(&id).unwrap_or(&id);
    let read_roots: HashSet<u64> = read.iter().map(|&v| rooted(v)).collect();
    let written_roots: HashSet<u64> = written.iter().map(|&v| rooted(v)).collect();
    (root, read_roots, written_roots)
}

/// The statement that calls the outlined function `name` in place of scope `sc`: a submit
/// (with its task id) when the scope has one or dependencies, else a plain call.
fn dispatch(sc: &ScopeStmt, name: String, inputs: &[Var], outputs: &[Var], span: &Span) -> Stmt {
    // The dispatch.
    let tagged = sc.attrs.vars(ATTR_DUMP_VARS);
    let mut idx: Vec<usize> = tagged
        .iter()
        .filter_map(|t| inputs.iter().position(|i| i == t))
        .filter(|&i| inputs[i].ty().is_tensor())
        .collect();
    idx.sort_unstable();
    idx.dedup();
    let mut attrs = Attrs::new();
    if !idx.is_empty() {
        attrs.set(
            ATTR_DUMP_VARS,
            AttrValue::Vars(idx.iter().map(|&i| inputs[i].clone()).collect()),
        );
    }
    let args: Vec<Expr> = inputs.iter().cloned().map(Expr::Var).collect();
    let as_submit = sc.task_id.is_some() || !sc.deps.is_empty();
    let out_types: Vec<Type> = outputs.iter().map(|o| o.ty().clone()).collect();
    let (ty, targets) = if as_submit {
        let mut t = out_types.clone();
        t.push(Type::TaskId);
        let tid = sc
            .task_id
            .clone()
            .unwrap_or_else(|| Var::new(&format!("{name}_tid"), Type::TaskId));
        let mut targets = outputs.to_vec();
        targets.push(tid);
        (Type::Tuple(t), targets)
    } else {
        match out_types.len() {
            0 => (Type::Unit, Vec::new()),
            1 => (out_types[0].clone(), outputs.to_vec()),
            _ => (Type::Tuple(out_types), outputs.to_vec()),
        }
    };
    let call = Expr::Call(Box::new(Call {
        callee: Callee::Function(name),
        args,
        kwargs: Attrs::new(),
        attrs,
        ty,
        span: span.clone(),
        submit: as_submit.then(|| sc.deps.clone()),
    }));
    let kind = if targets.is_empty() {
        StmtKind::Eval(call)
    } else {
        StmtKind::Assign {
            targets,
            value: call,
        }
    };
    Stmt::new(kind, span.clone())
}
