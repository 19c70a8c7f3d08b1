//! `ConvertToSSA`: every definition gets its own variable named `<name>__ssa_v<k>`, values
//! carried around a loop become iter args (`init_values=` / `pl.yield_`), values assigned
//! in the branches of an `if` become its merged results, and every use — operands and
//! Var-valued attributes — refers to the version it reads.
//!
//! The front end already creates a new variable for every assignment (`q = self.foo(q)`
//! binds a new `q`), and resolves each use to the binding visible in straight-line order.
//! That is what the program means except around control flow, which this pass repairs:
//!
//! * **Loops.** A name assigned in a loop body that was bound before the loop is carried:
//!   an iter arg replaces the pre-loop binding inside the body, the body's last binding
//!   is yielded, and a loop result replaces it after the loop.
//! * **Ifs.** A name assigned in a branch and bound before the `if` (or in both branches)
//!   is merged: each branch yields its binding (the pre-`if` value when it does not
//!   assign it) and the `if`'s result is the binding after it.
//! * **Attributes** map by identity, like operands: a `dump_vars` entry keeps naming the
//!   value it was given. Scope attributes are mapped *before* the scope's body, so a
//!   tagged tensor names the version visible at scope entry — the one its outlined
//!   dispatch receives.
//!
//! Definitions must be visible where they are used: a name bound only inside a loop or a
//! branch and read after it is refused, naming the variable.

use std::collections::{HashMap, HashSet};

use crate::error::CompileError;
use crate::ir::{
    vars_defined, walk_stmts, Expr, ForStmt, Function, IfStmt, Program, ScopeStmt, Span, Stmt,
    StmtKind, Var,
};

const STAGE: &str = "ConvertToSSA";

/// Runs the pass.
pub fn run(mut program: Program) -> Result<Program, CompileError> {
    for f in program.functions.iter_mut() {
        convert_function(f)?;
    }
    Ok(program)
}

/// The name without an SSA suffix (`a__ssa_v3` → `a`).
pub fn base_name(name: &str) -> &str {
    match name.rfind("__ssa_v") {
        Some(at) if name[at + 7..].chars().all(|c| c.is_ascii_digit()) && at + 7 < name.len() => {
            &name[..at]
        }
        _ => name,
    }
}

struct Ssa {
    versions: HashMap<String, u32>,
    /// Front-end variable → its SSA version at this point.
    ident: HashMap<u64, Var>,
    /// Name → the front end's binding of that name at this point.
    latest: HashMap<String, Var>,
    /// Bindings made inside a loop or a branch that stay visible after it (a loop's
    /// carried value, an `if`'s merged one): the id of the inner binding.
    escaped: HashSet<u64>,
}

/// Variables bound inside the loops and branches nested in `body` (not at its top level,
/// nor at the top level of a scope in it).
fn nested_defs(body: &[Stmt]) -> HashSet<u64> {
    let mut out = HashSet::new();
    for s in body {
        match &s.kind {
            StmtKind::For(f) => walk_stmts(&f.body, &mut |t| {
                out.extend(t.defs().iter().map(Var::id));
            }),
            StmtKind::If(i) => {
                for b in [&i.then_body, &i.else_body] {
                    walk_stmts(b, &mut |t| {
                        out.extend(t.defs().iter().map(Var::id));
                    });
                }
            }
            StmtKind::Scope(sc) => out.extend(nested_defs(&sc.body)),
            _ => {}
        }
    }
    out
}

impl Ssa {
    fn fresh(&mut self, v: &Var) -> Var {
        let base = base_name(v.name()).to_string();
        let k = self.versions.entry(base.clone()).or_insert(0);
        let name = format!("{base}__ssa_v{k}");
        *k += 1;
        v.fresh(&name)
    }

    fn define(&mut self, v: &Var) -> Var {
        let n = self.fresh(v);
        self.ident.insert(v.id(), n.clone());
        self.latest.insert(v.name().to_string(), v.clone());
        n
    }

    fn map(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        e.map_vars(&mut |v| {
            self.ident
                .get(&v.id())
                .cloned()
                .unwrap_or_else(|| v.clone())
        });
        e
    }

    fn map_var(&self, v: &Var) -> Var {
        self.ident
            .get(&v.id())
            .cloned()
            .unwrap_or_else(|| v.clone())
    }

