//! The L3 (distributed) build of a program whose entry is a HOST function (`@pl.jit.host`,
//! `@pl.function(level=pl.Level.HOST)`): PyPTO's distributed layout
//! (`pypto-l3.md` §1), which the L3 runtime runs unchanged:
//!
//! ```text
//! <out>/distributed_meta.json          the HOST function's parameters and the DistributedConfig
//! <out>/orchestration/host_orch.py     the HOST function as Python over TaskArgs ([`emit_host`])
//! <out>/next_levels/<chip>/            one single-chip build per Orchestration it dispatches
//! ```
//!
//! A call of a SubWorker (`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)`,
//! declared with a `...` body) is `orch.submit_sub(...)`; the build gets
//! `sub_workers/<name>.py` (which refuses to run unbound) and `sub_workers/__required__.json`
//! listing the callbacks `prepare(callbacks={...})` must bind.
//!
//! Each chip program is the Orchestration and the functions it reaches, compiled by
//! [`super::compile`] (same passes, same codegen); the build keeps no `compiled_meta.json`
//! there, as PyPTO's. The HOST body may hold `pl.range` loops, `pld.world_size()`, window
//! buffers (`pld.alloc_window_buffer`, viewed per rank with `pld.window`), rank slices
//! `x[r]` and dispatches `chip(args..., device=r)`; anything else is refused, naming it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use pto_build_output::{BuildKind, CompiledMeta, DistributedConfig, DistributedMeta, ParamInfo};

use super::{compile, meta_direction, CompileOptions};
use crate::error::CompileError;
use crate::fsutil::{create_dir, write_file};
use crate::ir::{AttrValue, Call, Expr, Function, Program, Span, Stmt, StmtKind, Var};
use crate::passes::ssa::base_name;
use crate::types::{DataType, FunctionType, ParamDirection, Type};

/// How to compile an L3 build.
#[derive(Clone, Debug)]
pub struct DistributedOptions {
    /// Platform, backend and pass dumps of every chip program.
    pub compile: CompileOptions,
    /// The devices and runtime recorded in `distributed_meta.json`.
    pub config: DistributedConfig,
}

/// What an L3 compilation produced.
#[derive(Clone, Debug)]
pub struct DistributedReport {
    /// The build directory.
    pub output_dir: PathBuf,
    /// The HOST function.
    pub host: String,
    /// The chip programs (`next_levels/<name>`), in first-dispatch order.
    pub chips: Vec<String>,
    /// The HOST function's parameters (what `distributed_meta.json` records).
    pub params: Vec<ParamInfo>,
}

fn refuse(span: &Span, message: String, hint: &str) -> CompileError {
    CompileError::program("codegen", span, message, hint)
}

/// Compiles `program`, whose entry is the HOST function `host`, into the L3 build
/// directory `output_dir`.
pub fn compile_distributed(
    program: &Program,
    host: &str,
    output_dir: &Path,
    options: &DistributedOptions,
) -> Result<DistributedReport, CompileError> {
    let func = program.function(host).ok_or_else(|| {
        refuse(
            &Span::default(),
            format!("program {} has no HOST function '{host}'", program.name),
            "Mark the host orchestrator with @pl.jit.host.",
        )
    })?;
    create_dir(output_dir)?;
    let chips = chip_programs(program, func)?;
    for chip in &chips {
        let dir = output_dir.join("next_levels").join(chip);
        compile(sub_program(program, chip), &dir, &options.compile)?;
        let meta = dir.join(pto_build_output::compiled_meta::COMPILED_META_FILE);
        std::fs::remove_file(&meta).map_err(|source| CompileError::Io {
            action: "remove",
            path: meta,
            source,
        })?;
    }
    write_sub_workers(program, func, output_dir)?;
    let text = emit_host(program, func)?;
    write_file(
        &output_dir.join("orchestration").join("host_orch.py"),
        text.as_bytes(),
    )?;
    let params = host_params(func)?;
    let meta = DistributedMeta {
        program: CompiledMeta {
            params: params.clone(),
            num_return_types: func.return_types.len() as u64,
            platform: Some(options.compile.platform.clone()),
            backend_type: options.compile.backend_type,
        },
        distributed_config: options.config.clone(),
    };
    meta.write(output_dir)?;
    pto_build_output::drop_foreign_build_markers(output_dir, BuildKind::Distributed)
        .map_err(|e| CompileError::BuildOutput(e.into()))?;
    Ok(DistributedReport {
        output_dir: output_dir.to_path_buf(),
        host: host.to_string(),
        chips,
        params,
    })
}

