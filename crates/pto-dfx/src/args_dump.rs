//! `args_dump/args_dump.json`: the manifest of dumped task arguments.
//!
//! The manifest lists one entry per dumped argument (tensor or scalar, before
//! dispatch or after completion); tensor payloads live in `args.bin` (see
//! [`crate::args_bin`]) at `bin_offset` / `bin_size`.
//!
//! [`render`] reproduces the hand-built layout: a two-space-indented object,
//! then `"args"` with one entry per line (`", "` between keys, `": "` after
//! them), entries joined by `",\n"`. Task ids are `"0x%016x"`. A float scalar
//! is printed like C++ `ostream` does by default (6 significant digits, `%g`)
//! with `.0` appended when the text has neither `.` nor `e`; NaN is `null`
//! and ±infinity the strings `"$Inf"` / `"-$Inf"` (see [`ScalarValue`]).
//! The writer keeps the entries in the order given; [`sort_args`] (or
//! [`ArgsDumpManifest::new`]) puts them in Simpler's order first.
//!
//! [`read`] also accepts the older or documented variants: the legacy
//! `tensors` key for `args`, a missing `bin_file` (meaning `"args.bin"`, as
//! the dump viewer assumes), a missing `numel` (the product of the shape) and
//! any dtype case. A damaged entry is skipped with a [`Problem`].

use std::path::Path;

use serde_json::Value;

use crate::dtype::DataType;
use crate::error::{Loaded, Problem, ReadError, WriteError};
use crate::json::{self, Issue, Node, Out};
use crate::task_id::{parse_task_id, TaskId};

/// The directory under the output prefix.
pub const DIR_NAME: &str = "args_dump";
/// The manifest's file name inside [`DIR_NAME`].
pub const MANIFEST_FILE_NAME: &str = "args_dump.json";
/// The payload file's default name inside [`DIR_NAME`].
pub const BIN_FILE_NAME: &str = "args.bin";

/// The whole manifest.
pub type ArgsDumpManifest = ArgsDumpManifestOf<ArgRecord>;

/// The whole manifest with its entries as `A`: the owned [`ArgRecord`]s a reader returns,
/// or [`ArgEntry`]s borrowed from a runtime's records for the writer.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgsDumpManifestOf<A> {
    /// `run_dir`: `"args_dump"`.
    pub run_dir: String,
    /// `bin_format`.
    pub bin_format: BinFormat,
    /// `dump_args_level`: 1 partial, 2 full, 3 hybrid (0 off).
    pub dump_args_level: u32,
    /// `total_args`.
    pub total_args: u64,
    /// `before_dispatch`: entries with that stage.
    pub before_dispatch: u64,
    /// `after_completion`: entries with that stage.
    pub after_completion: u64,
    /// `input_args`.
    pub input_args: u64,
    /// `output_args`.
    pub output_args: u64,
    /// `inout_args`.
    pub inout_args: u64,
    /// `truncated_args`.
    pub truncated_args: u64,
    /// `dropped_records`: records lost on the device.
    pub dropped_records: u64,
    /// `dropped_overwrite`: payloads overwritten before the host drained them.
    pub dropped_overwrite: u64,
    /// `bin_file`: `"args.bin"`, or `None` (`null`) when no payload was written.
    pub bin_file: Option<String>,
    /// `args`.
    pub args: Vec<A>,
}

impl<F, S, D> ArgsDumpManifestOf<ArgRecordOf<F, S, D>> {
    /// A manifest over `args`, sorted into Simpler's order, with the
    /// counters tallied from them: `total_args` is the number of entries,
    /// the stage / role / truncation counters count matching entries.
    pub fn new(
        dump_args_level: u32,
        bin_file: Option<String>,
        mut args: Vec<ArgRecordOf<F, S, D>>,
        dropped_records: u64,
        dropped_overwrite: u64,
    ) -> Self {
        sort_args(&mut args);
        let [total_args, before_dispatch, after_completion, input_args, output_args, inout_args, truncated_args] =
            tally(&args);
        Self {
            run_dir: DIR_NAME.to_string(),
            bin_format: BinFormat::logical_contiguous_le(),
            dump_args_level,
            total_args,
            before_dispatch,
            after_completion,
            input_args,
            output_args,
            inout_args,
            truncated_args,
            dropped_records,
            dropped_overwrite,
            bin_file,
            args,
        }
    }
}

