//! Orchestration codegen: one `Orchestration` function as the C++ PyPTO generates for the
//! orchestration API (`pto_orchestration_api.h`), statement by statement:
//!
//! * parameters: `ChipTensor ext_<name> = orch_args.tensor(i).ref();` per tensor, the
//!   union read of `orch_args.scalar(j)` per scalar; `aicpu_orchestration_config` returns
//!   their count;
//! * the body inside `PTO2_SCOPE() { ... }`; `pl.manual_scope()` is
//!   `PTO2_SCOPE(PTO2ScopeMode::MANUAL) { ... }`;
//! * `pl.create_tensor` → `TensorCreateInfo <name>_ci(...)` + `alloc_tensors(<name>_ci)`;
//!   slices → `.view(shapes, offsets)`, `pl.reshape` → `.reshape(shapes, n)`, `pl.read` →
//!   `get_tensor_data<T>(...)`, `pl.write` → `set_tensor_data<T>(...)` (the front end
//!   writes `pl.assemble` as a copy task; a `tensor.assemble` reaching here is refused);
//! * an operation written as a statement of its own is emitted as if bound to an unread
//!   name (`Gen::bare_op`): none is dropped;
//! * every kernel dispatch is one task block: `CoreTaskArgs params_tN;`, the `add_*` lines
//!   (tensors, then runtime-allocated outputs, then scalars), `params_tN.dump(...)` right
//!   after them when the call carries `dump_vars`, then the dependencies and
//!   `rt_submit_aiv_task(func_id, params_tN)` / `rt_submit_aic_task(...)`;
//! * a kernel's result is the argument it writes: the result variable is emitted under that
//!   argument's name (no copy), except runtime-allocated outputs
//!   (`task_N_outs.get_ref(k)`);
//! * loops and ifs: `for (int64_t i = ...)` with loop-carried values as locals declared
//!   before the loop, `if (...) { } else { }` with merged values declared before it.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use crate::error::CompileError;
use crate::ir::{
    stmt_exprs, walk_stmts, BinOp, Call, Expr, ForStmt, Function, IfStmt, ScopeKind, ScopeStmt,
    Span, Stmt, StmtKind, UnOp, Var, ATTR_ARG_DIRECTIONS,
};
use crate::passes::ssa::base_name;
use crate::types::{DataType, ParamDirection, TensorType, Type};

const STAGE: &str = "codegen (orchestration)";

/// What the orchestration needs to know of a kernel.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    /// The id tasks are submitted with.
    pub func_id: i32,
    /// A cube (AIC) kernel.
    pub cube: bool,
    /// The kernel's parameters (types and directions).
    pub params: Vec<(Type, ParamDirection)>,
    /// For each returned value, the parameter it aliases.
    pub return_params: Vec<usize>,
}

fn perr(span: &Span, message: String, hint: &str) -> CompileError {
    CompileError::program(STAGE, span, message, hint)
}

/// Names the generated orchestration uses itself, which no variable may take (C++'s
/// keywords are `super::CPP_KEYWORDS`).
const ORCH_RESERVED: &[&str] = &["orch_args", "rt"];

struct Gen<'a> {
    kernels: &'a HashMap<String, KernelInfo>,
    out: String,
    depth: usize,
    names: HashMap<u64, String>,
    used: HashSet<String>,
    n_task: usize,
    n_alloc: usize,
    /// Variables declared before a block because they are read after it.
    hoisted: HashSet<u64>,
    /// Task ids that may be invalid (loop-carried, merged): their deps are guarded.
    maybe_invalid: HashSet<u64>,
    /// Arrays: each C++ array (by name) and the one array value it holds now. An
    /// `array.update_element` writes its operand's storage in place, so only the newest
    /// value of a storage may be read; an older one is refused ([`Gen::array_read`]).
    array_live: HashMap<String, u64>,
    /// How many `pl.manual_scope` blocks enclose the current statement (no AUTO scope is
    /// opened inside one: the runtime forbids AUTO nested in MANUAL).
    manual_depth: usize,
}

impl<'a> Gen<'a> {
    fn line(&mut self, text: &str) {
        if text.is_empty() {
            self.out.push('\n');
            return;
        }
        for _ in 0..self.depth {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn ident(&mut self, hint: &str) -> String {
        let mut base: String = base_name(hint)
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, 'v');
        }
        if super::CPP_KEYWORDS.contains(&base.as_str()) || ORCH_RESERVED.contains(&base.as_str()) {
            base.push('_');
        }
        let mut name = base.clone();
        let mut k = 1;
        while !self.used.insert(name.clone()) {
            name = format!("{base}_{k}");
            k += 1;
        }
        name
    }

    fn name(&self, v: &Var, span: &Span) -> Result<String, CompileError> {
        self.names.get(&v.id()).cloned().ok_or_else(|| {
            perr(
                span,
                format!("'{}' has no value here", base_name(v.name())),
                "Bind the value before using it.",
            )
        })
    }

    /// A binding `TYPE name = value;` (or `name = value;` for a hoisted variable).
    fn bind(&mut self, v: &Var, cpp_type: &str, value: &str) -> String {
        if self.hoisted.contains(&v.id()) {
            if let Some(n) = self.names.get(&v.id()).cloned() {
                self.line(&format!("{n} = {value};"));
                return n;
            }
        }
        let n = self.ident(v.name());
        self.line(&format!("{cpp_type} {n} = {value};"));
        self.names.insert(v.id(), n.clone());
        n
    }

    fn scalar(&self, e: &Expr, span: &Span) -> Result<String, CompileError> {
        self.scalar_prec(e, span)
    }

