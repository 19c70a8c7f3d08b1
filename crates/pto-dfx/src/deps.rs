//! `deps.json`: the dependency graph the dep_gen pass records.
//!
//! One line, no spaces, a trailing `\n`; keys in a fixed order. Every
//! 64-bit value (task ids, tensor ids, addresses, element counts and
//! offsets) is a JSON **string** so JavaScript loses no precision; `int32`
//! and `uint32` values are plain numbers. [`render`] writes exactly that.
//!
//! [`read`] accepts 64-bit values as strings or numbers and wraps negative
//! ones to `u64` (the tools normalize with `& (2^64 - 1)`), and takes a
//! missing `early_dispatch` (absent from the documented schema) as `false`.
//! A damaged task, tensor or edge is skipped with a [`Problem`]; a missing
//! or mistyped `tasks` / `tensors` / `edges` is an error.
//!
//! [`tensor_id`] is the FNV-1a 64 hash that names a tensor version.
//!
//! Generations ([`DfxSchema`]): a 2026-09 file begins with `"runtime"`
//! ([`DepsFile::runtime`]; [`detect`] tells the two apart); everything else
//! is the same. An unknown `runtime` value or top-level key is read past
//! with one [`Problem`] naming it.

use std::path::Path;

use crate::error::{Loaded, Problem, ReadError, WriteError};
use crate::json::{self, Issue, Node, Out};
use crate::schema::{self, DfxSchema};
use crate::task_id::TaskId;

pub use crate::task_id::format_task_display;

/// The file name under the output prefix.
pub const FILE_NAME: &str = "deps.json";

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The id of version `version` of the buffer at `buffer_addr`: FNV-1a 64
/// over the 8 little-endian bytes of `buffer_addr`, then the 4 little-endian
/// bytes of `version as u32`.
pub fn tensor_id(buffer_addr: u64, version: i32) -> u64 {
    let mut hash = FNV_OFFSET;
    let addr = buffer_addr.to_le_bytes();
    let ver = (version as u32).to_le_bytes();
    for byte in addr.iter().chain(ver.iter()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The whole file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepsFile {
    /// `runtime` (2026-09 only, written first): the runtime whose task-id
    /// layout the ids follow, e.g. [`schema::RUNTIME_TMR`]. `None` in a
    /// 2026-08 file.
    pub runtime: Option<String>,
    /// `tasks`, in submission order (`alloc_tensors()` pseudo-tasks are absent).
    pub tasks: Vec<DepsTask>,
    /// `tensors`, in first-seen order.
    pub tensors: Vec<DepsTensor>,
    /// `edges`, in emission order; the same `(pred, succ)` may repeat.
    pub edges: Vec<DepsEdge>,
}

impl DepsFile {
    /// The generation the file follows: 2026-09 exactly when it has a `runtime`.
    pub fn schema(&self) -> DfxSchema {
        if self.runtime.is_some() {
            DfxSchema::V2026_09
        } else {
            DfxSchema::V2026_08
        }
    }

    /// The file as `schema` writes it: with `runtime` ([`schema::RUNTIME_TMR`]
    /// unless one is set) for 2026-09, without for 2026-08.
    pub fn with_schema(mut self, schema: DfxSchema) -> Self {
        self.runtime = runtime_key(schema).map(|tmr| self.runtime.unwrap_or_else(|| tmr.into()));
        self
    }

    /// Cross-record checks Simpler's dep_gen test applies, as problems:
    /// every `tensors[]` id is [`tensor_id`]`(buffer_addr, version)`, and
    /// every non-explicit edge's `tensor_id` is listed in `tensors[]`.
    pub fn check_consistency(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut known = std::collections::HashSet::with_capacity(self.tensors.len());
        for (i, t) in self.tensors.iter().enumerate() {
            known.insert(t.tensor_id);
            let expected = tensor_id(t.buffer_addr, t.version);
            if t.tensor_id != expected {
                problems.push(Problem::new(
                    format!("tensors[{i}].tensor_id"),
                    format!(
                        "is {} but (buffer_addr {}, version {}) hashes to {expected}",
                        t.tensor_id, t.buffer_addr, t.version
                    ),
                ));
            }
        }
        for (i, e) in self.edges.iter().enumerate() {
            if let Some(c) = &e.consumer {
                if !known.contains(&c.tensor_id) {
                    problems.push(Problem::new(
                        format!("edges[{i}].tensor_id"),
                        format!("{} is not listed in tensors[]", c.tensor_id),
                    ));
                }
            }
        }
        problems
    }
}

/// Whether a task was submitted inside a manual scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeMode {
    /// `"auto"`.
    Auto,
    /// `"manual"`.
    Manual,
}

impl ScopeMode {
    /// The name written in `scope`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Manual => "manual",
        }
    }

    /// The mode named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "manual" => Some(Self::Manual),
            _ => None,
        }
    }
}