/// Whether `f` is a SubWorker (a HOST callback run on a host sub-worker).
pub fn is_sub_worker(f: &Function) -> bool {
    f.attrs.str("role") == Some("SubWorker")
}

/// The SubWorkers the HOST body calls, in first-call order.
fn sub_workers<'a>(program: &'a Program, func: &Function) -> Vec<&'a Function> {
    let mut out: Vec<&Function> = Vec::new();
    crate::ir::walk_stmts(&func.body, &mut |s| {
        crate::ir::stmt_exprs(s, &mut |e| {
            let Some(f) = e
                .as_call()
                .and_then(Call::function_name)
                .and_then(|n| program.function(n))
            else {
                return;
            };
            if is_sub_worker(f) && !out.iter().any(|o| o.name == f.name) {
                out.push(f);
            }
        })
    });
    out
}

/// `sub_workers/<name>.py` per SubWorker and `sub_workers/__required__.json` (sorted
/// names of the runtime-bound ones). Only runtime-bound SubWorkers (a `...` body) exist
/// here: a body would have to run as host Python.
fn write_sub_workers(
    program: &Program,
    func: &Function,
    output_dir: &Path,
) -> Result<(), CompileError> {
    let subs = sub_workers(program, func);
    if subs.is_empty() {
        return Ok(());
    }
    let dir = output_dir.join("sub_workers");
    let mut required = Vec::new();
    for f in subs {
        if f.attrs.bool("requires_runtime_binding") != Some(true) {
            return Err(refuse(
                &f.span,
                format!("SubWorker '{}' has a body; only runtime-bound SubWorkers (a `...` body) are supported", f.name),
                "Declare it with a `...` body and bind it at run time: compiled.prepare(callbacks={'name': fn}).",
            ));
        }
        let text = format!(
            "def {n}(args):\n    raise RuntimeError(\"SubWorker '{n}' is a runtime-bound callback with no default implementation; supply it via prepare(callbacks={{'{n}': <fn>}}).\")\n",
            n = f.name
        );
        write_file(&dir.join(format!("{}.py", f.name)), text.as_bytes())?;
        required.push(format!("\"{}\"", f.name));
    }
    required.sort();
    write_file(
        &dir.join("__required__.json"),
        format!("[{}]", required.join(", ")).as_bytes(),
    )
}

fn host_params(func: &Function) -> Result<Vec<ParamInfo>, CompileError> {
    func.params
        .iter()
        .map(|p| match p.var.ty() {
            Type::Tensor(t) => Ok(ParamInfo {
                name: base_name(p.var.name()).to_string(),
                direction: meta_direction(p.direction),
                shape: Some(t.shape.clone()),
                dtype: t.dtype.pypto_str().to_string(),
            }),
            other => Err(refuse(
                &func.span,
                format!(
                    "parameter '{}' of HOST function '{}' is a {}; a one-shot L3 program takes host tensors",
                    p.var.name(),
                    func.name,
                    other.describe()
                ),
                "Pass scalars to the chip programs from the host body (the rank, constants).",
            )),
        })
        .collect()
}

