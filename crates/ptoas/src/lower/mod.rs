//! Lowering: the IR of a module into C++ functions over the PTO-ISA header, in ptoas's new
//! output form.
//!
//! Per function: arguments become `v1..vk`, every value the C++ needs gets the next `vN`
//! with a `// pto: %name` comment before its declaration; constants become
//! `const int64_t vN = 256;`; views are compile-time records until a `partition_view`
//! turns them into `pto::Shape<...>` + `pto::Stride<...>` + `GlobalTensor<...>(ptr +
//! offset, shape, stride)` (5-D, right-aligned, `-1` and constructor arguments when
//! dynamic); `alloc_tile` becomes a `Tile<...>` declaration (constructor arguments for `?`
//! valid dims) and `TASSIGN`; `scf` becomes `for` / `if` / `while` with loop-carried values
//! as mutable locals. A kernel's body sits inside `#if defined(__DAV_VEC__)` (vector, which
//! starts with `set_mask_norm(); set_vector_mask(-1, -1);`) or `#if defined(__DAV_CUBE__)`
//! and ends with `ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll); return;`. The
//! destination-passing tile ops are table-driven (`ops`). Constants the C++ never reads
//! (most index constants fold into template arguments) are dropped at the end (`unused`).

mod ops;
mod unused;

pub use ops::{cpp_instruction, is_query_op, lowers_tile_op, HEADER_LACKS, QUERY_OPS};

use std::collections::{HashMap, HashSet};

use crate::analysis::Consts;
use crate::cpp::{Function, Stmt, Unit};
use crate::error::{Diag, DiagResult, ErrorKind};
use crate::ir::{
    find_attr, Attr, BinOp, Block, CastOp, Func, KernelKind, Literal, Module, Op, OpKind, ValueId,
    Visibility,
};
use crate::layout;
use crate::plan::{self, Plan};
use crate::printer::float_text;
use crate::source::Span;
use crate::types::{Arch, Dim, Layout, ScalarType, Type};
use crate::Options;

/// Lowers `module` for `arch`.
pub fn lower(module: &Module, arch: Arch, options: &Options) -> DiagResult<Unit> {
    let plan = plan::plan(module, arch, options.level)?;
    let order = call_order(module)?;
    let module_kind = match find_attr(&module.attrs, "pto.kernel_kind").and_then(|a| a.pto_value())
    {
        Some("vector") => Some(KernelKind::Vector),
        Some("cube") => Some(KernelKind::Cube),
        _ => None,
    };
    let mut unit = Unit::default();
    for fi in order {
        let f = &module.funcs[fi];
        let consts = Consts::of(f);
        let layouts = layout::infer(f, &consts, options.infer_layout);
        let mut cx = FnLower {
            f,
            fi,
            consts,
            layouts,
            plan: &plan,
            names: HashMap::new(),
            next: 1,
            views: HashMap::new(),
            view_roots: HashMap::new(),
            pipes: HashMap::new(),
            constants: HashSet::new(),
        };
        unit.functions
            .push(cx.function(f.kernel_kind().or(module_kind))?);
    }
    Ok(unit)
}

/// Function indices, callees before callers (source order otherwise).
fn call_order(module: &Module) -> DiagResult<Vec<usize>> {
    let index: HashMap<&str, usize> = module
        .funcs
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut state = vec![0u8; module.funcs.len()]; // 0 new, 1 visiting, 2 done
    let mut order = Vec::new();
    fn visit(
        i: usize,
        module: &Module,
        index: &HashMap<&str, usize>,
        state: &mut [u8],
        order: &mut Vec<usize>,
        depth: u32,
    ) -> DiagResult<()> {
        if state[i] == 2 {
            return Ok(());
        }
        let f = &module.funcs[i];
        if state[i] == 1 || depth > 256 {
            return Err(Diag::at(
                ErrorKind::Unsupported,
                f.span,
                format!(
                    "recursive calls (through '@{}') are not supported in the generated C++",
                    f.name
                ),
            ));
        }
        state[i] = 1;
        let mut callees = Vec::new();
        if let Some(b) = &f.body {
            crate::ir::walk(b, &mut |op| {
                if let OpKind::Call { callee, .. } = &op.kind {
                    callees.push(callee.clone());
                }
            });
        }
        for c in callees {
            if let Some(&j) = index.get(c.as_str()) {
                visit(j, module, index, state, order, depth + 1)?;
            }
        }
        state[i] = 2;
        order.push(i);
        Ok(())
    }
    for i in 0..module.funcs.len() {
        visit(i, module, &index, &mut state, &mut order, 0)?;
    }
    Ok(order)
}

/// A static or run-time extent / stride: a value or a C++ expression.
#[derive(Clone, Debug, PartialEq)]
enum DimE {
    S(i64),
    D(String),
}

impl DimE {
    fn text(&self) -> String {
        match self {
            DimE::S(v) => v.to_string(),
            DimE::D(e) => e.clone(),
        }
    }
    fn template(&self) -> String {
        match self {
            DimE::S(v) => v.to_string(),
            DimE::D(_) => "-1".into(),
        }
    }
    fn mul(&self, o: &DimE) -> DimE {
        match (self, o) {
            (DimE::S(a), DimE::S(b)) => match a.checked_mul(*b) {
                Some(p) => DimE::S(p),
                None => DimE::D(format!("({a} * {b})")),
            },
            (DimE::S(1), x) | (x, DimE::S(1)) => x.clone(),
            (a, b) => DimE::D(format!("{} * {}", a.text(), b.text())),
        }
    }
}

/// A GM view known at translation time.
#[derive(Clone, Debug)]
struct View {
    base: String,
    elem: ScalarType,
    shape: Vec<DimE>,
    strides: Vec<DimE>,
    /// Element offset terms from the base.
    offset: Vec<String>,
    layout: Layout,
    /// The materialized GlobalTensor variable and its C++ type (partition views).
    gt: Option<(String, String)>,
}

/// A pipe handle of a function.
#[derive(Clone, Debug)]
struct Pipe {
    var: String,
    ty: String,
}

