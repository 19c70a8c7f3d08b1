//! The viewers' fast `deps.json` reader: one streaming pass over the file,
//! validating as it goes, into compact records.
//!
//! A Simpler-shaped `deps.json` of a million tasks is about 0.9 GB; the
//! careful reader ([`crate::deps::parse`]) builds a JSON tree of it (many
//! gigabytes) and even a typed serde pass needs the whole text in memory
//! plus a second pass to validate what it skips. This scanner reads the
//! file in 4 MiB chunks and keeps only the records, so its memory is the
//! records' (a few hundred bytes per task with [`Detail::Full`], a few
//! dozen with [`Detail::Graph`]) plus one chunk.
//!
//! It accepts only what the careful reader reads without a problem, and
//! reads it the same way (the property and fuzz tests compare the two):
//! strict JSON (no trailing commas, no leading zeros, nothing after the
//! root), at most [`MAX_DEPTH`] levels of nesting, every number finite, and
//! every `tasks[]` / `tensors[]` / `edges[]` entry complete and well typed
//! (64-bit ids as integers or decimal strings, negative ones wrapping).
//! It *declines* (returns [`Scanned::Declined`]) on anything else, and
//! also on what it does not bother to model although the careful reader
//! reads it: a byte outside ASCII or a backslash escape in any string, a
//! duplicated key among the ones it reads, `-0`, numbers near the edge of
//! the `f64` range, more than [`MAX_DIMS`] dimensions. A declined file goes
//! to the careful reader, which reports its damage by key. So the fast
//! answer, when there is one, is the careful answer.

use std::collections::HashMap;
use std::io::Read;

use crate::deps::{
    ArgDirection, DepFlags, DepsArg, DepsEdge, DepsFile, DepsTask, DepsTensor, EdgeSource, Overlap,
    ProducerView, ScopeMode, TensorView,
};
use crate::error::{ReadError, ReadErrorKind, MAX_FILE_BYTES};
use crate::task_id::TaskId;

/// The deepest nesting accepted (the careful reader's parser refuses 128).
pub const MAX_DEPTH: usize = 126;
/// The most dimensions a view may have here (more: declined).
pub const MAX_DIMS: usize = 16;
/// Bytes read per chunk.
const CHUNK: usize = 4 << 20;
/// The longest key read as itself (a longer one is no key the scan reads).
const KEY_MAX: usize = 48;

/// How much to keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Tasks and edges (endpoints, arg, source, flags, overlap); args,
    /// tensors and views are validated and dropped.
    Graph,
    /// Everything.
    Full,
}

/// A `tasks[]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanTask {
    /// `task_id`.
    pub task_id: TaskId,
    /// `kernel_ids` (always three entries here).
    pub kernel_ids: [i32; 3],
    /// `block_num` as written.
    pub block_num: u32,
    /// `early_dispatch` (absent: false).
    pub early_dispatch: bool,
    /// `scope` is `"manual"`.
    pub manual: bool,
    /// Its args: `args[first..first + count]` ([`Detail::Full`]).
    pub first_arg: u32,
    /// How many args.
    pub n_args: u32,
}

/// An `args[]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanArg {
    /// `idx`.
    pub idx: i32,
    /// `type`.
    pub direction: ArgDirection,
    /// Its tensor view, an index into `views` (`u32::MAX`: none).
    pub view: u32,
}

/// A `tensors[]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanTensor {
    /// `tensor_id`.
    pub tensor_id: u64,
    /// `buffer_addr`.
    pub buffer_addr: u64,
    /// `version`.
    pub version: i32,
    /// `dtype`, an index into `strings`.
    pub dtype: u32,
    /// `buffer_numel`.
    pub buffer_numel: u64,
}

/// An `edges[]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanEdge {
    /// `pred`.
    pub pred: TaskId,
    /// `succ`.
    pub succ: TaskId,
    /// `arg`.
    pub arg: i32,
    /// `source`.
    pub source: EdgeSource,
    /// `flags`.
    pub flags: DepFlags,
    /// `overlap`.
    pub overlap: Option<Overlap>,
    /// The consumer view (`tensor_id`, `consumer_*`), an index into `views`
    /// (`u32::MAX`: none; always none with [`Detail::Graph`]).
    pub consumer: u32,
    /// The producer view (`producer_*`; its `tensor_id` and `dtype` unused).
    pub producer: u32,
}

/// A tensor view: `shape` and `strides` are `dims[at..at + n]` and
/// `dims[at + n..at + 2n]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanView {
    /// `tensor_id`.
    pub tensor_id: u64,
    /// `dtype` / `consumer_dtype`, an index into `strings` (`u32::MAX` for producer views).
    pub dtype: u32,
    /// `start_offset`.
    pub start_offset: u64,
    /// Where its dimensions start in `dims`.
    pub at: u32,
    /// `shape.len()`.
    pub n_shape: u8,
    /// `strides.len()`.
    pub n_strides: u8,
}

/// What the scan keeps of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepsScan {
    /// `runtime` (2026-09 files; only known values are taken, others decline).
    pub runtime: Option<String>,
    /// `tasks`, in file order.
    pub tasks: Vec<ScanTask>,
    /// Every task's args, in order.
    pub args: Vec<ScanArg>,
    /// `tensors`.
    pub tensors: Vec<ScanTensor>,
    /// `edges`, in file order.
    pub edges: Vec<ScanEdge>,
    /// Views of args and edges.
    pub views: Vec<ScanView>,
    /// Shapes and strides of the views.
    pub dims: Vec<u32>,
    /// Distinct dtype names.
    pub strings: Vec<String>,
    /// How many `tensors[]` entries the file has (kept or not).
    pub n_tensors: usize,
}

/// The outcome of a scan.
#[derive(Debug)]
pub enum Scanned {
    /// The file, read.
    Read(DepsScan),
    /// Not taken (see the module docs): the careful reader decides.
    Declined,
}

impl DepsScan {
    /// A task's args.
    pub fn task_args(&self, t: &ScanTask) -> &[ScanArg] {
        let a = t.first_arg as usize;
        self.args.get(a..a + t.n_args as usize).unwrap_or(&[])
    }

    /// A view's shape.
    pub fn shape(&self, v: &ScanView) -> &[u32] {
        let a = v.at as usize;
        self.dims.get(a..a + usize::from(v.n_shape)).unwrap_or(&[])
    }

    /// A view's strides.
    pub fn strides(&self, v: &ScanView) -> &[u32] {
        let a = v.at as usize + usize::from(v.n_shape);
        self.dims
            .get(a..a + usize::from(v.n_strides))
            .unwrap_or(&[])
    }

    /// View `i`, if any (`u32::MAX` is none).
    pub fn view(&self, i: u32) -> Option<&ScanView> {
        self.views.get(i as usize)
    }

    /// String `i` (a dtype name), or `""`.
    pub fn string(&self, i: u32) -> &str {
        self.strings.get(i as usize).map_or("", String::as_str)
    }

