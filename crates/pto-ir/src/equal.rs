//! Structural equality of programs up to the renaming of variables: two programs are equal
//! when they have the same functions, statements, operations, types and attributes, and
//! their variables correspond one to one (a definition on one side matches a definition on
//! the other, and every use then refers to the matching variable). Names are hints and are
//! not compared; attributes are compared as maps (their order is not significant, a list
//! value such as `dump_vars` is compared in order).
//!
//! The first difference is reported with its path (`P.kernel.body[2].value.args[0]`).

use std::collections::HashMap;

use crate::ir::{AttrValue, Attrs, Call, Expr, Function, Program, Stmt, StmtKind, Var};

/// Where two programs first differ.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("programs differ at {path}: {what}")]
pub struct Difference {
    /// The path of the first difference.
    pub path: String,
    /// What differs.
    pub what: String,
}

struct Eq {
    map: HashMap<u64, u64>,
}

type R = Result<(), Difference>;

fn diff(path: &str, what: String) -> R {
    Err(Difference {
        path: path.to_string(),
        what,
    })
}

impl Eq {
    fn def(&mut self, a: &Var, b: &Var, path: &str) -> R {
        if a.ty() != b.ty() {
            return diff(
                path,
                format!("types {} and {}", a.ty().describe(), b.ty().describe()),
            );
        }
        if let Some(prev) = self.map.insert(a.id(), b.id()) {
            if prev != b.id() {
                return diff(path, format!("{} is defined twice", a.name()));
            }
        }
        Ok(())
    }

    fn var(&mut self, a: &Var, b: &Var, path: &str) -> R {
        match self.map.get(&a.id()) {
            Some(&m) if m == b.id() => Ok(()),
            Some(_) => diff(
                path,
                format!("{} and {} are different values", a.name(), b.name()),
            ),
            // A variable defined outside (never happens in a whole program): compare identity.
            None if a.id() == b.id() => Ok(()),
            None => {
                // First sight of both (an attribute naming a value before its definition).
                self.def(a, b, path)
            }
        }
    }