    fn body(&mut self, body: &[Stmt]) -> Result<Vec<Stmt>, CompileError> {
        body.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Stmt, CompileError> {
        let kind = match &s.kind {
            StmtKind::Assign { targets, value } => {
                let value = self.map(value);
                let targets = targets.iter().map(|t| self.define(t)).collect();
                StmtKind::Assign { targets, value }
            }
            StmtKind::Eval(e) => StmtKind::Eval(self.map(e)),
            StmtKind::Return(vs) => StmtKind::Return(vs.iter().map(|e| self.map(e)).collect()),
            StmtKind::For(f) => StmtKind::For(Box::new(self.for_stmt(f, &s.span)?)),
            StmtKind::If(i) => StmtKind::If(Box::new(self.if_stmt(i, &s.span)?)),
            StmtKind::Scope(sc) => {
                let mut attrs = sc.attrs.clone();
                attrs.map_vars(&mut |v| self.map_var(v));
                let deps = sc.deps.iter().map(|e| self.map(e)).collect();
                let body = self.body(&sc.body)?;
                let task_id = sc.task_id.as_ref().map(|t| self.define(t));
                StmtKind::Scope(Box::new(ScopeStmt {
                    kind: sc.kind,
                    attrs,
                    body,
                    task_id,
                    deps,
                }))
            }
        };
        Ok(Stmt::new(kind, s.span.clone()))
    }

    /// Names assigned in `body` (nested bodies included), in first-definition order.
    fn assigned_names(body: &[Stmt]) -> Vec<(String, Var)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        walk_stmts(body, &mut |s| {
            for v in s.defs() {
                if seen.insert(v.name().to_string()) {
                    out.push((v.name().to_string(), v));
                }
            }
        });
        out
    }

    fn type_check(pre: &Var, now: &Var, span: &Span, what: &str) -> Result<(), CompileError> {
        if pre.ty() != now.ty() {
            return Err(CompileError::program(
                STAGE,
                span,
                format!(
                    "'{}' changes type {what}: {} before, {} after",
                    pre.name(),
                    pre.ty().describe(),
                    now.ty().describe()
                ),
                "Use another name for the value of the other type.",
            ));
        }
        Ok(())
    }

    fn for_stmt(&mut self, f: &ForStmt, span: &Span) -> Result<ForStmt, CompileError> {
        let start = self.map(&f.start);
        let stop = self.map(&f.stop);
        let step = self.map(&f.step);
        let mut iter_args = Vec::new();
        for (it, init) in &f.iter_args {
            let init = self.map(init);
            iter_args.push((self.define(it), init));
        }
        let explicit: HashSet<String> = f
            .iter_args
            .iter()
            .map(|(v, _)| v.name().to_string())
            .chain(f.results.iter().map(|v| v.name().to_string()))
            .collect();
        // Carried names: assigned in the body and bound before the loop.
        let mut carried: Vec<(String, Var, Var)> = Vec::new(); // (name, pre, saved ssa)
        for (name, _) in Self::assigned_names(&f.body) {
            if explicit.contains(&name) || name == f.var.name() {
                continue;
            }
            if let Some(pre) = self.latest.get(&name).cloned() {
                let saved = self.map_var(&pre);
                let it = self.fresh(&pre);
                iter_args.push((it.clone(), Expr::Var(saved.clone())));
                self.ident.insert(pre.id(), it);
                carried.push((name, pre, saved));
            }
        }
        let before_loop = self.latest.clone();
        let var = self.define(&f.var);
        let body = self.body(&f.body)?;
        let mut yields: Vec<Expr> = f.yields.iter().map(|e| self.map(e)).collect();
        let mut results: Vec<Var> = f.results.iter().map(|r| self.define(r)).collect();
        let mut carried_out = HashSet::new();
        for (name, pre, saved) in carried {
            let last = self
                .latest
                .get(&name)
                .cloned()
                .unwrap_or_else(|| pre.clone());
            Self::type_check(&pre, &last, span, "inside the loop")?;
            yields.push(Expr::Var(self.map_var(&last)));
            let r = self.fresh(&pre);
            results.push(r.clone());
            self.ident.insert(last.id(), r);
            self.escaped.insert(last.id());
            carried_out.insert(last.id());
            if last.id() != pre.id() {
                self.ident.insert(pre.id(), saved);
            }
            self.latest.insert(name, last);
        }
        // A binding made in the body and not carried out of the loop ends with it: after
        // the loop the name is bound as before it (so a later loop that assigns the name
        // again starts a new value instead of carrying this one).
        let inner: HashSet<u64> = vars_defined(&f.body)
            .iter()
            .chain(f.iter_args.iter().map(|(v, _)| v))
            .chain(std::iter::once(&f.var))
            .map(Var::id)
            .collect();
        let ended: Vec<String> = self
            .latest
            .iter()
            .filter(|(_, v)| inner.contains(&v.id()) && !carried_out.contains(&v.id()))
            .map(|(n, _)| n.clone())
            .collect();
        for n in ended {
            match before_loop.get(&n) {
                Some(b) => self.latest.insert(n, b.clone()),
                None => self.latest.remove(&n),
            };
        }
        Ok(ForStmt {
            var,
            start,
            stop,
            step,
            iter_args,
            body,
            yields,
            results,
        })
    }

