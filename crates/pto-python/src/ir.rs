//! The IR of `pto-ir` for the Python front end: `IrType`, `IrVar`, `IrExpr`, `IrStmt`,
//! `IrFunction`, `IrProgram`, built by `pypto.language`'s parser and wrapped by `pypto.ir`.
//!
//! Values cross as plain Python data: element types, memories, directions and levels as
//! their DSL member names (`"FP32"`, `"Left"`, `"Out"`, `"CORE_GROUP"`); spans as `(file,
//! line, col)`; attributes and operation keyword arguments as `(key, kind, value)` triples
//! whose kind names the stored type (`bool`, `int`, `float`, `str`, `ints`, `strs`,
//! `dtype`, `memory`, `var`, `vars`), so a `dump_vars` list stays a list of variables by
//! identity. A refused operation raises `ValueError(message, hint)`; a refused program
//! raises `ValueError(text, details)` with `details` a dict (`stage`, `message`, `hint`,
//! `file`, `line`, `col`).

use std::path::PathBuf;

use pto_ir::ir::{AttrValue, Attrs, Callee};
use pto_ir::{
    BinOp, Call, CompileError, DataType, Expr, ForStmt, Function, FunctionType, IfStmt, Level,
    MemorySpace, Param, ParamDirection, Program, ScopeKind, ScopeStmt, Span, Stmt, StmtKind, Type,
    UnOp, Var,
};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

fn value_error(msg: String) -> PyErr {
    PyValueError::new_err(msg)
}

fn dtype(name: &str) -> PyResult<DataType> {
    DataType::from_pl_name(name).ok_or_else(|| value_error(format!("unknown DataType '{name}'")))
}

fn memory(name: &str) -> PyResult<MemorySpace> {
    MemorySpace::from_name(name).ok_or_else(|| value_error(format!("unknown MemorySpace '{name}'")))
}

fn span_of(span: (String, u32, u32)) -> Span {
    Span::new(&span.0, span.1, span.2)
}

/// A compile error as a Python exception.
pub fn compile_error(py: Python<'_>, e: CompileError) -> PyErr {
    match &e {
        CompileError::Program {
            stage,
            message,
            hint,
            span,
        } => {
            let details = PyDict::new(py);
            let filled = (|| -> PyResult<()> {
                details.set_item("stage", *stage)?;
                details.set_item("message", message)?;
                details.set_item("hint", hint)?;
                details.set_item("file", span.file.to_string())?;
                details.set_item("line", span.line)?;
                details.set_item("col", span.col)?;
                Ok(())
            })();
            match filled {
                Ok(()) => PyValueError::new_err((e.to_string(), details.unbind())),
                Err(err) => err,
            }
        }
        CompileError::Io { .. } => PyOSError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// A value type.
#[pyclass(module = "pypto._native", frozen, eq, hash, from_py_object)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IrType {
    pub(crate) ty: Type,
}

#[pymethods]
impl IrType {
    /// `pl.Tensor[shape, dtype]`.
    #[staticmethod]
    fn tensor(shape: Vec<i64>, dtype_name: &str) -> PyResult<IrType> {
        Ok(IrType {
            ty: Type::tensor(shape, dtype(dtype_name)?),
        })
    }

    /// `pl.Tile[[rows, cols], dtype, memory]`.
    #[staticmethod]
    fn tile(rows: i64, cols: i64, dtype_name: &str, memory_name: &str) -> PyResult<IrType> {
        Ok(IrType {
            ty: Type::tile(rows, cols, dtype(dtype_name)?, memory(memory_name)?),
        })
    }

    /// `pl.Scalar[dtype]`.
    #[staticmethod]
    fn scalar(dtype_name: &str) -> PyResult<IrType> {
        Ok(IrType {
            ty: Type::Scalar(dtype(dtype_name)?),
        })
    }

    /// A task id (`Scalar[TASK_ID]`).
    #[staticmethod]
    fn task_id() -> IrType {
        IrType { ty: Type::TaskId }
    }

    /// `pl.Array[length, elem]`: `elem` is `TASK_ID` or an integer / `BOOL` dtype name.
    #[staticmethod]
    fn array(length: i64, elem: &str) -> PyResult<IrType> {
        let e = if elem == "TASK_ID" {
            Type::TaskId
        } else {
            Type::Scalar(dtype(elem)?)
        };
        Type::array(length, e).map(|ty| IrType { ty }).ok_or_else(|| {
            value_error(format!(
                "pl.Array[{length}, pl.{elem}]: arrays hold a positive number of task ids or integers"
            ))
        })
    }

    /// A tuple of types.
    #[staticmethod]
    fn tuple_of(items: Vec<IrType>) -> IrType {
        IrType {
            ty: Type::Tuple(items.into_iter().map(|t| t.ty).collect()),
        }
    }

    /// No value.
    #[staticmethod]
    fn unit() -> IrType {
        IrType { ty: Type::Unit }
    }

    /// `tensor`, `tile`, `scalar`, `task_id`, `array`, `tuple`, `list` or `unit`.
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.ty {
            Type::Tensor(_) => "tensor",
            Type::Tile(_) => "tile",
            Type::Scalar(_) => "scalar",
            Type::TaskId => "task_id",
            Type::Array { .. } => "array",
            Type::Tuple(_) => "tuple",
            Type::List => "list",
            Type::Unit => "unit",
        }
    }

    /// The shape of a tensor, `[rows, cols]` of a tile, else `None`.
    #[getter]
    fn shape(&self) -> Option<Vec<i64>> {
        match &self.ty {
            Type::Tensor(t) => Some(t.shape.clone()),
            Type::Tile(t) => Some(vec![t.rows, t.cols]),
            _ => None,
        }
    }

    /// The element type's DSL name (`FP32`), else `None`.
    #[getter]
    fn dtype(&self) -> Option<&'static str> {
        match &self.ty {
            Type::Tensor(t) => Some(t.dtype.pl_name()),
            Type::Tile(t) => Some(t.dtype.pl_name()),
            Type::Scalar(d) => Some(d.pl_name()),
            _ => None,
        }
    }

    /// An array's length, else `None`.
    #[getter]
    fn length(&self) -> Option<i64> {
        self.ty.as_array().map(|(len, _)| len)
    }

    /// An array's element type, else `None`.
    #[getter]
    fn elem(&self) -> Option<IrType> {
        self.ty.as_array().map(|(_, e)| IrType { ty: e.clone() })
    }

    /// A tile's memory (`Vec`, `Left`, ...), else `None`.
    #[getter]
    fn memory(&self) -> Option<&'static str> {
        match &self.ty {
            Type::Tile(t) => Some(t.memory.name()),
            _ => None,
        }
    }

    /// A tuple's element types.
    #[getter]
    fn items(&self) -> Vec<IrType> {
        match &self.ty {
            Type::Tuple(items) => items.iter().map(|t| IrType { ty: t.clone() }).collect(),
            _ => Vec::new(),
        }
    }

    /// The DSL annotation (`pl.Tensor[[16, 16], pl.FP32]`).
    fn annotation(&self) -> String {
        self.ty.annotation()
    }

    fn __repr__(&self) -> String {
        self.ty.describe()
    }
}

