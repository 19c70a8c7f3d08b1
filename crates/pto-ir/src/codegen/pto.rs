//! Kernel codegen: one AIC / AIV function as a PTO-AS module (`ptoas/<name>.pto`), in the
//! shape PyPTO's PTO codegen writes (reference: the `.pto` format):
//!
//! 1. `module attributes {pto.target_arch = "a2a3"} {`
//! 2. `func.func @name(%arg0: !pto.ptr<f32>, ..., %argK: i32) attributes {pto.kernel_kind =
//!    #pto.kernel_kind<vector|cube>} {` — tensors first as pointers, then scalars;
//! 3. constants (`%c16_index = arith.constant 16 : index`, `%cst_0 = ... : f32`);
//! 4. one `pto.make_tensor_view` per tensor parameter, folded to `[rows, cols]` (row-major;
//!    a region of an N-D tensor is a block of whole rows of that folding);
//! 5. the body in destination-passing form: every tile op gets a `pto.alloc_tile` result
//!    (no `addr`: the build is level 2 and ptoas plans the memory), loads and stores go
//!    through `pto.partition_view`s; loops and ifs become `scf.for` / `scf.if` with tiles
//!    and scalars as loop-carried values; every op ends with `loc("file.py":line:col)`.
//!
//! Tensors are never SSA values in the `.pto`: a `pl.store` result, a loop-carried tensor
//! and a merged tensor all name the view of the parameter they write, so the returned
//! tensors map to parameter indices ([`KernelUnit::return_params`]), which the
//! orchestration uses to bind each kernel result to the argument it aliases.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::error::CompileError;
use crate::ir::{BinOp, Call, Expr, ForStmt, Function, IfStmt, Span, Stmt, StmtKind, UnOp, Var};
use crate::ops::store_region;
use crate::types::{DataType, FunctionType, MemorySpace, TensorType, TileType, Type, DYNAMIC_DIM};

mod dist;

const STAGE: &str = "codegen (.pto)";

/// A kernel parameter as the wrapper unpacks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelParam {
    /// A tensor argument of this element type.
    Tensor(DataType),
    /// A scalar argument of this type.
    Scalar(DataType),
    /// The address of a comm domain's `CommContext` (a `u64` scalar argument), which the
    /// kernel reads through a `!pto.ptr<i64>` (`pld.get_comm_ctx`).
    CommCtx,
    /// A size of a tensor with a dimension known only at run time (`pl.dynamic`):
    /// dimension `axis` (or, with `stride`, the element stride of dimension `axis`) of the
    /// tensor passed as parameter `param` (an index into the kernel's parameters), which the
    /// wrapper reads from the tensor's descriptor. These come after the scalars.
    Dim {
        /// The tensor parameter's position.
        param: usize,
        /// The dimension.
        axis: usize,
        /// The dimension's stride instead of its size.
        stride: bool,
    },
}

/// One generated kernel.
#[derive(Clone, Debug)]
pub struct KernelUnit {
    /// The function name (the `.pto` unit and the `kernels/<core>/<name>.cpp` stem).
    pub name: String,
    /// `true` for a cube (AIC) kernel.
    pub cube: bool,
    /// The `.pto` text.
    pub pto: String,
    /// Parameters in the function's order.
    pub params: Vec<KernelParam>,
    /// For each returned value, the parameter index it aliases.
    pub return_params: Vec<usize>,
}

/// A tensor as a kernel sees it: the view of parameter `root` (of type `tensor`), and for a
/// `tensor.slice` taken in the kernel the slice's offsets into it (`base`, one per
/// dimension; empty for the whole tensor).
#[derive(Clone, Debug)]
struct ViewVal {
    name: String,
    /// The parameter's pointer (`%argK`), for scalar reads.
    ptr: String,
    tensor: TensorType,
    root: usize,
    base: Vec<Expr>,
}

#[derive(Clone, Debug)]
enum Val {
    View(ViewVal),
    Tile { name: String, ty: TileType },
    Scalar { name: String, dtype: DataType },
}

/// The `.pto` type of a tile.
pub fn tile_buf(t: &TileType) -> String {
    tile_buf_with(t, false, 0)
}

/// The `.pto` type of a tile whose valid shape is a runtime value (`v_row=?, v_col=?`) when
/// `dynamic`, with pad code `pad` (0 none, 1 zero, 2 max, 3 min).
fn tile_buf_with(t: &TileType, dynamic: bool, pad: u8) -> String {
    let (blayout, slayout, fractal) = match t.memory {
        MemorySpace::Vec => {
            if t.cols == 1 && t.rows > 1 {
                ("col_major", "none_box", 512)
            } else {
                ("row_major", "none_box", 512)
            }
        }
        MemorySpace::Mat => ("col_major", "row_major", 512),
        MemorySpace::Left => ("row_major", "row_major", 512),
        MemorySpace::Right => ("row_major", "col_major", 512),
        MemorySpace::Acc => ("col_major", "row_major", 1024),
        MemorySpace::Bias => ("row_major", "none_box", 512),
    };
    format!(
        "!pto.tile_buf<loc={}, dtype={}, rows={}, cols={}, v_row={}, v_col={}, blayout={blayout}, slayout={slayout}, fractal={fractal}, pad={pad}>",
        t.memory.pto_loc(),
        t.dtype.pto_name(),
        t.rows,
        t.cols,
        if dynamic { "?".to_string() } else { t.rows.to_string() },
        if dynamic { "?".to_string() } else { t.cols.to_string() },
    )
}

/// `[rows, cols]` of a tensor folded to two dimensions (a vector is one row).
pub fn fold_2d(shape: &[i64]) -> (i64, i64) {
    match shape.split_last() {
        Some((cols, rest)) => (rest.iter().product(), *cols),
        None => (1, 1),
    }
}

fn view_type(t: &TensorType) -> String {
    format!("!pto.tensor_view<?x?x{}>", t.dtype.pto_name())
}

fn partition_type(sizes: &[i64], dtype: DataType) -> String {
    let dims: Vec<String> = sizes.iter().map(|d| d.to_string()).collect();
    format!(
        "!pto.partition_tensor_view<{}x{}>",
        dims.join("x"),
        dtype.pto_name()
    )
}

/// `a + b` as an index expression (constants folded).
fn add_index(a: &Expr, b: &Expr) -> Expr {
    match (a.as_const_int(), b.as_const_int()) {
        (Some(x), Some(y)) => Expr::index(x + y),
        (Some(0), _) => b.clone(),
        (_, Some(0)) => a.clone(),
        _ => Expr::Binary {
            op: BinOp::Add,
            lhs: Box::new(a.clone()),
            rhs: Box::new(b.clone()),
            dtype: DataType::Index,
        },
    }
}

