//! The pickle inside a `.pt` archive (`<root>/data.pkl`), read by a
//! restricted interpreter that knows only what `torch.save` writes for one
//! tensor, and written the way `torch.save` writes it.
//!
//! What `torch.save(t)` pickles is one call
//! `torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride,
//! requires_grad, backward_hooks)` (or `_rebuild_tensor_v3(..., dtype)` for
//! the element types without a legacy typed storage: uint16, uint32,
//! uint64), where `storage` is a persistent id `('storage', <storage type>,
//! '<key>', '<location>', numel)` naming the archive record `data/<key>` and
//! `backward_hooks` is `collections.OrderedDict()`.
//!
//! The interpreter accepts the opcodes of pickle protocols 2 to 5 that can
//! build such a call (ints, strings, tuples, booleans, `None`, the memo,
//! `GLOBAL` / `STACK_GLOBAL`, `REDUCE`, `BINPERSID`) and refuses everything
//! else. A global is *looked up in a fixed table*, never imported, and a
//! `REDUCE` is *interpreted* for the three callables of that table, never
//! called: any other global (`os.system`, `builtins.eval`, even
//! `torch._utils._rebuild_parameter`) is [`PickleError::Global`]. Nothing in
//! a pickle is ever run.
//!
//! Bounded work: the caller limits the pickle's length; the value stack,
//! the mark stack and the memo are capped ([`MAX_STACK`], [`MAX_MEMO`]),
//! tuples nest at most [`MAX_DEPTH`] deep (so dropping a value never
//! recurses deeply), memo reads share tuples instead of copying them, and
//! every operation is constant time apart from building a tuple from its
//! items, so the whole run is linear in the pickle's length.

use std::collections::HashMap;
use std::rc::Rc;

use crate::dtype::DType;

/// The most values the pickle stack may hold.
pub const MAX_STACK: usize = 1024;
/// The most memo entries.
pub const MAX_MEMO: usize = 4096;
/// The deepest nesting of tuples.
pub const MAX_DEPTH: usize = 8;
/// The most dimensions a saved tensor may have (as for `.npy`).
pub const MAX_DIMS: usize = crate::npy::MAX_DIMS;

/// A storage's element type: a legacy typed storage (`torch.FloatStorage`)
/// fixes it, `torch.storage.UntypedStorage` counts bytes and leaves it to
/// the rebuild call's dtype argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageKind {
    /// `torch.<Name>Storage`: elements of this type.
    Typed(DType),
    /// `torch.storage.UntypedStorage`: bytes.
    Untyped,
}

/// The storage a tensor views: archive record `data/<key>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageRef {
    /// The record key (`"0"`).
    pub key: String,
    /// The storage's type.
    pub kind: StorageKind,
    /// Its length in its units (elements for typed, bytes for untyped).
    pub numel: u64,
}

/// What a `.pt` pickle describes: a strided view of one storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec {
    /// The element type.
    pub dtype: DType,
    /// The storage.
    pub storage: StorageRef,
    /// First element's index in the storage, in elements.
    pub storage_offset: u64,
    /// The dimensions.
    pub size: Vec<u64>,
    /// The strides, in elements.
    pub stride: Vec<u64>,
}

impl TensorSpec {
    /// The storage's length in bytes (checked), for the record-size check.
    pub fn storage_bytes(&self) -> Option<u64> {
        match self.storage.kind {
            StorageKind::Untyped => Some(self.storage.numel),
            StorageKind::Typed(d) => self.storage.numel.checked_mul(d.elem_size() as u64),
        }
    }
}

/// Why a pickle is not a saved tensor.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PickleError {
    /// A global outside the table of what `torch.save` writes for a tensor.
    #[error("the pickle refers to the global `{module}.{name}`, which torch.save never writes for a plain tensor; refusing it (nothing in the file is run)")]
    Global {
        /// Its module.
        module: String,
        /// Its name.
        name: String,
    },
    /// A torch element type with no [`DType`] here.
    #[error(
        "the tensor's element type torch.{torch_name} is not supported; supported: {}",
        supported_torch_dtypes()
    )]
    UnsupportedDType {
        /// `float64`, `DoubleStorage`, ...
        torch_name: String,
    },
    /// Anything else that is not what `torch.save` writes.
    #[error("the pickle is not one tensor as torch.save writes it: {0}")]
    Malformed(String),
}