/// A variable: an identity with a name hint and a type.
#[pyclass(module = "pypto._native", frozen, from_py_object)]
#[derive(Clone)]
pub struct IrVar {
    pub(crate) var: Var,
}

#[pymethods]
impl IrVar {
    /// A new variable, distinct from every other.
    #[new]
    fn new(name: &str, ty: &IrType) -> IrVar {
        IrVar {
            var: Var::new(name, ty.ty.clone()),
        }
    }

    /// The name hint.
    #[getter]
    fn name(&self) -> String {
        self.var.name().to_string()
    }

    /// The type.
    #[getter]
    fn r#type(&self) -> IrType {
        IrType {
            ty: self.var.ty().clone(),
        }
    }

    /// The unique id.
    #[getter]
    fn id(&self) -> u64 {
        self.var.id()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<IrVar>()
            .is_ok_and(|o| o.get().var.id() == self.var.id())
    }

    fn __hash__(&self) -> u64 {
        self.var.id()
    }

    fn __repr__(&self) -> String {
        format!("Var({}, {})", self.var.name(), self.var.ty().describe())
    }
}

fn attr_from_py(kind: &str, value: &Bound<'_, PyAny>) -> PyResult<AttrValue> {
    Ok(match kind {
        "bool" => AttrValue::Bool(value.extract()?),
        "int" => AttrValue::Int(value.extract()?),
        "float" => AttrValue::Float(value.extract()?),
        "str" => AttrValue::Str(value.extract()?),
        "ints" => AttrValue::Ints(value.extract()?),
        "strs" => AttrValue::Strs(value.extract()?),
        "dtype" => AttrValue::DType(dtype(&value.extract::<String>()?)?),
        "memory" => AttrValue::Memory(memory(&value.extract::<String>()?)?),
        "var" => AttrValue::Var(value.extract::<IrVar>()?.var),
        "vars" => AttrValue::Vars(
            value
                .extract::<Vec<IrVar>>()?
                .into_iter()
                .map(|v| v.var)
                .collect(),
        ),
        other => return Err(value_error(format!("unknown attribute kind '{other}'"))),
    })
}

fn attrs_from_py(items: Vec<(String, String, Bound<'_, PyAny>)>) -> PyResult<Attrs> {
    let mut attrs = Attrs::new();
    for (k, kind, v) in items {
        attrs.set(&k, attr_from_py(&kind, &v)?);
    }
    Ok(attrs)
}

fn attr_to_py<'py>(py: Python<'py>, v: &AttrValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        AttrValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        AttrValue::Int(i) => i.into_pyobject(py)?.into_any(),
        AttrValue::Float(f) => f.into_pyobject(py)?.into_any(),
        AttrValue::Str(s) => s.into_pyobject(py)?.into_any(),
        AttrValue::Ints(v) => PyList::new(py, v)?.into_any(),
        AttrValue::Strs(v) => PyList::new(py, v)?.into_any(),
        AttrValue::DType(d) => d.pl_name().into_pyobject(py)?.into_any(),
        AttrValue::Memory(m) => m.name().into_pyobject(py)?.into_any(),
        AttrValue::Var(v) => Bound::new(py, IrVar { var: v.clone() })?.into_any(),
        AttrValue::Vars(vs) => {
            let items: Vec<IrVar> = vs.iter().map(|v| IrVar { var: v.clone() }).collect();
            PyList::new(py, items)?.into_any()
        }
    })
}

