//! Errors of the timing model.

use thiserror::Error;

/// A parameter table that could not be read.
#[derive(Debug, Error)]
pub enum ParamError {
    /// A line of a parameter file does not parse.
    #[error("{file}:{line}: {message} (expected `op,dtype,cols,slope,bias`, e.g. `TADD,fp32,64,0.03,20`)")]
    Parse {
        /// The file (or `<embedded a2a3>`).
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The parameter file could not be read.
    #[error("reading timing parameters {file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The cause.
        source: std::io::Error,
    },
}