    /// The same content in the careful reader's types (tests, and the
    /// viewers' fallback the other way round: [`DepsScan::from_file`]).
    pub fn to_file(&self) -> DepsFile {
        let view = |i: u32| {
            self.view(i).map(|v| TensorView {
                tensor_id: v.tensor_id,
                dtype: self.string(v.dtype).to_string(),
                shape: self.shape(v).to_vec(),
                start_offset: v.start_offset,
                strides: self.strides(v).to_vec(),
            })
        };
        DepsFile {
            runtime: self.runtime.clone(),
            tasks: self
                .tasks
                .iter()
                .map(|t| DepsTask {
                    task_id: t.task_id,
                    scope: if t.manual {
                        ScopeMode::Manual
                    } else {
                        ScopeMode::Auto
                    },
                    early_dispatch: t.early_dispatch,
                    kernel_ids: t.kernel_ids.to_vec(),
                    block_num: t.block_num,
                    args: self
                        .task_args(t)
                        .iter()
                        .map(|a| DepsArg {
                            idx: a.idx,
                            direction: a.direction,
                            tensor: view(a.view),
                        })
                        .collect(),
                })
                .collect(),
            tensors: self
                .tensors
                .iter()
                .map(|t| DepsTensor {
                    tensor_id: t.tensor_id,
                    buffer_addr: t.buffer_addr,
                    version: t.version,
                    dtype: self.string(t.dtype).to_string(),
                    buffer_numel: t.buffer_numel,
                })
                .collect(),
            edges: self
                .edges
                .iter()
                .map(|e| DepsEdge {
                    pred: e.pred,
                    succ: e.succ,
                    arg: e.arg,
                    source: e.source,
                    flags: e.flags,
                    overlap: e.overlap,
                    consumer: view(e.consumer),
                    producer: self.view(e.producer).map(|v| ProducerView {
                        shape: self.shape(v).to_vec(),
                        start_offset: v.start_offset,
                        strides: self.strides(v).to_vec(),
                    }),
                })
                .collect(),
        }
    }

    /// What [`DepsScan::from_file`] makes of `records.to_model()` (the same
    /// content; dtype names may be numbered in another order), built
    /// straight from compact records.
    pub fn from_compact(records: &crate::compact::deps::DepsRecords) -> Self {
        use crate::compact::deps::DepsVisitor;
        let mut b = CompactScan::new(Detail::Full);
        for (i, t) in records.tasks.iter().enumerate() {
            b.task(i, &t.task, t.args.len() as u32);
        }
        for a in records.tasks.iter().flat_map(|t| &t.args) {
            b.arg(a);
        }
        for (i, e) in records.edges.iter().enumerate() {
            b.edge(i, e);
        }
        b.finish()
    }

    /// [`DepsScan::from_compact`] of the file at `path`, streamed: memory is
    /// the scan's, not the file's or the records'. With [`Detail::Graph`]
    /// it keeps what [`scan_file`] keeps at that detail (no args, views or
    /// tensors; the tensors counted).
    pub fn read_compact(
        path: &std::path::Path,
        detail: Detail,
    ) -> Result<Self, crate::compact::CompactError> {
        let mut b = CompactScan::new(detail);
        crate::compact::deps::visit(path, &mut b)?;
        Ok(b.finish())
    }

    /// The compact form of a file the careful reader read (views with more
    /// than 255 dimensions are cut; [`MAX_DIMS`] is far below that anyway).
    pub fn from_file(file: &DepsFile) -> Self {
        let mut out = Self::default();
        let mut interned: HashMap<String, u32> = HashMap::new();
        let mut intern = |out: &mut Self, s: &str| -> u32 {
            *interned.entry(s.to_string()).or_insert_with(|| {
                out.strings.push(s.to_string());
                (out.strings.len() - 1) as u32
            })
        };
        let add_view = |out: &mut Self,
                        tensor_id: u64,
                        dtype: u32,
                        start_offset: u64,
                        shape: &[u32],
                        strides: &[u32]|
         -> u32 {
            let shape = &shape[..shape.len().min(255)];
            let strides = &strides[..strides.len().min(255)];
            let at = out.dims.len() as u32;
            out.dims.extend_from_slice(shape);
            out.dims.extend_from_slice(strides);
            out.views.push(ScanView {
                tensor_id,
                dtype,
                start_offset,
                at,
                n_shape: shape.len() as u8,
                n_strides: strides.len() as u8,
            });
            (out.views.len() - 1) as u32
        };
        for t in &file.tasks {
            let first_arg = out.args.len() as u32;
            for a in &t.args {
                let view = match &a.tensor {
                    Some(v) => {
                        let d = intern(&mut out, &v.dtype);
                        add_view(
                            &mut out,
                            v.tensor_id,
                            d,
                            v.start_offset,
                            &v.shape,
                            &v.strides,
                        )
                    }
                    None => u32::MAX,
                };
                out.args.push(ScanArg {
                    idx: a.idx,
                    direction: a.direction,
                    view,
                });
            }
            let mut kernel_ids = [-1; 3];
            for (slot, k) in kernel_ids.iter_mut().zip(&t.kernel_ids) {
                *slot = *k;
            }
            out.tasks.push(ScanTask {
                task_id: t.task_id,
                kernel_ids,
                block_num: t.block_num,
                early_dispatch: t.early_dispatch,
                manual: t.scope == ScopeMode::Manual,
                first_arg,
                n_args: t.args.len() as u32,
            });
        }
        out.n_tensors = file.tensors.len();
        for t in &file.tensors {
            let dtype = intern(&mut out, &t.dtype);
            out.tensors.push(ScanTensor {
                tensor_id: t.tensor_id,
                buffer_addr: t.buffer_addr,
                version: t.version,
                dtype,
                buffer_numel: t.buffer_numel,
            });
        }
        for e in &file.edges {
            let consumer = match &e.consumer {
                Some(v) => {
                    let d = intern(&mut out, &v.dtype);
                    add_view(
                        &mut out,
                        v.tensor_id,
                        d,
                        v.start_offset,
                        &v.shape,
                        &v.strides,
                    )
                }
                None => u32::MAX,
            };
            let producer = match &e.producer {
                Some(p) => add_view(&mut out, 0, u32::MAX, p.start_offset, &p.shape, &p.strides),
                None => u32::MAX,
            };
            out.edges.push(ScanEdge {
                pred: e.pred,
                succ: e.succ,
                arg: e.arg,
                source: e.source,
                flags: e.flags,
                overlap: e.overlap,
                consumer,
                producer,
            });
        }
        out
    }
}

/// Builds a [`DepsScan`] from a compact log as it streams by.
struct CompactScan {
    full: bool,
    out: DepsScan,
    interned: HashMap<u8, u32>,
    seen: std::collections::HashSet<u64>,
    /// Per task with arguments still to come: kept (not an allocation task),
    /// its argument count, how many are still to come.
    owed: std::collections::VecDeque<(bool, u32, u32)>,
    /// Arguments of the kept tasks so far (tasks stream before arguments).
    next_arg: u32,
}

impl CompactScan {
    fn new(detail: Detail) -> Self {
        Self {
            full: detail == Detail::Full,
            out: DepsScan::default(),
            interned: HashMap::new(),
            seen: std::collections::HashSet::new(),
            owed: std::collections::VecDeque::new(),
            next_arg: 0,
        }
    }

    fn intern(&mut self, code: u8) -> u32 {
        let strings = &mut self.out.strings;
        *self.interned.entry(code).or_insert_with(|| {
            strings.push(crate::DataType::name_of_code(u32::from(code)).to_string());
            (strings.len() - 1) as u32
        })
    }

