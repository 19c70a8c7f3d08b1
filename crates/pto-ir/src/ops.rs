//! The builtin operations and their type rules: what each `tile.*` / `tensor.*` operation
//! takes and what it returns. The front end builds every operation call through
//! [`deduce`], so an ill-typed call is refused where it is written, with a message naming the
//! operation and the offending operand, and a hint.
//!
//! Tile operations (kernel bodies and `pl.at` scopes) lower one to one to PTO-ISA
//! instructions of the header (`docs/PTO_ISA.md`); tensor operations belong to
//! orchestrations. [`OPS`] (in `ops/table.rs`) lists every operation with its DSL spellings,
//! kind, `.pto` op and element semantics.

use crate::ir::{Attrs, Expr};
use crate::types::{DataType, MemorySpace, TensorType, TileType, Type, DYNAMIC_DIM};

mod table;
pub use table::*;

/// A refused operation call: the message and a hint for the fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OpError {
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

fn err<T>(message: String, hint: &str) -> Result<T, OpError> {
    Err(OpError {
        message,
        hint: hint.to_string(),
    })
}

/// Combine modes of a `tile.store` (`atomic=`): `none` overwrites, `add` adds atomically
/// into the tensor (PyPTO's `pl.AtomicType.None_` / `Add`, TSTORE's `AtomicType`).
pub const STORE_ATOMICS: &[&str] = &["none", "add"];

/// Rounding modes of `pl.cast(..., mode=...)`.
pub const CAST_MODES: &[&str] = &["none", "rint", "round", "floor", "ceil", "trunc", "odd"];

fn tile_arg(op: &str, args: &[Expr], i: usize, what: &str) -> Result<TileType, OpError> {
    match args.get(i).map(Expr::ty) {
        Some(Type::Tile(t)) => Ok(t),
        Some(other) => err(
            format!("{op}: {what} must be a Tile, got {}", other.describe()),
            "Load tensors into tiles with pl.load(tensor, offsets, shapes) first.",
        ),
        None => err(
            format!("{op}: missing {what}"),
            "Check the operation's arguments.",
        ),
    }
}

fn tensor_arg(op: &str, args: &[Expr], i: usize, what: &str) -> Result<TensorType, OpError> {
    match args.get(i).map(Expr::ty) {
        Some(Type::Tensor(t)) => Ok(t),
        Some(other) => err(
            format!("{op}: {what} must be a Tensor, got {}", other.describe()),
            "Pass a tensor parameter or a tensor created with pl.create_tensor.",
        ),
        None => err(
            format!("{op}: missing {what}"),
            "Check the operation's arguments.",
        ),
    }
}

fn scalar_arg(op: &str, args: &[Expr], i: usize, what: &str) -> Result<DataType, OpError> {
    match args.get(i).map(Expr::ty) {
        Some(Type::Scalar(d)) => Ok(d),
        Some(other) => err(
            format!("{op}: {what} must be a scalar, got {}", other.describe()),
            "Pass a Python number or a pl.Scalar value.",
        ),
        None => err(
            format!("{op}: missing {what}"),
            "Check the operation's arguments.",
        ),
    }
}

fn list_arg<'a>(op: &str, args: &'a [Expr], i: usize, what: &str) -> Result<&'a [Expr], OpError> {
    match args.get(i) {
        Some(Expr::List(items)) => {
            for e in items {
                match e.ty() {
                    Type::Scalar(d) if d.is_int() => {}
                    other => {
                        return err(
                            format!(
                                "{op}: every entry of {what} must be an integer, got {}",
                                other.describe()
                            ),
                            "Use Python ints or integer pl.Scalar values.",
                        )
                    }
                }
            }
            Ok(items)
        }
        _ => err(
            format!("{op}: {what} must be a list literal, e.g. [0, 0]"),
            "Write the offsets as a list: [row, col].",
        ),
    }
}

fn ints_kw<'a>(op: &str, kwargs: &'a Attrs, key: &str) -> Result<&'a [i64], OpError> {
    match kwargs.ints(key) {
        Some(v) => {
            if let Some(bad) = v.iter().find(|&&d| d <= 0) {
                return err(
                    format!("{op}: {key} entries must be positive integers, got {bad}"),
                    "Shapes are static positive integers.",
                );
            }
            Ok(v)
        }
        None => err(
            format!("{op}: {key} must be a list of integer literals"),
            "Shapes are static: write them as [16, 16].",
        ),
    }
}

/// An accumulator written into a Mat tile of a narrower float type (the cube's FIXPIPE
/// write-back rounds to nearest even): the one `tile.assemble` that changes the dtype.
fn fixpipe_narrowing(source: &TileType, target: &TileType) -> bool {
    source.memory == MemorySpace::Acc
        && target.memory == MemorySpace::Mat
        && source.dtype == DataType::Fp32
        && matches!(target.dtype, DataType::Bf16 | DataType::Fp16)
}

/// `tile.alloc(shape=, dtype=, target_memory=)`: a tile of a cube memory whose contents are
/// unspecified until written: a Mat scratch (written by `tile.assemble`) or an Acc
/// accumulator (a loop's first `tile.matmul` replaces it).
fn alloc_type(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    if !args.is_empty() {
        return err(
            format!("{op}: takes no operands"),
            "Write the shape, dtype and memory as keywords.",
        );
    }
    let shape = ints_kw(op, kwargs, "shape")?;
    let (Some(dtype), Some(memory)) = (kwargs.dtype("dtype"), kwargs.memory("target_memory"))
    else {
        return err(format!("{op}: dtype and target_memory are required"), "");
    };
    if shape.len() != 2 || !matches!(memory, MemorySpace::Mat | MemorySpace::Acc) {
        return err(
            format!(
                "{op}: a [rows, cols] tile in pl.Mem.Mat or pl.Mem.Acc is allocated, got {shape:?} in pl.Mem.{}",
                memory.name()
            ),
            "Vector scratch tiles are pl.create_tile(..., target_memory=pl.Mem.Vec).",
        );
    }
    let t = TileType {
        rows: shape[0],
        cols: shape[1],
        dtype,
        memory,
    };
    check_tile_fits(op, &t)?;
    Ok(Type::Tile(t))
}

fn check_tile_fits(op: &str, t: &TileType) -> Result<(), OpError> {
    if t.rows <= 0 || t.cols <= 0 {
        return err(
            format!("{op}: tile shape [{}, {}] must be positive", t.rows, t.cols),
            "Use a positive tile shape.",
        );
    }
    let cap = t.memory.capacity_bytes();
    if t.bytes() > cap {
        return err(
            format!(
                "{op}: a [{}, {}] {} tile needs {} bytes, more than the {} memory's {} bytes",
                t.rows,
                t.cols,
                t.dtype.pl_name(),
                t.bytes(),
                t.memory.name(),
                cap
            ),
            "Split the work into smaller tiles (load and process the tensor in pieces).",
        );
    }
    Ok(())
}

