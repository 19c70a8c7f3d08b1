//! The translator's error type: every failure carries what went wrong and, when it comes
//! from the input, where (`file:line:col`, the op's name, an underlined excerpt).

use std::fmt;

use crate::source::{Location, SourceFile, Span};

/// What kind of failure an [`Error`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The text is not valid PTO-AS (lexing or parsing).
    Syntax,
    /// Valid syntax, but an op, type or attribute this translator does not lower.
    Unsupported,
    /// The IR breaks a rule (operand types, the level's `addr` rules, pipe pairing).
    Invalid,
    /// Level-2 memory planning failed (a tile does not fit).
    Memory,
    /// A command-line option is wrong.
    Usage,
    /// Reading the input or writing the output failed.
    Io,
}

/// A translation failure.
#[derive(Debug, Clone, thiserror::Error)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    location: Option<Location>,
    excerpt: Option<String>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => write!(f, "{loc}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl Error {
    /// An error without a source position (options, I/O).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            location: None,
            excerpt: None,
        }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message without the location.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where in the input, if the error comes from it.
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// The offending source line with the offending text underlined, if any.
    pub fn excerpt(&self) -> Option<&str> {
        self.excerpt.as_deref()
    }
}

/// An error that still needs its file: produced by the passes, which know spans only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// What kind of failure.
    pub kind: ErrorKind,
    /// The message (no trailing period).
    pub message: String,
    /// Where (start/end byte offsets); `None` for whole-module problems.
    pub span: Option<(u32, u32)>,
}

impl Diag {
    /// A diagnostic at `span`.
    pub fn at(kind: ErrorKind, span: Span, message: impl Into<String>) -> Diag {
        Diag {
            kind,
            message: message.into(),
            span: Some((span.start, span.end)),
        }
    }

    /// A diagnostic without a position.
    pub fn global(kind: ErrorKind, message: impl Into<String>) -> Diag {
        Diag {
            kind,
            message: message.into(),
            span: None,
        }
    }

    /// The located error for `file`.
    pub fn into_error(self, file: &SourceFile) -> Error {
        match self.span {
            Some((start, end)) => {
                let span = Span { start, end };
                Error {
                    kind: self.kind,
                    message: self.message,
                    location: Some(file.location(start)),
                    excerpt: Some(file.excerpt(span)),
                }
            }
            None => Error {
                kind: self.kind,
                message: self.message,
                location: Some(Location {
                    file: file.name().to_string(),
                    line: 1,
                    col: 1,
                }),
                excerpt: None,
            },
        }
    }
}

/// Result of a pass.
pub type DiagResult<T> = Result<T, Diag>;
