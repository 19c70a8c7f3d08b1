//! Constant folding over a function: which index and integer values are known at
//! translation time, so static extents and strides become template arguments
//! (`pto::Shape<1, 1, 1, 16, 256>`) as in ptoas's output.

use std::collections::HashMap;

use crate::ir::{walk, BinOp, CastOp, Func, Literal, OpKind, ValueId};
use crate::types::ScalarType;

/// The known integer values of a function.
#[derive(Debug, Default)]
pub struct Consts {
    map: HashMap<ValueId, i64>,
}

fn truncate(v: i64, ty: Option<ScalarType>) -> i64 {
    match ty {
        Some(ScalarType::I1) => v & 1,
        Some(ScalarType::I8) => v as i8 as i64,
        Some(ScalarType::I16) => v as i16 as i64,
        Some(ScalarType::I32) => v as i32 as i64,
        Some(ScalarType::U8) => v as u8 as i64,
        Some(ScalarType::U16) => v as u16 as i64,
        Some(ScalarType::U32) => v as u32 as i64,
        _ => v,
    }
}

impl Consts {
    /// Folds the constants of `f`.
    pub fn of(f: &Func) -> Consts {
        let mut c = Consts::default();
        let Some(body) = &f.body else { return c };
        walk(body, &mut |op| {
            let Some(&r) = op.results.first() else { return };
            let rty = f.ty(r).scalar();
            let v = match &op.kind {
                OpKind::Constant {
                    value: Literal::Int(v),
                    ..
                } => Some(*v),
                OpKind::Binary { op: b, lhs, rhs } => match (c.get(*lhs), c.get(*rhs)) {
                    (Some(a), Some(b2)) => fold(*b, a, b2),
                    _ => None,
                },
                OpKind::Cast {
                    op: CastOp::IndexCast | CastOp::ExtSI | CastOp::TruncI,
                    operand,
                } => c.get(*operand),
                OpKind::Cast {
                    op: CastOp::IndexCastUI | CastOp::ExtUI,
                    operand,
                } => c.get(*operand).map(|v| {
                    let src = f.ty(*operand).scalar();
                    match src.map(|s| s.bits()) {
                        Some(b) if b < 64 => v & ((1i64 << b) - 1),
                        _ => v,
                    }
                }),
                OpKind::Select {
                    cond,
                    on_true,
                    on_false,
                } => match c.get(*cond) {
                    Some(0) => c.get(*on_false),
                    Some(_) => c.get(*on_true),
                    None => None,
                },
                _ => None,
            };
            if let Some(v) = v {
                if rty.is_some_and(|t| t.is_int()) {
                    c.map.insert(r, truncate(v, rty));
                }
            }
        });
        c
    }

    /// The value of `v`, if known.
    pub fn get(&self, v: ValueId) -> Option<i64> {
        self.map.get(&v).copied()
    }
}

fn fold(op: BinOp, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        BinOp::AddI => a.wrapping_add(b),
        BinOp::SubI => a.wrapping_sub(b),
        BinOp::MulI => a.wrapping_mul(b),
        BinOp::DivSI => a.checked_div(b)?,
        BinOp::RemSI => a.checked_rem(b)?,
        BinOp::MinSI => a.min(b),
        BinOp::MaxSI => a.max(b),
        BinOp::AndI => a & b,
        BinOp::OrI => a | b,
        BinOp::XorI => a ^ b,
        BinOp::ShLI if (0..64).contains(&b) => a.wrapping_shl(b as u32),
        BinOp::ShRSI if (0..64).contains(&b) => a >> b,
        BinOp::CeilDivSI if b != 0 => {
            let q = a.checked_div(b)?;
            if a % b != 0 && ((a < 0) == (b < 0)) {
                q + 1
            } else {
                q
            }
        }
        BinOp::FloorDivSI if b != 0 => {
            let q = a.checked_div(b)?;
            if a % b != 0 && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            }
        }
        _ => return None,
    })
}