/// Checks that a `[rows, cols]` window of `inner` fits in `outer` at `offsets` (two
/// entries; constant offsets are checked against the extents).
fn check_window(
    op: &str,
    outer: &TileType,
    inner: &TileType,
    offsets: &[Expr],
) -> Result<(), OpError> {
    if offsets.len() != 2 {
        return err(
            format!("{op}: a tile offset has two entries, got {}", offsets.len()),
            "Write the offset as [row, col].",
        );
    }
    let extents = [(inner.rows, outer.rows), (inner.cols, outer.cols)];
    for (d, ((size, extent), off)) in extents.iter().zip(offsets).enumerate() {
        let o = off.as_const_int().unwrap_or(0);
        if o < 0 || o + size > *extent {
            return err(
                format!(
                    "{op}: dimension {d}: offset {o} + size {size} is outside the {} tile's extent {extent}",
                    Type::Tile(outer.clone()).describe()
                ),
                "Keep the window inside the larger tile.",
            );
        }
    }
    Ok(())
}

/// Checks `t`'s element type against the element rule of elementwise operation `op` (of
/// its binary form for a tile-scalar op).
fn elems_fit(op: &str, t: &TileType) -> Result<(), OpError> {
    let row = binary_of_scalar(op).or_else(|| op_info(op));
    let elems = match row.map(|o| o.kind) {
        Some(OpKind::Binary { elems, .. } | OpKind::Unary { elems, .. }) => elems,
        _ => Elems::Any,
    };
    match elems {
        Elems::Float if !t.dtype.is_float() => err(
            format!(
                "{op}: needs a floating-point tile, got {}",
                t.dtype.pl_name()
            ),
            "Cast the tile to pl.FP32 first.",
        ),
        Elems::Int if !t.dtype.is_int() => err(
            format!("{op}: needs an integer tile, got {}", t.dtype.pl_name()),
            "Cast the tile to an integer type (pl.INT32) first.",
        ),
        _ => Ok(()),
    }
}

fn same_tiles(op: &str, a: &TileType, b: &TileType) -> Result<(), OpError> {
    if a.rows != b.rows || a.cols != b.cols || a.dtype != b.dtype {
        return err(
            format!(
                "{op}: operands must have the same shape and dtype, got {} and {}",
                Type::Tile(a.clone()).describe(),
                Type::Tile(b.clone()).describe()
            ),
            "Cast or reshape one operand so both match.",
        );
    }
    Ok(())
}

fn vector_tile(op: &str, t: &TileType) -> Result<(), OpError> {
    if t.memory != MemorySpace::Vec {
        return err(
            format!(
                "{op}: operands must be vector (pl.Mem.Vec) tiles, got a pl.Mem.{} tile",
                t.memory.name()
            ),
            "Move the tile to the vector buffer first: pl.move(t, target_memory=pl.Mem.Vec).",
        );
    }
    Ok(())
}

fn check_region(
    op: &str,
    tensor: &TensorType,
    offsets: &[Expr],
    sizes: &[i64],
) -> Result<(), OpError> {
    if offsets.len() != tensor.shape.len() || sizes.len() != tensor.shape.len() {
        return err(
            format!(
                "{op}: a rank-{} tensor needs {} offsets and {} sizes, got {} and {}",
                tensor.shape.len(),
                tensor.shape.len(),
                tensor.shape.len(),
                offsets.len(),
                sizes.len()
            ),
            "Give one offset and one size per tensor dimension.",
        );
    }
    for (d, ((off, size), dim)) in offsets.iter().zip(sizes).zip(&tensor.shape).enumerate() {
        // A dimension known only at run time is checked by the runtime's view.
        if *size == DYNAMIC_DIM || *dim == DYNAMIC_DIM {
            continue;
        }
        if *size > *dim {
            return err(
                format!("{op}: size {size} of dimension {d} exceeds the tensor's {dim}"),
                "Keep the region inside the tensor.",
            );
        }
        if let Some(o) = off.as_const_int() {
            if o < 0 || o + size > *dim {
                return err(
                    format!(
                        "{op}: dimension {d}: offset {o} + size {size} is outside the tensor's extent {dim}"
                    ),
                    "Keep the region inside the tensor.",
                );
            }
        }
    }
    Ok(())
}

/// Checks that a region is a block of whole rows of its tensor folded to `[rows, cols]`
/// (what a 2-D view can address): past the first leading dimension of size > 1, every
/// leading dimension is taken whole.
pub(crate) fn check_rows_contiguous(
    op: &str,
    tensor: &TensorType,
    sizes: &[i64],
) -> Result<(), OpError> {
    let n = sizes.len();
    if n < 3 {
        return Ok(());
    }
    if let Some(first) = (0..n - 1).find(|&d| sizes[d] > 1) {
        for d in first + 1..n - 1 {
            if sizes[d] != tensor.shape[d] {
                return err(
                    format!(
                        "{op}: the region {:?} of a {:?} tensor is not a block of whole rows (dimension {d} is cut while dimension {first} spans {})",
                        sizes, tensor.shape, sizes[first]
                    ),
                    "Load one slice at a time along the outer dimension (size 1 there), or take the inner dimensions whole.",
                );
            }
        }
    }
    Ok(())
}

/// The tile shape of a region of `sizes`: the last size is the columns, the product of the
/// others the rows.
pub fn region_tile_shape(sizes: &[i64]) -> (i64, i64) {
    match sizes.split_last() {
        Some((cols, rest)) => (rest.iter().product(), *cols),
        None => (1, 1),
    }
}

/// The region of a tensor of rank `rank` that a `[rows, cols]` tile covers when stored:
/// `[1, ..., rows, cols]` (`[cols]` for a vector).
pub fn store_region(rank: usize, rows: i64, cols: i64) -> Vec<i64> {
    match rank {
        0 => Vec::new(),
        1 => vec![cols],
        n => {
            let mut v = vec![1; n - 2];
            v.push(rows);
            v.push(cols);
            v
        }
    }
}

