//! The error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong while discovering the toolchain or compiling.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolchainError {
    /// Neither `$CXX` nor a C++ compiler on `PATH` was found.
    #[error("no C++ compiler found: install g++ (apt-get install g++) or set CXX")]
    NoCompiler,

    /// The compiler process could not be started.
    #[error("failed to run C++ compiler `{}`: {source}", program.display())]
    Spawn {
        /// The compiler that was invoked.
        program: PathBuf,
        /// Why spawning failed.
        source: std::io::Error,
    },

    /// `<compiler> --version` ran but failed, so the compiler cannot be identified.
    #[error("`{} --version` failed ({status}):\n{stderr}", program.display())]
    CompilerIdentity {
        /// The compiler that was invoked.
        program: PathBuf,
        /// Its exit status, as text.
        status: String,
        /// Its standard error.
        stderr: String,
    },

    /// A source file given to [`crate::Toolchain::compile`] could not be read.
    #[error("cannot read source file `{}`: {source}", path.display())]
    Source {
        /// The source file, as given in the [`crate::CompileUnit`].
        path: PathBuf,
        /// The underlying I/O error (e.g. not found).
        source: std::io::Error,
    },

    /// The compiler rejected a source file. Display shows the compiler's own
    /// diagnostics verbatim.
    #[error("failed to compile `{}`:\n{stderr}", source_file.display())]
    Compile {
        /// The source file that failed to compile.
        source_file: PathBuf,
        /// The compiler's standard error, unmodified.
        stderr: String,
    },

    /// A file-system operation on the cache (or the materialized headers) failed.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        /// What was being attempted, e.g. "cannot create directory".
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },

    /// The per-build-directory binary cache (stamp, lock, installed binaries).
    #[error(transparent)]
    BinaryCache(#[from] crate::binary_cache::BinaryCacheError),
}

impl ToolchainError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        ToolchainError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}

/// Convenience alias for results of this crate.
pub type Result<T, E = ToolchainError> = std::result::Result<T, E>;