pub(crate) struct FnLower<'a> {
    f: &'a Func,
    fi: usize,
    consts: Consts,
    layouts: HashMap<ValueId, Layout>,
    plan: &'a Plan,
    names: HashMap<ValueId, String>,
    next: u32,
    views: HashMap<ValueId, View>,
    /// For a view carried through `scf.if` / `scf.for`: the view value it stands for.
    view_roots: HashMap<ValueId, ValueId>,
    pipes: HashMap<i64, Pipe>,
    /// The C++ variables of `arith.constant`s (candidates for [`unused`]).
    constants: HashSet<String>,
}

fn unsupported(span: Span, msg: impl Into<String>) -> Diag {
    Diag::at(ErrorKind::Unsupported, span, msg)
}

fn invalid(span: Span, msg: impl Into<String>) -> Diag {
    Diag::at(ErrorKind::Invalid, span, msg)
}

/// The C++ literal of an integer constant of type `ty`.
fn int_literal(v: i64, ty: ScalarType) -> String {
    match ty {
        ScalarType::I1 => if v != 0 { "true" } else { "false" }.into(),
        ScalarType::U64 => format!("{}ULL", v as u64),
        ScalarType::U32 => format!("{}u", v as u32),
        _ if v == i64::MIN => "(-9223372036854775807LL - 1)".into(),
        _ if v > i64::from(i32::MAX) || v < i64::from(i32::MIN) => format!("{v}LL"),
        _ => v.to_string(),
    }
}

/// The C++ literal of a float constant of type `ty`.
fn float_literal(v: f64, ty: ScalarType) -> String {
    let body = if v.is_nan() {
        "std::numeric_limits<float>::quiet_NaN()".to_string()
    } else if v.is_infinite() {
        if v > 0.0 {
            "std::numeric_limits<float>::infinity()".into()
        } else {
            "-std::numeric_limits<float>::infinity()".into()
        }
    } else if ty == ScalarType::F64 {
        float_text(v)
    } else {
        format!("{}f", float_text(f64::from(v as f32)))
    };
    match ty {
        ScalarType::F32 => body,
        ScalarType::F64 => {
            if v.is_finite() {
                body
            } else {
                format!("(double){body}")
            }
        }
        other => format!("({}) {body}", other.cpp()),
    }
}

impl<'a> FnLower<'a> {
    fn fresh(&mut self) -> String {
        let n = format!("v{}", self.next);
        self.next += 1;
        n
    }

    fn comment(&self, vs: &[ValueId]) -> Stmt {
        let names: Vec<String> = vs
            .iter()
            .map(|v| format!("%{}", self.f.name_of(*v)))
            .collect();
        Stmt::Comment(format!("pto: {}", names.join(", ")))
    }

    /// The C++ expression of value `v`.
    fn expr(&self, v: ValueId, span: Span) -> DiagResult<String> {
        match self.names.get(&v) {
            Some(n) => Ok(n.clone()),
            None => Err(unsupported(
                span,
                format!(
                    "value %{} of type {} has no C++ form here",
                    self.f.name_of(v),
                    self.f.ty(v)
                ),
            )),
        }
    }

    fn scalar_of(&self, v: ValueId, span: Span) -> DiagResult<ScalarType> {
        self.f.ty(v).scalar().ok_or_else(|| {
            invalid(
                span,
                format!(
                    "%{} must be a scalar, got {}",
                    self.f.name_of(v),
                    self.f.ty(v)
                ),
            )
        })
    }

    /// Declares `v` as a new C++ variable `ty name = init;` (with its comment).
    fn declare(&mut self, out: &mut Vec<Stmt>, v: ValueId, ty: &str, init: String, konst: bool) {
        let name = self.fresh();
        out.push(self.comment(&[v]));
        out.push(Stmt::Line(format!(
            "{}{ty} {name} = {init};",
            if konst { "const " } else { "" }
        )));
        self.names.insert(v, name);
    }

    fn cpp_type(&self, v: ValueId, span: Span) -> DiagResult<String> {
        self.f.ty(v).cpp().ok_or_else(|| {
            unsupported(
                span,
                format!(
                    "values of type {} cannot be carried in C++ variables",
                    self.f.ty(v)
                ),
            )
        })
    }

    fn function(&mut self, kind: Option<KernelKind>) -> DiagResult<Function> {
        let f = self.f;
        let mut params = Vec::new();
        for a in &f.args {
            let name = self.fresh();
            let ty = f.ty(*a);
            let Some(cty) = ty.cpp() else {
                return Err(unsupported(
                    f.span,
                    format!(
                        "argument %{} of '@{}' has type {ty}, which a kernel cannot take (pass a !pto.ptr)",
                        f.name_of(*a),
                        f.name
                    ),
                ));
            };
            params.push(format!("{cty} {name}"));
            self.names.insert(*a, name);
        }
        let ret = match f.results.as_slice() {
            [] => "void".to_string(),
            [t] => t.cpp().ok_or_else(|| {
                unsupported(
                    f.span,
                    format!("'@{}' returns {t}, which has no C++ form", f.name),
                )
            })?,
            _ => {
                return Err(unsupported(
                    f.span,
                    format!(
                        "'@{}' returns several values; the generated C++ supports one",
                        f.name
                    ),
                ))
            }
        };
        let head = match (f.visibility, ret.as_str()) {
            (Visibility::Public, _) => format!("__global__ AICORE {ret}"),
            (Visibility::Private, "void") => "static AICORE inline void".to_string(),
            (Visibility::Private, _) => format!("static AICORE {ret}"),
        };
        let signature = format!("{head} {}({})", f.name, params.join(", "));
        let Some(body) = &f.body else {
            return Ok(Function {
                signature: format!("{signature};"),
                body: Vec::new(),
            });
        };
        // The terminator stays outside the core guard.
        let (ops, ret_op) = match body.ops.split_last() {
            Some((last, rest)) if matches!(last.kind, OpKind::Return(_)) => (rest, Some(last)),
            _ => (&body.ops[..], None),
        };
        let mut inner = Vec::new();
        if kind == Some(KernelKind::Vector) {
            inner.push(Stmt::Line("set_mask_norm();".into()));
            inner.push(Stmt::Line("set_vector_mask(-1, -1);".into()));
        }
        for op in ops {
            self.op(op, &mut inner)?;
        }
        let mut out = Vec::new();
        match kind {
            Some(k) => {
                let m = match k {
                    KernelKind::Vector => "__DAV_VEC__",
                    KernelKind::Cube => "__DAV_CUBE__",
                };
                out.push(Stmt::Pre(format!("#if defined({m})")));
                out.extend(inner);
                out.push(Stmt::Pre(format!("#endif // {m}")));
            }
            None => out.extend(inner),
        }
        let vals = match ret_op.map(|o| &o.kind) {
            Some(OpKind::Return(v)) => v.clone(),
            _ => Vec::new(),
        };
        if vals.len() != f.results.len() {
            return Err(invalid(
                ret_op.map(|o| o.span).unwrap_or(f.span),
                format!("'@{}' must return {} value(s)", f.name, f.results.len()),
            ));
        }
        if kind.is_some() && !vals.is_empty() {
            return Err(unsupported(
                f.span,
                format!(
                    "'@{}' has a kernel_kind and returns a value; kernels return nothing",
                    f.name
                ),
            ));
        }
        if f.visibility == Visibility::Public {
            out.push(Stmt::Line(String::new()));
            out.push(Stmt::Line(
                "ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);".into(),
            ));
        }
        match vals.first() {
            Some(v) => {
                let span = ret_op.map(|o| o.span).unwrap_or(f.span);
                let e = self.expr(*v, span)?;
                out.push(Stmt::Line(format!("return {e};")));
            }
            None => out.push(Stmt::Line("return;".into())),
        }
        unused::drop_unused_constants(&mut out, &self.constants);
        Ok(Function {
            signature,
            body: out,
        })
    }