    fn view(&mut self, tensor_id: u64, dtype: u32, v: &crate::compact::deps::View) -> u32 {
        let n = usize::from(v.ndims).min(crate::compact::deps::MAX_DIMS);
        let at = self.out.dims.len() as u32;
        self.out.dims.extend_from_slice(&v.shapes[..n]);
        self.out.dims.extend_from_slice(&v.strides[..n]);
        self.out.views.push(ScanView {
            tensor_id,
            dtype,
            start_offset: v.start_offset,
            at,
            n_shape: n as u8,
            n_strides: n as u8,
        });
        (self.out.views.len() - 1) as u32
    }

    /// The view of a tensor argument or edge consumer, noting its tensor
    /// the first time it is seen (as `deps.json`'s `tensors[]`).
    fn tensor_view(&mut self, v: &crate::compact::deps::View) -> u32 {
        let id = crate::deps::tensor_id(v.addr, v.version);
        if !self.full {
            // As the JSON scan at graph detail: dtype names kept, tensors counted.
            self.intern(v.dtype);
            if self.seen.insert(id) {
                self.out.n_tensors += 1;
            }
            return u32::MAX;
        }
        let dtype = self.intern(v.dtype);
        if self.seen.insert(id) {
            let es = crate::DataType::from_code(u32::from(v.dtype)).map_or(1, |d| d.elem_size());
            self.out.tensors.push(ScanTensor {
                tensor_id: id,
                buffer_addr: v.addr,
                version: v.version,
                dtype,
                buffer_numel: v.buffer_bytes / (es as u64).max(1),
            });
        }
        self.view(id, dtype, v)
    }

    fn finish(mut self) -> DepsScan {
        if self.full {
            self.out.n_tensors = self.out.tensors.len();
        }
        self.out
    }
}

impl crate::compact::deps::DepsVisitor for CompactScan {
    fn task(&mut self, _index: usize, t: &crate::compact::deps::Task, n_args: u32) {
        if !t.is_alloc {
            self.out.tasks.push(ScanTask {
                task_id: TaskId(t.task),
                kernel_ids: t.kernel_ids,
                block_num: t.block_num,
                early_dispatch: t.early_dispatch,
                manual: t.manual_scope,
                first_arg: self.next_arg,
                n_args: if self.full { n_args } else { 0 },
            });
            if self.full {
                self.next_arg = self.next_arg.saturating_add(n_args);
            }
        }
        if n_args > 0 {
            self.owed.push_back((!t.is_alloc, n_args, n_args));
        }
    }

    fn arg(&mut self, a: &crate::compact::deps::Arg) {
        let Some((keep, n, left)) = self.owed.front_mut() else {
            return;
        };
        let (keep, idx) = (*keep, (*n - *left) as i32);
        *left -= 1;
        if *left == 0 {
            self.owed.pop_front();
        }
        if !keep {
            return;
        }
        if !self.full {
            if let Some(v) = &a.view {
                self.tensor_view(v);
            }
            return;
        }
        let view = match &a.view {
            Some(v) => self.tensor_view(v),
            None => u32::MAX,
        };
        self.out.args.push(ScanArg {
            idx,
            direction: a.ty.direction(),
            view,
        });
    }

    fn edge(&mut self, _index: usize, e: &crate::compact::deps::Edge) {
        let consumer = match &e.consumer {
            Some(v) => self.tensor_view(v),
            None => u32::MAX,
        };
        let producer = match &e.producer {
            Some(g) if self.full => {
                let v = crate::compact::deps::View {
                    start_offset: g.start_offset,
                    ndims: g.ndims,
                    shapes: g.shapes,
                    strides: g.strides,
                    ..Default::default()
                };
                self.view(0, u32::MAX, &v)
            }
            _ => u32::MAX,
        };
        self.out.edges.push(ScanEdge {
            pred: TaskId(e.pred),
            succ: TaskId(e.succ),
            arg: e.arg,
            source: e.source,
            flags: DepFlags {
                wait: e.wait,
                retain: e.retain,
            },
            overlap: e.overlap,
            consumer,
            producer,
        });
    }
}

/// Scans the file at `path` (at most [`MAX_FILE_BYTES`], as the careful reader).
pub fn scan_file(path: &std::path::Path, detail: Detail) -> Result<Scanned, ReadError> {
    let io = |error| ReadError::new(path, ReadErrorKind::Io { error });
    let file = std::fs::File::open(path).map_err(io)?;
    if let Some(len) = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
        .filter(|&len| len > MAX_FILE_BYTES)
    {
        return Err(ReadError::new(
            path,
            ReadErrorKind::TooLarge {
                len,
                limit: MAX_FILE_BYTES,
            },
        ));
    }
    let mut scanner = Scanner::new(file, detail);
    let result = scanner.root();
    if let Some(e) = scanner.src.error.take() {
        return Err(io(e));
    }
    if scanner.src.total > MAX_FILE_BYTES {
        return Err(ReadError::new(
            path,
            ReadErrorKind::TooLarge {
                len: scanner.src.total,
                limit: MAX_FILE_BYTES,
            },
        ));
    }
    Ok(match result {
        Ok(()) => Scanned::Read(scanner.out),
        Err(Decline) => Scanned::Declined,
    })
}

/// Scans file content already in memory.
pub fn scan_bytes(bytes: &[u8], detail: Detail) -> Scanned {
    let mut scanner = Scanner::new(bytes, detail);
    match scanner.root() {
        Ok(()) if scanner.src.error.is_none() => Scanned::Read(scanner.out),
        _ => Scanned::Declined,
    }
}

/// Bytes that end the plain part of a string: `"`, `\\`, control characters and
/// everything outside ASCII.
static STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i < 0x20 || i >= 0x80 || i == b'"' as usize || i == b'\\' as usize;
        i += 1;
    }
    t
};