/// An expression.
#[pyclass(module = "pypto._native", frozen, from_py_object)]
#[derive(Clone)]
pub struct IrExpr {
    pub(crate) expr: Expr,
}

fn exprs(items: Vec<IrExpr>) -> Vec<Expr> {
    items.into_iter().map(|e| e.expr).collect()
}

fn promote(a: DataType, b: DataType) -> DataType {
    match (a.is_float(), b.is_float()) {
        (true, false) => a,
        (false, true) => b,
        (true, true) if a == b => a,
        (true, true) => DataType::Fp32,
        (false, false) => {
            if a == DataType::Index {
                b
            } else if b == DataType::Index || a.size_bytes() >= b.size_bytes() {
                a
            } else {
                b
            }
        }
    }
}

#[pymethods]
impl IrExpr {
    /// A variable reference.
    #[staticmethod]
    fn var(v: &IrVar) -> IrExpr {
        IrExpr {
            expr: Expr::Var(v.var.clone()),
        }
    }

    /// An integer constant.
    #[staticmethod]
    #[pyo3(signature = (value, dtype_name = "INDEX"))]
    fn const_int(value: i64, dtype_name: &str) -> PyResult<IrExpr> {
        Ok(IrExpr {
            expr: Expr::Int {
                value,
                dtype: dtype(dtype_name)?,
            },
        })
    }

    /// A float constant.
    #[staticmethod]
    #[pyo3(signature = (value, dtype_name = "FP32"))]
    fn const_float(value: f64, dtype_name: &str) -> PyResult<IrExpr> {
        Ok(IrExpr {
            expr: Expr::Float {
                value,
                dtype: dtype(dtype_name)?,
            },
        })
    }

    /// A boolean constant.
    #[staticmethod]
    fn const_bool(value: bool) -> IrExpr {
        IrExpr {
            expr: Expr::Bool(value),
        }
    }

    /// A scalar binary operation (`+`, `-`, `*`, `/`, `//`, `%`, comparisons, `and`, `or`,
    /// `min`, `max`); raises `ValueError` for non-scalar operands.
    #[staticmethod]
    fn binary(op: &str, lhs: &IrExpr, rhs: &IrExpr) -> PyResult<IrExpr> {
        let o = BinOp::from_symbol(op)
            .ok_or_else(|| value_error(format!("unknown operator '{op}'")))?;
        let (Type::Scalar(a), Type::Scalar(b)) = (lhs.expr.ty(), rhs.expr.ty()) else {
            return Err(value_error(format!(
                "operator '{op}' needs scalar operands, got {} and {}",
                lhs.expr.ty().describe(),
                rhs.expr.ty().describe()
            )));
        };
        let mut d = promote(a, b);
        if o == BinOp::Div && !d.is_float() {
            d = DataType::Fp32;
        }
        if o.is_predicate() {
            d = DataType::Bool;
        }
        Ok(IrExpr {
            expr: Expr::Binary {
                op: o,
                lhs: Box::new(lhs.expr.clone()),
                rhs: Box::new(rhs.expr.clone()),
                dtype: d,
            },
        })
    }

    /// `-x` (`neg`) or `not x` (`not`).
    #[staticmethod]
    fn unary(op: &str, operand: &IrExpr) -> PyResult<IrExpr> {
        let Type::Scalar(d) = operand.expr.ty() else {
            return Err(value_error(format!(
                "operator '{op}' needs a scalar operand, got {}",
                operand.expr.ty().describe()
            )));
        };
        let (o, d) = match op {
            "neg" => (UnOp::Neg, d),
            "not" => (UnOp::Not, DataType::Bool),
            other => return Err(value_error(format!("unknown operator '{other}'"))),
        };
        Ok(IrExpr {
            expr: Expr::Unary {
                op: o,
                operand: Box::new(operand.expr.clone()),
                dtype: d,
            },
        })
    }

    /// `pl.cast(x, dtype)` of a scalar: `x` converted to `dtype_name`.
    #[staticmethod]
    fn cast(operand: &IrExpr, dtype_name: &str) -> PyResult<IrExpr> {
        let Type::Scalar(_) = operand.expr.ty() else {
            return Err(value_error(format!(
                "a scalar cast needs a scalar operand, got {}",
                operand.expr.ty().describe()
            )));
        };
        let d = DataType::from_pl_name(dtype_name)
            .ok_or_else(|| value_error(format!("unknown dtype '{dtype_name}'")))?;
        Ok(IrExpr {
            expr: Expr::Unary {
                op: UnOp::Cast,
                operand: Box::new(operand.expr.clone()),
                dtype: d,
            },
        })
    }

    /// A list of scalars (offsets, indices).
    #[staticmethod]
    fn list_of(items: Vec<IrExpr>) -> IrExpr {
        IrExpr {
            expr: Expr::List(exprs(items)),
        }
    }