    fn if_stmt(&mut self, i: &IfStmt, span: &Span) -> Result<IfStmt, CompileError> {
        let cond = self.map(&i.cond);
        let before = self.latest.clone();
        let then_body = self.body(&i.then_body)?;
        let mut then_yields: Vec<Expr> = i.then_yields.iter().map(|e| self.map(e)).collect();
        let after_then = std::mem::replace(&mut self.latest, before.clone());
        let else_body = self.body(&i.else_body)?;
        let mut else_yields: Vec<Expr> = i.else_yields.iter().map(|e| self.map(e)).collect();
        let after_else = self.latest.clone();
        let mut results: Vec<Var> = i.results.iter().map(|r| self.define(r)).collect();

        let explicit: HashSet<String> = i.results.iter().map(|v| v.name().to_string()).collect();
        let then_names = Self::assigned_names(&i.then_body);
        let else_names = Self::assigned_names(&i.else_body);
        let in_else: HashSet<&String> = else_names.iter().map(|(n, _)| n).collect();
        let in_then: HashSet<&String> = then_names.iter().map(|(n, _)| n).collect();
        let mut names: Vec<String> = then_names.iter().map(|(n, _)| n.clone()).collect();
        for (n, _) in &else_names {
            if !in_then.contains(n) {
                names.push(n.clone());
            }
        }
        // A binding made inside a loop or branch nested in a branch, and not carried out of
        // it, ends with that block: it is not the branch's value of the name.
        let (hidden_then, hidden_else) = (nested_defs(&i.then_body), nested_defs(&i.else_body));
        let visible = |v: &Var, hidden: &HashSet<u64>, esc: &HashSet<u64>| {
            !hidden.contains(&v.id()) || esc.contains(&v.id())
        };
        let after_then: HashMap<String, Var> = after_then
            .into_iter()
            .filter(|(n, v)| {
                before.get(n).is_some_and(|b| b.id() == v.id())
                    || visible(v, &hidden_then, &self.escaped)
            })
            .collect();
        let after_else: HashMap<String, Var> = after_else
            .into_iter()
            .filter(|(n, v)| {
                before.get(n).is_some_and(|b| b.id() == v.id())
                    || visible(v, &hidden_else, &self.escaped)
            })
            .collect();
        let in_then: HashSet<&String> = in_then
            .into_iter()
            .filter(|n| after_then.contains_key(*n))
            .collect();
        let in_else: HashSet<&String> = in_else
            .into_iter()
            .filter(|n| after_else.contains_key(*n))
            .collect();
        let mut merged_latest = before.clone();
        for name in names {
            if explicit.contains(&name) {
                continue;
            }
            let pre = before.get(&name).cloned();
            let both = in_then.contains(&name) && in_else.contains(&name);
            if pre.is_none() && !both {
                // Bound in one branch only: visible after the if only through the branch.
                let v = after_then
                    .get(&name)
                    .or_else(|| after_else.get(&name))
                    .cloned();
                if let Some(v) = v {
                    merged_latest.insert(name, v);
                }
                continue;
            }
            let (Some(tv), Some(ev)) = (
                after_then.get(&name).cloned(),
                after_else.get(&name).cloned(),
            ) else {
                continue;
            };
            Self::type_check(&tv, &ev, span, "between the branches of the if")?;
            then_yields.push(Expr::Var(self.map_var(&tv)));
            else_yields.push(Expr::Var(self.map_var(&ev)));
            // The front end binds the name after the if to the else branch's binding when
            // the else branch assigns it, else to the then branch's.
            let bound = if in_else.contains(&name) { ev } else { tv };
            let r = self.fresh(&bound);
            results.push(r.clone());
            self.ident.insert(bound.id(), r);
            self.escaped.insert(bound.id());
            merged_latest.insert(name, bound);
        }
        // The explicit results (`x = pl.yield_(...)` in both branches) are bound after it.
        for r in &i.results {
            merged_latest.insert(r.name().to_string(), r.clone());
        }
        self.latest = merged_latest;
        Ok(IfStmt {
            cond,
            then_body,
            else_body,
            then_yields,
            else_yields,
            results,
        })
    }
}

