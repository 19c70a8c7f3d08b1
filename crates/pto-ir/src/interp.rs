//! A reference interpreter of the IR over host tensors: what `CompiledProgram.validate_ir()`
//! runs on every `passes_dump/` snapshot to find the first pass after which a program
//! computes something else.
//!
//! It runs any stage of the pipeline: `pl.at` scopes execute in place (before outlining),
//! calls of `Inline` functions and of kernels execute the callee, manual scopes and task
//! ids are bookkeeping. Values are `f64` (integers as exact `f64` up to 2^53); every tile
//! operation rounds its result to the tile's element type (FP32, FP16, BF16 to nearest
//! even; integers truncated and wrapped to their width), and matmul accumulates in `f64`
//! before rounding to the accumulator's type — close to, not bit-equal with, the simulated
//! chip, which is why `validate_ir` compares with tolerances.
//!
//! Tensors are views (buffer, shape, strides, offset): a slice or a reshape shares its
//! source's buffer, a `pl.store` writes through it, so outputs written by kernels appear in
//! the caller's tensors as on the chip. A budget of operations and a call-depth limit
//! keep a runaway program from hanging or overflowing the stack.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::ir::{BinOp, Call, Callee, Expr, Function, Program, Stmt, StmtKind, UnOp};
use crate::ops::{binary_of_scalar, op_info, region_tile_shape, store_region, BinaryFn, OpKind};
use crate::types::{DataType, Type};

/// Why interpretation stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InterpError {
    /// What went wrong (with the function and operation).
    pub message: String,
}

fn ierr<T>(message: String) -> Result<T, InterpError> {
    Err(InterpError { message })
}

/// A host tensor: row-major values with their element type.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// The element type.
    pub dtype: DataType,
    /// The dimensions.
    pub shape: Vec<i64>,
    /// The values, row-major.
    pub data: Vec<f64>,
}

/// An argument of the entry function.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A tensor.
    Tensor(HostTensor),
    /// A scalar.
    Scalar(f64),
}

#[derive(Clone, Debug)]
struct View {
    buf: Rc<RefCell<Vec<f64>>>,
    dtype: DataType,
    shape: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
}

impl View {
    fn index(&self, idx: &[i64]) -> usize {
        let mut at = self.offset;
        for (i, s) in idx.iter().zip(&self.strides) {
            at += i * s;
        }
        at as usize
    }

    fn contiguous(&self) -> bool {
        let mut expect = 1;
        for (d, s) in self.shape.iter().zip(&self.strides).rev() {
            if *d != 1 && *s != expect {
                return false;
            }
            expect *= d;
        }
        true
    }
}

#[derive(Clone, Debug)]
struct TileVal {
    rows: usize,
    cols: usize,
    dtype: DataType,
    data: Vec<f64>,
    /// `(rows, cols)` actually loaded when a load gave a valid shape (the rest is NaN,
    /// undefined until `tile.fillpad`); `None` for a fully valid tile.
    valid: Option<(usize, usize)>,
}

#[derive(Clone, Debug)]
enum Value {
    Tensor(View),
    Tile(TileVal),
    Scalar(f64),
    TaskId,
    /// `pl.array.create(N, dtype)`: elements by value (updates make a new array).
    Array(Vec<Value>),
    Tuple(Vec<Value>),
    List(Vec<f64>),
    Unit,
}

/// The largest (`max`) or smallest value of integer type `d` (a fill value).
fn int_limit(d: DataType, max: bool) -> f64 {
    let bits = d.size_bytes() as i32 * 8;
    let signed = !matches!(
        d,
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 | DataType::Bool
    );
    match (signed, max) {
        (true, true) => 2f64.powi(bits - 1) - 1.0,
        (true, false) => -(2f64.powi(bits - 1)),
        (false, true) => 2f64.powi(bits) - 1.0,
        (false, false) => 0.0,
    }
}

/// Rounds `v` to the values type `d` holds.
pub fn round_to(v: f64, d: DataType) -> f64 {
    match d {
        DataType::Fp32 => v as f32 as f64,
        DataType::Fp16 => half::f16::from_f64(v).to_f64(),
        DataType::Bf16 => half::bf16::from_f64(v).to_f64(),
        DataType::Bool => f64::from(u8::from(v != 0.0)),
        DataType::Index | DataType::Int64 => v.trunc(),
        d => {
            let bits = d.size_bytes() * 8;
            let t = v.trunc();
            if !t.is_finite() {
                return 0.0;
            }
            let m = (1u128 << bits) as f64;
            let mut w = t.rem_euclid(m);
            if d.is_signed_int() && w >= m / 2.0 {
                w -= m;
            }
            w
        }
    }
}

const MAX_OPS: u64 = 200_000_000;
const MAX_DEPTH: usize = 64;

struct Interp<'a> {
    program: &'a Program,
    ops: u64,
    depth: usize,
    /// The SPMD block of the kernel running: `(index, count)`.
    block: (i64, i64),
}

/// Values by variable id, and the latest variable bound under each name (the front end's
/// straight-line binding, which carries values around loops and branches before SSA).
#[derive(Default)]
struct Env {
    vals: HashMap<u64, Value>,
    by_name: HashMap<String, u64>,
}

impl Env {
    fn get(&self, id: &u64) -> Option<&Value> {
        self.vals.get(id)
    }

    fn insert(&mut self, id: u64, v: Value) {
        self.vals.insert(id, v);
    }