/// One `tasks[]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepsTask {
    /// `task_id`.
    pub task_id: TaskId,
    /// `scope`.
    pub scope: ScopeMode,
    /// `early_dispatch`.
    pub early_dispatch: bool,
    /// `kernel_ids`: `[aic, aiv0, aiv1]`, −1 for an inactive slot; all −1
    /// marks a dummy task. Simpler always writes 3; the tools ignore other lengths.
    pub kernel_ids: Vec<i32>,
    /// `block_num`: SPMD logical block count (> 1 means SPMD).
    pub block_num: u32,
    /// `args`.
    pub args: Vec<DepsArg>,
}

impl DepsTask {
    /// Whether every kernel slot is inactive (`submit_dummy_task`).
    pub fn is_dummy(&self) -> bool {
        self.kernel_ids.iter().all(|&k| k < 0)
    }
}

/// The direction of a task argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgDirection {
    /// `"INPUT"`.
    Input,
    /// `"OUTPUT"`.
    Output,
    /// `"INOUT"`.
    Inout,
    /// `"OUTPUT_EXISTING"`.
    OutputExisting,
}

impl ArgDirection {
    /// The name written in `type`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Input => "INPUT",
            Self::Output => "OUTPUT",
            Self::Inout => "INOUT",
            Self::OutputExisting => "OUTPUT_EXISTING",
        }
    }

    /// The direction named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::from_name_bytes(name.as_bytes())
    }

    /// The direction named by the bytes `name` (the fast reader's strings are bytes).
    pub fn from_name_bytes(name: &[u8]) -> Option<Self> {
        match name {
            b"INPUT" => Some(Self::Input),
            b"OUTPUT" => Some(Self::Output),
            b"INOUT" => Some(Self::Inout),
            b"OUTPUT_EXISTING" => Some(Self::OutputExisting),
            _ => None,
        }
    }
}

/// One `args[]` entry of a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepsArg {
    /// `idx`.
    pub idx: i32,
    /// `type`.
    pub direction: ArgDirection,
    /// The tensor fields; `None` when there is no tensor info (plain
    /// `OUTPUT` slots at submit time).
    pub tensor: Option<TensorView>,
}

/// A tensor slice: which tensor and the view geometry (element units).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorView {
    /// `tensor_id` / `consumer_tensor_id`.
    pub tensor_id: u64,
    /// `dtype`, e.g. `FLOAT32`.
    pub dtype: String,
    /// `shape`.
    pub shape: Vec<u32>,
    /// `start_offset`, in elements.
    pub start_offset: u64,
    /// `strides`, in elements.
    pub strides: Vec<u32>,
}

/// One `tensors[]` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepsTensor {
    /// `tensor_id`: [`tensor_id`]`(buffer_addr, version)`.
    pub tensor_id: u64,
    /// `buffer_addr`.
    pub buffer_addr: u64,
    /// `version`.
    pub version: i32,
    /// `dtype`.
    pub dtype: String,
    /// `buffer_numel`: elements of the underlying storage.
    pub buffer_numel: u64,
}

/// Where an edge came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeSource {
    /// `"explicit"`: a user dependency (`arg` is −1).
    Explicit,
    /// `"creator"`: from the task that allocated the buffer.
    Creator,
    /// `"tensormap"`: from a TensorMap overlap lookup.
    Tensormap,
}