/// `[total, before_dispatch, after_completion, input, output, inout, truncated]`.
fn tally<F, S, D>(args: &[ArgRecordOf<F, S, D>]) -> [u64; 7] {
    // One pass (a dump's manifest holds hundreds of thousands of entries).
    let mut t = [args.len() as u64, 0, 0, 0, 0, 0, 0];
    for a in args {
        t[1] += u64::from(a.stage == DumpStage::BeforeDispatch);
        t[2] += u64::from(a.stage == DumpStage::AfterCompletion);
        t[3] += u64::from(a.role == ArgRole::Input);
        t[4] += u64::from(a.role == ArgRole::Output);
        t[5] += u64::from(a.role == ArgRole::Inout);
        t[6] += u64::from(a.truncated);
    }
    t
}

/// `bin_format`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinFormat {
    /// `type`: `"logical_contiguous"`.
    pub layout: String,
    /// `byte_order`: `"little_endian"`.
    pub byte_order: String,
}

impl BinFormat {
    /// `{"type": "logical_contiguous", "byte_order": "little_endian"}`, the
    /// only format Simpler writes and its consumers accept.
    pub fn logical_contiguous_le() -> Self {
        Self {
            layout: String::from("logical_contiguous"),
            byte_order: String::from("little_endian"),
        }
    }
}

/// `role`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ArgRole {
    /// `"input"`.
    Input,
    /// `"output"`.
    Output,
    /// `"inout"`.
    Inout,
}

impl ArgRole {
    /// The name written in `role`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Output => "output",
            Self::Inout => "inout",
        }
    }

    /// The role named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "input" => Some(Self::Input),
            "output" => Some(Self::Output),
            "inout" => Some(Self::Inout),
            _ => None,
        }
    }
}

/// `stage`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DumpStage {
    /// `"before_dispatch"`.
    BeforeDispatch,
    /// `"after_completion"`.
    AfterCompletion,
}

impl DumpStage {
    /// The name written in `stage`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::BeforeDispatch => "before_dispatch",
            Self::AfterCompletion => "after_completion",
        }
    }

    /// The stage named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "before_dispatch" => Some(Self::BeforeDispatch),
            "after_completion" => Some(Self::AfterCompletion),
            _ => None,
        }
    }
}

/// `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// `"tensor"`.
    Tensor,
    /// `"scalar"`.
    Scalar,
}

impl ArgKind {
    /// The name written in `kind`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Tensor => "tensor",
            Self::Scalar => "scalar",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "tensor" => Some(Self::Tensor),
            "scalar" => Some(Self::Scalar),
            _ => None,
        }
    }
}

/// A scalar argument's `value`.
///
/// Simpler writes FLOAT32 as [`ScalarValue::F32`], INT32 / INT64 as
/// [`ScalarValue::I64`], UINT32 and every other dtype (the raw 64-bit slot)
/// as [`ScalarValue::U64`], BOOL as [`ScalarValue::Bool`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    /// A float: `%g` with 6 significant digits plus `.0` if needed; NaN is
    /// `null`, ±infinity `"$Inf"` / `"-$Inf"`. Only 6 digits survive a round trip.
    F32(f32),
    /// A signed decimal.
    I64(i64),
    /// An unsigned decimal.
    U64(u64),
    /// `true` / `false`.
    Bool(bool),
}