/// A float literal in MLIR's form (`2.00000000000000000e+00`).
pub fn mlir_float(v: f64, dtype: DataType) -> String {
    if !v.is_finite() {
        // Bit patterns for the non-finite values.
        let bits = match (dtype, v.is_nan(), v > 0.0) {
            (DataType::Fp32, true, _) => "0x7FC00000",
            (DataType::Fp32, false, true) => "0x7F800000",
            (DataType::Fp32, false, false) => "0xFF800000",
            (DataType::Bf16, true, _) => "0x7FC0",
            (DataType::Bf16, false, true) => "0x7F80",
            (DataType::Bf16, false, false) => "0xFF80",
            (_, true, _) => "0x7E00",
            (_, false, true) => "0x7C00",
            (_, false, false) => "0xFC00",
        };
        return bits.to_string();
    }
    let s = format!("{v:.17e}");
    match s.split_once('e') {
        Some((mant, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mant}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Where a kernel operation's result goes: the variable it binds (if any), the name hint of
/// what it emits and its tile type (when it makes a tile).
struct OpResult<'v> {
    target: Option<&'v Var>,
    hint: String,
    tile: Option<TileType>,
}

struct Emitter<'a> {
    func: &'a Function,
    body: String,
    consts: Vec<String>,
    const_names: HashSet<String>,
    values: HashMap<u64, Val>,
    used_names: HashSet<String>,
    depth: usize,
    n_float: usize,
    float_consts: HashMap<(u64, DataType), String>,
    /// Tiles loaded with a valid shape (by SSA name): their runtime valid rows and columns.
    partial: HashMap<String, [String; 2]>,
}

fn perr(span: &Span, message: String, hint: &str) -> CompileError {
    CompileError::program(STAGE, span, message, hint)
}

impl<'a> Emitter<'a> {
    fn loc(span: &Span) -> String {
        if span.is_known() {
            format!(" loc(\"{}\":{}:{})", span.file_name(), span.line, span.col)
        } else {
            String::new()
        }
    }

    fn line(&mut self, text: &str, span: &Span) {
        for _ in 0..self.depth {
            self.body.push_str("  ");
        }
        self.body.push_str(text);
        self.body.push_str(&Self::loc(span));
        self.body.push('\n');
    }

    fn raw_line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.body.push_str("  ");
        }
        self.body.push_str(text);
        self.body.push('\n');
    }

    fn name_for(&mut self, hint: &str) -> String {
        let base: String = hint
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let base = if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            format!("v{base}")
        } else {
            base
        };
        let mut name = format!("%{base}");
        let mut k = 1;
        while !self.used_names.insert(name.clone()) {
            name = format!("%{base}_{k}");
            k += 1;
        }
        name
    }

    fn index_const(&mut self, v: i64) -> String {
        self.int_const(v, DataType::Index)
    }

    fn int_const(&mut self, v: i64, dtype: DataType) -> String {
        let suffix = dtype.pto_name();
        let name = if v < 0 {
            format!("%cm{}_{suffix}", v.unsigned_abs())
        } else {
            format!("%c{v}_{suffix}")
        };
        if self.const_names.insert(name.clone()) {
            self.used_names.insert(name.clone());
            self.consts
                .push(format!("{name} = arith.constant {v} : {suffix}"));
        }
        name
    }

    fn float_const(&mut self, v: f64, dtype: DataType) -> String {
        if let Some(n) = self.float_consts.get(&(v.to_bits(), dtype)) {
            return n.clone();
        }
        let name = format!("%cst_{}", self.n_float);
        self.n_float += 1;
        self.used_names.insert(name.clone());
        self.consts.push(format!(
            "{name} = arith.constant {} : {}",
            mlir_float(v, dtype),
            dtype.pto_name()
        ));
        self.float_consts.insert((v.to_bits(), dtype), name.clone());
        name
    }

    fn convert(&mut self, name: String, from: DataType, to: DataType, span: &Span) -> String {
        if from == to {
            return name;
        }
        let out = self.name_for("cast");
        let (f, t) = (from.pto_name(), to.pto_name());
        let text = if from == DataType::Index || to == DataType::Index {
            if from.is_float() || to.is_float() {
                // index <-> float goes through i64.
                let mid = self.convert(name, from, DataType::Int64, span);
                return self.convert(mid, DataType::Int64, to, span);
            }
            format!("{out} = arith.index_cast {name} : {f} to {t}")
        } else if from.is_float() && to.is_float() {
            if from.size_bytes() < to.size_bytes() {
                format!("{out} = arith.extf {name} : {f} to {t}")
            } else {
                format!("{out} = arith.truncf {name} : {f} to {t}")
            }
        } else if from.is_float() {
            format!("{out} = arith.fptosi {name} : {f} to {t}")
        } else if to.is_float() {
            format!("{out} = arith.sitofp {name} : {f} to {t}")
        } else if from.size_bytes() < to.size_bytes() {
            format!("{out} = arith.extsi {name} : {f} to {t}")
        } else if from.size_bytes() > to.size_bytes() {
            format!("{out} = arith.trunci {name} : {f} to {t}")
        } else {
            return name;
        };
        self.line(&text, span);
        out
    }

    /// Emits a scalar expression, converted to `want` when given.
    fn scalar(
        &mut self,
        e: &Expr,
        want: Option<DataType>,
        span: &Span,
    ) -> Result<(String, DataType), CompileError> {
        let (name, dtype) = match e {
            Expr::Int { value, dtype } => {
                let d = want.unwrap_or(*dtype);
                if d.is_float() {
                    (self.float_const(*value as f64, d), d)
                } else {
                    (self.int_const(*value, d), d)
                }
            }
            Expr::Float { value, dtype } => {
                let d = want.unwrap_or(*dtype);
                if d.is_float() {
                    (self.float_const(*value, d), d)
                } else {
                    (self.int_const(*value as i64, d), d)
                }
            }
            Expr::Bool(b) => (
                self.int_const(i64::from(*b), DataType::Bool),
                DataType::Bool,
            ),
            Expr::Var(v) => {
                match self.values.get(&v.id()) {
                    Some(Val::Scalar { name, dtype }) => (name.clone(), *dtype),
                    _ => return Err(perr(
                        span,
                        format!("'{}' is not a scalar here", v.name()),
                        "Use scalar parameters, loop variables or constants in scalar expressions.",
                    )),
                }
            }
            Expr::Binary {
                op,
                lhs,
                rhs,
                dtype,
            } => self.scalar_binary(*op, lhs, rhs, *dtype, span)?,
            Expr::Unary {
                op: UnOp::Cast,
                operand,
                dtype,
            } => self.scalar(operand, Some(*dtype), span)?,
            Expr::Unary { op, operand, dtype } => self.scalar_unary(*op, operand, *dtype, span)?,
            other => {
                return Err(perr(
                    span,
                    format!("this expression is not a scalar: {}", other.ty().describe()),
                    "Use scalar parameters, loop variables or constants here.",
                ))
            }
        };
        Ok(match want {
            Some(w) if w != dtype => (self.convert(name, dtype, w, span), w),
            _ => (name, dtype),
        })
    }

    /// Emits a scalar binary operation (arithmetic, logic or comparison): its value and type.
    fn scalar_binary(
        &mut self,
        op: BinOp,
        lhs: &Expr,
        rhs: &Expr,
        dtype: DataType,
        span: &Span,
    ) -> Result<(String, DataType), CompileError> {
        let operand = if op.is_predicate() {
            lhs.ty().as_scalar().unwrap_or(DataType::Index)
        } else {
            dtype
        };
        let (a, _) = self.scalar(lhs, Some(operand), span)?;
        let (b, _) = self.scalar(rhs, Some(operand), span)?;
        let out = self.name_for("s");
        let ty = operand.pto_name();
        let fl = operand.is_float();
        let text = match op {
            BinOp::Add => format!(
                "{out} = arith.{} {a}, {b} : {ty}",
                if fl { "addf" } else { "addi" }
            ),
            BinOp::Sub => format!(
                "{out} = arith.{} {a}, {b} : {ty}",
                if fl { "subf" } else { "subi" }
            ),
            BinOp::Mul => format!(
                "{out} = arith.{} {a}, {b} : {ty}",
                if fl { "mulf" } else { "muli" }
            ),
            BinOp::Div => format!(
                "{out} = arith.{} {a}, {b} : {ty}",
                if fl { "divf" } else { "divsi" }
            ),
            BinOp::FloorDiv => format!("{out} = arith.floordivsi {a}, {b} : {ty}"),
            BinOp::Mod => format!(
                "{out} = arith.{} {a}, {b} : {ty}",
                if fl { "remf" } else { "remsi" }
            ),
            BinOp::Min => format!(
                "{out} = arith.{} {a}, {b} : {ty}",
                if fl { "minimumf" } else { "minsi" }
            ),
            BinOp::Max => format!(
                "{out} = arith.{} {a}, {b} : {ty}",
                if fl { "maximumf" } else { "maxsi" }
            ),
            BinOp::And => format!("{out} = arith.andi {a}, {b} : i1"),
            BinOp::Or => format!("{out} = arith.ori {a}, {b} : i1"),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                let pred = match (op, fl) {
                    (BinOp::Lt, false) => "slt",
                    (BinOp::Le, false) => "sle",
                    (BinOp::Gt, false) => "sgt",
                    (BinOp::Ge, false) => "sge",
                    (BinOp::Eq, false) => "eq",
                    (BinOp::Ne, false) => "ne",
                    (BinOp::Lt, true) => "olt",
                    (BinOp::Le, true) => "ole",
                    (BinOp::Gt, true) => "ogt",
                    (BinOp::Ge, true) => "oge",
                    (BinOp::Eq, true) => "oeq",
                    _ => "une",
                };
                let cmp = if fl { "cmpf" } else { "cmpi" };
                format!("{out} = arith.{cmp} {pred}, {a}, {b} : {ty}")
            }
        };
        self.line(&text, span);
        let result = if op.is_predicate() {
            DataType::Bool
        } else {
            dtype
        };
        Ok((out, result))
    }

    /// Emits a scalar negation or logical not (casts are conversions, see [`Self::scalar`]).
    fn scalar_unary(
        &mut self,
        op: UnOp,
        operand: &Expr,
        dtype: DataType,
        span: &Span,
    ) -> Result<(String, DataType), CompileError> {
        let (a, d) = self.scalar(operand, Some(dtype), span)?;
        let out = self.name_for("s");
        let text = match op {
            UnOp::Neg if d.is_float() => {
                format!("{out} = arith.negf {a} : {}", d.pto_name())
            }
            UnOp::Neg => {
                let z = self.int_const(0, d);
                format!("{out} = arith.subi {z}, {a} : {}", d.pto_name())
            }
            UnOp::Not => {
                let t = self.int_const(1, DataType::Bool);
                format!("{out} = arith.xori {a}, {t} : i1")
            }
            UnOp::Cast => unreachable!("matched above"),
        };
        self.line(&text, span);
        Ok((out, d))
    }

    fn tile(&self, e: &Expr, span: &Span) -> Result<(String, TileType), CompileError> {
        let (name, ty) = self.tile_partial(e, span)?;
        if self.partial.contains_key(&name) {
            return Err(perr(
                span,
                format!(
                    "'{}' was loaded with valid_shape=; only pl.tile.fillpad and pl.store take a partly valid tile",
                    e.as_var().map_or("the tile", |v| v.name())
                ),
                "Fill the rest first: t = pl.tile.fillpad(t, pad_value=pl.PadValue.zero).",
            ));
        }
        Ok((name, ty))
    }

    /// A tile operand that may be partly valid (a load with `valid_shape=`).
    fn tile_partial(&self, e: &Expr, span: &Span) -> Result<(String, TileType), CompileError> {
        if let Some(v) = e.as_var() {
            if let Some(Val::Tile { name, ty }) = self.values.get(&v.id()) {
                return Ok((name.clone(), ty.clone()));
            }
        }
        Err(perr(
            span,
            "expected a tile value".into(),
            "Pass a tile produced in this kernel.",
        ))
    }

    fn view(&self, e: &Expr, span: &Span) -> Result<ViewVal, CompileError> {
        if let Some(v) = e.as_var() {
            if let Some(Val::View(view)) = self.values.get(&v.id()) {
                return Ok(view.clone());
            }
        }
        Err(perr(
            span,
            "expected a tensor parameter of this kernel".into(),
            "Kernels load from and store to their tensor parameters.",
        ))
    }

    /// The tensor parameter an element read or write (`tensor.read` / `tensor.write`)
    /// addresses, and the element's flat offset from its pointer (an `index` operand):
    /// the indices plus the window's base, each times its dimension's stride.
    fn element(&mut self, c: &Call, span: &Span) -> Result<(ViewVal, String), CompileError> {
        let src = self.view(&c.args[0], span)?;
        if src.tensor.is_dynamic() {
            return Err(perr(
                span,
                format!(
                    "pl.{} of {}, a tensor with a dimension known only at run time, in kernel code",
                    c.op_name().unwrap_or_default().trim_start_matches("tensor."),
                    Type::Tensor(src.tensor.clone()).describe()
                ),
                "Access the element in the orchestration (a scalar argument), or give the parameter a static shape.",
            ));
        }
        let Expr::List(idx) = &c.args[1] else {
            return Err(perr(span, "indices must be a list".into(), "Write [i, j]."));
        };
        let idx: Vec<Expr> = if src.base.is_empty() {
            idx.clone()
        } else {
            src.base
                .iter()
                .zip(idx)
                .map(|(b, o)| add_index(b, o))
                .collect()
        };
        let mut flat = Expr::index(0);
        for (d, i) in idx.iter().enumerate() {
            let stride: i64 = src.tensor.shape[d + 1..].iter().product();
            let term = if stride == 1 {
                i.clone()
            } else {
                Expr::Binary {
                    op: BinOp::Mul,
                    lhs: Box::new(i.clone()),
                    rhs: Box::new(Expr::index(stride)),
                    dtype: DataType::Index,
                }
            };
            flat = add_index(&flat, &term);
        }
        let (off, _) = self.scalar(&flat, Some(DataType::Index), span)?;
        Ok((src, off))
    }

    /// The `(row, col)` index operands of a two-entry offset list.
    fn offset_pair(
        &mut self,
        offsets: &Expr,
        span: &Span,
    ) -> Result<(String, String), CompileError> {
        match offsets {
            Expr::List(items) if items.len() == 2 => {
                let (r, _) = self.scalar(&items[0], Some(DataType::Index), span)?;
                let (c, _) = self.scalar(&items[1], Some(DataType::Index), span)?;
                Ok((r, c))
            }
            _ => Err(perr(
                span,
                "a tile offset must be a list of two entries".into(),
                "Write [row, col].",
            )),
        }
    }

    fn alloc(&mut self, hint: &str, ty: &TileType, span: &Span) -> String {
        let name = self.name_for(hint);
        let text = format!("{name} = pto.alloc_tile : {}", tile_buf(ty));
        self.line(&text, span);
        name
    }

    /// The 2-D partition of region (`offsets`, `sizes`) of `tensor` (every view is its
    /// tensor folded to `[rows, cols]`; the front end admits only regions that are a block
    /// of whole rows of that folding): emits the offsets and the `pto.partition_view`.
    fn partition(
        &mut self,
        src: &ViewVal,
        offsets: &Expr,
        sizes: &[i64],
        span: &Span,
    ) -> Result<(String, [i64; 2]), CompileError> {
        self.partition_sized(src, offsets, sizes, None, span)
    }

    /// [`Self::partition`] whose `[rows, cols]` extents are the runtime values `extents`
    /// when given (a load of a valid shape); `sizes` still bounds the region.
    fn partition_sized(
        &mut self,
        src: &ViewVal,
        offsets: &Expr,
        sizes: &[i64],
        extents: Option<&[String; 2]>,
        span: &Span,
    ) -> Result<(String, [i64; 2]), CompileError> {
        let view = src.name.as_str();
        let tensor = &src.tensor;
        let Expr::List(offs) = offsets else {
            return Err(perr(
                span,
                "offsets must be a list".into(),
                "Write [row, col].",
            ));
        };
        let offs: Vec<Expr> = if src.base.is_empty() {
            offs.clone()
        } else {
            if let Err(e) = crate::ops::check_rows_contiguous("tile.load", tensor, sizes) {
                return Err(perr(span, e.message, &e.hint));
            }
            src.base
                .iter()
                .zip(offs)
                .map(|(b, o)| add_index(b, o))
                .collect()
        };
        let n = tensor.shape.len();
        if offs.len() != n || sizes.len() != n || n == 0 {
            return Err(perr(
                span,
                format!("a rank-{n} region needs {n} offsets and sizes"),
                "Give one offset and one size per dimension.",
            ));
        }
        let cols = sizes[n - 1];
        let rows: i64 = sizes[..n - 1].iter().product();
        // Row offset: sum of offsets[d] * (elements of a row block of dimension d).
        let mut konst = 0i64;
        let mut terms: Vec<Expr> = Vec::new();
        for (d, off) in offs.iter().enumerate().take(n - 1) {
            let k: i64 = tensor.shape[d + 1..n - 1].iter().product();
            match off.as_const_int() {
                Some(c) => konst += c * k,
                None => terms.push(if k == 1 {
                    off.clone()
                } else {
                    Expr::Binary {
                        op: BinOp::Mul,
                        lhs: Box::new(off.clone()),
                        rhs: Box::new(Expr::index(k)),
                        dtype: DataType::Index,
                    }
                }),
            }
        }
        let mut row = if konst != 0 || terms.is_empty() {
            Some(Expr::index(konst))
        } else {
            None
        };
        for t in terms {
            row = Some(match row {
                None => t,
                Some(r) => Expr::Binary {
                    op: BinOp::Add,
                    lhs: Box::new(r),
                    rhs: Box::new(t),
                    dtype: DataType::Index,
                },
            });
        }
        let row = row.unwrap_or_else(|| Expr::index(0));
        let (r, _) = self.scalar(&row, Some(DataType::Index), span)?;
        let (c, _) = self.scalar(&offs[n - 1], Some(DataType::Index), span)?;
        let pv = self.name_for(&format!("{}_pview", view.trim_start_matches('%')));
        let (rn, cn, ptype) = match extents {
            Some([er, ec]) => (
                er.clone(),
                ec.clone(),
                format!(
                    "!pto.partition_tensor_view<?x?x{}>",
                    tensor.dtype.pto_name()
                ),
            ),
            None => (
                self.index_const(rows),
                self.index_const(cols),
                partition_type(&[rows, cols], tensor.dtype),
            ),
        };
        let text = format!(
            "{pv} = pto.partition_view {view}, offsets = [{r}, {c}], sizes = [{rn}, {cn}] : {} -> {ptype}",
            view_type(tensor),
        );
        self.line(&text, span);
        Ok((pv, [rows, cols]))
    }

    /// Emits operation call `c`, bound to `target` when given: one function per family.
    fn call(&mut self, target: Option<&Var>, c: &Call, span: &Span) -> Result<(), CompileError> {
        let Some(op) = c.op_name() else {
            return Err(perr(
                span,
                format!(
                    "kernel '{}' calls function '{}'",
                    self.func.name,
                    c.function_name().unwrap_or("")
                ),
                "Kernels cannot call functions; mark the helper Inline.",
            ));
        };
        let res = OpResult {
            target,
            hint: target
                .map(|t| t.name().to_string())
                .unwrap_or_else(|| "t".into()),
            tile: match &c.ty {
                Type::Tile(t) => Some(t.clone()),
                _ => None,
            },
        };
        if op.starts_with("dist.") {
            return self.dist_op(target, c, span);
        }
        match op {
            "tile.load" | "tile.store" | "tile.fillpad" | "tile.alloc" | "tile.get_block_idx"
            | "tile.get_block_num" => self.memory_op(op, c, &res, span),
            "tensor.slice" | "tensor.read" | "tensor.write" => self.tensor_op(op, c, &res, span),
            "tile.transpose_view" | "tile.assemble" | "tile.slice" | "tile.reshape" => {
                self.layout_op(op, c, &res, span)
            }
            _ => self.compute_op(op, c, &res, span),
        }
    }

    /// Binds `name`, a tile of the result's type, to the result's variable (when both exist).
    fn bind_tile(&mut self, res: &OpResult, name: String) {
        if let (Some(t), Some(ty)) = (res.target, res.tile.clone()) {
            self.values.insert(t.id(), Val::Tile { name, ty });
        }
    }

    /// Emits a kernel operation that moves data between GM and tiles, or makes a tile.
    fn memory_op(
        &mut self,
        op: &str,
        c: &Call,
        res: &OpResult,
        span: &Span,
    ) -> Result<(), CompileError> {
        match op {
            "tile.load" => {
                let src = self.view(&c.args[0], span)?;
                let tensor = src.tensor.clone();
                let sizes = c.kwargs.ints("shapes").unwrap_or(&[]).to_vec();
                let ty = res.tile.clone().unwrap_or(TileType {
                    rows: 1,
                    cols: 1,
                    dtype: tensor.dtype,
                    memory: MemorySpace::Vec,
                });
                if let Some(Expr::List(valid)) = c.args.get(2) {
                    // A partly valid tile: the valid extents are runtime values, the
                    // partition reads only them.
                    let vr = self.scalar(&valid[0], Some(DataType::Index), span)?.0;
                    let vc = self.scalar(&valid[1], Some(DataType::Index), span)?.0;
                    let t = self.name_for(&res.hint);
                    let dynamic = tile_buf_with(&ty, true, 0);
                    self.line(
                        &format!(
                            "{t} = pto.alloc_tile valid_row = {vr} valid_col = {vc} : {dynamic}"
                        ),
                        span,
                    );
                    let extents = [vr.clone(), vc.clone()];
                    let (pv, _) =
                        self.partition_sized(&src, &c.args[1], &sizes, Some(&extents), span)?;
                    let ptype = format!(
                        "!pto.partition_tensor_view<?x?x{}>",
                        tensor.dtype.pto_name()
                    );
                    self.line(
                        &format!("pto.tload ins({pv} : {ptype}) outs({t} : {dynamic})"),
                        span,
                    );
                    self.partial.insert(t.clone(), [vr, vc]);
                    self.bind_tile(res, t);
                    return Ok(());
                }
                let t = self.alloc(&res.hint, &ty, span);
                let (pv, region) = self.partition(&src, &c.args[1], &sizes, span)?;
                let text = format!(
                    "pto.tload ins({pv} : {}) outs({t} : {})",
                    partition_type(&region, tensor.dtype),
                    tile_buf(&ty)
                );
                self.line(&text, span);
                self.bind_tile(res, t);
            }
            "tile.store" => {
                let (src, sty) = self.tile_partial(&c.args[0], span)?;
                let src_buf = tile_buf_with(&sty, self.partial.contains_key(&src), 0);
                let dst = self.view(&c.args[2], span)?;
                let sizes = store_region(dst.tensor.shape.len(), sty.rows, sty.cols);
                let extents = self.partial.get(&src).cloned();
                let (pv, region) =
                    self.partition_sized(&dst, &c.args[1], &sizes, extents.as_ref(), span)?;
                let ptype = if extents.is_some() {
                    format!(
                        "!pto.partition_tensor_view<?x?x{}>",
                        dst.tensor.dtype.pto_name()
                    )
                } else {
                    partition_type(&region, dst.tensor.dtype)
                };
                let atomic = match c.kwargs.str("atomic") {
                    Some("add") => " {atomicType = #pto<atomic_type atomic_add>}",
                    _ => "",
                };
                let text =
                    format!("pto.tstore ins({src} : {src_buf}) outs({pv} : {ptype}){atomic}");
                self.line(&text, span);
                if let Some(t) = res.target {
                    self.values.insert(t.id(), Val::View(dst));
                }
            }
            "tile.fillpad" => {
                let (src, sty) = self.tile_partial(&c.args[0], span)?;
                let pad = match c.kwargs.str("pad_value") {
                    Some("zero") => 1,
                    Some("max") => 2,
                    _ => 3,
                };
                let out_buf = tile_buf_with(&sty, false, pad);
                let out = self.name_for(&res.hint);
                self.line(&format!("{out} = pto.alloc_tile : {out_buf}"), span);
                let text = format!(
                    "pto.tfillpad ins({src} : {}) outs({out} : {out_buf})",
                    tile_buf_with(&sty, self.partial.contains_key(&src), 0)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            "tile.alloc" => {
                let ty = res
                    .tile
                    .clone()
                    .ok_or_else(|| perr(span, "tile.alloc".into(), ""))?;
                let out = self.alloc(&res.hint, &ty, span);
                self.bind_tile(res, out);
            }
            "tile.get_block_idx" | "tile.get_block_num" => {
                let out = self.name_for(&res.hint);
                let query = op.trim_start_matches("tile.");
                self.line(&format!("{out} = pto.{query}"), span);
                if let Some(t) = res.target {
                    self.values.insert(
                        t.id(),
                        Val::Scalar {
                            name: out,
                            dtype: DataType::Int64,
                        },
                    );
                }
            }
            other => unreachable!("call sends memory_op only its own family, not {other}"),
        }
        Ok(())
    }

    /// Emits a window of a tensor parameter or a read / write of one of its elements.
    fn tensor_op(
        &mut self,
        op: &str,
        c: &Call,
        res: &OpResult,
        span: &Span,
    ) -> Result<(), CompileError> {
        match op {
            "tensor.slice" => {
                // A window of a tensor parameter: later loads and stores address the
                // parameter at the slice's offsets plus their own.
                let src = self.view(&c.args[0], span)?;
                let Expr::List(offs) = &c.args[1] else {
                    return Err(perr(
                        span,
                        "slice offsets must be a list".into(),
                        "Write [row, col].",
                    ));
                };
                let base = if src.base.is_empty() {
                    offs.clone()
                } else {
                    src.base
                        .iter()
                        .zip(offs)
                        .map(|(b, o)| add_index(b, o))
                        .collect()
                };
                if let Some(t) = res.target {
                    self.values
                        .insert(t.id(), Val::View(ViewVal { base, ..src }));
                }
            }
            "tensor.read" => {
                // One element of a tensor parameter, read from GM.
                let (src, off) = self.element(c, span)?;
                let out = self.name_for(&res.hint);
                let d = src.tensor.dtype.pto_name();
                self.line(
                    &format!(
                        "{out} = pto.load_scalar {}[{off}] : !pto.ptr<{d}> -> {d}",
                        src.ptr
                    ),
                    span,
                );
                if let Some(t) = res.target {
                    self.values.insert(
                        t.id(),
                        Val::Scalar {
                            name: out,
                            dtype: src.tensor.dtype,
                        },
                    );
                }
            }
            "tensor.write" => {
                // One element of a tensor parameter, written to GM in place.
                let (dst, off) = self.element(c, span)?;
                let d = dst.tensor.dtype;
                let (v, _) = self.scalar(&c.args[2], Some(d), span)?;
                let p = d.pto_name();
                self.line(
                    &format!(
                        "pto.store_scalar {v}, {}[{off}] : !pto.ptr<{p}>, {p}",
                        dst.ptr
                    ),
                    span,
                );
                if let Some(t) = res.target {
                    self.values.insert(t.id(), Val::View(dst));
                }
            }
            other => unreachable!("call sends tensor_op only its own family, not {other}"),
        }
        Ok(())
    }

    /// Emits a tile operation that rearranges elements: views, windows, insertion, reshapes.
    fn layout_op(
        &mut self,
        op: &str,
        c: &Call,
        res: &OpResult,
        span: &Span,
    ) -> Result<(), CompileError> {
        match op {
            "tile.transpose_view" => {
                let (a, aty) = self.tile(&c.args[0], span)?;
                let ty = res.tile.clone().unwrap_or(aty.clone());
                let out = self.name_for(&res.hint);
                let zn = tile_buf(&ty).replace(
                    "blayout=col_major, slayout=row_major",
                    "blayout=row_major, slayout=col_major",
                );
                self.line(
                    &format!("{out} = pto.treshape {a} : {} -> {zn}", tile_buf(&aty)),
                    span,
                );
                self.bind_tile(res, out);
            }
            "tile.assemble" => {
                // TINSERT writes the source into the target in place (PyPTO: the result
                // inherits the target's memory).
                let (dst, dty) = self.tile(&c.args[0], span)?;
                let (src, sty) = self.tile(&c.args[1], span)?;
                let (r, col) = self.offset_pair(&c.args[2], span)?;
                let text = format!(
                    "pto.tinsert ins({src}, {r}, {col} : {}, index, index) outs({dst} : {})",
                    tile_buf(&sty),
                    tile_buf(&dty)
                );
                self.line(&text, span);
                self.bind_tile(res, dst);
            }
            "tile.slice" => {
                let (src, sty) = self.tile(&c.args[0], span)?;
                let ty = res.tile.clone().unwrap_or(sty.clone());
                let (r, col) = self.offset_pair(&c.args[1], span)?;
                let out = self.alloc(&res.hint, &ty, span);
                let text = format!(
                    "pto.textract ins({src}, {r}, {col} : {}, index, index) outs({out} : {})",
                    tile_buf(&sty),
                    tile_buf(&ty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            "tile.reshape" => {
                let (a, aty) = self.tile(&c.args[0], span)?;
                let ty = res.tile.clone().unwrap_or(aty.clone());
                let out = self.name_for(&res.hint);
                let text = format!(
                    "{out} = pto.treshape {a} : {} -> {}",
                    tile_buf(&aty),
                    tile_buf(&ty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            other => unreachable!("call sends layout_op only its own family, not {other}"),
        }
        Ok(())
    }

    /// Emits a computing tile operation: the special forms, then the generic
    /// destination-passing form of the op table (an error for an operation kernels lack).
    fn compute_op(
        &mut self,
        op: &str,
        c: &Call,
        res: &OpResult,
        span: &Span,
    ) -> Result<(), CompileError> {
        let info = crate::ops::op_info(op);
        match op {
            "tile.matmul_acc" => {
                let (acc, aty) = self.tile(&c.args[0], span)?;
                let (l, lty) = self.tile(&c.args[1], span)?;
                let (r, rty) = self.tile(&c.args[2], span)?;
                let text = format!(
                    "pto.tmatmul.acc ins({acc}, {l}, {r} : {}, {}, {}) outs({acc} : {})",
                    tile_buf(&aty),
                    tile_buf(&lty),
                    tile_buf(&rty),
                    tile_buf(&aty)
                );
                self.line(&text, span);
                self.bind_tile(res, acc);
            }
            "tile.row_max" | "tile.row_sum" | "tile.row_min" | "tile.transpose" => {
                // One scratch tile of the operand's type (TROWMAX's, TTRANS's).
                let (a, aty) = self.tile(&c.args[0], span)?;
                let ty = res.tile.clone().unwrap_or(aty.clone());
                let tmp = self.alloc(&format!("{}_tmp", res.hint), &aty, span);
                let out = self.alloc(&res.hint, &ty, span);
                let text = format!(
                    "{} ins({a}, {tmp} : {}, {}) outs({out} : {})",
                    info.map_or("", |i| i.pto),
                    tile_buf(&aty),
                    tile_buf(&aty),
                    tile_buf(&ty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            "tile.cast" => {
                let (a, aty) = self.tile(&c.args[0], span)?;
                let ty = res.tile.clone().unwrap_or(aty.clone());
                let out = self.alloc(&res.hint, &ty, span);
                let mode = c.kwargs.str("mode").unwrap_or("rint").to_ascii_uppercase();
                let text = format!(
                    "pto.tcvt ins({a} {{rmode = #pto<round_mode {mode}>}} : {}) outs({out} : {})",
                    tile_buf(&aty),
                    tile_buf(&ty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            "tile.full" => {
                let ty = res.tile.clone().ok_or_else(|| perr(span, "tile.full".into(), ""))?;
                let (s, _) = self.scalar(&c.args[0], Some(ty.dtype), span)?;
                let out = self.alloc(&res.hint, &ty, span);
                let text = format!(
                    "pto.texpands ins({s} : {}) outs({out} : {})",
                    ty.dtype.pto_name(),
                    tile_buf(&ty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            "tile.expands" => {
                let (_, aty) = self.tile(&c.args[0], span)?;
                let (s, _) = self.scalar(&c.args[1], Some(aty.dtype), span)?;
                let out = self.alloc(&res.hint, &aty, span);
                let text = format!(
                    "pto.texpands ins({s} : {}) outs({out} : {})",
                    aty.dtype.pto_name(),
                    tile_buf(&aty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            "tile.row_expand" | "tile.col_expand" => {
                let (_, aty) = self.tile(&c.args[0], span)?;
                let (v, vty) = self.tile(&c.args[1], span)?;
                let out = self.alloc(&res.hint, &aty, span);
                let text = format!(
                    "{} ins({v} : {}) outs({out} : {})",
                    info.map_or("", |i| i.pto),
                    tile_buf(&vty),
                    tile_buf(&aty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            _ if info.is_some_and(|i| i.level == crate::ops::OpLevel::Tile) => {
                // Generic destination-passing form: tiles and scalars in, one tile out.
                let pto = info.map_or("", |i| i.pto);
                let ty = res.tile.clone().ok_or_else(|| {
                    perr(span, format!("{op} has no tile result"), "")
                })?;
                let mut ins = Vec::new();
                let mut tys = Vec::new();
                for a in &c.args {
                    match a.ty() {
                        Type::Tile(_) => {
                            let (n, t) = self.tile(a, span)?;
                            ins.push(n);
                            tys.push(tile_buf(&t));
                        }
                        Type::Scalar(_) => {
                            let elem = c.args.first().and_then(|x| x.ty().as_tile().map(|t| t.dtype));
                            let (n, d) = self.scalar(a, elem, span)?;
                            ins.push(n);
                            tys.push(d.pto_name().to_string());
                        }
                        other => {
                            return Err(perr(
                                span,
                                format!("{op}: unexpected operand {}", other.describe()),
                                "",
                            ))
                        }
                    }
                }
                let out = self.alloc(&res.hint, &ty, span);
                let text = format!(
                    "{pto} ins({} : {}) outs({out} : {})",
                    ins.join(", "),
                    tys.join(", "),
                    tile_buf(&ty)
                );
                self.line(&text, span);
                self.bind_tile(res, out);
            }
            other => {
                return Err(perr(
                    span,
                    format!("operation {other} cannot appear in a kernel"),
                    "Kernels use tile operations (pl.load, pl.add, pl.store, ...); tensor operations belong to the orchestration.",
                ))
            }
        }
        Ok(())
    }

    fn pto_type_of(&self, e: &Expr) -> Option<String> {
        match e.ty() {
            Type::Tile(t) => Some(tile_buf(&t)),
            Type::Scalar(d) => Some(d.pto_name().to_string()),
            _ => None,
        }
    }

    fn body(&mut self, body: &[Stmt]) -> Result<(), CompileError> {
        for s in body {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn bind_expr(&mut self, target: &Var, value: &Expr, span: &Span) -> Result<(), CompileError> {
        match value {
            Expr::Call(c) => self.call(Some(target), c, span),
            Expr::Var(v) => {
                let val =
                    self.values.get(&v.id()).cloned().ok_or_else(|| {
                        perr(span, format!("'{}' has no value here", v.name()), "")
                    })?;
                self.values.insert(target.id(), val);
                Ok(())
            }
            e => {
                let dtype = target.ty().as_scalar().ok_or_else(|| {
                    perr(span, "only scalars are computed by expressions".into(), "")
                })?;
                let (name, d) = self.scalar(e, Some(dtype), span)?;
                self.values
                    .insert(target.id(), Val::Scalar { name, dtype: d });
                Ok(())
            }
        }
    }

    /// Binds tensor parameter `i` (argument `k` of the kernel) to its `pto.make_tensor_view`,
    /// returned as a line: each dimension known only at run time is one more `index` argument,
    /// numbered from `first_dim_arg` and pushed to `dims`.
    fn tensor_param(
        &mut self,
        k: usize,
        i: usize,
        t: &TensorType,
        first_dim_arg: usize,
        dims: &mut Vec<(String, KernelParam)>,
    ) -> String {
        let arg = format!("%arg{k}");
        let name = self.name_for(&format!("{}_view", self.func.params[i].var.name()));
        // Each dimension known only at run time is one more `index` argument
        // (after the scalars), read by the wrapper from the tensor's descriptor.
        // The row stride of such a tensor is its descriptor's too (a window of a
        // wider tensor is not contiguous).
        let mut dim = |e: &mut Emitter, axis: usize, d: i64, stride: bool| -> String {
            if d != DYNAMIC_DIM {
                return e.index_const(d);
            }
            let a = format!("%arg{}", first_dim_arg + dims.len());
            e.used_names.insert(a.clone());
            dims.push((
                a.clone(),
                KernelParam::Dim {
                    param: k,
                    axis,
                    stride,
                },
            ));
            a
        };
        let (shape, strides) = match t.shape.as_slice() {
            [c] if t.is_dynamic() => {
                let cols = dim(self, 0, *c, false);
                (
                    [self.index_const(1), cols.clone()],
                    [cols, self.index_const(1)],
                )
            }
            [r, c] if t.is_dynamic() => {
                let rows = dim(self, 0, *r, false);
                let cols = dim(self, 1, *c, false);
                let row_stride = dim(self, 0, DYNAMIC_DIM, true);
                ([rows, cols], [row_stride, self.index_const(1)])
            }
            _ => {
                let (r, c) = fold_2d(&t.shape);
                (
                    [self.index_const(r), self.index_const(c)],
                    [self.index_const(c), self.index_const(1)],
                )
            }
        };
        let mut view = String::new();
        let _ = writeln!(
            view,
            "    {name} = pto.make_tensor_view {arg}, shape = [{}], strides = [{}] {{layout = #pto.layout<nd>}} : {}{}",
            shape.join(", "),
            strides.join(", "),
            view_type(t),
            Emitter::loc(&self.func.span)
        );
        self.values.insert(
            self.func.params[i].var.id(),
            Val::View(ViewVal {
                name,
                ptr: arg,
                tensor: t.clone(),
                root: i,
                base: Vec::new(),
            }),
        );
        view
    }

    fn stmt(&mut self, s: &Stmt) -> Result<(), CompileError> {
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                if targets.len() != 1 {
                    return Err(perr(
                        &s.span,
                        "tuple unpacking in a kernel".into(),
                        "Kernels bind one value per statement.",
                    ));
                }
                self.bind_expr(&targets[0], value, &s.span)
            }
            StmtKind::Eval(Expr::Call(c)) => self.call(None, c, &s.span),
            StmtKind::Eval(_) => Ok(()),
            StmtKind::Return(_) => Ok(()),
            StmtKind::Scope(sc) => Err(perr(
                &s.span,
                format!("a {:?} scope inside kernel '{}'", sc.kind, self.func.name),
                "Scopes belong to orchestration code.",
            )),
            StmtKind::For(f) => self.for_stmt(f, &s.span),
            StmtKind::If(i) => self.if_stmt(i, &s.span),
        }
    }

    /// Emits an `scf.for`: tensors are aliased, tiles and scalars carried.
    fn for_stmt(&mut self, f: &ForStmt, span: &Span) -> Result<(), CompileError> {
        let (lb, _) = self.scalar(&f.start, Some(DataType::Index), span)?;
        let (ub, _) = self.scalar(&f.stop, Some(DataType::Index), span)?;
        let (st, _) = self.scalar(&f.step, Some(DataType::Index), span)?;
        let iv = self.name_for(f.var.name());
        self.values.insert(
            f.var.id(),
            Val::Scalar {
                name: iv.clone(),
                dtype: DataType::Index,
            },
        );
        // Tensors are aliased, tiles and scalars are carried.
        let mut carried = Vec::new();
        for (i, (v, init)) in f.iter_args.iter().enumerate() {
            if v.ty().is_tensor() {
                let view = self.view(init, span)?;
                self.values.insert(v.id(), Val::View(view.clone()));
                if let Some(r) = f.results.get(i) {
                    self.values.insert(r.id(), Val::View(view));
                }
            } else {
                carried.push(i);
            }
        }
        let mut inits = Vec::new();
        let mut types = Vec::new();
        for &i in &carried {
            let (v, init) = &f.iter_args[i];
            let init_name = match v.ty() {
                Type::Tile(_) => self.tile(init, span)?.0,
                Type::Scalar(d) => self.scalar(init, Some(*d), span)?.0,
                other => {
                    return Err(perr(
                        span,
                        format!("a {} cannot be carried by a kernel loop", other.describe()),
                        "",
                    ))
                }
            };
            let it = self.name_for(v.name());
            let ty = match v.ty() {
                Type::Tile(t) => {
                    self.values.insert(
                        v.id(),
                        Val::Tile {
                            name: it.clone(),
                            ty: t.clone(),
                        },
                    );
                    tile_buf(t)
                }
                Type::Scalar(d) => {
                    self.values.insert(
                        v.id(),
                        Val::Scalar {
                            name: it.clone(),
                            dtype: *d,
                        },
                    );
                    d.pto_name().to_string()
                }
                _ => String::new(),
            };
            inits.push(format!("{it} = {init_name}"));
            types.push(ty);
        }
        let head = format!("scf.for {iv} = {lb} to {ub} step {st}");
        let res = if carried.is_empty() {
            self.raw_line(&format!("{head} {{"));
            None
        } else {
            let r = self.name_for(&format!("{}_rv", f.var.name()));
            let lhs = if carried.len() == 1 {
                r.clone()
            } else {
                format!("{r}:{}", carried.len())
            };
            self.raw_line(&format!(
                "{lhs} = {head} iter_args({}) -> ({}) {{",
                inits.join(", "),
                types.join(", ")
            ));
            Some(r)
        };
        self.depth += 1;
        self.body(&f.body)?;
        self.yield_carried(&f.yields, &carried, &types, span)?;
        self.depth -= 1;
        self.raw_line("}");
        if let Some(r) = res {
            self.bind_carried(&r, &f.results, &carried);
        }
        Ok(())
    }

    /// Emits an `scf.if`: tensors are aliased (both branches must yield the same view),
    /// tiles and scalars carried.
    fn if_stmt(&mut self, i: &IfStmt, span: &Span) -> Result<(), CompileError> {
        let (c, _) = self.scalar(&i.cond, Some(DataType::Bool), span)?;
        // Tensors are aliased (checked after the branches, whose last statements may
        // bind the views they yield); tiles and scalars are carried.
        let carried: Vec<usize> = (0..i.results.len())
            .filter(|&k| !i.results[k].ty().is_tensor())
            .collect();
        let types: Vec<String> = carried
            .iter()
            .filter_map(|&k| self.pto_type_of(&Expr::Var(i.results[k].clone())))
            .collect();
        let res = if carried.is_empty() {
            self.raw_line(&format!("scf.if {c} {{"));
            None
        } else {
            let r = self.name_for("if_rv");
            let lhs = if carried.len() == 1 {
                r.clone()
            } else {
                format!("{r}:{}", carried.len())
            };
            self.raw_line(&format!("{lhs} = scf.if {c} -> ({}) {{", types.join(", ")));
            Some(r)
        };
        for (branch, yields) in [
            (&i.then_body, &i.then_yields),
            (&i.else_body, &i.else_yields),
        ] {
            let is_else = std::ptr::eq(branch, &i.else_body);
            if is_else {
                if branch.is_empty() && carried.is_empty() {
                    break;
                }
                self.raw_line("} else {");
            }
            self.depth += 1;
            self.body(branch)?;
            self.yield_carried(yields, &carried, &types, span)?;
            self.depth -= 1;
        }
        self.raw_line("}");
        for (k, r) in i.results.iter().enumerate() {
            if !r.ty().is_tensor() {
                continue;
            }
            let then_view = self.view(&i.then_yields[k], span)?;
            let else_view = self.view(&i.else_yields[k], span)?;
            if then_view.root != else_view.root
                || then_view.name != else_view.name
                || then_view.base != else_view.base
            {
                return Err(perr(
                    span,
                    format!(
                        "the branches of this if write different tensors into '{}'",
                        r.name()
                    ),
                    "Store into the same tensor parameter in both branches.",
                ));
            }
            self.values.insert(r.id(), Val::View(then_view));
        }
        if let Some(r) = res {
            self.bind_carried(&r, &i.results, &carried);
        }
        Ok(())
    }

    /// The `scf.yield` of the carried values (`yields[k]` for each `k` of `carried`, of
    /// `.pto` types `types`); nothing when none is carried.
    fn yield_carried(
        &mut self,
        yields: &[Expr],
        carried: &[usize],
        types: &[String],
        span: &Span,
    ) -> Result<(), CompileError> {
        if carried.is_empty() {
            return Ok(());
        }
        let mut ys = Vec::new();
        for &k in carried {
            let y = &yields[k];
            let n = match y.ty() {
                Type::Tile(_) => self.tile(y, span)?.0,
                Type::Scalar(d) => self.scalar(y, Some(d), span)?.0,
                _ => String::new(),
            };
            ys.push(n);
        }
        self.raw_line(&format!(
            "scf.yield {} : {}",
            ys.join(", "),
            types.join(", ")
        ));
        Ok(())
    }

    /// Binds the carried `results` (`results[k]` for each `k` of `carried`) to the values
    /// of the op named `r`: `r` itself when one is carried, else `r#0`, `r#1`, ...
    fn bind_carried(&mut self, r: &str, results: &[Var], carried: &[usize]) {
        for (n, &k) in carried.iter().enumerate() {
            let rv = &results[k];
            let name = if carried.len() == 1 {
                r.to_string()
            } else {
                format!("{r}#{n}")
            };
            let val = match rv.ty() {
                Type::Tile(t) => Val::Tile {
                    name,
                    ty: t.clone(),
                },
                Type::Scalar(d) => Val::Scalar { name, dtype: *d },
                _ => continue,
            };
            self.values.insert(rv.id(), val);
        }
    }
}

/// Generates the `.pto` module of kernel `f` (an `AIC` or `AIV` function after the passes).
pub fn emit_kernel(f: &Function) -> Result<KernelUnit, CompileError> {
    let cube = match f.ftype {
        FunctionType::Aic => true,
        FunctionType::Aiv => false,
        other => {
            return Err(perr(
                &f.span,
                format!(
                    "'{}' is a {} function, not an AIC / AIV kernel",
                    f.name,
                    other.name()
                ),
                "Run the passes first (ResolveKernelCoreTypes).",
            ))
        }
    };
    let mut e = Emitter {
        func: f,
        body: String::new(),
        consts: Vec::new(),
        const_names: HashSet::new(),
        values: HashMap::new(),
        used_names: HashSet::new(),
        depth: 2,
        n_float: 0,
        float_consts: HashMap::new(),
        partial: HashMap::new(),
    };
    // Parameters in the task payload's order: tensors first (pointers), then scalars (the
    // orchestration adds them so, whatever order the kernel declares them in).
    let mut order: Vec<usize> = (0..f.params.len())
        .filter(|&i| f.params[i].var.ty().is_tensor())
        .collect();
    order.extend((0..f.params.len()).filter(|&i| !f.params[i].var.ty().is_tensor()));
    let mut sig = Vec::new();
    let mut params = Vec::new();
    let mut dims: Vec<(String, KernelParam)> = Vec::new();
    let mut views = String::new();
    for (k, &i) in order.iter().enumerate() {
        let p = &f.params[i];
        let arg = format!("%arg{k}");
        e.used_names.insert(arg.clone());
        match p.var.ty() {
            Type::Tensor(t) if t.is_dynamic() && t.shape.len() > 2 => {
                return Err(CompileError::program(
                    STAGE,
                    &f.span,
                    format!(
                        "kernel '{}': parameter '{}' is {}, a tensor of rank {} with a dimension known only at run time",
                        f.name,
                        crate::passes::ssa::base_name(p.var.name()),
                        Type::Tensor(t.clone()).describe(),
                        t.shape.len()
                    ),
                    "Kernel parameters with pl.dynamic dimensions are supported up to rank 2: reshape the tensor to two dimensions first.",
                ))
            }
            Type::Tensor(t) => {
                sig.push(format!("{arg}: !pto.ptr<{}>", t.dtype.pto_name()));
                params.push(KernelParam::Tensor(t.dtype));
                let view = e.tensor_param(k, i, t, order.len(), &mut dims);
                views.push_str(&view);
            }
            Type::Scalar(DataType::UInt64) if dist::is_ctx_param(&p.var) => {
                sig.push(format!("{arg}: !pto.ptr<i64>"));
                params.push(KernelParam::CommCtx);
                e.values.insert(
                    p.var.id(),
                    Val::Scalar {
                        name: arg,
                        dtype: DataType::UInt64,
                    },
                );
            }
            Type::Scalar(d) => {
                sig.push(format!("{arg}: {}", d.pto_name()));
                params.push(KernelParam::Scalar(*d));
                e.values.insert(
                    p.var.id(),
                    Val::Scalar {
                        name: arg,
                        dtype: *d,
                    },
                );
            }
            other => {
                return Err(perr(
                    &f.span,
                    format!(
                        "kernel parameter '{}' is a {}",
                        p.var.name(),
                        other.describe()
                    ),
                    "Kernel parameters are tensors and scalars.",
                ))
            }
        }
    }
    for (a, param) in dims {
        sig.push(format!("{a}: index"));
        params.push(param);
    }
    e.body(&f.body)?;
    // Returned tensors → the parameters they alias.
    let mut return_params = Vec::new();
    if let Some(Stmt {
        kind: StmtKind::Return(vs),
        span,
    }) = f.body.last()
    {
        for v in vs {
            match e.view(v, span) {
                Ok(view) => return_params.push(view.root),
                Err(_) => {
                    return Err(perr(
                        span,
                        format!("kernel '{}' returns a value that is not a tensor parameter it writes", f.name),
                        "Return the result of pl.store(tile, offsets, out) where out is a pl.Out / pl.InOut parameter.",
                    ))
                }
            }
        }
    }
    let kind = if cube { "cube" } else { "vector" };
    let mut text = String::new();
    text.push_str("module attributes {pto.target_arch = \"a2a3\"} {\n");
    let _ = writeln!(
        text,
        "  func.func @{}({}) attributes {{pto.kernel_kind = #pto.kernel_kind<{kind}>}} {{",
        f.name,
        sig.join(", ")
    );
    for c in &e.consts {
        let _ = writeln!(text, "    {c}");
    }
    text.push_str(&views);
    text.push_str(&e.body);
    text.push_str("    return\n  }\n}\n");
    Ok(KernelUnit {
        name: f.name.clone(),
        cube,
        pto: text,
        params,
        return_params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_mlir() {
        assert_eq!(mlir_float(2.0, DataType::Fp32), "2.00000000000000000e+00");
        assert_eq!(
            mlir_float(-0.125, DataType::Fp32),
            "-1.25000000000000000e-01"
        );
        assert_eq!(mlir_float(1e-30, DataType::Fp32), "1.00000000000000008e-30");
        assert_eq!(mlir_float(f64::NEG_INFINITY, DataType::Fp32), "0xFF800000");
    }
}