    /// Element `index` of a tuple-typed expression.
    #[staticmethod]
    fn get_item(value: &IrExpr, index: usize) -> PyResult<IrExpr> {
        match value.expr.ty() {
            Type::Tuple(items) if index < items.len() => Ok(IrExpr {
                expr: Expr::GetItem {
                    tuple: Box::new(value.expr.clone()),
                    index,
                },
            }),
            other => Err(value_error(format!(
                "cannot take item {index} of {}",
                other.describe()
            ))),
        }
    }

    /// A builtin operation call, type-checked; raises `ValueError(message, hint)`.
    #[staticmethod]
    #[pyo3(signature = (name, args, kwargs, span, attrs = Vec::new()))]
    fn op_call(
        name: &str,
        args: Vec<IrExpr>,
        kwargs: Vec<(String, String, Bound<'_, PyAny>)>,
        span: (String, u32, u32),
        attrs: Vec<(String, String, Bound<'_, PyAny>)>,
    ) -> PyResult<IrExpr> {
        let args = exprs(args);
        let kwargs = attrs_from_py(kwargs)?;
        let ty = pto_ir::ops::deduce(name, &args, &kwargs)
            .map_err(|e| PyValueError::new_err((e.message, e.hint)))?;
        Ok(IrExpr {
            expr: Expr::Call(Box::new(Call {
                callee: Callee::Op(name.to_string()),
                args,
                kwargs,
                attrs: attrs_from_py(attrs)?,
                ty,
                span: span_of(span),
                submit: None,
            })),
        })
    }

    /// A call of program function `name` (`self.name(...)`); with `deps` a `pl.submit`.
    #[staticmethod]
    #[pyo3(signature = (name, args, attrs, ret_type, span, deps = None))]
    fn fn_call(
        name: &str,
        args: Vec<IrExpr>,
        attrs: Vec<(String, String, Bound<'_, PyAny>)>,
        ret_type: &IrType,
        span: (String, u32, u32),
        deps: Option<Vec<IrExpr>>,
    ) -> PyResult<IrExpr> {
        Ok(IrExpr {
            expr: Expr::Call(Box::new(Call {
                callee: Callee::Function(name.to_string()),
                args: exprs(args),
                kwargs: Attrs::new(),
                attrs: attrs_from_py(attrs)?,
                ty: ret_type.ty.clone(),
                span: span_of(span),
                submit: deps.map(exprs),
            })),
        })
    }

    /// The type.
    #[getter]
    fn r#type(&self) -> IrType {
        IrType { ty: self.expr.ty() }
    }

    /// The variable, when this is a variable reference.
    #[getter]
    fn as_var(&self) -> Option<IrVar> {
        self.expr.as_var().map(|v| IrVar { var: v.clone() })
    }

    /// `var`, `int`, `float`, `bool`, `binary`, `unary`, `list`, `get_item`, `op_call`,
    /// `fn_call` or `submit`.
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.expr {
            Expr::Var(_) => "var",
            Expr::Int { .. } => "int",
            Expr::Float { .. } => "float",
            Expr::Bool(_) => "bool",
            Expr::Binary { .. } => "binary",
            Expr::Unary { .. } => "unary",
            Expr::List(_) => "list",
            Expr::GetItem { .. } => "get_item",
            Expr::Call(c) => match (&c.callee, &c.submit) {
                (Callee::Op(_), _) => "op_call",
                (Callee::Function(_), None) => "fn_call",
                (Callee::Function(_), Some(_)) => "submit",
            },
        }
    }

    /// The value of an integer or boolean constant.
    #[getter]
    fn const_value(&self) -> Option<i64> {
        match &self.expr {
            Expr::Int { value, .. } => Some(*value),
            Expr::Bool(b) => Some(i64::from(*b)),
            _ => None,
        }
    }

    /// A call's attributes as `(key, value)`; variables come back as `IrVar`s.
    fn call_attrs<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        match &self.expr {
            Expr::Call(c) => c
                .attrs
                .iter()
                .map(|(k, v)| Ok((k.to_string(), attr_to_py(py, v)?)))
                .collect(),
            _ => Ok(Vec::new()),
        }
    }

    /// A call's arguments.
    fn call_args(&self) -> Vec<IrExpr> {
        match &self.expr {
            Expr::Call(c) => c.args.iter().map(|e| IrExpr { expr: e.clone() }).collect(),
            _ => Vec::new(),
        }
    }

    fn __repr__(&self) -> String {
        format!("IrExpr({}: {})", self.kind(), self.expr.ty().describe())
    }
}

/// A statement.
#[pyclass(module = "pypto._native", frozen, from_py_object)]
#[derive(Clone)]
pub struct IrStmt {
    pub(crate) stmt: Stmt,
}

fn stmts(items: Vec<IrStmt>) -> Vec<Stmt> {
    items.into_iter().map(|s| s.stmt).collect()
}

fn vars(items: Vec<IrVar>) -> Vec<Var> {
    items.into_iter().map(|v| v.var).collect()
}

#[pymethods]
impl IrStmt {
    /// `targets = value` (several targets unpack a tuple).
    #[staticmethod]
    fn assign(targets: Vec<IrVar>, value: &IrExpr, span: (String, u32, u32)) -> IrStmt {
        IrStmt {
            stmt: Stmt::new(
                StmtKind::Assign {
                    targets: vars(targets),
                    value: value.expr.clone(),
                },
                span_of(span),
            ),
        }
    }