/// The result type of calling operation `name` with `args` and `kwargs`.
pub fn deduce(name: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    let op = name;
    match name {
        "tile.load" | "tile.store" => tile_io_type(op, args, kwargs),
        _ if matches!(op_info(name).map(|o| o.kind), Some(OpKind::Binary { .. })) => {
            arity(op, args, 2)?;
            let a = tile_arg(op, args, 0, "lhs")?;
            let b = tile_arg(op, args, 1, "rhs")?;
            vector_tile(op, &a)?;
            vector_tile(op, &b)?;
            same_tiles(op, &a, &b)?;
            elems_fit(op, &a)?;
            Ok(Type::Tile(a))
        }
        _ if binary_of_scalar(name).is_some() => {
            arity(op, args, 2)?;
            let a = tile_arg(op, args, 0, "lhs")?;
            vector_tile(op, &a)?;
            scalar_arg(op, args, 1, "rhs")?;
            elems_fit(op, &a)?;
            Ok(Type::Tile(a))
        }
        _ if matches!(op_info(name).map(|o| o.kind), Some(OpKind::Unary { .. })) => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            vector_tile(op, &a)?;
            elems_fit(op, &a)?;
            Ok(Type::Tile(a))
        }
        "tile.transpose" | "tile.cast" => convert_type(op, args, kwargs),
        _ if matches!(
            op_info(name).map(|o| o.kind),
            Some(OpKind::Reduce { .. } | OpKind::Expand { .. })
        ) =>
        {
            reduce_expand_type(op, args)
        }
        "tile.matmul" | "tile.matmul_acc" => matmul_type(op, args),
        "tile.move" | "tile.full" | "tile.fillpad" | "tile.get_block_idx"
        | "tile.get_block_num" | "tile.alloc" | "tile.expands" => tile_data_type(op, args, kwargs),
        "tile.concat" | "tile.assemble" | "tile.slice" | "tile.transpose_view" | "tile.reshape" => {
            tile_window_type(op, args, kwargs)
        }
        "tensor.create" | "tensor.slice" | "tensor.reshape" | "tensor.read" | "tensor.write"
        | "tensor.assemble" | "tensor.dim" => tensor_type(op, args, kwargs),
        "array.create" | "array.get_element" | "array.update_element" | "system.task_dummy" => {
            array_type(op, args, kwargs)
        }
        _ if name.starts_with("dist.") => crate::dist::deduce(name, args, kwargs),
        _ => err(
            format!("Unknown operation '{name}'"),
            "Check spelling, or use pl.tensor.*/pl.tile.* for explicit namespacing",
        ),
    }
}

/// Checks that `op` got `n` positional arguments.
fn arity(op: &str, args: &[Expr], n: usize) -> Result<(), OpError> {
    if args.len() != n {
        return err(
            format!("{op} takes {n} positional argument(s), got {}", args.len()),
            "Check the operation's arguments.",
        );
    }
    Ok(())
}

/// The type of a row / column reduction or expansion (by the op table's kind).
fn reduce_expand_type(op: &str, args: &[Expr]) -> Result<Type, OpError> {
    match op_info(op).map(|o| o.kind) {
        Some(OpKind::Reduce { by_row: true, .. }) => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            vector_tile(op, &a)?;
            Ok(Type::Tile(TileType { cols: 1, ..a }))
        }
        Some(OpKind::Reduce { by_row: false, .. }) => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            vector_tile(op, &a)?;
            Ok(Type::Tile(TileType { rows: 1, ..a }))
        }
        Some(OpKind::Expand { by_row: true, .. }) => {
            arity(op, args, 2)?;
            let a = tile_arg(op, args, 0, "the target")?;
            let v = tile_arg(op, args, 1, "the row vector")?;
            vector_tile(op, &a)?;
            vector_tile(op, &v)?;
            if v.cols != 1 || v.rows != a.rows || v.dtype != a.dtype {
                return err(
                    format!(
                        "{op}: the row vector must be [{}, 1] of {}, got {}",
                        a.rows,
                        a.dtype.pl_name(),
                        Type::Tile(v).describe()
                    ),
                    "Pass a per-row value such as the result of pl.row_max(t).",
                );
            }
            Ok(Type::Tile(a))
        }
        Some(OpKind::Expand { by_row: false, .. }) => {
            arity(op, args, 2)?;
            let a = tile_arg(op, args, 0, "the target")?;
            let v = tile_arg(op, args, 1, "the column vector")?;
            vector_tile(op, &a)?;
            vector_tile(op, &v)?;
            if v.rows != 1 || v.cols != a.cols || v.dtype != a.dtype {
                return err(
                    format!(
                        "{op}: the column vector must be [1, {}] of {}, got {}",
                        a.cols,
                        a.dtype.pl_name(),
                        Type::Tile(v).describe()
                    ),
                    "Pass a per-column value such as the result of pl.col_sum(t).",
                );
            }
            Ok(Type::Tile(a))
        }
        other => unreachable!(
            "deduce sends reduce_expand_type only reductions and expansions, not {other:?}"
        ),
    }
}

