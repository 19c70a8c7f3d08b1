//! Compact binary forms of the two large diagnostics: the swimlane records
//! ([`swimlane`], `chip_swimlane_records.bin`) and the dep_gen log ([`deps`],
//! `deps.bin`).
//!
//! At 100k tasks Simpler's JSON forms are 60 MB (swimlane level 4) and up to
//! 130 MB (`deps.json`): formatting and writing them after the run costs
//! several times the run itself. The compact forms hold the runtime's
//! records as they are (host nanoseconds, raw ids, fixed-size records), so
//! writing one is a copy; Simpler's JSON is produced from them on demand
//! (`pto dfx-export`, or any viewer, which accepts either form).
//!
//! Both files share one framing, little-endian throughout:
//!
//! | offset | bytes | field |
//! |---:|---:|---|
//! | 0 | 8 | magic: [`swimlane::MAGIC`] or [`deps::MAGIC`] |
//! | 8 | 4 | format version, [`VERSION`] (which earlier ones a reader takes: below) |
//! | 12 | … | the form's header, then its sections |
//!
//! Version 2 added the generation of Simpler's JSON the run asked for
//! ([`crate::DfxSchema`], [`schema_code`]) to each form's header, so that
//! `pto dfx-export` renders the generation the JSON mode would have written;
//! a version 1 file is a 2026-08 run's. Version 3 added, to the swimlane
//! header only, which time the records hold (host, or the timing model's
//! prediction: `metadata.timing` of the JSON form); a file before it holds
//! host time. Version 4 changed `deps.bin` only: its views and producer
//! regions went into tables of their own, a recurring one written once and
//! referenced by index ([`deps`]); a `deps.bin` before it is refused with an
//! error that says how to get its JSON (the swimlane layout is unchanged).
//!
//! A section is a `u64` record count followed by that many fixed-size
//! records. The reader ([`swimlane::parse`], [`deps::parse`]) checks every
//! count against the bytes that remain before it allocates anything, checks
//! every enumerated field, and refuses trailing bytes; its errors
//! ([`CompactError`]) name the file, the section, the record index and the
//! field. [`sniff`] tells the forms apart by magic, so a viewer needs no
//! file name convention.
//!
//! Whichever way the records come (from a run, or from a compact file),
//! [`swimlane::model`] and [`deps::model`] turn them into the
//! [`crate::swimlane::SwimlaneFile`] / [`crate::deps::DepsFile`] that the
//! JSON writers render: one conversion, so the exported JSON is
//! byte-identical to what the JSON mode writes for the same records.

use std::path::{Path, PathBuf};

pub mod deps;
pub mod swimlane;

/// The format version both forms write; a swimlane reader takes it and every
/// earlier one (1: no generation in the header, so 2026-08; 2: no timing
/// byte, so host time), a deps reader it and every one from
/// [`deps::FIRST_VERSION`]; both refuse any other.
pub const VERSION: u32 = 4;

/// The byte that stands for `schema` in a header: 0 for 2026-08, 1 for 2026-09.
pub const fn schema_code(schema: crate::DfxSchema) -> u8 {
    match schema {
        crate::DfxSchema::V2026_08 => 0,
        crate::DfxSchema::V2026_09 => 1,
    }
}

/// Which compact form a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactKind {
    /// `chip_swimlane_records.bin` ([`swimlane::MAGIC`]).
    Swimlane,
    /// `deps.bin` ([`deps::MAGIC`]).
    Deps,
}

/// The compact form `bytes` starts with, if any.
pub fn kind_of(bytes: &[u8]) -> Option<CompactKind> {
    match bytes.get(..8)? {
        m if m == swimlane::MAGIC => Some(CompactKind::Swimlane),
        m if m == deps::MAGIC => Some(CompactKind::Deps),
        _ => None,
    }
}

/// The compact form of the file at `path` (its first 8 bytes), `None` for a
/// file in another format, one shorter than a magic, or one that cannot be
/// opened (the format's own reader then reports why).
pub fn sniff(path: &Path) -> Option<CompactKind> {
    use std::io::Read as _;
    let mut head = [0u8; 8];
    let mut file = std::fs::File::open(path).ok()?;
    file.read_exact(&mut head).ok()?;
    kind_of(&head)
}