impl EdgeSource {
    /// The name written in `source`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Explicit => "explicit",
            Self::Creator => "creator",
            Self::Tensormap => "tensormap",
        }
    }

    /// The source named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "explicit" => Some(Self::Explicit),
            "creator" => Some(Self::Creator),
            "tensormap" => Some(Self::Tensormap),
            _ => None,
        }
    }
}

/// `flags`: written `["wait","retain"]`, `["wait"]`, `["retain"]` or `[]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DepFlags {
    /// `"wait"`: the successor waits for the predecessor.
    pub wait: bool,
    /// `"retain"`: the successor keeps the predecessor's output alive.
    pub retain: bool,
}

impl DepFlags {
    /// `["wait","retain"]`: creator and explicit edges.
    pub const WAIT_RETAIN: Self = Self {
        wait: true,
        retain: true,
    };
    /// `["wait"]`: TensorMap edges.
    pub const WAIT: Self = Self {
        wait: true,
        retain: false,
    };
}

/// How a TensorMap edge's consumer and producer views overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overlap {
    /// `"covered"`.
    Covered,
    /// `"other"`.
    Other,
    /// `"no_overlap"`.
    NoOverlap,
}

impl Overlap {
    /// The name written in `overlap`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Covered => "covered",
            Self::Other => "other",
            Self::NoOverlap => "no_overlap",
        }
    }

    /// The overlap named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "covered" => Some(Self::Covered),
            "other" => Some(Self::Other),
            "no_overlap" => Some(Self::NoOverlap),
            _ => None,
        }
    }
}

/// The producer side of a TensorMap edge (`producer_*` keys).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerView {
    /// `producer_shape`.
    pub shape: Vec<u32>,
    /// `producer_start_offset`.
    pub start_offset: u64,
    /// `producer_strides`.
    pub strides: Vec<u32>,
}

/// One `edges[]` entry.
pub type DepsEdge = DepsEdgeOf<TensorView, ProducerView>;

/// One `edges[]` entry with its consumer view as `C` and its producer region as `P`: the
/// model's owned [`DepsEdge`], or views borrowed for the writer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DepsEdgeOf<C, P> {
    /// `pred`: the predecessor (may be an `alloc_tensors()` pseudo-task on creator edges).
    pub pred: TaskId,
    /// `succ`.
    pub succ: TaskId,
    /// `arg`: the consumer's arg index, −1 for explicit edges.
    pub arg: i32,
    /// `source`.
    pub source: EdgeSource,
    /// `flags`.
    pub flags: DepFlags,
    /// `overlap` (Simpler: TensorMap edges only).
    pub overlap: Option<Overlap>,
    /// `tensor_id`, `consumer_dtype`, `consumer_shape`,
    /// `consumer_start_offset`, `consumer_strides` (Simpler: all but explicit edges).
    pub consumer: Option<C>,
    /// `producer_shape`, `producer_start_offset`, `producer_strides`
    /// (Simpler: TensorMap edges only).
    pub producer: Option<P>,
}

impl<C, P> DepsEdgeOf<C, P> {
    /// The same edge with its consumer view and producer region mapped by `c` and `p`.
    pub fn map_views<'s, C2, P2>(
        &'s self,
        c: impl FnOnce(&'s C) -> C2,
        p: impl FnOnce(&'s P) -> P2,
    ) -> DepsEdgeOf<C2, P2> {
        DepsEdgeOf {
            pred: self.pred,
            succ: self.succ,
            arg: self.arg,
            source: self.source,
            flags: self.flags,
            overlap: self.overlap,
            consumer: self.consumer.as_ref().map(c),
            producer: self.producer.as_ref().map(p),
        }
    }
}

// ---------------------------------------------------------------- writer

/// The file's exact bytes.
pub fn render(file: &DepsFile) -> String {
    let mut out = Out::with_capacity(
        64 + 160 * file.tasks.len() + 128 * file.tensors.len() + 256 * file.edges.len(),
    );
    render_into(&mut out, file);
    out.into_string()
}

/// The `runtime` key a file of generation `schema` has unless one is set: none in 2026-08,
/// [`schema::RUNTIME_TMR`] in 2026-09.
pub(crate) fn runtime_key(schema: DfxSchema) -> Option<&'static str> {
    match schema {
        DfxSchema::V2026_08 => None,
        DfxSchema::V2026_09 => Some(schema::RUNTIME_TMR),
    }
}

