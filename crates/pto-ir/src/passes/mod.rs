//! The pass pipeline, each pass a function `Program -> Result<Program, CompileError>`
//! runnable on its own:
//!
//! | # | pass | what it does |
//! |---|---|---|
//! | 1 | [`inline`] `InlineFunctions` | splices `Inline` functions, transfers call-site dump tags |
//! | 2 | [`ssa`] `ConvertToSSA` | one variable per definition, loop-carried values, merged branches |
//! | 3 | [`outline`] `OutlineIncoreScopes` | mixed scopes split in two and tiles handed between scopes ([`mixed`]); `pl.at` scopes → InCore kernels + dispatches, scope dumps → dispatch dumps |
//! | 4 | [`directions`] `ResolveKernelCoreTypes` | InCore → AIC / AIV |
//! | 5 | [`directions`] `DeriveCallDirections` | `arg_directions` on every dispatch |
//!
//! With a dump directory, the program is printed before the passes
//! (`passes_dump/00_frontend.py`) and after each (`NN_after_<Pass>.py`), as PyPTO's
//! `passes_dump/` does; each file reads back with `pl.parse`.

pub mod clone;
pub mod directions;
pub mod inline;
pub mod mixed;
pub mod outline;
pub mod ssa;

use std::path::Path;

use crate::error::CompileError;
use crate::ir::Program;
use crate::printer::print_program;

/// A pass of the pipeline.
pub type PassFn = fn(Program) -> Result<Program, CompileError>;

/// The pipeline, in order: `(name, pass)`.
pub const PIPELINE: &[(&str, PassFn)] = &[
    ("InlineFunctions", inline::run),
    ("ConvertToSSA", ssa::run),
    ("OutlineIncoreScopes", outline::run),
    ("ResolveKernelCoreTypes", directions::resolve_core_types),
    ("DeriveCallDirections", directions::derive_call_directions),
];

/// The pass named `name`.
pub fn pass(name: &str) -> Option<PassFn> {
    PIPELINE.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// The `passes_dump/` file name of stage `index` (0 = before the passes).
pub fn dump_file_name(index: usize) -> String {
    match index {
        0 => "00_frontend.py".to_string(),
        i => format!("{i:02}_after_{}.py", PIPELINE[i - 1].0),
    }
}

/// Runs the whole pipeline; with `dump_dir`, writes every snapshot there.
pub fn run_pipeline(program: Program, dump_dir: Option<&Path>) -> Result<Program, CompileError> {
    run_pipeline_with(program, dump_dir, &mut |_, _| {})
}

/// As [`run_pipeline`], calling `observe(pass name, elapsed)` after each pass.
pub fn run_pipeline_with(
    program: Program,
    dump_dir: Option<&Path>,
    observe: &mut dyn FnMut(&str, std::time::Duration),
) -> Result<Program, CompileError> {
    if let Some(dir) = dump_dir {
        crate::fsutil::create_dir(dir)?;
        write_snapshot(dir, 0, &program)?;
    }
    let mut program = program;
    for (i, (name, pass)) in PIPELINE.iter().enumerate() {
        let t0 = std::time::Instant::now();
        program = pass(program)?;
        observe(name, t0.elapsed());
        tracing::debug!(pass = name, "pass done");
        if let Some(dir) = dump_dir {
            write_snapshot(dir, i + 1, &program)?;
        }
    }
    Ok(program)
}

fn write_snapshot(dir: &Path, index: usize, program: &Program) -> Result<(), CompileError> {
    let name = dump_file_name(index);
    let stage = if index == 0 {
        "frontend".to_string()
    } else {
        format!("after {}", PIPELINE[index - 1].0)
    };
    let text = print_program(
        program,
        &format!(
            "IR of program {} {stage} (pypto.ir passes_dump)",
            program.name
        ),
    );
    crate::fsutil::write_file(&dir.join(name), text.as_bytes())
}
