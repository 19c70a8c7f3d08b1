//! JSON plumbing shared by the readers and writers (crate-private; the bounded file read is
//! public as [`crate::read_artifact`], for the viewers).
//!
//! Reading: the text is parsed into a `serde_json::Value`, then walked with
//! [`Node`], which knows the key path of every value (`edges[2].pred`) but
//! renders it only when something is wrong. A typed accessor returns an
//! [`Issue`]; the caller turns it into a [`ReadError`] (unrecoverable) or a
//! [`Problem`] (skip the item and go on).
//!
//! Writing: the Simpler writers build their JSON by hand (`ofstream <<`,
//! `fprintf`), so ours do too, with [`Out`] appending to a `String` (kept, or spilled to
//! the file as it grows).

use std::fmt;
use std::path::Path;

use pto_base::fs::LimitedReadError;

use serde_json::{Map, Value};

use crate::behind::Behind;
use crate::error::{Problem, ReadError, ReadErrorKind, WriteError, MAX_FILE_BYTES};

/// Reads a whole file of at most [`MAX_FILE_BYTES`], mapping failure to
/// [`ReadErrorKind::Io`] and a longer file to [`ReadErrorKind::TooLarge`].
pub fn read_file(path: &Path) -> Result<Vec<u8>, ReadError> {
    read_prefix(path, MAX_FILE_BYTES, MAX_FILE_BYTES)
}

/// The first `want` bytes of `path` (all of it when shorter), refusing a file longer than
/// `limit` ([`pto_base::fs::read_prefix`]).
pub(crate) fn read_prefix(path: &Path, want: u64, limit: u64) -> Result<Vec<u8>, ReadError> {
    pto_base::fs::read_prefix(path, want, limit).map_err(|e| match e {
        LimitedReadError::Io(error) => ReadError::new(path, ReadErrorKind::Io { error }),
        LimitedReadError::TooLarge { len } => {
            ReadError::new(path, ReadErrorKind::TooLarge { len, limit })
        }
    })
}

/// Parses JSON text; `path` is only for the message.
pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<Value, ReadError> {
    serde_json::from_slice(bytes).map_err(|error| json_error(path, error))
}

pub(crate) fn json_error(path: &Path, error: serde_json::Error) -> ReadError {
    let truncated = error.classify() == serde_json::error::Category::Eof;
    ReadError::new(
        path,
        ReadErrorKind::Json {
            line: error.line(),
            column: error.column(),
            truncated,
            error,
        },
    )
}

// ---------------------------------------------------------------- reading

/// Where a value sits in the document; rendered only for messages.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Key<'k> {
    /// The document root.
    Root,
    /// Line `n` (1-based) of an NDJSON file.
    Line(usize),
    /// Field `name` of the parent object.
    Field(&'k Key<'k>, &'k str),
    /// Element `i` of the parent array.
    Index(&'k Key<'k>, usize),
}

impl fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Root => f.write_str("(root)"),
            Key::Line(n) => write!(f, "line {n}"),
            Key::Field(Key::Root, name) => f.write_str(name),
            Key::Field(Key::Line(n), name) => write!(f, "line {n}: {name}"),
            Key::Field(parent, name) => write!(f, "{parent}.{name}"),
            Key::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// What is wrong with one value.
#[derive(Debug)]
pub(crate) struct Issue {
    pub key: String,
    pub kind: IssueKind,
}

#[derive(Debug)]
pub(crate) enum IssueKind {
    Missing,
    WrongType {
        expected: &'static str,
        found: &'static str,
    },
    Invalid(String),
}

impl Issue {
    pub(crate) fn invalid(key: &Key<'_>, reason: impl Into<String>) -> Self {
        Self {
            key: key.to_string(),
            kind: IssueKind::Invalid(reason.into()),
        }
    }