fn convert_function(f: &mut Function) -> Result<(), CompileError> {
    let mut ssa = Ssa {
        versions: HashMap::new(),
        ident: HashMap::new(),
        latest: HashMap::new(),
        escaped: HashSet::new(),
    };
    for p in f.params.iter_mut() {
        p.var = ssa.define(&p.var);
    }
    f.body = ssa.body(&f.body)?;
    check_visibility(f)
}

/// Every use must see its definition: parameters, earlier statements of an enclosing
/// block, loop variables and iter args inside their loop.
pub fn check_visibility(f: &Function) -> Result<(), CompileError> {
    let mut scope: Vec<HashSet<u64>> = vec![f.params.iter().map(|p| p.var.id()).collect()];
    let all_defs: HashMap<u64, String> = vars_defined(&f.body)
        .into_iter()
        .map(|v| (v.id(), v.name().to_string()))
        .collect();
    visible_body(&f.body, &mut scope, &all_defs)
}

fn check_expr(
    e: &Expr,
    scope: &[HashSet<u64>],
    all_defs: &HashMap<u64, String>,
    span: &Span,
) -> Result<(), CompileError> {
    let mut bad = None;
    e.for_each_var(&mut |v| {
        if bad.is_none()
            && all_defs.contains_key(&v.id())
            && !scope.iter().any(|s| s.contains(&v.id()))
        {
            bad = Some(v.clone());
        }
    });
    match bad {
        Some(v) => Err(CompileError::program(
            STAGE,
            span,
            format!(
                "'{}' is read here but bound only inside a loop or a branch that ended before",
                base_name(v.name())
            ),
            "Bind it before the loop / if (then it is carried or merged), or use it inside that block.",
        )),
        None => Ok(()),
    }
}

fn visible_body(
    body: &[Stmt],
    scope: &mut Vec<HashSet<u64>>,
    all_defs: &HashMap<u64, String>,
) -> Result<(), CompileError> {
    for s in body {
        let mut err = Ok(());
        crate::ir::stmt_exprs(s, &mut |e| {
            if err.is_ok() {
                // Yields are checked inside their block below.
                err = check_expr(e, scope, all_defs, &s.span);
            }
        });
        match &s.kind {
            StmtKind::For(f) => {
                for e in [&f.start, &f.stop, &f.step]
                    .into_iter()
                    .chain(f.iter_args.iter().map(|(_, e)| e))
                {
                    check_expr(e, scope, all_defs, &s.span)?;
                }
                let mut inner: HashSet<u64> = f.iter_args.iter().map(|(v, _)| v.id()).collect();
                inner.insert(f.var.id());
                scope.push(inner);
                visible_body(&f.body, scope, all_defs)?;
                for y in &f.yields {
                    check_expr(y, scope, all_defs, &s.span)?;
                }
                scope.pop();
            }
            StmtKind::If(i) => {
                check_expr(&i.cond, scope, all_defs, &s.span)?;
                scope.push(HashSet::new());
                visible_body(&i.then_body, scope, all_defs)?;
                for y in &i.then_yields {
                    check_expr(y, scope, all_defs, &s.span)?;
                }
                scope.pop();
                scope.push(HashSet::new());
                visible_body(&i.else_body, scope, all_defs)?;
                for y in &i.else_yields {
                    check_expr(y, scope, all_defs, &s.span)?;
                }
                scope.pop();
            }
            StmtKind::Scope(sc) => {
                for d in &sc.deps {
                    check_expr(d, scope, all_defs, &s.span)?;
                }
                // Bindings of a manual scope stay visible after it (codegen hoists them
                // out of the C++ block); a pl.at body becomes a kernel whose results are
                // bound after it.
                visible_body(&sc.body, scope, all_defs)?;
            }
            _ => err?,
        }
        if let Some(top) = scope.last_mut() {
            for v in s.defs() {
                top.insert(v.id());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names() {
        assert_eq!(base_name("a__ssa_v3"), "a");
        assert_eq!(base_name("a__ssa_v"), "a__ssa_v");
        assert_eq!(base_name("a__ssa_vx"), "a__ssa_vx");
        assert_eq!(base_name("x"), "x");
    }
}