fn supported_torch_dtypes() -> String {
    let names: Vec<&str> = DType::ALL.iter().map(|d| d.host_name()).collect();
    names.join(", ")
}

fn malformed<T>(message: impl Into<String>) -> Result<T, PickleError> {
    Err(PickleError::Malformed(message.into()))
}

/// The legacy typed storage class of `dtype`, if torch has one.
pub fn legacy_storage_name(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::Float32 => "FloatStorage",
        DType::Float16 => "HalfStorage",
        DType::BFloat16 => "BFloat16Storage",
        DType::Int8 => "CharStorage",
        DType::Int16 => "ShortStorage",
        DType::Int32 => "IntStorage",
        DType::Int64 => "LongStorage",
        DType::UInt8 => "ByteStorage",
        DType::Bool => "BoolStorage",
        DType::UInt16 | DType::UInt32 | DType::UInt64 => return None,
    })
}

/// torch element types that exist but have no [`DType`] (a clear error
/// instead of "unknown global").
const FOREIGN_TORCH_DTYPES: &[&str] = &[
    "float64",
    "double",
    "complex32",
    "complex64",
    "complex128",
    "cfloat",
    "cdouble",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "qint8",
    "quint8",
    "qint32",
    "quint4x2",
];
const FOREIGN_STORAGES: &[&str] = &[
    "DoubleStorage",
    "ComplexFloatStorage",
    "ComplexDoubleStorage",
    "QInt8Storage",
    "QUInt8Storage",
    "QInt32Storage",
    "QUInt4x2Storage",
    "QUInt2x4Storage",
];

/// The globals a saved tensor uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Global {
    RebuildV2,
    RebuildV3,
    OrderedDict,
    Storage(StorageKind),
    DType(DType),
}

fn lookup_global(module: &str, name: &str) -> Result<Global, PickleError> {
    let found = match (module, name) {
        ("torch._utils", "_rebuild_tensor_v2") => Some(Global::RebuildV2),
        ("torch._utils", "_rebuild_tensor_v3") => Some(Global::RebuildV3),
        ("collections", "OrderedDict") => Some(Global::OrderedDict),
        ("torch.storage" | "torch", "UntypedStorage") => {
            Some(Global::Storage(StorageKind::Untyped))
        }
        ("torch", _) => DType::ALL
            .into_iter()
            .find(|&d| legacy_storage_name(d) == Some(name))
            .map(|d| Global::Storage(StorageKind::Typed(d)))
            .or_else(|| {
                DType::ALL
                    .into_iter()
                    .find(|&d| d.host_name() == name)
                    .map(Global::DType)
            }),
        _ => None,
    };
    if let Some(g) = found {
        return Ok(g);
    }
    if module == "torch"
        && (FOREIGN_TORCH_DTYPES.contains(&name) || FOREIGN_STORAGES.contains(&name))
    {
        return Err(PickleError::UnsupportedDType {
            torch_name: name.to_string(),
        });
    }
    Err(PickleError::Global {
        module: module.to_string(),
        name: name.to_string(),
    })
}

#[derive(Clone, Debug)]
enum Value {
    None,
    Bool,
    Int(i64),
    Str(Rc<str>),
    Tuple(Rc<[Value]>, usize),
    Global(Global),
    Storage(Rc<StorageRef>),
    EmptyOrderedDict,
    Tensor(Rc<TensorSpec>),
}

impl Value {
    fn depth(&self) -> usize {
        match self {
            Value::Tuple(_, d) => *d,
            _ => 0,
        }
    }

    fn describe(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool => "a bool",
            Value::Int(_) => "an int",
            Value::Str(_) => "a str",
            Value::Tuple(..) => "a tuple",
            Value::Global(_) => "a global",
            Value::Storage(_) => "a storage",
            Value::EmptyOrderedDict => "an OrderedDict",
            Value::Tensor(_) => "a tensor",
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], PickleError> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        match end {
            Some(end) => {
                let s = &self.bytes[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => malformed(format!("it ends inside an opcode at byte {}", self.pos)),
        }
    }

    fn u8(&mut self) -> Result<u8, PickleError> {
        Ok(self.take(1)?[0])
    }

    fn le<const N: usize>(&mut self) -> Result<[u8; N], PickleError> {
        let s = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    fn line(&mut self) -> Result<&'a str, PickleError> {
        let rest = &self.bytes[self.pos..];
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            return malformed(format!("a GLOBAL at byte {} has no end of line", self.pos));
        };
        let line = &rest[..nl];
        self.pos += nl + 1;
        std::str::from_utf8(line)
            .ok()
            .filter(|s| s.is_ascii())
            .ok_or_else(|| PickleError::Malformed("a GLOBAL name is not ASCII".into()))
    }