    pub(crate) fn into_read_error(self, path: &Path) -> ReadError {
        let kind = match self.kind {
            IssueKind::Missing => ReadErrorKind::MissingKey { key: self.key },
            IssueKind::WrongType { expected, found } => ReadErrorKind::WrongType {
                key: self.key,
                expected,
                found,
            },
            IssueKind::Invalid(reason) => ReadErrorKind::InvalidValue {
                key: self.key,
                reason,
            },
        };
        ReadError::new(path, kind)
    }

    /// A problem saying the issue made the reader `action` (e.g. "skipped the row").
    pub(crate) fn into_problem(self, action: &str) -> Problem {
        let what = match self.kind {
            IssueKind::Missing => String::from("missing key"),
            IssueKind::WrongType { expected, found } => {
                format!("should be {expected}, found {found}")
            }
            IssueKind::Invalid(reason) => reason,
        };
        Problem::new(self.key, format!("{what}; {action}"))
    }
}

pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a float",
        Value::Number(n) if n.is_i64() && n.as_i64().is_some_and(|v| v < 0) => "a negative integer",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value plus its key path.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node<'v, 'k> {
    pub value: &'v Value,
    pub key: Key<'k>,
}

impl<'v> Node<'v, 'static> {
    pub(crate) fn root(value: &'v Value) -> Self {
        Self {
            value,
            key: Key::Root,
        }
    }

    pub(crate) fn line(value: &'v Value, line: usize) -> Self {
        Self {
            value,
            key: Key::Line(line),
        }
    }
}

impl<'v, 'k> Node<'v, 'k> {
    pub(crate) fn wrong_type(&self, expected: &'static str) -> Issue {
        Issue {
            key: self.key.to_string(),
            kind: IssueKind::WrongType {
                expected,
                found: type_name(self.value),
            },
        }
    }

    pub(crate) fn invalid(&self, reason: impl Into<String>) -> Issue {
        Issue::invalid(&self.key, reason)
    }

    pub(crate) fn object(&self) -> Result<&'v Map<String, Value>, Issue> {
        self.value
            .as_object()
            .ok_or_else(|| self.wrong_type("an object"))
    }

    pub(crate) fn array(&self) -> Result<&'v [Value], Issue> {
        self.value
            .as_array()
            .map(Vec::as_slice)
            .ok_or_else(|| self.wrong_type("an array"))
    }

    /// The required field `name`.
    pub(crate) fn field<'s>(&'s self, name: &'s str) -> Result<Node<'v, 's>, Issue> {
        match self.opt_field(name)? {
            Some(node) => Ok(node),
            None => Err(Issue {
                key: Key::Field(&self.key, name).to_string(),
                kind: IssueKind::Missing,
            }),
        }
    }

    /// The optional field `name` (present even when `null`).
    pub(crate) fn opt_field<'s>(&'s self, name: &'s str) -> Result<Option<Node<'v, 's>>, Issue> {
        Ok(self.object()?.get(name).map(|value| Node {
            value,
            key: Key::Field(&self.key, name),
        }))
    }

    /// Element `i` (taken from this node's array) as a node.
    pub(crate) fn item<'s>(&'s self, i: usize, value: &'v Value) -> Node<'v, 's> {
        Node {
            value,
            key: Key::Index(&self.key, i),
        }
    }

    pub(crate) fn str(&self) -> Result<&'v str, Issue> {
        self.value
            .as_str()
            .ok_or_else(|| self.wrong_type("a string"))
    }

    /// A string, or `None` for `null`.
    pub(crate) fn opt_str(&self) -> Result<Option<&'v str>, Issue> {
        match self.value {
            Value::Null => Ok(None),
            _ => self.str().map(Some),
        }
    }

    pub(crate) fn bool(&self) -> Result<bool, Issue> {
        self.value
            .as_bool()
            .ok_or_else(|| self.wrong_type("a boolean"))
    }

    pub(crate) fn u64(&self) -> Result<u64, Issue> {
        self.value
            .as_u64()
            .ok_or_else(|| self.wrong_type("an unsigned integer"))
    }

    pub(crate) fn i64(&self) -> Result<i64, Issue> {
        self.value
            .as_i64()
            .ok_or_else(|| self.wrong_type("an integer"))
    }

    pub(crate) fn u32(&self) -> Result<u32, Issue> {
        let v = self.u64()?;
        u32::try_from(v).map_err(|_| self.invalid(format!("is {v}; expected at most {}", u32::MAX)))
    }

    pub(crate) fn i32(&self) -> Result<i32, Issue> {
        let v = self.i64()?;
        i32::try_from(v).map_err(|_| self.invalid(format!("is {v}; expected a 32-bit integer")))
    }

    pub(crate) fn i16(&self) -> Result<i16, Issue> {
        let v = self.i64()?;
        i16::try_from(v).map_err(|_| self.invalid(format!("is {v}; expected a 16-bit integer")))
    }

    /// A 64-bit value written as a decimal string or as a number; negative
    /// values wrap to `u64` (`& (2^64 - 1)`), as the tools normalize them.
    pub(crate) fn u64_lenient(&self) -> Result<u64, Issue> {
        match self.value {
            Value::String(text) => parse_u64_lenient(text).ok_or_else(|| {
                self.invalid(format!("is {text:?}; expected a decimal 64-bit integer"))
            }),
            Value::Number(n) => n
                .as_u64()
                .or_else(|| n.as_i64().map(|v| v as u64))
                .ok_or_else(|| self.wrong_type("an integer or a decimal string")),
            _ => Err(self.wrong_type("an integer or a decimal string")),
        }
    }

    /// An array of elements read with `f`.
    pub(crate) fn vec<T>(
        &self,
        mut f: impl FnMut(&Node<'v, '_>) -> Result<T, Issue>,
    ) -> Result<Vec<T>, Issue> {
        let items = self.array()?;
        let mut out = Vec::with_capacity(items.len());
        for (i, value) in items.iter().enumerate() {
            out.push(f(&self.item(i, value))?);
        }
        Ok(out)
    }
}