/// The Orchestration functions the HOST body dispatches, in first-call order.
fn chip_programs(program: &Program, func: &Function) -> Result<Vec<String>, CompileError> {
    let mut out: Vec<String> = Vec::new();
    let mut bad: Option<CompileError> = None;
    crate::ir::walk_stmts(&func.body, &mut |s| {
        crate::ir::stmt_exprs(s, &mut |e| {
            let Expr::Call(c) = e else { return };
            let Some(name) = c.function_name() else {
                return;
            };
            if program.function(name).is_some_and(is_sub_worker) {
                return;
            }
            let ok = program
                .function(name)
                .is_some_and(|f| f.ftype == FunctionType::Orchestration);
            if !ok && bad.is_none() {
                bad = Some(refuse(
                    &c.span,
                    format!("HOST function '{}' calls '{name}', which is not a chip orchestration", func.name),
                    "A HOST function dispatches @pl.jit (Orchestration) functions: chip(args..., device=r).",
                ));
            }
            if ok && !out.iter().any(|n| n == name) {
                out.push(name.to_string());
            }
        })
    });
    match bad {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The chip program `name`: that Orchestration and every function it reaches, in program
/// order.
fn sub_program(program: &Program, name: &str) -> Program {
    let mut keep: Vec<String> = vec![name.to_string()];
    let mut i = 0;
    while i < keep.len() {
        if let Some(f) = program.function(&keep[i]) {
            crate::ir::walk_stmts(&f.body, &mut |s| {
                crate::ir::stmt_exprs(s, &mut |e| collect_callees(e, &mut keep))
            });
        }
        i += 1;
    }
    Program {
        name: name.to_string(),
        functions: program
            .functions
            .iter()
            .filter(|f| keep.contains(&f.name))
            .cloned()
            .collect(),
    }
}

fn collect_callees(e: &Expr, keep: &mut Vec<String>) {
    match e {
        Expr::Call(c) => {
            if let Some(n) = c.function_name() {
                if !keep.iter().any(|k| k == n) {
                    keep.push(n.to_string());
                }
            }
            c.args.iter().for_each(|a| collect_callees(a, keep));
        }
        Expr::List(items) => items.iter().for_each(|a| collect_callees(a, keep)),
        Expr::Binary { lhs, rhs, .. } => {
            collect_callees(lhs, keep);
            collect_callees(rhs, keep);
        }
        Expr::Unary { operand, .. } => collect_callees(operand, keep),
        Expr::GetItem { tuple, .. } => collect_callees(tuple, keep),
        _ => {}
    }
}

/// One window buffer of the HOST body's comm domain.
struct Buffer {
    name: String,
    nbytes: u64,
}

/// The Python text of `orchestration/host_orch.py` for the HOST function `func`.
pub fn emit_host(program: &Program, func: &Function) -> Result<String, CompileError> {
    let mut e = HostEmitter {
        program,
        func,
        out: String::new(),
        scalars: HashMap::new(),
        windows: HashMap::new(),
        buffers: Vec::new(),
        buffer_of: HashMap::new(),
        ctxs: std::collections::HashSet::new(),
        n_ta: 0,
    };
    e.collect_buffers(&func.body)?;
    let mut text = String::from(
        "import torch\n\
         from simpler.task_interface import CallConfig, CommBufferSpec, DataType, TaskArgs, TensorArgType\n\
         from pypto.runtime.tensor_arg import make_tensor_arg\n\
         from pypto.runtime.distributed_runner import _submit_chip\n\n",
    );
    text.push_str("def _alloc_intermediates(tensors, world_size=1):\n");
    if e.buffers.is_empty() {
        text.push_str("    pass\n");
    } else {
        text.push_str(&format!(
            "    tensors[\"{TOKEN}\"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() for _ in range(max(world_size, 1))]\n"
        ));
    }
    let _ = write!(
        text,
        "\n\ndef {}(orch, _args, config, *, tensors, callables, sub_ids, _keep, world_size, _domain_provider=None):\n",
        func.name
    );
    let depth = if e.buffers.is_empty() {
        1
    } else {
        text.push_str(&e.domain_header());
        2
    };
    e.block(&func.body, depth)?;
    if e.out.is_empty() {
        e.out.push_str(&"    ".repeat(depth));
        e.out.push_str("pass\n");
    }
    text.push_str(&e.out);
    let _ = write!(text, "\n\n{}._pypto_distributed_entry = True\n", func.name);
    Ok(text)
}

/// The ordering-token list of the HOST body's comm domain (`pypto-l3.md` §1.4).
const TOKEN: &str = "__comm_d0_ord";

struct HostEmitter<'a> {
    program: &'a Program,
    func: &'a Function,
    out: String,
    /// Scalar variables: their Python expression.
    scalars: HashMap<u64, String>,
    /// Window views: the buffer index.
    windows: HashMap<u64, usize>,
    buffers: Vec<Buffer>,
    /// Window buffer variables: their index in `buffers`.
    buffer_of: HashMap<u64, usize>,
    /// Comm contexts of window views (`dist.device_ctx`): the dispatch's rank's
    /// `device_ctx`.
    ctxs: std::collections::HashSet<u64>,
    n_ta: usize,
}

fn py_name(v: &Var) -> String {
    v.name().replace('.', "_")
}

fn align32(n: u64) -> u64 {
    n.div_ceil(32) * 32
}

impl HostEmitter<'_> {
    /// Window buffers are allocated once per run, before the first dispatch: only at the
    /// top level of the body.
    fn collect_buffers(&mut self, body: &[Stmt]) -> Result<(), CompileError> {
        for s in body {
            if let StmtKind::Assign {
                targets,
                value: Expr::Call(c),
            } = &s.kind
            {
                if c.op_name() == Some("dist.alloc_window_buffer") {
                    let Some(Type::Tensor(t)) = targets.first().map(|v| v.ty().clone()) else {
                        continue;
                    };
                    let bytes = t.shape.iter().product::<i64>() as u64 * t.dtype.size_bytes();
                    self.buffer_of.insert(targets[0].id(), self.buffers.len());
                    self.buffers.push(Buffer {
                        name: py_name(&targets[0]),
                        nbytes: bytes,
                    });
                }
            }
        }
        let mut nested: Option<Span> = None;
        let top: Vec<u64> = self.buffer_of.keys().copied().collect();
        crate::ir::walk_stmts(body, &mut |s| {
            if let StmtKind::Assign {
                targets,
                value: Expr::Call(c),
            } = &s.kind
            {
                let inner = c.op_name() == Some("dist.alloc_window_buffer")
                    && !targets.iter().any(|t| top.contains(&t.id()));
                if inner && nested.is_none() {
                    nested = Some(c.span.clone());
                }
            }
        });
        match nested {
            Some(span) => Err(refuse(
                &span,
                format!(
                    "pld.alloc_window_buffer inside a loop or branch of HOST function '{}'",
                    self.func.name
                ),
                "Allocate window buffers at the top of the HOST body, before the loop over ranks.",
            )),
            None => Ok(()),
        }
    }

    fn domain_header(&self) -> String {
        let sizes: Vec<String> = self
            .buffers
            .iter()
            .map(|b| format!("({})", align32(b.nbytes)))
            .collect();
        let mut s = String::from(
            "    with (_domain_provider or orch.allocate_domain)(\n        name=\"comm_d0\",\n        workers=[*range(world_size)],\n",
        );
        let _ = writeln!(s, "        window_size={},", sizes.join(" + "));
        s.push_str("        buffers=[\n");
        for b in &self.buffers {
            let _ = writeln!(
                s,
                "            CommBufferSpec(name=\"{}\", dtype=\"opaque\", count={}, nbytes={}),",
                b.name,
                b.nbytes,
                align32(b.nbytes)
            );
        }
        s.push_str("        ],\n    ) as __comm_d0:\n");
        s
    }

    fn line(&mut self, depth: usize, text: &str) {
        self.out.push_str(&"    ".repeat(depth));
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn block(&mut self, body: &[Stmt], depth: usize) -> Result<(), CompileError> {
        for s in body {
            self.stmt(s, depth)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) -> Result<(), CompileError> {
        match &s.kind {
            StmtKind::Assign { targets, value } => self.assign(targets, value, &s.span, depth),
            StmtKind::Eval(Expr::Call(c)) if c.function_name().is_some() => {
                self.dispatch(c, depth).map(|_| ())
            }
            StmtKind::Return(_) => Ok(()),
            StmtKind::For(f) => {
                if !f.iter_args.is_empty() {
                    return Err(refuse(
                        &s.span,
                        format!("a loop carrying values in HOST function '{}'", self.func.name),
                        "HOST loops dispatch per rank; carry nothing (write results into the tensors passed in).",
                    ));
                }
                let var = py_name(&f.var);
                self.scalars.insert(f.var.id(), var.clone());
                let header = format!(
                    "for {var} in range({}, {}, {}):",
                    self.scalar(&f.start, &s.span)?,
                    self.scalar(&f.stop, &s.span)?,
                    self.scalar(&f.step, &s.span)?
                );
                self.line(depth, &header);
                let before = self.out.len();
                self.block(&f.body, depth + 1)?;
                if self.out.len() == before {
                    self.line(depth + 1, "pass");
                }
                Ok(())
            }
            _ => Err(self.unsupported(&s.span, "this statement")),
        }
    }

    fn unsupported(&self, span: &Span, what: &str) -> CompileError {
        refuse(
            span,
            format!("{what} is not supported in HOST function '{}'", self.func.name),
            "A HOST body holds pl.range loops, pld.world_size(), pld.alloc_window_buffer / pld.window, rank slices x[r] and dispatches chip(args..., device=r).",
        )
    }

    fn assign(
        &mut self,
        targets: &[Var],
        value: &Expr,
        span: &Span,
        depth: usize,
    ) -> Result<(), CompileError> {
        let [target] = targets else {
            return Err(self.unsupported(span, "tuple unpacking"));
        };
        match value {
            Expr::Call(c) if c.function_name().is_some() => {
                let alias = self.dispatch(c, depth)?;
                if let Some(src) = alias {
                    let text = format!("tensors[\"{}\"] = tensors[\"{src}\"]", py_name(target));
                    self.line(depth, &text);
                }
                Ok(())
            }
            Expr::Call(c) => self.op(target, c, depth),
            Expr::Var(v) if self.windows.contains_key(&v.id()) => {
                let b = self.windows[&v.id()];
                self.windows.insert(target.id(), b);
                Ok(())
            }
            Expr::Var(v) if v.ty().is_tensor() => {
                let text = format!(
                    "tensors[\"{}\"] = tensors[\"{}\"]",
                    py_name(target),
                    py_name(v)
                );
                self.line(depth, &text);
                Ok(())
            }
            other => {
                let e = self.scalar(other, span)?;
                let name = py_name(target);
                self.line(depth, &format!("{name} = {e}"));
                self.scalars.insert(target.id(), name);
                Ok(())
            }
        }
    }

    fn op(&mut self, target: &Var, c: &Call, depth: usize) -> Result<(), CompileError> {
        match c.op_name().unwrap_or("") {
            "dist.world_size" => {
                self.scalars.insert(target.id(), "world_size".into());
                Ok(())
            }
            "dist.alloc_window_buffer" => Ok(()),
            "dist.device_ctx" => {
                self.ctxs.insert(target.id());
                Ok(())
            }
            "dist.window" => {
                let b = c.args[0]
                    .as_var()
                    .and_then(|v| self.buffer_of.get(&v.id()).copied());
                let Some(b) = b else {
                    return Err(refuse(
                        &c.span,
                        "pld.window takes a buffer of pld.alloc_window_buffer".into(),
                        "Write pld.window(buf, shape, dtype=...) with buf = pld.alloc_window_buffer(...).",
                    ));
                };
                self.windows.insert(target.id(), b);
                Ok(())
            }
            "dist.slice" | "tensor.slice" => {
                let text = self.slice(target, c)?;
                self.line(depth, &text);
                Ok(())
            }
            other => Err(self.unsupported(&c.span, &format!("the operation '{other}'"))),
        }
    }

    /// `tensors["t"] = tensors["x"][r, 0:8, 0:8]`: a dropped axis is its index, an
    /// offset-0 axis `0:n`, any other `o:o + n`.
    fn slice(&self, target: &Var, c: &Call) -> Result<String, CompileError> {
        let (Some(src), Some(Expr::List(offsets))) = (c.args[0].as_var(), c.args.get(1)) else {
            return Err(self.unsupported(&c.span, "this slice"));
        };
        let shape = c.kwargs.ints("shape").unwrap_or(&[]);
        let drop = c.kwargs.ints("drop").unwrap_or(&[]);
        let mut parts = Vec::new();
        for (axis, off) in offsets.iter().enumerate() {
            let o = self.scalar(off, &c.span)?;
            let n = shape.get(axis).copied().unwrap_or(1);
            parts.push(if drop.contains(&(axis as i64)) {
                o
            } else if off.as_const_int() == Some(0) {
                format!("0:{n}")
            } else {
                format!("{o}:{o} + {n}")
            });
        }
        Ok(format!(
            "tensors[\"{}\"] = tensors[\"{}\"][{}]",
            py_name(target),
            py_name(src),
            parts.join(", ")
        ))
    }

    /// A Python scalar expression.
    fn scalar(&self, e: &Expr, span: &Span) -> Result<String, CompileError> {
        Ok(match e {
            Expr::Int { value, .. } => value.to_string(),
            Expr::Float { value, .. } => format!("{value:?}"),
            Expr::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Expr::Var(v) => match self.scalars.get(&v.id()) {
                Some(s) => s.clone(),
                None => return Err(self.unsupported(span, &format!("the value '{}'", v.name()))),
            },
            Expr::Binary { op, lhs, rhs, .. } => {
                let (a, b) = (self.scalar(lhs, span)?, self.scalar(rhs, span)?);
                match op.symbol() {
                    f @ ("min" | "max") => format!("{f}({a}, {b})"),
                    s => format!("({a} {s} {b})"),
                }
            }
            _ => return Err(self.unsupported(span, "this expression")),
        })
    }

    /// One chip dispatch (`pypto-l3.md` §1.3); returns the tensor a result aliases.
    fn dispatch(&mut self, c: &Call, depth: usize) -> Result<Option<String>, CompileError> {
        let name = c.function_name().unwrap_or_default();
        let callee = self.program.function(name).ok_or_else(|| {
            refuse(
                &c.span,
                format!("no function '{name}'"),
                "Dispatch a @pl.jit function.",
            )
        })?;
        let device = match c.attrs.get("device") {
            None => None,
            Some(AttrValue::Int(d)) => Some(d.to_string()),
            Some(AttrValue::Var(v)) => Some(self.scalar(&Expr::Var(v.clone()), &c.span)?),
            Some(_) => return Err(self.unsupported(&c.span, "this device= value")),
        };
        let ta = format!("_ta_{}", self.n_ta);
        self.n_ta += 1;
        let mut lines = vec![format!("{ta} = TaskArgs()")];
        let mut scalars = Vec::new();
        let mut alias = None;
        let mut uses_window = false;
        for (arg, param) in c.args.iter().zip(&callee.params) {
            let tag = match param.direction {
                ParamDirection::In => "INPUT",
                ParamDirection::Out => "OUTPUT_EXISTING",
                ParamDirection::InOut => "INOUT",
            };
            let v = arg.as_var();
            if let Some(b) = v.and_then(|v| self.windows.get(&v.id()).copied()) {
                let Some(dev) = &device else {
                    return Err(refuse(
                        &c.span,
                        format!("dispatch of '{name}' passes a window but names no rank"),
                        "Pin it to a rank: chip(args..., device=r).",
                    ));
                };
                let Type::Tensor(t) = param.var.ty() else {
                    return Err(self.unsupported(&c.span, "a window passed as a non-tensor"));
                };
                uses_window = true;
                lines.push(format!(
                    "{ta}.add_tensor(__comm_d0[{dev}].buffers[\"{}\"].tensor(shapes=({}), dtype={}), TensorArgType.INOUT)",
                    self.buffers[b].name,
                    shape_tuple(&t.shape),
                    simpler_dtype(t.dtype)
                ));
            } else if let (Some(v), true) = (v, arg.ty().is_tensor()) {
                if param.direction != ParamDirection::In && alias.is_none() {
                    alias = Some(py_name(v));
                }
                lines.push(format!(
                    "{ta}.add_tensor(make_tensor_arg(orch._worker, tensors[\"{}\"]), TensorArgType.{tag})",
                    py_name(v)
                ));
            } else if v.is_some_and(|v| self.ctxs.contains(&v.id())) {
                let Some(dev) = &device else {
                    return Err(refuse(
                        &c.span,
                        format!("dispatch of '{name}' passes a window but names no rank"),
                        "Pin it to a rank: chip(args..., device=r).",
                    ));
                };
                scalars.push(format!("{ta}.add_scalar(__comm_d0[{dev}].device_ctx)"));
            } else {
                scalars.push(format!("{ta}.add_scalar({})", self.scalar(arg, &c.span)?));
            }
        }
        if let (true, Some(dev)) = (uses_window, &device) {
            lines.push(format!(
                "{ta}.add_tensor(make_tensor_arg(orch._worker, tensors[\"{TOKEN}\"][{dev}]), TensorArgType.INOUT)"
            ));
        }
        lines.extend(scalars);
        if is_sub_worker(callee) {
            lines.push(format!("orch.submit_sub(sub_ids[\"{name}\"], {ta})"));
            for l in lines {
                self.line(depth, &l);
            }
            return Ok(alias);
        }
        lines.push(format!("_keep.append({ta})"));
        lines.push(format!(
            "_submit_chip(orch, callables[\"{name}\"], {ta}, config, {})",
            device.as_deref().unwrap_or("None")
        ));
        for l in lines {
            self.line(depth, &l);
        }
        Ok(alias)
    }
}

fn shape_tuple(shape: &[i64]) -> String {
    let parts: Vec<String> = shape.iter().map(i64::to_string).collect();
    if parts.len() == 1 {
        format!("{},", parts[0])
    } else {
        parts.join(", ")
    }
}

/// Simpler's `DataType.<NAME>` of `d`.
fn simpler_dtype(d: DataType) -> String {
    d.runtime_enum()
        .map(|e| e.replace("::", "."))
        .unwrap_or_else(|| "DataType.INT64".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Attrs, ForStmt, Param};

    fn op(name: &str, args: Vec<Expr>, kwargs: Attrs, ty: Type) -> Expr {
        Expr::Call(Box::new(Call {
            callee: crate::ir::Callee::Op(name.into()),
            args,
            kwargs,
            attrs: Attrs::new(),
            ty,
            span: Span::default(),
            submit: None,
        }))
    }

    fn assign(v: &Var, value: Expr) -> Stmt {
        Stmt::new(
            StmtKind::Assign {
                targets: vec![v.clone()],
                value,
            },
            Span::default(),
        )
    }

    fn function(name: &str, ftype: FunctionType, params: Vec<Param>, body: Vec<Stmt>) -> Function {
        Function {
            name: name.into(),
            ftype,
            params,
            return_types: vec![],
            body,
            span: Span::default(),
            attrs: Attrs::new(),
        }
    }

    /// `for r in range(world_size): chip(x[r], win, device=r)` with one window buffer.
    fn program(device: bool) -> Program {
        let t = |s: Vec<i64>| Type::tensor(s, DataType::Fp32);
        let param = |n: &str, ty: Type, d| Param {
            var: Var::new(n, ty),
            direction: d,
        };
        let chip = function(
            "chip",
            FunctionType::Orchestration,
            vec![
                param("a", t(vec![4, 8]), ParamDirection::Out),
                param("w", t(vec![4, 8]), ParamDirection::InOut),
            ],
            vec![],
        );
        let x = Var::new("x", t(vec![2, 4, 8]));
        let (ws, r) = (
            Var::new("n", Type::Scalar(DataType::Index)),
            Var::new("r", Type::Scalar(DataType::Index)),
        );
        let (buf, win, xr) = (
            Var::new("buf", t(vec![4, 8])),
            Var::new("win", t(vec![4, 8])),
            Var::new("xr", t(vec![4, 8])),
        );
        let mut shape = Attrs::new();
        shape.set("shape", AttrValue::Ints(vec![4, 8]));
        shape.set("dtype", AttrValue::DType(DataType::Fp32));
        let mut slice = Attrs::new();
        slice.set("shape", AttrValue::Ints(vec![1, 4, 8]));
        slice.set("drop", AttrValue::Ints(vec![0]));
        let mut attrs = Attrs::new();
        if device {
            attrs.set("device", AttrValue::Var(r.clone()));
        }
        let call = Expr::Call(Box::new(Call {
            callee: crate::ir::Callee::Function("chip".into()),
            args: vec![Expr::Var(xr.clone()), Expr::Var(win.clone())],
            kwargs: Attrs::new(),
            attrs,
            ty: Type::Unit,
            span: Span::new("p.py", 9, 5),
            submit: None,
        }));
        let offsets = Expr::List(vec![Expr::Var(r.clone()), Expr::index(0), Expr::index(0)]);
        let body = vec![
            assign(
                &win,
                op(
                    "dist.window",
                    vec![Expr::Var(buf.clone())],
                    shape.clone(),
                    t(vec![4, 8]),
                ),
            ),
            assign(
                &xr,
                op(
                    "dist.slice",
                    vec![Expr::Var(x.clone()), offsets],
                    slice,
                    t(vec![4, 8]),
                ),
            ),
            Stmt::new(StmtKind::Eval(call), Span::default()),
        ];
        let host_body = vec![
            assign(
                &buf,
                op("dist.alloc_window_buffer", vec![], shape, t(vec![4, 8])),
            ),
            assign(
                &ws,
                op(
                    "dist.world_size",
                    vec![],
                    Attrs::new(),
                    Type::Scalar(DataType::Index),
                ),
            ),
            Stmt::new(
                StmtKind::For(Box::new(ForStmt {
                    var: r,
                    start: Expr::index(0),
                    stop: Expr::Var(ws),
                    step: Expr::index(1),
                    iter_args: vec![],
                    body,
                    yields: vec![],
                    results: vec![],
                })),
                Span::default(),
            ),
        ];
        let host = function(
            "host",
            FunctionType::Opaque,
            vec![param("x", x.ty().clone(), ParamDirection::InOut)],
            host_body,
        );
        Program {
            name: "p".into(),
            functions: vec![chip, host],
        }
    }

    #[test]
    fn the_host_body_becomes_a_domain_a_loop_and_one_dispatch_per_rank() {
        let p = program(true);
        let text = emit_host(&p, p.function("host").unwrap()).unwrap();
        for want in [
            "    tensors[\"__comm_d0_ord\"] = [torch.zeros((1,), dtype=torch.int32).share_memory_() for _ in range(max(world_size, 1))]\n",
            "        window_size=(128),\n",
            "            CommBufferSpec(name=\"buf\", dtype=\"opaque\", count=128, nbytes=128),\n",
            "    ) as __comm_d0:\n        for r in range(0, world_size, 1):\n",
            "            tensors[\"xr\"] = tensors[\"x\"][r, 0:4, 0:8]\n",
            "_ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"xr\"]), TensorArgType.OUTPUT_EXISTING)\n",
            "_ta_0.add_tensor(__comm_d0[r].buffers[\"buf\"].tensor(shapes=(4, 8), dtype=DataType.FLOAT32), TensorArgType.INOUT)\n",
            "_ta_0.add_tensor(make_tensor_arg(orch._worker, tensors[\"__comm_d0_ord\"][r]), TensorArgType.INOUT)\n",
            "            _submit_chip(orch, callables[\"chip\"], _ta_0, config, r)\n",
            "\n\nhost._pypto_distributed_entry = True\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
    }

    #[test]
    fn a_window_dispatch_without_a_rank_is_refused_where_it_is_written() {
        let p = program(false);
        let e = emit_host(&p, p.function("host").unwrap()).unwrap_err();
        assert_eq!(e.span().map(|s| s.line), Some(9));
        assert!(
            e.to_string().contains("passes a window but names no rank"),
            "{e}"
        );
        assert!(e.to_string().contains("device=r"), "{e}");
    }
}