    fn scalar_prec(&self, e: &Expr, span: &Span) -> Result<String, CompileError> {
        Ok(match e {
            Expr::Int { value, dtype } => match dtype {
                DataType::Index | DataType::Int64 if i32::try_from(*value).is_ok() => {
                    value.to_string()
                }
                DataType::Index | DataType::Int64 => format!("{value}LL"),
                d => format!("({}){value}", d.cpp_type()),
            },
            Expr::Float { value, dtype } => {
                let v = if value.is_nan() {
                    "NAN".to_string()
                } else if value.is_infinite() {
                    if *value > 0.0 {
                        "INFINITY"
                    } else {
                        "-INFINITY"
                    }
                    .to_string()
                } else {
                    format!("{value:?}")
                };
                match dtype {
                    DataType::Fp32 => format!("{v}f"),
                    _ => format!("({}){v}", dtype.cpp_type()),
                }
            }
            Expr::Bool(b) => if *b { "true" } else { "false" }.to_string(),
            Expr::Var(v) => self.name(v, span)?,
            Expr::Binary { op, lhs, rhs, .. } => {
                let a = self.scalar_prec(lhs, span)?;
                let b = self.scalar_prec(rhs, span)?;
                let int = !lhs.ty().as_scalar().is_some_and(DataType::is_float)
                    && !rhs.ty().as_scalar().is_some_and(DataType::is_float);
                match op {
                    BinOp::Min => format!("(({a}) < ({b}) ? ({a}) : ({b}))"),
                    BinOp::Max => format!("(({a}) > ({b}) ? ({a}) : ({b}))"),
                    BinOp::FloorDiv if int => format!(
                        "(({a}) / ({b}) - ((({a}) % ({b}) != 0) && ((({a}) < 0) != (({b}) < 0))))"
                    ),
                    BinOp::Mod if int => format!("(((({a}) % ({b})) + ({b})) % ({b}))"),
                    BinOp::And => format!("({a} && {b})"),
                    BinOp::Or => format!("({a} || {b})"),
                    BinOp::FloorDiv | BinOp::Div => format!("({a} / {b})"),
                    BinOp::Mod => format!("fmod({a}, {b})"),
                    op => format!("({a} {} {b})", op.symbol()),
                }
            }
            Expr::Unary { op, operand, dtype } => {
                let a = self.scalar_prec(operand, span)?;
                match op {
                    UnOp::Neg => format!("(-{a})"),
                    UnOp::Not => format!("(!{a})"),
                    UnOp::Cast => format!("(({}){a})", dtype.cpp_type()),
                }
            }
            other => {
                return Err(perr(
                    span,
                    format!("{} is not a scalar expression", other.ty().describe()),
                    "Use scalars (parameters, loop variables, pl.read results) here.",
                ))
            }
        })
    }

    fn u32_list(&self, e: &Expr, span: &Span) -> Result<Vec<String>, CompileError> {
        match e {
            Expr::List(items) => items
                .iter()
                .map(|i| match i.as_const_int() {
                    Some(v) => Ok(v.to_string()),
                    None => Ok(format!("(uint32_t)({})", self.scalar(i, span)?)),
                })
                .collect(),
            _ => Err(perr(
                span,
                "expected a list of offsets".into(),
                "Write [row, col].",
            )),
        }
    }

    fn tensor_expr(&mut self, e: &Expr, span: &Span) -> Result<String, CompileError> {
        match e {
            Expr::Var(v) => self.name(v, span),
            Expr::Call(c) if c.op_name().is_some() => {
                // A tensor operation used inline (e.g. a slice passed straight to a kernel).
                let tmp = Var::new("tmp", c.ty.clone());
                self.op_assign(&tmp, c, span)?;
                self.name(&tmp, span)
            }
            _ => Err(perr(
                span,
                format!("expected a tensor, got {}", e.ty().describe()),
                "Pass a tensor parameter, a created tensor or a slice.",
            )),
        }
    }

    fn shapes_decl(&mut self, prefix: &str, dims: &[String]) -> String {
        let n = format!("{prefix}_shapes");
        let n = self.ident(&n);
        self.line(&format!(
            "uint32_t {n}[{}] = {{{}}};",
            dims.len(),
            dims.join(", ")
        ));
        n
    }

    fn create_info(
        &mut self,
        hint: &str,
        t: &TensorType,
        span: &Span,
    ) -> Result<String, CompileError> {
        let dims: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
        self.create_info_dims(hint, t, dims, span)
    }

    /// The sizes of a `tensor.create` / `tensor.slice` (`shape` keyword): the literals, or
    /// the runtime sizes of argument `at` when it is given.
    fn sizes(&self, c: &Call, at: usize, span: &Span) -> Result<Vec<String>, CompileError> {
        match c.args.get(at) {
            Some(list) => self.u32_list(list, span),
            None => Ok(c
                .kwargs
                .ints("shape")
                .unwrap_or(&[])
                .iter()
                .map(|d| d.to_string())
                .collect()),
        }
    }

    fn create_info_dims(
        &mut self,
        hint: &str,
        t: &TensorType,
        dims: Vec<String>,
        span: &Span,
    ) -> Result<String, CompileError> {
        let shapes = self.shapes_decl(&format!("{hint}_ci"), &dims);
        let ci = self.ident(&format!("{hint}_ci"));
        let dt = t.dtype.runtime_enum().ok_or_else(|| {
            perr(
                span,
                format!("a tensor of {}", t.dtype.pl_name()),
                "Use a numeric dtype.",
            )
        })?;
        self.line(&format!(
            "TensorCreateInfo {ci}({shapes}, {}, {dt});",
            dims.len()
        ));
        Ok(ci)
    }

    /// `tensor.write(t, indices, value)` on the host: `set_tensor_data<T>(...)`, which waits
    /// for the tasks in flight before it writes. Returns the tensor's name.
    fn write_element(&mut self, c: &Call, span: &Span) -> Result<String, CompileError> {
        let dst = self.tensor_expr(&c.args[0], span)?;
        let idx = self.u32_list(&c.args[1], span)?;
        let Some(t) = c.args[0].ty().as_tensor().cloned() else {
            return Err(perr(span, "tensor.write".into(), ""));
        };
        let value = self.scalar(&c.args[2], span)?;
        let iname = self.ident(&format!("{}_idx", base_name(&dst)));
        self.line(&format!(
            "uint32_t {iname}[{}] = {{{}}};",
            idx.len(),
            idx.join(", ")
        ));
        let ty = t.dtype.cpp_type();
        self.line(&format!(
            "set_tensor_data<{ty}>({dst}, {}, {iname}, ({ty})({value}));",
            idx.len()
        ));
        Ok(dst)
    }