fn parse_u64_lenient(text: &str) -> Option<u64> {
    if let Some(neg) = text.strip_prefix('-') {
        if !neg.is_empty() && neg.bytes().all(|b| b.is_ascii_digit()) {
            // Parsed with its sign, so i64::MIN (whose magnitude no i64 holds) reads too.
            return text.parse::<i64>().ok().map(|v| v as u64);
        }
        return None;
    }
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        text.parse().ok()
    } else {
        None
    }
}

// ---------------------------------------------------------------- writing

/// An output buffer for hand-built JSON and CSV: the whole text in memory
/// ([`with_capacity`](Self::with_capacity), then [`into_string`](Self::into_string)), or
/// streamed to a file ([`streaming`](Self::streaming), then [`finish`](Self::finish)).
pub(crate) struct Out {
    pub buf: String,
    /// The file a streaming buffer spills into, written behind the renderer
    /// ([`crate::behind`]; its first error is reported by [`Out::finish`], the renderers
    /// themselves cannot fail); `None` for a text kept in memory.
    sink: Option<Behind>,
    /// The length at which the buffer spills: [`SPILL_BYTES`] when streaming, never for a
    /// kept text (one comparison per append either way).
    limit: usize,
}

impl Default for Out {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

/// The text a streaming [`Out`] holds before it hands it to the file's writing thread:
/// large enough that each hand-over is cheap, small enough that the few buffers in flight
/// stay warm (a buffer of a whole large file was a fresh page, and a page fault, per
/// 4 KiB on every run).
const SPILL_BYTES: usize = 1 << 20;

/// [`Out::each`] renders this many items or more in two halves on two threads (a thread
/// costs tens of microseconds; 8192 rows of a DFX file take about a millisecond).
pub(crate) const SPLIT_ITEMS: usize = 8192;

/// Where a list of `n` items splits between two threads: half of it from [`SPLIT_ITEMS`]
/// on, otherwise all of it stays on this thread (`n`).
pub(crate) fn split_point(n: usize) -> usize {
    if n >= SPLIT_ITEMS {
        n / 2
    } else {
        n
    }
}

/// Runs `here` here and `there` on the helper thread of the DFX writers
/// ([`pto_base::thread::beside`]).
pub(crate) fn beside<A, B: Send>(here: impl FnOnce() -> A, there: impl Fn() -> B + Sync) -> (A, B) {
    pto_base::thread::beside("pto-dfx-render", here, there)
}

impl Out {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            buf: String::with_capacity(n),
            sink: None,
            limit: usize::MAX,
        }
    }

    /// A buffer that writes its text to `path` as it grows: a temporary beside it,
    /// renamed over it by [`finish`](Self::finish) (dropped unfinished, `path` is untouched).
    pub(crate) fn streaming(path: &Path) -> Result<Self, WriteError> {
        Ok(Self {
            buf: String::with_capacity(SPILL_BYTES + 4096),
            sink: Some(Behind::create(path)?),
            limit: SPILL_BYTES,
        })
    }

    /// Appends `text` (inlined: a literal's copy is a few moves, not a library call).
    #[inline(always)]
    pub(crate) fn s(&mut self, text: &str) -> &mut Self {
        if self.buf.len() >= self.limit {
            self.spill();
        }
        self.buf.push_str(text);
        self
    }

    /// Appends each of `items` as `item` renders it, after `first` (the first item) or
    /// `sep` (the others). From [`SPLIT_ITEMS`] items on, the second half is rendered on a
    /// thread of its own while this one renders the first, then appended (the machine's
    /// CPUs are otherwise idle while a run's files are written); the text is the same.
    pub(crate) fn each<T: Sync>(
        &mut self,
        items: &[T],
        first: &str,
        sep: &str,
        item: impl Fn(&mut Out, &T) + Sync,
    ) {
        let (head, tail) = items.split_at(split_point(items.len()));
        let render_head = |out: &mut Out| {
            for (i, t) in head.iter().enumerate() {
                out.s(if i == 0 { first } else { sep });
                item(out, t);
            }
        };
        if tail.is_empty() {
            render_head(self);
            return;
        }
        let render_tail = || {
            let mut rest = Out::with_capacity(tail.len() * 96);
            for t in tail {
                rest.s(sep);
                item(&mut rest, t);
            }
            rest.buf
        };
        let ((), text) = beside(|| render_head(self), render_tail);
        self.append(text);
    }

    /// Appends a large text: a streaming buffer hands over what it holds and then `text`
    /// itself (no copy into the buffer).
    pub(crate) fn append(&mut self, text: String) {
        if self.sink.is_none() {
            self.buf.push_str(&text);
            return;
        }
        self.spill();
        if let Some(sink) = &mut self.sink {
            sink.send_owned(text.into_bytes());
        }
    }

    /// Hands a streaming buffer's text to its file (a kept text grows on).
    #[cold]
    fn spill(&mut self) {
        if let Some(sink) = &mut self.sink {
            sink.send_text(&mut self.buf);
        }
    }

    /// Writes what `render` appends to a streaming buffer to `path` atomically
    /// ([`Out::streaming`], then [`Out::finish`]): the writers' one way to a file.
    pub(crate) fn write(path: &Path, render: impl FnOnce(&mut Out)) -> Result<(), WriteError> {
        let mut out = Out::streaming(path)?;
        render(&mut out);
        out.finish()
    }

    /// Writes the rest of a streaming buffer's text and renames the file over its path;
    /// the first write error, if any, instead (the target untouched).
    pub(crate) fn finish(mut self) -> Result<(), WriteError> {
        match self.sink.take() {
            Some(file) => file.commit(self.buf.as_bytes()),
            None => Ok(()),
        }
    }

    #[inline]
    pub(crate) fn u(&mut self, v: u64) -> &mut Self {
        pto_base::json::push_u64(&mut self.buf, v);
        self
    }

    pub(crate) fn i(&mut self, v: i64) -> &mut Self {
        push_decimal(&mut self.buf, v < 0, u128::from(v.unsigned_abs()));
        self
    }

    /// `0x` and the 16 lower-case hex digits of `v` (`format!("0x{v:016x}")`).
    pub(crate) fn hex16(&mut self, v: u64) -> &mut Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut text = *b"0x0000000000000000";
        for (i, c) in text[2..].iter_mut().enumerate() {
            *c = DIGITS[((v >> (60 - 4 * i)) & 0xf) as usize];
        }
        self.buf
            .push_str(std::str::from_utf8(&text).expect("hex digits are ASCII"));
        self
    }

    pub(crate) fn b(&mut self, v: bool) -> &mut Self {
        self.buf.push_str(if v { "true" } else { "false" });
        self
    }

    /// A JSON string literal ([`pto_base::json::push_str`]: quote, backslash and control
    /// characters escaped; other characters are written as UTF-8, as the C++ writers do for
    /// the plain-ASCII names they emit).
    pub(crate) fn q(&mut self, text: &str) -> &mut Self {
        pto_base::json::push_str(&mut self.buf, text);
        self
    }

    /// A decimal 64-bit value as a JSON string (`"123"`).
    pub(crate) fn qu(&mut self, v: u64) -> &mut Self {
        self.buf.push('"');
        self.u(v);
        self.buf.push('"');
        self
    }

    /// `[a<sep>b<sep>c]` of integers.
    pub(crate) fn list<T: Copy + Into<i128>>(&mut self, items: &[T], sep: &str) -> &mut Self {
        self.buf.push('[');
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                self.buf.push_str(sep);
            }
            let v: i128 = (*v).into();
            push_decimal(&mut self.buf, v < 0, v.unsigned_abs());
        }
        self.buf.push(']');
        self
    }

    pub(crate) fn into_string(self) -> String {
        self.buf
    }
}