/// The index of the first byte of `s` that [`STRING_STOP`] holds, eight bytes at a time:
/// a byte below 0x20 or from 0x80, `"` or `\`.
///
/// Within a word, the lowest flagged byte is exact: every byte below it is printable ASCII,
/// so no subtraction borrows into it (flags above it may be spurious, and are not read).
fn find_stop(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let has_zero = |y: u64| y.wrapping_sub(LO) & !y & HI;
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(word);
        let x = u64::from_le_bytes(bytes);
        let control_or_high = (x.wrapping_sub(LO * 0x20) | x) & HI;
        let hit = control_or_high
            | has_zero(x ^ (LO * u64::from(b'"')))
            | has_zero(x ^ (LO * u64::from(b'\\')));
        if hit != 0 {
            return Some(at + (hit.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = words.remainder();
    tail.iter()
        .position(|&b| STRING_STOP[usize::from(b)])
        .map(|i| at + i)
}

/// A plain integer literal at the start of `b` followed by one of `,`, `]`, `}` (present
/// in `b`): its value as [`Src::number`] reads it and its length. `None` for anything
/// else (a fraction, an exponent, a leading zero before a digit, `-0`, more than 19
/// digits, whitespace, the end of `b`), which [`Src::number`] then decides.
#[inline]
fn int_prefix(b: &[u8]) -> Option<(Num, usize)> {
    let negative = b.first() == Some(&b'-');
    let digits_at = usize::from(negative);
    let mut i = digits_at;
    let mut v: u64 = 0;
    while let Some(&d @ b'0'..=b'9') = b.get(i) {
        if i - digits_at == 19 {
            return None;
        }
        v = v * 10 + u64::from(d - b'0');
        i += 1;
    }
    let n = i - digits_at;
    let leading_zero = n > 1 && b[digits_at] == b'0';
    if n == 0 || leading_zero || !matches!(b.get(i), Some(b',' | b']' | b'}')) {
        return None;
    }
    let num = match (negative, v) {
        (false, v) => Num::Uint(v),
        (true, 0) => return None,
        // 19 digits: at most 9,999,999,999,999,999,999 < 2^64; only up to 2^63 wraps.
        (true, v) if v <= 1 << 63 => Num::Int(v.wrapping_neg() as i64),
        (true, _) => Num::Other,
    };
    Some((num, i))
}

/// A decimal id string as the careful reader takes it: digits, optionally after a `-`
/// (then within `i64` and wrapped to `u64`), otherwise within `u64`.
fn decimal_id(text: &[u8]) -> Option<u64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    if negative {
        // -(2^63) is the most negative i64.
        (v <= 1 << 63).then(|| v.wrapping_neg())
    } else {
        Some(v)
    }
}

/// The scan gives up (see the module docs).
#[derive(Debug)]
struct Decline;

type Step<T = ()> = Result<T, Decline>;

/// A chunked byte source.
struct Src<R> {
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    total: u64,
    error: Option<std::io::Error>,
}

impl<R: Read> Src<R> {
    #[inline]
    fn peek(&mut self) -> Option<u8> {
        if self.pos < self.end {
            Some(self.buf[self.pos])
        } else {
            self.refill();
            (self.pos < self.end).then(|| self.buf[self.pos])
        }
    }

    #[cold]
    fn refill(&mut self) {
        if self.eof {
            return;
        }
        if self.buf.is_empty() {
            self.buf = vec![0; CHUNK];
        }
        self.pos = 0;
        self.end = 0;
        loop {
            match self.reader.read(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => {
                    self.end = n;
                    self.total += n as u64;
                    if self.total > MAX_FILE_BYTES {
                        self.end = 0;
                        self.eof = true;
                    }
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.error = Some(e);
                    self.eof = true;
                    return;
                }
            }
        }
    }

    #[inline]
    fn bump(&mut self) {
        self.pos += 1;
    }

    #[inline]
    fn ws(&mut self) {
        loop {
            while self.pos < self.end {
                match self.buf[self.pos] {
                    b' ' | b'\n' | b'\r' | b'\t' => self.pos += 1,
                    _ => return,
                }
            }
            self.refill();
            if self.pos >= self.end {
                return;
            }
        }
    }

    /// Skips whitespace; the next byte, consumed, must be `b`.
    #[inline]
    fn expect(&mut self, b: u8) -> Step {
        self.ws();
        if self.peek() == Some(b) {
            self.bump();
            Ok(())
        } else {
            Err(Decline)
        }
    }

    /// The body of a string after its opening quote, up to and including
    /// the closing quote; the first `keep` bytes are copied into `out`
    /// (`None` when the string is longer). Only plain ASCII without escapes
    /// or control characters is taken.
    fn string_body(&mut self, out: &mut Vec<u8>, keep: usize) -> Step<bool> {
        out.clear();
        let mut fits = true;
        loop {
            let chunk = &self.buf[self.pos..self.end];
            let stop = find_stop(chunk);
            let take = stop.unwrap_or(chunk.len());
            if fits {
                if out.len() + take <= keep {
                    out.extend_from_slice(&chunk[..take]);
                } else {
                    fits = false;
                }
            }
            match stop {
                Some(i) => {
                    let b = chunk[i];
                    self.pos += i + 1;
                    return if b == b'"' { Ok(fits) } else { Err(Decline) };
                }
                None => {
                    self.pos = self.end;
                    self.refill();
                    if self.pos >= self.end {
                        return Err(Decline);
                    }
                }
            }
        }
    }

    fn literal(&mut self, word: &[u8]) -> Step {
        for &b in word {
            if self.peek() != Some(b) {
                return Err(Decline);
            }
            self.bump();
        }
        Ok(())
    }

    /// A key after its opening quote, when it ends within the current chunk and there
    /// are at least [`KEY_MAX`] bytes left in it (the common case): its length, its bytes
    /// the first ones of `out` (copied as one fixed-size block). `None`, with nothing
    /// consumed, otherwise, or when it holds a byte a string may not have here, or is
    /// longer than [`KEY_MAX`] ([`Src::string_body`] decides those).
    #[inline]
    fn short_key(&mut self, out: &mut [u8; KEY_MAX]) -> Option<usize> {
        let chunk = self.buf.get(self.pos..self.end)?;
        let head = chunk.get(..KEY_MAX)?;
        let i = find_stop(head)?;
        if head[i] != b'"' {
            return None;
        }
        out.copy_from_slice(head);
        self.pos += i + 1;
        Some(i)
    }

    /// A decimal id string after its opening quote, when it ends within the current
    /// chunk: its value (`Err` if it is not one), read in place. `None`, with nothing
    /// consumed, when the string does not end in this chunk or holds a byte a string may
    /// not have here.
    #[inline]
    fn decimal_in_place(&mut self) -> Option<Step<u64>> {
        let chunk = self.buf.get(self.pos..self.end)?;
        let i = find_stop(chunk)?;
        if chunk[i] != b'"' {
            return None;
        }
        let value = decimal_id(&chunk[..i]).ok_or(Decline);
        self.pos += i + 1;
        Some(value)
    }

    /// A number, by JSON's grammar.
    fn number(&mut self) -> Step<Num> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.bump();
        }
        let mut magnitude: u64 = 0;
        let mut overflow = false;
        let mut int_digits = 0usize;
        match self.peek() {
            Some(b'0') => {
                self.bump();
                int_digits = 1;
            }
            Some(b'1'..=b'9') => {
                while let Some(d @ b'0'..=b'9') = self.peek() {
                    self.bump();
                    int_digits += 1;
                    if int_digits > 300 {
                        return Err(Decline);
                    }
                    match magnitude
                        .checked_mul(10)
                        .and_then(|m| m.checked_add(u64::from(d - b'0')))
                    {
                        Some(m) => magnitude = m,
                        None => overflow = true,
                    }
                }
            }
            _ => return Err(Decline),
        }
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.bump();
            float = true;
            let mut any = false;
            while let Some(b'0'..=b'9') = self.peek() {
                self.bump();
                any = true;
            }
            if !any {
                return Err(Decline);
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            float = true;
            let exp_negative = match self.peek() {
                Some(b'-') => {
                    self.bump();
                    true
                }
                Some(b'+') => {
                    self.bump();
                    false
                }
                _ => false,
            };
            let mut exp: u64 = 0;
            let mut any = false;
            while let Some(d @ b'0'..=b'9') = self.peek() {
                self.bump();
                any = true;
                exp = (exp * 10 + u64::from(d - b'0')).min(100_000);
            }
            // Near the edge of the f64 range: the careful reader decides.
            if !any || exp > 300 || (!exp_negative && int_digits as u64 + exp > 300) {
                return Err(Decline);
            }
        }
        if float || overflow {
            return Ok(Num::Other);
        }
        if negative {
            if magnitude == 0 {
                // "-0": not worth modelling.
                return Err(Decline);
            }
            return Ok(if magnitude <= 1u64 << 63 {
                Num::Int(magnitude.wrapping_neg() as i64)
            } else {
                Num::Other
            });
        }
        Ok(Num::Uint(magnitude))
    }
}

