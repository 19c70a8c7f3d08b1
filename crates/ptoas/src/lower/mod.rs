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
//!
//! Each op family lowers in its own module: `scalar` (arith, math), `control` (scf, calls),
//! `memory` (views, tiles, pointers, reserved buffers), `ops` (tile ops, pipes, comm) and
//! `sync` (flags, barriers, cache maintenance, fences); `FnLower::op` dispatches to them.

mod control;
mod memory;
mod ops;
mod scalar;
mod sync;
mod unused;

pub use ops::{cpp_instruction, is_query_op, lowers_tile_op, HEADER_LACKS, QUERY_OPS};

use std::collections::{HashMap, HashSet};

use crate::analysis::Consts;
use crate::cpp::{Function, Stmt, Unit};
use crate::error::{Diag, DiagResult, ErrorKind};
use crate::ir::{find_attr, Block, Func, KernelKind, Module, Op, OpKind, ValueId, Visibility};
use crate::layout;
use crate::plan::{self, Plan};
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

    /// Lowers one op into `out`: a dispatch on its kind. Each family has its own module:
    /// `scalar` (arith, math), `control` (scf, calls), `memory` (views, tiles, pointers,
    /// reserved buffers), `ops` (tile ops, pipes, comm), `sync` (flags, barriers, cache,
    /// fences).
    fn op(&mut self, op: &Op, out: &mut Vec<Stmt>) -> DiagResult<()> {
        match &op.kind {
            OpKind::Constant { value, ty } => self.constant(op, value, *ty, out),
            OpKind::Binary { op: bop, lhs, rhs } => self.binary(op, *bop, *lhs, *rhs, out),
            OpKind::NegF { operand } => self.negf(op, *operand, out),
            OpKind::Cmp {
                float,
                pred,
                lhs,
                rhs,
            } => self.cmp(op, *float, pred, *lhs, *rhs, out),
            OpKind::Cast { op: cop, operand } => self.cast(op, *cop, *operand, out),
            OpKind::Select {
                cond,
                on_true,
                on_false,
            } => self.select(op, *cond, *on_true, *on_false, out),
            OpKind::Math { func, operand } => self.math(op, func, *operand, out),
            OpKind::For {
                lb,
                ub,
                step,
                iv,
                iter_args,
                body,
            } => self.for_loop(op, [*lb, *ub, *step], *iv, iter_args, body, out),
            OpKind::If {
                cond,
                then_block,
                else_block,
            } => self.if_else(op, *cond, then_block, else_block.as_ref(), out),
            OpKind::While {
                inits,
                before,
                after,
            } => self.while_loop(op, inits, before, after, out),
            OpKind::Yield(_) | OpKind::Condition { .. } => Err(invalid(
                op.span,
                format!("'{}' outside its region's end", op.name()),
            )),
            OpKind::Return(_) => Err(invalid(
                op.span,
                "'return' must be the last op of a function",
            )),
            OpKind::Call { callee, args } => self.call(op, callee, args, out),
            OpKind::MakeTensorView {
                ptr,
                shape,
                strides,
                ..
            } => self.make_tensor_view(op, *ptr, shape, strides),
            OpKind::PartitionView {
                source,
                offsets,
                sizes,
            } => self.partition_view(op, *source, offsets, sizes, out),
            OpKind::ViewQuery { stride, view, dim } => {
                self.view_query(op, *stride, *view, *dim, out)
            }
            OpKind::AllocTile {
                addr,
                valid_row,
                valid_col,
            } => self.alloc_tile(op, *addr, *valid_row, *valid_col, out),
            OpKind::SubView {
                source,
                offsets,
                sizes,
                valid,
            } => self.subview(op, *source, offsets, sizes, *valid, out),
            OpKind::Reinterpret { bitcast, source } => self.reinterpret(op, *bitcast, *source, out),
            OpKind::TAssign { tile, addr } => self.tassign(op, *tile, *addr, out),
            OpKind::SetValidShape { tile, rows, cols } => {
                self.set_valid_shape(op, *tile, *rows, *cols, out)
            }
            OpKind::AddPtr { ptr, offset } => self.add_ptr(op, *ptr, *offset, out),
            OpKind::LoadScalar { ptr, offset } => self.load_scalar(op, *ptr, *offset, out),
            OpKind::StoreScalar { value, ptr, offset } => {
                self.store_scalar(op, *value, *ptr, *offset, out)
            }
            OpKind::Tile {
                name,
                ins,
                outs,
                attrs,
                ..
            } => self.tile_op(op, name, ins, outs, attrs, out),
            OpKind::ReserveBuffer { name, .. } => self.reserve_buffer(op, name, out),
            OpKind::ImportReservedBuffer { name, peer_func } => {
                self.import_reserved_buffer(op, name, peer_func, out)
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
            ),
            OpKind::TPush { tile, attrs, .. } => self.tpush(op, *tile, attrs, out),
            OpKind::TPop { valid, attrs, .. } => self.tpop(op, *valid, attrs, out),
            OpKind::TFree { attrs, .. } => self.tfree(op, attrs, out),
            OpKind::Flag {
                name,
                src,
                dst,
                event,
            } => self.flag(op, name, src, dst, event, out),
            OpKind::Barrier { pipe, .. } => self.barrier(op, pipe, out),
            OpKind::CacheInvalid { target, space } => {
                self.cache_invalid(op, *target, space.as_ref(), out)
            }
            OpKind::Signal {
                name,
                signal,
                value,
                attrs,
            } => self.signal_op(op, name, *signal, *value, attrs, out),
            OpKind::CommCopy {
                name,
                dst,
                src,
                stages,
                attrs,
            } => self.comm_copy(op, name, *dst, *src, stages, attrs, out),
            OpKind::Fence { scope } => self.fence(op, scope, out),
            OpKind::Section { kind, body } => self.section(*kind, body, out),
            OpKind::Query { name } => self.query(op, name, out),
        }
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

    /// `pto.section.cube` / `.vector`: its body inside the core's guard.
    fn section(&mut self, kind: KernelKind, body: &Block, out: &mut Vec<Stmt>) -> DiagResult<()> {
        let m = match kind {
            KernelKind::Vector => "__DAV_VEC__",
            KernelKind::Cube => "__DAV_CUBE__",
        };
        out.push(Stmt::Pre(format!("#if defined({m})")));
        if kind == KernelKind::Vector {
            out.push(Stmt::Line("set_mask_norm();".into()));
            out.push(Stmt::Line("set_vector_mask(-1, -1);".into()));
        }
        self.block(body, out)?;
        out.push(Stmt::Pre(format!("#endif // {m}")));
        Ok(())
    }

    /// The block queries (`pto.get_block_idx`, ...): the kernel-side call.
    fn query(&mut self, op: &Op, name: &str, out: &mut Vec<Stmt>) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let Some(r) = r0 else { return Ok(()) };
        let call = format!("{}()", ops::cpp_instruction(name));
        let ty = self.cpp_type(r, span)?;
        self.declare(out, r, &ty, format!("({ty}) {call}"), false);
        Ok(())
    }
}