    /// Emits an operation bound to `target`: one function per family (tensors, arrays, the
    /// dependency-only task).
    fn op_assign(&mut self, target: &Var, c: &Call, span: &Span) -> Result<(), CompileError> {
        let op = c.op_name().unwrap_or_default();
        match op {
            "array.create" | "array.get_element" | "array.update_element" => {
                self.array_assign(op, target, c, span)
            }
            "system.task_dummy" => self.task_dummy(target, c, span),
            _ => self.tensor_assign(op, target, c, span),
        }
    }

    /// Emits a `tensor.*` operation bound to `target` (an error for any other operation).
    fn tensor_assign(
        &mut self,
        op: &str,
        target: &Var,
        c: &Call,
        span: &Span,
    ) -> Result<(), CompileError> {
        match op {
            "tensor.create" => {
                let Type::Tensor(t) = &c.ty else {
                    return Err(perr(span, "tensor.create".into(), ""));
                };
                let hint = base_name(target.name()).to_string();
                let dims = self.sizes(c, 0, span)?;
                let ci = self.create_info_dims(&hint, t, dims, span)?;
                let alloc = format!("alloc_{}", self.n_alloc);
                self.n_alloc += 1;
                let alloc = self.ident(&alloc);
                self.line(&format!(
                    "TaskOutputTensors {alloc} = alloc_tensors({ci});"
                ));
                self.bind(target, "ChipTensor", &format!("{alloc}.get_ref(0)"));
            }
            "tensor.slice" => {
                let src = self.tensor_expr(&c.args[0], span)?;
                let offs = self.u32_list(&c.args[1], span)?;
                let mut dims = self.sizes(c, 2, span)?;
                // A runtime offset into a runtime-sized tensor may run past it (the last
                // block of a sequence): the view is clamped to what remains, empty past the
                // end — the contract of the runtime's view, which PyPTO's generated code
                // relies on. (A static tensor's slices are checked when compiled.)
                let src_dynamic = c.args[0].ty().as_tensor().is_some_and(TensorType::is_dynamic);
                if let (true, Expr::List(items)) = (src_dynamic, &c.args[1]) {
                    for (d, off) in items.iter().enumerate() {
                        if off.as_const_int().is_some() || d >= dims.len() {
                            continue;
                        }
                        let (o, size, dim) = (&offs[d], &dims[d], format!("{src}.shapes[{d}]"));
                        dims[d] = format!(
                            "({o} >= {dim} ? 0u : ((uint32_t)({size}) < {dim} - {o} ? (uint32_t)({size}) : {dim} - {o}))"
                        );
                    }
                }
                let hint = base_name(target.name()).to_string();
                let shapes = self.shapes_decl(&hint, &dims);
                let offsets = self.ident(&format!("{hint}_offsets"));
                self.line(&format!(
                    "uint32_t {offsets}[{}] = {{{}}};",
                    offs.len(),
                    offs.join(", ")
                ));
                self.bind(target, "ChipTensor", &format!("{src}.view({shapes}, {offsets})"));
            }
            "tensor.reshape" => {
                let src = self.tensor_expr(&c.args[0], span)?;
                let dims: Vec<String> = c
                    .kwargs
                    .ints("shape")
                    .unwrap_or(&[])
                    .iter()
                    .map(|d| d.to_string())
                    .collect();
                let hint = base_name(target.name()).to_string();
                let shapes = self.shapes_decl(&hint, &dims);
                self.bind(
                    target,
                    "ChipTensor",
                    &format!("{src}.reshape({shapes}, {})", dims.len()),
                );
            }
            "tensor.read" => {
                let src = self.tensor_expr(&c.args[0], span)?;
                let idx = self.u32_list(&c.args[1], span)?;
                let Type::Scalar(d) = c.ty else {
                    return Err(perr(span, "tensor.read".into(), ""));
                };
                let hint = base_name(target.name()).to_string();
                let iname = self.ident(&format!("{hint}_idx"));
                self.line(&format!(
                    "uint32_t {iname}[{}] = {{{}}};",
                    idx.len(),
                    idx.join(", ")
                ));
                let ty = d.cpp_type();
                self.bind(
                    target,
                    ty,
                    &format!("get_tensor_data<{ty}>({src}, {}, {iname})", idx.len()),
                );
            }
            "tensor.write" => {
                let t = self.write_element(c, span)?;
                self.alias(target, t);
            }
            "tensor.assemble" => {
                // The front end writes an orchestration assemble as the copy task it stands
                // for; a name alias here would lose the source unless it had been produced
                // into the target's window.
                return Err(perr(
                    span,
                    "tensor.assemble in an orchestration: the source would not be copied into the target".into(),
                    "Write pl.assemble(t, src, offsets) in the DSL (a copy task), or produce src into pl.slice(t, shape, offsets).",
                ));
            }
            "tensor.dim" => {
                // A static dimension is its literal; one known only at run time is read from
                // the tensor's descriptor.
                let src = self.tensor_expr(&c.args[0], span)?;
                let axis = c.args[1].as_const_int().unwrap_or(0);
                let dim = c.args[0]
                    .ty()
                    .as_tensor()
                    .and_then(|t| t.shape.get(axis as usize).copied())
                    .filter(|d| *d > 0);
                let value = match dim {
                    Some(d) => d.to_string(),
                    None => format!("(int64_t){src}.shapes[{axis}]"),
                };
                self.bind(target, "int64_t", &value);
            }
            other => {
                return Err(perr(
                    span,
                    format!("operation {other} cannot appear in an orchestration"),
                    "Tile operations belong in kernels or in a with pl.at(level=pl.Level.CORE_GROUP) scope.",
                ))
            }
        }
        Ok(())
    }

    /// Emits an `array.*` operation bound to `target`.
    fn array_assign(
        &mut self,
        op: &str,
        target: &Var,
        c: &Call,
        span: &Span,
    ) -> Result<(), CompileError> {
        match op {
            "array.create" => {
                let n = self.declare_array(base_name(target.name()), &c.ty, span)?;
                self.names.insert(target.id(), n.clone());
                self.array_live.insert(n, target.id());
            }
            "array.get_element" => {
                let arr = self.array_read(&array_var(c, span)?, span)?;
                let i = self.scalar(&c.args[1], span)?;
                let ty = self.cpp_type_of(target.ty(), span)?;
                self.bind(target, ty, &format!("{arr}[{i}]"));
                if matches!(target.ty(), Type::TaskId) {
                    self.maybe_invalid.insert(target.id());
                }
            }
            "array.update_element" => {
                let arr = self.array_read(&array_var(c, span)?, span)?;
                let i = self.scalar(&c.args[1], span)?;
                let v = self.value_of(&c.args[2], span)?;
                let v = match c.ty.as_array() {
                    Some((_, Type::Scalar(d))) => format!("({})({v})", d.cpp_type()),
                    _ => v,
                };
                self.line(&format!("{arr}[{i}] = {v};"));
                self.alias(target, arr);
            }
            other => unreachable!("op_assign sends only array operations here, not {other}"),
        }
        Ok(())
    }