    fn attrs(&mut self, a: &Attrs, b: &Attrs, path: &str) -> R {
        if a.len() != b.len() {
            return diff(
                path,
                format!("{} attributes and {} attributes", a.len(), b.len()),
            );
        }
        for (k, va) in a.iter() {
            let Some(vb) = b.get(k) else {
                return diff(path, format!("attribute '{k}' missing on one side"));
            };
            let p = format!("{path}['{k}']");
            match (va, vb) {
                (AttrValue::Var(x), AttrValue::Var(y)) => self.var(x, y, &p)?,
                (AttrValue::Vars(xs), AttrValue::Vars(ys)) => {
                    if xs.len() != ys.len() {
                        return diff(&p, format!("{} and {} entries", xs.len(), ys.len()));
                    }
                    for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
                        self.var(x, y, &format!("{p}[{i}]"))?;
                    }
                }
                (x, y) if x == y => {}
                (x, y) => return diff(&p, format!("{x:?} and {y:?}")),
            }
        }
        Ok(())
    }

    fn exprs(&mut self, a: &[Expr], b: &[Expr], path: &str) -> R {
        if a.len() != b.len() {
            return diff(path, format!("{} and {} items", a.len(), b.len()));
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.expr(x, y, &format!("{path}[{i}]"))?;
        }
        Ok(())
    }

    fn call(&mut self, a: &Call, b: &Call, path: &str) -> R {
        if a.callee != b.callee {
            return diff(path, format!("callees {:?} and {:?}", a.callee, b.callee));
        }
        if a.ty != b.ty {
            return diff(
                path,
                format!("result types {} and {}", a.ty.describe(), b.ty.describe()),
            );
        }
        self.exprs(&a.args, &b.args, &format!("{path}.args"))?;
        self.attrs(&a.kwargs, &b.kwargs, &format!("{path}.kwargs"))?;
        match (&a.submit, &b.submit) {
            (None, None) => {}
            (Some(x), Some(y)) => self.exprs(x, y, &format!("{path}.deps"))?,
            _ => return diff(path, "a submit and a plain call".to_string()),
        }
        self.attrs(&a.attrs, &b.attrs, &format!("{path}.attrs"))
    }

    fn expr(&mut self, a: &Expr, b: &Expr, path: &str) -> R {
        match (a, b) {
            (Expr::Var(x), Expr::Var(y)) => self.var(x, y, path),
            (Expr::Int { .. }, Expr::Int { .. })
            | (Expr::Float { .. }, Expr::Float { .. })
            | (Expr::Bool(_), Expr::Bool(_)) => {
                let same = match (a, b) {
                    (
                        Expr::Float {
                            value: x,
                            dtype: dx,
                        },
                        Expr::Float {
                            value: y,
                            dtype: dy,
                        },
                    ) => dx == dy && (x == y || (x.is_nan() && y.is_nan())),
                    _ => a == b,
                };
                if same {
                    Ok(())
                } else {
                    diff(path, format!("{a:?} and {b:?}"))
                }
            }
            (
                Expr::Binary {
                    op: oa,
                    lhs: la,
                    rhs: ra,
                    dtype: da,
                },
                Expr::Binary {
                    op: ob,
                    lhs: lb,
                    rhs: rb,
                    dtype: db,
                },
            ) => {
                if oa != ob || da != db {
                    return diff(path, format!("{oa:?}:{da:?} and {ob:?}:{db:?}"));
                }
                self.expr(la, lb, &format!("{path}.lhs"))?;
                self.expr(ra, rb, &format!("{path}.rhs"))
            }
            (
                Expr::Unary {
                    op: oa,
                    operand: xa,
                    dtype: da,
                },
                Expr::Unary {
                    op: ob,
                    operand: xb,
                    dtype: db,
                },
            ) => {
                if oa != ob || da != db {
                    return diff(path, format!("{oa:?} and {ob:?}"));
                }
                self.expr(xa, xb, &format!("{path}.operand"))
            }
            (Expr::List(x), Expr::List(y)) => self.exprs(x, y, path),
            (
                Expr::GetItem {
                    tuple: ta,
                    index: ia,
                },
                Expr::GetItem {
                    tuple: tb,
                    index: ib,
                },
            ) => {
                if ia != ib {
                    return diff(path, format!("items {ia} and {ib}"));
                }
                self.expr(ta, tb, &format!("{path}.tuple"))
            }
            (Expr::Call(x), Expr::Call(y)) => self.call(x, y, path),
            _ => diff(path, format!("{a:?} and {b:?}")),
        }
    }

    fn defs(&mut self, a: &[Var], b: &[Var], path: &str) -> R {
        if a.len() != b.len() {
            return diff(path, format!("{} and {} targets", a.len(), b.len()));
        }
        for (x, y) in a.iter().zip(b) {
            self.def(x, y, path)?;
        }
        Ok(())
    }

    fn body(&mut self, a: &[Stmt], b: &[Stmt], path: &str) -> R {
        if a.len() != b.len() {
            return diff(path, format!("{} and {} statements", a.len(), b.len()));
        }
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.stmt(x, y, &format!("{path}[{i}]"))?;
        }
        Ok(())
    }

    fn stmt(&mut self, a: &Stmt, b: &Stmt, path: &str) -> R {
        match (&a.kind, &b.kind) {
            (
                StmtKind::Assign {
                    targets: ta,
                    value: va,
                },
                StmtKind::Assign {
                    targets: tb,
                    value: vb,
                },
            ) => {
                self.expr(va, vb, &format!("{path}.value"))?;
                self.defs(ta, tb, &format!("{path}.targets"))
            }
            (StmtKind::Eval(x), StmtKind::Eval(y)) => self.expr(x, y, path),
            (StmtKind::Return(x), StmtKind::Return(y)) => self.exprs(x, y, path),
            (StmtKind::For(x), StmtKind::For(y)) => {
                self.expr(&x.start, &y.start, &format!("{path}.start"))?;
                self.expr(&x.stop, &y.stop, &format!("{path}.stop"))?;
                self.expr(&x.step, &y.step, &format!("{path}.step"))?;
                if x.iter_args.len() != y.iter_args.len() {
                    return diff(path, "different iter_args".to_string());
                }
                for ((va, ea), (vb, eb)) in x.iter_args.iter().zip(&y.iter_args) {
                    self.expr(ea, eb, &format!("{path}.init_values"))?;
                    self.def(va, vb, &format!("{path}.iter_args"))?;
                }
                self.def(&x.var, &y.var, &format!("{path}.var"))?;
                self.body(&x.body, &y.body, &format!("{path}.body"))?;
                self.exprs(&x.yields, &y.yields, &format!("{path}.yields"))?;
                self.defs(&x.results, &y.results, &format!("{path}.results"))
            }
            (StmtKind::If(x), StmtKind::If(y)) => {
                self.expr(&x.cond, &y.cond, &format!("{path}.cond"))?;
                self.body(&x.then_body, &y.then_body, &format!("{path}.then"))?;
                self.exprs(
                    &x.then_yields,
                    &y.then_yields,
                    &format!("{path}.then_yields"),
                )?;
                self.body(&x.else_body, &y.else_body, &format!("{path}.else"))?;
                self.exprs(
                    &x.else_yields,
                    &y.else_yields,
                    &format!("{path}.else_yields"),
                )?;
                self.defs(&x.results, &y.results, &format!("{path}.results"))
            }
            (StmtKind::Scope(x), StmtKind::Scope(y)) => {
                if x.kind != y.kind {
                    return diff(path, format!("scopes {:?} and {:?}", x.kind, y.kind));
                }
                self.exprs(&x.deps, &y.deps, &format!("{path}.deps"))?;
                self.attrs(&x.attrs, &y.attrs, &format!("{path}.attrs"))?;
                match (&x.task_id, &y.task_id) {
                    (None, None) => {}
                    (Some(p), Some(q)) => self.def(p, q, &format!("{path}.task_id"))?,
                    _ => return diff(path, "a task id on one side only".to_string()),
                }
                self.body(&x.body, &y.body, &format!("{path}.body"))
            }
            _ => diff(path, "different statement kinds".to_string()),
        }
    }

    fn function(&mut self, a: &Function, b: &Function, path: &str) -> R {
        if a.name != b.name || a.ftype != b.ftype {
            return diff(
                path,
                format!(
                    "{} ({}) and {} ({})",
                    a.name,
                    a.ftype.name(),
                    b.name,
                    b.ftype.name()
                ),
            );
        }
        if a.params.len() != b.params.len() {
            return diff(path, "different parameter counts".to_string());
        }
        for (i, (p, q)) in a.params.iter().zip(&b.params).enumerate() {
            if p.direction != q.direction {
                return diff(
                    &format!("{path}.params[{i}]"),
                    "directions differ".to_string(),
                );
            }
            self.def(&p.var, &q.var, &format!("{path}.params[{i}]"))?;
        }
        if a.return_types != b.return_types {
            return diff(path, "return types differ".to_string());
        }
        self.attrs(&a.attrs, &b.attrs, &format!("{path}.attrs"))?;
        self.body(&a.body, &b.body, &format!("{path}.body"))
    }
}

/// `Ok(())` when `a` and `b` are equal up to variable renaming, else the first difference.
pub fn structurally_equal(a: &Program, b: &Program) -> Result<(), Difference> {
    if a.name != b.name {
        return diff("", format!("program names {} and {}", a.name, b.name));
    }
    if a.functions.len() != b.functions.len() {
        return diff(
            &a.name,
            format!("{} and {} functions", a.functions.len(), b.functions.len()),
        );
    }
    for (fa, fb) in a.functions.iter().zip(&b.functions) {
        let mut eq = Eq {
            map: HashMap::new(),
        };
        eq.function(fa, fb, &format!("{}.{}", a.name, fa.name))?;
    }
    Ok(())
}
