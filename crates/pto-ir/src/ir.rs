//! The IR: programs of functions whose bodies are statements over expressions.
//!
//! A key design decision: a [`Var`] is an identity, not a name. Every `Var` gets a
//! process-wide unique id when it is created; equality and hashing use the id only, so two
//! variables with the same name hint (a rebinding `q = self.foo(q)`, an SSA version, an
//! inlined copy) are different values, and an attribute that holds a `Var`
//! (`dump_vars`) keeps pointing at exactly the value it was given. Passes that map
//! variables (SSA, inlining, outlining) map attribute values by their stored type
//! ([`AttrValue::Var`], [`AttrValue::Vars`]) through the same map as operands, so the
//! identity survives every rewrite.
//!
//! Attributes are an ordered list of `(key, typed value)` pairs ([`Attrs`]): the order is
//! the order they were set in, which the printer keeps, and setting an existing key
//! replaces its value in place.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::types::{DataType, FunctionType, Level, MemorySpace, ParamDirection, Type};

/// A source location: file, 1-based line and column (0 when unknown).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// The source file (a path or `<string>`), empty when unknown.
    pub file: Arc<str>,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub col: u32,
}

impl Span {
    /// A span at `file:line:col`.
    pub fn new(file: &str, line: u32, col: u32) -> Span {
        Span {
            file: Arc::from(file),
            line,
            col,
        }
    }

    /// Whether the span points somewhere.
    pub fn is_known(&self) -> bool {
        self.line > 0
    }

    /// The file's base name (what `.pto` `loc(...)` shows).
    pub fn file_name(&self) -> &str {
        self.file.rsplit('/').next().unwrap_or(&self.file)
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_known() {
            write!(f, "{}:{}:{}", self.file, self.line, self.col)
        } else if !self.file.is_empty() {
            f.write_str(&self.file)
        } else {
            f.write_str("<unknown>")
        }
    }
}

static NEXT_VAR_ID: AtomicU64 = AtomicU64::new(1);

#[derive(Debug)]
struct VarData {
    id: u64,
    name: String,
    ty: Type,
}

/// A variable: an identity with a name hint and a type. Cloning shares the identity.
#[derive(Clone)]
pub struct Var(Arc<VarData>);

impl Var {
    /// A new variable, distinct from every other.
    pub fn new(name: &str, ty: Type) -> Var {
        Var(Arc::new(VarData {
            id: NEXT_VAR_ID.fetch_add(1, Ordering::Relaxed),
            name: name.to_string(),
            ty,
        }))
    }

    /// The unique id.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// The name hint (not unique).
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The type.
    pub fn ty(&self) -> &Type {
        &self.0.ty
    }

    /// A new variable with the same type and another name.
    pub fn fresh(&self, name: &str) -> Var {
        Var::new(name, self.0.ty.clone())
    }
}

impl PartialEq for Var {
    fn eq(&self, other: &Var) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Var {}

impl std::hash::Hash for Var {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.id.hash(state);
    }
}

impl fmt::Debug for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.0.name, self.0.id)
    }
}

/// A typed attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A list of integers (shapes).
    Ints(Vec<i64>),
    /// A list of strings (argument directions).
    Strs(Vec<String>),
    /// An element type.
    DType(DataType),
    /// A memory.
    Memory(MemorySpace),
    /// One variable, by identity.
    Var(Var),
    /// Variables, by identity, in order (`dump_vars`).
    Vars(Vec<Var>),
}

/// The attribute key of the variables to dump selectively.
pub const ATTR_DUMP_VARS: &str = "dump_vars";
/// The attribute key of a call's per-argument directions.
pub const ATTR_ARG_DIRECTIONS: &str = "arg_directions";

/// Ordered attributes: `(key, value)` in the order set; keys are unique.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs(Vec<(String, AttrValue)>);