    /// Emits `system.task_dummy`: a dependency-only barrier task bound to `target`.
    fn task_dummy(&mut self, target: &Var, c: &Call, span: &Span) -> Result<(), CompileError> {
        let (_, p) = self.begin_task("dependency-only barrier");
        self.deps(&p, &c.args, span)?;
        let submit = format!("rt_submit_dummy_task({p}).task_id()");
        if c.args.is_empty() {
            self.bind(target, "PTO2TaskId", &submit);
        } else {
            // Every edge may be invalid (a first iteration): a barrier with no
            // predecessor is not submitted and its id stays invalid.
            let t = self.bind(target, "PTO2TaskId", "PTO2TaskId::invalid()");
            self.line(&format!("if ({p}_deps_count > 0) {t} = {submit};"));
            self.maybe_invalid.insert(target.id());
        }
        Ok(())
    }

    fn alias(&mut self, target: &Var, name: String) {
        let array = target.ty().as_array().is_some();
        if self.hoisted.contains(&target.id()) {
            if let Some(n) = self.names.get(&target.id()).cloned() {
                if n != name {
                    if array {
                        self.copy_array(&n, &name, target.ty());
                    } else {
                        self.line(&format!("{n} = {name};"));
                    }
                }
                if array {
                    self.array_live.insert(n, target.id());
                }
                return;
            }
        }
        if array {
            self.array_live.insert(name.clone(), target.id());
        }
        self.names.insert(target.id(), name);
    }

    /// Starts the next task's block (a comment naming `what`, its `CoreTaskArgs`): its
    /// number and the name of its arguments.
    fn begin_task(&mut self, what: &str) -> (usize, String) {
        let n = self.n_task;
        self.n_task += 1;
        let p = format!("params_t{n}");
        self.used.insert(p.clone());
        self.line("");
        self.line(&format!("// Task {n}: {what}"));
        self.line(&format!("CoreTaskArgs {p};"));
        (n, p)
    }

    fn task(&mut self, targets: &[Var], c: &Call, span: &Span) -> Result<(), CompileError> {
        let kname = c.function_name().unwrap_or_default().to_string();
        let k = self.kernels.get(&kname).cloned().ok_or_else(|| {
            perr(
                span,
                format!("'{kname}' is not a kernel of this program"),
                "An orchestration calls AIC / AIV / InCore kernels.",
            )
        })?;
        let dirs: Vec<String> = c
            .attrs
            .strs(ATTR_ARG_DIRECTIONS)
            .map(<[String]>::to_vec)
            .ok_or_else(|| {
                perr(
                    span,
                    format!("the call of '{kname}' has no arg_directions"),
                    "Run the DeriveCallDirections pass before codegen.",
                )
            })?;
        let (n, p) = self.begin_task(&kname);
        let dump_set: HashSet<u64> = c.dump_vars().iter().map(Var::id).collect();
        let mut dumped = Vec::new();
        let mut arg_names: Vec<Option<String>> = Vec::new();
        let mut scalars = Vec::new();
        for (i, (a, d)) in c.args.iter().zip(&dirs).enumerate() {
            if d == "Scalar" {
                let ty = match &k.params[i].0 {
                    Type::Scalar(dt) => dt.cpp_type(),
                    _ => "int64_t",
                };
                scalars.push(format!("({ty})({})", self.scalar(a, span)?));
                arg_names.push(None);
                continue;
            }
            let name = self.tensor_expr(a, span)?;
            let method = match d.as_str() {
                "Out" => "add_output",
                "InOut" => "add_inout",
                _ => "add_input",
            };
            self.line(&format!("{p}.{method}({name});"));
            if a.as_var().is_some_and(|v| dump_set.contains(&v.id())) && !dumped.contains(&name) {
                dumped.push(name.clone());
            }
            arg_names.push(Some(name));
        }
        // Trailing Out parameters left out of a pl.submit: runtime-allocated outputs.
        let mut synth = Vec::new();
        for (i, (ty, _)) in k.params.iter().enumerate().skip(c.args.len()) {
            let Type::Tensor(t) = ty else {
                return Err(perr(
                    span,
                    "a scalar parameter left out".into(),
                    "Pass every scalar.",
                ));
            };
            let ci = self.create_info(&format!("{p}_synth_out_{}", synth.len()), t, span)?;
            self.line(&format!("{p}.add_output({ci});"));
            synth.push(i);
        }
        for s in &scalars {
            self.line(&format!("{p}.add_scalar({s});"));
        }
        // An SPMD dispatch (`with pl.spmd(core_num=n, sync_start=...)`): n blocks.
        if let Some(n) = c.attrs.int("block_num") {
            if !(1..=i64::from(i16::MAX)).contains(&n) {
                return Err(perr(
                    span,
                    format!("pl.spmd(core_num={n}) of '{kname}' is outside 1..=32767"),
                    "Give a positive block count.",
                ));
            }
            self.line(&format!("{p}.launch_spec.set_block_num({n});"));
            if c.attrs.bool("sync_start") == Some(true) {
                self.line(&format!("{p}.launch_spec.set_require_sync_start(true);"));
            }
        }
        if !dumped.is_empty() {
            self.line(&format!("{p}.dump({});", dumped.join(", ")));
        }
        if let Some(deps) = &c.submit {
            self.deps(&p, deps, span)?;
        }
        let submit = if k.cube {
            "rt_submit_aic_task"
        } else {
            "rt_submit_aiv_task"
        };
        let n_results = k.return_params.len();
        let task_id_target = if c.submit.is_some() {
            targets.get(n_results)
        } else {
            None
        };
        let needs_outs = !synth.is_empty() || c.submit.is_some();
        let outs = format!("task_{n}_outs");
        if needs_outs {
            self.used.insert(outs.clone());
            self.line(&format!(
                "TaskOutputTensors {outs} = {submit}({}, {p});",
                k.func_id
            ));
        } else {
            self.line(&format!("{submit}({}, {p});", k.func_id));
        }
        // Bind the results.
        if targets.len() < n_results && !targets.is_empty() {
            return Err(perr(
                span,
                format!(
                    "'{kname}' returns {n_results} value(s), {} bound",
                    targets.len()
                ),
                "Bind every result.",
            ));
        }
        for (ri, pi) in k.return_params.iter().enumerate() {
            let Some(t) = targets.get(ri) else { break };
            match arg_names.get(*pi) {
                Some(Some(name)) => {
                    let name = name.clone();
                    self.alias(t, name);
                }
                _ => {
                    let j = synth.iter().position(|s| s == pi).ok_or_else(|| {
                        perr(
                            span,
                            format!("result {ri} of '{kname}' has no argument"),
                            "",
                        )
                    })?;
                    self.bind(t, "ChipTensor", &format!("{outs}.get_ref({j})"));
                }
            }
        }
        if let Some(t) = task_id_target {
            // `out, _ = pl.submit(...)`: an unused `_` binds nothing.
            if base_name(t.name()) != "_" {
                self.bind(t, "PTO2TaskId", &format!("{outs}.task_id()"));
            }
        }
        Ok(())
    }

