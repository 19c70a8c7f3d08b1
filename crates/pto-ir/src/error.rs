//! The errors of compilation: a program the passes or codegen cannot take (located at the
//! DSL source, with a hint), a generated kernel ptoas refused (a compiler bug, reported with
//! the `.pto` location), and file-system failures while writing the build directory.

use std::path::PathBuf;

use crate::ir::Span;

/// Why a program did not compile.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompileError {
    /// The program is not accepted by a pass or by codegen (a user error).
    #[error("{span}: {message} (in {stage}). Hint: {hint}")]
    Program {
        /// The pass or codegen stage that refused it (`InlineFunctions`, `codegen`, ...).
        stage: &'static str,
        /// What is wrong.
        message: String,
        /// How to fix it.
        hint: String,
        /// Where in the DSL source.
        span: Span,
    },
    /// The bundled ptoas refused a kernel this compiler generated: a bug of the compiler.
    #[error("internal error: ptoas refused the generated kernel {}: {message}; please report it with the program (the .pto is kept at that path)", pto.display())]
    Ptoas {
        /// The `.pto` file written.
        pto: PathBuf,
        /// ptoas's error with its location and excerpt.
        message: String,
    },
    /// Writing a file of the build directory failed.
    #[error("cannot {action} {}: {source}; check that the output directory is writable", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A build-directory writer of `pto-build-output` failed.
    #[error(transparent)]
    BuildOutput(#[from] pto_build_output::BuildOutputError),
}

impl CompileError {
    /// A program error of `stage` at `span`.
    pub fn program(stage: &'static str, span: &Span, message: String, hint: &str) -> CompileError {
        CompileError::Program {
            stage,
            message,
            hint: hint.to_string(),
            span: span.clone(),
        }
    }

    /// The source location, for a program error.
    pub fn span(&self) -> Option<&Span> {
        match self {
            CompileError::Program { span, .. } => Some(span),
            _ => None,
        }
    }
}

impl From<pto_build_output::WriteError> for CompileError {
    fn from(e: pto_build_output::WriteError) -> Self {
        CompileError::BuildOutput(e.into())
    }
}

impl From<pto_build_output::KernelConfigError> for CompileError {
    fn from(e: pto_build_output::KernelConfigError) -> Self {
        CompileError::BuildOutput(e.into())
    }
}
