//! `InlineFunctions`: every call of an `Inline` function is replaced by a copy of its body,
//! then the `Inline` functions are deleted.
//!
//! The copy maps each parameter to the call's argument and gives every variable the body
//! defines a fresh identity named `<name>_inline<N>` (a rebinding of an `Out` / `InOut`
//! parameter is named as the caller's argument instead, so the caller's loops carry it as
//! one value); Var-valued attributes inside the body
//! (a `dump_vars` seeded by a `pl.dump_tag(param)` in the helper) are mapped with the
//! operands, so they become the caller's values.
//!
//! The call site's own `dump_vars` (a tag written in the caller before the call) would die
//! with the call, so it is transferred first (PyPTO's `InlineDumpVarTransfer`): every
//! `pl.at` scope of the spliced statements whose body uses a tagged value gets it merged
//! into its `dump_vars`, and every nested call of a program function that passes a tagged
//! value as an argument gets it merged into its own `dump_vars` — so a tag crosses
//! several levels of inlining, the merged call being spliced in the next round. Tags used
//! by neither are dropped. Merging keeps existing entries and appends new ones in order,
//! without duplicates. Builtin operation calls are never stamped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::clone::{clone_body, VarMap};
use crate::error::CompileError;
use crate::ir::{
    vars_read, walk_stmts, AttrValue, Call, Expr, Function, Program, ScopeKind, Stmt, StmtKind,
    Var, ATTR_DUMP_VARS,
};
use crate::types::{FunctionType, ParamDirection};

const STAGE: &str = "InlineFunctions";
/// Rounds of splicing before nested inline calls are declared recursive.
const MAX_ROUNDS: usize = 64;

static INLINE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Runs the pass.
pub fn run(mut program: Program) -> Result<Program, CompileError> {
    let inline: HashMap<String, Function> = program
        .functions
        .iter()
        .filter(|f| f.ftype == FunctionType::Inline)
        .map(|f| (f.name.clone(), f.clone()))
        .collect();
    if inline.is_empty() {
        return Ok(program);
    }
    for f in program.functions.iter_mut() {
        if f.ftype == FunctionType::Inline {
            continue;
        }
        let mut round = 0;
        loop {
            let (body, changed) = splice_body(&f.body, &inline)?;
            f.body = body;
            if !changed {
                break;
            }
            round += 1;
            if round >= MAX_ROUNDS {
                let name = first_inline_call(&f.body, &inline).unwrap_or_default();
                return Err(CompileError::program(
                    STAGE,
                    &f.span,
                    format!(
                        "inline function '{name}' still calls an inline function after {MAX_ROUNDS} rounds of inlining: the inline functions are recursive"
                    ),
                    "Inline functions cannot call themselves, directly or through others; make one of them an InCore kernel or restructure the recursion as a loop.",
                ));
            }
        }
    }
    program
        .functions
        .retain(|f| f.ftype != FunctionType::Inline);
    Ok(program)
}

fn first_inline_call(body: &[Stmt], inline: &HashMap<String, Function>) -> Option<String> {
    let mut found = None;
    walk_stmts(body, &mut |s| {
        crate::ir::stmt_exprs(s, &mut |e| {
            e.for_each_call(&mut |c| {
                if let Some(n) = c.function_name() {
                    if found.is_none() && inline.contains_key(n) {
                        found = Some(n.to_string());
                    }
                }
            })
        })
    });
    found
}

fn inline_call_of<'a>(e: &'a Expr, inline: &HashMap<String, Function>) -> Option<&'a Call> {
    let c = e.as_call()?;
    let n = c.function_name()?;
    inline.contains_key(n).then_some(c)
}

fn nested_inline_call(
    s: &Stmt,
    inline: &HashMap<String, Function>,
) -> Option<(String, crate::ir::Span)> {
    let mut found = None;
    let mut check = |e: &Expr, top: bool| {
        e.for_each_call(&mut |c| {
            if let Some(n) = c.function_name() {
                let is_top = top && std::ptr::eq(c, e.as_call().map_or(std::ptr::null(), |x| x));
                if inline.contains_key(n) && !is_top && found.is_none() {
                    found = Some((n.to_string(), c.span.clone()));
                }
            }
        })
    };
    match &s.kind {
        StmtKind::Assign { value, .. } => check(value, true),
        StmtKind::Eval(e) => check(e, true),
        _ => crate::ir::stmt_exprs(s, &mut |e| check(e, false)),
    }
    found
}