    fn str_of(&mut self, n: u64) -> Result<Rc<str>, PickleError> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let raw = self.take(n)?;
        std::str::from_utf8(raw)
            .map(Rc::from)
            .map_err(|_| PickleError::Malformed("a string is not valid UTF-8".into()))
    }
}

struct Machine {
    stack: Vec<Value>,
    marks: Vec<usize>,
    memo: HashMap<u32, Value>,
}

impl Machine {
    fn push(&mut self, v: Value) -> Result<(), PickleError> {
        if self.stack.len() >= MAX_STACK {
            return malformed(format!("its stack grows past {MAX_STACK} values"));
        }
        self.stack.push(v);
        Ok(())
    }

    fn pop(&mut self) -> Result<Value, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() <= floor {
            return malformed("an opcode pops from an empty stack");
        }
        self.stack
            .pop()
            .ok_or_else(|| PickleError::Malformed("an opcode pops from an empty stack".into()))
    }

    fn top(&self) -> Result<&Value, PickleError> {
        self.stack
            .last()
            .ok_or_else(|| PickleError::Malformed("the memo stores from an empty stack".into()))
    }

    fn put(&mut self, key: u32) -> Result<(), PickleError> {
        let v = self.top()?.clone();
        if self.memo.len() >= MAX_MEMO && !self.memo.contains_key(&key) {
            return malformed(format!("its memo grows past {MAX_MEMO} entries"));
        }
        self.memo.insert(key, v);
        Ok(())
    }

    fn get(&mut self, key: u32) -> Result<(), PickleError> {
        let v = self.memo.get(&key).cloned().ok_or_else(|| {
            PickleError::Malformed(format!("memo entry {key} is read before it is stored"))
        })?;
        self.push(v)
    }

    fn tuple(&mut self, items: Vec<Value>) -> Result<(), PickleError> {
        let depth = 1 + items.iter().map(Value::depth).max().unwrap_or(0);
        if depth > MAX_DEPTH {
            return malformed(format!("its tuples nest more than {MAX_DEPTH} deep"));
        }
        self.push(Value::Tuple(Rc::from(items), depth))
    }

    fn pop_n(&mut self, n: usize) -> Result<Vec<Value>, PickleError> {
        let floor = self.marks.last().copied().unwrap_or(0);
        if self.stack.len() < floor + n {
            return malformed("a tuple opcode pops from an empty stack");
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }
}

/// Interprets `bytes` (a whole `data.pkl`) as a saved tensor.
///
/// Each opcode is handled by `structure_op` (framing, globals, memo, marks, tuples,
/// persistent ids, reductions) or `literal_op` (strings, ints, bools, `None`); `STOP`
/// ends the run through `stop`.
pub fn parse_tensor_pickle(bytes: &[u8]) -> Result<TensorSpec, PickleError> {
    let mut r = Reader { bytes, pos: 0 };
    let mut m = Machine {
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
    };
    loop {
        let at = r.pos;
        let op = r.u8()?;
        if op == b'.' {
            return stop(&r, &mut m);
        }
        if !(structure_op(op, &mut r, &mut m)? || literal_op(op, &mut r, &mut m)?) {
            return malformed(format!(
                "opcode 0x{op:02x} at byte {at} is not part of a saved tensor"
            ));
        }
    }
}