/// The type of `tile.load` / `tile.store`: the region, the memory and the dtype checked.
fn tile_io_type(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    match op {
        "tile.load" => {
            // An optional third argument is the valid shape: the region actually read,
            // [rows, cols] at most the tile's (runtime values allowed); the rest of the tile
            // is undefined until pl.tile.fillpad fills it.
            if args.len() != 3 {
                arity(op, args, 2)?;
            }
            let tensor = tensor_arg(op, args, 0, "the source")?;
            let offsets = list_arg(op, args, 1, "offsets")?;
            let sizes = ints_kw(op, kwargs, "shapes")?;
            if args.len() == 3 {
                let valid = list_arg(op, args, 2, "valid_shape")?;
                if valid.len() != 2 || sizes.len() != 2 {
                    return err(
                        format!(
                            "{op}: valid_shape has {} entries for a rank-{} region; a valid shape is [rows, cols] of a 2-D load",
                            valid.len(),
                            sizes.len()
                        ),
                        "Load a 2-D region and give valid_shape=[rows, cols].",
                    );
                }
                for (v, s) in valid.iter().zip(sizes) {
                    if let Some(c) = v.as_const_int() {
                        if c < 0 || c > *s {
                            return err(
                                format!("{op}: valid extent {c} is outside 0..={s}"),
                                "A valid shape lies within the loaded shape.",
                            );
                        }
                    }
                }
            }
            check_region(op, &tensor, offsets, sizes)?;
            check_rows_contiguous(op, &tensor, sizes)?;
            let memory = kwargs.memory("target_memory").unwrap_or(MemorySpace::Vec);
            if !matches!(memory, MemorySpace::Vec | MemorySpace::Mat) {
                return err(
                    format!(
                        "{op}: target_memory must be pl.Mem.Vec or pl.Mem.Mat, got pl.Mem.{}",
                        memory.name()
                    ),
                    "Load into Mat and pl.move the tile into Left / Right for a matmul.",
                );
            }
            let (rows, cols) = region_tile_shape(sizes);
            let t = TileType {
                rows,
                cols,
                dtype: tensor.dtype,
                memory,
            };
            check_tile_fits(op, &t)?;
            Ok(Type::Tile(t))
        }
        "tile.store" => {
            arity(op, args, 3)?;
            let tile = tile_arg(op, args, 0, "the stored value")?;
            let offsets = list_arg(op, args, 1, "offsets")?;
            let out = tensor_arg(op, args, 2, "the output")?;
            match tile.memory {
                MemorySpace::Vec | MemorySpace::Mat => {
                    if tile.dtype != out.dtype {
                        return err(
                            format!(
                                "{op}: a {} tile cannot be stored into a {} tensor",
                                tile.dtype.pl_name(),
                                out.dtype.pl_name()
                            ),
                            "Convert it first with pl.cast(tile, dtype).",
                        );
                    }
                }
                MemorySpace::Acc => {
                    let ok = match tile.dtype {
                        DataType::Fp32 => {
                            matches!(out.dtype, DataType::Fp32 | DataType::Fp16 | DataType::Bf16)
                        }
                        DataType::Int32 => out.dtype == DataType::Int32,
                        _ => false,
                    };
                    if !ok {
                        return err(
                            format!(
                                "{op}: an accumulator of {} cannot be stored into a {} tensor",
                                tile.dtype.pl_name(),
                                out.dtype.pl_name()
                            ),
                            "Store FP32 accumulators into FP32, FP16 or BF16 tensors.",
                        );
                    }
                }
                other => {
                    return err(
                        format!("{op}: a pl.Mem.{} tile cannot be stored", other.name()),
                        "Store Vec, Mat or Acc tiles.",
                    )
                }
            }
            if out.shape.is_empty() {
                return err(
                    format!("{op}: the output tensor has no dimensions"),
                    "Store into a tensor of rank 1 or more.",
                );
            }
            let sizes = store_region(out.shape.len(), tile.rows, tile.cols);
            if out.shape.len() == 1 && tile.rows != 1 {
                return err(
                    format!(
                        "{op}: a [{}, {}] tile does not fit a rank-1 tensor",
                        tile.rows, tile.cols
                    ),
                    "Store one-row tiles into vectors.",
                );
            }
            check_region(op, &out, offsets, &sizes)?;
            if let Some(mode) = kwargs.str("atomic") {
                if !STORE_ATOMICS.contains(&mode) {
                    return err(
                        format!("{op}: unknown atomic mode '{mode}'"),
                        "Use atomic=pl.AtomicType.Add (or omit it for a plain store).",
                    );
                }
                if mode == "add" && !(out.dtype.is_float() || out.dtype.is_int()) {
                    return err(
                        format!("{op}: an atomic add into a {} tensor", out.dtype.pl_name()),
                        "Atomic adds store into float or integer tensors.",
                    );
                }
            }
            Ok(Type::Tensor(out))
        }
        other => unreachable!("deduce sends tile_io_type only its own operations, not {other}"),
    }
}

/// The type of `tile.transpose` / `tile.cast`.
fn convert_type(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    match op {
        "tile.transpose" => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            vector_tile(op, &a)?;
            let t = TileType {
                rows: a.cols,
                cols: a.rows,
                ..a
            };
            check_tile_fits(op, &t)?;
            Ok(Type::Tile(t))
        }
        "tile.cast" => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            vector_tile(op, &a)?;
            let Some(dtype) = kwargs.dtype("dtype") else {
                return err(
                    format!("{op}: target dtype missing"),
                    "Write pl.cast(tile, pl.BF16).",
                );
            };
            if dtype == DataType::Index || dtype == DataType::Bool {
                return err(
                    format!("{op}: cannot cast a tile to {}", dtype.pl_name()),
                    "Cast to a float or integer element type.",
                );
            }
            if let Some(mode) = kwargs.str("mode") {
                if !CAST_MODES.contains(&mode) {
                    return err(
                        format!("{op}: unknown rounding mode '{mode}'"),
                        "Use one of none, rint, round, floor, ceil, trunc, odd.",
                    );
                }
            }
            Ok(Type::Tile(TileType { dtype, ..a }))
        }
        other => unreachable!("deduce sends convert_type only its own operations, not {other}"),
    }
}

/// The type of `tile.matmul` / `tile.matmul_acc`: the operands' memories and shapes checked.
fn matmul_type(op: &str, args: &[Expr]) -> Result<Type, OpError> {
    let (acc, l_at) = if op == "tile.matmul" {
        arity(op, args, 2)?;
        (None, 0)
    } else {
        arity(op, args, 3)?;
        (Some(tile_arg(op, args, 0, "the accumulator")?), 1)
    };
    let l = tile_arg(op, args, l_at, "lhs")?;
    let r = tile_arg(op, args, l_at + 1, "rhs")?;
    if l.memory != MemorySpace::Left || r.memory != MemorySpace::Right {
        return err(
            format!(
                "{op}: lhs must be a pl.Mem.Left tile and rhs a pl.Mem.Right tile, got pl.Mem.{} and pl.Mem.{}",
                l.memory.name(),
                r.memory.name()
            ),
            "Load operands into pl.Mem.Mat, then pl.move(t, target_memory=pl.Mem.Left) / pl.Mem.Right.",
        );
    }
    if l.cols != r.rows {
        return err(
            format!(
                "{op}: inner dimensions differ: lhs is [{}, {}], rhs is [{}, {}]",
                l.rows, l.cols, r.rows, r.cols
            ),
            "lhs [M, K] times rhs [K, N].",
        );
    }
    let acc_dtype = match (l.dtype, r.dtype) {
        (DataType::Bf16, DataType::Bf16)
        | (DataType::Fp16, DataType::Fp16)
        | (DataType::Fp32, DataType::Fp32) => DataType::Fp32,
        (DataType::Int8, DataType::Int8) => DataType::Int32,
        (a, b) => {
            return err(
                format!(
                    "{op}: unsupported operand types {} x {}",
                    a.pl_name(),
                    b.pl_name()
                ),
                "Matmul takes BF16, FP16, FP32 or INT8 operands of one type.",
            )
        }
    };
    let out = TileType {
        rows: l.rows,
        cols: r.cols,
        dtype: acc_dtype,
        memory: MemorySpace::Acc,
    };
    if let Some(acc) = acc {
        if acc != out {
            return err(
                format!(
                    "{op}: the accumulator must be {}, got {}",
                    Type::Tile(out).describe(),
                    Type::Tile(acc).describe()
                ),
                "Start the accumulation with pl.matmul(lhs, rhs).",
            );
        }
    }
    check_tile_fits(op, &out)?;
    Ok(Type::Tile(out))
}