impl Attrs {
    /// No attributes.
    pub fn new() -> Attrs {
        Attrs(Vec::new())
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&AttrValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key`: replaces its value in place, or appends it.
    pub fn set(&mut self, key: &str, value: AttrValue) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key.to_string(), value)),
        }
    }

    /// Sets `key` at position `index` (clamped) if absent, else replaces it in place.
    pub fn insert_at(&mut self, index: usize, key: &str, value: AttrValue) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => {
                let at = index.min(self.0.len());
                self.0.insert(at, (key.to_string(), value));
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<AttrValue> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(at).1)
    }

    /// The entries in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Mutable values in order.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut AttrValue> {
        self.0.iter_mut().map(|(_, v)| v)
    }

    /// No attributes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of attributes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// An integer attribute.
    pub fn int(&self, key: &str) -> Option<i64> {
        match self.get(key) {
            Some(AttrValue::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// An integer-list attribute.
    pub fn ints(&self, key: &str) -> Option<&[i64]> {
        match self.get(key) {
            Some(AttrValue::Ints(v)) => Some(v),
            _ => None,
        }
    }

    /// A string attribute.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(AttrValue::Str(v)) => Some(v),
            _ => None,
        }
    }

    /// A boolean attribute.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.get(key) {
            Some(AttrValue::Bool(v)) => Some(*v),
            _ => None,
        }
    }

    /// A float attribute (integers convert).
    pub fn float(&self, key: &str) -> Option<f64> {
        match self.get(key) {
            Some(AttrValue::Float(v)) => Some(*v),
            Some(AttrValue::Int(v)) => Some(*v as f64),
            _ => None,
        }
    }

    /// An element-type attribute.
    pub fn dtype(&self, key: &str) -> Option<DataType> {
        match self.get(key) {
            Some(AttrValue::DType(v)) => Some(*v),
            _ => None,
        }
    }

    /// A memory attribute.
    pub fn memory(&self, key: &str) -> Option<MemorySpace> {
        match self.get(key) {
            Some(AttrValue::Memory(v)) => Some(*v),
            _ => None,
        }
    }

    /// A variable-list attribute (empty when absent).
    pub fn vars(&self, key: &str) -> &[Var] {
        match self.get(key) {
            Some(AttrValue::Vars(v)) => v,
            _ => &[],
        }
    }

    /// The string-list attribute `key`.
    pub fn strs(&self, key: &str) -> Option<&[String]> {
        match self.get(key) {
            Some(AttrValue::Strs(v)) => Some(v),
            _ => None,
        }
    }

    /// Applies `map` to every variable held by a value, by stored type.
    pub fn map_vars(&mut self, map: &mut dyn FnMut(&Var) -> Var) {
        for value in self.values_mut() {
            match value {
                AttrValue::Var(v) => *v = map(v),
                AttrValue::Vars(vs) => {
                    for v in vs.iter_mut() {
                        *v = map(v);
                    }
                }
                _ => {}
            }
        }
    }
}

/// A binary scalar operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (true division: floats)
    Div,
    /// `//`
    FloorDiv,
    /// `%`
    Mod,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `and`
    And,
    /// `or`
    Or,
    /// `min(a, b)`
    Min,
    /// `max(a, b)`
    Max,
}

impl BinOp {
    /// The Python spelling (`min`/`max` print as calls).
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::Min => "min",
            BinOp::Max => "max",
        }
    }

    /// The operator with Python spelling `s`.
    pub fn from_symbol(s: &str) -> Option<BinOp> {
        [
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Div,
            BinOp::FloorDiv,
            BinOp::Mod,
            BinOp::Lt,
            BinOp::Le,
            BinOp::Gt,
            BinOp::Ge,
            BinOp::Eq,
            BinOp::Ne,
            BinOp::And,
            BinOp::Or,
            BinOp::Min,
            BinOp::Max,
        ]
        .into_iter()
        .find(|o| o.symbol() == s)
    }

    /// A comparison or logical operator (its result is `BOOL`).
    pub fn is_predicate(self) -> bool {
        matches!(
            self,
            BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::Eq
                | BinOp::Ne
                | BinOp::And
                | BinOp::Or
        )
    }

    /// Binding strength for printing (higher binds tighter).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => 4,
            BinOp::Add | BinOp::Sub => 5,
            BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => 6,
            BinOp::Min | BinOp::Max => 9,
        }
    }
}

/// A unary scalar operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
    /// `pl.cast(x, dtype)`: the value converted to the expression's dtype (toward zero
    /// into integers).
    Cast,
}

/// What a call calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Callee {
    /// A builtin operation (`tile.load`, `tensor.create`, ...).
    Op(String),
    /// Another function of the program (`self.kernel(...)`: PyPTO's `GlobalVar`).
    Function(String),
}