    fn block(&mut self, b: &Block, out: &mut Vec<Stmt>) -> DiagResult<()> {
        for op in &b.ops {
            self.op(op, out)?;
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

    fn op(&mut self, op: &Op, out: &mut Vec<Stmt>) -> DiagResult<()> {
        let span = op.span;
        let f = self.f;
        let r0 = op.results.first().copied();
        match &op.kind {
            OpKind::Constant { value, ty } => {
                let lit = match value {
                    Literal::Int(v) => int_literal(*v, *ty),
                    Literal::Float(v) => float_literal(*v, *ty),
                };
                if let Some(r) = r0 {
                    self.declare(out, r, ty.cpp(), lit, true);
                    if let Some(name) = self.names.get(&r) {
                        self.constants.insert(name.clone());
                    }
                }
            }
            OpKind::Binary { op: bop, lhs, rhs } => {
                let a = self.expr(*lhs, span)?;
                let b = self.expr(*rhs, span)?;
                let ty = self.scalar_of(*lhs, span)?;
                let e = binary_expr(*bop, ty, &a, &b);
                if let Some(r) = r0 {
                    let rt = self.scalar_of(r, span)?;
                    self.declare(out, r, rt.cpp(), e, false);
                }
            }
            OpKind::NegF { operand } => {
                let a = self.expr(*operand, span)?;
                if let Some(r) = r0 {
                    let rt = self.scalar_of(r, span)?;
                    let e = if matches!(rt, ScalarType::F16 | ScalarType::BF16) {
                        format!("({}) (-(float) {a})", rt.cpp())
                    } else {
                        format!("-{a}")
                    };
                    self.declare(out, r, rt.cpp(), e, false);
                }
            }
            OpKind::Cmp {
                float,
                pred,
                lhs,
                rhs,
            } => {
                let a = self.expr(*lhs, span)?;
                let b = self.expr(*rhs, span)?;
                let ty = self.scalar_of(*lhs, span)?;
                let e = if *float {
                    cmpf_expr(pred, &a, &b)
                } else {
                    cmpi_expr(pred, ty, &a, &b)
                };
                if let Some(r) = r0 {
                    self.declare(out, r, "bool", e, false);
                }
            }
            OpKind::Cast { op: cop, operand } => {
                let a = self.expr(*operand, span)?;
                let src = self.scalar_of(*operand, span)?;
                if let Some(r) = r0 {
                    let dst = self.scalar_of(r, span)?;
                    match cop {
                        CastOp::Bitcast => {
                            if src.bytes() != dst.bytes() {
                                return Err(invalid(
                                    span,
                                    "arith.bitcast between types of different sizes",
                                ));
                            }
                            let name = self.fresh();
                            out.push(self.comment(&[r]));
                            out.push(Stmt::Line(format!("{} {name};", dst.cpp())));
                            out.push(Stmt::Line(format!(
                                "std::memcpy(&{name}, &{a}, sizeof({name}));"
                            )));
                            self.names.insert(r, name);
                        }
                        _ => {
                            let e = cast_expr(*cop, src, dst, &a);
                            self.declare(out, r, dst.cpp(), e, false);
                        }
                    }
                }
            }
            OpKind::Select {
                cond,
                on_true,
                on_false,
            } => {
                let c = self.expr(*cond, span)?;
                let a = self.expr(*on_true, span)?;
                let b = self.expr(*on_false, span)?;
                if let Some(r) = r0 {
                    let ty = self.cpp_type(r, span)?;
                    self.declare(out, r, &ty, format!("{c} ? {a} : {b}"), false);
                }
            }
            OpKind::Math { func, operand } => {
                let a = self.expr(*operand, span)?;
                let ty = self.scalar_of(*operand, span)?;
                let e = math_expr(func, ty, &a).ok_or_else(|| {
                    unsupported(
                        span,
                        format!("'math.{func}' on {} is not supported", ty.name()),
                    )
                })?;
                if let Some(r) = r0 {
                    self.declare(out, r, ty.cpp(), e, false);
                }
            }
            OpKind::For {
                lb,
                ub,
                step,
                iv,
                iter_args,
                body,
            } => {
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
                let ivt = self.scalar_of(*iv, span)?;
                let l = self.expr(*lb, span)?;
                let u = self.expr(*ub, span)?;
                let s = self.expr(*step, span)?;
                let ivn = self.fresh();
                self.names.insert(*iv, ivn.clone());
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
            }
            OpKind::If {
                cond,
                then_block,
                else_block,
            } => {
                let c = self.expr(*cond, span)?;
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
            }
            OpKind::While {
                inits,
                before,
                after,
            } => {
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
            }
            OpKind::Yield(_) | OpKind::Condition { .. } => {
                return Err(invalid(
                    span,
                    format!("'{}' outside its region's end", op.name()),
                ))
            }
            OpKind::Return(_) => {
                return Err(invalid(span, "'return' must be the last op of a function"))
            }
            OpKind::Call { callee, args } => {
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
            }
            OpKind::MakeTensorView {
                ptr,
                shape,
                strides,
                ..
            } => {
                let Some(r) = r0 else { return Ok(()) };
                let base = self.expr(*ptr, span)?;
                let (type_shape, elem) = match f.ty(r) {
                    Type::TensorView { shape, elem, .. } => (shape.clone(), *elem),
                    other => {
                        return Err(invalid(span, format!("make_tensor_view produces {other}")))
                    }
                };
                let mut dims = Vec::new();
                for (i, v) in shape.iter().enumerate() {
                    dims.push(self.dim_of(*v, type_shape.get(i).copied(), span)?);
                }
                let mut st = Vec::new();
                for v in strides {
                    st.push(self.dim_of(*v, None, span)?);
                }
                self.views.insert(
                    r,
                    View {
                        base,
                        elem,
                        shape: dims,
                        strides: st,
                        offset: Vec::new(),
                        layout: self.layouts.get(&r).copied().unwrap_or(Layout::Nd),
                        gt: None,
                    },
                );
            }
            OpKind::PartitionView {
                source,
                offsets,
                sizes,
            } => {
                let Some(r) = r0 else { return Ok(()) };
                let mut view = self.view_of(*source, span)?;
                let type_shape = match f.ty(r) {
                    Type::PartitionView { shape, .. } => shape.clone(),
                    _ => Vec::new(),
                };
                for (i, o) in offsets.iter().enumerate() {
                    let stride = view.strides.get(i).cloned().unwrap_or(DimE::S(1));
                    match (self.consts.get(*o), &stride) {
                        (Some(0), _) | (_, DimE::S(0)) => {}
                        (Some(k), DimE::S(s)) => view.offset.push(match k.checked_mul(*s) {
                            Some(p) => p.to_string(),
                            None => format!("{k} * {s}"),
                        }),
                        _ => {
                            let oe = self.expr(*o, span)?;
                            view.offset.push(match &stride {
                                DimE::S(1) => oe,
                                s => format!("{oe} * {}", s.text()),
                            });
                        }
                    }
                }
                let mut dims = Vec::new();
                for (i, v) in sizes.iter().enumerate() {
                    dims.push(self.dim_of(*v, type_shape.get(i).copied(), span)?);
                }
                view.shape = dims;
                view.layout = self.layouts.get(&r).copied().unwrap_or(view.layout);
                view.gt = None;
                let gt = self.global_tensor(&view, &[r], out);
                view.gt = Some(gt);
                self.views.insert(r, view);
            }
            OpKind::ViewQuery { stride, view, dim } => {
                let Some(r) = r0 else { return Ok(()) };
                let v = self.view_of(*view, span)?;
                let Some(d) = self.consts.get(*dim) else {
                    return Err(unsupported(
                        span,
                        "the dimension of a view query must be a constant",
                    ));
                };
                let list = if *stride { &v.strides } else { &v.shape };
                let Some(e) = usize::try_from(d).ok().and_then(|d| list.get(d)) else {
                    return Err(invalid(span, format!("dimension {d} is out of range")));
                };
                self.declare(out, r, "int64_t", e.text(), false);
            }
            OpKind::AllocTile {
                addr,
                valid_row,
                valid_col,
            } => {
                let Some(r) = r0 else { return Ok(()) };
                let address = match addr {
                    Some(a) => format!("(uint64_t) {}", self.expr(*a, span)?),
                    None => match self.plan.tiles.get(&(self.fi, r)) {
                        Some(a) => a.to_string(),
                        None => return Err(invalid(span, "tile has no planned address")),
                    },
                };
                self.tile_decl(r, *valid_row, *valid_col, span, out)?;
                let tile = self.expr(r, span)?;
                let av = self.fresh();
                out.push(self.comment(&[r]));
                out.push(Stmt::Line(format!("uint64_t {av} = {address};")));
                out.push(Stmt::Line(format!("TASSIGN({tile}, {av});")));
            }
            OpKind::SubView {
                source,
                offsets,
                sizes,
                valid,
            } => {
                let Some(r) = r0 else { return Ok(()) };
                let (Some(st), Some(rt)) = (f.ty(*source).tile().cloned(), f.ty(r).tile().cloned())
                else {
                    return Err(invalid(span, "pto.subview works on tiles"));
                };
                if offsets.len() != 2 || sizes.len() != 2 {
                    return Err(invalid(span, "pto.subview needs two offsets and two sizes"));
                }
                if sizes[0] > st.rows || sizes[1] > st.cols || sizes[0] <= 0 || sizes[1] <= 0 {
                    return Err(invalid(
                        span,
                        "pto.subview sizes must lie inside the source tile",
                    ));
                }
                // The view keeps the parent's physical shape (its pitch); its valid shape is
                // the window.
                let mut vt = rt.clone();
                vt.rows = st.rows;
                vt.cols = st.cols;
                vt.blayout = st.blayout;
                vt.slayout = st.slayout;
                vt.fractal = st.fractal;
                let name = self.fresh();
                let ty = vt.cpp();
                out.push(self.comment(&[r]));
                let ctor = match (vt.v_row, vt.v_col, valid) {
                    (Dim::Dynamic, Dim::Dynamic, Some((vr, vc))) => {
                        format!(
                            " = {ty}({}, {})",
                            self.expr(*vr, span)?,
                            self.expr(*vc, span)?
                        )
                    }
                    (Dim::Dynamic, Dim::Dynamic, None) => {
                        format!(" = {ty}({}, {})", sizes[0], sizes[1])
                    }
                    (Dim::Dynamic, _, v) => format!(
                        " = {ty}({})",
                        match v {
                            Some((vr, _)) => self.expr(*vr, span)?,
                            None => sizes[0].to_string(),
                        }
                    ),
                    (_, Dim::Dynamic, v) => format!(
                        " = {ty}({})",
                        match v {
                            Some((_, vc)) => self.expr(*vc, span)?,
                            None => sizes[1].to_string(),
                        }
                    ),
                    _ => String::new(),
                };
                out.push(Stmt::Line(format!("{ty} {name}{ctor};")));
                let src = self.expr(*source, span)?;
                let i = self.offset_expr(offsets[0], span)?;
                let j = self.offset_expr(offsets[1], span)?;
                let off = match st.blayout {
                    crate::types::BLayout::RowMajor => format!("{i} * {} + {j}", st.cols),
                    crate::types::BLayout::ColMajor => format!("{j} * {} + {i}", st.rows),
                };
                out.push(Stmt::Line(format!(
                    "TASSIGN({name}, {src}.data() + ({off}));"
                )));
                self.names.insert(r, name);
            }
            OpKind::Reinterpret { bitcast, source } => {
                let Some(r) = r0 else { return Ok(()) };
                let (Some(st), Some(rt)) = (f.ty(*source).tile(), f.ty(r).tile()) else {
                    return Err(invalid(span, format!("'{}' works on tiles", op.name())));
                };
                if st.loc != rt.loc {
                    return Err(invalid(
                        span,
                        format!("'{}' cannot change the tile's memory", op.name()),
                    ));
                }
                let src = self.expr(*source, span)?;
                let name = self.fresh();
                let ty = rt.cpp();
                out.push(self.comment(&[r]));
                out.push(Stmt::Line(format!("{ty} {name};")));
                if *bitcast || st.dtype != rt.dtype {
                    out.push(Stmt::Line(format!(
                        "TASSIGN({name}, reinterpret_cast<uint64_t>({src}.data()));"
                    )));
                } else {
                    out.push(Stmt::Line(format!("TRESHAPE({name}, {src});")));
                }
                self.names.insert(r, name);
            }
            OpKind::TAssign { tile, addr } => {
                let t = self.expr(*tile, span)?;
                let a = self.expr(*addr, span)?;
                out.push(Stmt::Line(format!("TASSIGN({t}, (uint64_t) {a});")));
                if let Some(r) = r0 {
                    self.names.insert(r, t);
                }
            }
            OpKind::SetValidShape { tile, rows, cols } => {
                let t = self.expr(*tile, span)?;
                let Some(tt) = f.ty(*tile).tile() else {
                    return Err(invalid(span, "pto.set_validshape works on tiles"));
                };
                if tt.v_row != Dim::Dynamic || tt.v_col != Dim::Dynamic {
                    return Err(invalid(
                        span,
                        "pto.set_validshape needs a tile with dynamic valid rows and columns (v_row=?, v_col=?)",
                    ));
                }
                let r = self.expr(*rows, span)?;
                let c = self.expr(*cols, span)?;
                out.push(Stmt::Line(format!("{t}.SetValidShape({r}, {c});")));
            }
            OpKind::AddPtr { ptr, offset } => {
                let Some(r) = r0 else { return Ok(()) };
                let p = self.expr(*ptr, span)?;
                let o = self.expr(*offset, span)?;
                let ty = self.cpp_type(r, span)?;
                self.declare(out, r, &ty, format!("{p} + {o}"), false);
            }
            OpKind::LoadScalar { ptr, offset } => {
                let Some(r) = r0 else { return Ok(()) };
                let p = self.expr(*ptr, span)?;
                let o = self.expr(*offset, span)?;
                let ty = self.cpp_type(r, span)?;
                self.declare(out, r, &ty, format!("{p}[{o}]"), false);
            }
            OpKind::StoreScalar { value, ptr, offset } => {
                let v = self.expr(*value, span)?;
                let p = self.expr(*ptr, span)?;
                let o = self.expr(*offset, span)?;
                out.push(Stmt::Line(format!("{p}[{o}] = {v};")));
            }
            OpKind::Tile {
                name,
                ins,
                outs,
                attrs,
                ..
            } => {
                self.tile_op(op, name, ins, outs, attrs, out)?;
            }
            OpKind::ReserveBuffer { name, .. } => {
                let Some(r) = r0 else { return Ok(()) };
                let key = (f.name.clone(), name.clone());
                let Some(addr) = self.plan.reserved.get(&key) else {
                    return Err(invalid(
                        span,
                        format!("reserved buffer \"{name}\" was not placed"),
                    ));
                };
                let ty = self.cpp_type(r, span)?;
                self.declare(out, r, &ty, addr.to_string(), true);
            }
            OpKind::ImportReservedBuffer { name, peer_func } => {
                let Some(r) = r0 else { return Ok(()) };
                let key = (peer_func.clone(), name.clone());
                let Some(addr) = self.plan.reserved.get(&key) else {
                    return Err(invalid(
                        span,
                        format!("'@{peer_func}' reserves no buffer named \"{name}\""),
                    ));
                };
                let ty = self.cpp_type(r, span)?;
                self.declare(out, r, &ty, addr.to_string(), true);
            }
            OpKind::InitializePipe {
                attrs,
                gm_slot_buffer,
                c2v_consumer_buf,
                v2c_consumer_buf,
                ..
            } => self.init_pipe(
                op,
                attrs,
                *gm_slot_buffer,
                *c2v_consumer_buf,
                *v2c_consumer_buf,
                out,
            )?,
            OpKind::TPush { tile, attrs, .. } => {
                let (pipe, split) = self.pipe_for(op, attrs)?;
                let t = self.expr(*tile, span)?;
                let tt = self.cpp_type(*tile, span)?;
                out.push(Stmt::Line(format!(
                    "TPUSH<{}, {tt}, {split}>({}, {t});",
                    pipe.ty, pipe.var
                )));
            }
            OpKind::TPop { valid, attrs, .. } => {
                let Some(r) = r0 else { return Ok(()) };
                let (pipe, split) = self.pipe_for(op, attrs)?;
                let (vr, vc) = match valid {
                    Some((a, b)) => (Some(*a), Some(*b)),
                    None => (None, None),
                };
                let Some(tt) = f.ty(r).tile().cloned() else {
                    return Err(invalid(span, "a pop produces a !pto.tile_buf"));
                };
                if vr.is_some() && (tt.v_row != Dim::Dynamic || tt.v_col != Dim::Dynamic) {
                    return Err(invalid(
                        span,
                        format!(
                            "'{}' op expects tile result to have dynamic validShape (?, ?) when valid_row/valid_col operands are provided",
                            op.name()
                        ),
                    ));
                }
                self.tile_decl(r, vr, vc, span, out)?;
                let t = self.expr(r, span)?;
                out.push(Stmt::Line(format!(
                    "TPOP<{}, {}, {split}>({}, {t});",
                    pipe.ty,
                    tt.cpp(),
                    pipe.var
                )));
            }
            OpKind::TFree { attrs, .. } => {
                let (pipe, split) = self.pipe_for(op, attrs)?;
                out.push(Stmt::Line(format!(
                    "TFREE<{}, {split}>({});",
                    pipe.ty, pipe.var
                )));
            }
            OpKind::Flag {
                name,
                src,
                dst,
                event,
            } => {
                let call = if name == "set_flag" || name == "record_event" {
                    "set_flag"
                } else {
                    "wait_flag"
                };
                let s = pipe_token(src).ok_or_else(|| invalid(span, "unknown pipe or op type"))?;
                let d = pipe_token(dst).ok_or_else(|| invalid(span, "unknown pipe or op type"))?;
                let e = match event.pto_value() {
                    Some(v) if v.starts_with("EVENT_ID") => v.to_string(),
                    _ => return Err(invalid(span, "expected an event id <EVENT_IDn>")),
                };
                out.push(Stmt::Line(format!("{call}({s}, {d}, {e});")));
            }
            OpKind::Barrier { pipe, .. } => {
                let p = pipe_token(pipe).ok_or_else(|| invalid(span, "unknown pipe or op type"))?;
                out.push(Stmt::Line(format!("pipe_barrier({p});")));
            }
            OpKind::CacheInvalid { target, space } => match target {
                Some(t) => {
                    let ptr = self.gm_address(*t, span)?;
                    out.push(Stmt::Line(format!("PTOAS__DCCI_SINGLE_CACHE_LINE({ptr});")));
                }
                None => {
                    let space = space.as_ref().and_then(|a| match a {
                        Attr::Pto { kind, value, .. } if kind == "address_space" => {
                            Some(value.as_str())
                        }
                        _ => None,
                    });
                    if space != Some("gm") {
                        return Err(invalid(
                            span,
                            "'pto.cmo.cacheinvalid all' takes #pto.address_space<gm> (the data cache holds GM lines only)",
                        ));
                    }
                    out.push(Stmt::Line(
                        "dcci((__gm__ void*)0, cache_line_t::ENTIRE_DATA_CACHE);".into(),
                    ));
                }
            },
            OpKind::Signal {
                name,
                signal,
                value,
                attrs,
            } => self.signal_op(op, name, *signal, *value, attrs, out)?,
            OpKind::CommCopy {
                name,
                dst,
                src,
                stages,
                attrs,
            } => self.comm_copy(op, name, *dst, *src, stages, attrs, out)?,
            OpKind::Fence { scope } => match scope {
                Attr::Pto { kind, value, .. } if kind == "fence_scope" && value == "gm" => {
                    out.push(Stmt::Line("dsb(DSB_DDR);".into()));
                }
                _ => {
                    return Err(unsupported(
                        span,
                        "'pto.fence.barrier_all' supports the scope #pto.fence_scope<gm> only",
                    ))
                }
            },
            OpKind::Section { kind, body } => {
                let m = match kind {
                    KernelKind::Vector => "__DAV_VEC__",
                    KernelKind::Cube => "__DAV_CUBE__",
                };
                out.push(Stmt::Pre(format!("#if defined({m})")));
                if *kind == KernelKind::Vector {
                    out.push(Stmt::Line("set_mask_norm();".into()));
                    out.push(Stmt::Line("set_vector_mask(-1, -1);".into()));
                }
                self.block(body, out)?;
                out.push(Stmt::Pre(format!("#endif // {m}")));
            }
            OpKind::Query { name } => {
                let Some(r) = r0 else { return Ok(()) };
                let call = format!("{}()", ops::cpp_instruction(name));
                let ty = self.cpp_type(r, span)?;
                self.declare(out, r, &ty, format!("({ty}) {call}"), false);
            }
        }
        Ok(())
    }

    /// An extent: a folded constant, the type's static dimension, or the value's C++ name.
    fn dim_of(&self, v: ValueId, ty_dim: Option<Dim>, span: Span) -> DiagResult<DimE> {
        if let Some(k) = self.consts.get(v) {
            return Ok(DimE::S(k));
        }
        if let Some(Dim::Static(k)) = ty_dim {
            return Ok(DimE::S(k));
        }
        Ok(DimE::D(self.expr(v, span)?))
    }

    fn offset_expr(&self, v: ValueId, span: Span) -> DiagResult<String> {
        match self.consts.get(v) {
            Some(k) => Ok(k.to_string()),
            None => self.expr(v, span),
        }
    }

    /// The view record of `v`: a tensor/partition view, or a GM memref argument.
    fn view_of(&self, v: ValueId, span: Span) -> DiagResult<View> {
        if let Some(view) = self.views.get(&v) {
            return Ok(view.clone());
        }
        if let Type::MemRef { shape, elem } = self.f.ty(v) {
            let mut dims = Vec::new();
            for d in shape {
                match d {
                    Dim::Static(k) => dims.push(DimE::S(*k)),
                    Dim::Dynamic => {
                        return Err(unsupported(
                            span,
                            "dynamic memref arguments are not supported; use make_tensor_view",
                        ))
                    }
                }
            }
            let mut strides = vec![DimE::S(1); dims.len()];
            for i in (0..dims.len().saturating_sub(1)).rev() {
                strides[i] = strides[i + 1].mul(&dims[i + 1]);
            }
            return Ok(View {
                base: self.expr(v, span)?,
                elem: *elem,
                shape: dims.clone(),
                strides,
                offset: Vec::new(),
                layout: Layout::Nd,
                gt: None,
            });
        }
        Err(invalid(
            span,
            format!(
                "%{} is not a GM view (got {})",
                self.f.name_of(v),
                self.f.ty(v)
            ),
        ))
    }

    /// The view value a carried view stands for (`v` itself when it is not carried).
    fn view_root(&self, v: ValueId) -> ValueId {
        self.view_roots.get(&v).copied().unwrap_or(v)
    }

    /// The C++ address of the first GM element of `v`: a GM `!pto.ptr`, a tensor or partition
    /// view, or a GM memref argument.
    fn gm_address(&self, v: ValueId, span: Span) -> DiagResult<String> {
        match self.f.ty(v) {
            Type::Ptr { ub: false, .. } => self.expr(v, span),
            Type::Ptr { ub: true, .. } => Err(invalid(
                span,
                format!(
                    "%{} is a UB pointer; cache maintenance addresses GM",
                    self.f.name_of(v)
                ),
            )),
            _ => {
                let view = self.view_of(v, span)?;
                // A partition's GlobalTensor is declared already: read its address from it
                // (so the declaration is used).
                if let Some((gt, _)) = &view.gt {
                    return Ok(format!("PTOAS__GLOBAL_TENSOR_DATA({gt})"));
                }
                Ok(if view.offset.is_empty() {
                    view.base
                } else {
                    format!("{} + ({})", view.base, view.offset.join(" + "))
                })
            }
        }
    }

    /// Emits `pto::Shape`, `pto::Stride` and `GlobalTensor` declarations for `view`; returns
    /// the GlobalTensor variable and its type.
    fn global_tensor(
        &mut self,
        view: &View,
        comment: &[ValueId],
        out: &mut Vec<Stmt>,
    ) -> (String, String) {
        let rank = view.shape.len().min(5);
        let pad = 5 - rank;
        let mut shape = vec![DimE::S(1); 5];
        let mut strides = vec![DimE::S(1); 5];
        for i in 0..rank {
            shape[pad + i] = view.shape[view.shape.len() - rank + i].clone();
            strides[pad + i] = view
                .strides
                .get(view.strides.len().saturating_sub(rank) + i)
                .cloned()
                .unwrap_or(DimE::S(1));
        }
        for i in (0..pad).rev() {
            strides[i] = shape[i + 1].mul(&strides[i + 1]);
        }
        let tmpl = |v: &[DimE]| {
            v.iter()
                .map(|d| d.template())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let args = |v: &[DimE]| {
            if v.iter().any(|d| matches!(d, DimE::D(_))) {
                format!(
                    "({})",
                    v.iter().map(|d| d.text()).collect::<Vec<_>>().join(", ")
                )
            } else {
                "()".to_string()
            }
        };
        let shape_ty = format!("pto::Shape<{}>", tmpl(&shape));
        let stride_ty = format!("pto::Stride<{}>", tmpl(&strides));
        let sv = self.fresh();
        out.push(self.comment(comment));
        out.push(Stmt::Line(format!(
            "{shape_ty} {sv} = {shape_ty}{};",
            args(&shape)
        )));
        let tv = self.fresh();
        out.push(self.comment(comment));
        out.push(Stmt::Line(format!(
            "{stride_ty} {tv} = {stride_ty}{};",
            args(&strides)
        )));
        let gt_ty = format!(
            "GlobalTensor<{}, {shape_ty}, {stride_ty}, {}>",
            view.elem.cpp(),
            view.layout.cpp()
        );
        let ptr = if view.offset.is_empty() {
            view.base.clone()
        } else {
            format!("{} + ({})", view.base, view.offset.join(" + "))
        };
        let gv = self.fresh();
        out.push(self.comment(comment));
        out.push(Stmt::Line(format!(
            "{gt_ty} {gv} = {gt_ty}({ptr}, {sv}, {tv});"
        )));
        (gv, gt_ty)
    }

    /// Declares the C++ tile for tile value `r` (constructor arguments for `?` valid dims).
    fn tile_decl(
        &mut self,
        r: ValueId,
        valid_row: Option<ValueId>,
        valid_col: Option<ValueId>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let Some(t) = self.f.ty(r).tile().cloned() else {
            return Err(invalid(span, "expected a !pto.tile_buf result"));
        };
        let ty = t.cpp();
        let mut args = Vec::new();
        if t.v_row == Dim::Dynamic {
            if let Some(v) = valid_row {
                args.push(self.expr(v, span)?);
            }
        }
        if t.v_col == Dim::Dynamic {
            if let Some(v) = valid_col {
                args.push(self.expr(v, span)?);
            }
        }
        let need = usize::from(t.v_row == Dim::Dynamic) + usize::from(t.v_col == Dim::Dynamic);
        let name = self.fresh();
        out.push(self.comment(&[r]));
        if args.is_empty() || args.len() != need {
            out.push(Stmt::Line(format!("{ty} {name};")));
        } else {
            out.push(Stmt::Line(format!(
                "{ty} {name} = {ty}({});",
                args.join(", ")
            )));
        }
        self.names.insert(r, name);
        Ok(())
    }
}

/// `PIPE_X` for a pipe attribute, or the pipe of a sync op type.
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

fn pipe_token(a: &Attr) -> Option<String> {
    let v = a.pto_value()?;
    if v.starts_with("PIPE_") {
        return Some(v.to_string());
    }
    Some(
        match v {
            "TLOAD" | "EVENT_LOAD_FROM_GM" => "PIPE_MTE2",
            "TSTORE_ACC" | "EVENT_STORE_FROM_ACC" | "TMOV_V2M" | "EVENT_MOVE_VEC_TO_MAT" => {
                "PIPE_FIX"
            }
            "TSTORE_VEC" | "EVENT_STORE_FROM_VEC" => "PIPE_MTE3",
            "TMOV_M2L"
            | "TMOV_M2S"
            | "TMOV_M2B"
            | "TMOV_M2V"
            | "EVENT_MOVE_MAT_TO_LEFT"
            | "EVENT_MOVE_MAT_TO_SCALAR"
            | "EVENT_MOVE_MAT_TO_BIAS"
            | "EVENT_MOVE_MAT_TO_VEC" => "PIPE_MTE1",
            "TMATMUL" | "EVENT_COMPUTE_MATMUL" => "PIPE_M",
            "TVEC" | "TVECWAIT_EVENT" | "EVENT_COMPUTE_VEC" | "EVENT_VEC_WAITPOINT" => "PIPE_V",
            _ => return None,
        }
        .to_string(),
    )
}

fn wrap16(ty: ScalarType, e: &str) -> String {
    if matches!(ty, ScalarType::F16 | ScalarType::BF16) {
        format!("(float) {e}")
    } else {
        e.to_string()
    }
}

fn binary_expr(op: BinOp, ty: ScalarType, a: &str, b: &str) -> String {
    let t = ty.cpp();
    let u = ty.cpp_unsigned();
    let s = ty.cpp_signed();
    if op.is_float() {
        let (x, y) = (wrap16(ty, a), wrap16(ty, b));
        let e = match op {
            BinOp::AddF => format!("{x} + {y}"),
            BinOp::SubF => format!("{x} - {y}"),
            BinOp::MulF => format!("{x} * {y}"),
            BinOp::DivF => format!("{x} / {y}"),
            BinOp::RemF => format!("std::fmod({x}, {y})"),
            BinOp::MaxNumF => format!("std::fmax({x}, {y})"),
            BinOp::MinNumF => format!("std::fmin({x}, {y})"),
            BinOp::MaximumF => {
                format!("(std::isnan({x}) || std::isnan({y})) ? NAN : std::fmax({x}, {y})")
            }
            _ => format!("(std::isnan({x}) || std::isnan({y})) ? NAN : std::fmin({x}, {y})"),
        };
        return if matches!(ty, ScalarType::F16 | ScalarType::BF16) {
            format!("({t}) ({e})")
        } else {
            e
        };
    }
    if ty == ScalarType::I1 {
        return match op {
            BinOp::AddI | BinOp::SubI | BinOp::XorI => format!("{a} != {b}"),
            BinOp::MulI | BinOp::AndI | BinOp::MinUI | BinOp::MaxSI => format!("{a} && {b}"),
            _ => format!("{a} || {b}"),
        };
    }
    match op {
        BinOp::AddI => format!("({t}) (({u}) {a} + ({u}) {b})"),
        BinOp::SubI => format!("({t}) (({u}) {a} - ({u}) {b})"),
        BinOp::MulI => format!("({t}) (({u}) {a} * ({u}) {b})"),
        BinOp::DivSI => format!("({t}) (({s}) {a} / ({s}) {b})"),
        BinOp::RemSI => format!("({t}) (({s}) {a} % ({s}) {b})"),
        BinOp::DivUI => format!("({t}) (({u}) {a} / ({u}) {b})"),
        BinOp::RemUI => format!("({t}) (({u}) {a} % ({u}) {b})"),
        BinOp::CeilDivSI => {
            format!("({t}) ({a} / {b} + ((({a} % {b}) != 0 && (({a} < 0) == ({b} < 0))) ? 1 : 0))")
        }
        BinOp::FloorDivSI => {
            format!("({t}) ({a} / {b} - ((({a} % {b}) != 0 && (({a} < 0) != ({b} < 0))) ? 1 : 0))")
        }
        BinOp::CeilDivUI => {
            format!("({t}) (({u}) {a} / ({u}) {b} + ((({u}) {a} % ({u}) {b}) != 0 ? 1 : 0))")
        }
        BinOp::MinSI => format!("{a} < {b} ? {a} : {b}"),
        BinOp::MaxSI => format!("{a} < {b} ? {b} : {a}"),
        BinOp::MinUI => format!("({u}) {a} < ({u}) {b} ? {a} : {b}"),
        BinOp::MaxUI => format!("({u}) {a} < ({u}) {b} ? {b} : {a}"),
        BinOp::AndI => format!("({t}) ({a} & {b})"),
        BinOp::OrI => format!("({t}) ({a} | {b})"),
        BinOp::XorI => format!("({t}) ({a} ^ {b})"),
        BinOp::ShLI => format!("({t}) (({u}) {a} << {b})"),
        BinOp::ShRSI => format!("({t}) (({s}) {a} >> {b})"),
        BinOp::ShRUI => format!("({t}) (({u}) {a} >> {b})"),
        _ => format!("{a} ? {b} : {b}"),
    }
}

fn cmpi_expr(pred: &str, ty: ScalarType, a: &str, b: &str) -> String {
    let u = ty.cpp_unsigned();
    let s = ty.cpp_signed();
    match pred {
        "eq" => format!("{a} == {b}"),
        "ne" => format!("{a} != {b}"),
        "slt" => format!("({s}) {a} < ({s}) {b}"),
        "sle" => format!("({s}) {a} <= ({s}) {b}"),
        "sgt" => format!("({s}) {a} > ({s}) {b}"),
        "sge" => format!("({s}) {a} >= ({s}) {b}"),
        "ult" => format!("({u}) {a} < ({u}) {b}"),
        "ule" => format!("({u}) {a} <= ({u}) {b}"),
        "ugt" => format!("({u}) {a} > ({u}) {b}"),
        _ => format!("({u}) {a} >= ({u}) {b}"),
    }
}

fn cmpf_expr(pred: &str, a: &str, b: &str) -> String {
    match pred {
        "false" => "false".into(),
        "true" => "true".into(),
        "oeq" => format!("{a} == {b}"),
        "ogt" => format!("{a} > {b}"),
        "oge" => format!("{a} >= {b}"),
        "olt" => format!("{a} < {b}"),
        "ole" => format!("{a} <= {b}"),
        "one" => format!("({a} < {b} || {a} > {b})"),
        "ord" => format!("({a} == {a} && {b} == {b})"),
        "ueq" => format!("!({a} < {b} || {a} > {b})"),
        "ugt" => format!("!({a} <= {b})"),
        "uge" => format!("!({a} < {b})"),
        "ult" => format!("!({a} >= {b})"),
        "ule" => format!("!({a} > {b})"),
        "une" => format!("{a} != {b}"),
        _ => format!("({a} != {a} || {b} != {b})"),
    }
}

fn cast_expr(op: CastOp, src: ScalarType, dst: ScalarType, a: &str) -> String {
    let d = dst.cpp();
    match op {
        CastOp::IndexCastUI | CastOp::ExtUI | CastOp::UIToFP => {
            format!("({d}) ({}) {a}", src.cpp_unsigned())
        }
        CastOp::ExtF | CastOp::TruncF | CastOp::SIToFP
            if matches!(dst, ScalarType::F16 | ScalarType::BF16) =>
        {
            format!("({d}) (float) {a}")
        }
        _ if matches!(src, ScalarType::F16 | ScalarType::BF16) => format!("({d}) (float) {a}"),
        _ => format!("({d}) {a}"),
    }
}

fn math_expr(func: &str, ty: ScalarType, a: &str) -> Option<String> {
    if func == "absi" {
        return ty.is_int().then(|| format!("{a} < 0 ? -{a} : {a}"));
    }
    if !ty.is_float() {
        return None;
    }
    let x = wrap16(ty, a);
    let e = match func {
        "rsqrt" => format!("1.0f / std::sqrt({x})"),
        "absf" => format!("std::fabs({x})"),
        "exp" | "log" | "sqrt" | "tanh" | "sin" | "cos" | "floor" | "ceil" | "exp2" | "log2"
        | "erf" => format!("std::{func}({x})"),
        _ => return None,
    };
    Some(if matches!(ty, ScalarType::F16 | ScalarType::BF16) {
        format!("({}) ({e})", ty.cpp())
    } else {
        e
    })
}