/// The type of a tile operation that makes or moves a tile (move, fill, alloc, pad, block index).
fn tile_data_type(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    match op {
        "tile.move" => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            let Some(target) = kwargs.memory("target_memory") else {
                return err(
                    format!("{op}: target_memory missing"),
                    "Write pl.move(t, target_memory=pl.Mem.Left).",
                );
            };
            if matches!(target, MemorySpace::Acc | MemorySpace::Bias) {
                return err(
                    format!("{op}: cannot move into pl.Mem.{}", target.name()),
                    "Accumulators are produced by pl.matmul.",
                );
            }
            if a.memory == MemorySpace::Vec && target != MemorySpace::Vec {
                return err(
                    format!(
                        "{op}: a vector tile cannot move to pl.Mem.{} (the cube and vector cores do not share buffers)",
                        target.name()
                    ),
                    "Store it to a tensor and load it on the cube side.",
                );
            }
            if a.memory.is_cube()
                && target == MemorySpace::Vec
                && !matches!(a.memory, MemorySpace::Acc | MemorySpace::Mat)
            {
                return err(
                    format!(
                        "{op}: a pl.Mem.{} tile cannot move to pl.Mem.Vec",
                        a.memory.name()
                    ),
                    "Store it to a tensor and load it on the vector side.",
                );
            }
            let t = TileType {
                memory: target,
                ..a
            };
            check_tile_fits(op, &t)?;
            Ok(Type::Tile(t))
        }
        "tile.full" => {
            arity(op, args, 1)?;
            let shape = ints_kw(op, kwargs, "shape")?;
            let Some(dtype) = kwargs.dtype("dtype") else {
                return err(
                    format!("{op}: dtype missing"),
                    "Write pl.full([16, 16], dtype=pl.FP32, value=0.0).",
                );
            };
            scalar_arg(op, args, 0, "value")?;
            if shape.len() != 2 {
                return err(
                    format!("{op}: a tile shape has two dimensions, got {}", shape.len()),
                    "Write the shape as [rows, cols].",
                );
            }
            let t = TileType {
                rows: shape[0],
                cols: shape[1],
                dtype,
                memory: MemorySpace::Vec,
            };
            check_tile_fits(op, &t)?;
            Ok(Type::Tile(t))
        }
        "tile.fillpad" => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            vector_tile(op, &a)?;
            match kwargs.str("pad_value") {
                Some("zero" | "max" | "min") => Ok(Type::Tile(a)),
                other => err(
                    format!("{op}: pad_value must be zero, max or min, got {other:?}"),
                    "Write pl.tile.fillpad(t, pad_value=pl.PadValue.min).",
                ),
            }
        }
        "tile.get_block_idx" | "tile.get_block_num" => {
            arity(op, args, 0)?;
            Ok(Type::Scalar(DataType::Index))
        }
        "tile.alloc" => alloc_type(op, args, kwargs),
        "tile.expands" => {
            arity(op, args, 2)?;
            let a = tile_arg(op, args, 0, "the target")?;
            vector_tile(op, &a)?;
            scalar_arg(op, args, 1, "the value")?;
            Ok(Type::Tile(a))
        }
        other => unreachable!("deduce sends tile_data_type only its own operations, not {other}"),
    }
}

/// The type of a tile operation that rearranges elements (concat, assemble, slice, views, reshape).
fn tile_window_type(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    match op {
        "tile.concat" => {
            arity(op, args, 2)?;
            let a = tile_arg(op, args, 0, "the left tile")?;
            let b = tile_arg(op, args, 1, "the right tile")?;
            vector_tile(op, &a)?;
            vector_tile(op, &b)?;
            if a.rows != b.rows || a.dtype != b.dtype {
                return err(
                    format!(
                        "{op}: the tiles must have the same rows and element type, got {} and {}",
                        Type::Tile(a).describe(),
                        Type::Tile(b).describe()
                    ),
                    "pl.concat joins [r, c0] and [r, c1] tiles of one dtype into [r, c0 + c1].",
                );
            }
            let t = TileType {
                cols: a.cols + b.cols,
                ..a
            };
            check_tile_fits(op, &t)?;
            Ok(Type::Tile(t))
        }
        "tile.assemble" => {
            arity(op, args, 3)?;
            let target = tile_arg(op, args, 0, "the target")?;
            let source = tile_arg(op, args, 1, "the source")?;
            let offsets = list_arg(op, args, 2, "offsets")?;
            if target.dtype != source.dtype && !fixpipe_narrowing(&source, &target) {
                return err(
                    format!(
                        "{op}: the source {} and the target {} hold different element types",
                        Type::Tile(source).describe(),
                        Type::Tile(target).describe()
                    ),
                    "Cast the source to the target's dtype first (pl.cast).",
                );
            }
            check_window(op, &target, &source, offsets)?;
            Ok(Type::Tile(target))
        }
        "tile.slice" => {
            arity(op, args, 2)?;
            let src = tile_arg(op, args, 0, "the source")?;
            let offsets = list_arg(op, args, 1, "offsets")?;
            let shape = ints_kw(op, kwargs, "shape")?;
            if shape.len() != 2 {
                return err(
                    format!(
                        "{op}: a tile window has two dimensions, got {}",
                        shape.len()
                    ),
                    "Write pl.slice(tile, [rows, cols], [row, col]).",
                );
            }
            let t = TileType {
                rows: shape[0],
                cols: shape[1],
                ..src
            };
            check_window(op, &src, &t, offsets)?;
            check_tile_fits(op, &t)?;
            Ok(Type::Tile(t))
        }
        "tile.transpose_view" => {
            // The bytes of a Mat tile read as its transpose: the Nz fractal layout of
            // [r, c] is the Zn layout of [c, r] (no data moves).
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            if a.memory != MemorySpace::Mat {
                return err(
                    format!(
                        "{op}: a pl.Mem.{} tile has no transposed view (only Mat tiles do)",
                        a.memory.name()
                    ),
                    "Load the tile into pl.MemorySpace.Mat, or use pl.transpose on a vector tile.",
                );
            }
            Ok(Type::Tile(TileType {
                rows: a.cols,
                cols: a.rows,
                ..a
            }))
        }
        "tile.reshape" => {
            arity(op, args, 1)?;
            let a = tile_arg(op, args, 0, "the operand")?;
            vector_tile(op, &a)?;
            let shape = ints_kw(op, kwargs, "shape")?;
            if shape.len() != 2 || shape[0] * shape[1] != a.rows * a.cols {
                return err(
                    format!(
                        "{op}: cannot reshape {} into {shape:?}",
                        Type::Tile(a).describe()
                    ),
                    "Reshape a tile into [rows, cols] with the same number of elements.",
                );
            }
            Ok(Type::Tile(TileType {
                rows: shape[0],
                cols: shape[1],
                ..a
            }))
        }
        other => unreachable!("deduce sends tile_window_type only its own operations, not {other}"),
    }
}