/// Runs `op` if it is a framing, global, memo, mark, tuple, persistent-id or reduce
/// opcode; `false` if it is none of these.
fn structure_op(op: u8, r: &mut Reader<'_>, m: &mut Machine) -> Result<bool, PickleError> {
    match op {
        0x80 => {
            let proto = r.u8()?;
            if !(2..=5).contains(&proto) {
                return malformed(format!("pickle protocol {proto} (torch.save writes 2)"));
            }
        }
        0x95 => {
            r.take(8)?; // FRAME: a length hint only.
        }
        b'c' => {
            let module = r.line()?;
            let name = r.line()?;
            let g = lookup_global(module, name)?;
            m.push(Value::Global(g))?;
        }
        0x93 => {
            let name = m.pop()?;
            let module = m.pop()?;
            let (Value::Str(module), Value::Str(name)) = (module, name) else {
                return malformed("STACK_GLOBAL takes two strings");
            };
            let g = lookup_global(&module, &name)?;
            m.push(Value::Global(g))?;
        }
        b'q' => {
            let k = r.u8()?;
            m.put(u32::from(k))?;
        }
        b'r' => {
            let k = u32::from_le_bytes(r.le()?);
            m.put(k)?;
        }
        0x94 => {
            let k = u32::try_from(m.memo.len()).unwrap_or(u32::MAX);
            m.put(k)?;
        }
        b'h' => {
            let k = r.u8()?;
            m.get(u32::from(k))?;
        }
        b'j' => {
            let k = u32::from_le_bytes(r.le()?);
            m.get(k)?;
        }
        b'(' => {
            if m.marks.len() >= MAX_STACK {
                return malformed(format!("more than {MAX_STACK} open marks"));
            }
            m.marks.push(m.stack.len());
        }
        b't' => {
            let Some(mark) = m.marks.pop() else {
                return malformed("TUPLE without a MARK");
            };
            let items = m.stack.split_off(mark);
            m.tuple(items)?;
        }
        b')' => m.tuple(Vec::new())?,
        0x85 => {
            let items = m.pop_n(1)?;
            m.tuple(items)?;
        }
        0x86 => {
            let items = m.pop_n(2)?;
            m.tuple(items)?;
        }
        0x87 => {
            let items = m.pop_n(3)?;
            m.tuple(items)?;
        }
        b'Q' => {
            let pid = m.pop()?;
            let storage = persistent_storage(&pid)?;
            m.push(Value::Storage(Rc::new(storage)))?;
        }
        b'R' => {
            let args = m.pop()?;
            let callable = m.pop()?;
            let v = reduce(&callable, &args)?;
            m.push(v)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Runs `op` if it pushes a literal (a string, an int, a bool or `None`); `false` if it
/// does not.
fn literal_op(op: u8, r: &mut Reader<'_>, m: &mut Machine) -> Result<bool, PickleError> {
    match op {
        b'X' => {
            let n = u32::from_le_bytes(r.le()?);
            let s = r.str_of(u64::from(n))?;
            m.push(Value::Str(s))?;
        }
        0x8c => {
            let n = r.u8()?;
            let s = r.str_of(u64::from(n))?;
            m.push(Value::Str(s))?;
        }
        0x8d => {
            let n = u64::from_le_bytes(r.le()?);
            let s = r.str_of(n)?;
            m.push(Value::Str(s))?;
        }
        b'K' => {
            let v = r.u8()?;
            m.push(Value::Int(i64::from(v)))?;
        }
        b'M' => {
            let v = u16::from_le_bytes(r.le()?);
            m.push(Value::Int(i64::from(v)))?;
        }
        b'J' => {
            let v = i32::from_le_bytes(r.le()?);
            m.push(Value::Int(i64::from(v)))?;
        }
        0x8a => {
            let n = usize::from(r.u8()?);
            if n > 8 {
                return malformed(format!(
                    "an int of {n} bytes (at most 8 fit a tensor's sizes)"
                ));
            }
            let raw = r.take(n)?;
            let mut buf = [0u8; 8];
            buf[..n].copy_from_slice(raw);
            if n > 0 && n < 8 && raw[n - 1] & 0x80 != 0 {
                buf[n..].fill(0xff);
            }
            m.push(Value::Int(i64::from_le_bytes(buf)))?;
        }
        0x88 => m.push(Value::Bool)?,
        0x89 => m.push(Value::Bool)?,
        b'N' => m.push(Value::None)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// `STOP`: the pickle must end here with exactly one tensor on the stack and no open mark.
fn stop(r: &Reader<'_>, m: &mut Machine) -> Result<TensorSpec, PickleError> {
    if !m.marks.is_empty() || m.stack.len() != 1 {
        return malformed(format!(
            "it stops with {} values on the stack (one tensor expected)",
            m.stack.len()
        ));
    }
    if r.pos != r.bytes.len() {
        return malformed(format!("{} bytes follow its STOP", r.bytes.len() - r.pos));
    }
    match m.stack.pop() {
        Some(Value::Tensor(t)) => Ok((*t).clone()),
        Some(other) => malformed(format!("it holds {}, not a tensor", other.describe())),
        None => malformed("it holds nothing"),
    }
}

fn persistent_storage(pid: &Value) -> Result<StorageRef, PickleError> {
    let Value::Tuple(items, _) = pid else {
        return malformed(format!(
            "a persistent id is {}, not a tuple",
            pid.describe()
        ));
    };
    match &items[..] {
        [Value::Str(tag), Value::Global(Global::Storage(kind)), Value::Str(key), Value::Str(_location), Value::Int(numel)]
            if &**tag == "storage" =>
        {
            let numel = u64::try_from(*numel)
                .map_err(|_| PickleError::Malformed(format!("a storage of {numel} elements")))?;
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return malformed(format!("the storage key {key:?} is not a record name"));
            }
            Ok(StorageRef {
                key: key.to_string(),
                kind: *kind,
                numel,
            })
        }
        _ => malformed("a persistent id is not ('storage', <storage type>, key, location, numel)"),
    }
}

fn int_tuple(v: &Value, what: &str) -> Result<Vec<u64>, PickleError> {
    let Value::Tuple(items, _) = v else {
        return malformed(format!("the {what} is {}, not a tuple", v.describe()));
    };
    if items.len() > MAX_DIMS {
        return malformed(format!(
            "the {what} has {} dimensions, more than {MAX_DIMS}",
            items.len()
        ));
    }
    items
        .iter()
        .map(|i| match i {
            Value::Int(n) => u64::try_from(*n)
                .map_err(|_| PickleError::Malformed(format!("the {what} holds {n}"))),
            other => malformed(format!("the {what} holds {}", other.describe())),
        })
        .collect()
}

fn reduce(callable: &Value, args: &Value) -> Result<Value, PickleError> {
    let Value::Tuple(args, _) = args else {
        return malformed(format!("REDUCE's arguments are {}", args.describe()));
    };
    let Value::Global(g) = callable else {
        return malformed(format!("REDUCE calls {}", callable.describe()));
    };
    match g {
        Global::OrderedDict if args.is_empty() => Ok(Value::EmptyOrderedDict),
        Global::OrderedDict => malformed("OrderedDict is called with arguments (backward hooks?)"),
        Global::RebuildV2 | Global::RebuildV3 => {
            rebuild(*g, args).map(|t| Value::Tensor(Rc::new(t)))
        }
        Global::Storage(_) | Global::DType(_) => malformed("REDUCE calls a storage type or dtype"),
    }
}

fn rebuild(g: Global, args: &[Value]) -> Result<TensorSpec, PickleError> {
    let fixed = if g == Global::RebuildV3 { 7 } else { 6 };
    let name = if g == Global::RebuildV3 {
        "_rebuild_tensor_v3"
    } else {
        "_rebuild_tensor_v2"
    };
    if args.len() != fixed && !(args.len() == fixed + 1 && matches!(args[fixed], Value::None)) {
        return malformed(format!(
            "{name} takes {fixed} arguments here, got {} (tensor metadata or subclasses are not supported)",
            args.len()
        ));
    }
    let Value::Storage(storage) = &args[0] else {
        return malformed(format!("{name}'s storage is {}", args[0].describe()));
    };
    let storage_offset = match &args[1] {
        Value::Int(n) => {
            u64::try_from(*n).map_err(|_| PickleError::Malformed(format!("storage offset {n}")))?
        }
        other => return malformed(format!("the storage offset is {}", other.describe())),
    };
    let size = int_tuple(&args[2], "size")?;
    let stride = int_tuple(&args[3], "stride")?;
    if size.len() != stride.len() {
        return malformed(format!(
            "the size has {} dimensions but the stride {}",
            size.len(),
            stride.len()
        ));
    }
    if !matches!(args[4], Value::Bool) {
        return malformed(format!("requires_grad is {}", args[4].describe()));
    }
    if !matches!(args[5], Value::EmptyOrderedDict) {
        return malformed(format!("the backward hooks are {}", args[5].describe()));
    }
    let dtype = if g == Global::RebuildV3 {
        let Value::Global(Global::DType(d)) = args[6] else {
            return malformed(format!("the dtype is {}", args[6].describe()));
        };
        if let StorageKind::Typed(sd) = storage.kind {
            if sd != d {
                return malformed(format!(
                    "a {} storage is rebuilt as torch.{}",
                    sd.host_name(),
                    d.host_name()
                ));
            }
        }
        d
    } else {
        match storage.kind {
            StorageKind::Typed(d) => d,
            StorageKind::Untyped => {
                return malformed("_rebuild_tensor_v2 of an untyped storage has no dtype")
            }
        }
    };
    Ok(TensorSpec {
        dtype,
        storage: (**storage).clone(),
        storage_offset,
        size,
        stride,
    })
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'X');
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn push_int(out: &mut Vec<u8>, v: u64) {
    if v < 256 {
        out.extend_from_slice(&[b'K', v as u8]);
    } else if v < 65536 {
        out.push(b'M');
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < (1 << 31) {
        out.push(b'J');
        out.extend_from_slice(&(v as u32).to_le_bytes());
    } else {
        // LONG1: little-endian two's complement, with a sign byte when needed.
        let mut bytes = v.to_le_bytes().to_vec();
        while bytes.len() > 1 && bytes[bytes.len() - 1] == 0 && bytes[bytes.len() - 2] & 0x80 == 0 {
            bytes.pop();
        }
        if bytes[bytes.len() - 1] & 0x80 != 0 {
            bytes.push(0);
        }
        out.extend_from_slice(&[0x8a, bytes.len() as u8]);
        out.extend_from_slice(&bytes);
    }
}

/// A memo counter that numbers `BINPUT`s as Python's pickler does.
struct Memo(u32);

impl Memo {
    fn put(&mut self, out: &mut Vec<u8>) {
        if self.0 < 256 {
            out.extend_from_slice(&[b'q', self.0 as u8]);
        } else {
            out.push(b'r');
            out.extend_from_slice(&self.0.to_le_bytes());
        }
        self.0 += 1;
    }
}

fn push_int_tuple(out: &mut Vec<u8>, memo: &mut Memo, values: &[u64]) {
    match values.len() {
        0 => out.push(b')'),
        n => {
            if n > 3 {
                out.push(b'(');
            }
            for &v in values {
                push_int(out, v);
            }
            out.push(match n {
                1 => 0x85,
                2 => 0x86,
                3 => 0x87,
                _ => b't',
            });
            memo.put(out);
        }
    }
}

/// The pickle `torch.save` writes for a contiguous tensor of `dtype` and
/// `shape` whose storage is record `data/0` of `numel` elements on the CPU.
pub fn encode_tensor_pickle(dtype: DType, shape: &[u64]) -> Vec<u8> {
    let numel: u64 = shape.iter().product();
    let mut stride = vec![0u64; shape.len()];
    let mut acc = 1u64;
    for (s, &d) in stride.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.saturating_mul(d.max(1));
    }
    let legacy = legacy_storage_name(dtype);
    let mut out = vec![0x80, 2];
    let mut memo = Memo(0);
    out.extend_from_slice(b"ctorch._utils\n");
    out.extend_from_slice(if legacy.is_some() {
        b"_rebuild_tensor_v2\n"
    } else {
        b"_rebuild_tensor_v3\n"
    });
    memo.put(&mut out);
    out.extend_from_slice(b"((");
    push_str(&mut out, "storage");
    memo.put(&mut out);
    match legacy {
        Some(name) => {
            out.extend_from_slice(b"ctorch\n");
            out.extend_from_slice(name.as_bytes());
            out.push(b'\n');
        }
        None => out.extend_from_slice(b"ctorch.storage\nUntypedStorage\n"),
    }
    memo.put(&mut out);
    push_str(&mut out, "0");
    memo.put(&mut out);
    push_str(&mut out, "cpu");
    memo.put(&mut out);
    push_int(
        &mut out,
        if legacy.is_some() {
            numel
        } else {
            numel.saturating_mul(dtype.elem_size() as u64)
        },
    );
    out.push(b't');
    memo.put(&mut out);
    out.push(b'Q');
    push_int(&mut out, 0);
    push_int_tuple(&mut out, &mut memo, shape);
    push_int_tuple(&mut out, &mut memo, &stride);
    out.push(0x89);
    out.extend_from_slice(b"ccollections\nOrderedDict\n");
    memo.put(&mut out);
    out.extend_from_slice(b")R");
    memo.put(&mut out);
    if legacy.is_none() {
        out.extend_from_slice(b"ctorch\n");
        out.extend_from_slice(dtype.host_name().as_bytes());
        out.push(b'\n');
        memo.put(&mut out);
    }
    out.push(b't');
    memo.put(&mut out);
    out.push(b'R');
    memo.put(&mut out);
    out.push(b'.');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_pickle_parses_for_every_dtype_and_rank() {
        for d in DType::ALL {
            for shape in [
                vec![],
                vec![3],
                vec![2, 3],
                vec![1, 2, 3, 4, 5],
                vec![70000, 2],
            ] {
                let bytes = encode_tensor_pickle(d, &shape);
                let spec = parse_tensor_pickle(&bytes).unwrap();
                assert_eq!(spec.dtype, d);
                assert_eq!(spec.size, shape);
                assert_eq!(spec.storage.key, "0");
                let numel: u64 = shape.iter().product();
                assert_eq!(spec.storage_bytes(), Some(numel * d.elem_size() as u64));
            }
        }
    }

    #[test]
    fn big_ints_use_long1() {
        let shape = [1u64 << 33];
        let spec = parse_tensor_pickle(&encode_tensor_pickle(DType::UInt8, &shape)).unwrap();
        assert_eq!(spec.size, shape);
        assert_eq!(spec.storage.numel, 1 << 33);
    }

    fn err(bytes: &[u8]) -> String {
        parse_tensor_pickle(bytes).unwrap_err().to_string()
    }

    #[test]
    fn refuses_other_globals_and_opcodes() {
        assert_eq!(
            err(b"\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85R."),
            "the pickle refers to the global `posix.system`, which torch.save never writes for a plain tensor; refusing it (nothing in the file is run)"
        );
        assert!(err(b"\x80\x04\x8c\x08builtins\x8c\x04eval\x93.").contains("`builtins.eval`"));
        assert!(err(b"\x80\x02ctorch._utils\n_rebuild_parameter\n.").contains("_rebuild_parameter"));
        assert!(err(b"\x80\x02ctorch\nDoubleStorage\n.").starts_with("the tensor's element type torch.DoubleStorage is not supported; supported: float32, float16, int32"));
        assert!(err(b"\x80\x02}.").contains("opcode 0x7d at byte 2"));
        assert!(err(b"\x80\x02K\x01").contains("it ends inside an opcode at byte 4"));
        assert!(err(b"\x80\x02K\x01.").contains("it holds an int, not a tensor"));
        assert!(err(b"\x80\x02K\x01K\x01.").contains("it stops with 2 values"));
        assert!(err(b"\x80\x02h\x05.").contains("memo entry 5 is read before"));
        assert!(err(b"\x80\x01.").contains("pickle protocol 1"));
        assert!(err(b"\x80\x02ccollections\nOrderedDict\nK\x01\x85R.")
            .contains("OrderedDict is called with arguments"));
    }

    #[test]
    fn bounds_hold() {
        let deep = [&b"\x80\x02"[..], &b"K\x00"[..], &b"\x85".repeat(20), b"."].concat();
        assert!(err(&deep).contains("nest more than 8 deep"));
        let wide = [&b"\x80\x02"[..], &b"K\x00".repeat(MAX_STACK + 1), b"."].concat();
        assert!(err(&wide).contains("stack grows past 1024"));
        let marks = [&b"\x80\x02"[..], &b"(".repeat(MAX_STACK + 1)].concat();
        assert!(err(&marks).contains("open marks"));
        let memo: Vec<u8> = [&b"\x80\x02K\x00"[..]]
            .into_iter()
            .chain((0..=MAX_MEMO as u32).map(|_| &b"\x94"[..]))
            .collect::<Vec<_>>()
            .concat();
        assert!(err(&memo).contains("memo grows past 4096"));
        // A memo read shares, so repeated doubling stays cheap and bounded by depth.
        let mut dbl = b"\x80\x02K\x00q\x00".to_vec();
        for _ in 0..7 {
            dbl.extend_from_slice(b"h\x00h\x00\x86q\x00");
        }
        dbl.push(b'.');
        assert!(
            err(&dbl).contains("it stops with 8 values"),
            "{}",
            err(&dbl)
        );
        // Popping below a mark is an error, not a steal.
        assert!(err(b"\x80\x02K\x00(\x85.").contains("pops from an empty stack"));
    }
}
