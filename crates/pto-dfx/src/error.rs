//! Errors and problems shared by every reader and writer.
//!
//! Damage comes in two sizes. Damage a reader can step over (one bad row,
//! one record with a missing key, an unknown enum name) is data: the reader
//! skips or repairs the item and reports a [`Problem`] next to the records in
//! a [`Loaded`]. Damage it cannot step over (an unreadable file, truncated
//! JSON, a missing top-level key, a swimlane level outside 1..=4) is a
//! [`ReadError`] that names the file and, where there is one, the key.
//!
//! Writers fail with a [`WriteError`] naming the file: an I/O step failed, or
//! the records cannot be written in the format (for example PMU rows whose
//! counter columns differ from the header's).
//!
//! Every message carries its cause's text (the I/O or JSON parser error), so
//! `source()` is `None`: printing the chain never repeats a cause.

use std::fmt;
use std::path::{Path, PathBuf};

/// The longest file any reader of this crate takes (4 GiB). A longer one is
/// a [`ReadErrorKind::TooLarge`] before anything is read: a million-task
/// swimlane file is about 100 MiB, and a reader's memory grows with its input.
pub const MAX_FILE_BYTES: u64 = 4 << 30;

/// Records read from a file plus the recoverable damage found on the way.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded<T> {
    /// What could be read.
    pub value: T,
    /// Items that were skipped or repaired, in file order; empty for a clean file.
    pub problems: Vec<Problem>,
}

/// One piece of recoverable damage in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Where: a key path such as `aicore_tasks[3]` or `edges[2].pred`, a CSV
    /// line (`line 4`) or an NDJSON line and key (`line 3: depth`).
    pub key: String,
    /// What is wrong and what the reader did about it.
    pub message: String,
}

impl Problem {
    /// A problem at `key` (a key path such as `edges[2].pred`) described by `message`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.key, self.message)
    }
}

/// A file could not be read at all.
///
/// The message names the file and what is wrong; [`ReadError::key`] gives
/// the offending key when there is one.
#[derive(Debug)]
pub struct ReadError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub kind: ReadErrorKind,
}

impl ReadError {
    /// A read error of the file at `path`.
    pub fn new(path: &Path, kind: ReadErrorKind) -> Self {
        Self {
            path: path.to_path_buf(),
            kind,
        }
    }

    /// The key (or CSV column) the error is about, if any.
    pub fn key(&self) -> Option<&str> {
        match &self.kind {
            ReadErrorKind::MissingKey { key }
            | ReadErrorKind::WrongType { key, .. }
            | ReadErrorKind::InvalidValue { key, .. }
            | ReadErrorKind::MissingColumn { key }
            | ReadErrorKind::Compact { key, .. } => Some(key),
            ReadErrorKind::Io { .. }
            | ReadErrorKind::Json { .. }
            | ReadErrorKind::Empty { .. }
            | ReadErrorKind::TooLarge { .. } => None,
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read {}: {}", self.path.display(), self.kind)
    }
}

/// The message carries every cause's text, so `source()` is `None`.
impl std::error::Error for ReadError {}

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// Opening or reading the file failed.
    #[error("the file cannot be opened or read: {error}")]
    Io {
        /// The I/O error (its text is part of this error's message).
        error: std::io::Error,
    },
    /// The text is not JSON: truncated (`truncated` is true) or corrupt.
    #[error(
        "{} JSON ({error}){}",
        if *truncated { "truncated" } else { "invalid" },
        if *truncated { "; the run that wrote it may have been cut short" } else { "" }
    )]
    Json {
        /// 1-based line of the failure.
        line: usize,
        /// 1-based column of the failure.
        column: usize,
        /// The text ended early.
        truncated: bool,
        /// The parser's error (its text is part of this error's message).
        error: serde_json::Error,
    },
    /// A required key is absent.
    #[error("missing key `{key}`")]
    MissingKey {
        /// The key path, e.g. `metadata.clock_freq_hz`.
        key: String,
    },
    /// A key holds a value of the wrong JSON type.
    #[error("key `{key}` should be {expected}, found {found}")]
    WrongType {
        /// The key path.
        key: String,
        /// The expected kind of value, e.g. "an unsigned integer".
        expected: &'static str,
        /// The kind of value found, e.g. "a string".
        found: &'static str,
    },
    /// A key holds a value of the right type but outside the format's range.
    #[error("key `{key}` {reason}")]
    InvalidValue {
        /// The key path.
        key: String,
        /// What is wrong, e.g. "is 7; expected 1, 2, 3 or 4".
        reason: String,
    },
    /// A CSV header lacks a required column.
    #[error("the header lacks column `{key}`")]
    MissingColumn {
        /// The column name.
        key: String,
    },
    /// The file is longer than the reader takes ([`MAX_FILE_BYTES`]).
    #[error("the file is {len} bytes, more than the {} a DFX reader takes; it is not a file a run wrote, or the run was far larger than the viewers handle (record fewer tasks)", pto_base::human_size(*limit))]
    TooLarge {
        /// The file's length (at least).
        len: u64,
        /// The limit.
        limit: u64,
    },
    /// The file has no content where the format needs some.
    #[error("the file is empty; expected {expected}")]
    Empty {
        /// What the first line should have been.
        expected: &'static str,
    },
    /// A compact file ([`crate::compact`]) is damaged.
    #[error("`{key}`: {error}")]
    Compact {
        /// Where: `section[record].field`, e.g. `phases[3].kind`.
        key: String,
        /// What is wrong.
        error: crate::compact::CompactErrorKind,
    },
}

impl From<crate::compact::CompactError> for ReadError {
    fn from(e: crate::compact::CompactError) -> Self {
        use crate::compact::CompactErrorKind as K;
        let key = e.location();
        let kind = match e.kind {
            K::Io(error) => ReadErrorKind::Io { error },
            K::TooLarge { bytes } => ReadErrorKind::TooLarge {
                len: bytes,
                limit: MAX_FILE_BYTES,
            },
            error => ReadErrorKind::Compact { key, error },
        };
        Self { path: e.path, kind }
    }
}

/// A file could not be written.
#[derive(Debug)]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub kind: WriteErrorKind,
}

impl WriteError {
    /// A failed I/O `step` ("creating the directory", ...) on `path`.
    pub fn io(path: &Path, step: &'static str, source: std::io::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            kind: WriteErrorKind::Io {
                step,
                error: source,
            },
        }
    }

    /// The records meant for `path` cannot be expressed in its format.
    pub fn invalid(path: &Path, record: InvalidRecord) -> Self {
        Self {
            path: path.to_path_buf(),
            kind: WriteErrorKind::InvalidRecord(record),
        }
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.kind)
    }
}

/// The message carries every cause's text, so `source()` is `None`.
impl std::error::Error for WriteError {}

/// Why a file could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteErrorKind {
    /// An I/O step failed; check that the directory is writable.
    #[error("{step} failed: {error}; check that the directory is writable")]
    Io {
        /// The step: "creating the directory", "creating the temporary file",
        /// "writing", "syncing" or "renaming".
        step: &'static str,
        /// The I/O error (its text is part of this error's message).
        error: std::io::Error,
    },
    /// The records cannot be expressed in the format.
    #[error("{0}")]
    InvalidRecord(InvalidRecord),
}

/// Records that cannot be expressed in their format.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{key}` {reason}")]
pub struct InvalidRecord {
    /// Which record or field, e.g. `rows[3].counters`.
    pub key: String,
    /// What is wrong.
    pub reason: String,
}
