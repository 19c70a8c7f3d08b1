//! The type rules of the distributed operations (`pypto.language.distributed`, imported as
//! `pld`): those of a HOST function — the world size, window buffers, the window view of one
//! rank's slice and its comm context, the rank slice `x[r]` of a host tensor (lowered to
//! `host_orch.py` by [`crate::codegen::host`]) — and those of a kernel — the rank and rank
//! count, remote loads and stores, signals (lowered to `.pto` by `codegen::pto`).

use crate::ir::{Attrs, Expr};
use crate::ops::OpError;
use crate::types::{DataType, MemorySpace, Type};

fn err<T>(message: String, hint: &str) -> Result<T, OpError> {
    Err(OpError {
        message,
        hint: hint.to_string(),
    })
}

fn shape_dtype(op: &str, kwargs: &Attrs) -> Result<(Vec<i64>, DataType), OpError> {
    let shape = match kwargs.ints("shape") {
        Some(s) if !s.is_empty() && s.iter().all(|&d| d > 0) => s.to_vec(),
        _ => {
            return err(
                format!("{op}: the shape must be a list of positive integer literals"),
                "Write pld.alloc_window_buffer([1, 256], dtype=pl.FP32).",
            )
        }
    };
    let Some(dtype) = kwargs.dtype("dtype") else {
        return err(
            format!("{op}: dtype missing"),
            "Write dtype=pl.FP32 (or another numeric pl dtype).",
        );
    };
    if dtype.runtime_enum().is_none() {
        return err(
            format!("{op}: a window cannot hold {}", dtype.pl_name()),
            "Use a numeric element type.",
        );
    }
    Ok((shape, dtype))
}

/// The result type of the distributed operation `name` (`dist.*`).
pub fn deduce(name: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    let op = name;
    match name {
        "dist.world_size" => {
            if !args.is_empty() {
                return err(
                    format!("{op} takes no arguments"),
                    "Write pld.world_size().",
                );
            }
            Ok(Type::Scalar(DataType::Index))
        }
        "dist.alloc_window_buffer" => {
            let (shape, dtype) = shape_dtype(op, kwargs)?;
            Ok(Type::tensor(shape, dtype))
        }
        "dist.window" => {
            let (shape, dtype) = shape_dtype(op, kwargs)?;
            match args.first().map(Expr::ty) {
                Some(Type::Tensor(buf)) if args.len() == 1 => {
                    let need = shape.iter().product::<i64>() as u64 * dtype.size_bytes();
                    let have = buf.shape.iter().product::<i64>() as u64 * buf.dtype.size_bytes();
                    if need > have {
                        return err(
                            format!("{op}: a {need}-byte view does not fit the {have}-byte window buffer"),
                            "View at most the buffer's bytes.",
                        );
                    }
                    Ok(Type::tensor(shape, dtype))
                }
                _ => err(
                    format!("{op} takes one window buffer"),
                    "Write pld.window(buf, [1, 256], dtype=pl.FP32) with buf from pld.alloc_window_buffer.",
                ),
            }
        }
        "dist.slice" => rank_slice(op, args, kwargs),
        "dist.device_ctx" => Ok(Type::Scalar(DataType::UInt64)),
        "dist.rank" | "dist.nranks" => {
            ctx_arg(op, args, 0)?;
            Ok(Type::Scalar(DataType::Index))
        }
        // remote_load(window, peer, offsets, ctx; shape)
        "dist.remote_load" => {
            let t = window_arg(op, args, 0)?;
            ctx_arg(op, args, 3)?;
            match kwargs.ints("shape") {
                Some(&[r, c]) if r > 0 && c > 0 => Ok(Type::tile(r, c, t.dtype, MemorySpace::Vec)),
                Some(&[c]) if c > 0 => Ok(Type::tile(1, c, t.dtype, MemorySpace::Vec)),
                _ => err(
                    format!("{op}: shape must be [rows, cols] of positive literals"),
                    "Write pld.tile.remote_load(win, peer=p, offsets=[0, 0], shape=[1, 64]).",
                ),
            }
        }
        // remote_store(tile, window, peer, offsets, ctx)
        "dist.remote_store" => {
            let t = window_arg(op, args, 1)?;
            ctx_arg(op, args, 4)?;
            Ok(Type::Tensor(t))
        }
        // put(dst, peer, src, ctx of dst; atomic) / get(dst, peer, src, ctx of src)
        "dist.put" | "dist.get" => {
            let dst = window_arg(op, args, 0)?;
            let src = window_arg(op, args, 2)?;
            ctx_arg(op, args, 3)?;
            if dst != src {
                return err(
                    format!(
                        "{op}: the source {} and the destination {} differ",
                        Type::Tensor(src).describe(),
                        Type::Tensor(dst).describe()
                    ),
                    "Copy between window tensors of one shape and dtype.",
                );
            }
            Ok(Type::Unit)
        }
        // notify(signal, peer, offsets, value, ctx; op) / wait(signal, offsets, expected; cmp)
        "dist.notify" | "dist.wait" => {
            let t = window_arg(op, args, 0)?;
            if t.dtype != DataType::Int32 {
                return err(
                    format!(
                        "{op}: the signal must be an INT32 window tensor, got {}",
                        Type::Tensor(t).describe()
                    ),
                    "Declare it pld.DistributedTensor[[n, 1], pl.INT32].",
                );
            }
            if op == "dist.notify" {
                ctx_arg(op, args, 4)?;
            }
            Ok(Type::Unit)
        }
        _ => err(
            format!("Unknown operation '{name}'"),
            "Distributed operations: pld.world_size, pld.alloc_window_buffer, pld.window.",
        ),
    }
}