/// Appends `-` (when `negative`) and the decimal digits of `v`: what `{}` prints
/// ([`pto_base::json::push_u64`]; the 128-bit division, a library call, only for the
/// values that need it).
#[inline]
fn push_decimal(buf: &mut String, negative: bool, v: u128) {
    if negative {
        buf.push('-');
    }
    match u64::try_from(v) {
        Ok(v) => pto_base::json::push_u64(buf, v),
        Err(_) => buf.push_str(itoa::Buffer::new().format(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streaming_out_spills_as_it_grows_and_publishes_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut out = Out::streaming(&path).unwrap();
        let mut want = String::new();
        for i in 0..100_000u64 {
            out.s("[").u(i).s("],");
            want.push_str(&format!("[{i}],"));
        }
        assert!(out.buf.len() < SPILL_BYTES + 64, "spilled along the way");
        assert!(!path.exists(), "invisible until finished");
        out.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
    }

    #[test]
    fn each_renders_items_in_order_on_one_thread_or_two() {
        let sequential = |items: &[u64]| {
            let mut text = String::from("[");
            for (i, v) in items.iter().enumerate() {
                text.push_str(if i == 0 { "\n  " } else { ",\n  " });
                text.push_str(&format!("{{\"v\": {v}}}"));
            }
            text + "]"
        };
        let dir = tempfile::tempdir().unwrap();
        for n in [
            0,
            1,
            SPLIT_ITEMS - 1,
            SPLIT_ITEMS,
            SPLIT_ITEMS + 1,
            3 * SPLIT_ITEMS + 7,
        ] {
            let items: Vec<u64> = (0..n as u64).map(|v| v * 7919).collect();
            let render = |out: &mut Out| {
                out.s("[");
                out.each(&items, "\n  ", ",\n  ", |out, v| {
                    out.s("{\"v\": ").u(*v).s("}");
                });
                out.s("]");
            };
            let mut kept = Out::default();
            render(&mut kept);
            assert!(kept.into_string() == sequential(&items), "kept, {n} items");
            let path = dir.path().join(format!("each{n}.json"));
            let mut streamed = Out::streaming(&path).unwrap();
            render(&mut streamed);
            streamed.finish().unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text == sequential(&items), "streamed, {n} items");
        }
    }

    #[test]
    fn a_failed_spill_is_reported_by_finish_and_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let mut out = Out::streaming(&path).unwrap();
        let failed = WriteError::io(
            &path,
            "writing",
            std::io::Error::other("no space left on device"),
        );
        if let Some(sink) = &mut out.sink {
            sink.fail_with(failed);
        }
        for _ in 0..SPILL_BYTES {
            out.s("x");
        }
        let text = out.finish().unwrap_err().to_string();
        assert!(text.contains("no space left"), "{text}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn hex16_is_the_task_id_format() {
        for v in [0u64, 1, 0xabc, 1 << 32 | 7, u64::MAX] {
            let mut out = Out::default();
            out.hex16(v);
            assert_eq!(out.into_string(), format!("0x{v:016x}"));
        }
    }

    #[test]
    fn integers_print_as_display_does() {
        let values: [i128; 13] = [
            0,
            7,
            9,
            -1,
            -7,
            10,
            -10,
            1_000_000_007,
            i64::MAX as i128,
            i64::MIN as i128,
            u64::MAX as i128,
            i128::MIN + 1,
            i128::MAX,
        ];
        for v in values {
            let mut out = Out::default();
            out.list(&[v], ", ");
            assert_eq!(out.into_string(), format!("[{v}]"));
            if let Ok(u) = u64::try_from(v) {
                let mut out = Out::default();
                out.u(u);
                assert_eq!(out.into_string(), u.to_string());
            }
            if let Ok(i) = i64::try_from(v) {
                let mut out = Out::default();
                out.i(i);
                assert_eq!(out.into_string(), i.to_string());
            }
        }
    }

    #[test]
    fn key_rendering() {
        let root = Key::Root;
        let edges = Key::Field(&root, "edges");
        let e2 = Key::Index(&edges, 2);
        assert_eq!(Key::Field(&e2, "pred").to_string(), "edges[2].pred");
        let line = Key::Line(3);
        assert_eq!(Key::Field(&line, "depth").to_string(), "line 3: depth");
    }

    #[test]
    fn reads_are_bounded_before_and_while_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_prefix(&path, 4, 100).unwrap(), b"0123");
        assert_eq!(read_prefix(&path, 100, 10).unwrap(), b"0123456789");
        let err = read_prefix(&path, 100, 9).unwrap_err();
        assert!(matches!(
            err.kind,
            ReadErrorKind::TooLarge { len: 10, limit: 9 }
        ));
        // No length to check first (a character device): cut at limit + 1 bytes.
        let err = read_prefix(Path::new("/dev/zero"), u64::MAX, 1 << 20).unwrap_err();
        assert!(matches!(err.kind, ReadErrorKind::TooLarge { len, .. } if len == (1 << 20) + 1));
    }

    #[test]
    fn lenient_u64() {
        assert_eq!(parse_u64_lenient("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64_lenient("-1"), Some(u64::MAX));
        // The fast reader's lenient ids read i64::MIN; so must the careful one.
        assert_eq!(parse_u64_lenient("-9223372036854775808"), Some(1 << 63));
        assert_eq!(parse_u64_lenient("-9223372036854775809"), None);
        assert_eq!(parse_u64_lenient("1x"), None);
        assert_eq!(parse_u64_lenient(""), None);
        assert_eq!(parse_u64_lenient("-"), None);
    }

    #[test]
    fn string_escaping() {
        let mut out = Out::default();
        out.q("a\"b\\c\n\u{1}é");
        assert_eq!(out.into_string(), "\"a\\\"b\\\\c\\n\\u0001é\"");
    }
}