/// The type of a `tensor.*` operation.
fn tensor_type(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    match op {
        "tensor.create" => {
            if args.len() > 1 {
                arity(op, args, 1)?;
            }
            let shape = shape_kw(op, args, 0, kwargs)?;
            let Some(dtype) = kwargs.dtype("dtype") else {
                return err(
                    format!("{op}: dtype missing"),
                    "Write pl.create_tensor([16, 16], dtype=pl.FP32).",
                );
            };
            if dtype.runtime_enum().is_none() {
                return err(
                    format!("{op}: a tensor cannot hold {}", dtype.pl_name()),
                    "Use a numeric element type.",
                );
            }
            Ok(Type::tensor(shape, dtype))
        }
        "tensor.slice" => {
            if args.len() != 3 {
                arity(op, args, 2)?;
            }
            let t = tensor_arg(op, args, 0, "the source")?;
            let offsets = list_arg(op, args, 1, "offsets")?;
            let shape = shape_kw(op, args, 2, kwargs)?;
            check_region(op, &t, offsets, &shape)?;
            Ok(Type::tensor(shape, t.dtype))
        }
        "tensor.reshape" => {
            arity(op, args, 1)?;
            let t = tensor_arg(op, args, 0, "the source")?;
            let shape = ints_kw(op, kwargs, "shape")?;
            let n: i64 = shape.iter().product();
            if n != t.numel() {
                return err(
                    format!(
                        "{op}: cannot reshape {} elements into {:?} ({n} elements)",
                        t.numel(),
                        shape
                    ),
                    "Keep the element count.",
                );
            }
            Ok(Type::tensor(shape.to_vec(), t.dtype))
        }
        "tensor.read" => {
            arity(op, args, 2)?;
            let t = element_arg(op, args, "the source")?;
            Ok(Type::Scalar(t.dtype))
        }
        // write(tensor, indices, value): one element set from a scalar of the tensor's
        // dtype; the result is the tensor (the write happens in place).
        "tensor.write" => {
            arity(op, args, 3)?;
            let t = element_arg(op, args, "the destination")?;
            let v = scalar_arg(op, args, 2, "the value")?;
            if v != t.dtype {
                return err(
                    format!(
                        "{op}: the value is {}, the tensor holds {}",
                        v.pl_name(),
                        t.dtype.pl_name()
                    ),
                    &format!(
                        "Convert it first: pl.cast(value, pl.{}).",
                        t.dtype.pl_name()
                    ),
                );
            }
            Ok(Type::Tensor(t))
        }
        "tensor.assemble" => {
            arity(op, args, 3)?;
            let target = tensor_arg(op, args, 0, "the target")?;
            let source = tensor_arg(op, args, 1, "the source")?;
            let offsets = list_arg(op, args, 2, "offsets")?;
            if source.dtype != target.dtype || source.shape.len() != target.shape.len() {
                return err(
                    format!(
                        "{op}: the source {} does not match the target {}",
                        Type::Tensor(source).describe(),
                        Type::Tensor(target).describe()
                    ),
                    "Assemble a tensor of the target's rank and dtype.",
                );
            }
            check_region(op, &target, offsets, &source.shape)?;
            Ok(Type::Tensor(target))
        }
        "tensor.dim" => {
            arity(op, args, 2)?;
            let t = tensor_arg(op, args, 0, "the tensor")?;
            match args[1].as_const_int() {
                Some(axis) if (0..t.shape.len() as i64).contains(&axis) => {
                    Ok(Type::Scalar(DataType::Index))
                }
                _ => err(
                    format!(
                        "{op}: the axis must be a literal in 0..{} for a rank-{} tensor",
                        t.shape.len(),
                        t.shape.len()
                    ),
                    "Write pl.tensor.dim(t, 0).",
                ),
            }
        }
        other => unreachable!("deduce sends tensor_type only its own operations, not {other}"),
    }
}

/// The type of an `array.*` operation or the dependency-only task.
fn array_type(op: &str, args: &[Expr], kwargs: &Attrs) -> Result<Type, OpError> {
    match op {
        "array.create" => {
            arity(op, args, 0)?;
            let len = kwargs.int("size").unwrap_or(0);
            let elem = match kwargs.str("elem") {
                Some("TASK_ID") => Some(Type::TaskId),
                Some(name) => DataType::from_pl_name(name).map(Type::Scalar),
                None => None,
            };
            match elem.and_then(|e| Type::array(len, e)) {
                Some(t) => Ok(t),
                None => err(
                    format!(
                        "{op}: an array of {len} x {} elements",
                        kwargs.str("elem").unwrap_or("?")
                    ),
                    "Write pl.array.create(N, pl.TASK_ID) (or an integer dtype) with a positive literal N.",
                ),
            }
        }
        "array.get_element" => {
            arity(op, args, 2)?;
            let (_, elem) = array_arg(op, args)?;
            index_arg(op, args, 1)?;
            Ok(elem)
        }
        "array.update_element" => {
            arity(op, args, 3)?;
            let (len, elem) = array_arg(op, args)?;
            index_arg(op, args, 1)?;
            let value = args[2].ty();
            let fits = match (&elem, &value) {
                (Type::TaskId, Type::TaskId) => true,
                (Type::Scalar(_), Type::Scalar(d)) => d.is_int() || *d == DataType::Bool,
                _ => false,
            };
            if !fits {
                return err(
                    format!(
                        "{op}: an array of {} cannot hold a {}",
                        elem.describe(),
                        value.describe()
                    ),
                    "Store values of the array's element type (the tid of a pl.submit into a pl.TASK_ID array).",
                );
            }
            Ok(Type::Array {
                len,
                elem: Box::new(elem),
            })
        }
        "system.task_dummy" => {
            for (i, a) in args.iter().enumerate() {
                let ok = match a.ty() {
                    Type::TaskId => a.as_var().is_some(),
                    Type::Array { elem, .. } => *elem == Type::TaskId && a.as_var().is_some(),
                    _ => false,
                };
                if !ok {
                    return err(
                        format!(
                            "{op}: dependency {} must be a task id or an array of task ids, got {}",
                            i + 1,
                            a.ty().describe()
                        ),
                        "Write pl.system.task_dummy(deps=[tid, tids]) with tids from pl.submit and pl.array.create(N, pl.TASK_ID).",
                    );
                }
            }
            Ok(Type::TaskId)
        }
        other => unreachable!("deduce sends array_type only its own operations, not {other}"),
    }
}

/// The `shape` keyword of `tensor.create` / `tensor.slice`: positive sizes, or
/// [`DYNAMIC_DIM`] for a size known only at run time, which argument `at` (a list of one
/// integer per dimension) then gives.
/// The tensor (argument 0) of an element read or write, checked against its index list
/// (argument 1): one integer index per dimension.
fn element_arg(op: &str, args: &[Expr], what: &str) -> Result<TensorType, OpError> {
    let t = tensor_arg(op, args, 0, what)?;
    let idx = list_arg(op, args, 1, "indices")?;
    if idx.len() != t.shape.len() {
        return err(
            format!(
                "{op}: a rank-{} tensor needs {} indices, got {}",
                t.shape.len(),
                t.shape.len(),
                idx.len()
            ),
            "Give one index per dimension.",
        );
    }
    Ok(t)
}