/// A number's value as the careful reader's tree holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Num {
    /// A non-negative integer literal within u64.
    Uint(u64),
    /// A negative integer literal within i64.
    Int(i64),
    /// A float, or an integer beyond 64 bits (a float in the tree).
    Other,
}

impl Num {
    fn u64_lenient(self) -> Step<u64> {
        match self {
            Num::Uint(v) => Ok(v),
            Num::Int(v) => Ok(v as u64),
            Num::Other => Err(Decline),
        }
    }

    fn i32(self) -> Step<i32> {
        match self {
            Num::Uint(v) => i32::try_from(v).map_err(|_| Decline),
            Num::Int(v) => i32::try_from(v).map_err(|_| Decline),
            Num::Other => Err(Decline),
        }
    }

    fn u32(self) -> Step<u32> {
        match self {
            Num::Uint(v) => u32::try_from(v).map_err(|_| Decline),
            _ => Err(Decline),
        }
    }
}

/// Tracks which keys of an object were seen (a repeat declines).
struct Seen(u32);

impl Seen {
    fn mark(&mut self, bit: u32) -> Step {
        if self.0 & (1 << bit) != 0 {
            return Err(Decline);
        }
        self.0 |= 1 << bit;
        Ok(())
    }

    fn has(&self, bit: u32) -> bool {
        self.0 & (1 << bit) != 0
    }
}

/// A view being read: its fields may come in any order.
#[derive(Default)]
struct PendingView {
    tensor_id: Option<u64>,
    dtype: Option<u32>,
    start_offset: Option<u64>,
    shape: Option<(usize, usize)>,
    strides: Option<(usize, usize)>,
}

struct Scanner<R> {
    src: Src<R>,
    detail: Detail,
    out: DepsScan,
    /// One key buffer per nesting depth, reused from object to object.
    keys: Vec<Vec<u8>>,
    scratch: Vec<u8>,
    /// Dimensions of the views of the current object, before they are kept.
    dims: Vec<u32>,
    interned: HashMap<Vec<u8>, u32>,
    /// The dtype [`Scanner::dtype`] returned last.
    last_dtype: Option<u32>,
}

impl<R: Read> Scanner<R> {
    fn new(reader: R, detail: Detail) -> Self {
        Self {
            src: Src {
                reader,
                buf: Vec::new(),
                pos: 0,
                end: 0,
                eof: false,
                total: 0,
                error: None,
            },
            detail,
            out: DepsScan::default(),
            keys: vec![Vec::new(); MAX_DEPTH + 1],
            scratch: Vec::with_capacity(64),
            dims: Vec::with_capacity(32),
            interned: HashMap::new(),
            last_dtype: None,
        }
    }

    fn root(&mut self) -> Step {
        self.src.expect(b'{')?;
        let mut seen = Seen(0);
        self.members(1, |s, key| match key {
            b"tasks" => {
                seen.mark(0)?;
                s.tasks()
            }
            b"tensors" => {
                seen.mark(1)?;
                s.tensors()
            }
            b"edges" => {
                seen.mark(2)?;
                s.edges()
            }
            b"runtime" => {
                seen.mark(3)?;
                s.runtime()
            }
            // A key of no generation we know: the careful reader warns about it.
            _ => Err(Decline),
        })?;
        if !(seen.has(0) && seen.has(1) && seen.has(2)) {
            return Err(Decline);
        }
        self.src.ws();
        if self.src.peek().is_some() || self.src.error.is_some() {
            return Err(Decline);
        }
        Ok(())
    }

    /// `runtime`'s value: one of [`crate::schema::KNOWN_RUNTIMES`] (another
    /// declines, so that the careful reader warns).
    fn runtime(&mut self) -> Step {
        self.src.expect(b'"')?;
        let mut text = std::mem::take(&mut self.scratch);
        let fits = self.src.string_body(&mut text, 64)?;
        let known = crate::schema::KNOWN_RUNTIMES
            .iter()
            .find(|r| fits && r.as_bytes() == text.as_slice());
        self.scratch = text;
        self.out.runtime = Some(known.ok_or(Decline)?.to_string());
        Ok(())
    }

    /// The members of an object whose `{` was read, each value handled by
    /// `member(self, key)`; `depth` is the object's.
    fn members(&mut self, depth: usize, mut member: impl FnMut(&mut Self, &[u8]) -> Step) -> Step {
        if depth > MAX_DEPTH {
            return Err(Decline);
        }
        self.src.ws();
        if self.src.peek() == Some(b'}') {
            self.src.bump();
            return Ok(());
        }
        loop {
            self.src.expect(b'"')?;
            let mut key = [0u8; KEY_MAX];
            let n = match self.src.short_key(&mut key) {
                Some(n) => n,
                None => {
                    let mut long = std::mem::take(&mut self.keys[depth]);
                    let fits = self.src.string_body(&mut long, KEY_MAX);
                    let n = long.len();
                    key[..n.min(KEY_MAX)].copy_from_slice(&long[..n.min(KEY_MAX)]);
                    self.keys[depth] = long;
                    if fits? {
                        n
                    } else {
                        // No key read here is this long: any such key is skipped.
                        key[0] = b'?';
                        1
                    }
                }
            };
            self.src.expect(b':')?;
            self.src.ws();
            member(self, &key[..n])?;
            self.src.ws();
            match self.src.peek() {
                Some(b',') => self.src.bump(),
                Some(b'}') => {
                    self.src.bump();
                    return Ok(());
                }
                _ => return Err(Decline),
            }
        }
    }

    /// The elements of an array: `[` is read here; each element by `item`.
    fn elements(&mut self, depth: usize, mut item: impl FnMut(&mut Self) -> Step) -> Step {
        if depth > MAX_DEPTH {
            return Err(Decline);
        }
        self.src.expect(b'[')?;
        self.src.ws();
        if self.src.peek() == Some(b']') {
            self.src.bump();
            return Ok(());
        }
        loop {
            self.src.ws();
            item(self)?;
            self.src.ws();
            match self.src.peek() {
                Some(b',') => self.src.bump(),
                Some(b']') => {
                    self.src.bump();
                    return Ok(());
                }
                _ => return Err(Decline),
            }
        }
    }

    /// Any value, validated and dropped; `depth` is its own if a container.
    fn skip_value(&mut self, depth: usize) -> Step {
        self.src.ws();
        match self.src.peek() {
            Some(b'{') => {
                self.src.bump();
                self.members(depth, |s, _| s.skip_value(depth + 1))
            }
            Some(b'[') => self.elements(depth, |s| s.skip_value(depth + 1)),
            Some(b'"') => {
                self.src.bump();
                let mut scratch = std::mem::take(&mut self.scratch);
                let res = self.src.string_body(&mut scratch, 0).map(|_| ());
                self.scratch = scratch;
                res
            }
            Some(b't') => self.src.literal(b"true"),
            Some(b'f') => self.src.literal(b"false"),
            Some(b'n') => self.src.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.src.number().map(|_| ()),
            _ => Err(Decline),
        }
    }

    fn num(&mut self) -> Step<Num> {
        if let Some((num, len)) = self
            .src
            .buf
            .get(self.src.pos..self.src.end)
            .and_then(int_prefix)
        {
            self.src.pos += len;
            return Ok(num);
        }
        match self.src.peek() {
            Some(b'-' | b'0'..=b'9') => self.src.number(),
            _ => Err(Decline),
        }
    }