/// A compact file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{}: `{}`: {kind}", path.display(), self.location())]
pub struct CompactError {
    /// The file.
    pub path: PathBuf,
    /// The part of the file: `header`, `workers`, `subtasks`, `phases`,
    /// `orchestrator`, `tasks`, `args`, `edges`, or `file`.
    pub section: &'static str,
    /// The record within the section, when the fault is in one.
    pub index: Option<u64>,
    /// The field at fault (`count`, `kind`, `ndims`, ...), or empty.
    pub field: &'static str,
    /// What is wrong.
    pub kind: CompactErrorKind,
}

impl CompactError {
    /// `section[index].field`, e.g. `phases[3].kind` or `header.version`.
    pub fn location(&self) -> String {
        let mut s = String::from(self.section);
        if let Some(i) = self.index {
            s.push_str(&format!("[{i}]"));
        }
        if !self.field.is_empty() {
            s.push('.');
            s.push_str(self.field);
        }
        s
    }
}

/// What is wrong with a compact file.
#[derive(Debug, thiserror::Error)]
pub enum CompactErrorKind {
    /// Opening or reading the file failed.
    #[error("the file cannot be opened or read: {0}")]
    Io(std::io::Error),
    /// The file is longer than [`crate::MAX_FILE_BYTES`].
    #[error(
        "the file is {bytes} bytes, more than the {} any reader takes",
        crate::MAX_FILE_BYTES
    )]
    TooLarge {
        /// Its length.
        bytes: u64,
    },
    /// The magic is not the expected form's.
    #[error("not a {expected} file (wrong magic)")]
    BadMagic {
        /// The form that was expected.
        expected: &'static str,
    },
    /// A version this reader does not know.
    #[error("format version {found} is not supported (this reader knows 1 to {VERSION}); read it with the pto that wrote it, or a newer one")]
    Version {
        /// The version in the file.
        found: u32,
    },
    /// The file ends inside a field.
    #[error("the file ends early: {needed} more bytes needed, {available} left; the run that wrote it may have been cut short")]
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left.
        available: u64,
    },
    /// A record count larger than the rest of the file can hold.
    #[error("{count} records of {record_bytes} bytes do not fit in the {available} bytes left")]
    Count {
        /// The count read.
        count: u64,
        /// Bytes per record.
        record_bytes: u64,
        /// Bytes left.
        available: u64,
    },
    /// A field holds a value outside its range.
    #[error("value {value} {reason}")]
    Value {
        /// The value read.
        value: u64,
        /// Why it is refused.
        reason: &'static str,
    },
    /// Bytes after the last section.
    #[error("{0} unexpected bytes after the last section")]
    Trailing(u64),
}

/// Opens `path` for a streaming compact reader: a buffered reader and the
/// file's length, refused beyond [`crate::MAX_FILE_BYTES`]. The file is read
/// once, front to back, and never held whole in memory.
pub(crate) fn open(path: &Path) -> Result<(std::io::BufReader<std::fs::File>, u64), CompactError> {
    let err = |kind| CompactError {
        path: path.to_path_buf(),
        section: "header",
        index: None,
        field: "",
        kind,
    };
    let file = std::fs::File::open(path).map_err(|e| err(CompactErrorKind::Io(e)))?;
    let len = file
        .metadata()
        .map_err(|e| err(CompactErrorKind::Io(e)))?
        .len();
    if len > crate::MAX_FILE_BYTES {
        return Err(err(CompactErrorKind::TooLarge { bytes: len }));
    }
    Ok((std::io::BufReader::with_capacity(1 << 20, file), len))
}

/// A bounds-checked little-endian cursor over a compact file of `len` bytes
/// read through `R` (a buffered file, or a byte slice).
pub(crate) struct Cursor<'a, R> {
    reader: R,
    len: u64,
    pos: u64,
    path: &'a Path,
    /// The section being read (for errors).
    pub section: &'static str,
    /// The record being read (for errors).
    pub index: Option<u64>,
}

