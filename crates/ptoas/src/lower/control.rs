//! The structured control flow (`scf.for`, `scf.if`, `scf.while`) and calls: C++ loops and
//! branches with the carried values as mutable locals.

use std::collections::HashSet;

use super::{invalid, unsupported, FnLower};
use crate::cpp::Stmt;
use crate::error::{Diag, DiagResult};
use crate::ir::{Block, Func, Op, OpKind, ValueId};
use crate::source::Span;
use crate::types::Type;

impl FnLower<'_> {
    /// `scf.for`: a C++ `for` with the loop-carried values as mutable locals declared before it.
    pub(super) fn for_loop(
        &mut self,
        op: &Op,
        bounds: [ValueId; 3],
        iv: ValueId,
        iter_args: &[(ValueId, ValueId)],
        body: &Block,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let [lb, ub, step] = bounds;
        // Loop-carried values: mutable locals declared before the loop. A carried
        // view stays the view it starts as (see `carry_view`).
        let mut vars = Vec::new();
        let mut carried = Vec::new();
        for (i, (arg, init)) in iter_args.iter().enumerate() {
            if is_view(f.ty(*arg)) {
                let view = self.view_of(*init, span)?;
                self.views.insert(*arg, view);
                self.view_roots.insert(*arg, self.view_root(*init));
                carried.push((i, *arg, *init));
                continue;
            }
            let ty = self.cpp_type(*arg, span)?;
            let e = self.expr(*init, span)?;
            let name = self.fresh();
            out.push(self.comment(&[*arg]));
            out.push(Stmt::Line(format!("{ty} {name} = {e};")));
            self.names.insert(*arg, name.clone());
            vars.push(name);
        }
        let ivt = self.scalar_of(iv, span)?;
        let l = self.expr(lb, span)?;
        let u = self.expr(ub, span)?;
        let s = self.expr(step, span)?;
        let ivn = self.fresh();
        self.names.insert(iv, ivn.clone());
        let head = format!("for ({} {ivn} = {l}; {ivn} < {u}; {ivn} += {s})", ivt.cpp());
        let (ops, term) = Self::split_yield(body);
        let mut inner = Vec::new();
        for o in ops {
            self.op(o, &mut inner)?;
        }
        match term.map(|t| &t.kind) {
            Some(OpKind::Yield(vals)) if vals.len() == iter_args.len() => {
                for &(i, arg, _) in &carried {
                    if self.view_root(vals[i]) != self.view_root(arg) {
                        return Err(carry_view_error(f, span, vals[i]));
                    }
                }
                let rest: Vec<ValueId> = without(vals, &carried);
                self.assign_all(&vars, &rest, span, &mut inner)?
            }
            Some(OpKind::Yield(vals)) => {
                return Err(invalid(
                    span,
                    format!(
                        "yields {} value(s) for {} result(s)",
                        vals.len(),
                        iter_args.len()
                    ),
                ))
            }
            _ if iter_args.is_empty() => {}
            _ => {
                return Err(invalid(
                    span,
                    "scf.for with iter_args must end with scf.yield",
                ))
            }
        }
        out.push(Stmt::Block { head, body: inner });
        let results: Vec<ValueId> = without(&op.results, &carried);
        for (r, var) in results.iter().zip(&vars) {
            self.names.insert(*r, var.clone());
        }
        for &(i, _, init) in &carried {
            if let Some(r) = op.results.get(i) {
                let view = self.view_of(init, span)?;
                self.views.insert(*r, view);
                self.view_roots.insert(*r, self.view_root(init));
            }
        }
        Ok(())
    }

    /// `scf.if`: its results declared before a C++ `if`, each branch assigning them.
    pub(super) fn if_else(
        &mut self,
        op: &Op,
        cond: ValueId,
        then_block: &Block,
        else_block: Option<&Block>,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let c = self.expr(cond, span)?;
        // View results are no C++ variables: each must be one view yielded by both
        // branches (see `carry_view`).
        let views: Vec<(usize, ValueId, ValueId)> = op
            .results
            .iter()
            .enumerate()
            .filter(|(_, r)| is_view(f.ty(**r)))
            .map(|(i, r)| (i, *r, *r))
            .collect();
        let scalars = without(&op.results, &views);
        let vars = self.declare_results(&scalars, span, out)?;
        let n = op.results.len();
        let branch = |cx: &mut Self, b: &Block| -> DiagResult<(Vec<Stmt>, Vec<ValueId>)> {
            let (ops, term) = Self::split_yield(b);
            let mut inner = Vec::new();
            for o in ops {
                cx.op(o, &mut inner)?;
            }
            let mut yielded = Vec::new();
            match term.map(|t| &t.kind) {
                Some(OpKind::Yield(vals)) if vals.len() == n => {
                    cx.assign_all(&vars, &without(vals, &views), span, &mut inner)?;
                    yielded = views.iter().map(|&(i, _, _)| vals[i]).collect();
                }
                Some(OpKind::Yield(vals)) => {
                    return Err(invalid(
                        span,
                        format!("yields {} value(s) for {n} result(s)", vals.len()),
                    ))
                }
                _ if n == 0 => {}
                _ => {
                    return Err(invalid(
                        span,
                        "scf.if with results must yield in both branches",
                    ))
                }
            }
            Ok((inner, yielded))
        };
        let (then_body, then_views) = branch(self, then_block)?;
        let else_body = match else_block {
            Some(b) => {
                let (body, else_views) = branch(self, b)?;
                for (&a, &b) in then_views.iter().zip(&else_views) {
                    if self.view_root(a) != self.view_root(b) {
                        return Err(carry_view_error(f, span, b));
                    }
                }
                Some(body)
            }
            None if n != 0 => {
                return Err(invalid(span, "scf.if with results needs an else branch"))
            }
            None => None,
        };
        for (&(_, r, _), &v) in views.iter().zip(&then_views) {
            let view = self.view_of(v, span)?;
            self.views.insert(r, view);
            self.view_roots.insert(r, self.view_root(v));
        }
        out.push(Stmt::If {
            cond: c,
            then_body,
            else_body,
        });
        Ok(())
    }

    /// `scf.while`: a `while (true)` that breaks when `scf.condition` is false.
    pub(super) fn while_loop(
        &mut self,
        op: &Op,
        inits: &[ValueId],
        before: &Block,
        after: &Block,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let mut vars = Vec::new();
        for (arg, init) in before.args.iter().zip(inits) {
            let ty = self.cpp_type(*arg, span)?;
            let e = self.expr(*init, span)?;
            let name = self.fresh();
            out.push(self.comment(&[*arg]));
            out.push(Stmt::Line(format!("{ty} {name} = {e};")));
            self.names.insert(*arg, name.clone());
            vars.push(name);
        }
        let results = self.declare_results(&op.results, span, out)?;
        let mut inner = Vec::new();
        let (bops, bterm) = Self::split_yield(before);
        for o in bops {
            self.op(o, &mut inner)?;
        }
        let Some(OpKind::Condition { cond, args }) = bterm.map(|t| &t.kind) else {
            return Err(invalid(
                span,
                "the first region of scf.while must end with scf.condition",
            ));
        };
        let c = self.expr(*cond, span)?;
        let mut exit = Vec::new();
        self.assign_all(&results, args, span, &mut exit)?;
        exit.push(Stmt::Line("break;".into()));
        inner.push(Stmt::If {
            cond: format!("!({c})"),
            then_body: exit,
            else_body: None,
        });
        if after.args.len() != args.len() {
            return Err(invalid(
                span,
                "scf.while: the body takes as many arguments as scf.condition passes",
            ));
        }
        for (a, v) in after.args.iter().zip(args) {
            let ty = self.cpp_type(*a, span)?;
            let e = self.expr(*v, span)?;
            self.declare(&mut inner, *a, &ty, e, false);
        }
        let (aops, aterm) = Self::split_yield(after);
        for o in aops {
            self.op(o, &mut inner)?;
        }
        match aterm.map(|t| &t.kind) {
            Some(OpKind::Yield(vals)) => self.assign_all(&vars, vals, span, &mut inner)?,
            _ if vars.is_empty() => {}
            _ => {
                return Err(invalid(
                    span,
                    "the body of scf.while must end with scf.yield",
                ))
            }
        }
        out.push(Stmt::Block {
            head: "while (true)".into(),
            body: inner,
        });
        Ok(())
    }

    /// `func.call`: a C++ call, its one result declared.
    pub(super) fn call(
        &mut self,
        op: &Op,
        callee: &str,
        args: &[ValueId],
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let a: Vec<String> = args
            .iter()
            .map(|v| self.expr(*v, span))
            .collect::<DiagResult<_>>()?;
        let call = format!("{callee}({})", a.join(", "));
        match op.results.as_slice() {
            [] => out.push(Stmt::Line(format!("{call};"))),
            [r] => {
                let ty = self.cpp_type(*r, span)?;
                self.declare(out, *r, &ty, call, false);
            }
            _ => {
                return Err(unsupported(
                    span,
                    "calls returning several values are not supported",
                ))
            }
        }
        Ok(())
    }

    /// The last op of `b` if it is a terminator of the given kind's values.
    fn split_yield(b: &Block) -> (&[Op], Option<&Op>) {
        match b.ops.split_last() {
            Some((last, rest))
                if matches!(last.kind, OpKind::Yield(_) | OpKind::Condition { .. }) =>
            {
                (rest, Some(last))
            }
            _ => (&b.ops[..], None),
        }
    }

    /// Assigns `vals` to the variables `vars`, through temporaries when a value is one of
    /// the targets (a swap).
    fn assign_all(
        &mut self,
        vars: &[String],
        vals: &[ValueId],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        if vars.len() != vals.len() {
            return Err(invalid(
                span,
                format!(
                    "yields {} value(s) for {} result(s)",
                    vals.len(),
                    vars.len()
                ),
            ));
        }
        let exprs: Vec<String> = vals
            .iter()
            .map(|v| self.expr(*v, span))
            .collect::<DiagResult<_>>()?;
        let targets: HashSet<&str> = vars.iter().map(|s| s.as_str()).collect();
        let clash = exprs
            .iter()
            .zip(vars)
            .any(|(e, v)| e != v && targets.contains(e.as_str()));
        if clash {
            let mut temps = Vec::new();
            for (e, v) in exprs.iter().zip(vals) {
                let t = self.fresh();
                let ty = self.cpp_type(*v, span)?;
                out.push(Stmt::Line(format!("{ty} {t} = {e};")));
                temps.push(t);
            }
            for (var, t) in vars.iter().zip(temps) {
                out.push(Stmt::Line(format!("{var} = {t};")));
            }
        } else {
            for (var, e) in vars.iter().zip(exprs) {
                if *var != e {
                    out.push(Stmt::Line(format!("{var} = {e};")));
                }
            }
        }
        Ok(())
    }

    /// Declares one mutable variable per value of `vs` (results of if/while), uninitialized.
    fn declare_results(
        &mut self,
        vs: &[ValueId],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<Vec<String>> {
        let mut vars = Vec::new();
        for v in vs {
            let ty = self.cpp_type(*v, span)?;
            let name = self.fresh();
            out.push(self.comment(&[*v]));
            out.push(Stmt::Line(format!("{ty} {name};")));
            self.names.insert(*v, name.clone());
            vars.push(name);
        }
        Ok(vars)
    }
}

/// Whether values of `t` are GM views, which the lowering keeps as compile-time records
/// rather than C++ variables.
///
/// `carry_view`: PyPTO threads each output tensor through `scf.if` results and `scf.for`
/// iter_args in SSA form although it is the same GM tensor on every path. Such a result (or
/// loop argument) stands for that one view: a branch must yield the same view value as the
/// other, a loop body its own argument or the initial view.
fn is_view(t: &Type) -> bool {
    matches!(t, Type::TensorView { .. } | Type::PartitionView { .. })
}

/// The error for a view that would differ between paths of an `scf.if` / `scf.for`.
fn carry_view_error(f: &Func, span: Span, v: ValueId) -> Diag {
    unsupported(
        span,
        format!(
            "%{} ({}) is carried out of scf.if / scf.for, but a view result must be the same view on every path",
            f.name_of(v),
            f.ty(v)
        ),
    )
}

/// `vals` without the positions listed first in `skip` (the carried views).
fn without(vals: &[ValueId], skip: &[(usize, ValueId, ValueId)]) -> Vec<ValueId> {
    vals.iter()
        .enumerate()
        .filter(|(i, _)| !skip.iter().any(|s| s.0 == *i))
        .map(|(_, v)| *v)
        .collect()
}