/// A call of an operation or a function; with `deps` it is a `pl.submit` (PyPTO's `Submit`).
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The callee.
    pub callee: Callee,
    /// Positional arguments.
    pub args: Vec<Expr>,
    /// Typed keyword arguments of an operation (shapes, memories, dtypes).
    pub kwargs: Attrs,
    /// Attributes (`dump_vars`, `arg_directions`).
    pub attrs: Attrs,
    /// The result type.
    pub ty: Type,
    /// Where it was written.
    pub span: Span,
    /// `Some(deps)` for a `pl.submit` (its type is `Tuple[results..., TaskId]`).
    pub submit: Option<Vec<Expr>>,
}

impl Call {
    /// The function name when the callee is a function.
    pub fn function_name(&self) -> Option<&str> {
        match &self.callee {
            Callee::Function(n) => Some(n),
            Callee::Op(_) => None,
        }
    }

    /// The operation name when the callee is an operation.
    pub fn op_name(&self) -> Option<&str> {
        match &self.callee {
            Callee::Op(n) => Some(n),
            Callee::Function(_) => None,
        }
    }

    /// `dump_vars` (empty when absent).
    pub fn dump_vars(&self) -> &[Var] {
        self.attrs.vars(ATTR_DUMP_VARS)
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A variable.
    Var(Var),
    /// An integer constant.
    Int {
        /// The value.
        value: i64,
        /// Its type (`INDEX` for a Python `int`).
        dtype: DataType,
    },
    /// A float constant.
    Float {
        /// The value.
        value: f64,
        /// Its type (`FP32` for a Python `float`).
        dtype: DataType,
    },
    /// A boolean constant.
    Bool(bool),
    /// A scalar binary operation.
    Binary {
        /// The operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
        /// The result type.
        dtype: DataType,
    },
    /// A scalar unary operation.
    Unary {
        /// The operator.
        op: UnOp,
        /// The operand.
        operand: Box<Expr>,
        /// The result type.
        dtype: DataType,
    },
    /// A list of scalar expressions (`[0, i * 16]`).
    List(Vec<Expr>),
    /// Element `index` of a tuple-typed expression.
    GetItem {
        /// The tuple.
        tuple: Box<Expr>,
        /// Which element.
        index: usize,
    },
    /// A call.
    Call(Box<Call>),
}

impl Expr {
    /// An `INDEX` constant.
    pub fn index(value: i64) -> Expr {
        Expr::Int {
            value,
            dtype: DataType::Index,
        }
    }

    /// The expression's type.
    pub fn ty(&self) -> Type {
        match self {
            Expr::Var(v) => v.ty().clone(),
            Expr::Int { dtype, .. } | Expr::Float { dtype, .. } => Type::Scalar(*dtype),
            Expr::Bool(_) => Type::Scalar(DataType::Bool),
            Expr::Binary { dtype, .. } | Expr::Unary { dtype, .. } => Type::Scalar(*dtype),
            Expr::List(_) => Type::List,
            Expr::GetItem { tuple, index } => match tuple.ty() {
                Type::Tuple(items) => items.get(*index).cloned().unwrap_or(Type::Unit),
                _ => Type::Unit,
            },
            Expr::Call(c) => c.ty.clone(),
        }
    }

    /// The variable, if this is one.
    pub fn as_var(&self) -> Option<&Var> {
        match self {
            Expr::Var(v) => Some(v),
            _ => None,
        }
    }

    /// The call, if this is one.
    pub fn as_call(&self) -> Option<&Call> {
        match self {
            Expr::Call(c) => Some(c),
            _ => None,
        }
    }