    /// A short string value into `self.scratch` (longer ones decline).
    fn short_string(&mut self) -> Step {
        self.src.expect(b'"')?;
        self.short_string_body()
    }

    /// [`Scanner::short_string`] after the opening quote.
    fn short_string_body(&mut self) -> Step {
        let mut scratch = std::mem::take(&mut self.scratch);
        let res = self.src.string_body(&mut scratch, 256);
        self.scratch = scratch;
        if res? {
            Ok(())
        } else {
            Err(Decline)
        }
    }

    /// A 64-bit id: an integer, or a decimal string (negative ones wrap).
    fn u64_lenient(&mut self) -> Step<u64> {
        if self.src.peek() != Some(b'"') {
            return self.num()?.u64_lenient();
        }
        self.src.bump();
        if let Some(value) = self.src.decimal_in_place() {
            return value;
        }
        self.short_string_body()?;
        decimal_id(&self.scratch).ok_or(Decline)
    }

    fn boolean(&mut self) -> Step<bool> {
        match self.src.peek() {
            Some(b't') => self.src.literal(b"true").map(|_| true),
            Some(b'f') => self.src.literal(b"false").map(|_| false),
            _ => Err(Decline),
        }
    }

    /// An interned dtype name.
    fn dtype(&mut self) -> Step<u32> {
        self.short_string()?;
        // Most views repeat the previous view's dtype: no hash then.
        if let Some(&last) = self.last_dtype.as_ref() {
            if self.out.strings[last as usize].as_bytes() == self.scratch.as_slice() {
                return Ok(last);
            }
        }
        if let Some(&i) = self.interned.get(&self.scratch) {
            self.last_dtype = Some(i);
            return Ok(i);
        }
        if self.interned.len() >= 4096 {
            return Err(Decline);
        }
        let text = String::from_utf8(self.scratch.clone()).map_err(|_| Decline)?;
        let i = self.out.strings.len() as u32;
        self.out.strings.push(text);
        self.interned.insert(self.scratch.clone(), i);
        self.last_dtype = Some(i);
        Ok(i)
    }

    /// A `[u32, ...]` list into `self.dims`; its range there.
    fn dims_list(&mut self, depth: usize) -> Step<(usize, usize)> {
        let start = self.dims.len();
        if depth <= MAX_DEPTH {
            if let Some(len) = self.dims_in_place() {
                self.src.pos += len;
                return Ok((start, self.dims.len()));
            }
            self.dims.truncate(start);
        }
        self.elements(depth, |s| {
            let v = s.num()?.u32()?;
            if s.dims.len() - start >= MAX_DIMS {
                return Err(Decline);
            }
            s.dims.push(v);
            Ok(())
        })?;
        Ok((start, self.dims.len()))
    }

    /// A compact `[u32,...]` list at the current position, within the current chunk
    /// (no whitespace, plain integers): its elements pushed to `self.dims`, its length
    /// returned. `None` (the caller truncates `dims`) for anything else, which the general
    /// path then reads or declines.
    #[inline]
    fn dims_in_place(&mut self) -> Option<usize> {
        let b = self.src.buf.get(self.src.pos..self.src.end)?;
        if b.first() != Some(&b'[') {
            return None;
        }
        if b.get(1) == Some(&b']') {
            return Some(2);
        }
        let start = self.dims.len();
        let mut i = 1;
        loop {
            let (Num::Uint(v), len) = int_prefix(&b[i..])? else {
                return None;
            };
            if self.dims.len() - start >= MAX_DIMS {
                return None;
            }
            self.dims.push(u32::try_from(v).ok()?);
            i += len;
            match b[i] {
                b',' => i += 1,
                b']' => return Some(i + 1),
                _ => return None,
            }
        }
    }

    /// Keeps a complete pending view (with [`Detail::Full`]); `u32::MAX` otherwise.
    fn keep_view(&mut self, v: &PendingView, dtype: u32) -> u32 {
        if self.detail != Detail::Full {
            return u32::MAX;
        }
        let (Some(start_offset), Some((a, b)), Some((c, d))) = (v.start_offset, v.shape, v.strides)
        else {
            return u32::MAX;
        };
        let at = self.out.dims.len() as u32;
        self.out.dims.extend_from_slice(&self.dims[a..b]);
        self.out.dims.extend_from_slice(&self.dims[c..d]);
        self.out.views.push(ScanView {
            tensor_id: v.tensor_id.unwrap_or(0),
            dtype,
            start_offset,
            at,
            n_shape: (b - a) as u8,
            n_strides: (d - c) as u8,
        });
        (self.out.views.len() - 1) as u32
    }

    fn tasks(&mut self) -> Step {
        self.elements(2, |s| {
            s.src.expect(b'{')?;
            let mut seen = Seen(0);
            let mut task = ScanTask {
                task_id: TaskId(0),
                kernel_ids: [-1; 3],
                block_num: 0,
                early_dispatch: false,
                manual: false,
                first_arg: s.out.args.len() as u32,
                n_args: 0,
            };
            s.members(3, |s, key| match key {
                b"task_id" => {
                    seen.mark(0)?;
                    task.task_id = TaskId(s.u64_lenient()?);
                    Ok(())
                }
                b"scope" => {
                    seen.mark(1)?;
                    s.short_string()?;
                    task.manual = match &s.scratch[..] {
                        b"auto" => false,
                        b"manual" => true,
                        _ => return Err(Decline),
                    };
                    Ok(())
                }
                b"early_dispatch" => {
                    seen.mark(2)?;
                    task.early_dispatch = s.boolean()?;
                    Ok(())
                }
                b"kernel_ids" => {
                    seen.mark(3)?;
                    let mut n = 0;
                    s.elements(4, |s| {
                        let k = s.num()?.i32()?;
                        if n >= 3 {
                            return Err(Decline);
                        }
                        task.kernel_ids[n] = k;
                        n += 1;
                        Ok(())
                    })?;
                    if n == 3 {
                        Ok(())
                    } else {
                        Err(Decline)
                    }
                }
                b"block_num" => {
                    seen.mark(4)?;
                    task.block_num = s.num()?.u32()?;
                    Ok(())
                }
                b"args" => {
                    seen.mark(5)?;
                    // A repeated "args" key declines, so the task's args are contiguous.
                    task.first_arg = s.out.args.len() as u32;
                    s.elements(4, |s| s.arg())?;
                    task.n_args = s.out.args.len() as u32 - task.first_arg;
                    Ok(())
                }
                _ => s.skip_value(4),
            })?;
            if !(seen.has(0) && seen.has(1) && seen.has(3) && seen.has(4) && seen.has(5)) {
                return Err(Decline);
            }
            s.out.tasks.push(task);
            Ok(())
        })
    }

