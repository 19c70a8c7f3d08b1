//! A small builder of IR programs for the tests (the Python front end builds them in real
//! use), and helpers to find statements.

#![allow(dead_code)] // each test file uses a different subset

use pto_ir::ir::{Attrs, Callee, ScopeStmt, ATTR_DUMP_VARS};
use pto_ir::{
    AttrValue, Call, Expr, Function, FunctionType, Level, MemorySpace, Param, ParamDirection,
    Program, ScopeKind, Span, Stmt, StmtKind, Type, Var,
};

pub fn span(line: u32) -> Span {
    Span::new("test.py", line, 5)
}

pub fn t2(r: i64, c: i64) -> Type {
    Type::tensor(vec![r, c], pto_ir::DataType::Fp32)
}

pub fn tile(r: i64, c: i64) -> Type {
    Type::tile(r, c, pto_ir::DataType::Fp32, MemorySpace::Vec)
}

pub fn v(e: &Var) -> Expr {
    Expr::Var(e.clone())
}

pub fn list(items: &[i64]) -> Expr {
    Expr::List(items.iter().map(|&i| Expr::index(i)).collect())
}

pub fn op(name: &str, args: Vec<Expr>, kwargs: Attrs) -> Expr {
    let ty = pto_ir::ops::deduce(name, &args, &kwargs).unwrap_or_else(|e| panic!("{name}: {e}"));
    Expr::Call(Box::new(Call {
        callee: Callee::Op(name.to_string()),
        args,
        kwargs,
        attrs: Attrs::new(),
        ty,
        span: span(1),
        submit: None,
    }))
}

pub fn shapes(s: &[i64]) -> Attrs {
    let mut a = Attrs::new();
    a.set("shapes", AttrValue::Ints(s.to_vec()));
    a
}

pub fn call(name: &str, args: Vec<Expr>, ty: Type, dumps: &[&Var]) -> Expr {
    let mut attrs = Attrs::new();
    if !dumps.is_empty() {
        attrs.set(
            ATTR_DUMP_VARS,
            AttrValue::Vars(dumps.iter().map(|d| (*d).clone()).collect()),
        );
    }
    Expr::Call(Box::new(Call {
        callee: Callee::Function(name.to_string()),
        args,
        kwargs: Attrs::new(),
        attrs,
        ty,
        span: span(2),
        submit: None,
    }))
}

pub fn assign(t: &Var, value: Expr) -> Stmt {
    Stmt::new(
        StmtKind::Assign {
            targets: vec![t.clone()],
            value,
        },
        span(3),
    )
}

pub fn eval(value: Expr) -> Stmt {
    Stmt::new(StmtKind::Eval(value), span(3))
}

pub fn ret(vals: &[&Var]) -> Stmt {
    Stmt::new(
        StmtKind::Return(vals.iter().map(|x| v(x)).collect()),
        span(9),
    )
}

pub fn at_scope(body: Vec<Stmt>, dumps: &[&Var]) -> Stmt {
    let mut attrs = Attrs::new();
    if !dumps.is_empty() {
        attrs.set(
            ATTR_DUMP_VARS,
            AttrValue::Vars(dumps.iter().map(|d| (*d).clone()).collect()),
        );
    }
    Stmt::new(
        StmtKind::Scope(Box::new(ScopeStmt {
            kind: ScopeKind::At(Level::CoreGroup),
            attrs,
            body,
            task_id: None,
            deps: Vec::new(),
        })),
        span(4),
    )
}

pub fn func(
    name: &str,
    ftype: FunctionType,
    params: &[(&Var, ParamDirection)],
    rets: Vec<Type>,
    body: Vec<Stmt>,
) -> Function {
    Function {
        name: name.to_string(),
        ftype,
        params: params
            .iter()
            .map(|(var, direction)| Param {
                var: (*var).clone(),
                direction: *direction,
            })
            .collect(),
        return_types: rets,
        body,
        span: span(1),
        attrs: Attrs::new(),
    }
}

/// A kernel `name(src, dst: Out) -> dst` that copies a `[r, c]` tensor (`add` adds 1).
pub fn copy_kernel(name: &str, r: i64, c: i64, add: bool) -> Function {
    let src = Var::new("src", t2(r, c));
    let dst = Var::new("dst", t2(r, c));
    let t = Var::new("t", tile(r, c));
    let u = Var::new("u", tile(r, c));
    let o = Var::new("o", t2(r, c));
    let mut body = vec![assign(
        &t,
        op("tile.load", vec![v(&src), list(&[0, 0])], shapes(&[r, c])),
    )];
    let stored = if add {
        body.push(assign(
            &u,
            op(
                "tile.adds",
                vec![
                    v(&t),
                    Expr::Float {
                        value: 1.0,
                        dtype: pto_ir::DataType::Fp32,
                    },
                ],
                Attrs::new(),
            ),
        ));
        &u
    } else {
        &t
    };
    body.push(assign(
        &o,
        op(
            "tile.store",
            vec![v(stored), list(&[0, 0]), v(&dst)],
            Attrs::new(),
        ),
    ));
    body.push(ret(&[&o]));
    func(
        name,
        FunctionType::Aiv,
        &[(&src, ParamDirection::In), (&dst, ParamDirection::Out)],
        vec![t2(r, c)],
        body,
    )
}

/// Every call of a program function in `body` (nested bodies included).
pub fn fn_calls(body: &[Stmt]) -> Vec<Call> {
    let mut out = Vec::new();
    pto_ir::ir::walk_stmts(body, &mut |s| {
        pto_ir::ir::stmt_exprs(s, &mut |e| {
            e.for_each_call(&mut |c| {
                if c.function_name().is_some() {
                    out.push(c.clone());
                }
            })
        })
    });
    out
}

/// Every `pl.at` scope in `body`.
pub fn scopes(body: &[Stmt]) -> Vec<ScopeStmt> {
    let mut out = Vec::new();
    pto_ir::ir::walk_stmts(body, &mut |s| {
        if let StmtKind::Scope(sc) = &s.kind {
            out.push((**sc).clone());
        }
    });
    out
}

pub fn names(vars: &[Var]) -> Vec<String> {
    vars.iter().map(|x| x.name().to_string()).collect()
}

pub fn program(fs: Vec<Function>) -> Program {
    Program {
        name: "P".to_string(),
        functions: fs,
    }
}