/// One round over a body: splices every statement-level inline call (nested bodies
/// included). Returns the new body and whether anything was spliced.
fn splice_body(
    body: &[Stmt],
    inline: &HashMap<String, Function>,
) -> Result<(Vec<Stmt>, bool), CompileError> {
    let mut out = Vec::with_capacity(body.len());
    let mut changed = false;
    for s in body {
        if let Some((name, span)) = nested_inline_call(s, inline) {
            return Err(CompileError::program(
                STAGE,
                &span,
                format!("the call of inline function '{name}' must be a statement of its own"),
                "Bind its result first: `x = self.helper(...)`, then use x.",
            ));
        }
        match &s.kind {
            StmtKind::Assign { targets, value } if inline_call_of(value, inline).is_some() => {
                let call = inline_call_of(value, inline)
                    .ok_or_else(|| CompileError::program(STAGE, &s.span, "internal".into(), ""))?;
                out.extend(splice_call(call, targets, inline)?);
                changed = true;
            }
            StmtKind::Eval(e) if inline_call_of(e, inline).is_some() => {
                let call = inline_call_of(e, inline)
                    .ok_or_else(|| CompileError::program(STAGE, &s.span, "internal".into(), ""))?;
                out.extend(splice_call(call, &[], inline)?);
                changed = true;
            }
            StmtKind::For(f) => {
                let (b, c) = splice_body(&f.body, inline)?;
                changed |= c;
                let mut f = f.clone();
                f.body = b;
                out.push(Stmt::new(StmtKind::For(f), s.span.clone()));
            }
            StmtKind::If(i) => {
                let (t, c1) = splice_body(&i.then_body, inline)?;
                let (e, c2) = splice_body(&i.else_body, inline)?;
                changed |= c1 || c2;
                let mut i = i.clone();
                i.then_body = t;
                i.else_body = e;
                out.push(Stmt::new(StmtKind::If(i), s.span.clone()));
            }
            StmtKind::Scope(sc) => {
                let (b, c) = splice_body(&sc.body, inline)?;
                changed |= c;
                let mut sc = sc.clone();
                sc.body = b;
                out.push(Stmt::new(StmtKind::Scope(sc), s.span.clone()));
            }
            _ => out.push(s.clone()),
        }
    }
    Ok((out, changed))
}

