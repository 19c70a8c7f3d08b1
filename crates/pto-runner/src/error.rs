//! Errors of the runner: each names the file, parameter or task and the fix.

use std::path::PathBuf;

/// What kind of failure, for front ends that map errors to exception types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A file or directory is missing (`FileNotFoundError`).
    NotFound,
    /// A value is invalid (`ValueError`).
    Invalid,
    /// A value has the wrong type (`TypeError`).
    Type,
    /// Running failed (`RuntimeError`).
    Runtime,
    /// A diagnostics artifact could not be written (`pypto._native.ArtifactWriteError`, an
    /// `OSError`): the run's configuration was fine, its output directory was not.
    Artifact,
}

/// Everything that can fail while preparing, running or validating a build directory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    /// Invalid configuration.
    #[error("{message}")]
    Config {
        /// What is wrong and how to fix it.
        message: String,
        /// The kind.
        kind: ErrorKind,
    },
    /// The build directory's layout.
    #[error(transparent)]
    Layout(#[from] pto_build_output::LayoutError),
    /// `kernel_config.py`.
    #[error(transparent)]
    KernelConfig(#[from] pto_build_output::KernelConfigError),
    /// A sidecar.
    #[error(transparent)]
    Meta(#[from] pto_build_output::MetaError),
    /// An `.npy` file.
    #[error(transparent)]
    Npy(#[from] pto_build_output::NpyError),
    /// A tensor file (`.npy` or `.pt`), or a name with both.
    #[error(transparent)]
    TensorFile(#[from] pto_build_output::TensorFileError),
    /// `golden.py` or a comparison.
    #[error(transparent)]
    Golden(#[from] pto_build_output::GoldenError),
    /// A dtype.
    #[error(transparent)]
    DType(#[from] pto_build_output::DTypeError),
    /// Writing a file.
    #[error(transparent)]
    Write(#[from] pto_build_output::WriteError),
    /// Writing a diagnostics artifact under `dfx_outputs/`.
    #[error(transparent)]
    Artifact(#[from] pto_dfx::WriteError),
    /// A file-system step of publishing the diagnostics into `dfx_outputs/` (creating it,
    /// staging, locking, renaming into place).
    #[error("{action} `{}`: {source}", path.display())]
    ArtifactIo {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Compiling C++.
    #[error(transparent)]
    Toolchain(#[from] pto_toolchain::ToolchainError),
    /// The sources mix Simpler's two orchestration generations (or one is unreadable).
    #[error(transparent)]
    Generation(#[from] pto_toolchain::GenerationError),
    /// Loading or running on the chip.
    #[error(transparent)]
    Runtime(#[from] pto_runtime::RuntimeError),
    /// An input or golden tensor that does not fit the orchestration signature.
    #[error("{}: {message}", path.display())]
    Data {
        /// The file (or the one that was expected).
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The chip process died, hung or could not be started.
    #[error("{message}")]
    ChipProcess {
        /// What happened, which task was running and what to do.
        message: String,
    },
    /// An error a chip process reported (anything but a runtime fatal error).
    #[error("{message}")]
    Remote {
        /// The kind the child reported.
        kind: ErrorKind,
        /// Its text.
        message: String,
    },
    /// Any other file-system failure.
    #[error("{action} `{}`: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl RunnerError {
    /// A configuration error (`ValueError`).
    pub fn config(message: String) -> RunnerError {
        RunnerError::Config {
            message,
            kind: ErrorKind::Invalid,
        }
    }

    /// The kind, for exception mapping.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RunnerError::Config { kind, .. } => *kind,
            RunnerError::Remote { kind, .. } => *kind,
            RunnerError::ChipProcess { .. } => ErrorKind::Runtime,
            RunnerError::Layout(e) if e.is_not_found() => ErrorKind::NotFound,
            RunnerError::Meta(e) if e.kind() == pto_build_output::MetaErrorKind::NotFound => {
                ErrorKind::NotFound
            }
            RunnerError::Data { path, .. } if !path.exists() => ErrorKind::NotFound,
            RunnerError::TensorFile(e) if e.is_not_found() => ErrorKind::NotFound,
            RunnerError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorKind::NotFound
            }
            RunnerError::Generation(pto_toolchain::GenerationError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                ErrorKind::NotFound
            }
            RunnerError::Runtime(_) | RunnerError::Toolchain(_) => ErrorKind::Runtime,
            RunnerError::Artifact(_) | RunnerError::ArtifactIo { .. } => ErrorKind::Artifact,
            _ => ErrorKind::Invalid,
        }
    }
}