fn window_arg(op: &str, args: &[Expr], i: usize) -> Result<crate::types::TensorType, OpError> {
    match args.get(i).map(Expr::ty) {
        Some(Type::Tensor(t)) => Ok(t),
        _ => err(
            format!("{op}: argument {} must be a pld.DistributedTensor", i + 1),
            "Pass a window tensor parameter of the kernel.",
        ),
    }
}

fn ctx_arg(op: &str, args: &[Expr], i: usize) -> Result<(), OpError> {
    match args.get(i).map(Expr::ty) {
        Some(Type::Scalar(DataType::UInt64)) => Ok(()),
        _ => err(
            format!("{op}: expected a comm context"),
            "Write ctx = pld.get_comm_ctx(window_param).",
        ),
    }
}

/// `x[r, a:b, ...]` of a host tensor: integer indices drop their axis (`drop`), slices keep
/// it; `shape` holds one size per source axis (1 for a dropped one).
fn rank_slice(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    let (Some(Type::Tensor(src)), Some(Expr::List(offsets))) =
        (args.first().map(Expr::ty), args.get(1))
    else {
        return err(
            format!("{op} takes a tensor and a list of offsets"),
            "Index host tensors as x[r] or x[r, 0:8].",
        );
    };
    let shape = kwargs.ints("shape").unwrap_or(&[]);
    let drop = kwargs.ints("drop").unwrap_or(&[]);
    if offsets.len() != src.shape.len() || shape.len() != src.shape.len() {
        return err(
            format!(
                "{op}: a rank-{} tensor needs {} offsets and sizes",
                src.shape.len(),
                src.shape.len()
            ),
            "Give one index or slice per axis.",
        );
    }
    for (axis, (&size, &dim)) in shape.iter().zip(&src.shape).enumerate() {
        let start = offsets[axis].as_const_int().unwrap_or(0);
        if size <= 0 || (dim > 0 && start + size > dim) {
            return err(
                format!(
                    "{op}: axis {axis} takes [{start}, {}) of a dimension of {dim}",
                    start + size
                ),
                "Stay inside the tensor.",
            );
        }
    }
    let kept: Vec<i64> = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(&(*i as i64)))
        .map(|(_, &s)| s)
        .collect();
    if kept.is_empty() {
        return err(
            format!("{op}: every axis is indexed, which leaves a scalar"),
            "Keep at least one axis (x[r] of a rank-2 or higher tensor).",
        );
    }
    Ok(Type::tensor(kept, src.dtype))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AttrValue, Var};

    fn kw(items: &[(&str, AttrValue)]) -> Attrs {
        let mut a = Attrs::new();
        for (k, v) in items {
            a.set(k, v.clone());
        }
        a
    }

    #[test]
    fn a_window_is_a_view_no_larger_than_its_buffer() {
        let buf_kw = kw(&[
            ("shape", AttrValue::Ints(vec![2, 64])),
            ("dtype", AttrValue::DType(DataType::Fp32)),
        ]);
        let buf_ty = deduce("dist.alloc_window_buffer", &[], &buf_kw).unwrap();
        assert_eq!(buf_ty, Type::tensor(vec![2, 64], DataType::Fp32));
        let buf = Expr::Var(Var::new("buf", buf_ty));
        let view = kw(&[
            ("shape", AttrValue::Ints(vec![1, 128])),
            ("dtype", AttrValue::DType(DataType::Fp32)),
        ]);
        assert_eq!(
            deduce("dist.window", std::slice::from_ref(&buf), &view).unwrap(),
            Type::tensor(vec![1, 128], DataType::Fp32)
        );
        let big = kw(&[
            ("shape", AttrValue::Ints(vec![4, 64])),
            ("dtype", AttrValue::DType(DataType::Fp32)),
        ]);
        let e = deduce("dist.window", &[buf], &big).unwrap_err();
        assert!(
            e.message
                .contains("does not fit the 512-byte window buffer"),
            "{}",
            e.message
        );
        let e = deduce(
            "dist.alloc_window_buffer",
            &[],
            &kw(&[("shape", AttrValue::Ints(vec![4]))]),
        )
        .unwrap_err();
        assert!(e.message.contains("dtype missing"));
    }

    #[test]
    fn a_rank_slice_drops_the_indexed_axes() {
        let x = Expr::Var(Var::new("x", Type::tensor(vec![3, 4, 8], DataType::Fp16)));
        let r = Expr::Var(Var::new("r", Type::Scalar(DataType::Index)));
        let offs = Expr::List(vec![r, Expr::index(0), Expr::index(2)]);
        let a = kw(&[
            ("shape", AttrValue::Ints(vec![1, 4, 4])),
            ("drop", AttrValue::Ints(vec![0])),
        ]);
        assert_eq!(
            deduce("dist.slice", &[x.clone(), offs.clone()], &a).unwrap(),
            Type::tensor(vec![4, 4], DataType::Fp16)
        );
        let out = kw(&[
            ("shape", AttrValue::Ints(vec![1, 4, 8])),
            ("drop", AttrValue::Ints(vec![0])),
        ]);
        let e = deduce("dist.slice", &[x, offs], &out).unwrap_err();
        assert!(
            e.message
                .contains("axis 2 takes [2, 10) of a dimension of 8"),
            "{}",
            e.message
        );
        assert_eq!(
            deduce("dist.world_size", &[], &Attrs::new()).unwrap(),
            Type::Scalar(DataType::Index)
        );
    }
}