    /// An expression statement.
    #[staticmethod]
    fn eval(value: &IrExpr, span: (String, u32, u32)) -> IrStmt {
        IrStmt {
            stmt: Stmt::new(StmtKind::Eval(value.expr.clone()), span_of(span)),
        }
    }

    /// `return values`.
    #[staticmethod]
    fn ret(values: Vec<IrExpr>, span: (String, u32, u32)) -> IrStmt {
        IrStmt {
            stmt: Stmt::new(StmtKind::Return(exprs(values)), span_of(span)),
        }
    }

    /// A `pl.range` loop.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        var: &IrVar,
        start: &IrExpr,
        stop: &IrExpr,
        step: &IrExpr,
        iter_args: Vec<(IrVar, IrExpr)>,
        body: Vec<IrStmt>,
        yields: Vec<IrExpr>,
        results: Vec<IrVar>,
        span: (String, u32, u32),
    ) -> IrStmt {
        IrStmt {
            stmt: Stmt::new(
                StmtKind::For(Box::new(ForStmt {
                    var: var.var.clone(),
                    start: start.expr.clone(),
                    stop: stop.expr.clone(),
                    step: step.expr.clone(),
                    iter_args: iter_args
                        .into_iter()
                        .map(|(v, e)| (v.var, e.expr))
                        .collect(),
                    body: stmts(body),
                    yields: exprs(yields),
                    results: vars(results),
                })),
                span_of(span),
            ),
        }
    }

    /// An `if` with merged results.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn if_else(
        cond: &IrExpr,
        then_body: Vec<IrStmt>,
        else_body: Vec<IrStmt>,
        then_yields: Vec<IrExpr>,
        else_yields: Vec<IrExpr>,
        results: Vec<IrVar>,
        span: (String, u32, u32),
    ) -> IrStmt {
        IrStmt {
            stmt: Stmt::new(
                StmtKind::If(Box::new(IfStmt {
                    cond: cond.expr.clone(),
                    then_body: stmts(then_body),
                    else_body: stmts(else_body),
                    then_yields: exprs(then_yields),
                    else_yields: exprs(else_yields),
                    results: vars(results),
                })),
                span_of(span),
            ),
        }
    }

    /// A `with` scope: `kind` is `at` (with `level`) or `manual`.
    #[staticmethod]
    #[pyo3(signature = (kind, level, attrs, body, task_id, deps, span))]
    fn scope(
        kind: &str,
        level: Option<&str>,
        attrs: Vec<(String, String, Bound<'_, PyAny>)>,
        body: Vec<IrStmt>,
        task_id: Option<IrVar>,
        deps: Vec<IrExpr>,
        span: (String, u32, u32),
    ) -> PyResult<IrStmt> {
        let kind = match kind {
            "manual" => ScopeKind::Manual,
            "at" => {
                let name = level.unwrap_or("CORE_GROUP");
                ScopeKind::At(
                    Level::from_name(name)
                        .ok_or_else(|| value_error(format!("unknown Level '{name}'")))?,
                )
            }
            other => return Err(value_error(format!("unknown scope kind '{other}'"))),
        };
        Ok(IrStmt {
            stmt: Stmt::new(
                StmtKind::Scope(Box::new(ScopeStmt {
                    kind,
                    attrs: attrs_from_py(attrs)?,
                    body: stmts(body),
                    task_id: task_id.map(|t| t.var),
                    deps: exprs(deps),
                })),
                span_of(span),
            ),
        })
    }

    /// A scope's attributes (`dump_vars` as `IrVar`s); empty for other statements.
    fn scope_attrs<'py>(&self, py: Python<'py>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
        match &self.stmt.kind {
            StmtKind::Scope(sc) => sc
                .attrs
                .iter()
                .map(|(k, v)| Ok((k.to_string(), attr_to_py(py, v)?)))
                .collect(),
            _ => Ok(Vec::new()),
        }
    }

    /// The statement's kind: `assign`, `eval`, `return`, `for`, `if` or `scope`.
    #[getter]
    fn kind(&self) -> &'static str {
        match &self.stmt.kind {
            StmtKind::Assign { .. } => "assign",
            StmtKind::Eval(_) => "eval",
            StmtKind::Return(_) => "return",
            StmtKind::For(_) => "for",
            StmtKind::If(_) => "if",
            StmtKind::Scope(_) => "scope",
        }
    }
}

/// A function.
#[pyclass(module = "pypto._native", frozen, from_py_object)]
#[derive(Clone)]
pub struct IrFunction {
    pub(crate) func: Function,
}