fn splice_call(
    call: &Call,
    targets: &[Var],
    inline: &HashMap<String, Function>,
) -> Result<Vec<Stmt>, CompileError> {
    let name = call.function_name().unwrap_or_default();
    let f = inline.get(name).ok_or_else(|| {
        CompileError::program(STAGE, &call.span, format!("no function '{name}'"), "")
    })?;
    if call.args.len() != f.params.len() {
        return Err(CompileError::program(
            STAGE,
            &call.span,
            format!(
                "inline function '{name}' takes {} argument(s), got {}",
                f.params.len(),
                call.args.len()
            ),
            "Pass one argument per parameter.",
        ));
    }
    if call.submit.is_some() {
        return Err(CompileError::program(
            STAGE,
            &call.span,
            format!("pl.submit of inline function '{name}'"),
            "Only kernels can be submitted; call an inline helper directly: self.helper(...).",
        ));
    }
    let n = INLINE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut out = Vec::new();
    let mut map: VarMap = HashMap::new();
    for (p, a) in f.params.iter().zip(&call.args) {
        match a {
            Expr::Var(v) => {
                map.insert(p.var.id(), v.clone());
            }
            other => {
                // A non-variable argument is bound to a fresh variable first.
                let v = p.var.fresh(&format!("{}_inline{n}", p.var.name()));
                out.push(Stmt::new(
                    StmtKind::Assign {
                        targets: vec![v.clone()],
                        value: other.clone(),
                    },
                    call.span.clone(),
                ));
                map.insert(p.var.id(), v);
            }
        }
    }
    let (ret, body) = match f.body.split_last() {
        Some((last, rest)) => match &last.kind {
            StmtKind::Return(vs) => (Some((vs.clone(), last.span.clone())), rest),
            _ => (None, &f.body[..]),
        },
        None => (None, &f.body[..]),
    };
    let mut nested_return = None;
    walk_stmts(body, &mut |s| {
        if matches!(s.kind, StmtKind::Return(_)) && nested_return.is_none() {
            nested_return = Some(s.span.clone());
        }
    });
    if let Some(span) = nested_return {
        return Err(CompileError::program(
            STAGE,
            &span,
            format!("inline function '{name}' returns before its last statement"),
            "An inline function may return only at its end; merge the branches with a result variable.",
        ));
    }
    // A rebinding of an `Out` / `InOut` parameter (written in place, e.g. assembled into
    // in a loop) takes the name of the caller's tensor, so ConvertToSSA carries it as the
    // same value through the caller's loops and branches.
    let in_place: HashMap<&str, String> = f
        .params
        .iter()
        .zip(&call.args)
        .filter(|(p, _)| matches!(p.direction, ParamDirection::Out | ParamDirection::InOut))
        .filter_map(|(p, a)| Some((p.var.name(), a.as_var()?.name().to_string())))
        .collect();
    let rename = |v: &Var| match in_place.get(v.name()) {
        Some(caller) => caller.clone(),
        None => format!("{}_inline{n}", v.name()),
    };
    let mut spliced = clone_body(body, &mut map, &rename);
    let ret_values: Vec<Expr> = ret
        .as_ref()
        .map(|(vs, _)| vs.iter().map(|e| super::clone::map_expr(e, &map)).collect())
        .unwrap_or_default();
    if !targets.is_empty() {
        if ret_values.len() != targets.len() {
            return Err(CompileError::program(
                STAGE,
                &call.span,
                format!(
                    "inline function '{name}' returns {} value(s), the call binds {}",
                    ret_values.len(),
                    targets.len()
                ),
                "Bind as many names as the helper returns.",
            ));
        }
        let span = ret.as_ref().map(|(_, s)| s.clone()).unwrap_or_default();
        for (t, v) in targets.iter().zip(ret_values) {
            spliced.push(Stmt::new(
                StmtKind::Assign {
                    targets: vec![t.clone()],
                    value: v,
                },
                span.clone(),
            ));
        }
    }
    let tags: Vec<Var> = call.dump_vars().to_vec();
    if !tags.is_empty() {
        transfer_dump_vars(&mut spliced, &tags);
    }
    out.extend(spliced);
    Ok(out)
}

fn merge(existing: &mut Vec<Var>, new: &[Var]) {
    for v in new {
        if !existing.contains(v) {
            existing.push(v.clone());
        }
    }
}

/// Applies a call site's tags to the spliced statements (see the module docs).
fn transfer_dump_vars(body: &mut [Stmt], tags: &[Var]) {
    for s in body.iter_mut() {
        match &mut s.kind {
            StmtKind::Scope(sc) => {
                if let ScopeKind::At(_) = sc.kind {
                    let used = vars_read(&sc.body);
                    let hit: Vec<Var> = tags.iter().filter(|t| used.contains(t)).cloned().collect();
                    if !hit.is_empty() {
                        let mut dumps = sc.attrs.vars(ATTR_DUMP_VARS).to_vec();
                        merge(&mut dumps, &hit);
                        sc.attrs.set(ATTR_DUMP_VARS, AttrValue::Vars(dumps));
                    }
                }
                transfer_dump_vars(&mut sc.body, tags);
            }
            StmtKind::For(f) => transfer_dump_vars(&mut f.body, tags),
            StmtKind::If(i) => {
                transfer_dump_vars(&mut i.then_body, tags);
                transfer_dump_vars(&mut i.else_body, tags);
            }
            StmtKind::Assign { value, .. } | StmtKind::Eval(value) => {
                value.for_each_call_mut(&mut |c| stamp_call(c, tags));
            }
            StmtKind::Return(vs) => {
                for v in vs {
                    v.for_each_call_mut(&mut |c| stamp_call(c, tags));
                }
            }
        }
    }
}

fn stamp_call(c: &mut Call, tags: &[Var]) {
    if c.function_name().is_none() {
        return;
    }
    let hit: Vec<Var> = tags
        .iter()
        .filter(|t| c.args.iter().any(|a| a.as_var() == Some(*t)))
        .cloned()
        .collect();
    if hit.is_empty() {
        return;
    }
    let mut dumps = c.dump_vars().to_vec();
    merge(&mut dumps, &hit);
    c.attrs.insert_at(0, ATTR_DUMP_VARS, AttrValue::Vars(dumps));
}
