//! Source text and positions: byte spans in a `.pto` file, turned into `file:line:col`
//! locations and an underlined excerpt for error messages.

use std::fmt;

/// A byte range in the source text.
///
/// Spans are metadata, not meaning: two IR trees that differ only in where they were
/// written compare equal (`PartialEq` on `Span` is always true), as syntax-tree crates do
/// when they compare trees "ignoring spans". The round-trip tests rely on it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Span {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl PartialEq for Span {
    fn eq(&self, _other: &Span) -> bool {
        true
    }
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(end.max(start)).unwrap_or(u32::MAX),
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// `file:line:col`, 1-based; the column counts characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file name as given on the command line (`<stdin>` for standard input).
    pub file: String,
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub col: u32,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// A source file: its name, text and the start of every line.
#[derive(Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    /// Indexes `text` under `name`.
    pub fn new(name: &str, text: &str) -> SourceFile {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        SourceFile {
            name: name.to_string(),
            text: text.to_string(),
            line_starts,
        }
    }

    /// The file name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }

    fn line_index(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// The location of byte `offset` (clamped to the text).
    pub fn location(&self, offset: u32) -> Location {
        let offset = (offset as usize).min(self.text.len());
        let line = self.line_index(offset);
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(offset - start);
        Location {
            file: self.name.clone(),
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            col: u32::try_from(col + 1).unwrap_or(u32::MAX),
        }
    }

    /// The source line of `span`'s start with the span underlined by `^`, as two lines.
    pub fn excerpt(&self, span: Span) -> String {
        let offset = (span.start as usize).min(self.text.len());
        let line = self.line_index(offset);
        let start = self.line_starts[line];
        let end = self.text[start..]
            .find('\n')
            .map(|n| start + n)
            .unwrap_or(self.text.len());
        let text = self.text.get(start..end).unwrap_or("");
        let col = self
            .text
            .get(start..offset)
            .map(|s| s.chars().count())
            .unwrap_or(0);
        let span_end = (span.end as usize).clamp(offset, end);
        let width = self
            .text
            .get(offset..span_end)
            .map(|s| s.chars().count())
            .unwrap_or(1)
            .max(1);
        // Keep long lines readable: show at most 160 characters around the column.
        let chars: Vec<char> = text.chars().collect();
        let from = col.saturating_sub(80);
        let to = (col + 80).min(chars.len());
        let shown: String = chars[from.min(to)..to].iter().collect();
        let marker = format!(
            "{}{}",
            " ".repeat(col - from.min(col)),
            "^".repeat(width.min(to.saturating_sub(col).max(1)))
        );
        format!("  {shown}\n  {marker}")
    }
}