impl<'a, R: std::io::Read> Cursor<'a, R> {
    pub fn new(reader: R, len: u64, path: &'a Path) -> Self {
        Self {
            reader,
            len,
            pos: 0,
            path,
            section: "header",
            index: None,
        }
    }

    pub fn error(&self, field: &'static str, kind: CompactErrorKind) -> CompactError {
        CompactError {
            path: self.path.to_path_buf(),
            section: self.section,
            index: self.index,
            field,
            kind,
        }
    }

    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    pub fn take<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], CompactError> {
        let truncated = |c: &Self| {
            c.error(
                field,
                CompactErrorKind::Truncated {
                    needed: N as u64,
                    available: c.remaining(),
                },
            )
        };
        if self.remaining() < N as u64 {
            return Err(truncated(self));
        }
        let mut out = [0u8; N];
        match self.reader.read_exact(&mut out) {
            Ok(()) => {
                self.pos += N as u64;
                Ok(out)
            }
            // The file shrank while it was read.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(truncated(self)),
            Err(e) => Err(self.error(field, CompactErrorKind::Io(e))),
        }
    }

    pub fn u8(&mut self, field: &'static str) -> Result<u8, CompactError> {
        Ok(self.take::<1>(field)?[0])
    }

    pub fn u32(&mut self, field: &'static str) -> Result<u32, CompactError> {
        Ok(u32::from_le_bytes(self.take(field)?))
    }

    pub fn u64(&mut self, field: &'static str) -> Result<u64, CompactError> {
        Ok(u64::from_le_bytes(self.take(field)?))
    }

    /// Checks the magic and the version.
    /// Checks the magic and returns the format version (1 ..= [`VERSION`]).
    pub fn framing(&mut self, magic: &[u8; 8], form: &'static str) -> Result<u32, CompactError> {
        if &self.take::<8>("magic")? != magic {
            return Err(self.error("magic", CompactErrorKind::BadMagic { expected: form }));
        }
        let version = self.u32("version")?;
        if !(1..=VERSION).contains(&version) {
            return Err(self.error("version", CompactErrorKind::Version { found: version }));
        }
        Ok(version)
    }

    /// The generation byte of a version-2 header ([`schema_code`]); 2026-08
    /// for a version-1 file, which has none.
    pub fn schema(&mut self, version: u32) -> Result<crate::DfxSchema, CompactError> {
        if version < 2 {
            return Ok(crate::DfxSchema::V2026_08);
        }
        match self.u8("schema")? {
            0 => Ok(crate::DfxSchema::V2026_08),
            1 => Ok(crate::DfxSchema::V2026_09),
            v => Err(self.error(
                "schema",
                CompactErrorKind::Value {
                    value: u64::from(v),
                    reason: "is not a DFX generation (0 2026-08, 1 2026-09)",
                },
            )),
        }
    }

    /// A count of records of `record_bytes` each (32-bit when `wide` is false),
    /// checked against the bytes left so that no allocation exceeds the file.
    pub fn count(&mut self, record_bytes: usize, wide: bool) -> Result<usize, CompactError> {
        let count = if wide {
            self.u64("count")?
        } else {
            u64::from(self.u32("count")?)
        };
        let available = self.remaining();
        let fits = count
            .checked_mul(record_bytes as u64)
            .is_some_and(|need| need <= available);
        if !fits {
            return Err(self.error(
                "count",
                CompactErrorKind::Count {
                    count,
                    record_bytes: record_bytes as u64,
                    available,
                },
            ));
        }
        // `count * record_bytes <= len`, so it fits in a usize.
        Ok(count as usize)
    }

    /// Refuses bytes after the last section.
    pub fn end(&mut self) -> Result<(), CompactError> {
        self.section = "file";
        self.index = None;
        match self.remaining() {
            0 => Ok(()),
            n => Err(self.error("", CompactErrorKind::Trailing(n))),
        }
    }
}

/// A fixed-size record being encoded (no allocation). Every field is a fixed-size array
/// copied to a position the compiler knows once the encoder is inlined, so a record
/// costs a few stores, not a call per field.
pub(crate) struct Enc<const N: usize> {
    buf: [u8; N],
    pos: usize,
}