/// Appends the file's bytes to `out`.
fn render_into(out: &mut Out, file: &DepsFile) {
    let mut json = JsonDeps::begin(out, file.runtime.as_deref());
    for t in &file.tasks {
        let head = TaskHead {
            task_id: t.task_id,
            scope: t.scope,
            early_dispatch: t.early_dispatch,
            kernel_ids: &t.kernel_ids,
            block_num: t.block_num,
        };
        let args = t
            .args
            .iter()
            .map(|a| (a.idx, a.direction, a.tensor.as_ref().map(TensorView::text)));
        json.task(&head, args);
    }
    json.tensors();
    for t in &file.tensors {
        json.tensor(&TensorText {
            tensor_id: t.tensor_id,
            buffer_addr: t.buffer_addr,
            version: t.version,
            dtype: &t.dtype,
            buffer_numel: t.buffer_numel,
        });
    }
    json.edges();
    for e in &file.edges {
        json.edge(&e.map_views(TensorView::text, |p| RegionText {
            shape: &p.shape,
            start_offset: p.start_offset,
            strides: &p.strides,
        }));
    }
    json.end();
}

impl ViewText<'_> {
    /// The model's owned copy.
    pub(crate) fn to_view(&self) -> TensorView {
        TensorView {
            tensor_id: self.tensor_id,
            dtype: self.dtype.to_string(),
            shape: self.shape.to_vec(),
            start_offset: self.start_offset,
            strides: self.strides.to_vec(),
        }
    }
}

impl RegionText<'_> {
    /// The model's owned copy.
    pub(crate) fn to_producer(&self) -> ProducerView {
        ProducerView {
            shape: self.shape.to_vec(),
            start_offset: self.start_offset,
            strides: self.strides.to_vec(),
        }
    }
}

impl TensorView {
    fn text(&self) -> ViewText<'_> {
        ViewText {
            tensor_id: self.tensor_id,
            dtype: &self.dtype,
            shape: &self.shape,
            start_offset: self.start_offset,
            strides: &self.strides,
        }
    }
}

/// A tensor view as `deps.json` writes it, borrowed from the model or from the records.
pub(crate) struct ViewText<'a> {
    pub tensor_id: u64,
    pub dtype: &'a str,
    pub shape: &'a [u32],
    pub start_offset: u64,
    pub strides: &'a [u32],
}

/// A producer's region as `deps.json` writes it.
pub(crate) struct RegionText<'a> {
    pub shape: &'a [u32],
    pub start_offset: u64,
    pub strides: &'a [u32],
}

/// A task's fields before its arguments.
pub(crate) struct TaskHead<'a> {
    pub task_id: TaskId,
    pub scope: ScopeMode,
    pub early_dispatch: bool,
    pub kernel_ids: &'a [i32],
    pub block_num: u32,
}

/// A `tensors[]` entry.
pub(crate) struct TensorText<'a> {
    pub tensor_id: u64,
    pub buffer_addr: u64,
    pub version: i32,
    pub dtype: &'a str,
    pub buffer_numel: u64,
}

/// An `edges[]` entry as the writer takes it.
pub(crate) type EdgeText<'a> = DepsEdgeOf<ViewText<'a>, RegionText<'a>>;

/// `deps.json`'s text, section by section: the one layout of the file, whether it is
/// rendered from the model ([`render`]) or streamed from the runtime's records
/// ([`crate::compact::deps::write_json`]). Call [`task`](Self::task) for each task,
/// then [`tensors`](Self::tensors) and [`tensor`](Self::tensor) for each tensor, then
/// [`edges`](Self::edges) and [`edge`](Self::edge) for each edge, then
/// [`end`](Self::end).
pub(crate) struct JsonDeps<'o> {
    out: &'o mut Out,
    /// No entry of the current section written yet.
    first: bool,
}

