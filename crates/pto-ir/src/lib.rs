//! The DSL's compiler (design decision D14): the Python front end (`pypto.language`)
//! parses a `@pl.program` class from its AST and builds this crate's IR through the native
//! module; this crate runs the passes and writes a build directory.
//!
//! - [`types`], [`ir`]: the IR — [`Program`]s of [`Function`]s whose bodies are
//!   [`Stmt`]s over [`Expr`]s; variables ([`Var`]) are identities, attributes
//!   ([`Attrs`]) are ordered and typed.
//! - [`ops`]: the builtin operations and their type rules ([`dist`]: the distributed ones).
//! - [`printer`]: the IR as DSL source (`pl.parse` reads it back);
//!   [`equal`]: structural equality up to variable renaming.
//! - [`passes`]: `InlineFunctions`, `ConvertToSSA`, `OutlineIncoreScopes`,
//!   `ResolveKernelCoreTypes`, `DeriveCallDirections`, each runnable on its own, and the
//!   pipeline with its `passes_dump/` snapshots.
//! - [`codegen`]: the orchestration C++, each kernel as `.pto` through our ptoas into
//!   PyPTO's wrapper, `kernel_config.py` and `compiled_meta.json`.
//! - [`interp`]: a reference interpreter of the IR over host tensors (what
//!   `CompiledProgram.validate_ir()` runs on each `passes_dump/` snapshot).
//!
//! A key design decision: dump marks (`dump_vars`) are Var-valued attributes, so they are
//! tracked by identity through every rewrite — SSA renaming, inlining, outlining — the
//! way operands are, never by name; a rebound or transformed value is a different
//! variable and is not covered by a tag on the old one.
#![deny(missing_docs)]

pub mod codegen;
pub mod dist;
pub mod equal;
pub mod error;
mod fsutil;
pub mod interp;
pub mod ir;
pub mod ops;
pub mod passes;
pub mod printer;
pub mod types;

pub use codegen::host::{compile_distributed, DistributedOptions, DistributedReport};
pub use codegen::{compile, CompileOptions, CompileReport, CompileTimings};
pub use error::CompileError;
pub use ir::{
    AttrValue, Attrs, BinOp, Call, Callee, Expr, ForStmt, Function, IfStmt, Param, Program,
    ScopeKind, ScopeStmt, Span, Stmt, StmtKind, UnOp, Var,
};
pub use types::{DataType, FunctionType, Level, MemorySpace, ParamDirection, Type};