    /// The explicit dependencies of task `p` (`deps=[...]`): a stack array sized to the
    /// number of edges, filled with each task id (guarded by `is_valid()` when it may be
    /// invalid) and every valid element of each task-id array, then `set_dependencies`.
    /// Nothing for no deps.
    fn deps(&mut self, p: &str, deps: &[Expr], span: &Span) -> Result<(), CompileError> {
        if deps.is_empty() {
            return Ok(());
        }
        let mut slots = 0i64;
        let mut entries = Vec::new();
        for d in deps {
            let Some(v) = d.as_var() else {
                return Err(perr(
                    span,
                    "deps= entries must be task ids".into(),
                    "Write deps=[tid].",
                ));
            };
            match v.ty() {
                Type::TaskId => slots += 1,
                Type::Array { len, elem } if **elem == Type::TaskId => slots += len,
                other => {
                    return Err(perr(
                        span,
                        format!(
                            "deps= entry '{}' is a {}",
                            base_name(v.name()),
                            other.describe()
                        ),
                        "deps= takes task ids and arrays of task ids.",
                    ))
                }
            }
            entries.push(v.clone());
        }
        self.line(&format!("PTO2TaskId {p}_deps[{slots}];"));
        self.line(&format!("uint32_t {p}_deps_count = 0;"));
        for v in &entries {
            if let Some((len, _)) = v.ty().as_array() {
                let arr = self.array_read(v, span)?;
                let k = self.ident(&format!("{p}_k"));
                self.line(&format!(
                    "for (int32_t {k} = 0; {k} < {len}; ++{k}) if ({arr}[{k}].is_valid()) {p}_deps[{p}_deps_count++] = {arr}[{k}];"
                ));
                continue;
            }
            let tid = self.name(v, span)?;
            if self.maybe_invalid.contains(&v.id()) {
                self.line(&format!(
                    "if ({tid}.is_valid()) {p}_deps[{p}_deps_count++] = {tid};"
                ));
            } else {
                self.line(&format!("{p}_deps[{p}_deps_count++] = {tid};"));
            }
        }
        self.line(&format!("{p}.set_dependencies({p}_deps, {p}_deps_count);"));
        Ok(())
    }

    /// The C++ array holding array value `v`, refusing a value whose storage was updated
    /// since (the update wrote it in place).
    fn array_read(&self, v: &Var, span: &Span) -> Result<String, CompileError> {
        let n = self.name(v, span)?;
        if self.array_live.get(&n) != Some(&v.id()) {
            return Err(perr(
                span,
                format!(
                    "array '{}' is read after the array it was made from was updated",
                    base_name(v.name())
                ),
                "Arrays are updated in place: read only the newest value (write arr[i] = v, which rebinds arr, and keep using arr).",
            ));
        }
        Ok(n)
    }

    /// Declares a C++ array for array type `ty` (every element invalid / zero) and
    /// returns its name.
    fn declare_array(
        &mut self,
        hint: &str,
        ty: &Type,
        span: &Span,
    ) -> Result<String, CompileError> {
        let Some((len, elem)) = ty.as_array() else {
            return Err(perr(span, format!("{} is not an array", ty.describe()), ""));
        };
        let n = self.ident(hint);
        match elem {
            Type::TaskId => {
                self.line(&format!("PTO2TaskId {n}[{len}];"));
                let k = self.ident(&format!("{n}_k"));
                self.line(&format!(
                    "for (int32_t {k} = 0; {k} < {len}; ++{k}) {n}[{k}] = PTO2TaskId::invalid();"
                ));
            }
            Type::Scalar(d) => self.line(&format!("{} {n}[{len}] = {{0}};", d.cpp_type())),
            other => {
                return Err(perr(
                    span,
                    format!("an array of {}", other.describe()),
                    "Arrays hold task ids or integers.",
                ))
            }
        }
        Ok(n)
    }

    /// Copies array `src` into array `dst` (both of `ty`), element by element.
    fn copy_array(&mut self, dst: &str, src: &str, ty: &Type) {
        let len = ty.as_array().map_or(0, |(l, _)| l);
        let k = self.ident(&format!("{dst}_k"));
        self.line(&format!(
            "for (int32_t {k} = 0; {k} < {len}; ++{k}) {dst}[{k}] = {src}[{k}];"
        ));
    }

    /// Opens the AUTO scope (`PTO2_SCOPE() {`) of a loop body or an `if` branch, as PyPTO's
    /// `MaterializeRuntimeScopes` places them, so the runtime retires each iteration's tasks
    /// at its end; not inside a manual scope. Returns whether one was opened.
    fn open_auto_scope(&mut self) -> bool {
        if self.manual_depth > 0 {
            return false;
        }
        self.line("PTO2_SCOPE() {");
        self.depth += 1;
        true
    }

