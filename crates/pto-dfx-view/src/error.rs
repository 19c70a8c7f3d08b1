//! The error type every viewer returns.
//!
//! A viewer fails when an input cannot be read at all (the [`ReadError`] of
//! the artifact's reader names the file and the key), when an output cannot
//! be written, or when its inputs do not fit together (a directory without
//! `deps.json`, an args-dump filter that matches nothing). Recoverable
//! damage is not an error: it comes back as [`Problem`](pto_dfx::Problem)s in
//! the tool's report, for the front end to print as warnings.

use std::path::PathBuf;

use pto_dfx::error::{ReadError, WriteError};

impl From<pto_dfx::compact::CompactError> for ToolError {
    fn from(e: pto_dfx::compact::CompactError) -> Self {
        Self::Read(e.into())
    }
}

/// Why a viewer could not do its job.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// An input artifact could not be read (the message names the file and key).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// An output could not be written (the message names the file).
    #[error(transparent)]
    Write(#[from] WriteError),
    /// A `kernel_config.py` given for kernel names could not be read.
    #[error("cannot read kernel names: {0}")]
    KernelConfig(#[from] pto_build_output::KernelConfigError),
    /// An input is readable but its content does not fit what the tool needs.
    #[error("{}: `{key}` {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The key (or record) at fault.
        key: String,
        /// What is wrong and what to do.
        reason: String,
    },
    /// A file the tool needs is not there.
    #[error("{} not found; {hint}", path.display())]
    Missing {
        /// The path that was looked for.
        path: PathBuf,
        /// How to produce it.
        hint: String,
    },
    /// A Graphviz layout engine was found but failed.
    #[error("graphviz `{engine}` failed: {message}; rerun with `--engine builtin` to use the built-in layout")]
    Graphviz {
        /// The engine binary.
        engine: String,
        /// Its exit status and stderr, or the parse failure of its output.
        message: String,
    },
    /// A selection (an args-dump filter) matched nothing; not a failure of
    /// the inputs, so the front end exits 1 rather than 2.
    #[error("no record matches {filter}; valid values: {valid}")]
    NoMatch {
        /// The filter, e.g. `--task 0x1`.
        filter: String,
        /// The values that would match something.
        valid: String,
    },
    /// A tensor could not be exported as `.npy`.
    #[error("cannot export {}: {source}", path.display())]
    Export {
        /// The target file.
        path: PathBuf,
        /// The `.npy` writer's error.
        #[source]
        source: pto_build_output::npy::NpyError,
    },
}

impl ToolError {
    pub(crate) fn invalid(path: &std::path::Path, key: &str, reason: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            key: key.to_string(),
            reason: reason.into(),
        }
    }
}
