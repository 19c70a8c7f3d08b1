//! Each op's own syntax: `arith`, `math`, `scf`, `func` and `pto` ops into [`OpKind`]s.

use super::{parse_int, Parser, MAX_LIST};
use crate::error::{Diag, DiagResult, ErrorKind};
use crate::ir::{
    Attr, BinOp, Block, CastOp, KernelKind, Literal, NamedAttr, Op, OpKind, Side, ValueId,
};
use crate::lexer::Tok;
use crate::source::Span;
use crate::types::{ScalarType, TileLoc, Type};

/// Results written before `=`: names and the span of the first.
struct ResultNames {
    names: Vec<String>,
    span: Span,
}

const MATH_FUNCS: [&str; 14] = [
    "exp", "log", "sqrt", "rsqrt", "absf", "absi", "tanh", "sin", "cos", "floor", "ceil", "exp2",
    "log2", "erf",
];

impl Parser<'_> {
    /// Parses one op (with its results and a trailing `loc(...)`).
    pub(crate) fn op(&mut self) -> DiagResult<Op> {
        let start = self.span();
        let results = self.result_names()?;
        let name_span = self.span();
        let name = match self.peek().clone() {
            Tok::Ident(n) => {
                self.bump()?;
                n
            }
            Tok::Str(n) => {
                return self.err(format!(
                "generic op syntax \"{n}\"(...) is not supported; write the op in its custom form"
            ))
            }
            _ => return self.expected("an op name"),
        };
        let (kind, types) = self.op_body(&name, name_span, results.as_ref())?;
        self.skip_loc()?;
        // Bind results.
        let names = results.map(|r| (r.names, r.span));
        let mut ids = Vec::new();
        match names {
            None => {
                if !types.is_empty() {
                    // Results without names are allowed in MLIR only when unused; give
                    // them anonymous names.
                    for (i, t) in types.into_iter().enumerate() {
                        let n = format!("__anon{}_{}", start.start, i);
                        ids.push(self.define(&n, t, start)?);
                    }
                }
            }
            Some((names, span)) => {
                if names.len() != types.len() {
                    return self.err_at(
                        span,
                        format!(
                            "'{name}' defines {} result(s), but {} name(s) are given",
                            types.len(),
                            names.len()
                        ),
                    );
                }
                for (n, t) in names.iter().zip(types) {
                    ids.push(self.define(n, t, span)?);
                }
            }
        }
        Ok(Op {
            results: ids,
            kind,
            span: start.to(name_span),
        })
    }

    fn result_names(&mut self) -> DiagResult<Option<ResultNames>> {
        let Tok::Value(first) = self.peek().clone() else {
            return Ok(None);
        };
        let span = self.span();
        self.bump()?;
        let mut names = Vec::new();
        if self.eat_punct(':')? {
            let count_span = self.span();
            let n = match self.peek().clone() {
                Tok::Int(t) => {
                    self.bump()?;
                    parse_int(&t).unwrap_or(-1)
                }
                _ => return self.expected("a result count after ':'"),
            };
            if n < 1 || n as usize > MAX_LIST {
                return self.err_at(count_span, format!("bad result count {n}"));
            }
            for i in 0..n {
                names.push(format!("{first}#{i}"));
            }
        } else {
            names.push(first);
            while self.eat_punct(',')? {
                match self.peek().clone() {
                    Tok::Value(n) => {
                        self.bump()?;
                        names.push(n);
                        if names.len() > MAX_LIST {
                            return self.err("too many results");
                        }
                    }
                    _ => return self.expected("a result name"),
                }
            }
        }
        self.expect_punct('=')?;
        Ok(Some(ResultNames { names, span }))
    }

    fn unsupported<T>(&self, span: Span, name: &str) -> DiagResult<T> {
        Err(Diag::at(
            ErrorKind::Unsupported,
            span,
            format!("unsupported op '{name}' (docs/PTOAS.md lists the supported ops)"),
        ))
    }

    /// Parses the rest of op `name`; returns the op and its result types.
    fn op_body(
        &mut self,
        name: &str,
        span: Span,
        results: Option<&ResultNames>,
    ) -> DiagResult<(OpKind, Vec<Type>)> {
        let _ = results;
        if let Some(rest) = name.strip_prefix("arith.") {
            return self.arith(rest, name, span);
        }
        if let Some(f) = name.strip_prefix("math.") {
            if !MATH_FUNCS.contains(&f) {
                return self.unsupported(span, name);
            }
            let operand = self.value()?;
            self.opt_attr_dict()?;
            self.skip_fastmath()?;
            self.expect_punct(':')?;
            let t = self.ty()?;
            return Ok((
                OpKind::Math {
                    func: f.to_string(),
                    operand,
                },
                vec![t],
            ));
        }
        match name {
            "scf.for" => self.scf_for(),
            "scf.if" => self.scf_if(),
            "scf.while" => self.scf_while(),
            "scf.yield" => {
                let vals = self.operands_with_types()?;
                Ok((OpKind::Yield(vals), vec![]))
            }
            "scf.condition" => {
                self.expect_punct('(')?;
                let cond = self.value()?;
                self.expect_punct(')')?;
                let args = self.operands_with_types()?;
                Ok((OpKind::Condition { cond, args }, vec![]))
            }
            "func.call" | "call" => self.call(),
            "return" | "func.return" => {
                let vals = self.operands_with_types()?;
                Ok((OpKind::Return(vals), vec![]))
            }
            _ => match name.strip_prefix("pto.") {
                Some(rest) => self.pto(rest, name, span),
                None => self.unsupported(span, name),
            },
        }
    }

    /// The tail `{attrs}? : T -> R` of a one-result op: its result type `R` (the attributes
    /// and the operand type `T` are read and dropped).
    fn operand_to_result_type(&mut self) -> DiagResult<Type> {
        self.opt_attr_dict()?;
        self.expect_punct(':')?;
        self.ty()?;
        self.expect_arrow()?;
        self.ty()
    }

    fn opt_attr_dict(&mut self) -> DiagResult<Vec<NamedAttr>> {
        if self.is_punct('{') {
            self.attr_dict()
        } else {
            Ok(Vec::new())
        }
    }

    /// Skips `overflow<...>` / `fastmath<...>` flags.
    fn skip_fastmath(&mut self) -> DiagResult<()> {
        while self.is_ident("overflow") || self.is_ident("fastmath") {
            self.bump()?;
            self.skip_balanced('<', '>')?;
        }
        Ok(())
    }

    /// `[%a, %b : T, U]` (possibly empty, as after `return`).
    fn operands_with_types(&mut self) -> DiagResult<Vec<ValueId>> {
        if !matches!(self.peek(), Tok::Value(_)) {
            return Ok(Vec::new());
        }
        let vals = self.comma_list(|p| p.value())?;
        self.expect_punct(':')?;
        let types = self.comma_list(|p| p.ty())?;
        if types.len() != vals.len() {
            return self.err(format!(
                "{} operand(s) but {} type(s)",
                vals.len(),
                types.len()
            ));
        }
        Ok(vals)
    }

    fn arith(&mut self, rest: &str, name: &str, span: Span) -> DiagResult<(OpKind, Vec<Type>)> {
        if rest == "constant" {
            return self.constant(span);
        }
        if let Some((op, _)) = BinOp::ALL.iter().find(|(_, n)| *n == rest) {
            let lhs = self.value()?;
            self.expect_punct(',')?;
            let rhs = self.value()?;
            self.skip_fastmath()?;
            self.opt_attr_dict()?;
            self.expect_punct(':')?;
            let t = self.ty()?;
            return Ok((OpKind::Binary { op: *op, lhs, rhs }, vec![t]));
        }
        if let Some((op, _)) = CastOp::ALL.iter().find(|(_, n)| *n == rest) {
            let operand = self.value()?;
            self.skip_fastmath()?;
            self.opt_attr_dict()?;
            self.expect_punct(':')?;
            self.ty()?;
            self.expect_ident("to")?;
            let t = self.ty()?;
            return Ok((OpKind::Cast { op: *op, operand }, vec![t]));
        }
        match rest {
            "negf" => {
                let operand = self.value()?;
                self.skip_fastmath()?;
                self.opt_attr_dict()?;
                self.expect_punct(':')?;
                let t = self.ty()?;
                Ok((OpKind::NegF { operand }, vec![t]))
            }
            "cmpi" | "cmpf" => {
                let pred_span = self.span();
                let pred = self.ident()?;
                let float = rest == "cmpf";
                let ok = if float {
                    [
                        "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                        "uge", "ult", "ule", "une", "uno", "true",
                    ]
                    .contains(&pred.as_str())
                } else {
                    [
                        "eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge",
                    ]
                    .contains(&pred.as_str())
                };
                if !ok {
                    return self.err_at(pred_span, format!("unknown {rest} predicate '{pred}'"));
                }
                self.expect_punct(',')?;
                let lhs = self.value()?;
                self.expect_punct(',')?;
                let rhs = self.value()?;
                self.skip_fastmath()?;
                self.opt_attr_dict()?;
                self.expect_punct(':')?;
                self.ty()?;
                Ok((
                    OpKind::Cmp {
                        float,
                        pred,
                        lhs,
                        rhs,
                    },
                    vec![Type::Scalar(ScalarType::I1)],
                ))
            }
            "select" => {
                let cond = self.value()?;
                self.expect_punct(',')?;
                let on_true = self.value()?;
                self.expect_punct(',')?;
                let on_false = self.value()?;
                self.opt_attr_dict()?;
                self.expect_punct(':')?;
                let mut t = self.ty()?;
                if self.eat_punct(',')? {
                    t = self.ty()?;
                }
                Ok((
                    OpKind::Select {
                        cond,
                        on_true,
                        on_false,
                    },
                    vec![t],
                ))
            }
            _ => self.unsupported(span, name),
        }
    }

    fn constant(&mut self, span: Span) -> DiagResult<(OpKind, Vec<Type>)> {
        let lit_span = self.span();
        let neg = self.eat_punct('-')?;
        let (lit, implied) = match self.peek().clone() {
            Tok::Ident(b) if b == "true" || b == "false" => {
                self.bump()?;
                (Literal::Int(i64::from(b == "true")), Some(ScalarType::I1))
            }
            Tok::Int(t) => {
                self.bump()?;
                let v = parse_int(&t).ok_or_else(|| {
                    Diag::at(
                        ErrorKind::Syntax,
                        lit_span,
                        format!("integer {t} is out of range"),
                    )
                })?;
                (Literal::Int(if neg { v.wrapping_neg() } else { v }), None)
            }
            Tok::Float(t) => {
                self.bump()?;
                let v: f64 = t.parse().map_err(|_| {
                    Diag::at(
                        ErrorKind::Syntax,
                        lit_span,
                        format!("bad float literal {t}"),
                    )
                })?;
                (Literal::Float(if neg { -v } else { v }), None)
            }
            Tok::Ident(d) if d == "dense" => {
                return Err(Diag::at(
                    ErrorKind::Unsupported,
                    span,
                    "arith.constant with a dense (vector/tensor) value is not supported",
                ))
            }
            _ => return self.expected("a constant value"),
        };
        self.opt_attr_dict()?;
        let ty = if self.eat_punct(':')? {
            let tspan = self.span();
            match self.ty()? {
                Type::Scalar(s) => s,
                other => {
                    return self.err_at(
                        tspan,
                        format!("arith.constant of type {other} is not supported"),
                    )
                }
            }
        } else if let Some(t) = implied {
            t
        } else {
            return self.expected("':' and the constant's type");
        };
        let value = match (lit, ty.is_float()) {
            (Literal::Int(bits), true) => {
                // Hex float literal: the bit pattern of the value.
                if implied.is_some() {
                    return self.err_at(lit_span, "a boolean constant must have type i1");
                }
                Literal::Float(float_from_bits(bits, ty))
            }
            (Literal::Float(_), false) => {
                return self.err_at(
                    lit_span,
                    format!("a float literal cannot have type {}", ty.name()),
                )
            }
            (l, _) => l,
        };
        Ok((OpKind::Constant { value, ty }, vec![Type::Scalar(ty)]))
    }

    fn scf_for(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let (iv_name, iv_span) = match self.peek().clone() {
            Tok::Value(n) => (n, self.bump()?.span),
            _ => return self.expected("the induction variable"),
        };
        self.expect_punct('=')?;
        let lb = self.value()?;
        self.expect_ident("to")?;
        let ub = self.value()?;
        self.expect_ident("step")?;
        let step = self.value()?;
        let mut inits = Vec::new();
        let mut result_types = Vec::new();
        if self.eat_ident("iter_args")? {
            self.expect_punct('(')?;
            if !self.is_punct(')') {
                inits = self.comma_list(|p| {
                    let (n, s) = match p.peek().clone() {
                        Tok::Value(n) => (n, p.bump()?.span),
                        _ => return p.expected("an iter_arg '%name = %init'"),
                    };
                    p.expect_punct('=')?;
                    let init = p.value()?;
                    Ok((n, s, init))
                })?;
            }
            self.expect_punct(')')?;
            self.expect_arrow()?;
            result_types = self.type_list_maybe_paren()?;
            if result_types.len() != inits.len() {
                return self.err(format!(
                    "{} iter_args but {} result type(s)",
                    inits.len(),
                    result_types.len()
                ));
            }
        }
        let mut iv_ty = self.ty_of(lb).clone();
        if self.eat_punct(':')? {
            iv_ty = self.ty()?;
        }
        self.push_scope();
        let iv = self.define(&iv_name, iv_ty, iv_span)?;
        let mut iter_args = Vec::new();
        for ((n, s, init), t) in inits.iter().zip(&result_types) {
            let a = self.define(n, t.clone(), *s)?;
            iter_args.push((a, *init));
        }
        let mut args = vec![iv];
        args.extend(iter_args.iter().map(|(a, _)| *a));
        let mut body = self.region_block(&args)?;
        body.args.clear();
        self.pop_scope();
        self.opt_attr_dict()?;
        Ok((
            OpKind::For {
                lb,
                ub,
                step,
                iv,
                iter_args,
                body,
            },
            result_types,
        ))
    }

    fn scf_if(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let cond = self.value()?;
        let mut types = Vec::new();
        if *self.peek() == Tok::Arrow {
            self.bump()?;
            types = self.type_list_maybe_paren()?;
        }
        self.push_scope();
        let then_block = self.region_block(&[])?;
        self.pop_scope();
        let else_block = if self.eat_ident("else")? {
            self.push_scope();
            let b = self.region_block(&[])?;
            self.pop_scope();
            Some(b)
        } else {
            None
        };
        self.opt_attr_dict()?;
        Ok((
            OpKind::If {
                cond,
                then_block,
                else_block,
            },
            types,
        ))
    }

    fn scf_while(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        self.expect_punct('(')?;
        let mut pairs = Vec::new();
        if !self.is_punct(')') {
            pairs = self.comma_list(|p| {
                let (n, s) = match p.peek().clone() {
                    Tok::Value(n) => (n, p.bump()?.span),
                    _ => return p.expected("'%name = %init'"),
                };
                p.expect_punct('=')?;
                let init = p.value()?;
                Ok((n, s, init))
            })?;
        }
        self.expect_punct(')')?;
        self.expect_punct(':')?;
        let arg_types = self.type_list_maybe_paren()?;
        self.expect_arrow()?;
        let result_types = self.type_list_maybe_paren()?;
        if arg_types.len() != pairs.len() {
            return self.err(format!(
                "{} while argument(s) but {} type(s)",
                pairs.len(),
                arg_types.len()
            ));
        }
        self.push_scope();
        let mut before_args = Vec::new();
        for ((n, s, _), t) in pairs.iter().zip(&arg_types) {
            before_args.push(self.define(n, t.clone(), *s)?);
        }
        let before = self.region_block(&before_args)?;
        self.pop_scope();
        self.expect_ident("do")?;
        self.push_scope();
        let after = self.region_block(&[])?;
        self.pop_scope();
        self.opt_attr_dict()?;
        Ok((
            OpKind::While {
                inits: pairs.iter().map(|(_, _, i)| *i).collect(),
                before,
                after,
            },
            result_types,
        ))
    }

    fn call(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let callee = match self.peek().clone() {
            Tok::Symbol(s) => {
                self.bump()?;
                s
            }
            _ => return self.expected("a callee '@name'"),
        };
        self.expect_punct('(')?;
        let mut args = Vec::new();
        if !self.is_punct(')') {
            args = self.comma_list(|p| p.value())?;
        }
        self.expect_punct(')')?;
        self.opt_attr_dict()?;
        self.expect_punct(':')?;
        let params = self.type_list_maybe_paren()?;
        if params.len() != args.len() {
            return self.err(format!(
                "{} argument(s) but {} parameter type(s)",
                args.len(),
                params.len()
            ));
        }
        self.expect_arrow()?;
        let results = self.type_list_maybe_paren()?;
        Ok((OpKind::Call { callee, args }, results))
    }

    /// `[%a, %b]` (possibly empty).
    fn value_list_brackets(&mut self) -> DiagResult<Vec<ValueId>> {
        self.expect_punct('[')?;
        let mut v = Vec::new();
        if !self.is_punct(']') {
            v = self.comma_list(|p| p.value())?;
        }
        self.expect_punct(']')?;
        Ok(v)
    }

    /// `key = [ ... ]`.
    fn keyed_list(&mut self, key: &str) -> DiagResult<Vec<ValueId>> {
        self.expect_ident(key)?;
        self.expect_punct('=')?;
        self.value_list_brackets()
    }

    /// A `pto.` op (`rest`: its name without the prefix): a dispatch to the parser of its
    /// syntax; an op with `ins(...)` / `outs(...)` is a tile op.
    fn pto(&mut self, rest: &str, name: &str, span: Span) -> DiagResult<(OpKind, Vec<Type>)> {
        match rest {
            "make_tensor_view" => self.make_tensor_view(),
            "partition_view" => self.partition_view(),
            "get_tensor_view_dim" | "get_tensor_view_stride" => self.view_query(rest),
            "alloc_tile" => self.alloc_tile(),
            "subview" => self.subview(),
            "treshape" | "bitcast" => self.reinterpret(rest),
            "tassign" => self.tassign(),
            "set_validshape" => self.set_validshape(),
            "addptr" => self.addptr(),
            "load_scalar" => self.load_scalar(),
            "store_scalar" => self.store_scalar(),
            "reserve_buffer" => self.reserve_buffer(span),
            "import_reserved_buffer" => self.import_reserved_buffer(span),
            "aic_initialize_pipe" | "aiv_initialize_pipe" => self.initialize_pipe(rest, name, span),
            "tpush_to_aiv" | "tpush_to_aic" => self.tpush(rest),
            "tpop_from_aic" | "tpop_from_aiv" => self.tpop(rest),
            "tfree_from_aic" | "tfree_from_aiv" => self.tfree(rest),
            "set_flag" | "wait_flag" | "record_event" | "wait_event" => self.flag(rest),
            "barrier" => self.barrier(rest),
            "barrier_sync" => self.barrier_sync(rest),
            "cmo.cacheinvalid" => self.cache_invalid(),
            "comm.tnotify" | "comm.twait" => self.comm_signal(rest),
            "comm.tput" | "comm.tget" => self.comm_copy(rest),
            "fence.barrier_all" => self.fence(),
            "section.cube" | "section.vector" => self.section(rest),
            q if crate::lower::is_query_op(q) => self.query(rest),
            _ if self.is_ident("ins") || self.is_ident("outs") => self.tile_op(rest),
            _ => self.unsupported(span, name),
        }
    }

    /// `pto.make_tensor_view %ptr, shape = [...], strides = [...] : T`.
    fn make_tensor_view(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let ptr = self.value()?;
        self.expect_punct(',')?;
        let shape = self.keyed_list("shape")?;
        self.eat_punct(',')?;
        let strides = self.keyed_list("strides")?;
        let attrs = self.opt_attr_dict()?;
        self.expect_punct(':')?;
        let t = self.ty()?;
        Ok((
            OpKind::MakeTensorView {
                ptr,
                shape,
                strides,
                attrs,
            },
            vec![t],
        ))
    }

    /// `pto.partition_view %v, offsets = [...], sizes = [...] : T -> T`.
    fn partition_view(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let source = self.value()?;
        self.expect_punct(',')?;
        let offsets = self.keyed_list("offsets")?;
        self.expect_punct(',')?;
        let sizes = self.keyed_list("sizes")?;
        let t = self.operand_to_result_type()?;
        Ok((
            OpKind::PartitionView {
                source,
                offsets,
                sizes,
            },
            vec![t],
        ))
    }

    /// `pto.get_tensor_view_dim` / `_stride` `%v, %dim : T -> T`.
    fn view_query(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let view = self.value()?;
        self.expect_punct(',')?;
        let dim = self.value()?;
        self.expect_punct(':')?;
        self.ty()?;
        self.expect_arrow()?;
        let t = self.ty()?;
        self.opt_attr_dict()?;
        Ok((
            OpKind::ViewQuery {
                stride: rest == "get_tensor_view_stride",
                view,
                dim,
            },
            vec![t],
        ))
    }

    /// `pto.alloc_tile [addr = %a] [valid_row = %r] [valid_col = %c] : T`.
    fn alloc_tile(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let mut addr = None;
        let mut valid_row = None;
        let mut valid_col = None;
        loop {
            let key = match self.peek() {
                Tok::Ident(k) if k == "addr" || k == "valid_row" || k == "valid_col" => k.clone(),
                _ => break,
            };
            let key_span = self.span();
            self.bump()?;
            self.expect_punct('=')?;
            let v = self.value()?;
            let slot = match key.as_str() {
                "addr" => &mut addr,
                "valid_row" => &mut valid_row,
                _ => &mut valid_col,
            };
            if slot.is_some() {
                return self.err_at(key_span, format!("'{key}' given twice"));
            }
            *slot = Some(v);
        }
        self.opt_attr_dict()?;
        self.expect_punct(':')?;
        let t = self.ty()?;
        Ok((
            OpKind::AllocTile {
                addr,
                valid_row,
                valid_col,
            },
            vec![t],
        ))
    }

    /// `pto.subview %t[%i, %j] sizes [R, C] [valid [%r, %c]] : T -> T`.
    fn subview(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let source = self.value()?;
        let offsets = self.value_list_brackets()?;
        self.expect_ident("sizes")?;
        self.expect_punct('[')?;
        let sizes = self.comma_list(|p| p.int_literal())?;
        self.expect_punct(']')?;
        let mut valid = None;
        if self.eat_ident("valid")? {
            let v = self.value_list_brackets()?;
            if v.len() != 2 {
                return self.err("expected 'valid [%rows, %cols]'");
            }
            valid = Some((v[0], v[1]));
        }
        let t = self.operand_to_result_type()?;
        Ok((
            OpKind::SubView {
                source,
                offsets,
                sizes,
                valid,
            },
            vec![t],
        ))
    }

    /// `pto.treshape` / `pto.bitcast` `%t : T -> T`.
    fn reinterpret(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let source = self.value()?;
        let t = self.operand_to_result_type()?;
        Ok((
            OpKind::Reinterpret {
                bitcast: rest == "bitcast",
                source,
            },
            vec![t],
        ))
    }

    /// `pto.tassign %t, %addr : T -> T`.
    fn tassign(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let tile = self.value()?;
        self.expect_punct(',')?;
        let addr = self.value()?;
        let t = self.operand_to_result_type()?;
        Ok((OpKind::TAssign { tile, addr }, vec![t]))
    }

    /// `pto.set_validshape %t, %rows, %cols : T`.
    fn set_validshape(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let tile = self.value()?;
        self.expect_punct(',')?;
        let rows = self.value()?;
        self.expect_punct(',')?;
        let cols = self.value()?;
        self.opt_attr_dict()?;
        self.expect_punct(':')?;
        self.ty()?;
        Ok((OpKind::SetValidShape { tile, rows, cols }, vec![]))
    }

    /// `pto.addptr %p, %off : T -> T`.
    fn addptr(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let ptr = self.value()?;
        self.expect_punct(',')?;
        let offset = self.value()?;
        let t = self.operand_to_result_type()?;
        Ok((OpKind::AddPtr { ptr, offset }, vec![t]))
    }

    /// `pto.load_scalar %p[%off] : T -> T`.
    fn load_scalar(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let ptr = self.value()?;
        self.expect_punct('[')?;
        let offset = self.value()?;
        self.expect_punct(']')?;
        let t = self.operand_to_result_type()?;
        Ok((OpKind::LoadScalar { ptr, offset }, vec![t]))
    }

    /// `pto.store_scalar %v, %p[%off] : T, T`.
    fn store_scalar(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let value = self.value()?;
        self.expect_punct(',')?;
        let ptr = self.value()?;
        self.expect_punct('[')?;
        let offset = self.value()?;
        self.expect_punct(']')?;
        self.opt_attr_dict()?;
        self.expect_punct(':')?;
        self.ty()?;
        self.expect_punct(',')?;
        self.ty()?;
        Ok((OpKind::StoreScalar { value, ptr, offset }, vec![]))
    }

    /// `pto.reserve_buffer {name, size, location, auto[, base]} -> T`.
    fn reserve_buffer(&mut self, span: Span) -> DiagResult<(OpKind, Vec<Type>)> {
        let attrs = self.attr_dict()?;
        self.opt_attr_dict()?;
        self.expect_arrow()?;
        let t = self.ty()?;
        let get = |k: &str| attrs.iter().find(|a| a.name == k).map(|a| &a.value);
        let Some(Attr::Str(bname)) = get("name") else {
            return self.err_at(span, "pto.reserve_buffer needs 'name = \"...\"'");
        };
        let Some(size) = get("size").and_then(Attr::as_int) else {
            return self.err_at(span, "pto.reserve_buffer needs 'size = N'");
        };
        let location = match get("location") {
            Some(Attr::Pto { value, .. }) => TileLoc::from_name(value),
            _ => None,
        };
        let Some(location) = location else {
            return self.err_at(
                span,
                "pto.reserve_buffer needs 'location = #pto.address_space<vec|mat>'",
            );
        };
        let auto_alloc = matches!(get("auto"), Some(Attr::Bool(true)));
        let base = get("base").and_then(Attr::as_int);
        if !auto_alloc && base.is_none() {
            return self.err_at(
                span,
                "pto.reserve_buffer with 'auto = false' needs 'base = N'",
            );
        }
        Ok((
            OpKind::ReserveBuffer {
                name: bname.clone(),
                size,
                location,
                auto_alloc,
                base,
            },
            vec![t],
        ))
    }

    /// `pto.import_reserved_buffer {name, peer_func} -> T`.
    fn import_reserved_buffer(&mut self, span: Span) -> DiagResult<(OpKind, Vec<Type>)> {
        let attrs = self.attr_dict()?;
        self.opt_attr_dict()?;
        self.expect_arrow()?;
        let t = self.ty()?;
        let get = |k: &str| attrs.iter().find(|a| a.name == k).map(|a| &a.value);
        let (Some(Attr::Str(bname)), Some(Attr::Symbol(peer))) = (get("name"), get("peer_func"))
        else {
            return self.err_at(
                span,
                "pto.import_reserved_buffer needs 'name = \"...\"' and 'peer_func = @f'",
            );
        };
        Ok((
            OpKind::ImportReservedBuffer {
                name: bname.clone(),
                peer_func: peer.clone(),
            },
            vec![t],
        ))
    }

    /// `pto.aic_initialize_pipe` / `aiv_` `{attrs} (key = %v : T, ...)`.
    fn initialize_pipe(
        &mut self,
        rest: &str,
        name: &str,
        span: Span,
    ) -> DiagResult<(OpKind, Vec<Type>)> {
        let side = if rest.starts_with("aic") {
            Side::Cube
        } else {
            Side::Vector
        };
        let mut attrs = self.attr_dict()?;
        self.expect_punct('(')?;
        let mut gm = None;
        let mut c2v = None;
        let mut v2c = None;
        let entries = self.comma_list(|p| {
            let key_span = p.span();
            let key = p.ident()?;
            p.expect_punct('=')?;
            let v = p.value()?;
            p.expect_punct(':')?;
            p.ty()?;
            Ok((key, key_span, v))
        })?;
        for (key, key_span, v) in entries {
            let slot = match key.as_str() {
                "gm_slot_buffer" => &mut gm,
                "c2v_consumer_buf" => &mut c2v,
                "v2c_consumer_buf" => &mut v2c,
                _ => return self.err_at(key_span, format!("unknown pipe operand '{key}'")),
            };
            *slot = Some(v);
        }
        self.expect_punct(')')?;
        attrs.extend(self.opt_attr_dict()?);
        let (Some(c2v), Some(v2c)) = (c2v, v2c) else {
            return self.err_at(
                span,
                format!("'{name}' needs c2v_consumer_buf and v2c_consumer_buf"),
            );
        };
        Ok((
            OpKind::InitializePipe {
                side,
                attrs,
                gm_slot_buffer: gm,
                c2v_consumer_buf: c2v,
                v2c_consumer_buf: v2c,
            },
            vec![],
        ))
    }

    /// `pto.tpush_to_aiv` / `_aic` `(%t : T) {attrs}`.
    fn tpush(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let side = if rest == "tpush_to_aiv" {
            Side::Cube
        } else {
            Side::Vector
        };
        self.expect_punct('(')?;
        let tile = self.value()?;
        self.expect_punct(':')?;
        self.ty()?;
        self.expect_punct(')')?;
        let mut attrs = self.attr_dict()?;
        attrs.extend(self.opt_attr_dict()?);
        Ok((OpKind::TPush { side, tile, attrs }, vec![]))
    }

    /// `pto.tpop_from_aic` / `_aiv` `[(%r, %c[ : T, T])] {attrs} -> T`.
    fn tpop(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let side = if rest == "tpop_from_aic" {
            Side::Vector
        } else {
            Side::Cube
        };
        let mut valid = None;
        if self.eat_punct('(')? {
            let r = self.value()?;
            self.expect_punct(',')?;
            let c = self.value()?;
            if self.eat_punct(':')? {
                self.comma_list(|p| p.ty())?;
            }
            self.expect_punct(')')?;
            valid = Some((r, c));
        }
        let mut attrs = self.attr_dict()?;
        attrs.extend(self.opt_attr_dict()?);
        self.expect_arrow()?;
        let t = self.ty()?;
        Ok((OpKind::TPop { side, valid, attrs }, vec![t]))
    }

    /// `pto.tfree_from_aic` / `_aiv` `[(%t : T)] {attrs}`.
    fn tfree(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let side = if rest == "tfree_from_aic" {
            Side::Vector
        } else {
            Side::Cube
        };
        if self.eat_punct('(')? {
            // Newer spelling names the freed entry; the slot freed is the oldest one
            // either way.
            self.value()?;
            self.expect_punct(':')?;
            self.ty()?;
            self.expect_punct(')')?;
        }
        let mut attrs = self.attr_dict()?;
        attrs.extend(self.opt_attr_dict()?);
        Ok((OpKind::TFree { side, attrs }, vec![]))
    }

    /// `pto.set_flag` / `wait_flag` / `record_event` / `wait_event` `[src, dst, event]`.
    fn flag(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        self.expect_punct('[')?;
        let src = self.attr()?;
        self.expect_punct(',')?;
        let dst = self.attr()?;
        self.expect_punct(',')?;
        let event = self.attr()?;
        self.expect_punct(']')?;
        self.opt_attr_dict()?;
        Ok((
            OpKind::Flag {
                name: rest.to_string(),
                src,
                dst,
                event,
            },
            vec![],
        ))
    }

    /// `pto.barrier <pipe>`.
    fn barrier(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let pipe = self.attr()?;
        self.opt_attr_dict()?;
        Ok((
            OpKind::Barrier {
                name: rest.to_string(),
                pipe,
            },
            vec![],
        ))
    }

    /// `pto.barrier_sync [<pipe>]`.
    fn barrier_sync(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        self.expect_punct('[')?;
        let pipe = self.attr()?;
        self.expect_punct(']')?;
        self.opt_attr_dict()?;
        Ok((
            OpKind::Barrier {
                name: rest.to_string(),
                pipe,
            },
            vec![],
        ))
    }

    /// `pto.cmo.cacheinvalid %p single_cache_line [: T]` or `all <space>`.
    fn cache_invalid(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let (target, space) = if self.eat_ident("all")? {
            (None, Some(self.attr()?))
        } else {
            let v = self.value()?;
            if !self.eat_ident("single_cache_line")? {
                return self.expected("'single_cache_line' or 'all'");
            }
            (Some(v), None)
        };
        self.opt_attr_dict()?;
        if target.is_some() && self.eat_punct(':')? {
            self.ty()?;
        }
        Ok((OpKind::CacheInvalid { target, space }, vec![]))
    }

    /// `pto.comm.tnotify` / `twait` `(%signal, %value : T, T) {attrs}`.
    fn comm_signal(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        self.expect_punct('(')?;
        let signal = self.value()?;
        self.expect_punct(',')?;
        let value = self.value()?;
        self.expect_punct(':')?;
        self.ty()?;
        self.expect_punct(',')?;
        self.ty()?;
        self.expect_punct(')')?;
        let attrs = self.opt_attr_dict()?;
        Ok((
            OpKind::Signal {
                name: rest.to_string(),
                signal,
                value,
                attrs,
            },
            vec![],
        ))
    }

    /// `pto.comm.tput` / `tget` `(%dst, %src, buf(%stage, ...) : T, ...) {attrs}`.
    fn comm_copy(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        self.expect_punct('(')?;
        let dst = self.value()?;
        self.expect_punct(',')?;
        let src = self.value()?;
        self.expect_punct(',')?;
        self.expect_ident("buf")?;
        self.expect_punct('(')?;
        let stages = self.comma_list(|p| p.value())?;
        self.expect_punct(')')?;
        self.expect_punct(':')?;
        let types = self.comma_list(|p| p.ty())?;
        if types.len() != stages.len() + 2 {
            return self.err(format!(
                "{} operand(s) but {} type(s)",
                stages.len() + 2,
                types.len()
            ));
        }
        self.expect_punct(')')?;
        let attrs = self.opt_attr_dict()?;
        Ok((
            OpKind::CommCopy {
                name: rest.to_string(),
                dst,
                src,
                stages,
                attrs,
            },
            vec![],
        ))
    }

    /// `pto.fence.barrier_all <scope>`.
    fn fence(&mut self) -> DiagResult<(OpKind, Vec<Type>)> {
        let scope = self.attr()?;
        self.opt_attr_dict()?;
        Ok((OpKind::Fence { scope }, vec![]))
    }

    /// `pto.section.cube` / `.vector` `{ region }`.
    fn section(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let kind = if rest == "section.cube" {
            KernelKind::Cube
        } else {
            KernelKind::Vector
        };
        self.push_scope();
        let body: Block = self.region_block(&[])?;
        self.pop_scope();
        self.opt_attr_dict()?;
        Ok((OpKind::Section { kind, body }, vec![]))
    }

    /// A block query (`pto.get_block_idx`, ...) `[: T]`; `i64` when untyped.
    fn query(&mut self, rest: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        self.opt_attr_dict()?;
        let mut t = Type::Scalar(ScalarType::I64);
        if self.eat_punct(':')? {
            t = self.ty()?;
        }
        Ok((
            OpKind::Query {
                name: rest.to_string(),
            },
            vec![t],
        ))
    }

    /// `ins(%a[{attrs}], ... [{attrs}] : T, ...) [outs(%d : T)] [{attrs}] [-> T]`.
    fn tile_op(&mut self, name: &str) -> DiagResult<(OpKind, Vec<Type>)> {
        let mut ins = Vec::new();
        let mut attrs = Vec::new();
        let mut attrs_in_ins = false;
        if self.eat_ident("ins")? {
            self.expect_punct('(')?;
            // One or more groups `%a[ {attrs}], ...[, {attrs}] : T, ...` separated by commas
            // (`ins(%acc : T, %pre : i64)` writes each operand with its own type).
            let mut more = !self.is_punct(')') && !self.is_punct(':');
            while more {
                let mut group = 0usize;
                let items = self.comma_list(|p| {
                    // An attribute dictionary may stand on its own in the list
                    // (`ins(%src, {maskPattern = ...} : T)`).
                    let v = if p.is_punct('{') {
                        None
                    } else {
                        Some(p.value()?)
                    };
                    let a = if p.is_punct('{') {
                        p.attr_dict()?
                    } else {
                        Vec::new()
                    };
                    Ok((v, a))
                })?;
                for (v, a) in items {
                    if let Some(v) = v {
                        ins.push(v);
                        group += 1;
                    }
                    if !a.is_empty() {
                        attrs_in_ins = true;
                    }
                    attrs.extend(a);
                }
                if self.is_punct('{') {
                    attrs.extend(self.attr_dict()?);
                    attrs_in_ins = true;
                }
                self.expect_punct(':')?;
                let mut types = vec![self.ty()?];
                more = false;
                while self.eat_punct(',')? {
                    if matches!(self.peek(), Tok::Value(_)) {
                        more = true;
                        break;
                    }
                    if types.len() >= MAX_LIST {
                        return self.err("list too long");
                    }
                    types.push(self.ty()?);
                }
                if types.len() != group {
                    return self.err(format!(
                        "{group} input(s) but {} type(s) in ins(...)",
                        types.len()
                    ));
                }
            }
            self.expect_punct(')')?;
        }
        let mut outs = Vec::new();
        if self.eat_ident("outs")? {
            self.expect_punct('(')?;
            if !self.is_punct(')') {
                outs = self.comma_list(|p| p.value())?;
                self.expect_punct(':')?;
                let types = self.comma_list(|p| p.ty())?;
                if types.len() != outs.len() {
                    return self.err(format!(
                        "{} output(s) but {} type(s) in outs(...)",
                        outs.len(),
                        types.len()
                    ));
                }
            }
            self.expect_punct(')')?;
        }
        attrs.extend(self.opt_attr_dict()?);
        let mut results = Vec::new();
        if *self.peek() == Tok::Arrow {
            self.bump()?;
            results.push(self.ty()?);
        }
        Ok((
            OpKind::Tile {
                name: name.to_string(),
                ins,
                outs,
                attrs,
                attrs_in_ins,
            },
            results,
        ))
    }
}

/// The value of a float constant written as its bit pattern.
fn float_from_bits(bits: i64, ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F32 => f64::from(f32::from_bits(bits as u32)),
        ScalarType::F64 => f64::from_bits(bits as u64),
        ScalarType::F16 => half_bits_to_f64(bits as u16, 5, 10),
        ScalarType::BF16 => f64::from(f32::from_bits((bits as u32 & 0xffff) << 16)),
        _ => bits as f64,
    }
}

fn half_bits_to_f64(h: u16, _exp_bits: u32, _man_bits: u32) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((h >> 10) & 0x1f);
    let m = f64::from(h & 0x3ff);
    match e {
        0 => sign * m * 2f64.powi(-24),
        31 => {
            if m == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}