    /// Closes what [`Gen::open_auto_scope`] opened.
    fn close_auto_scope(&mut self, opened: bool) {
        if opened {
            self.depth -= 1;
            self.line("}");
        }
    }

    /// After a loop or a branch: storages whose live value changed inside hold a value of
    /// the inner block, which no later code may read; they are forgotten (a read is then
    /// refused by [`Gen::array_read`]) — the block's results re-register theirs.
    fn forget_changed_arrays(&mut self, before: &HashMap<String, u64>) {
        self.array_live.retain(|k, v| before.get(k) == Some(v));
    }

    /// One branch's yields assigned to the `if`'s merged values (arrays copied).
    fn merge_yields(
        &mut self,
        merged: &[String],
        results: &[Var],
        yields: &[Expr],
        span: &Span,
    ) -> Result<(), CompileError> {
        for ((n, y), r) in merged.iter().zip(yields).zip(results) {
            let y = self.value_of(y, span)?;
            if r.ty().as_array().is_some() {
                self.copy_array(n, &y, r.ty());
            } else {
                self.line(&format!("{n} = {y};"));
            }
        }
        Ok(())
    }

    fn cpp_type_of(&self, ty: &Type, span: &Span) -> Result<&'static str, CompileError> {
        Ok(match ty {
            Type::Tensor(_) => "ChipTensor",
            Type::TaskId => "PTO2TaskId",
            Type::Scalar(d) => d.cpp_type(),
            other => {
                return Err(perr(
                    span,
                    format!("a {} in an orchestration", other.describe()),
                    "Tiles exist only inside kernels and pl.at scopes.",
                ))
            }
        })
    }

    fn value_of(&mut self, e: &Expr, span: &Span) -> Result<String, CompileError> {
        match e.ty() {
            Type::Tensor(_) => self.tensor_expr(e, span),
            Type::Array { .. } => match e.as_var() {
                Some(v) => self.array_read(v, span),
                None => Err(perr(
                    span,
                    "an array value that is not a variable".into(),
                    "Bind the array to a name first.",
                )),
            },
            Type::TaskId => match e.as_var() {
                Some(v) => self.name(v, span),
                None => Ok("PTO2TaskId::invalid()".to_string()),
            },
            _ => self.scalar(e, span),
        }
    }

    /// Declares `v` before a block (`ChipTensor v;`), for a value assigned inside it.
    fn declare(&mut self, v: &Var, span: &Span) -> Result<String, CompileError> {
        if v.ty().as_array().is_some() {
            let n = self.declare_array(v.name(), v.ty(), span)?;
            self.names.insert(v.id(), n.clone());
            self.hoisted.insert(v.id());
            return Ok(n);
        }
        let ty = self.cpp_type_of(v.ty(), span)?;
        let n = self.ident(v.name());
        match v.ty() {
            Type::TaskId => self.line(&format!("{ty} {n} = PTO2TaskId::invalid();")),
            Type::Tensor(_) => self.line(&format!("{ty} {n}{{}};")),
            _ => self.line(&format!("{ty} {n} = 0;")),
        }
        self.names.insert(v.id(), n.clone());
        self.hoisted.insert(v.id());
        Ok(n)
    }

    /// Whether `v` (bound in `body`) is emitted under the name of a value bound outside
    /// `body`: a kernel result aliasing its argument, or a plain alias, back to an outer value.
    fn aliases_outer(&self, body: &[Stmt], v: &Var, inner: &HashSet<u64>) -> bool {
        !inner.contains(&self.alias_root(body, v).id())
    }

    /// The value `v` is an alias of, following (within `body`) kernel results to the
    /// arguments they write and plain tensor aliases; `v` itself when it is no alias.
    fn alias_root(&self, body: &[Stmt], v: &Var) -> Var {
        let mut cur = v.clone();
        for _ in 0..64 {
            let mut source = None;
            walk_stmts(body, &mut |s| match &s.kind {
                StmtKind::Assign { targets, value } => {
                    let Some(pos) = targets.iter().position(|t| t == &cur) else {
                        return;
                    };
                    match value {
                        Expr::Var(x) if targets.len() == 1 && x.ty().is_tensor() => {
                            source = Some(x.clone())
                        }
                        Expr::Call(c) => {
                            let Some(k) = c.function_name().and_then(|n| self.kernels.get(n))
                            else {
                                return;
                            };
                            if let Some(&pi) = k.return_params.get(pos) {
                                source = c.args.get(pi).and_then(Expr::as_var).cloned();
                            }
                        }
                        _ => {}
                    }
                }
                // The result of a loop that writes its carried tensor in place is that
                // tensor's initial value.
                StmtKind::For(f) => {
                    let Some(k) = f.results.iter().position(|r| r == &cur) else {
                        return;
                    };
                    let (it, init) = &f.iter_args[k];
                    let in_place = f
                        .yields
                        .get(k)
                        .and_then(Expr::as_var)
                        .is_some_and(|y| self.alias_root(&f.body, y) == *it);
                    if in_place {
                        source = init.as_var().cloned();
                    }
                }
                _ => {}
            });
            match source {
                Some(x) => cur = x,
                None => return cur,
            }
        }
        cur
    }

    fn body(
        &mut self,
        body: &[Stmt],
        reads_after: &HashMap<u64, usize>,
    ) -> Result<(), CompileError> {
        for s in body {
            self.stmt(s, reads_after)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, reads: &HashMap<u64, usize>) -> Result<(), CompileError> {
        let span = &s.span;
        match &s.kind {
            StmtKind::Assign { targets, value } => self.assign(targets, value, span)?,
            StmtKind::Eval(Expr::Call(c)) if c.function_name().is_some() => {
                self.task(&[], c, span)?
            }
            StmtKind::Eval(Expr::Call(c)) => self.bare_op(c, span)?,
            // A bare variable or constant has no effect.
            StmtKind::Eval(_) | StmtKind::Return(_) => {}
            StmtKind::For(f) => self.for_stmt(f, reads, span)?,
            StmtKind::If(i) => self.if_stmt(i, reads, span)?,
            StmtKind::Scope(sc) => self.scope_stmt(sc, reads, span)?,
        }
        Ok(())
    }

    /// Emits an operation written as a statement of its own (`pl.write(t, [i], v)`,
    /// `pl.system.task_dummy(deps=[...])`, `pl.array.update_element(a, i, v)`, ...): as if
    /// bound to a name nothing reads, so none is dropped; an operation an orchestration
    /// cannot run is refused naming it and its line. A bare array update writes the array
    /// in place, which stays the array's current value.
    fn bare_op(&mut self, c: &Call, span: &Span) -> Result<(), CompileError> {
        let unread = Var::new("unused", c.ty.clone());
        if c.op_name() == Some("array.update_element") {
            let arr = array_var(c, span)?;
            self.op_assign(&unread, c, span)?;
            let storage = self.name(&unread, span)?;
            self.array_live.insert(storage, arr.id());
            return Ok(());
        }
        self.op_assign(&unread, c, span)
    }

    /// Emits an assignment: a task, an operation, a copy of a variable or a scalar.
    fn assign(&mut self, targets: &[Var], value: &Expr, span: &Span) -> Result<(), CompileError> {
        match value {
            Expr::Call(c) if c.function_name().is_some() => self.task(targets, c, span)?,
            Expr::Call(c) => {
                let [t] = targets else {
                    return Err(perr(span, "tuple unpacking of an operation".into(), ""));
                };
                self.op_assign(t, c, span)?;
            }
            Expr::Var(v) => {
                let [t] = targets else {
                    return Err(perr(span, "tuple unpacking of a variable".into(), ""));
                };
                let n = if v.ty().as_array().is_some() {
                    self.array_read(v, span)?
                } else {
                    self.name(v, span)?
                };
                if t.ty().is_tensor() || matches!(t.ty(), Type::TaskId | Type::Array { .. }) {
                    self.alias(t, n);
                } else {
                    let ty = self.cpp_type_of(t.ty(), span)?;
                    self.bind(t, ty, &n);
                }
            }
            e => {
                let [t] = targets else {
                    return Err(perr(span, "tuple unpacking of a scalar".into(), ""));
                };
                let ty = self.cpp_type_of(t.ty(), span)?;
                let v = self.scalar(e, span)?;
                self.bind(t, ty, &v);
            }
        }
        Ok(())
    }

    /// Emits a `for` loop with its carried values (`reads`: reads of each variable in the
    /// enclosing body, see [`read_counts`]).
    fn for_stmt(
        &mut self,
        f: &ForStmt,
        reads: &HashMap<u64, usize>,
        span: &Span,
    ) -> Result<(), CompileError> {
        let start = self.scalar(&f.start, span)?;
        let stop = self.scalar(&f.stop, span)?;
        let step = self.scalar(&f.step, span)?;
        let mut iters = Vec::new();
        let live_before = self.array_live.clone();
        for (k, (v, init)) in f.iter_args.iter().enumerate() {
            let init = self.value_of(init, span)?;
            // An array is carried in the initial value's storage: each iteration's
            // yield is copied into it when it lives elsewhere.
            if v.ty().as_array().is_some() {
                self.names.insert(v.id(), init.clone());
                self.array_live.insert(init.clone(), v.id());
                iters.push(init);
                continue;
            }
            // A tensor the body writes in place (every iteration's value is the
            // same tensor) keeps the initial value's name: no carry variable. Only
            // when that name is a plain identifier (it may be assigned to below).
            let in_place = v.ty().is_tensor()
                && init
                    .chars()
                    .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && f.yields
                    .get(k)
                    .and_then(Expr::as_var)
                    .is_some_and(|y| self.alias_root(&f.body, y) == *v);
            if in_place {
                self.names.insert(v.id(), init.clone());
                iters.push(init);
                continue;
            }
            let ty = self.cpp_type_of(v.ty(), span)?;
            let n = self.ident(v.name());
            self.line(&format!("{ty} {n} = {init};"));
            self.names.insert(v.id(), n.clone());
            if matches!(v.ty(), Type::TaskId) {
                self.maybe_invalid.insert(v.id());
            }
            iters.push(n);
        }
        let iv = self.ident(f.var.name());
        self.names.insert(f.var.id(), iv.clone());
        self.line(&format!(
            "for (int64_t {iv} = {start}; {iv} < {stop}; {iv} += {step}) {{"
        ));
        self.depth += 1;
        let scoped = self.open_auto_scope();
        self.body(&f.body, reads)?;
        for ((n, y), (v, _)) in iters.iter().zip(&f.yields).zip(&f.iter_args) {
            let y = self.value_of(y, span)?;
            if &y != n {
                if v.ty().as_array().is_some() {
                    self.copy_array(n, &y, v.ty());
                } else {
                    self.line(&format!("{n} = {y};"));
                }
            }
        }
        self.close_auto_scope(scoped);
        self.depth -= 1;
        self.line("}");
        self.forget_changed_arrays(&live_before);
        for (r, n) in f.results.iter().zip(&iters) {
            if matches!(r.ty(), Type::TaskId) {
                self.maybe_invalid.insert(r.id());
            }
            self.alias(r, n.clone());
        }
        Ok(())
    }

    /// Emits an `if` with its merged results.
    fn if_stmt(
        &mut self,
        i: &IfStmt,
        reads: &HashMap<u64, usize>,
        span: &Span,
    ) -> Result<(), CompileError> {
        let c = self.scalar(&i.cond, span)?;
        let mut merged = Vec::new();
        for r in &i.results {
            merged.push(self.declare(r, span)?);
            if matches!(r.ty(), Type::TaskId) {
                self.maybe_invalid.insert(r.id());
            }
        }
        let live_before = self.array_live.clone();
        self.line(&format!("if ({c}) {{"));
        self.depth += 1;
        let scoped = self.open_auto_scope();
        self.body(&i.then_body, reads)?;
        self.merge_yields(&merged, &i.results, &i.then_yields, span)?;
        self.close_auto_scope(scoped);
        self.depth -= 1;
        let live_then = std::mem::replace(&mut self.array_live, live_before.clone());
        if !i.else_body.is_empty() || !i.else_yields.is_empty() {
            self.line("} else {");
            self.depth += 1;
            let scoped = self.open_auto_scope();
            self.body(&i.else_body, reads)?;
            self.merge_yields(&merged, &i.results, &i.else_yields, span)?;
            self.close_auto_scope(scoped);
            self.depth -= 1;
        }
        self.line("}");
        self.forget_changed_arrays(&live_before);
        self.array_live.retain(|k, v| live_then.get(k) == Some(v));
        for (n, r) in merged.iter().zip(&i.results) {
            if r.ty().as_array().is_some() {
                self.array_live.insert(n.clone(), r.id());
            }
        }
        Ok(())
    }

    /// Emits a scope: a manual scope's block (a `pl.at` scope must be outlined before).
    fn scope_stmt(
        &mut self,
        sc: &ScopeStmt,
        reads: &HashMap<u64, usize>,
        span: &Span,
    ) -> Result<(), CompileError> {
        match sc.kind {
            ScopeKind::Manual => {
                // Values bound inside and read after the block are declared before it.
                let inside = read_counts(&sc.body);
                let mut defs = Vec::new();
                walk_stmts(&sc.body, &mut |st| defs.extend(st.defs()));
                let inner: HashSet<u64> = defs.iter().map(Var::id).collect();
                for v in &defs {
                    let total = reads.get(&v.id()).copied().unwrap_or(0);
                    let here = inside.get(&v.id()).copied().unwrap_or(0);
                    if total > here && !self.aliases_outer(&sc.body, v, &inner) {
                        self.declare(v, span)?;
                    }
                }
                self.line("PTO2_SCOPE(PTO2ScopeMode::MANUAL) {");
                self.depth += 1;
                self.manual_depth += 1;
                let r = self.body(&sc.body, reads);
                self.manual_depth -= 1;
                r?;
                self.depth -= 1;
                self.line("}");
            }
            ScopeKind::At(_) => {
                return Err(perr(
                    span,
                    "a pl.at scope reached codegen".into(),
                    "Run the OutlineIncoreScopes pass before codegen.",
                ))
            }
        }
        Ok(())
    }
}

