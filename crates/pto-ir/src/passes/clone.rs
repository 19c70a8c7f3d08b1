//! Copying statement lists with fresh variables: every variable a copied statement defines
//! gets a new identity (named by the caller's rule), and every use — operands and
//! Var-valued attributes alike — is mapped through the same table, so the copy is
//! independent of the original and keeps every `dump_vars` entry pointing at the copied
//! value.

use std::collections::HashMap;

use crate::ir::{Expr, ForStmt, IfStmt, ScopeStmt, Stmt, StmtKind, Var};

/// A variable map: original id → replacement.
pub type VarMap = HashMap<u64, Var>;

/// `e` with every variable in `map` replaced.
pub fn map_expr(e: &Expr, map: &VarMap) -> Expr {
    let mut e = e.clone();
    e.map_vars(&mut |v| map.get(&v.id()).cloned().unwrap_or_else(|| v.clone()));
    e
}

fn map_exprs(es: &[Expr], map: &VarMap) -> Vec<Expr> {
    es.iter().map(|e| map_expr(e, map)).collect()
}

/// Copies `body`: definitions become `rename(var)`-named fresh variables (recorded in
/// `map`), uses are mapped through `map`.
pub fn clone_body(body: &[Stmt], map: &mut VarMap, rename: &dyn Fn(&Var) -> String) -> Vec<Stmt> {
    body.iter().map(|s| clone_stmt(s, map, rename)).collect()
}

fn define(v: &Var, map: &mut VarMap, rename: &dyn Fn(&Var) -> String) -> Var {
    let n = v.fresh(&rename(v));
    map.insert(v.id(), n.clone());
    n
}

fn clone_stmt(s: &Stmt, map: &mut VarMap, rename: &dyn Fn(&Var) -> String) -> Stmt {
    let kind = match &s.kind {
        StmtKind::Assign { targets, value } => {
            let value = map_expr(value, map);
            let targets = targets.iter().map(|t| define(t, map, rename)).collect();
            StmtKind::Assign { targets, value }
        }
        StmtKind::Eval(e) => StmtKind::Eval(map_expr(e, map)),
        StmtKind::Return(vs) => StmtKind::Return(map_exprs(vs, map)),
        StmtKind::For(f) => {
            let start = map_expr(&f.start, map);
            let stop = map_expr(&f.stop, map);
            let step = map_expr(&f.step, map);
            let iter_args = f
                .iter_args
                .iter()
                .map(|(v, e)| {
                    let e = map_expr(e, map);
                    (define(v, map, rename), e)
                })
                .collect();
            let var = define(&f.var, map, rename);
            let body = clone_body(&f.body, map, rename);
            let yields = map_exprs(&f.yields, map);
            let results = f.results.iter().map(|r| define(r, map, rename)).collect();
            StmtKind::For(Box::new(ForStmt {
                var,
                start,
                stop,
                step,
                iter_args,
                body,
                yields,
                results,
            }))
        }
        StmtKind::If(i) => {
            let cond = map_expr(&i.cond, map);
            let then_body = clone_body(&i.then_body, map, rename);
            let then_yields = map_exprs(&i.then_yields, map);
            let else_body = clone_body(&i.else_body, map, rename);
            let else_yields = map_exprs(&i.else_yields, map);
            let results = i.results.iter().map(|r| define(r, map, rename)).collect();
            StmtKind::If(Box::new(IfStmt {
                cond,
                then_body,
                else_body,
                then_yields,
                else_yields,
                results,
            }))
        }
        StmtKind::Scope(sc) => {
            let mut attrs = sc.attrs.clone();
            attrs.map_vars(&mut |v| map.get(&v.id()).cloned().unwrap_or_else(|| v.clone()));
            let deps = map_exprs(&sc.deps, map);
            let body = clone_body(&sc.body, map, rename);
            let task_id = sc.task_id.as_ref().map(|t| define(t, map, rename));
            StmtKind::Scope(Box::new(ScopeStmt {
                kind: sc.kind,
                attrs,
                body,
                task_id,
                deps,
            }))
        }
    };
    Stmt::new(kind, s.span.clone())
}