    fn bind(&mut self, var: &crate::ir::Var, v: Value) {
        self.vals.insert(var.id(), v);
        self.by_name.insert(var.name().to_string(), var.id());
    }
}

/// Variables a body assigns, grouped by name (nested bodies included).
fn assigned_by_name(body: &[Stmt]) -> HashMap<String, Vec<u64>> {
    let mut out: HashMap<String, Vec<u64>> = HashMap::new();
    crate::ir::walk_stmts(body, &mut |s| {
        for v in s.defs() {
            out.entry(v.name().to_string()).or_default().push(v.id());
        }
    });
    out
}

impl<'a> Interp<'a> {
    fn tick(&mut self, n: u64) -> Result<(), InterpError> {
        self.ops += n;
        if self.ops > MAX_OPS {
            return ierr(format!(
                "the program needs more than {MAX_OPS} element operations to interpret; validate it with smaller shapes"
            ));
        }
        Ok(())
    }

    fn scalar(&self, e: &Expr, env: &Env) -> Result<f64, InterpError> {
        match self.eval_pure(e, env)? {
            Value::Scalar(v) => Ok(v),
            other => ierr(format!("expected a scalar, got {other:?}")),
        }
    }

    fn eval_pure(&self, e: &Expr, env: &Env) -> Result<Value, InterpError> {
        Ok(match e {
            Expr::Var(v) => env.get(&v.id()).cloned().ok_or_else(|| InterpError {
                message: format!("'{}' has no value", v.name()),
            })?,
            Expr::Int { value, .. } => Value::Scalar(*value as f64),
            Expr::Float { value, .. } => Value::Scalar(*value),
            Expr::Bool(b) => Value::Scalar(f64::from(u8::from(*b))),
            Expr::Binary {
                op,
                lhs,
                rhs,
                dtype,
            } => {
                let a = self.scalar(lhs, env)?;
                let b = self.scalar(rhs, env)?;
                let int = !dtype.is_float() && *dtype != DataType::Bool;
                let r = match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => a / b,
                    BinOp::FloorDiv => {
                        if b == 0.0 {
                            return ierr("integer division by zero".into());
                        }
                        (a / b).floor()
                    }
                    BinOp::Mod => {
                        if b == 0.0 {
                            return ierr("modulo by zero".into());
                        }
                        a - b * (a / b).floor()
                    }
                    BinOp::Lt => f64::from(u8::from(a < b)),
                    BinOp::Le => f64::from(u8::from(a <= b)),
                    BinOp::Gt => f64::from(u8::from(a > b)),
                    BinOp::Ge => f64::from(u8::from(a >= b)),
                    BinOp::Eq => f64::from(u8::from(a == b)),
                    BinOp::Ne => f64::from(u8::from(a != b)),
                    BinOp::And => f64::from(u8::from(a != 0.0 && b != 0.0)),
                    BinOp::Or => f64::from(u8::from(a != 0.0 || b != 0.0)),
                    BinOp::Min => a.min(b),
                    BinOp::Max => a.max(b),
                };
                Value::Scalar(if int { round_to(r, *dtype) } else { r })
            }
            Expr::Unary { op, operand, dtype } => {
                let a = self.scalar(operand, env)?;
                Value::Scalar(match op {
                    UnOp::Neg => -a,
                    UnOp::Not => f64::from(u8::from(a == 0.0)),
                    UnOp::Cast if dtype.is_float() => round_to(a, *dtype),
                    UnOp::Cast => round_to(a.trunc(), *dtype),
                })
            }
            Expr::List(items) => Value::List(
                items
                    .iter()
                    .map(|i| self.scalar(i, env))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::GetItem { tuple, index } => match self.eval_pure(tuple, env)? {
                Value::Tuple(items) => items.get(*index).cloned().unwrap_or(Value::Unit),
                other => return ierr(format!("item of a non-tuple {other:?}")),
            },
            Expr::Call(_) => return ierr("a call in a pure position".into()),
        })
    }

    fn eval(&mut self, e: &Expr, env: &mut Env) -> Result<Value, InterpError> {
        match e {
            Expr::Call(c) => self.call(c, env),
            other => self.eval_pure(other, env),
        }
    }

    fn tile_of(v: Value, what: &str) -> Result<TileVal, InterpError> {
        match v {
            Value::Tile(t) => Ok(t),
            other => ierr(format!("{what}: expected a tile, got {other:?}")),
        }
    }

    fn view_of(v: Value, what: &str) -> Result<View, InterpError> {
        match v {
            Value::Tensor(t) => Ok(t),
            other => ierr(format!("{what}: expected a tensor, got {other:?}")),
        }
    }

    fn list_of(v: Value) -> Result<Vec<i64>, InterpError> {
        match v {
            Value::List(items) => Ok(items.into_iter().map(|x| x as i64).collect()),
            other => ierr(format!("expected a list, got {other:?}")),
        }
    }