#[pymethods]
impl IrFunction {
    /// A function: `params` as `(var, direction)`; `attrs` as `(key, kind, value)` (a HOST
    /// function's `level` and `role`, `requires_runtime_binding`).
    #[new]
    #[pyo3(signature = (name, ftype, params, return_types, body, span, attrs = Vec::new()))]
    fn new(
        name: &str,
        ftype: &str,
        params: Vec<(IrVar, String)>,
        return_types: Vec<IrType>,
        body: Vec<IrStmt>,
        span: (String, u32, u32),
        attrs: Vec<(String, String, Bound<'_, PyAny>)>,
    ) -> PyResult<IrFunction> {
        let ftype = FunctionType::from_name(ftype)
            .ok_or_else(|| value_error(format!("unknown FunctionType '{ftype}'")))?;
        let params = params
            .into_iter()
            .map(|(v, d)| {
                Ok(Param {
                    var: v.var,
                    direction: ParamDirection::from_name(&d)
                        .ok_or_else(|| value_error(format!("unknown ParamDirection '{d}'")))?,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(IrFunction {
            func: Function {
                name: name.to_string(),
                ftype,
                params,
                return_types: return_types.into_iter().map(|t| t.ty).collect(),
                body: stmts(body),
                span: span_of(span),
                attrs: attrs_from_py(attrs)?,
            },
        })
    }

    /// The level of a function marked `@pl.function(level=pl.Level.HOST, ...)` (`HOST`),
    /// else `None`.
    #[getter]
    fn level(&self) -> Option<String> {
        self.func.attrs.str("level").map(str::to_string)
    }

    /// The role of a HOST function (`Orchestrator`, `SubWorker`), else `None`.
    #[getter]
    fn role(&self) -> Option<String> {
        self.func.attrs.str("role").map(str::to_string)
    }

    /// Whether the function is a SubWorker declared with a `...` body: a callback bound at
    /// run time (`prepare(callbacks={...})`).
    #[getter]
    fn requires_runtime_binding(&self) -> bool {
        self.func
            .attrs
            .bool("requires_runtime_binding")
            .unwrap_or(false)
    }

    /// The name.
    #[getter]
    fn name(&self) -> String {
        self.func.name.clone()
    }

    /// The function type's member name (`Orchestration`, `AIV`, ...).
    #[getter]
    fn ftype(&self) -> &'static str {
        self.func.ftype.name()
    }

    /// The function type as PyPTO gives it: the `pl.FunctionType` member
    /// (`FunctionType.InCore`, ...).
    #[getter]
    fn func_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("pypto.language._surface")?
            .getattr("FunctionType")?
            .getattr(self.func.ftype.name())
    }

    /// The function as DSL source: a module-level `@pl.function` (what `pl.parse` of a
    /// single function reads back).
    fn as_python(&self) -> String {
        pto_ir::printer::print_standalone_function(&self.func)
    }

    /// The parameters as `(var, direction)`.
    #[getter]
    fn params(&self) -> Vec<(IrVar, &'static str)> {
        self.func
            .params
            .iter()
            .map(|p| (IrVar { var: p.var.clone() }, p.direction.name()))
            .collect()
    }

    /// The body.
    #[getter]
    fn body(&self) -> Vec<IrStmt> {
        self.func
            .body
            .iter()
            .map(|s| IrStmt { stmt: s.clone() })
            .collect()
    }

    /// The declared return types.
    #[getter]
    fn return_types(&self) -> Vec<IrType> {
        self.func
            .return_types
            .iter()
            .map(|t| IrType { ty: t.clone() })
            .collect()
    }
}

/// A program (a `@pl.program` class).
#[pyclass(module = "pypto._native", frozen, from_py_object)]
#[derive(Clone)]
pub struct IrProgram {
    pub(crate) program: Program,
}

#[pymethods]
impl IrProgram {
    /// A program of `functions`.
    #[new]
    fn new(name: &str, functions: Vec<IrFunction>) -> IrProgram {
        IrProgram {
            program: Program {
                name: name.to_string(),
                functions: functions.into_iter().map(|f| f.func).collect(),
            },
        }
    }

    /// The name.
    #[getter]
    fn name(&self) -> String {
        self.program.name.clone()
    }

    /// The functions.
    #[getter]
    fn functions(&self) -> Vec<IrFunction> {
        self.program
            .functions
            .iter()
            .map(|f| IrFunction { func: f.clone() })
            .collect()
    }

    /// The program as DSL source (`pl.parse` reads it back).
    #[pyo3(signature = (header = "IR printed by pypto.ir"))]
    fn as_python(&self, header: &str) -> String {
        pto_ir::printer::print_program(&self.program, header)
    }

    /// `None` when `other` is structurally equal (up to variable renaming), else the first
    /// difference.
    fn difference(&self, other: &IrProgram) -> Option<String> {
        pto_ir::equal::structurally_equal(&self.program, &other.program)
            .err()
            .map(|d| d.to_string())
    }

    /// The program after pass `name` alone.
    fn run_pass(&self, py: Python<'_>, name: &str) -> PyResult<IrProgram> {
        let pass = pto_ir::passes::pass(name).ok_or_else(|| {
            value_error(format!(
                "unknown pass '{name}'; passes: {}",
                pass_names().join(", ")
            ))
        })?;
        pass(self.program.clone())
            .map(|program| IrProgram { program })
            .map_err(|e| compile_error(py, e))
    }

    /// The program after the whole pipeline; with `dump_dir`, the snapshots are written there.
    #[pyo3(signature = (dump_dir = None))]
    fn run_passes(&self, py: Python<'_>, dump_dir: Option<PathBuf>) -> PyResult<IrProgram> {
        let program = self.program.clone();
        py.detach(|| pto_ir::passes::run_pipeline(program, dump_dir.as_deref()))
            .map(|program| IrProgram { program })
            .map_err(|e| compile_error(py, e))
    }

    /// Compiles into `output_dir`; returns a dict: `output_dir`, `orchestration`,
    /// `kernels`, `params` (`(name, direction, shape, dtype)`), `timings` (seconds per
    /// step: `passes`, `codegen`, `ptoas`, `write`).
    #[pyo3(signature = (output_dir, platform = "a2a3sim", backend_type = "Ascend910B", dump_passes = true))]
    fn compile<'py>(
        &self,
        py: Python<'py>,
        output_dir: PathBuf,
        platform: &str,
        backend_type: &str,
        dump_passes: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let backend = pto_build_output::BackendType::from_name(backend_type).ok_or_else(|| {
            value_error(format!(
                "backend_type must be 'Ascend910B' or 'Ascend950', got {backend_type:?}"
            ))
        })?;
        let options = pto_ir::CompileOptions {
            platform: platform.to_string(),
            backend_type: backend,
            dump_passes,
        };
        let program = self.program.clone();
        let report = py
            .detach(|| pto_ir::compile(program, &output_dir, &options))
            .map_err(|e| compile_error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("output_dir", report.output_dir)?;
        d.set_item("orchestration", report.orchestration)?;
        d.set_item("kernels", report.kernels)?;
        let params: Vec<(String, &'static str, Option<Vec<i64>>, String)> = report
            .params
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    p.direction.name(),
                    p.shape.clone(),
                    p.dtype.clone(),
                )
            })
            .collect();
        d.set_item("params", params)?;
        let t = PyDict::new(py);
        t.set_item("passes", report.timings.passes.as_secs_f64())?;
        t.set_item("codegen", report.timings.codegen.as_secs_f64())?;
        t.set_item("ptoas", report.timings.ptoas.as_secs_f64())?;
        t.set_item("write", report.timings.write.as_secs_f64())?;
        d.set_item("timings", t)?;
        d.set_item(
            "program",
            IrProgram {
                program: report.program,
            },
        )?;
        Ok(d)
    }

    /// Compiles into the L3 build `output_dir` with the HOST function `host` as entry
    /// (`distributed_meta.json`, `orchestration/host_orch.py`, `next_levels/<chip>/`);
    /// returns a dict: `output_dir`, `host`, `chips`.
    #[pyo3(signature = (host, output_dir, device_ids, num_sub_workers = 0, runtime = "tensormap_and_ringbuffer", aicpu_thread_num = 0, platform = "a2a3sim", backend_type = "Ascend910B", dump_passes = true))]
    #[allow(clippy::too_many_arguments)]
    fn compile_distributed<'py>(
        &self,
        py: Python<'py>,
        host: &str,
        output_dir: PathBuf,
        device_ids: Vec<i64>,
        num_sub_workers: i64,
        runtime: &str,
        aicpu_thread_num: i64,
        platform: &str,
        backend_type: &str,
        dump_passes: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let backend = pto_build_output::BackendType::from_name(backend_type).ok_or_else(|| {
            value_error(format!(
                "backend_type must be 'Ascend910B' or 'Ascend950', got {backend_type:?}"
            ))
        })?;
        let config = pto_build_output::DistributedConfig::new(
            device_ids,
            num_sub_workers,
            runtime.to_string(),
            aicpu_thread_num,
        )
        .map_err(|e| value_error(e.to_string()))?;
        let options = pto_ir::DistributedOptions {
            compile: pto_ir::CompileOptions {
                platform: platform.to_string(),
                backend_type: backend,
                dump_passes,
            },
            config,
        };
        let program = &self.program;
        let report = py
            .detach(|| pto_ir::compile_distributed(program, host, &output_dir, &options))
            .map_err(|e| compile_error(py, e))?;
        let d = PyDict::new(py);
        d.set_item("output_dir", report.output_dir)?;
        d.set_item("host", report.host)?;
        d.set_item("chips", report.chips)?;
        Ok(d)
    }