    /// The integer value of a constant (after folding nothing).
    pub fn as_const_int(&self) -> Option<i64> {
        match self {
            Expr::Int { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// Visits every variable this expression reads, in evaluation order (attributes
    /// excluded).
    pub fn for_each_var(&self, f: &mut dyn FnMut(&Var)) {
        match self {
            Expr::Var(v) => f(v),
            Expr::Int { .. } | Expr::Float { .. } | Expr::Bool(_) => {}
            Expr::Binary { lhs, rhs, .. } => {
                lhs.for_each_var(f);
                rhs.for_each_var(f);
            }
            Expr::Unary { operand, .. } => operand.for_each_var(f),
            Expr::List(items) => items.iter().for_each(|e| e.for_each_var(f)),
            Expr::GetItem { tuple, .. } => tuple.for_each_var(f),
            Expr::Call(c) => {
                c.args.iter().for_each(|e| e.for_each_var(f));
                if let Some(deps) = &c.submit {
                    deps.iter().for_each(|e| e.for_each_var(f));
                }
            }
        }
    }

    /// Rewrites every variable read (operands and Var-valued attributes) through `map`.
    pub fn map_vars(&mut self, map: &mut dyn FnMut(&Var) -> Var) {
        match self {
            Expr::Var(v) => *v = map(v),
            Expr::Int { .. } | Expr::Float { .. } | Expr::Bool(_) => {}
            Expr::Binary { lhs, rhs, .. } => {
                lhs.map_vars(map);
                rhs.map_vars(map);
            }
            Expr::Unary { operand, .. } => operand.map_vars(map),
            Expr::List(items) => items.iter_mut().for_each(|e| e.map_vars(map)),
            Expr::GetItem { tuple, .. } => tuple.map_vars(map),
            Expr::Call(c) => {
                c.args.iter_mut().for_each(|e| e.map_vars(map));
                if let Some(deps) = &mut c.submit {
                    deps.iter_mut().for_each(|e| e.map_vars(map));
                }
                c.attrs.map_vars(map);
            }
        }
    }

    /// Visits every call in the expression (outermost first).
    pub fn for_each_call(&self, f: &mut dyn FnMut(&Call)) {
        match self {
            Expr::Call(c) => {
                f(c);
                c.args.iter().for_each(|e| e.for_each_call(f));
            }
            Expr::Binary { lhs, rhs, .. } => {
                lhs.for_each_call(f);
                rhs.for_each_call(f);
            }
            Expr::Unary { operand, .. } => operand.for_each_call(f),
            Expr::List(items) => items.iter().for_each(|e| e.for_each_call(f)),
            Expr::GetItem { tuple, .. } => tuple.for_each_call(f),
            _ => {}
        }
    }

    /// Visits every call mutably (outermost first).
    pub fn for_each_call_mut(&mut self, f: &mut dyn FnMut(&mut Call)) {
        match self {
            Expr::Call(c) => {
                f(c);
                c.args.iter_mut().for_each(|e| e.for_each_call_mut(f));
            }
            Expr::Binary { lhs, rhs, .. } => {
                lhs.for_each_call_mut(f);
                rhs.for_each_call_mut(f);
            }
            Expr::Unary { operand, .. } => operand.for_each_call_mut(f),
            Expr::List(items) => items.iter_mut().for_each(|e| e.for_each_call_mut(f)),
            Expr::GetItem { tuple, .. } => tuple.for_each_call_mut(f),
            _ => {}
        }
    }
}

/// `for var in pl.range(start, stop, step)` with loop-carried values.
#[derive(Clone, Debug, PartialEq)]
pub struct ForStmt {
    /// The loop variable.
    pub var: Var,
    /// First value.
    pub start: Expr,
    /// Bound (exclusive).
    pub stop: Expr,
    /// Increment.
    pub step: Expr,
    /// Loop-carried variables and their initial values (`init_values=`).
    pub iter_args: Vec<(Var, Expr)>,
    /// The body.
    pub body: Vec<Stmt>,
    /// The values carried into the next iteration (`pl.yield_(...)`), one per iter arg.
    pub yields: Vec<Expr>,
    /// The values after the loop, one per iter arg.
    pub results: Vec<Var>,
}

/// `if cond: ... else: ...` with merged values.
#[derive(Clone, Debug, PartialEq)]
pub struct IfStmt {
    /// The condition.
    pub cond: Expr,
    /// The then branch.
    pub then_body: Vec<Stmt>,
    /// The else branch (possibly empty).
    pub else_body: Vec<Stmt>,
    /// Values yielded by the then branch, one per result.
    pub then_yields: Vec<Expr>,
    /// Values yielded by the else branch, one per result.
    pub else_yields: Vec<Expr>,
    /// The merged values after the `if`.
    pub results: Vec<Var>,
}

/// What a `with` scope is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// `with pl.at(level=...)`: outlined into a kernel (CORE_GROUP) or a sub-program.
    At(Level),
    /// `with pl.manual_scope()`: a runtime scope without automatic dependencies.
    Manual,
}

/// A `with` scope.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeStmt {
    /// Which scope.
    pub kind: ScopeKind,
    /// Attributes (`deps`, `dump_vars`, `name_hint`, ...).
    pub attrs: Attrs,
    /// The body.
    pub body: Vec<Stmt>,
    /// `as tid`: the dispatch's task id.
    pub task_id: Option<Var>,
    /// `deps=[...]` of a `pl.at` scope.
    pub deps: Vec<Expr>,
}

/// What a statement does.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `x = value` (one target) or `a, b = value` (tuple unpacking).
    Assign {
        /// The targets (a tuple value is unpacked into several).
        targets: Vec<Var>,
        /// The value.
        value: Expr,
    },
    /// An expression evaluated for its effect.
    Eval(Expr),
    /// `return values`.
    Return(Vec<Expr>),
    /// A loop.
    For(Box<ForStmt>),
    /// A conditional.
    If(Box<IfStmt>),
    /// A `with` scope.
    Scope(Box<ScopeStmt>),
}

/// A statement with its source location.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it was written.
    pub span: Span,
}