    fn region(
        view: &View,
        offsets: &[i64],
        sizes: &[i64],
        op: &str,
    ) -> Result<Vec<usize>, InterpError> {
        if offsets.len() != view.shape.len() || sizes.len() != view.shape.len() {
            return ierr(format!("{op}: rank mismatch"));
        }
        for d in 0..sizes.len() {
            if offsets[d] < 0 || offsets[d] + sizes[d] > view.shape[d] {
                return ierr(format!(
                    "{op}: dimension {d}: offset {} + size {} is outside the extent {}",
                    offsets[d], sizes[d], view.shape[d]
                ));
            }
        }
        let n: i64 = sizes.iter().product();
        let mut out = Vec::with_capacity(n.max(0) as usize);
        let mut idx = vec![0i64; sizes.len()];
        for _ in 0..n {
            let abs: Vec<i64> = idx.iter().zip(offsets).map(|(i, o)| i + o).collect();
            out.push(view.index(&abs));
            for d in (0..sizes.len()).rev() {
                idx[d] += 1;
                if idx[d] < sizes[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok(out)
    }

    /// The `(row, col)` origin of an `inner` window of `outer`, checked to fit.
    fn window_origin(
        at: &[i64],
        inner: &TileVal,
        outer: &TileVal,
        op: &str,
    ) -> Result<(usize, usize), InterpError> {
        match at {
            [r, c]
                if *r >= 0
                    && *c >= 0
                    && *r as usize + inner.rows <= outer.rows
                    && *c as usize + inner.cols <= outer.cols =>
            {
                Ok((*r as usize, *c as usize))
            }
            _ => ierr(format!(
                "{op}: a [{}, {}] window at {at:?} does not fit a [{}, {}] tile",
                inner.rows, inner.cols, outer.rows, outer.cols
            )),
        }
    }

    fn map_tile(t: &TileVal, dtype: DataType, f: impl Fn(f64) -> f64) -> TileVal {
        TileVal {
            rows: t.rows,
            cols: t.cols,
            dtype,
            data: t.data.iter().map(|&x| round_to(f(x), dtype)).collect(),
            valid: None,
        }
    }

    fn result_tile(c: &Call) -> Result<(usize, usize, DataType), InterpError> {
        match &c.ty {
            Type::Tile(t) => Ok((t.rows as usize, t.cols as usize, t.dtype)),
            other => ierr(format!("expected a tile result, got {}", other.describe())),
        }
    }

    fn call(&mut self, c: &Call, env: &mut Env) -> Result<Value, InterpError> {
        let mut args = Vec::with_capacity(c.args.len());
        for a in &c.args {
            args.push(self.eval(a, env)?);
        }
        match &c.callee {
            Callee::Function(name) => {
                let f = self.program.function(name).ok_or_else(|| InterpError {
                    message: format!("no function '{name}'"),
                })?;
                // An SPMD dispatch (`pl.spmd(core_num=n)`) runs the kernel once per block.
                let blocks = c.attrs.int("block_num").unwrap_or(1).max(1);
                let mut results = Vec::new();
                for b in 0..blocks {
                    let outer = std::mem::replace(&mut self.block, (b, blocks));
                    let r = self.run_function(f, args.clone());
                    self.block = outer;
                    results = r?;
                }
                let value = match results.len() {
                    0 => Value::Unit,
                    1 if c.submit.is_none() => results.into_iter().next().unwrap_or(Value::Unit),
                    _ => Value::Tuple(results),
                };
                if c.submit.is_some() {
                    let mut items = match value {
                        Value::Tuple(items) => items,
                        Value::Unit => Vec::new(),
                        v => vec![v],
                    };
                    items.push(Value::TaskId);
                    return Ok(Value::Tuple(items));
                }
                Ok(value)
            }
            Callee::Op(op) => self.op(op, c, args),
        }
    }

    /// An operation whose element semantics the op table gives (elementwise, reductions,
    /// expansions).
    fn table_op(
        &mut self,
        op: &str,
        kind: OpKind,
        mut args: Vec<Value>,
    ) -> Result<Value, InterpError> {
        let mut take = |i: usize| std::mem::replace(&mut args[i], Value::Unit);
        let a = Self::tile_of(take(0), op)?;
        self.tick(a.data.len() as u64)?;
        let d = a.dtype;
        Ok(Value::Tile(match kind {
            OpKind::Binary { f, .. } => {
                let b = Self::tile_of(take(1), op)?;
                let data = a
                    .data
                    .iter()
                    .zip(&b.data)
                    .map(|(&x, &y)| round_to(f(x, y), d))
                    .collect();
                TileVal { data, ..a }
            }
            OpKind::Scalar => {
                let s = match take(1) {
                    Value::Scalar(s) => round_to(s, d),
                    other => return ierr(format!("{op}: expected a scalar, got {other:?}")),
                };
                match binary_of_scalar(op).map(|b| b.kind) {
                    Some(OpKind::Binary { f, .. }) => Self::map_tile(&a, d, |x| f(x, s)),
                    _ => return ierr(format!("{op}: no binary form in the op table")),
                }
            }
            OpKind::Unary { f, .. } => Self::map_tile(&a, d, f),
            OpKind::Reduce { by_row, init, f } => Self::reduce(&a, by_row, init, f),
            OpKind::Expand { by_row, f } => {
                let v = Self::tile_of(take(1), op)?;
                let data = (0..a.data.len())
                    .map(|k| {
                        let y = if by_row {
                            v.data[k / a.cols]
                        } else {
                            v.data[k % a.cols]
                        };
                        round_to(f(a.data[k], y), d)
                    })
                    .collect();
                TileVal { data, ..a }
            }
            OpKind::Other => return ierr(format!("{op}: not an op of the table's semantics")),
        }))
    }

    /// Each row (`by_row`) or column of `a` folded with `f` from `init`.
    fn reduce(a: &TileVal, by_row: bool, init: f64, f: BinaryFn) -> TileVal {
        let (outer, inner) = if by_row {
            (a.rows, a.cols)
        } else {
            (a.cols, a.rows)
        };
        let at = |o: usize, i: usize| {
            if by_row {
                a.data[o * a.cols + i]
            } else {
                a.data[i * a.cols + o]
            }
        };
        let data = (0..outer)
            .map(|o| round_to((0..inner).map(|i| at(o, i)).fold(init, f), a.dtype))
            .collect();
        let (rows, cols) = if by_row { (a.rows, 1) } else { (1, a.cols) };
        TileVal {
            rows,
            cols,
            dtype: a.dtype,
            data,
            valid: None,
        }
    }

    /// Runs operation `op`: the table's ops by kind, the others by family.
    fn op(&mut self, op: &str, c: &Call, args: Vec<Value>) -> Result<Value, InterpError> {
        if let Some(info) = op_info(op).filter(|i| !matches!(i.kind, OpKind::Other)) {
            return self.table_op(op, info.kind, args);
        }
        match op {
            "tile.load" | "tile.fillpad" | "tile.alloc" | "tile.get_block_idx"
            | "tile.get_block_num" | "tile.store" => self.tile_memory_op(op, c, args),
            "tile.cast" | "tile.matmul" | "tile.matmul_acc" | "tile.full" | "tile.expands" => {
                self.tile_compute_op(op, c, args)
            }
            "tile.move"
            | "tile.reshape"
            | "tile.transpose"
            | "tile.transpose_view"
            | "tile.assemble"
            | "tile.slice"
            | "tile.concat" => self.tile_layout_op(op, c, args),
            "tensor.create" | "tensor.slice" | "tensor.reshape" | "tensor.dim" | "tensor.read"
            | "tensor.write" | "tensor.assemble" => self.tensor_op(op, c, args),
            "array.create" | "array.get_element" | "array.update_element" | "system.task_dummy" => {
                self.array_op(op, c, args)
            }
            other => ierr(format!("the interpreter has no rule for {other}")),
        }
    }

    /// A tile operation that moves data between tensors and tiles (or makes a tile).
    fn tile_memory_op(
        &mut self,
        op: &str,
        c: &Call,
        mut args: Vec<Value>,
    ) -> Result<Value, InterpError> {
        Ok(match op {
            "tile.load" => {
                let view = Self::view_of(take(&mut args, 0), op)?;
                let offsets = Self::list_of(take(&mut args, 1))?;
                let sizes = c.kwargs.ints("shapes").unwrap_or(&[]).to_vec();
                let idx = Self::region(&view, &offsets, &sizes, op)?;
                self.tick(idx.len() as u64)?;
                let (rows, cols) = region_tile_shape(&sizes);
                let (rows, cols) = (rows as usize, cols as usize);
                let valid = match args.get_mut(2) {
                    Some(v) => match Self::list_of(std::mem::replace(v, Value::Unit))?.as_slice() {
                        [r, c]
                            if *r >= 0 && *c >= 0 && *r as usize <= rows && *c as usize <= cols =>
                        {
                            Some((*r as usize, *c as usize))
                        }
                        other => {
                            return ierr(format!(
                                "{op}: valid shape {other:?} is outside the [{rows}, {cols}] tile"
                            ))
                        }
                    },
                    None => None,
                };
                let buf = view.buf.borrow();
                let data = idx
                    .iter()
                    .enumerate()
                    .map(|(k, &i)| match valid {
                        Some((vr, vc)) if k / cols >= vr || k % cols >= vc => f64::NAN,
                        _ => buf[i],
                    })
                    .collect();
                Value::Tile(TileVal {
                    rows,
                    cols,
                    dtype: view.dtype,
                    data,
                    valid,
                })
            }
            "tile.fillpad" => {
                let mut t = Self::tile_of(take(&mut args, 0), op)?;
                let pad = match (c.kwargs.str("pad_value"), t.dtype.is_float()) {
                    (Some("zero"), _) => 0.0,
                    (Some("max"), true) => f64::INFINITY,
                    (_, true) => f64::NEG_INFINITY,
                    (Some("max"), false) => int_limit(t.dtype, true),
                    (_, false) => int_limit(t.dtype, false),
                };
                if let Some((vr, vc)) = t.valid.take() {
                    for r in 0..t.rows {
                        for col in 0..t.cols {
                            if r >= vr || col >= vc {
                                t.data[r * t.cols + col] = pad;
                            }
                        }
                    }
                }
                self.tick(t.data.len() as u64)?;
                Value::Tile(t)
            }
            "tile.alloc" => {
                let (rows, cols, dtype) = Self::result_tile(c)?;
                Value::Tile(TileVal {
                    rows,
                    cols,
                    dtype,
                    data: vec![0.0; rows * cols],
                    valid: None,
                })
            }
            "tile.get_block_idx" => Value::Scalar(self.block.0 as f64),
            "tile.get_block_num" => Value::Scalar(self.block.1 as f64),
            "tile.store" => {
                let tile = Self::tile_of(take(&mut args, 0), op)?;
                let offsets = Self::list_of(take(&mut args, 1))?;
                let view = Self::view_of(take(&mut args, 2), op)?;
                // A partly valid tile stores its valid region only.
                let (rows, cols) = tile.valid.unwrap_or((tile.rows, tile.cols));
                let sizes = store_region(view.shape.len(), rows as i64, cols as i64);
                let idx = Self::region(&view, &offsets, &sizes, op)?;
                self.tick(idx.len() as u64)?;
                let add = c.kwargs.str("atomic") == Some("add");
                {
                    let mut buf = view.buf.borrow_mut();
                    for (i, &at) in idx.iter().enumerate() {
                        let x = tile.data[(i / cols) * tile.cols + i % cols];
                        let v = if add { buf[at] + x } else { x };
                        buf[at] = round_to(v, view.dtype);
                    }
                }
                Value::Tensor(view)
            }
            other => unreachable!("op sends tile_memory_op only its own family, not {other}"),
        })
    }

    /// A tile operation outside the op table that computes: casts, matmuls and fills.
    fn tile_compute_op(
        &mut self,
        op: &str,
        c: &Call,
        mut args: Vec<Value>,
    ) -> Result<Value, InterpError> {
        Ok(match op {
            "tile.cast" => {
                let a = Self::tile_of(take(&mut args, 0), op)?;
                let (_, _, d) = Self::result_tile(c)?;
                let mode = c.kwargs.str("mode").unwrap_or("rint").to_string();
                self.tick(a.data.len() as u64)?;
                let f = move |x: f64| -> f64 {
                    if d.is_float() {
                        x
                    } else {
                        match mode.as_str() {
                            "floor" => x.floor(),
                            "ceil" => x.ceil(),
                            "trunc" => x.trunc(),
                            "round" => x.round(),
                            _ => {
                                let r = x.round();
                                if (x - x.trunc()).abs() == 0.5 {
                                    2.0 * (x / 2.0).round()
                                } else {
                                    r
                                }
                            }
                        }
                    }
                };
                Value::Tile(Self::map_tile(&a, d, f))
            }
            "tile.matmul" | "tile.matmul_acc" => {
                let (acc, l, r) = if op == "tile.matmul" {
                    (
                        None,
                        Self::tile_of(take(&mut args, 0), op)?,
                        Self::tile_of(take(&mut args, 1), op)?,
                    )
                } else {
                    (
                        Some(Self::tile_of(take(&mut args, 0), op)?),
                        Self::tile_of(take(&mut args, 1), op)?,
                        Self::tile_of(take(&mut args, 2), op)?,
                    )
                };
                let (m, n, d) = Self::result_tile(c)?;
                let k = l.cols;
                self.tick((m * n * k) as u64)?;
                let mut data = vec![0.0; m * n];
                for i in 0..m {
                    for j in 0..n {
                        let mut s = acc.as_ref().map_or(0.0, |a| a.data[i * n + j]);
                        for x in 0..k {
                            s += l.data[i * k + x] * r.data[x * n + j];
                        }
                        data[i * n + j] = round_to(s, d);
                    }
                }
                Value::Tile(TileVal {
                    rows: m,
                    cols: n,
                    dtype: d,
                    data,
                    valid: None,
                })
            }
            "tile.full" | "tile.expands" => {
                let (rows, cols, d) = Self::result_tile(c)?;
                let s = match args.last().cloned() {
                    Some(Value::Scalar(s)) => s,
                    _ => return ierr(format!("{op}: expected a scalar")),
                };
                self.tick((rows * cols) as u64)?;
                Value::Tile(TileVal {
                    rows,
                    cols,
                    dtype: d,
                    data: vec![round_to(s, d); rows * cols],
                    valid: None,
                })
            }
            other => unreachable!("op sends tile_compute_op only its own family, not {other}"),
        })
    }

    /// A tile operation that moves elements: moves, reshapes, transposes and windows.
    fn tile_layout_op(
        &mut self,
        op: &str,
        c: &Call,
        mut args: Vec<Value>,
    ) -> Result<Value, InterpError> {
        Ok(match op {
            "tile.move" => Value::Tile(Self::tile_of(take(&mut args, 0), op)?),
            "tile.reshape" => {
                let (rows, cols, _) = Self::result_tile(c)?;
                let a = Self::tile_of(take(&mut args, 0), op)?;
                Value::Tile(TileVal { rows, cols, ..a })
            }
            "tile.transpose" | "tile.transpose_view" => {
                let a = Self::tile_of(take(&mut args, 0), op)?;
                let mut data = Vec::with_capacity(a.data.len());
                for c in 0..a.cols {
                    for r in 0..a.rows {
                        data.push(a.data[r * a.cols + c]);
                    }
                }
                self.tick(data.len() as u64)?;
                Value::Tile(TileVal {
                    rows: a.cols,
                    cols: a.rows,
                    dtype: a.dtype,
                    data,
                    valid: None,
                })
            }
            "tile.assemble" => {
                let mut target = Self::tile_of(take(&mut args, 0), op)?;
                let source = Self::tile_of(take(&mut args, 1), op)?;
                let at = Self::list_of(take(&mut args, 2))?;
                let (r0, c0) = Self::window_origin(&at, &source, &target, op)?;
                // An accumulator written into a narrower Mat tile rounds (FIXPIPE).
                let d = target.dtype;
                for r in 0..source.rows {
                    for col in 0..source.cols {
                        target.data[(r0 + r) * target.cols + c0 + col] =
                            round_to(source.data[r * source.cols + col], d);
                    }
                }
                self.tick(source.data.len() as u64)?;
                Value::Tile(target)
            }
            "tile.slice" => {
                let src = Self::tile_of(take(&mut args, 0), op)?;
                let at = Self::list_of(take(&mut args, 1))?;
                let (rows, cols, dtype) = Self::result_tile(c)?;
                let window = TileVal {
                    rows,
                    cols,
                    dtype,
                    data: Vec::with_capacity(rows * cols),
                    valid: None,
                };
                let (r0, c0) = Self::window_origin(&at, &window, &src, op)?;
                let mut data = window.data;
                for r in 0..rows {
                    data.extend_from_slice(&src.data[(r0 + r) * src.cols + c0..][..cols]);
                }
                self.tick(data.len() as u64)?;
                Value::Tile(TileVal { data, ..window })
            }
            "tile.concat" => {
                let a = Self::tile_of(take(&mut args, 0), op)?;
                let b = Self::tile_of(take(&mut args, 1), op)?;
                let cols = a.cols + b.cols;
                let mut data = Vec::with_capacity(a.rows * cols);
                for r in 0..a.rows {
                    data.extend_from_slice(&a.data[r * a.cols..(r + 1) * a.cols]);
                    data.extend_from_slice(&b.data[r * b.cols..(r + 1) * b.cols]);
                }
                self.tick(data.len() as u64)?;
                Value::Tile(TileVal {
                    rows: a.rows,
                    cols,
                    dtype: a.dtype,
                    data,
                    valid: None,
                })
            }
            other => unreachable!("op sends tile_layout_op only its own family, not {other}"),
        })
    }

    /// A `tensor.*` operation outside the op table.
    fn tensor_op(
        &mut self,
        op: &str,
        c: &Call,
        mut args: Vec<Value>,
    ) -> Result<Value, InterpError> {
        Ok(match op {
            "tensor.create" => {
                let Type::Tensor(t) = &c.ty else {
                    return ierr(format!("{op}: not a tensor type"));
                };
                // Runtime sizes (a dimension known only at run time) come as the argument.
                let shape = match args.is_empty() {
                    true => t.shape.clone(),
                    false => Self::list_of(take(&mut args, 0))?,
                };
                if let Some(bad) = shape.iter().find(|&&d| d <= 0) {
                    return ierr(format!("{op}: size {bad} is not positive"));
                }
                let n: i64 = shape.iter().product();
                self.tick(n as u64)?;
                Value::Tensor(new_view(t.dtype, &shape, vec![0.0; n.max(0) as usize]))
            }
            "tensor.slice" => {
                let mut view = Self::view_of(take(&mut args, 0), op)?;
                let offsets = Self::list_of(take(&mut args, 1))?;
                let mut shape = match args.len() > 2 {
                    true => Self::list_of(take(&mut args, 2))?,
                    false => c.kwargs.ints("shape").unwrap_or(&[]).to_vec(),
                };
                // A runtime offset past a runtime-sized tensor clamps the view (as the
                // generated C++).
                let src_dynamic = c.args[0]
                    .ty()
                    .as_tensor()
                    .is_some_and(crate::types::TensorType::is_dynamic);
                if let (true, Expr::List(items)) = (src_dynamic, &c.args[1]) {
                    for (d, off) in items.iter().enumerate() {
                        if off.as_const_int().is_none() && d < shape.len() && d < view.shape.len() {
                            let room = (view.shape[d] - offsets[d]).max(0);
                            shape[d] = shape[d].min(room);
                        }
                    }
                }
                // An empty view (clamped past the end) addresses nothing.
                if !shape.contains(&0) {
                    Self::region(&view, &offsets, &shape, op)?;
                    view.offset = view.index(&offsets) as i64;
                }
                view.shape = shape;
                Value::Tensor(view)
            }
            "tensor.reshape" => {
                let view = Self::view_of(take(&mut args, 0), op)?;
                if !view.contiguous() {
                    return ierr(format!("{op}: reshape of a non-contiguous view"));
                }
                let shape = c.kwargs.ints("shape").unwrap_or(&[]).to_vec();
                let strides = row_major(&shape);
                Value::Tensor(View {
                    shape,
                    strides,
                    ..view
                })
            }
            "tensor.dim" => {
                let view = Self::view_of(take(&mut args, 0), op)?;
                let axis = c.args[1].as_const_int().unwrap_or(-1);
                match usize::try_from(axis).ok().and_then(|a| view.shape.get(a)) {
                    Some(d) => Value::Scalar(*d as f64),
                    None => {
                        return ierr(format!(
                            "{op}: axis {axis} of a rank-{} tensor",
                            view.shape.len()
                        ))
                    }
                }
            }
            "tensor.read" => {
                let view = Self::view_of(take(&mut args, 0), op)?;
                let idx = Self::list_of(take(&mut args, 1))?;
                let ones = vec![1; idx.len()];
                let at = Self::region(&view, &idx, &ones, op)?;
                let v = view.buf.borrow()[at[0]];
                Value::Scalar(v)
            }
            "tensor.write" => {
                let view = Self::view_of(take(&mut args, 0), op)?;
                let idx = Self::list_of(take(&mut args, 1))?;
                let v = match take(&mut args, 2) {
                    Value::Scalar(v) => v,
                    other => return ierr(format!("{op}: expected a scalar value, got {other:?}")),
                };
                let ones = vec![1; idx.len()];
                let at = Self::region(&view, &idx, &ones, op)?;
                view.buf.borrow_mut()[at[0]] = round_to(v, view.dtype);
                Value::Tensor(view)
            }
            "tensor.assemble" => {
                let target = Self::view_of(take(&mut args, 0), op)?;
                let source = Self::view_of(take(&mut args, 1), op)?;
                let offsets = Self::list_of(take(&mut args, 2))?;
                let to = Self::region(&target, &offsets, &source.shape, op)?;
                let zeros = vec![0; source.shape.len()];
                let from = Self::region(&source, &zeros, &source.shape, op)?;
                self.tick(to.len() as u64)?;
                let vals: Vec<f64> = {
                    let b = source.buf.borrow();
                    from.iter().map(|&i| b[i]).collect()
                };
                let mut b = target.buf.borrow_mut();
                for (i, &at) in to.iter().enumerate() {
                    b[at] = vals[i];
                }
                drop(b);
                Value::Tensor(target)
            }
            other => unreachable!("op sends tensor_op only its own family, not {other}"),
        })
    }

    /// An `array.*` operation or the dependency-only task.
    fn array_op(&mut self, op: &str, c: &Call, mut args: Vec<Value>) -> Result<Value, InterpError> {
        Ok(match op {
            "array.create" => {
                let n = usize::try_from(c.kwargs.int("size").unwrap_or(0)).unwrap_or(0);
                let elem = if matches!(c.ty.as_array(), Some((_, Type::TaskId))) {
                    Value::TaskId
                } else {
                    Value::Scalar(0.0)
                };
                Value::Array(vec![elem; n])
            }
            "array.get_element" | "array.update_element" => {
                let Value::Array(mut items) = take(&mut args, 0) else {
                    return ierr(format!("{op}: the first operand is not an array"));
                };
                let Value::Scalar(i) = take(&mut args, 1) else {
                    return ierr(format!("{op}: the index is not a scalar"));
                };
                if !(0.0..items.len() as f64).contains(&i) {
                    return ierr(format!(
                        "{op}: index {i} is outside the array of {} elements",
                        items.len()
                    ));
                }
                let i = i as usize;
                if op == "array.get_element" {
                    items.swap_remove(i)
                } else {
                    items[i] = take(&mut args, 2);
                    Value::Array(items)
                }
            }
            "system.task_dummy" => Value::TaskId,
            other => unreachable!("op sends array_op only its own family, not {other}"),
        })
    }

    fn bind(
        &mut self,
        targets: &[crate::ir::Var],
        value: Value,
        env: &mut Env,
    ) -> Result<(), InterpError> {
        if targets.len() == 1 {
            env.bind(&targets[0], value);
            return Ok(());
        }
        match value {
            Value::Tuple(items) if items.len() == targets.len() => {
                for (t, v) in targets.iter().zip(items) {
                    env.bind(t, v);
                }
                Ok(())
            }
            other => ierr(format!(
                "cannot unpack {other:?} into {} names",
                targets.len()
            )),
        }
    }

    /// Runs `body`; returns the values of a `return`, when one ran.
    fn body(&mut self, body: &[Stmt], env: &mut Env) -> Result<Option<Vec<Value>>, InterpError> {
        for s in body {
            self.tick(1)?;
            match &s.kind {
                StmtKind::Assign { targets, value } => {
                    let v = self.eval(value, env)?;
                    self.bind(targets, v, env)?;
                }
                StmtKind::Eval(e) => {
                    self.eval(e, env)?;
                }
                StmtKind::Return(vs) => {
                    let mut out = Vec::new();
                    for v in vs {
                        out.push(self.eval(v, env)?);
                    }
                    return Ok(Some(out));
                }
                StmtKind::For(f) => {
                    let start = self.scalar(&f.start, env)? as i64;
                    let stop = self.scalar(&f.stop, env)? as i64;
                    let step = self.scalar(&f.step, env)? as i64;
                    if step <= 0 {
                        return ierr(format!("loop step {step} is not positive"));
                    }
                    for (v, init) in &f.iter_args {
                        let x = self.eval(init, env)?;
                        env.bind(v, x);
                    }
                    // Before SSA a name assigned in the body and bound before the loop is
                    // carried by name: each iteration reads the pre-loop variable.
                    let mut carried: Vec<(u64, String)> = Vec::new();
                    for (name, ids) in assigned_by_name(&f.body) {
                        if let Some(&pre) = env.by_name.get(&name) {
                            if let Some(x) = env.get(&pre).cloned() {
                                for id in ids {
                                    env.insert(id, x.clone());
                                }
                            }
                            carried.push((pre, name));
                        }
                    }
                    let mut i = start;
                    while i < stop {
                        env.bind(&f.var, Value::Scalar(i as f64));
                        if let Some(r) = self.body(&f.body, env)? {
                            return Ok(Some(r));
                        }
                        for (pre, name) in &carried {
                            if let Some(x) =
                                env.by_name.get(name).and_then(|id| env.get(id)).cloned()
                            {
                                env.insert(*pre, x);
                            }
                        }
                        let mut ys = Vec::new();
                        for y in &f.yields {
                            ys.push(self.eval(y, env)?);
                        }
                        for ((v, _), y) in f.iter_args.iter().zip(ys) {
                            env.insert(v.id(), y);
                        }
                        i += step;
                    }
                    for (r, (v, _)) in f.results.iter().zip(&f.iter_args) {
                        let x = env.get(&v.id()).cloned().unwrap_or(Value::Unit);
                        env.insert(r.id(), x);
                    }
                }
                StmtKind::If(i) => {
                    let c = self.scalar(&i.cond, env)? != 0.0;
                    let (b, ys, other) = if c {
                        (&i.then_body, &i.then_yields, &i.else_body)
                    } else {
                        (&i.else_body, &i.else_yields, &i.then_body)
                    };
                    if let Some(r) = self.body(b, env)? {
                        return Ok(Some(r));
                    }
                    // Before SSA the name bound after the if may be the other branch's
                    // variable: give it the value the executed branch left under that name.
                    for (name, ids) in assigned_by_name(other) {
                        if let Some(x) = env.by_name.get(&name).and_then(|id| env.get(id)).cloned()
                        {
                            for id in ids {
                                env.insert(id, x.clone());
                            }
                        }
                    }
                    let mut vals = Vec::new();
                    for y in ys {
                        vals.push(self.eval(y, env)?);
                    }
                    for (r, v) in i.results.iter().zip(vals) {
                        env.insert(r.id(), v);
                    }
                }
                StmtKind::Scope(sc) => {
                    if let Some(r) = self.body(&sc.body, env)? {
                        return Ok(Some(r));
                    }
                    if let Some(t) = &sc.task_id {
                        env.insert(t.id(), Value::TaskId);
                    }
                }
            }
        }
        Ok(None)
    }

    fn run_function(&mut self, f: &Function, args: Vec<Value>) -> Result<Vec<Value>, InterpError> {
        if args.len() > f.params.len() {
            return ierr(format!(
                "'{}' takes {} arguments, got {}",
                f.name,
                f.params.len(),
                args.len()
            ));
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return ierr(format!(
                "calls nest deeper than {MAX_DEPTH} at '{}'",
                f.name
            ));
        }
        let mut env = Env::default();
        let n_args = args.len();
        for (p, a) in f.params.iter().zip(args) {
            env.bind(&p.var, a);
        }
        // Omitted trailing Out parameters (pl.submit): runtime-allocated outputs.
        for p in &f.params[n_args..] {
            let Type::Tensor(t) = p.var.ty() else {
                return ierr(format!("'{}': a scalar argument is missing", f.name));
            };
            let n: i64 = t.shape.iter().product();
            env.insert(
                p.var.id(),
                Value::Tensor(new_view(t.dtype, &t.shape, vec![0.0; n.max(0) as usize])),
            );
        }
        let ret = self.body(&f.body, &mut env)?;
        self.depth -= 1;
        Ok(ret.unwrap_or_default())
    }
}

fn row_major(shape: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

fn new_view(dtype: DataType, shape: &[i64], data: Vec<f64>) -> View {
    View {
        buf: Rc::new(RefCell::new(data)),
        dtype,
        shape: shape.to_vec(),
        strides: row_major(shape),
        offset: 0,
    }
}

/// Runs the orchestration function of `program` (or `entry`) on `args`; returns every
/// tensor parameter's values after the run, in parameter order.
pub fn interpret(
    program: &Program,
    entry: Option<&str>,
    args: Vec<Arg>,
) -> Result<Vec<HostTensor>, InterpError> {
    let f = match entry {
        Some(name) => program.function(name),
        None => program
            .orchestrations()
            .next()
            .or_else(|| program.functions.first()),
    }
    .ok_or_else(|| InterpError {
        message: format!("program {} has no function to run", program.name),
    })?;
    if args.len() != f.params.len() {
        return ierr(format!(
            "'{}' takes {} arguments, got {}",
            f.name,
            f.params.len(),
            args.len()
        ));
    }
    let mut values = Vec::new();
    let mut views = Vec::new();
    for (p, a) in f.params.iter().zip(args) {
        match (p.var.ty(), a) {
            (Type::Tensor(t), Arg::Tensor(h)) => {
                // A pl.dynamic dimension takes the argument's extent.
                let fits = h.shape.len() == t.shape.len()
                    && h.shape
                        .iter()
                        .zip(&t.shape)
                        .all(|(a, d)| a == d || *d == crate::types::DYNAMIC_DIM);
                if !fits || h.data.len() as i64 != h.shape.iter().product::<i64>() {
                    return ierr(format!(
                        "argument '{}' has shape {:?}, the parameter {:?}",
                        p.var.name(),
                        h.shape,
                        t.shape
                    ));
                }
                let v = new_view(t.dtype, &h.shape, h.data);
                views.push(Some(v.clone()));
                values.push(Value::Tensor(v));
            }
            (Type::Scalar(_), Arg::Scalar(s)) => {
                views.push(None);
                values.push(Value::Scalar(s));
            }
            (ty, _) => {
                return ierr(format!(
                    "argument '{}' does not match its parameter type {}",
                    p.var.name(),
                    ty.describe()
                ))
            }
        }
    }
    let mut it = Interp {
        block: (0, 1),
        program,
        ops: 0,
        depth: 0,
    };
    it.run_function(f, values)?;
    Ok(views
        .into_iter()
        .flatten()
        .map(|v| {
            let data = v.buf.borrow().clone();
            HostTensor {
                dtype: v.dtype,
                shape: v.shape.clone(),
                data,
            }
        })
        .collect())
}

/// Takes argument `i` out of `args` (leaving a unit in its place).
fn take(args: &mut [Value], i: usize) -> Value {
    std::mem::replace(&mut args[i], Value::Unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        assert_eq!(round_to(1.0 + 1e-9, DataType::Fp32), 1.0);
        assert_eq!(round_to(300.0, DataType::Int8), 44.0);
        assert_eq!(round_to(-129.0, DataType::Int8), 127.0);
        assert_eq!(round_to(1.00390625, DataType::Bf16), 1.0);
    }
}