impl ScalarValue {
    /// The value Simpler writes for a raw 64-bit scalar slot of type `dtype`
    /// (`write_scalar_json_value`): FLOAT32 from the low 32 bits, INT32
    /// sign-extended from the low 32 bits, UINT32 the low 32 bits, INT64 the
    /// slot as signed, BOOL non-zero, any other dtype the raw slot.
    pub fn from_raw(dtype: Option<DataType>, raw: u64) -> Self {
        match dtype {
            Some(DataType::Float32) => Self::F32(f32::from_bits(raw as u32)),
            Some(DataType::Int32) => Self::I64(i64::from(raw as u32 as i32)),
            Some(DataType::UInt32) => Self::U64(u64::from(raw as u32)),
            Some(DataType::Int64) => Self::I64(raw as i64),
            Some(DataType::Bool) => Self::Bool(raw != 0),
            _ => Self::U64(raw),
        }
    }
}

/// One `args` entry.
pub type ArgRecord = ArgRecordOf<Vec<i32>, String, Vec<u64>>;

/// One `args` entry borrowed from a runtime's records, for the writer (its dimensions of
/// type `T`).
pub type ArgEntry<'a, T> = ArgRecordOf<&'a [i32], &'a str, &'a [T]>;

/// One `args` entry with its kernel ids as `F`, its dtype as `S` and its shape and strides
/// as `D`: owned ([`ArgRecord`]) or borrowed ([`ArgEntry`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ArgRecordOf<F, S, D> {
    /// `task_id`, written `"0x%016x"`.
    pub task_id: TaskId,
    /// `func_id`: the task's active-subtask kernel ids in slot order (−1 for
    /// an unknown id; `[-1]` on host_build_graph); at most 3.
    pub func_id: F,
    /// `arg_index`: the tensor slot, or `tensor_count + scalar_index`.
    pub arg_index: u32,
    /// `role`.
    pub role: ArgRole,
    /// `stage`.
    pub stage: DumpStage,
    /// `kind`.
    pub kind: ArgKind,
    /// `dtype`, e.g. `FLOAT32`.
    pub dtype: S,
    /// `value`: written iff `Some` (Simpler: scalars only).
    pub value: Option<ScalarValue>,
    /// `is_contiguous`.
    pub is_contiguous: bool,
    /// `shape`; `[]` for scalars.
    pub shape: D,
    /// `strides`, in elements; `[]` for scalars.
    pub strides: D,
    /// `start_offset`, in elements.
    pub start_offset: u64,
    /// `numel`: the product of `shape`, 1 when it is empty.
    pub numel: u64,
    /// `arg_index_ambiguous`: written (as `true`) iff true.
    pub arg_index_ambiguous: bool,
    /// `bin_offset` in `args.bin`; 0 whenever `bin_size` is 0.
    pub bin_offset: u64,
    /// `bin_size`: bytes stored (0 for scalars, overwritten and unmarked entries).
    pub bin_size: u64,
    /// `truncated`: only the first half-arena of the logical bytes was stored.
    pub truncated: bool,
    /// `overwritten`: the payload was lost (host drained too slowly).
    pub overwritten: bool,
}

impl<F, S: AsRef<str>, D> ArgRecordOf<F, S, D> {
    /// The dtype, if its name is known (any case).
    pub fn data_type(&self) -> Option<DataType> {
        DataType::from_name(self.dtype.as_ref())
    }
}

impl<F, S, D> ArgRecordOf<F, S, D> {
    /// Simpler's sort key: `(task_id, stage, arg_index, role)`.
    pub fn sort_key(&self) -> (u64, DumpStage, u32, ArgRole) {
        (self.task_id.raw(), self.stage, self.arg_index, self.role)
    }
}

/// The product of `shape`, 1 for an empty shape (saturating).
pub fn numel<T: Copy + Into<u64>>(shape: &[T]) -> u64 {
    shape
        .iter()
        .fold(1u64, |acc, &d| acc.saturating_mul(d.into()))
}