    fn arg(&mut self) -> Step {
        self.src.expect(b'{')?;
        let mut seen = Seen(0);
        let mut idx = 0;
        let mut direction = ArgDirection::Input;
        let mut v = PendingView::default();
        self.dims.clear();
        self.members(5, |s, key| match key {
            b"idx" => {
                seen.mark(0)?;
                idx = s.num()?.i32()?;
                Ok(())
            }
            b"type" => {
                seen.mark(1)?;
                s.short_string()?;
                direction = ArgDirection::from_name_bytes(&s.scratch).ok_or(Decline)?;
                Ok(())
            }
            b"tensor_id" => {
                seen.mark(2)?;
                v.tensor_id = Some(s.u64_lenient()?);
                Ok(())
            }
            b"dtype" => {
                seen.mark(3)?;
                v.dtype = Some(s.dtype()?);
                Ok(())
            }
            b"shape" => {
                seen.mark(4)?;
                v.shape = Some(s.dims_list(6)?);
                Ok(())
            }
            b"start_offset" => {
                seen.mark(5)?;
                v.start_offset = Some(s.u64_lenient()?);
                Ok(())
            }
            b"strides" => {
                seen.mark(6)?;
                v.strides = Some(s.dims_list(6)?);
                Ok(())
            }
            _ => s.skip_value(6),
        })?;
        if !(seen.has(0) && seen.has(1)) {
            return Err(Decline);
        }
        let view = if v.tensor_id.is_some() {
            let Some(dtype) = v.dtype else {
                return Err(Decline);
            };
            if v.shape.is_none() || v.start_offset.is_none() || v.strides.is_none() {
                return Err(Decline);
            }
            self.keep_view(&v, dtype)
        } else {
            u32::MAX
        };
        if self.detail == Detail::Full {
            self.out.args.push(ScanArg {
                idx,
                direction,
                view,
            });
        }
        Ok(())
    }

    fn tensors(&mut self) -> Step {
        self.elements(2, |s| {
            s.src.expect(b'{')?;
            let mut seen = Seen(0);
            let mut t = ScanTensor {
                tensor_id: 0,
                buffer_addr: 0,
                version: 0,
                dtype: 0,
                buffer_numel: 0,
            };
            s.members(3, |s, key| match key {
                b"tensor_id" => {
                    seen.mark(0)?;
                    t.tensor_id = s.u64_lenient()?;
                    Ok(())
                }
                b"buffer_addr" => {
                    seen.mark(1)?;
                    t.buffer_addr = s.u64_lenient()?;
                    Ok(())
                }
                b"version" => {
                    seen.mark(2)?;
                    t.version = s.num()?.i32()?;
                    Ok(())
                }
                b"dtype" => {
                    seen.mark(3)?;
                    t.dtype = s.dtype()?;
                    Ok(())
                }
                b"buffer_numel" => {
                    seen.mark(4)?;
                    t.buffer_numel = s.u64_lenient()?;
                    Ok(())
                }
                _ => s.skip_value(4),
            })?;
            if seen.0 != 0b11111 {
                return Err(Decline);
            }
            s.out.n_tensors += 1;
            if s.detail == Detail::Full {
                s.out.tensors.push(t);
            }
            Ok(())
        })
    }