/// The array operand of an `array.*` call (a variable).
fn array_var(c: &Call, span: &Span) -> Result<Var, CompileError> {
    c.args
        .first()
        .and_then(Expr::as_var)
        .filter(|v| v.ty().as_array().is_some())
        .cloned()
        .ok_or_else(|| {
            perr(
                span,
                format!(
                    "{}: the array operand is not an array variable",
                    c.op_name().unwrap_or_default()
                ),
                "Pass an array made by pl.array.create(N, dtype).",
            )
        })
}

/// How many times each variable is read in `body`, `return` statements excluded (an
/// orchestration's outputs are written in place; its return emits nothing).
fn read_counts(body: &[Stmt]) -> HashMap<u64, usize> {
    let mut counts = HashMap::new();
    walk_stmts(body, &mut |s| {
        if matches!(s.kind, StmtKind::Return(_)) {
            return;
        }
        stmt_exprs(s, &mut |e| {
            e.for_each_var(&mut |v| *counts.entry(v.id()).or_insert(0) += 1)
        })
    });
    counts
}

/// The orchestration source of `f`.
pub fn emit_orchestration(
    f: &Function,
    kernels: &HashMap<String, KernelInfo>,
) -> Result<String, CompileError> {
    let mut g = Gen {
        kernels,
        out: String::new(),
        depth: 1,
        names: HashMap::new(),
        used: HashSet::new(),
        n_task: 0,
        n_alloc: 0,
        hoisted: HashSet::new(),
        maybe_invalid: HashSet::new(),
        array_live: HashMap::new(),
        manual_depth: 0,
    };
    for reserved in ["orch_args", "params", "alloc"] {
        g.used.insert(reserved.to_string());
    }
    let n_args = f.params.len();
    g.line("(void)orch_args;");
    g.line("// External tensors");
    let mut tensor_i = 0;
    let mut scalar_lines = Vec::new();
    let mut scalar_j = 0;
    for p in &f.params {
        match p.var.ty() {
            Type::Tensor(_) => {
                let n = g.ident(&format!("ext_{}", base_name(p.var.name())));
                g.line(&format!(
                    "ChipTensor {n} = orch_args.tensor({tensor_i}).ref();"
                ));
                g.names.insert(p.var.id(), n);
                tensor_i += 1;
            }
            Type::Scalar(d) => {
                let n = g.ident(p.var.name());
                let conv = g.ident(&format!("{n}_conv"));
                scalar_lines.push(format!(
                    "union {{ uint64_t u64; {} val; }} {conv};",
                    d.cpp_type()
                ));
                scalar_lines.push(format!("{conv}.u64 = orch_args.scalar({scalar_j});"));
                scalar_lines.push(format!("{} {n} = {conv}.val;", d.cpp_type()));
                g.names.insert(p.var.id(), n);
                scalar_j += 1;
            }
            other => {
                return Err(perr(
                    &f.span,
                    format!(
                        "orchestration parameter '{}' is a {}",
                        base_name(p.var.name()),
                        other.describe()
                    ),
                    "Orchestration parameters are tensors and scalars.",
                ))
            }
        }
    }
    if !scalar_lines.is_empty() {
        g.line("// Scalars");
        for l in scalar_lines {
            g.line(&l);
        }
    }
    g.line("");
    g.line("PTO2_SCOPE() {");
    g.depth += 1;
    let reads = read_counts(&f.body);
    g.body(&f.body, &reads)?;
    g.depth -= 1;
    g.line("}");

    let mut text = String::new();
    let _ = writeln!(text, "// Orchestration Function: {}", f.name);
    text.push_str("// Generated by PyPTO IR Compiler\n\n");
    text.push_str(
        "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n\n",
    );
    text.push_str("#include \"pto_orchestration_api.h\"\n\n");
    text.push_str("extern \"C\" {\n\n");
    text.push_str("__attribute__((visibility(\"default\")))\n");
    text.push_str(
        "PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {\n",
    );
    text.push_str("    (void)orch_args;\n    return PTO2OrchestrationConfig{\n");
    let _ = writeln!(text, "        .expected_arg_count = {n_args},");
    text.push_str("    };\n}\n\n");
    text.push_str("__attribute__((visibility(\"default\")))\n");
    text.push_str("void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {\n");
    text.push_str(&g.out);
    text.push_str("}\n\n}  // extern \"C\"\n");
    Ok(text)
}