impl<'o> JsonDeps<'o> {
    pub(crate) fn begin(out: &'o mut Out, runtime: Option<&str>) -> Self {
        out.s("{");
        if let Some(runtime) = runtime {
            out.s("\"runtime\":").q(runtime).s(",");
        }
        out.s("\"tasks\":[");
        Self { out, first: true }
    }

    /// The separator before the current section's next entry.
    fn next(&mut self) -> &mut Out {
        if !std::mem::take(&mut self.first) {
            self.out.s(",");
        }
        self.out
    }

    pub(crate) fn task<'v>(
        &mut self,
        head: &TaskHead<'_>,
        args: impl Iterator<Item = (i32, ArgDirection, Option<ViewText<'v>>)>,
    ) {
        self.next()
            .s("{\"task_id\":")
            .qu(head.task_id.raw())
            .s(",\"scope\":")
            .q(head.scope.as_str())
            .s(",\"early_dispatch\":")
            .b(head.early_dispatch)
            .s(",\"kernel_ids\":")
            .list(head.kernel_ids, ",")
            .s(",\"block_num\":")
            .u(u64::from(head.block_num))
            .s(",\"args\":[");
        for (j, (idx, direction, view)) in args.enumerate() {
            let out = &mut *self.out;
            if j > 0 {
                out.s(",");
            }
            out.s("{\"idx\":")
                .i(i64::from(idx))
                .s(",\"type\":")
                .q(direction.as_str());
            if let Some(v) = view {
                out.s(",\"tensor_id\":")
                    .qu(v.tensor_id)
                    .s(",\"dtype\":")
                    .q(v.dtype)
                    .s(",\"shape\":")
                    .list(v.shape, ",")
                    .s(",\"start_offset\":")
                    .qu(v.start_offset)
                    .s(",\"strides\":")
                    .list(v.strides, ",");
            }
            out.s("}");
        }
        self.out.s("]}");
    }

    pub(crate) fn tensors(&mut self) {
        self.out.s("],\"tensors\":[");
        self.first = true;
    }

    pub(crate) fn tensor(&mut self, t: &TensorText<'_>) {
        self.next()
            .s("{\"tensor_id\":")
            .qu(t.tensor_id)
            .s(",\"buffer_addr\":")
            .qu(t.buffer_addr)
            .s(",\"version\":")
            .i(i64::from(t.version))
            .s(",\"dtype\":")
            .q(t.dtype)
            .s(",\"buffer_numel\":")
            .qu(t.buffer_numel)
            .s("}");
    }

    pub(crate) fn edges(&mut self) {
        self.out.s("],\"edges\":[");
        self.first = true;
    }

    pub(crate) fn edge(&mut self, e: &EdgeText<'_>) {
        let out = self.next();
        out.s("{\"pred\":")
            .qu(e.pred.raw())
            .s(",\"succ\":")
            .qu(e.succ.raw())
            .s(",\"arg\":")
            .i(i64::from(e.arg))
            .s(",\"source\":")
            .q(e.source.as_str())
            .s(",\"flags\":")
            .s(match (e.flags.wait, e.flags.retain) {
                (true, true) => "[\"wait\",\"retain\"]",
                (true, false) => "[\"wait\"]",
                (false, true) => "[\"retain\"]",
                (false, false) => "[]",
            });
        if let Some(o) = e.overlap {
            out.s(",\"overlap\":").q(o.as_str());
        }
        if let Some(c) = &e.consumer {
            out.s(",\"tensor_id\":")
                .qu(c.tensor_id)
                .s(",\"consumer_dtype\":")
                .q(c.dtype)
                .s(",\"consumer_shape\":")
                .list(c.shape, ",")
                .s(",\"consumer_start_offset\":")
                .qu(c.start_offset)
                .s(",\"consumer_strides\":")
                .list(c.strides, ",");
        }
        if let Some(p) = &e.producer {
            out.s(",\"producer_shape\":")
                .list(p.shape, ",")
                .s(",\"producer_start_offset\":")
                .qu(p.start_offset)
                .s(",\"producer_strides\":")
                .list(p.strides, ",");
        }
        out.s("}");
    }