    fn edges(&mut self) -> Step {
        self.elements(2, |s| {
            s.src.expect(b'{')?;
            let mut seen = Seen(0);
            let mut e = ScanEdge {
                pred: TaskId(0),
                succ: TaskId(0),
                arg: 0,
                source: EdgeSource::Explicit,
                flags: DepFlags::default(),
                overlap: None,
                consumer: u32::MAX,
                producer: u32::MAX,
            };
            let mut c = PendingView::default();
            let mut p = PendingView::default();
            s.dims.clear();
            s.members(3, |s, key| match key {
                b"pred" => {
                    seen.mark(0)?;
                    e.pred = TaskId(s.u64_lenient()?);
                    Ok(())
                }
                b"succ" => {
                    seen.mark(1)?;
                    e.succ = TaskId(s.u64_lenient()?);
                    Ok(())
                }
                b"arg" => {
                    seen.mark(2)?;
                    e.arg = s.num()?.i32()?;
                    Ok(())
                }
                b"source" => {
                    seen.mark(3)?;
                    s.short_string()?;
                    e.source = std::str::from_utf8(&s.scratch)
                        .ok()
                        .and_then(EdgeSource::from_name)
                        .ok_or(Decline)?;
                    Ok(())
                }
                b"flags" => {
                    seen.mark(4)?;
                    let mut flags = DepFlags::default();
                    s.elements(4, |s| {
                        s.short_string()?;
                        match &s.scratch[..] {
                            b"wait" => flags.wait = true,
                            b"retain" => flags.retain = true,
                            _ => return Err(Decline),
                        }
                        Ok(())
                    })?;
                    e.flags = flags;
                    Ok(())
                }
                b"overlap" => {
                    seen.mark(5)?;
                    s.short_string()?;
                    e.overlap = Some(
                        std::str::from_utf8(&s.scratch)
                            .ok()
                            .and_then(Overlap::from_name)
                            .ok_or(Decline)?,
                    );
                    Ok(())
                }
                b"tensor_id" => {
                    seen.mark(6)?;
                    c.tensor_id = Some(s.u64_lenient()?);
                    Ok(())
                }
                b"consumer_dtype" => {
                    seen.mark(7)?;
                    c.dtype = Some(s.dtype()?);
                    Ok(())
                }
                b"consumer_shape" => {
                    seen.mark(8)?;
                    c.shape = Some(s.dims_list(4)?);
                    Ok(())
                }
                b"consumer_start_offset" => {
                    seen.mark(9)?;
                    c.start_offset = Some(s.u64_lenient()?);
                    Ok(())
                }
                b"consumer_strides" => {
                    seen.mark(10)?;
                    c.strides = Some(s.dims_list(4)?);
                    Ok(())
                }
                b"producer_shape" => {
                    seen.mark(11)?;
                    p.shape = Some(s.dims_list(4)?);
                    Ok(())
                }
                b"producer_start_offset" => {
                    seen.mark(12)?;
                    p.start_offset = Some(s.u64_lenient()?);
                    Ok(())
                }
                b"producer_strides" => {
                    seen.mark(13)?;
                    p.strides = Some(s.dims_list(4)?);
                    Ok(())
                }
                _ => s.skip_value(4),
            })?;
            if seen.0 & 0b11111 != 0b11111 {
                return Err(Decline);
            }
            if c.tensor_id.is_some() {
                let Some(dtype) = c.dtype else {
                    return Err(Decline);
                };
                if c.shape.is_none() || c.start_offset.is_none() || c.strides.is_none() {
                    return Err(Decline);
                }
                e.consumer = s.keep_view(&c, dtype);
            }
            if p.shape.is_some() {
                if p.start_offset.is_none() || p.strides.is_none() {
                    return Err(Decline);
                }
                e.producer = s.keep_view(&p, u32::MAX);
            }
            s.out.edges.push(e);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEPS: &str = r#"{"tasks":[{"task_id":"0","scope":"auto","early_dispatch":false,"kernel_ids":[-1,-1,-1],"block_num":1,"args":[],"extra": [1.5e3, null, {"deep": [true, false]}]},
 {"task_id":"4294967296","scope":"manual","kernel_ids":[7,-1,-1],"block_num":4,"args":[
  {"idx":0,"type":"INPUT","tensor_id":"13451765318376212391","dtype":"FLOAT32","shape":[16384],"start_offset":"0","strides":[1]},
  {"idx":1,"type":"OUTPUT"}]}],
 "tensors":[{"tensor_id":"13451765318376212391","buffer_addr":"29204938752","version":0,"dtype":"FLOAT32","buffer_numel":"16384"}],
 "edges":[{"pred":"0","succ":"4294967296","arg":0,"source":"creator","flags":["wait","retain"],"tensor_id":"13451765318376212391",
  "consumer_dtype":"FLOAT32","consumer_shape":[16384],"consumer_start_offset":"0","consumer_strides":[1]},
  {"pred":-1,"succ":4294967296,"arg":2,"source":"tensormap","flags":["wait"],"overlap":"other","tensor_id":"5","consumer_dtype":"BFLOAT16","consumer_shape":[2,3],"consumer_start_offset":"4","consumer_strides":[3,1],"producer_shape":[4,3],"producer_start_offset":"0","producer_strides":[3,1]}]}
"#;

    fn careful(text: &str) -> crate::error::Loaded<DepsFile> {
        crate::deps::parse(text.as_bytes(), std::path::Path::new("deps.json")).unwrap()
    }

    #[test]
    fn full_scan_equals_the_careful_reader() {
        let Scanned::Read(scan) = scan_bytes(DEPS.as_bytes(), Detail::Full) else {
            panic!("declined a clean file");
        };
        let loaded = careful(DEPS);
        assert!(loaded.problems.is_empty());
        assert_eq!(scan.to_file(), loaded.value);
        assert_eq!(DepsScan::from_file(&loaded.value).to_file(), loaded.value);
        assert_eq!(scan.edges[1].pred, TaskId(u64::MAX), "negative ids wrap");
    }

    #[test]
    fn decimal_ids_parse_as_the_standard_parsers_do() {
        for text in [
            "0",
            "7",
            "007",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "-0",
            "-9223372036854775808",
            "-9223372036854775809",
            "",
            "-",
            "+5",
            "1a",
            " 1",
        ] {
            let expected = if let Some(neg) = text.strip_prefix('-') {
                (!neg.is_empty() && neg.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| text.parse::<i64>().ok().map(|v| v as u64))
                    .flatten()
            } else {
                (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
                    .then(|| text.parse::<u64>().ok())
                    .flatten()
            };
            assert_eq!(decimal_id(text.as_bytes()), expected, "{text:?}");
        }
    }

    #[test]
    fn graph_scan_keeps_no_views() {
        let Scanned::Read(scan) = scan_bytes(DEPS.as_bytes(), Detail::Graph) else {
            panic!("declined");
        };
        assert_eq!(scan.tasks.len(), 2);
        assert_eq!(scan.edges.len(), 2);
        assert!(scan.views.is_empty() && scan.args.is_empty() && scan.tensors.is_empty());
        assert_eq!(scan.edges[1].overlap, Some(Overlap::Other));
    }

    #[test]
    fn the_compact_form_reads_the_same_through_the_in_place_paths() {
        // No whitespace: keys, ids, integers and dimension lists take their fast paths.
        let compact: String = DEPS.split_whitespace().collect();
        let Scanned::Read(scan) = scan_bytes(compact.as_bytes(), Detail::Full) else {
            panic!("declined");
        };
        assert_eq!(scan.to_file(), careful(&compact).value);
    }

    #[test]
    fn find_stop_finds_the_first_byte_the_table_holds() {
        for len in 0..20 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut text: Vec<u8> = (0..len).map(|i| b'a' + (i as u8 % 26)).collect();
                    text[at] = b;
                    text.push(b'"');
                    let want = text.iter().position(|&c| STRING_STOP[usize::from(c)]);
                    assert_eq!(find_stop(&text), want, "{text:?}");
                }
            }
        }
    }

    #[test]
    fn int_prefix_reads_what_number_reads_or_leaves_it() {
        let literals = [
            "0",
            "7",
            "-1",
            "42",
            "01",
            "-0",
            "-01",
            "1.5",
            "1e3",
            "2E-2",
            "",
            "-",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "1234567890123456789",
            "12345678901234567890",
        ];
        for lit in literals {
            for end in [",", "]", "}", " ", ""] {
                let text = format!("{lit}{end}");
                let Some((num, len)) = int_prefix(text.as_bytes()) else {
                    continue;
                };
                assert_eq!(len, lit.len(), "{text}");
                let mut src = Scanner::new(text.as_bytes(), Detail::Full).src;
                assert_eq!(src.number().ok(), Some(num), "{text}");
                assert_eq!(src.pos, len, "{text}");
            }
        }
        assert!(int_prefix(b"01,").is_none() && int_prefix(b"-0,").is_none());
        assert!(int_prefix(b"12").is_none(), "no delimiter in the buffer");
    }

    #[test]
    fn a_small_chunk_boundary_anywhere_reads_the_same() {
        // A reader that hands out one byte at a time crosses every token.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                match self.0.split_first() {
                    Some((&b, rest)) if !buf.is_empty() => {
                        buf[0] = b;
                        self.0 = rest;
                        Ok(1)
                    }
                    _ => Ok(0),
                }
            }
        }
        let mut s = Scanner::new(Trickle(DEPS.as_bytes()), Detail::Full);
        s.root().unwrap();
        assert_eq!(s.out.to_file(), careful(DEPS).value);
    }

    #[test]
    fn declines_what_it_does_not_model_or_what_is_damaged() {
        let cases = [
            // Damage the careful reader reports.
            DEPS.replace("\"block_num\":4", "\"block_num\":4.0"),
            DEPS.replace("[7,-1,-1]", "[7,-1]"),
            DEPS.replace("\"scope\":\"manual\"", "\"scope\":\"other\""),
            DEPS.replace("\"wait\",\"retain\"", "\"wait\",\"keep\""),
            DEPS.replace("\"tensors\":[{", "\"tensors_\":[{"),
            DEPS.replace("\"consumer_strides\":[1]}", "}"),
            DEPS.replace("\"early_dispatch\":false", "\"early_dispatch\":null"),
            // Invalid JSON.
            DEPS.replace("[3,1]}]}", "[3,1],}]}"),
            DEPS.replace("1.5e3", "1.5e"),
            DEPS.replace("1.5e3", "01"),
            format!("{DEPS} x"),
            DEPS[..DEPS.len() - 5].to_string(),
            // Valid, but not modelled here.
            DEPS.replace("1.5e3", "1e400"),
            DEPS.replace("1.5e3", "-0"),
            DEPS.replace("\"deep\"", "\"d\\u0065ep\""),
            DEPS.replace("\"deep\"", "\"d\u{e9}ep\""),
            DEPS.replace("\"arg\":0", "\"arg\":0,\"arg\":0"),
        ];
        for (k, text) in cases.iter().enumerate() {
            assert_ne!(text, DEPS, "case {k} changes nothing");
            assert!(
                matches!(scan_bytes(text.as_bytes(), Detail::Full), Scanned::Declined),
                "case {k} was taken"
            );
        }
        // Nesting beyond the limit declines; just within it is read.
        let deep = |n: usize| {
            format!(
                "{{\"tasks\":[{{\"task_id\":\"0\",\"scope\":\"auto\",\"kernel_ids\":[-1,-1,-1],\"block_num\":1,\"args\":[],\"x\":{}{}}}],\"tensors\":[],\"edges\":[]}}",
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        assert!(matches!(
            scan_bytes(deep(200).as_bytes(), Detail::Graph),
            Scanned::Declined
        ));
        assert!(matches!(
            scan_bytes(deep(100).as_bytes(), Detail::Graph),
            Scanned::Read(_)
        ));
    }
}
