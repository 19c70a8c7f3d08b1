//! `ResolveKernelCoreTypes` and `DeriveCallDirections`.
//!
//! `ResolveKernelCoreTypes` gives every `InCore` kernel its core: `AIC` when its tiles live
//! in cube memories (Mat, Left, Right, Acc, Bias), `AIV` when they are vector tiles; and
//! checks that an `AIC` / `AIV` kernel holds only tiles of its core. A kernel that needs
//! both is a `Group` (mixed kernel), which codegen does not support yet.
//!
//! `DeriveCallDirections` stamps every dispatch of a kernel with `arg_directions`, one per
//! argument: the callee parameter's direction (`In`, `Out`, `InOut`) for tensors and
//! `Scalar` for scalars — what becomes `add_input` / `add_output` / `add_inout` /
//! `add_scalar` in the orchestration. It checks arity (a `pl.submit` may omit trailing
//! `Out` parameters: the runtime allocates them) and argument types.

use std::collections::HashMap;

use crate::error::CompileError;
use crate::ir::{
    walk_stmts, AttrValue, Call, Expr, Function, Program, Span, Stmt, StmtKind, ATTR_ARG_DIRECTIONS,
};
use crate::types::{FunctionType, MemorySpace, ParamDirection, Type};

/// Runs `ResolveKernelCoreTypes`.
pub fn resolve_core_types(mut program: Program) -> Result<Program, CompileError> {
    const STAGE: &str = "ResolveKernelCoreTypes";
    for f in program.functions.iter_mut() {
        if !f.ftype.is_kernel() {
            continue;
        }
        let mut cube: Option<(Span, MemorySpace)> = None;
        let mut vector: Option<Span> = None;
        walk_stmts(&f.body, &mut |s| {
            for v in s.defs() {
                if let Type::Tile(t) = v.ty() {
                    if t.memory.is_cube() {
                        cube.get_or_insert((s.span.clone(), t.memory));
                    } else {
                        vector.get_or_insert(s.span.clone());
                    }
                }
            }
        });
        let needs = match (&cube, &vector) {
            (Some(_), Some(_)) => Some(FunctionType::Group),
            (Some(_), None) => Some(FunctionType::Aic),
            (None, Some(_)) => Some(FunctionType::Aiv),
            (None, None) => None,
        };
        match (f.ftype, needs) {
            (FunctionType::InCore, Some(FunctionType::Group)) | (FunctionType::Group, _) => {
                return Err(CompileError::program(
                    STAGE,
                    &f.span,
                    format!(
                        "kernel '{}' needs both a cube and a vector core (a Group / mixed kernel), which codegen does not support yet",
                        f.name
                    ),
                    "Split it into an AIC kernel (matmul) and an AIV kernel (vector ops) that exchange a tensor.",
                ));
            }
            (FunctionType::InCore, Some(t)) => f.ftype = t,
            (FunctionType::InCore, None) => f.ftype = FunctionType::Aiv,
            (FunctionType::Aiv, Some(FunctionType::Aic | FunctionType::Group)) => {
                let (span, mem) = cube.clone().unwrap_or_default_span();
                return Err(CompileError::program(
                    STAGE,
                    &span,
                    format!(
                        "AIV kernel '{}' holds a pl.Mem.{} tile, which lives on the cube core",
                        f.name,
                        mem.name()
                    ),
                    "Declare it type=pl.FunctionType.AIC (or InCore to infer it), or keep AIV kernels to pl.Mem.Vec tiles.",
                ));
            }
            (FunctionType::Aic, Some(FunctionType::Aiv | FunctionType::Group)) => {
                let span = vector.clone().unwrap_or_default();
                return Err(CompileError::program(
                    STAGE,
                    &span,
                    format!(
                        "AIC kernel '{}' holds a pl.Mem.Vec tile, which lives on a vector core",
                        f.name
                    ),
                    "Declare it type=pl.FunctionType.AIV (or InCore to infer it), or move the vector work into an AIV kernel.",
                ));
            }
            _ => {}
        }
    }
    Ok(program)
}

trait OrDefaultSpan {
    fn unwrap_or_default_span(self) -> (Span, MemorySpace);
}

impl OrDefaultSpan for Option<(Span, MemorySpace)> {
    fn unwrap_or_default_span(self) -> (Span, MemorySpace) {
        self.unwrap_or((Span::default(), MemorySpace::Mat))
    }
}