    pub(crate) fn end(self) {
        self.out.s("]}\n");
    }
}

/// Writes `file` to `path` atomically, streamed (the text is never whole in memory).
pub fn write(path: &Path, file: &DepsFile) -> Result<(), WriteError> {
    Out::write(path, |out| render_into(out, file))
}

// ---------------------------------------------------------------- reader

/// The generation of a `deps.json` from its content: 2026-09 when its first
/// key is `"runtime"` (Simpler writes it first), else 2026-08.
pub fn detect(bytes: &[u8]) -> DfxSchema {
    let text = bytes.trim_ascii_start();
    let Some(rest) = text.strip_prefix(b"{") else {
        return DfxSchema::V2026_08;
    };
    if rest.trim_ascii_start().starts_with(b"\"runtime\"") {
        DfxSchema::V2026_09
    } else {
        DfxSchema::V2026_08
    }
}

/// The top-level keys of either generation.
const ROOT_KEYS: [&str; 4] = ["runtime", "tasks", "tensors", "edges"];

/// Reads the file at `path`.
pub fn read(path: &Path) -> Result<Loaded<DepsFile>, ReadError> {
    parse(&json::read_file(path)?, path)
}

/// Parses file content; `path` only names the file in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Loaded<DepsFile>, ReadError> {
    let value = json::parse(bytes, path)?;
    let root = Node::root(&value);
    let mut problems = Vec::new();
    let file = parse_root(&root, &mut problems).map_err(|e| e.into_read_error(path))?;
    Ok(Loaded {
        value: file,
        problems,
    })
}

fn parse_root(root: &Node<'_, '_>, problems: &mut Vec<Problem>) -> Result<DepsFile, Issue> {
    schema::unknown_keys(root.object()?.keys(), &ROOT_KEYS, "", problems);
    let runtime = match root.opt_field("runtime")? {
        Some(r) => {
            let value = r.str()?;
            problems.extend(schema::runtime_problem("runtime", value));
            Some(value.to_string())
        }
        None => None,
    };
    // Check all three keys before reading items, so a missing key wins over item damage.
    let tasks_node = root.field("tasks")?;
    let tensors_node = root.field("tensors")?;
    let edges_node = root.field("edges")?;
    let tasks = items(&tasks_node, problems, |n| {
        let kernel_ids = n.field("kernel_ids")?.vec(|k| k.i32())?;
        Ok(DepsTask {
            task_id: TaskId(n.field("task_id")?.u64_lenient()?),
            scope: named(
                &n.field("scope")?,
                ScopeMode::from_name,
                "\"auto\" or \"manual\"",
            )?,
            early_dispatch: match n.opt_field("early_dispatch")? {
                Some(e) => e.bool()?,
                None => false,
            },
            kernel_ids,
            block_num: n.field("block_num")?.u32()?,
            args: n.field("args")?.vec(parse_arg)?,
        })
    })?;
    for (i, t) in tasks.iter().enumerate() {
        if t.kernel_ids.len() != 3 {
            problems.push(Problem::new(
                format!("tasks[{i}].kernel_ids"),
                format!(
                    "has {} entries; expected 3 ([aic, aiv0, aiv1]); kept as written",
                    t.kernel_ids.len()
                ),
            ));
        }
    }
    let tensors = items(&tensors_node, problems, |n| {
        Ok(DepsTensor {
            tensor_id: n.field("tensor_id")?.u64_lenient()?,
            buffer_addr: n.field("buffer_addr")?.u64_lenient()?,
            version: n.field("version")?.i32()?,
            dtype: n.field("dtype")?.str()?.to_string(),
            buffer_numel: n.field("buffer_numel")?.u64_lenient()?,
        })
    })?;
    let edges = items(&edges_node, problems, parse_edge)?;
    Ok(DepsFile {
        runtime,
        tasks,
        tensors,
        edges,
    })
}