impl Stmt {
    /// A statement at `span`.
    pub fn new(kind: StmtKind, span: Span) -> Stmt {
        Stmt { kind, span }
    }

    /// The variables this statement defines directly (not in nested bodies).
    pub fn defs(&self) -> Vec<Var> {
        match &self.kind {
            StmtKind::Assign { targets, .. } => targets.clone(),
            StmtKind::For(f) => f.results.clone(),
            StmtKind::If(i) => i.results.clone(),
            StmtKind::Scope(s) => s.task_id.iter().cloned().collect(),
            StmtKind::Eval(_) | StmtKind::Return(_) => Vec::new(),
        }
    }
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The variable.
    pub var: Var,
    /// How it is passed.
    pub direction: ParamDirection,
}

/// A function of a program.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The name.
    pub name: String,
    /// What it is.
    pub ftype: FunctionType,
    /// Parameters in order (`self` excluded).
    pub params: Vec<Param>,
    /// The declared return types.
    pub return_types: Vec<Type>,
    /// The body.
    pub body: Vec<Stmt>,
    /// Where it was defined.
    pub span: Span,
    /// Attributes (`core_type` after core-type resolution, ...).
    pub attrs: Attrs,
}

/// A program: a `@pl.program` class.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// The class name.
    pub name: String,
    /// The functions in definition order.
    pub functions: Vec<Function>,
}

impl Program {
    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The orchestration functions.
    pub fn orchestrations(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .filter(|f| f.ftype == FunctionType::Orchestration)
    }
}

/// Visits every statement of `body` and of nested bodies, outer before inner.
pub fn walk_stmts(body: &[Stmt], f: &mut dyn FnMut(&Stmt)) {
    for s in body {
        f(s);
        match &s.kind {
            StmtKind::For(fs) => walk_stmts(&fs.body, f),
            StmtKind::If(i) => {
                walk_stmts(&i.then_body, f);
                walk_stmts(&i.else_body, f);
            }
            StmtKind::Scope(sc) => walk_stmts(&sc.body, f),
            _ => {}
        }
    }
}

/// Visits every expression a statement holds directly (not those of nested bodies).
pub fn stmt_exprs<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    match &s.kind {
        StmtKind::Assign { value, .. } => f(value),
        StmtKind::Eval(e) => f(e),
        StmtKind::Return(vs) => vs.iter().for_each(f),
        StmtKind::For(fs) => {
            f(&fs.start);
            f(&fs.stop);
            f(&fs.step);
            fs.iter_args.iter().for_each(|(_, e)| f(e));
            fs.yields.iter().for_each(&mut *f);
        }
        StmtKind::If(i) => {
            f(&i.cond);
            i.then_yields.iter().for_each(&mut *f);
            i.else_yields.iter().for_each(&mut *f);
        }
        StmtKind::Scope(sc) => sc.deps.iter().for_each(f),
    }
}

/// Every variable read anywhere in `body` (operands of all nested statements, attributes
/// excluded), each once, in first-read order.
pub fn vars_read(body: &[Stmt]) -> Vec<Var> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    walk_stmts(body, &mut |s| {
        stmt_exprs(s, &mut |e| {
            e.for_each_var(&mut |v| {
                if seen.insert(v.id()) {
                    out.push(v.clone());
                }
            })
        })
    });
    out
}

/// Every variable defined anywhere in `body` (nested bodies, loop variables and iter args
/// included).
pub fn vars_defined(body: &[Stmt]) -> Vec<Var> {
    let mut out = Vec::new();
    walk_stmts(body, &mut |s| {
        out.extend(s.defs());
        if let StmtKind::For(f) = &s.kind {
            out.push(f.var.clone());
            out.extend(f.iter_args.iter().map(|(v, _)| v.clone()));
        }
    });
    out
}