fn shape_kw(op: &str, args: &[Expr], at: usize, kwargs: &Attrs) -> Result<Vec<i64>, OpError> {
    let Some(shape) = kwargs.ints("shape") else {
        return err(
            format!("{op}: shape must be a list of integer literals"),
            "Shapes are static: write them as [16, 16].",
        );
    };
    if let Some(bad) = shape.iter().find(|&&d| d <= 0 && d != DYNAMIC_DIM) {
        return err(
            format!("{op}: shape entries must be positive integers, got {bad}"),
            "Give positive sizes.",
        );
    }
    if shape.contains(&DYNAMIC_DIM) || args.len() > at {
        let sizes = list_arg(op, args, at, "the runtime sizes")?;
        if sizes.len() != shape.len() {
            return err(
                format!(
                    "{op}: {} runtime sizes for a rank-{} shape",
                    sizes.len(),
                    shape.len()
                ),
                "Give one size per dimension.",
            );
        }
    }
    Ok(shape.to_vec())
}

/// The array operand (argument 0) of an `array.*` operation: its length and element type.
fn array_arg(op: &str, args: &[Expr]) -> Result<(i64, Type), OpError> {
    match args.first().map(Expr::ty) {
        Some(Type::Array { len, elem }) => Ok((len, *elem)),
        Some(other) => err(
            format!("{op}: the array must be an Array, got {}", other.describe()),
            "Pass an array made by pl.array.create(N, dtype).",
        ),
        None => err(
            format!("{op}: missing the array"),
            "Check the operation's arguments.",
        ),
    }
}