fn items<T>(
    node: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
    mut item: impl FnMut(&Node<'_, '_>) -> Result<T, Issue>,
) -> Result<Vec<T>, Issue> {
    let values = node.array()?;
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        match item(&node.item(i, v)) {
            Ok(x) => out.push(x),
            Err(issue) => problems.push(issue.into_problem("skipped the entry")),
        }
    }
    Ok(out)
}

fn named<T>(
    n: &Node<'_, '_>,
    from_name: fn(&str) -> Option<T>,
    expected: &str,
) -> Result<T, Issue> {
    let text = n.str()?;
    from_name(text).ok_or_else(|| n.invalid(format!("is {text:?}; expected {expected}")))
}

fn parse_arg(n: &Node<'_, '_>) -> Result<DepsArg, Issue> {
    let tensor = match n.opt_field("tensor_id")? {
        Some(id) => Some(TensorView {
            tensor_id: id.u64_lenient()?,
            dtype: n.field("dtype")?.str()?.to_string(),
            shape: n.field("shape")?.vec(|x| x.u32())?,
            start_offset: n.field("start_offset")?.u64_lenient()?,
            strides: n.field("strides")?.vec(|x| x.u32())?,
        }),
        None => None,
    };
    Ok(DepsArg {
        idx: n.field("idx")?.i32()?,
        direction: named(
            &n.field("type")?,
            ArgDirection::from_name,
            "INPUT, OUTPUT, INOUT or OUTPUT_EXISTING",
        )?,
        tensor,
    })
}

fn parse_edge(n: &Node<'_, '_>) -> Result<DepsEdge, Issue> {
    let source = named(
        &n.field("source")?,
        EdgeSource::from_name,
        "explicit, creator or tensormap",
    )?;
    let flags = match n.opt_field("flags")? {
        Some(flags_node) => parse_flags(&flags_node)?,
        // host_build_graph's edges (2026-09) carry no flags: the runtime's rule.
        None if source == EdgeSource::Tensormap => DepFlags::WAIT,
        None => DepFlags::WAIT_RETAIN,
    };
    let consumer = match n.opt_field("tensor_id")? {
        Some(id) => Some(TensorView {
            tensor_id: id.u64_lenient()?,
            dtype: n.field("consumer_dtype")?.str()?.to_string(),
            shape: n.field("consumer_shape")?.vec(|x| x.u32())?,
            start_offset: n.field("consumer_start_offset")?.u64_lenient()?,
            strides: n.field("consumer_strides")?.vec(|x| x.u32())?,
        }),
        None => None,
    };
    let producer = match n.opt_field("producer_shape")? {
        Some(shape) => Some(ProducerView {
            shape: shape.vec(|x| x.u32())?,
            start_offset: n.field("producer_start_offset")?.u64_lenient()?,
            strides: n.field("producer_strides")?.vec(|x| x.u32())?,
        }),
        None => None,
    };
    Ok(DepsEdge {
        pred: TaskId(n.field("pred")?.u64_lenient()?),
        succ: TaskId(n.field("succ")?.u64_lenient()?),
        arg: n.field("arg")?.i32()?,
        source,
        flags,
        overlap: match n.opt_field("overlap")? {
            Some(o) => Some(named(
                &o,
                Overlap::from_name,
                "covered, other or no_overlap",
            )?),
            None => None,
        },
        consumer,
        producer,
    })
}

fn parse_flags(flags_node: &Node<'_, '_>) -> Result<DepFlags, Issue> {
    let mut flags = DepFlags::default();
    for (i, v) in flags_node.array()?.iter().enumerate() {
        let f = flags_node.item(i, v);
        match f.str()? {
            "wait" => flags.wait = true,
            "retain" => flags.retain = true,
            other => {
                return Err(f.invalid(format!("is {other:?}; expected \"wait\" or \"retain\"")))
            }
        }
    }
    Ok(flags)
}