    /// Runs the orchestration (or `entry`) in the reference interpreter. Tensors cross as
    /// `(shape, float64 bytes)`, scalars as floats; returns every tensor parameter after the
    /// run as `(shape, float64 bytes)`. Raises `ValueError` when the program cannot run.
    #[pyo3(signature = (args, entry = None))]
    fn interpret<'py>(
        &self,
        py: Python<'py>,
        args: Vec<Bound<'py, PyAny>>,
        entry: Option<&str>,
    ) -> PyResult<Vec<(Vec<i64>, Bound<'py, pyo3::types::PyBytes>)>> {
        use pto_ir::interp::{Arg, HostTensor};
        let f = match entry {
            Some(n) => self.program.function(n),
            None => self
                .program
                .orchestrations()
                .next()
                .or_else(|| self.program.functions.first()),
        }
        .ok_or_else(|| {
            value_error(format!(
                "program {} has no function to run",
                self.program.name
            ))
        })?;
        let mut host = Vec::with_capacity(args.len());
        for (p, a) in f.params.iter().zip(&args) {
            match p.var.ty() {
                Type::Tensor(t) => {
                    let (shape, bytes): (Vec<i64>, Vec<u8>) = a.extract()?;
                    if bytes.len() % 8 != 0 {
                        return Err(value_error("tensor bytes must be float64".into()));
                    }
                    let data = bytes
                        .chunks_exact(8)
                        .map(|c| {
                            f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                        })
                        .collect();
                    host.push(Arg::Tensor(HostTensor {
                        dtype: t.dtype,
                        shape,
                        data,
                    }));
                }
                _ => host.push(Arg::Scalar(a.extract::<f64>()?)),
            }
        }
        if args.len() != f.params.len() {
            return Err(value_error(format!(
                "'{}' takes {} arguments, got {}",
                f.name,
                f.params.len(),
                args.len()
            )));
        }
        let program = self.program.clone();
        let entry = entry.map(str::to_string);
        let out = py
            .detach(move || pto_ir::interp::interpret(&program, entry.as_deref(), host))
            .map_err(|e| value_error(e.message))?;
        Ok(out
            .into_iter()
            .map(|t| {
                let bytes: Vec<u8> = t.data.iter().flat_map(|v| v.to_le_bytes()).collect();
                (t.shape, pyo3::types::PyBytes::new(py, &bytes))
            })
            .collect())
    }

    fn __repr__(&self) -> String {
        format!(
            "IrProgram({}, functions=[{}])",
            self.program.name,
            self.program
                .functions
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The passes of the pipeline, in order.
#[pyfunction]
pub fn pass_names() -> Vec<&'static str> {
    pto_ir::passes::PIPELINE.iter().map(|(n, _)| *n).collect()
}

/// The `passes_dump/` file name of stage `index` (0: `00_frontend.py`).
#[pyfunction]
pub fn pass_dump_file_name(index: usize) -> PyResult<String> {
    if index > pto_ir::passes::PIPELINE.len() {
        return Err(PyTypeError::new_err(format!(
            "stage {index} is beyond the {} passes",
            pto_ir::passes::PIPELINE.len()
        )));
    }
    Ok(pto_ir::passes::dump_file_name(index))
}

/// The builtin operations: `(name, level)` with level `tile` or `tensor`.
#[pyfunction]
pub fn op_names() -> Vec<(&'static str, &'static str)> {
    pto_ir::ops::OPS
        .iter()
        .map(|o| {
            (
                o.name,
                match o.level {
                    pto_ir::ops::OpLevel::Tile => "tile",
                    pto_ir::ops::OpLevel::Tensor => "tensor",
                },
            )
        })
        .collect()
}

/// The op table (`pto_ir::ops::OPS`), one dict per operation: `name` (`tile.add`),
/// `level` (`tile` / `tensor`), `in_kernels` (kernel code may use it), `kind` (`binary`, `scalar`, `unary`, `reduce`, `expand`,
/// `other`), `dsl` (the `pl.X` spellings), `pto` (`pto.tadd`, empty for tensor ops), `cpp`
/// (`TADD`), `elems` (`any` / `float` / `int` for binary and unary ops, else `None`),
/// `scalar` (a binary op's tile-scalar form, else `None`) and `infix` (the IR operator of a
/// binary op's scalar form, `+`, `max`; `None` when there is none) and `printer_keyword`
/// (for a `pl.tile.X` that is PyPTO's unified signature too, the keyword the printer always
/// writes, `shapes` for `tile.load`; else `None`).
#[pyfunction]
pub fn ops(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    use pto_ir::ops::{OpKind, OpLevel};
    let mut rows = Vec::with_capacity(pto_ir::ops::OPS.len());
    for o in pto_ir::ops::OPS {
        let d = PyDict::new(py);
        d.set_item("name", o.name)?;
        let level = match o.level {
            OpLevel::Tile => "tile",
            OpLevel::Tensor => "tensor",
        };
        d.set_item("level", level)?;
        d.set_item("in_kernels", o.in_kernels)?;
        d.set_item("kind", o.kind.name())?;
        d.set_item("dsl", o.dsl.to_vec())?;
        d.set_item("pto", o.pto)?;
        d.set_item("cpp", o.cpp())?;
        let (elems, scalar, infix) = match o.kind {
            OpKind::Binary {
                scalar,
                infix,
                elems,
                ..
            } => (Some(elems.name()), Some(scalar), infix.map(BinOp::symbol)),
            OpKind::Unary { elems, .. } => (Some(elems.name()), None, None),
            _ => (None, None, None),
        };
        d.set_item("elems", elems)?;
        d.set_item("scalar", scalar)?;
        d.set_item("infix", infix)?;
        d.set_item("printer_keyword", o.printer_keyword)?;
        rows.push(d);
    }
    Ok(rows)
}

/// Registers the IR classes and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<IrType>()?;
    m.add_class::<IrVar>()?;
    m.add_class::<IrExpr>()?;
    m.add_class::<IrStmt>()?;
    m.add_class::<IrFunction>()?;
    m.add_class::<IrProgram>()?;
    m.add_function(wrap_pyfunction!(pass_names, m)?)?;
    m.add_function(wrap_pyfunction!(pass_dump_file_name, m)?)?;
    m.add_function(wrap_pyfunction!(op_names, m)?)?;
    m.add_function(wrap_pyfunction!(ops, m)?)?;
    Ok(())
}