/// Sorts entries into Simpler's order (stable): task id, stage
/// (before < after), arg index, role (input < output < inout).
pub fn sort_args<F, S, D>(args: &mut [ArgRecordOf<F, S, D>]) {
    args.sort_by_key(ArgRecordOf::sort_key);
}

/// C++ `ostream << float` (6 significant digits, `%g`), plus `.0` when the
/// text has neither `.` nor `e`: `1.5`, `100.0`, `1.23457e+08`, `1e-05`.
/// NaN and infinities have no number form; see [`ScalarValue::F32`].
pub fn format_float_value(v: f32) -> String {
    let mut text = format_general(f64::from(v), 6);
    if !text.contains('.') && !text.contains('e') {
        text.push_str(".0");
    }
    text
}

/// C's `%.{precision}g` for a finite value.
pub fn format_general(x: f64, precision: usize) -> String {
    let precision = precision.max(1);
    if x == 0.0 {
        return String::from(if x.is_sign_negative() { "-0" } else { "0" });
    }
    let sci = format!("{:.*e}", precision - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= precision as i64 {
        let mantissa = trim_fraction_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = usize::try_from(precision as i64 - 1 - exp).unwrap_or(0);
        trim_fraction_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn trim_fraction_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

// ---------------------------------------------------------------- writer

fn render_value(out: &mut Out, v: &ScalarValue) {
    match *v {
        ScalarValue::F32(f) if f.is_nan() => out.s("null"),
        ScalarValue::F32(f) if f.is_infinite() => {
            out.s(if f > 0.0 { "\"$Inf\"" } else { "\"-$Inf\"" })
        }
        ScalarValue::F32(f) => out.s(&format_float_value(f)),
        ScalarValue::I64(i) => out.i(i),
        ScalarValue::U64(u) => out.u(u),
        ScalarValue::Bool(b) => out.b(b),
    };
}

fn render_entry<F, S, D, T>(out: &mut Out, a: &ArgRecordOf<F, S, D>)
where
    F: AsRef<[i32]>,
    S: AsRef<str>,
    D: AsRef<[T]>,
    T: Copy + Into<i128>,
{
    out.s("{\"task_id\": \"")
        .hex16(a.task_id.raw())
        .s("\"")
        .s(", \"func_id\": ")
        .list(a.func_id.as_ref(), ", ")
        .s(", \"arg_index\": ")
        .u(u64::from(a.arg_index))
        .s(", \"role\": ")
        .q(a.role.as_str())
        .s(", \"stage\": ")
        .q(a.stage.as_str())
        .s(", \"kind\": ")
        .q(a.kind.as_str())
        .s(", \"dtype\": ")
        .q(a.dtype.as_ref());
    if let Some(v) = &a.value {
        out.s(", \"value\": ");
        render_value(out, v);
    }
    out.s(", \"is_contiguous\": ")
        .b(a.is_contiguous)
        .s(", \"shape\": ")
        .list(a.shape.as_ref(), ", ")
        .s(", \"strides\": ")
        .list(a.strides.as_ref(), ", ")
        .s(", \"start_offset\": ")
        .u(a.start_offset)
        .s(", \"numel\": ")
        .u(a.numel);
    if a.arg_index_ambiguous {
        out.s(", \"arg_index_ambiguous\": true");
    }
    out.s(", \"bin_offset\": ")
        .u(a.bin_offset)
        .s(", \"bin_size\": ")
        .u(a.bin_size)
        .s(", \"truncated\": ")
        .b(a.truncated)
        .s(", \"overwritten\": ")
        .b(a.overwritten)
        .s("}");
}

/// The manifest's exact bytes.
pub fn render<F, S, D, T>(m: &ArgsDumpManifestOf<ArgRecordOf<F, S, D>>) -> String
where
    F: AsRef<[i32]> + Sync,
    S: AsRef<str> + Sync,
    D: AsRef<[T]> + Sync,
    T: Copy + Into<i128>,
{
    let mut out = Out::with_capacity(512 + 400 * m.args.len());
    render_into(&mut out, m);
    out.into_string()
}

/// Appends the manifest's bytes to `out`.
fn render_into<F, S, D, T>(out: &mut Out, m: &ArgsDumpManifestOf<ArgRecordOf<F, S, D>>)
where
    F: AsRef<[i32]> + Sync,
    S: AsRef<str> + Sync,
    D: AsRef<[T]> + Sync,
    T: Copy + Into<i128>,
{
    out.s("{\n  \"run_dir\": ")
        .q(&m.run_dir)
        .s(",\n  \"bin_format\": {\n    \"type\": ")
        .q(&m.bin_format.layout)
        .s(",\n    \"byte_order\": ")
        .q(&m.bin_format.byte_order)
        .s("\n  },\n  \"dump_args_level\": ")
        .u(u64::from(m.dump_args_level));
    for (name, v) in counters(m) {
        out.s(",\n  \"").s(name).s("\": ").u(v);
    }
    out.s(",\n  \"bin_file\": ");
    match &m.bin_file {
        Some(name) => out.q(name),
        None => out.s("null"),
    };
    out.s(",\n  \"args\": [\n");
    out.each(&m.args, "    ", ",\n    ", render_entry);
    out.s("\n  ]\n}\n");
}

fn counters<A>(m: &ArgsDumpManifestOf<A>) -> [(&'static str, u64); 9] {
    [
        ("total_args", m.total_args),
        ("before_dispatch", m.before_dispatch),
        ("after_completion", m.after_completion),
        ("input_args", m.input_args),
        ("output_args", m.output_args),
        ("inout_args", m.inout_args),
        ("truncated_args", m.truncated_args),
        ("dropped_records", m.dropped_records),
        ("dropped_overwrite", m.dropped_overwrite),
    ]
}

/// Writes the manifest to `path` (normally `<prefix>/args_dump/args_dump.json`) atomically.
/// Borrowed entries ([`ArgEntry`]) write the same bytes as the owned ones, without an
/// allocation per entry.
pub fn write<F, S, D, T>(
    path: &Path,
    manifest: &ArgsDumpManifestOf<ArgRecordOf<F, S, D>>,
) -> Result<(), WriteError>
where
    F: AsRef<[i32]> + Sync,
    S: AsRef<str> + Sync,
    D: AsRef<[T]> + Sync,
    T: Copy + Into<i128>,
{
    Out::write(path, |out| render_into(out, manifest))
}

// ---------------------------------------------------------------- reader

/// Reads the manifest at `path`.
pub fn read(path: &Path) -> Result<Loaded<ArgsDumpManifest>, ReadError> {
    parse(&json::read_file(path)?, path)
}

/// Parses manifest content; `path` only names the file in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Loaded<ArgsDumpManifest>, ReadError> {
    let value = json::parse(bytes, path)?;
    let mut problems = Vec::new();
    let m = parse_root(&Node::root(&value), &mut problems).map_err(|e| e.into_read_error(path))?;
    Ok(Loaded { value: m, problems })
}

fn parse_root(root: &Node<'_, '_>, problems: &mut Vec<Problem>) -> Result<ArgsDumpManifest, Issue> {
    root.object()?;
    let args_node = match root.opt_field("args")? {
        Some(n) => n,
        // The legacy key; without either, report the missing `args`.
        None => match root.opt_field("tensors")? {
            Some(n) => n,
            None => root.field("args")?,
        },
    };
    let dump_args_level = root.field("dump_args_level")?.u32()?;
    let items = args_node.array()?;

    let mut args = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        match parse_entry(&args_node.item(i, v), problems) {
            Ok(a) => args.push(a),
            Err(issue) => problems.push(issue.into_problem("skipped the entry")),
        }
    }

    let run_dir = match root
        .field("run_dir")
        .and_then(|n| n.str().map(str::to_string))
    {
        Ok(s) => s,
        Err(issue) => {
            problems.push(issue.into_problem("used \"args_dump\""));
            DIR_NAME.to_string()
        }
    };
    let bin_format = match root.field("bin_format").and_then(|n| {
        Ok(BinFormat {
            layout: n.field("type")?.str()?.to_string(),
            byte_order: n.field("byte_order")?.str()?.to_string(),
        })
    }) {
        Ok(f) => f,
        Err(issue) => {
            problems.push(issue.into_problem("assumed logical_contiguous, little_endian"));
            BinFormat::logical_contiguous_le()
        }
    };
    let bin_file = match root.opt_field("bin_file")? {
        Some(n) => match n.opt_str() {
            Ok(s) => s.map(str::to_string),
            Err(issue) => {
                problems.push(issue.into_problem("assumed \"args.bin\""));
                Some(BIN_FILE_NAME.to_string())
            }
        },
        None => Some(BIN_FILE_NAME.to_string()),
    };

    // Counters: read when present, otherwise tallied from the entries read.
    let tallied = tally(&args);
    let names = [
        "total_args",
        "before_dispatch",
        "after_completion",
        "input_args",
        "output_args",
        "inout_args",
        "truncated_args",
        "dropped_records",
        "dropped_overwrite",
    ];
    let mut values = [0u64; 9];
    for (i, name) in names.iter().enumerate() {
        let fallback = tallied.get(i).copied().unwrap_or(0);
        values[i] = match root.field(name).and_then(|n| n.u64()) {
            Ok(v) => v,
            Err(issue) => {
                problems.push(issue.into_problem(&format!("used {fallback}")));
                fallback
            }
        };
    }
    let [total_args, before_dispatch, after_completion, input_args, output_args, inout_args, truncated_args, dropped_records, dropped_overwrite] =
        values;
    let m = ArgsDumpManifest {
        run_dir,
        bin_format,
        dump_args_level,
        total_args,
        before_dispatch,
        after_completion,
        input_args,
        output_args,
        inout_args,
        truncated_args,
        dropped_records,
        dropped_overwrite,
        bin_file,
        args,
    };
    Ok(m)
}

fn named<T>(
    n: &Node<'_, '_>,
    from_name: fn(&str) -> Option<T>,
    expected: &str,
) -> Result<T, Issue> {
    let text = n.str()?;
    from_name(text).ok_or_else(|| n.invalid(format!("is {text:?}; expected {expected}")))
}

fn parse_entry(n: &Node<'_, '_>, problems: &mut Vec<Problem>) -> Result<ArgRecord, Issue> {
    let task_node = n.field("task_id")?;
    let task_id = match task_node.value {
        Value::String(s) => parse_task_id(s).ok_or_else(|| {
            task_node.invalid(format!("is {s:?}; expected \"0x\" and 16 hex digits"))
        })?,
        _ => task_node.u64()?,
    };
    let dtype = n.field("dtype")?.str()?.to_string();
    let shape = n.field("shape")?.vec(|x| x.u64())?;
    let value = match n.opt_field("value")? {
        Some(v) => Some(parse_value(&v, &dtype)?),
        None => None,
    };
    let numel_value = match n.opt_field("numel")? {
        Some(x) => x.u64()?,
        None => numel(&shape),
    };
    let record = ArgRecord {
        task_id: TaskId(task_id),
        func_id: n.field("func_id")?.vec(|x| x.i32())?,
        arg_index: n.field("arg_index")?.u32()?,
        role: named(
            &n.field("role")?,
            ArgRole::from_name,
            "input, output or inout",
        )?,
        stage: named(
            &n.field("stage")?,
            DumpStage::from_name,
            "before_dispatch or after_completion",
        )?,
        kind: named(&n.field("kind")?, ArgKind::from_name, "tensor or scalar")?,
        dtype,
        value,
        is_contiguous: n.field("is_contiguous")?.bool()?,
        strides: n.field("strides")?.vec(|x| x.u64())?,
        shape,
        start_offset: n.field("start_offset")?.u64()?,
        numel: numel_value,
        arg_index_ambiguous: match n.opt_field("arg_index_ambiguous")? {
            Some(x) => x.bool()?,
            None => false,
        },
        bin_offset: n.field("bin_offset")?.u64()?,
        bin_size: n.field("bin_size")?.u64()?,
        truncated: n.field("truncated")?.bool()?,
        overwritten: n.field("overwritten")?.bool()?,
    };
    if record.shape.len() != record.strides.len() {
        problems.push(Problem::new(
            n.key.to_string(),
            format!(
                "shape has {} dimensions but strides {}; kept as written",
                record.shape.len(),
                record.strides.len()
            ),
        ));
    }
    Ok(record)
}

fn parse_value(v: &Node<'_, '_>, dtype: &str) -> Result<ScalarValue, Issue> {
    let dt = DataType::from_name(dtype);
    match v.value {
        Value::Null => Ok(ScalarValue::F32(f32::NAN)),
        Value::Bool(b) => Ok(ScalarValue::Bool(*b)),
        Value::String(s) if s == "$Inf" => Ok(ScalarValue::F32(f32::INFINITY)),
        Value::String(s) if s == "-$Inf" => Ok(ScalarValue::F32(f32::NEG_INFINITY)),
        Value::Number(num) => {
            if num.is_f64() || dt == Some(DataType::Float32) {
                Ok(ScalarValue::F32(num.as_f64().unwrap_or(f64::NAN) as f32))
            } else if let Some(i) = num.as_i64().filter(|i| *i < 0) {
                Ok(ScalarValue::I64(i))
            } else if matches!(dt, Some(DataType::Int32 | DataType::Int64)) {
                num.as_i64()
                    .map(ScalarValue::I64)
                    .ok_or_else(|| v.invalid(format!("is {num}; does not fit {dtype}")))
            } else {
                num.as_u64()
                    .map(ScalarValue::U64)
                    .ok_or_else(|| v.wrong_type("an integer"))
            }
        }
        _ => Err(v.wrong_type("a number, a boolean, null, \"$Inf\" or \"-$Inf\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_slots_become_typed_values() {
        let f = |d, raw| ScalarValue::from_raw(Some(d), raw);
        assert_eq!(
            f(DataType::Float32, u64::from(1.5f32.to_bits())),
            ScalarValue::F32(1.5)
        );
        assert_eq!(f(DataType::Int32, 0xffff_ffff), ScalarValue::I64(-1));
        assert_eq!(
            f(DataType::UInt32, 0x1_ffff_ffff),
            ScalarValue::U64(0xffff_ffff)
        );
        assert_eq!(f(DataType::Int64, u64::MAX), ScalarValue::I64(-1));
        assert_eq!(f(DataType::Bool, 2), ScalarValue::Bool(true));
        assert_eq!(f(DataType::Float16, 0x3c00), ScalarValue::U64(0x3c00));
        assert_eq!(ScalarValue::from_raw(None, 9), ScalarValue::U64(9));
    }

    #[test]
    fn float_values_follow_cpp_ostream() {
        // Expected texts are C's "%g" (checked with Python's '%g' on the
        // same f32 values, widened to double), plus ".0" where needed.
        let cases: [(f32, &str); 16] = [
            (1.5, "1.5"),
            (100.0, "100.0"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (-2.0, "-2.0"),
            (123_456_789.0, "1.23457e+08"),
            (123_456.0, "123456.0"),
            (1_234_567.0, "1.23457e+06"),
            (999_999.5, "1e+06"),
            (0.0001, "0.0001"),
            (0.000_01, "1e-05"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333"),
            (f32::MAX, "3.40282e+38"),
            (f32::MIN_POSITIVE, "1.17549e-38"),
            (1e16, "1e+16"),
        ];
        for (v, expected) in cases {
            assert_eq!(format_float_value(v), expected, "{v:e}");
        }
    }
}