/// An integer index operand of an `array.*` operation.
fn index_arg(op: &str, args: &[Expr], i: usize) -> Result<(), OpError> {
    match args.get(i).map(Expr::ty) {
        Some(Type::Scalar(d)) if d.is_int() => Ok(()),
        Some(other) => err(
            format!(
                "{op}: the index must be an integer, got {}",
                other.describe()
            ),
            "Index arrays with ints, loop variables or integer pl.Scalar values.",
        ),
        None => err(
            format!("{op}: missing the index"),
            "Check the operation's arguments.",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{AttrValue, Var};

    fn tensor(shape: &[i64]) -> Expr {
        Expr::Var(Var::new("t", Type::tensor(shape.to_vec(), DataType::Fp32)))
    }

    #[test]
    fn load_and_store() {
        let mut kw = Attrs::new();
        kw.set("shapes", AttrValue::Ints(vec![1, 16, 64]));
        let ty = deduce(
            "tile.load",
            &[
                tensor(&[4, 16, 64]),
                Expr::List(vec![Expr::index(2), Expr::index(0), Expr::index(0)]),
            ],
            &kw,
        )
        .unwrap();
        assert_eq!(ty, Type::tile(16, 64, DataType::Fp32, MemorySpace::Vec));
        let e = deduce(
            "tile.load",
            &[
                tensor(&[4, 16, 64]),
                Expr::List(vec![Expr::index(4), Expr::index(0), Expr::index(0)]),
            ],
            &kw,
        )
        .unwrap_err();
        assert!(e.message.contains("outside"), "{e}");
        let mut big = Attrs::new();
        big.set("shapes", AttrValue::Ints(vec![512, 512]));
        let e = deduce(
            "tile.load",
            &[
                tensor(&[512, 512]),
                Expr::List(vec![Expr::index(0), Expr::index(0)]),
            ],
            &big,
        )
        .unwrap_err();
        assert!(e.message.contains("more than the Vec memory"), "{e}");
    }

    /// The keyword the printer always writes for a unified `pl.tile.X` op (the op table's
    /// `printer_keyword`, which the parser reads) is one its typing requires.
    #[test]
    fn the_printer_keywords_are_required() {
        let tile = |mem| Expr::Var(Var::new("a", Type::tile(16, 64, DataType::Fp32, mem)));
        let sample = |op: &str| -> (Vec<Expr>, Attrs) {
            let mut kw = Attrs::new();
            let args = match op {
                "tile.load" => {
                    kw.set("shapes", AttrValue::Ints(vec![16, 64]));
                    vec![
                        tensor(&[16, 64]),
                        Expr::List(vec![Expr::index(0), Expr::index(0)]),
                    ]
                }
                "tile.full" => {
                    kw.set("shape", AttrValue::Ints(vec![16, 64]));
                    kw.set("dtype", AttrValue::DType(DataType::Fp32));
                    vec![Expr::index(0)]
                }
                "tile.move" => {
                    kw.set("target_memory", AttrValue::Memory(MemorySpace::Left));
                    vec![tile(MemorySpace::Mat)]
                }
                "tile.cast" => {
                    kw.set("dtype", AttrValue::DType(DataType::Fp16));
                    vec![tile(MemorySpace::Vec)]
                }
                other => panic!("no sample call of {other}: add one here"),
            };
            (args, kw)
        };
        let mut keywords = Vec::new();
        for row in crate::ops::OPS {
            let Some(keyword) = row.printer_keyword else {
                continue;
            };
            let (args, kw) = sample(row.name);
            assert!(deduce(row.name, &args, &kw).is_ok(), "{}", row.name);
            let mut without = Attrs::new();
            for (k, v) in kw.iter().filter(|(k, _)| *k != keyword) {
                without.set(k, v.clone());
            }
            let e = deduce(row.name, &args, &without).unwrap_err();
            assert!(e.message.contains(keyword), "{}: {e}", row.name);
            keywords.push(keyword);
        }
        assert_eq!(keywords, ["shapes", "dtype", "target_memory", "shape"]);
    }

    #[test]
    fn alloc_makes_mat_scratch_and_acc_accumulators_only() {
        let alloc = |mem| {
            let mut kw = Attrs::new();
            kw.set("shape", AttrValue::Ints(vec![16, 32]));
            kw.set("dtype", AttrValue::DType(DataType::Fp32));
            kw.set("target_memory", AttrValue::Memory(mem));
            deduce("tile.alloc", &[], &kw)
        };
        assert_eq!(
            alloc(MemorySpace::Acc).unwrap(),
            Type::tile(16, 32, DataType::Fp32, MemorySpace::Acc)
        );
        assert!(alloc(MemorySpace::Mat).is_ok());
        let e = alloc(MemorySpace::Vec).unwrap_err();
        assert!(e.message.contains("got [16, 32] in pl.Mem.Vec"), "{e}");
    }

    #[test]
    fn element_write_types_as_its_tensor() {
        let at = |n: i64| Expr::List((0..n).map(Expr::index).collect());
        let value = |d| Expr::Var(Var::new("v", Type::Scalar(d)));
        let ty = deduce(
            "tensor.write",
            &[tensor(&[4, 8]), at(2), value(DataType::Fp32)],
            &Attrs::new(),
        )
        .unwrap();
        assert_eq!(ty, Type::tensor(vec![4, 8], DataType::Fp32));
        let e = deduce(
            "tensor.write",
            &[tensor(&[4, 8]), at(1), value(DataType::Fp32)],
            &Attrs::new(),
        )
        .unwrap_err();
        assert!(e.message.contains("needs 2 indices, got 1"), "{e}");
        let e = deduce(
            "tensor.write",
            &[tensor(&[4, 8]), at(2), value(DataType::Int32)],
            &Attrs::new(),
        )
        .unwrap_err();
        assert!(e.message.contains("the value is INT32"), "{e}");
        assert!(e.hint.contains("pl.cast(value, pl.FP32)"), "{}", e.hint);
        let tile = Expr::Var(Var::new(
            "x",
            Type::tile(8, 8, DataType::Fp32, MemorySpace::Vec),
        ));
        let e = deduce(
            "tensor.write",
            &[tensor(&[4, 8]), at(2), tile],
            &Attrs::new(),
        )
        .unwrap_err();
        assert!(e.message.contains("must be a scalar"), "{e}");
    }

    #[test]
    fn matmul_needs_left_and_right() {
        let l = Expr::Var(Var::new(
            "l",
            Type::tile(16, 32, DataType::Bf16, MemorySpace::Mat),
        ));
        let r = Expr::Var(Var::new(
            "r",
            Type::tile(32, 16, DataType::Bf16, MemorySpace::Right),
        ));
        let e = deduce("tile.matmul", &[l, r.clone()], &Attrs::new()).unwrap_err();
        assert!(e.hint.contains("pl.move"));
        let l = Expr::Var(Var::new(
            "l",
            Type::tile(16, 32, DataType::Bf16, MemorySpace::Left),
        ));
        let ty = deduce("tile.matmul", &[l, r], &Attrs::new()).unwrap();
        assert_eq!(ty, Type::tile(16, 16, DataType::Fp32, MemorySpace::Acc));
    }

    #[test]
    fn task_id_arrays_and_dummy_tasks() {
        let mut kw = Attrs::new();
        kw.set("size", AttrValue::Int(4));
        kw.set("elem", AttrValue::Str("TASK_ID".into()));
        let ty = deduce("array.create", &[], &kw).unwrap();
        assert_eq!(ty.annotation(), "pl.Array[4, pl.TASK_ID]");
        let arr = Expr::Var(Var::new("tids", ty.clone()));
        let tid = Expr::Var(Var::new("tid", Type::TaskId));
        let none = Attrs::new();
        let got = deduce(
            "array.update_element",
            &[arr.clone(), Expr::index(1), tid.clone()],
            &none,
        )
        .unwrap();
        assert_eq!(got, ty);
        assert_eq!(
            deduce("array.get_element", &[arr.clone(), Expr::index(0)], &none).unwrap(),
            Type::TaskId
        );
        let e = deduce(
            "array.update_element",
            &[arr.clone(), Expr::index(1), Expr::index(3)],
            &none,
        )
        .unwrap_err();
        assert!(e.message.contains("cannot hold"), "{e}");
        assert_eq!(
            deduce("system.task_dummy", &[arr, tid], &none).unwrap(),
            Type::TaskId
        );
        let e = deduce("system.task_dummy", &[Expr::index(0)], &none).unwrap_err();
        assert!(e.message.contains("task id"), "{e}");
        kw.set("elem", AttrValue::Str("FP32".into()));
        assert!(deduce("array.create", &[], &kw).is_err());
    }

    #[test]
    fn every_tile_op_lowers_in_ptoas() {
        // `pto.alloc_tile` (tile.alloc) declares a tile; it is not an instruction.
        for op in OPS
            .iter()
            .filter(|o| o.level == OpLevel::Tile && o.pto != "pto.alloc_tile")
        {
            let inst = op.pto.trim_start_matches("pto.");
            assert!(
                ptoas::lower::lowers_tile_op(inst) || ptoas::lower::is_query_op(inst),
                "{} emits {} which ptoas does not lower",
                op.name,
                op.pto
            );
        }
    }

    #[test]
    fn every_tile_op_runs_on_the_header() {
        let (absent, refused) = ptoas::lower::HEADER_LACKS;
        for op in OPS.iter().filter(|o| o.level == OpLevel::Tile) {
            let cpp = op.cpp();
            assert!(
                !absent.contains(&cpp.as_str()) && !refused.contains(&cpp.as_str()),
                "{} lowers to {cpp}, which the PTO-ISA header cannot run",
                op.name
            );
        }
        assert_eq!(
            op_info("tile.matmul_acc").map(OpInfo::cpp).as_deref(),
            Some("TMATMUL_ACC")
        );
    }

    #[test]
    fn scalar_forms_pair_with_binary_ops() {
        for (binary, scalar) in tile_binary() {
            let row = op_info(scalar).unwrap_or_else(|| panic!("{binary}: no row {scalar}"));
            assert!(
                matches!(row.kind, OpKind::Scalar),
                "{scalar} is not a scalar form"
            );
        }
        for op in OPS.iter().filter(|o| matches!(o.kind, OpKind::Scalar)) {
            assert!(
                binary_of_scalar(op.name).is_some(),
                "{}: no binary form",
                op.name
            );
        }
    }

    #[test]
    fn dsl_spellings_are_unique() {
        let mut seen = std::collections::HashMap::new();
        for op in OPS {
            for s in op.dsl {
                if let Some(other) = seen.insert(*s, op.name) {
                    panic!("pl.{s} spells both {other} and {}", op.name);
                }
            }
        }
    }

    #[test]
    fn elementwise_rows_type_by_their_element_rule() {
        let t = |d| Expr::Var(Var::new("a", Type::tile(4, 4, d, MemorySpace::Vec)));
        let none = Attrs::new();
        let e = deduce("tile.exp", &[t(DataType::Int32)], &none).unwrap_err();
        assert!(e.message.contains("floating-point"), "{e}");
        let ok = deduce("tile.maxs", &[t(DataType::Int32), Expr::index(2)], &none);
        assert_eq!(
            ok.unwrap(),
            Type::tile(4, 4, DataType::Int32, MemorySpace::Vec)
        );
    }

    #[test]
    fn every_tile_op_names_a_pto_op() {
        for op in OPS {
            if op.level == OpLevel::Tile {
                assert!(
                    op.pto.starts_with("pto.t")
                        || op.pto.starts_with("pto.get_")
                        || op.pto == "pto.alloc_tile",
                    "{}",
                    op.name
                );
            }
        }
        assert!(deduce("tile.nope", &[], &Attrs::new())
            .unwrap_err()
            .message
            .starts_with("Unknown operation"));
    }
}
