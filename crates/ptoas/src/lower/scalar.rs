//! The `arith` and `math` ops: C++ scalar expressions, each result a new variable (16-bit
//! floats computed through `float`).

use super::{invalid, unsupported, FnLower};
use crate::cpp::Stmt;
use crate::error::DiagResult;
use crate::ir::{BinOp, CastOp, Literal, Op, ValueId};
use crate::printer::float_text;
use crate::types::ScalarType;

impl FnLower<'_> {
    /// `arith.constant`: a `const` C++ variable, a candidate for [`super::unused`].
    pub(super) fn constant(
        &mut self,
        op: &Op,
        value: &Literal,
        ty: ScalarType,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let r0 = op.results.first().copied();
        let lit = match value {
            Literal::Int(v) => int_literal(*v, ty),
            Literal::Float(v) => float_literal(*v, ty),
        };
        if let Some(r) = r0 {
            self.declare(out, r, ty.cpp(), lit, true);
            if let Some(name) = self.names.get(&r) {
                self.constants.insert(name.clone());
            }
        }
        Ok(())
    }

    /// `arith` binary ops.
    pub(super) fn binary(
        &mut self,
        op: &Op,
        bop: BinOp,
        lhs: ValueId,
        rhs: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let a = self.expr(lhs, span)?;
        let b = self.expr(rhs, span)?;
        let ty = self.scalar_of(lhs, span)?;
        let e = binary_expr(bop, ty, &a, &b);
        if let Some(r) = r0 {
            let rt = self.scalar_of(r, span)?;
            self.declare(out, r, rt.cpp(), e, false);
        }
        Ok(())
    }

    /// `arith.negf` (through `float` for the 16-bit types).
    pub(super) fn negf(
        &mut self,
        op: &Op,
        operand: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let a = self.expr(operand, span)?;
        if let Some(r) = r0 {
            let rt = self.scalar_of(r, span)?;
            let e = if matches!(rt, ScalarType::F16 | ScalarType::BF16) {
                format!("({}) (-(float) {a})", rt.cpp())
            } else {
                format!("-{a}")
            };
            self.declare(out, r, rt.cpp(), e, false);
        }
        Ok(())
    }

    /// `arith.cmpi` / `arith.cmpf`: a `bool`.
    pub(super) fn cmp(
        &mut self,
        op: &Op,
        float: bool,
        pred: &str,
        lhs: ValueId,
        rhs: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let a = self.expr(lhs, span)?;
        let b = self.expr(rhs, span)?;
        let ty = self.scalar_of(lhs, span)?;
        let e = if float {
            cmpf_expr(pred, &a, &b)
        } else {
            cmpi_expr(pred, ty, &a, &b)
        };
        if let Some(r) = r0 {
            self.declare(out, r, "bool", e, false);
        }
        Ok(())
    }

    /// The `arith` casts; `arith.bitcast` through `std::memcpy`.
    pub(super) fn cast(
        &mut self,
        op: &Op,
        cop: CastOp,
        operand: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let a = self.expr(operand, span)?;
        let src = self.scalar_of(operand, span)?;
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
                    let e = cast_expr(cop, src, dst, &a);
                    self.declare(out, r, dst.cpp(), e, false);
                }
            }
        }
        Ok(())
    }

    /// `arith.select`: a conditional expression.
    pub(super) fn select(
        &mut self,
        op: &Op,
        cond: ValueId,
        on_true: ValueId,
        on_false: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let c = self.expr(cond, span)?;
        let a = self.expr(on_true, span)?;
        let b = self.expr(on_false, span)?;
        if let Some(r) = r0 {
            let ty = self.cpp_type(r, span)?;
            self.declare(out, r, &ty, format!("{c} ? {a} : {b}"), false);
        }
        Ok(())
    }

    /// The `math` functions.
    pub(super) fn math(
        &mut self,
        op: &Op,
        func: &str,
        operand: ValueId,
        out: &mut Vec<Stmt>,
    ) -> DiagResult<()> {
        let span = op.span;
        let r0 = op.results.first().copied();
        let a = self.expr(operand, span)?;
        let ty = self.scalar_of(operand, span)?;
        let e = math_expr(func, ty, &a).ok_or_else(|| {
            unsupported(
                span,
                format!("'math.{func}' on {} is not supported", ty.name()),
            )
        })?;
        if let Some(r) = r0 {
            self.declare(out, r, ty.cpp(), e, false);
        }
        Ok(())
    }
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