/// Runs `DeriveCallDirections`.
pub fn derive_call_directions(mut program: Program) -> Result<Program, CompileError> {
    let signatures: HashMap<String, Function> = program
        .functions
        .iter()
        .map(|f| (f.name.clone(), f.clone()))
        .collect();
    for f in program.functions.iter_mut() {
        if f.ftype.is_kernel() {
            let mut bad = None;
            walk_stmts(&f.body, &mut |s| {
                crate::ir::stmt_exprs(s, &mut |e| {
                    e.for_each_call(&mut |c| {
                        if bad.is_none() && c.function_name().is_some() {
                            bad = Some(c.span.clone());
                        }
                    })
                })
            });
            if let Some(span) = bad {
                return Err(CompileError::program(
                    "DeriveCallDirections",
                    &span,
                    format!("kernel '{}' calls another function", f.name),
                    "Kernels cannot call functions; mark the helper type=pl.FunctionType.Inline so it is spliced in.",
                ));
            }
            continue;
        }
        stamp_body(&mut f.body, &signatures)?;
    }
    Ok(program)
}

fn stamp_body(body: &mut [Stmt], sigs: &HashMap<String, Function>) -> Result<(), CompileError> {
    for s in body.iter_mut() {
        match &mut s.kind {
            StmtKind::Assign { value, .. } | StmtKind::Eval(value) => stamp_expr(value, sigs)?,
            StmtKind::Return(vs) => {
                for v in vs {
                    stamp_expr(v, sigs)?;
                }
            }
            StmtKind::For(f) => stamp_body(&mut f.body, sigs)?,
            StmtKind::If(i) => {
                stamp_body(&mut i.then_body, sigs)?;
                stamp_body(&mut i.else_body, sigs)?;
            }
            StmtKind::Scope(sc) => stamp_body(&mut sc.body, sigs)?,
        }
    }
    Ok(())
}

fn stamp_expr(e: &mut Expr, sigs: &HashMap<String, Function>) -> Result<(), CompileError> {
    let mut res = Ok(());
    e.for_each_call_mut(&mut |c| {
        if res.is_ok() {
            res = stamp_call(c, sigs);
        }
    });
    res
}

fn stamp_call(c: &mut Call, sigs: &HashMap<String, Function>) -> Result<(), CompileError> {
    const STAGE: &str = "DeriveCallDirections";
    let Some(name) = c.function_name() else {
        return Ok(());
    };
    let Some(callee) = sigs.get(name) else {
        return Err(CompileError::program(
            STAGE,
            &c.span,
            format!("call of unknown function '{name}'"),
            "Call a @pl.function of the same program (self.name(...)).",
        ));
    };
    if !callee.ftype.is_kernel() {
        return Err(CompileError::program(
            STAGE,
            &c.span,
            format!(
                "'{name}' is a {} function; an orchestration can call only kernels (InCore, AIC, AIV)",
                callee.ftype.name()
            ),
            "Give the callee type=pl.FunctionType.AIV / AIC / InCore, or Inline to splice it in.",
        ));
    }
    let n_args = c.args.len();
    let n_params = callee.params.len();
    let omitted_ok = c.submit.is_some()
        && n_args < n_params
        && callee.params[n_args..]
            .iter()
            .all(|p| p.direction == ParamDirection::Out);
    if n_args != n_params && !omitted_ok {
        return Err(CompileError::program(
            STAGE,
            &c.span,
            format!("kernel '{name}' takes {n_params} argument(s), got {n_args}"),
            "Pass one argument per kernel parameter (pl.submit may leave out trailing pl.Out parameters; the runtime allocates them).",
        ));
    }
    let mut dirs = Vec::with_capacity(n_args);
    for (i, (a, p)) in c.args.iter().zip(&callee.params).enumerate() {
        let at = a.ty();
        let pt = p.var.ty();
        let ok = match (&at, pt) {
            (Type::Scalar(_), Type::Scalar(_)) => true,
            // A dimension known only at run time fits any size (the runtime view checks).
            (Type::Tensor(a), Type::Tensor(p)) => p.admits(a),
            (a, p) => a == p,
        };
        if !ok {
            return Err(CompileError::program(
                STAGE,
                &c.span,
                format!(
                    "argument {} of '{name}' is {}, parameter '{}' is {}",
                    i + 1,
                    at.describe(),
                    super::ssa::base_name(p.var.name()),
                    pt.describe()
                ),
                "Pass a value of the parameter's type (slice or reshape tensors first).",
            ));
        }
        dirs.push(match pt {
            Type::Scalar(_) => "Scalar".to_string(),
            _ => p.direction.name().to_string(),
        });
    }
    c.attrs.set(ATTR_ARG_DIRECTIONS, AttrValue::Strs(dirs));
    Ok(())
}