impl<const N: usize> Enc<N> {
    #[inline(always)]
    pub fn new() -> Self {
        Self {
            buf: [0u8; N],
            pos: 0,
        }
    }

    /// Appends `b`; a record layout longer than `N` is a bug of this module and panics.
    #[inline(always)]
    pub fn bytes<const K: usize>(&mut self, b: &[u8; K]) -> &mut Self {
        self.buf[self.pos..self.pos + K].copy_from_slice(b);
        self.pos += K;
        self
    }

    #[inline(always)]
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.bytes(&[v])
    }

    #[inline(always)]
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }

    #[inline(always)]
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.bytes(&v.to_le_bytes())
    }

    #[inline(always)]
    pub fn done(&self) -> &[u8; N] {
        debug_assert_eq!(self.pos, N, "record layout and size disagree");
        &self.buf
    }
}

/// A diagnostics file ([`crate::behind::Behind`]) fed through staging buffers of
/// [`Sink::CHUNK`] bytes (a few per file, reused; large writes), counting the bytes
/// written.
pub(crate) struct Sink {
    /// Full chunks are written behind the encoder ([`crate::behind`]).
    file: crate::behind::Behind,
    buf: Vec<u8>,
    /// Bytes written so far.
    pub written: u64,
}

impl Sink {
    /// Large enough that handing a chunk to the file's writing thread is cheap, small
    /// enough that the few chunks in flight stay warm ([`crate::behind`]).
    const CHUNK: usize = 1 << 20;

    pub fn create(path: &Path) -> Result<Self, crate::WriteError> {
        Ok(Self {
            file: crate::behind::Behind::create(path)?,
            buf: Vec::with_capacity(Self::CHUNK),
            written: 0,
        })
    }

    pub fn put(&mut self, bytes: &[u8]) -> Result<(), crate::WriteError> {
        self.make_room(bytes.len());
        if bytes.len() > Self::CHUNK {
            self.file.send_owned(bytes.to_vec());
            return Ok(());
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// [`Sink::put`] for one fixed-size record: inlined into the writer's loop, the copy
    /// is a few stores.
    #[inline(always)]
    pub fn put_record<const N: usize>(&mut self, rec: &[u8; N]) -> Result<(), crate::WriteError> {
        const { assert!(N <= Self::CHUNK) };
        self.make_room(N);
        self.buf.extend_from_slice(rec);
        Ok(())
    }

    /// Counts `n` bytes as written and hands the buffer over if they would not fit in it.
    #[inline(always)]
    fn make_room(&mut self, n: usize) {
        self.written += n as u64;
        if self.buf.len() + n > Self::CHUNK {
            self.flush();
        }
    }

    #[cold]
    fn flush(&mut self) {
        self.file.send(&mut self.buf);
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    pub fn commit(self) -> Result<u64, crate::WriteError> {
        self.file.commit(&self.buf)?;
        Ok(self.written)
    }
}

/// The error for an iterator whose length disagrees with what it yielded.
pub(crate) fn length_mismatch(path: &Path, key: &str) -> crate::WriteError {
    crate::WriteError::invalid(
        path,
        crate::InvalidRecord {
            key: key.to_string(),
            reason: String::from("yielded another number of records than its length said"),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records and loose bytes across several staging chunks come out in order, byte for
    /// byte, and the count of bytes written is theirs.
    #[test]
    fn sink_keeps_records_in_order_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.bin");
        let mut sink = Sink::create(&path).unwrap();
        let mut want = Vec::new();
        for i in 0u32..(3 * Sink::CHUNK as u32 / 41 + 7) {
            let rec = *Enc::<41>::new()
                .u8(i as u8)
                .u32(i)
                .u64(u64::from(i) << 20)
                .bytes(&[0xA5; 28])
                .done();
            sink.put_record(&rec).unwrap();
            want.extend_from_slice(&rec);
            if i % 1000 == 0 {
                sink.put(&i.to_le_bytes()).unwrap();
                want.extend_from_slice(&i.to_le_bytes());
            }
        }
        assert_eq!(sink.commit().unwrap(), want.len() as u64);
        assert_eq!(std::fs::read(&path).unwrap(), want);
    }
}
