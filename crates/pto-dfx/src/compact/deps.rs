//! `deps.bin`: the dep_gen log in compact form.
//!
//! After the framing ([`super`]) and a `schema` byte (the generation of
//! `deps.json` the run asked for, [`super::schema_code`]) come five
//! sections, each a u64 count and fixed-size records: `views`
//! ([`VIEW_BYTES`]: the run's tensor views), `regions` ([`REGION_BYTES`]:
//! the producer regions of TensorMap edges), `tasks` ([`TASK_BYTES`]), `args` ([`ARG_BYTES`]; the tasks'
//! arguments in task order, each task owning the next `n_args`) and `edges`
//! ([`EDGE_BYTES`]), in the runtime's emission order. Arguments and edges
//! name their view and region by index into those tables (`u32::MAX`: none),
//! so a view that recurs (a tensor's view as one task's argument, the
//! edges' consumer view and later tasks' arguments) is written once, as a
//! rule: a writer may store a value more than once (the runtime's log keeps
//! one per value while it recurs soon), and a reader resolves indices to
//! values, so that changes the size only.
//! `alloc_tensors` pseudo-tasks are kept (flagged); [`model`] leaves them
//! out as `deps.json` does.
//!
//! | record | layout |
//! |---|---|
//! | view | `dtype` u8, `ndims` u8, `version` i32, `addr` u64, `buffer_bytes` u64, `start_offset` u64, `shapes` and `strides` ([`MAX_DIMS`] × u32 each) |
//! | region | `ndims` u8, `start_offset` u64, `shapes`, `strides` |
//! | task | `task` u64, `kernel_ids` 3 × i32, `block_num` u32, `flags` u8 (1 manual scope, 2 early dispatch, 4 alloc), `n_args` u32 |
//! | arg | `type` u8 ([`ArgType`]), `view` u32 |
//! | edge | `pred` u64, `succ` u64, `arg` i32, `source` u8 (0 explicit, 1 creator, 2 tensormap), `flags` u8 (1 wait, 2 retain), `overlap` u8 (0 none, 1 no overlap, 2 covered, 3 other), `consumer` u32 (a view), `producer` u32 (a region) |
//!
//! This layout is format version [`FIRST_VERSION`]; a `deps.bin` of an
//! earlier version (each view inline in every argument and edge, `inline`)
//! is read as well, into the same records.

use std::path::Path;

use super::{CompactError, CompactErrorKind, Cursor, Enc, Sink};

mod inline;
use crate::deps::{
    ArgDirection, DepFlags, DepsArg, DepsEdgeOf, DepsFile, DepsTask, DepsTensor, EdgeSource,
    Overlap, ScopeMode,
};
use crate::error::WriteError;
use crate::schema::DfxSchema;
use crate::task_id::TaskId;

/// The file name under the output prefix.
pub const FILE_NAME: &str = "deps.bin";

/// The first 8 bytes of the file.
pub const MAGIC: [u8; 8] = *b"PTO-DEP\0";

/// Most dimensions of a view.
pub const MAX_DIMS: usize = 5;

/// The first format version ([`super::VERSION`]) with this layout; a reader
/// takes a `deps.bin` of an earlier one in its inline layout.
pub const FIRST_VERSION: u32 = 4;

/// The index that stands for "no view" / "no region".
pub const NONE: u32 = u32::MAX;

/// Bytes of one view record.
pub const VIEW_BYTES: usize = 2 + 4 + 24 + 8 * MAX_DIMS;
/// Bytes of one region record.
pub const REGION_BYTES: usize = 1 + 8 + 8 * MAX_DIMS;
/// Bytes of one task record.
pub const TASK_BYTES: usize = 8 + 12 + 4 + 1 + 4;
/// Bytes of one argument record.
pub const ARG_BYTES: usize = 1 + 4;
/// Bytes of one edge record.
pub const EDGE_BYTES: usize = 8 + 8 + 4 + 3 + 4 + 4;

/// A tensor view as the runtime records it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct View {
    /// Buffer base address.
    pub addr: u64,
    /// Buffer size in bytes.
    pub buffer_bytes: u64,
    /// Element offset of the view origin.
    pub start_offset: u64,
    /// Version tag.
    pub version: i32,
    /// Element type code ([`crate::DataType`]).
    pub dtype: u8,
    /// Rank, at most [`MAX_DIMS`].
    pub ndims: u8,
    /// Extents (the first `ndims`).
    pub shapes: [u32; MAX_DIMS],
    /// Element strides (the first `ndims`).
    pub strides: [u32; MAX_DIMS],
}

/// The producer's registered region of a TensorMap edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Geometry {
    /// Element offset of the origin.
    pub start_offset: u64,
    /// Rank, at most [`MAX_DIMS`].
    pub ndims: u8,
    /// Extents.
    pub shapes: [u32; MAX_DIMS],
    /// Element strides.
    pub strides: [u32; MAX_DIMS],
}

/// The runtime's argument type of a tensor argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    /// 0: input.
    Input = 0,
    /// 1: output (runtime-allocated).
    Output = 1,
    /// 2: input and output.
    InOut = 2,
    /// 3: output into an existing tensor.
    OutputExisting = 3,
    /// 4: input without a dependency (written `INPUT`).
    NoDep = 4,
}

impl ArgType {
    fn from_code(code: u8) -> Option<Self> {
        [
            Self::Input,
            Self::Output,
            Self::InOut,
            Self::OutputExisting,
            Self::NoDep,
        ]
        .get(usize::from(code))
        .copied()
    }

    /// The direction `deps.json` writes (`NoDep` is `INPUT`).
    pub fn direction(self) -> ArgDirection {
        match self {
            Self::Input | Self::NoDep => ArgDirection::Input,
            Self::Output => ArgDirection::Output,
            Self::InOut => ArgDirection::Inout,
            Self::OutputExisting => ArgDirection::OutputExisting,
        }
    }
}

/// One tensor argument of a task, naming its view by `V`: the [`View`] itself
/// ([`Arg`]) or an index into the views ([`ArgRef`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgOf<V> {
    /// Its type.
    pub ty: ArgType,
    /// Its view; `None` for a runtime-allocated output.
    pub view: Option<V>,
}

/// One tensor argument of a task, as a reader hands it over.
pub type Arg = ArgOf<View>;

/// An argument as [`write()`] takes it: its view by index into the views.
pub type ArgRef = ArgOf<u32>;

/// One submitted task (its arguments travel beside it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Task {
    /// Raw task id.
    pub task: u64,
    /// Submitted inside a manual scope.
    pub manual_scope: bool,
    /// `set_allow_early_resolve(true)`.
    pub early_dispatch: bool,
    /// An `alloc_tensors` pseudo-task (absent from `deps.json`).
    pub is_alloc: bool,
    /// Kernel ids of the AIC, AIV0, AIV1 slots.
    pub kernel_ids: [i32; 3],
    /// SPMD blocks.
    pub block_num: u32,
}

/// One edge `pred → succ`, naming its consumer view by `V` and its producer
/// region by `G`: the values ([`Edge`]) or indices into the views and regions
/// ([`EdgeRef`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeOf<V, G> {
    /// Producer.
    pub pred: u64,
    /// Consumer.
    pub succ: u64,
    /// Consumer argument index, −1 for explicit edges.
    pub arg: i32,
    /// Where it came from.
    pub source: EdgeSource,
    /// The consumer waits for the producer.
    pub wait: bool,
    /// The consumer retains the producer.
    pub retain: bool,
    /// TensorMap overlap class.
    pub overlap: Option<Overlap>,
    /// The consumer's view.
    pub consumer: Option<V>,
    /// The producer's region.
    pub producer: Option<G>,
}

impl<V, G> EdgeOf<V, G> {
    /// The same edge naming its consumer view and producer region by `consumer` and
    /// `producer` (an index resolved to its value, say).
    pub fn with_views<V2, G2>(self, consumer: Option<V2>, producer: Option<G2>) -> EdgeOf<V2, G2> {
        EdgeOf {
            pred: self.pred,
            succ: self.succ,
            arg: self.arg,
            source: self.source,
            wait: self.wait,
            retain: self.retain,
            overlap: self.overlap,
            consumer,
            producer,
        }
    }
}

/// One edge, as a reader hands it over.
pub type Edge = EdgeOf<View, Geometry>;

/// An edge as [`write()`] takes it: its consumer view and producer region by
/// index into the views and the regions.
pub type EdgeRef = EdgeOf<u32, u32>;

/// A task with its arguments, as read from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskWithArgs {
    /// The task.
    pub task: Task,
    /// Its arguments.
    pub args: Vec<Arg>,
}

/// A whole compact dep_gen log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DepsRecords {
    /// Tasks in submission order, allocation tasks included.
    pub tasks: Vec<TaskWithArgs>,
    /// Edges in emission order.
    pub edges: Vec<Edge>,
    /// The generation of `deps.json` the run asked for (2026-08 in a
    /// version-1 file).
    pub schema: DfxSchema,
}

impl DepsRecords {
    /// The JSON model of these records ([`model`]) in their generation.
    pub fn to_model(&self) -> DepsFile {
        model(
            self.tasks.iter().map(|t| (t.task, t.args.iter().copied())),
            self.edges.iter().copied(),
        )
        .with_schema(self.schema)
    }

    /// Writes `deps.json` of these records in their generation to `path` ([`write_json`]:
    /// the bytes of [`crate::deps::write`] of [`Self::to_model`], without the model).
    pub fn write_json(&self, path: &Path) -> Result<(), WriteError> {
        write_json(
            path,
            self.schema,
            self.tasks.iter().map(|t| (t.task, t.args.iter().copied())),
            self.edges.iter().copied(),
        )
    }
}

fn dtype_name(code: u8) -> String {
    crate::DataType::name_of_code(u32::from(code)).to_string()
}

fn dims(n: u8) -> usize {
    usize::from(n).min(MAX_DIMS)
}

/// A `tensors[]` entry but its id, its dtype by code.
#[derive(Clone, Copy)]
struct TensorEntry {
    buffer_addr: u64,
    version: i32,
    dtype: u8,
    buffer_numel: u64,
}

/// The distinct tensor versions of the views, in first-seen order.
#[derive(Default)]
struct Tensors {
    seen: pto_base::idmap::IdSet<u64>,
    list: Vec<(u64, TensorEntry)>,
}

impl Tensors {
    fn note(&mut self, t: &View) {
        let id = crate::deps::tensor_id(t.addr, t.version);
        if self.seen.insert(id) {
            let es = crate::DataType::from_code(u32::from(t.dtype)).map_or(1, |d| d.elem_size());
            let entry = TensorEntry {
                buffer_addr: t.addr,
                version: t.version,
                dtype: t.dtype,
                buffer_numel: t.buffer_bytes / (es as u64).max(1),
            };
            self.list.push((id, entry));
        }
    }
}

/// View `t` as `deps.json` writes it (its shape and strides in `t`).
fn view_text(t: &View) -> crate::deps::ViewText<'_> {
    let n = dims(t.ndims);
    crate::deps::ViewText {
        tensor_id: crate::deps::tensor_id(t.addr, t.version),
        dtype: crate::DataType::name_of_code(u32::from(t.dtype)),
        shape: &t.shapes[..n],
        start_offset: t.start_offset,
        strides: &t.strides[..n],
    }
}

/// Region `g` as `deps.json` writes it (its shape and strides in `g`).
fn region_text(g: &Geometry) -> crate::deps::RegionText<'_> {
    let n = dims(g.ndims);
    crate::deps::RegionText {
        shape: &g.shapes[..n],
        start_offset: g.start_offset,
        strides: &g.strides[..n],
    }
}

/// `deps.json`'s model of the records, whichever way they come: tasks (with
/// their arguments) in submission order, edges in emission order.
///
/// Allocation tasks are left out; `tensors[]` lists every distinct tensor
/// version in first-seen order (task arguments first, then edge consumers),
/// with `buffer_numel` = buffer bytes / element size.
pub fn model<T, A, E>(tasks: T, edges: E) -> DepsFile
where
    T: IntoIterator<Item = (Task, A)>,
    A: IntoIterator<Item = Arg>,
    E: IntoIterator<Item = Edge>,
{
    let mut file = DepsFile::default();
    let mut tensors = Tensors::default();
    for (task, args) in tasks {
        if task.is_alloc {
            continue;
        }
        let mut out = Vec::new();
        for (i, a) in args.into_iter().enumerate() {
            if let Some(t) = &a.view {
                tensors.note(t);
            }
            out.push(DepsArg {
                idx: i as i32,
                direction: a.ty.direction(),
                tensor: a.view.as_ref().map(|v| view_text(v).to_view()),
            });
        }
        file.tasks.push(DepsTask {
            task_id: TaskId(task.task),
            scope: scope_of(&task),
            early_dispatch: task.early_dispatch,
            kernel_ids: task.kernel_ids.to_vec(),
            block_num: task.block_num,
            args: out,
        });
    }
    for e in edges {
        if let Some(t) = &e.consumer {
            tensors.note(t);
        }
        file.edges.push(json_edge(
            &e,
            |v| view_text(v).to_view(),
            |g| region_text(g).to_producer(),
        ));
    }
    file.tensors = tensors
        .list
        .into_iter()
        .map(|(tensor_id, t)| DepsTensor {
            tensor_id,
            buffer_addr: t.buffer_addr,
            version: t.version,
            dtype: dtype_name(t.dtype),
            buffer_numel: t.buffer_numel,
        })
        .collect();
    file
}

/// Writes the `deps.json` of the records to `path` atomically in generation `schema`: the
/// bytes of [`crate::deps::write`] of [`model`]`(tasks, edges).with_schema(schema)`,
/// streamed from the records without the model (no allocation per task, argument or
/// edge: a model of a 100k-task run was a million of them). The edges are walked twice
/// (their consumers' tensors are listed before the edges), so they must be `Clone`, as
/// iterators over slices are.
pub fn write_json<T, A, E>(
    path: &Path,
    schema: DfxSchema,
    tasks: T,
    edges: E,
) -> Result<(), WriteError>
where
    T: IntoIterator<Item = (Task, A)>,
    A: IntoIterator<Item = Arg>,
    E: Iterator<Item = Edge> + Clone,
{
    let runtime = crate::deps::runtime_key(schema);
    let mut out = crate::json::Out::streaming(path)?;
    let mut json = crate::deps::JsonDeps::begin(&mut out, runtime);
    let mut tensors = Tensors::default();
    // One task's arguments at a time, in a buffer kept across tasks.
    let mut buf: Vec<Arg> = Vec::new();
    for (task, args) in tasks {
        if task.is_alloc {
            continue;
        }
        buf.clear();
        buf.extend(args);
        for view in buf.iter().filter_map(|a| a.view.as_ref()) {
            tensors.note(view);
        }
        let head = crate::deps::TaskHead {
            task_id: TaskId(task.task),
            scope: scope_of(&task),
            early_dispatch: task.early_dispatch,
            kernel_ids: &task.kernel_ids,
            block_num: task.block_num,
        };
        let args = buf.iter().enumerate().map(|(i, a)| {
            let view = a.view.as_ref().map(view_text);
            (i as i32, a.ty.direction(), view)
        });
        json.task(&head, args);
    }
    for view in edges.clone().filter_map(|e| e.consumer) {
        tensors.note(&view);
    }
    json.tensors();
    for (tensor_id, t) in &tensors.list {
        json.tensor(&crate::deps::TensorText {
            tensor_id: *tensor_id,
            buffer_addr: t.buffer_addr,
            version: t.version,
            dtype: crate::DataType::name_of_code(u32::from(t.dtype)),
            buffer_numel: t.buffer_numel,
        });
    }
    json.edges();
    for e in edges {
        json.edge(&json_edge(&e, view_text, region_text));
    }
    json.end();
    out.finish()
}

/// Edge `e` as `deps.json` has it, its consumer view and producer region made by `c` and
/// `p` (owned for the model, borrowed for the writer).
fn json_edge<'e, C, P>(
    e: &'e Edge,
    c: impl FnOnce(&'e View) -> C,
    p: impl FnOnce(&'e Geometry) -> P,
) -> DepsEdgeOf<C, P> {
    DepsEdgeOf {
        pred: TaskId(e.pred),
        succ: TaskId(e.succ),
        arg: e.arg,
        source: e.source,
        flags: DepFlags {
            wait: e.wait,
            retain: e.retain,
        },
        overlap: e.overlap,
        consumer: e.consumer.as_ref().map(c),
        producer: e.producer.as_ref().map(p),
    }
}

/// How `deps.json` names the scope a task was submitted in.
fn scope_of(task: &Task) -> ScopeMode {
    if task.manual_scope {
        ScopeMode::Manual
    } else {
        ScopeMode::Auto
    }
}

// ---------------------------------------------------------------- writer

fn encode_view(v: &View) -> [u8; VIEW_BYTES] {
    let mut e = Enc::<VIEW_BYTES>::new();
    e.u8(v.dtype)
        .u8(v.ndims)
        .bytes(&v.version.to_le_bytes())
        .u64(v.addr)
        .u64(v.buffer_bytes)
        .u64(v.start_offset);
    for s in v.shapes.iter().chain(&v.strides) {
        e.u32(*s);
    }
    *e.done()
}

fn encode_region(g: &Geometry) -> [u8; REGION_BYTES] {
    let mut e = Enc::<REGION_BYTES>::new();
    e.u8(g.ndims).u64(g.start_offset);
    for s in g.shapes.iter().chain(&g.strides) {
        e.u32(*s);
    }
    *e.done()
}

fn encode_task(t: &Task, n_args: u32) -> [u8; TASK_BYTES] {
    let mut e = Enc::<TASK_BYTES>::new();
    e.u64(t.task);
    for k in t.kernel_ids {
        e.bytes(&k.to_le_bytes());
    }
    let flags =
        u8::from(t.manual_scope) | u8::from(t.early_dispatch) << 1 | u8::from(t.is_alloc) << 2;
    *e.u32(t.block_num).u8(flags).u32(n_args).done()
}

fn encode_arg(a: &ArgRef) -> [u8; ARG_BYTES] {
    let mut e = Enc::<ARG_BYTES>::new();
    *e.u8(a.ty as u8).u32(a.view.unwrap_or(NONE)).done()
}

fn source_code(s: EdgeSource) -> u8 {
    match s {
        EdgeSource::Explicit => 0,
        EdgeSource::Creator => 1,
        EdgeSource::Tensormap => 2,
    }
}

fn overlap_code(o: Option<Overlap>) -> u8 {
    match o {
        None => 0,
        Some(Overlap::NoOverlap) => 1,
        Some(Overlap::Covered) => 2,
        Some(Overlap::Other) => 3,
    }
}

fn encode_edge(x: &EdgeRef) -> [u8; EDGE_BYTES] {
    let mut e = Enc::<EDGE_BYTES>::new();
    *e.u64(x.pred)
        .u64(x.succ)
        .bytes(&x.arg.to_le_bytes())
        .u8(source_code(x.source))
        .u8(u8::from(x.wait) | u8::from(x.retain) << 1)
        .u8(overlap_code(x.overlap))
        .u32(x.consumer.unwrap_or(NONE))
        .u32(x.producer.unwrap_or(NONE))
        .done()
}

/// Whether `index` names an entry of a table of `len` (or nothing).
fn in_table(index: Option<u32>, len: usize) -> bool {
    index.is_none_or(|i| i != NONE && (i as usize) < len)
}

/// Writes a section of `items`: its count, then each record; an iterator
/// whose `len()` disagrees with what it yields is an error.
fn put_section<I: ExactSizeIterator, const N: usize>(
    out: &mut Sink,
    key: &str,
    items: I,
    encode: impl Fn(&I::Item) -> [u8; N],
) -> Result<(), WriteError> {
    let n = items.len();
    out.put(&(n as u64).to_le_bytes())?;
    let mut seen = 0usize;
    for x in items {
        seen += 1;
        if seen > n {
            break;
        }
        out.put_record(&encode(&x))?;
    }
    if seen != n {
        return Err(super::length_mismatch(out.path(), key));
    }
    Ok(())
}

fn bad_index(path: &Path, key: &str) -> WriteError {
    WriteError::invalid(
        path,
        crate::InvalidRecord {
            key: key.to_string(),
            reason: String::from("names a view or region beyond its table"),
        },
    )
}

/// Writes the log to `path` atomically, straight from the iterators (no
/// allocation per record); returns the bytes written. `views` and `regions`
/// are the tables the arguments and edges index. `tasks` is walked twice
/// (tasks, then their arguments), so it must be `Clone` (an iterator over
/// slices is). An iterator whose `len()` disagrees with what it yields, or
/// an index beyond its table, is an error and leaves no file.
pub fn write<V, G, T, A, E>(
    path: &Path,
    schema: DfxSchema,
    views: V,
    regions: G,
    tasks: T,
    edges: E,
) -> Result<u64, WriteError>
where
    V: ExactSizeIterator<Item = View>,
    G: ExactSizeIterator<Item = Geometry>,
    T: ExactSizeIterator<Item = (Task, A)> + Clone,
    A: ExactSizeIterator<Item = ArgRef>,
    E: ExactSizeIterator<Item = EdgeRef>,
{
    let mut out = Sink::create(path)?;
    out.put(&MAGIC)?;
    out.put(&super::VERSION.to_le_bytes())?;
    out.put(&[super::schema_code(schema)])?;
    let (n_views, n_regions) = (views.len(), regions.len());
    put_section(&mut out, "views", views, encode_view)?;
    put_section(&mut out, "regions", regions, encode_region)?;
    let n_tasks = tasks.len();
    out.put(&(n_tasks as u64).to_le_bytes())?;
    let (mut seen, mut n_args) = (0usize, 0u64);
    for (t, args) in tasks.clone() {
        seen += 1;
        let n = args.len() as u64;
        n_args += n;
        out.put_record(&encode_task(&t, n.min(u64::from(u32::MAX)) as u32))?;
    }
    if seen != n_tasks {
        return Err(super::length_mismatch(out.path(), "tasks"));
    }
    out.put(&n_args.to_le_bytes())?;
    let mut written = 0u64;
    for (_, args) in tasks {
        let n = args.len();
        let mut k = 0usize;
        for a in args {
            k += 1;
            if !in_table(a.view, n_views) {
                return Err(bad_index(out.path(), "args"));
            }
            out.put_record(&encode_arg(&a))?;
        }
        if k != n || n as u64 > u64::from(u32::MAX) {
            return Err(super::length_mismatch(out.path(), "args"));
        }
        written += k as u64;
    }
    if written != n_args {
        return Err(super::length_mismatch(out.path(), "args"));
    }
    let mut bad = false;
    let checked = edges.inspect(|e| {
        bad |= !in_table(e.consumer, n_views) || !in_table(e.producer, n_regions);
    });
    put_section(&mut out, "edges", checked, encode_edge)?;
    if bad {
        return Err(bad_index(out.path(), "edges"));
    }
    out.commit()
}

/// [`write()`] from records that carry their views (as [`DepsRecords`] and
/// [`model`] take them): each distinct view and region goes into its table
/// once, in first-seen order (arguments first, then edges).
pub fn write_records<T, A, E>(
    path: &Path,
    schema: DfxSchema,
    tasks: T,
    edges: E,
) -> Result<u64, WriteError>
where
    T: IntoIterator<Item = (Task, A)>,
    A: IntoIterator<Item = Arg>,
    E: IntoIterator<Item = Edge>,
{
    fn intern<K: Copy + Eq + std::hash::Hash>(
        table: &mut Vec<K>,
        ids: &mut std::collections::HashMap<K, u32>,
        k: K,
    ) -> u32 {
        *ids.entry(k).or_insert_with(|| {
            table.push(k);
            (table.len() - 1) as u32
        })
    }
    let (mut views, mut view_ids) = (Vec::new(), std::collections::HashMap::new());
    let (mut regions, mut region_ids) = (Vec::new(), std::collections::HashMap::new());
    let mut task_list = Vec::new();
    for (t, args) in tasks {
        let args: Vec<ArgRef> = args
            .into_iter()
            .map(|a| ArgRef {
                ty: a.ty,
                view: a.view.map(|v| intern(&mut views, &mut view_ids, v)),
            })
            .collect();
        task_list.push((t, args));
    }
    let edges: Vec<EdgeRef> = edges
        .into_iter()
        .map(|e| EdgeRef {
            pred: e.pred,
            succ: e.succ,
            arg: e.arg,
            source: e.source,
            wait: e.wait,
            retain: e.retain,
            overlap: e.overlap,
            consumer: e.consumer.map(|v| intern(&mut views, &mut view_ids, v)),
            producer: e.producer.map(|g| intern(&mut regions, &mut region_ids, g)),
        })
        .collect();
    write(
        path,
        schema,
        views.into_iter(),
        regions.into_iter(),
        task_list.iter().map(|(t, a)| (*t, a.iter().copied())),
        edges.into_iter(),
    )
}

// ---------------------------------------------------------------- reader

/// What a streaming read of `deps.bin` hands over, in file order: every
/// task (with its argument count), then every argument (the first task's
/// first), then every edge. Each record is checked before it is handed
/// over; a visitor keeps what it needs ([`DepsRecords`] keeps everything,
/// the viewers' graph only the tasks and edge endpoints).
pub trait DepsVisitor {
    /// Task `index` and how many arguments it owns.
    fn task(&mut self, index: usize, task: &Task, n_args: u32);
    /// The next argument.
    fn arg(&mut self, arg: &Arg);
    /// Edge `index`.
    fn edge(&mut self, index: usize, edge: &Edge);
    /// The file's generation, before any task.
    fn schema(&mut self, _schema: DfxSchema) {}
}

/// Collects a whole [`DepsRecords`].
#[derive(Default)]
struct Collect {
    records: DepsRecords,
    /// Arguments still owed to tasks, front first.
    owed: std::collections::VecDeque<(usize, u32)>,
}

impl DepsVisitor for Collect {
    fn schema(&mut self, schema: DfxSchema) {
        self.records.schema = schema;
    }

    fn task(&mut self, index: usize, task: &Task, n_args: u32) {
        self.records.tasks.push(TaskWithArgs {
            task: *task,
            args: Vec::new(),
        });
        if n_args > 0 {
            self.owed.push_back((index, n_args));
        }
    }

    fn arg(&mut self, arg: &Arg) {
        if let Some((task, left)) = self.owed.front_mut() {
            if let Some(t) = self.records.tasks.get_mut(*task) {
                t.args.push(*arg);
            }
            *left -= 1;
            if *left == 0 {
                self.owed.pop_front();
            }
        }
    }

    fn edge(&mut self, _index: usize, edge: &Edge) {
        self.records.edges.push(*edge);
    }
}

/// Reads the compact dep_gen log at `path`.
pub fn read(path: &Path) -> Result<DepsRecords, CompactError> {
    let mut v = Collect::default();
    visit(path, &mut v)?;
    Ok(v.records)
}

/// [`read`] over file content; `path` only names the file in errors.
pub fn parse(bytes: &[u8], path: &Path) -> Result<DepsRecords, CompactError> {
    let mut v = Collect::default();
    visit_bytes(bytes, path, &mut v)?;
    Ok(v.records)
}

/// Streams the file at `path` through `visitor` (one pass, a 1 MiB buffer;
/// the file is never held whole). On an error the visitor has seen the
/// records before the damage.
pub fn visit(path: &Path, visitor: &mut impl DepsVisitor) -> Result<(), CompactError> {
    let (reader, len) = super::open(path)?;
    walk(&mut Cursor::new(reader, len, path), visitor)
}

/// [`visit`] over file content.
pub fn visit_bytes(
    bytes: &[u8],
    path: &Path,
    visitor: &mut impl DepsVisitor,
) -> Result<(), CompactError> {
    walk(&mut Cursor::new(bytes, bytes.len() as u64, path), visitor)
}

type C<'a, 'p, R> = &'a Cursor<'p, R>;

fn bad<R: std::io::Read>(
    c: C<'_, '_, R>,
    field: &'static str,
    value: u8,
    reason: &'static str,
) -> CompactError {
    c.error(
        field,
        CompactErrorKind::Value {
            value: u64::from(value),
            reason,
        },
    )
}

fn ndims<R: std::io::Read>(c: C<'_, '_, R>, v: u8) -> Result<u8, CompactError> {
    if usize::from(v) > MAX_DIMS {
        return Err(bad(c, "ndims", v, "is more dimensions than a view has (5)"));
    }
    Ok(v)
}

fn dims_of<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
) -> Result<([u32; MAX_DIMS], [u32; MAX_DIMS]), CompactError> {
    let mut shapes = [0u32; MAX_DIMS];
    let mut strides = [0u32; MAX_DIMS];
    for s in &mut shapes {
        *s = c.u32("shapes")?;
    }
    for s in &mut strides {
        *s = c.u32("strides")?;
    }
    Ok((shapes, strides))
}

fn read_view<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<View, CompactError> {
    let dtype = c.u8("dtype")?;
    let nd = c.u8("ndims")?;
    let nd = ndims(c, nd)?;
    let version = i32::from_le_bytes(c.take("version")?);
    let addr = c.u64("addr")?;
    let buffer_bytes = c.u64("buffer_bytes")?;
    let start_offset = c.u64("start_offset")?;
    let (shapes, strides) = dims_of(c)?;
    Ok(View {
        addr,
        buffer_bytes,
        start_offset,
        version,
        dtype,
        ndims: nd,
        shapes,
        strides,
    })
}

fn read_region<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<Geometry, CompactError> {
    let nd = c.u8("ndims")?;
    let nd = ndims(c, nd)?;
    let start_offset = c.u64("start_offset")?;
    let (shapes, strides) = dims_of(c)?;
    Ok(Geometry {
        start_offset,
        ndims: nd,
        shapes,
        strides,
    })
}

/// Entry `field` of `table` (a u32 index, [`NONE`] for none).
fn entry<R: std::io::Read, T: Copy>(
    c: &mut Cursor<'_, R>,
    field: &'static str,
    table: &[T],
) -> Result<Option<T>, CompactError> {
    let i = c.u32(field)?;
    if i == NONE {
        return Ok(None);
    }
    table.get(i as usize).copied().map(Some).ok_or_else(|| {
        c.error(
            field,
            CompactErrorKind::Value {
                value: u64::from(i),
                reason: "is beyond the table it indexes (views or regions)",
            },
        )
    })
}

/// A table section: its count, then each record.
fn table<R: std::io::Read, T>(
    c: &mut Cursor<'_, R>,
    section: &'static str,
    bytes: usize,
    read: fn(&mut Cursor<'_, R>) -> Result<T, CompactError>,
) -> Result<Vec<T>, CompactError> {
    c.section = section;
    c.index = None;
    let n = c.count(bytes, true)?;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        c.index = Some(i as u64);
        out.push(read(c)?);
    }
    Ok(out)
}

fn read_task<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<(Task, u32), CompactError> {
    let task = c.u64("task")?;
    let mut kernel_ids = [0i32; 3];
    for k in &mut kernel_ids {
        *k = i32::from_le_bytes(c.take("kernel_ids")?);
    }
    let block_num = c.u32("block_num")?;
    let flags = c.u8("flags")?;
    if flags > 7 {
        return Err(bad(c, "flags", flags, "has bits other than 1, 2 and 4"));
    }
    let n_args = c.u32("n_args")?;
    let task = Task {
        task,
        manual_scope: flags & 1 != 0,
        early_dispatch: flags & 2 != 0,
        is_alloc: flags & 4 != 0,
        kernel_ids,
        block_num,
    };
    Ok((task, n_args))
}

/// An edge record up to its views (`consumer` and `producer` left `None`),
/// the same in every version.
fn read_edge_head<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<Edge, CompactError> {
    let pred = c.u64("pred")?;
    let succ = c.u64("succ")?;
    let arg = i32::from_le_bytes(c.take("arg")?);
    let s = c.u8("source")?;
    let source = match s {
        0 => EdgeSource::Explicit,
        1 => EdgeSource::Creator,
        2 => EdgeSource::Tensormap,
        _ => return Err(bad(c, "source", s, "is not an edge source (0..=2)")),
    };
    let flags = c.u8("flags")?;
    if flags > 3 {
        return Err(bad(c, "flags", flags, "has bits other than 1 and 2"));
    }
    let o = c.u8("overlap")?;
    let overlap = match o {
        0 => None,
        1 => Some(Overlap::NoOverlap),
        2 => Some(Overlap::Covered),
        3 => Some(Overlap::Other),
        _ => return Err(bad(c, "overlap", o, "is not an overlap class (0..=3)")),
    };
    Ok(Edge {
        pred,
        succ,
        arg,
        source,
        wait: flags & 1 != 0,
        retain: flags & 2 != 0,
        overlap,
        consumer: None,
        producer: None,
    })
}

fn walk<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
    visitor: &mut impl DepsVisitor,
) -> Result<(), CompactError> {
    let version = c.framing(&MAGIC, FILE_NAME)?;
    c.section = "header";
    visitor.schema(c.schema(version)?);
    if version < FIRST_VERSION {
        return inline::walk_sections(c, visitor);
    }
    let views = table(c, "views", VIEW_BYTES, read_view)?;
    let regions = table(c, "regions", REGION_BYTES, read_region)?;
    walk_records(
        c,
        visitor,
        [ARG_BYTES, EDGE_BYTES],
        |c| entry(c, "view", &views),
        |c, e| {
            e.consumer = entry(c, "consumer", &views)?;
            e.producer = entry(c, "producer", &regions)?;
            Ok(())
        },
    )
}

/// The tasks, args and edges sections, whose records are the same in every version but
/// for how an argument and an edge name their views: `arg_view` reads an argument's
/// view, `edge_views` an edge's consumer view and producer region; `bytes` are the
/// argument and edge record sizes.
fn walk_records<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
    visitor: &mut impl DepsVisitor,
    bytes: [usize; 2],
    mut arg_view: impl FnMut(&mut Cursor<'_, R>) -> Result<Option<View>, CompactError>,
    mut edge_views: impl FnMut(&mut Cursor<'_, R>, &mut Edge) -> Result<(), CompactError>,
) -> Result<(), CompactError> {
    c.section = "tasks";
    c.index = None;
    let n_tasks = c.count(TASK_BYTES, true)?;
    let mut total = 0u64;
    for i in 0..n_tasks {
        c.index = Some(i as u64);
        let (task, n_args) = read_task(c)?;
        total += u64::from(n_args);
        visitor.task(i, &task, n_args);
    }
    c.section = "args";
    c.index = None;
    let n_args = c.count(bytes[0], true)?;
    if total != n_args as u64 {
        return Err(c.error(
            "count",
            CompactErrorKind::Value {
                value: n_args as u64,
                reason: "is not the sum of the tasks' n_args",
            },
        ));
    }
    for k in 0..n_args {
        c.index = Some(k as u64);
        let code = c.u8("type")?;
        let ty = ArgType::from_code(code)
            .ok_or_else(|| bad(c, "type", code, "is not an argument type (0..=4)"))?;
        let arg = Arg {
            ty,
            view: arg_view(c)?,
        };
        visitor.arg(&arg);
    }
    c.section = "edges";
    c.index = None;
    let n_edges = c.count(bytes[1], true)?;
    for i in 0..n_edges {
        c.index = Some(i as u64);
        let mut edge = read_edge_head(c)?;
        edge_views(c, &mut edge)?;
        visitor.edge(i, &edge);
    }
    c.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(addr: u64, version: i32) -> View {
        View {
            addr,
            buffer_bytes: 256,
            start_offset: 16,
            version,
            dtype: 0,
            ndims: 2,
            shapes: [4, 4, 0, 0, 0],
            strides: [8, 1, 0, 0, 0],
        }
    }

    #[test]
    fn the_viewers_scan_of_a_compact_log_is_the_scan_of_its_model() {
        let r = sample();
        let scan = crate::deps_scan::DepsScan::from_compact(&r);
        assert_eq!(scan.to_file(), r.to_model());
        assert_eq!(scan, crate::deps_scan::DepsScan::from_file(&r.to_model()));
        let dir = tempfile::tempdir().unwrap();
        let path = write_sample(dir.path(), &r);
        use crate::deps_scan::{DepsScan, Detail};
        let streamed = DepsScan::read_compact(&path, Detail::Full).unwrap();
        assert_eq!(streamed, scan);
        // At graph detail, what the JSON scan keeps at that detail.
        let json = crate::deps::render(&r.to_model());
        let crate::deps_scan::Scanned::Read(from_json) =
            crate::deps_scan::scan_bytes(json.as_bytes(), Detail::Graph)
        else {
            panic!("the scan declined rendered JSON");
        };
        assert_eq!(
            DepsScan::read_compact(&path, Detail::Graph).unwrap(),
            from_json
        );
    }

    #[test]
    fn json_streamed_from_the_records_is_the_rendered_model() {
        // The sample, then random logs: alloc tasks, missing views, tensors shared between
        // arguments and edge consumers, every edge shape, unknown dtype codes, both schemas.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        let mut logs = vec![sample()];
        for round in 0..40 {
            let pick_view = |next: &mut dyn FnMut(u64) -> u64| {
                let nd = next(6) as u8;
                let mut v = view(0x1000 * (1 + next(8)), next(3) as i32);
                v.ndims = nd;
                v.dtype = next(20) as u8;
                v.buffer_bytes = next(1 << 20);
                v.shapes = [1, 2, 3, 4, 5].map(|_| next(1000) as u32);
                v
            };
            let n_tasks = next(12);
            let tasks = (0..n_tasks)
                .map(|t| TaskWithArgs {
                    task: Task {
                        task: t | (next(3) << 32),
                        manual_scope: next(2) == 0,
                        early_dispatch: next(2) == 0,
                        is_alloc: next(5) == 0,
                        kernel_ids: [next(4) as i32 - 1, -1, next(3) as i32 - 1],
                        block_num: next(48) as u32,
                    },
                    args: (0..next(4))
                        .map(|k| Arg {
                            ty: ArgType::from_code(k as u8 % 5).unwrap(),
                            view: (next(4) != 0).then(|| pick_view(&mut next)),
                        })
                        .collect(),
                })
                .collect();
            let edges = (0..next(10))
                .map(|_| Edge {
                    pred: next(12),
                    succ: next(12),
                    arg: next(4) as i32 - 1,
                    source: [
                        EdgeSource::Explicit,
                        EdgeSource::Creator,
                        EdgeSource::Tensormap,
                    ][next(3) as usize],
                    wait: next(2) == 0,
                    retain: next(2) == 0,
                    overlap: [None, Some(Overlap::Covered), Some(Overlap::Other)][next(3) as usize],
                    consumer: (next(3) != 0).then(|| pick_view(&mut next)),
                    producer: (next(2) == 0).then(|| Geometry {
                        start_offset: next(1 << 30),
                        ndims: next(6) as u8,
                        shapes: [0; MAX_DIMS].map(|_| next(64) as u32),
                        strides: [0; MAX_DIMS].map(|_| next(64) as u32),
                    }),
                })
                .collect();
            let schema = [DfxSchema::V2026_08, DfxSchema::V2026_09][round % 2];
            logs.push(DepsRecords {
                tasks,
                edges,
                schema,
            });
        }
        let dir = tempfile::tempdir().unwrap();
        for (k, r) in logs.iter().enumerate() {
            let path = dir.path().join(format!("deps{k}.json"));
            r.write_json(&path).unwrap();
            let want = crate::deps::render(&r.to_model());
            assert_eq!(std::fs::read_to_string(&path).unwrap(), want, "log {k}");
        }
    }

    pub(crate) fn sample() -> DepsRecords {
        let task = |id, is_alloc| Task {
            task: id,
            manual_scope: id == 2,
            early_dispatch: id == 1,
            is_alloc,
            kernel_ids: [0, -1, -1],
            block_num: 1,
        };
        DepsRecords {
            tasks: vec![
                TaskWithArgs {
                    task: task(9, true),
                    args: vec![Arg {
                        ty: ArgType::Output,
                        view: Some(view(0x9000, 0)),
                    }],
                },
                TaskWithArgs {
                    task: task(1, false),
                    args: vec![
                        Arg {
                            ty: ArgType::Input,
                            view: Some(view(0x1000, 0)),
                        },
                        Arg {
                            ty: ArgType::Output,
                            view: None,
                        },
                    ],
                },
                TaskWithArgs {
                    task: task(2, false),
                    args: vec![Arg {
                        ty: ArgType::NoDep,
                        view: Some(view(0x1000, 0)),
                    }],
                },
            ],
            edges: vec![
                Edge {
                    pred: 1,
                    succ: 2,
                    arg: 0,
                    source: EdgeSource::Tensormap,
                    wait: true,
                    retain: false,
                    overlap: Some(Overlap::Covered),
                    consumer: Some(view(0x2000, 1)),
                    producer: Some(Geometry {
                        start_offset: 0,
                        ndims: 1,
                        shapes: [16, 0, 0, 0, 0],
                        strides: [1, 0, 0, 0, 0],
                    }),
                },
                Edge {
                    pred: 1,
                    succ: 2,
                    arg: -1,
                    source: EdgeSource::Explicit,
                    wait: false,
                    retain: true,
                    overlap: None,
                    consumer: None,
                    producer: None,
                },
            ],
            schema: DfxSchema::V2026_08,
        }
    }

    pub(super) fn write_sample(dir: &Path, r: &DepsRecords) -> std::path::PathBuf {
        let path = dir.join(FILE_NAME);
        write_records(
            &path,
            r.schema,
            r.tasks.iter().map(|t| (t.task, t.args.iter().copied())),
            r.edges.iter().copied(),
        )
        .unwrap();
        path
    }

    /// Where the sections of the sample's file start: views, regions, tasks, args, edges
    /// (each at its count). The sample has three distinct views and one region.
    const VIEWS_AT: usize = 13;
    const REGIONS_AT: usize = VIEWS_AT + 8 + 3 * VIEW_BYTES;
    const TASKS_AT: usize = REGIONS_AT + 8 + REGION_BYTES;
    const ARGS_AT: usize = TASKS_AT + 8 + 3 * TASK_BYTES;
    const EDGES_AT: usize = ARGS_AT + 8 + 4 * ARG_BYTES;

    #[test]
    fn records_round_trip_exactly_with_each_distinct_view_written_once() {
        let dir = tempfile::tempdir().unwrap();
        let r = sample();
        let path = write_sample(dir.path(), &r);
        let bytes = std::fs::read(&path).unwrap();
        // Five views in the records (one of them twice), three distinct.
        assert_eq!(bytes[VIEWS_AT..VIEWS_AT + 8], 3u64.to_le_bytes());
        assert_eq!(bytes[REGIONS_AT..REGIONS_AT + 8], 1u64.to_le_bytes());
        assert_eq!(bytes.len(), EDGES_AT + 8 + 2 * EDGE_BYTES);
        // The third task's argument names the second task's first view.
        let arg = |k: usize| &bytes[ARGS_AT + 8 + k * ARG_BYTES..][..ARG_BYTES];
        assert_eq!(arg(3)[1..], arg(1)[1..]);
        assert_eq!(arg(2)[1..], NONE.to_le_bytes());
        assert_eq!(
            super::super::sniff(&path),
            Some(super::super::CompactKind::Deps)
        );
        assert_eq!(read(&path).unwrap(), r);
    }

    #[test]
    fn the_indexed_writer_refuses_an_index_beyond_its_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let task = Task::default();
        let arg = |view| ArgRef {
            ty: ArgType::Input,
            view,
        };
        let one = [view(0x1000, 0)];
        let write_args = |args: &[ArgRef]| {
            write(
                &path,
                DfxSchema::V2026_08,
                one.iter().copied(),
                std::iter::empty(),
                std::iter::once((task, args.iter().copied())),
                std::iter::empty(),
            )
        };
        assert!(write_args(&[arg(Some(0)), arg(None)]).is_ok());
        let e = write_args(&[arg(Some(1))]).unwrap_err().to_string();
        assert!(e.contains("args") && e.contains("beyond its table"), "{e}");
        let edge = EdgeRef {
            pred: 1,
            succ: 2,
            arg: 0,
            source: EdgeSource::Tensormap,
            wait: true,
            retain: false,
            overlap: Some(Overlap::Covered),
            consumer: Some(0),
            producer: Some(0),
        };
        let e = write(
            &path,
            DfxSchema::V2026_08,
            one.iter().copied(),
            std::iter::empty(),
            std::iter::empty::<(Task, std::iter::Empty<ArgRef>)>(),
            std::iter::once(edge),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("edges") && e.contains("beyond its table"), "{e}");
        // The failed writes left the first file as it was.
        assert_eq!(read(&path).unwrap().tasks[0].args.len(), 2);
    }

    #[test]
    fn the_model_drops_alloc_tasks_and_lists_tensors_in_first_seen_order() {
        let f = sample().to_model();
        let ids: Vec<u64> = f.tasks.iter().map(|t| t.task_id.raw()).collect();
        assert_eq!(ids, [1, 2]);
        assert_eq!(f.tasks[0].args[1].tensor, None);
        assert_eq!(f.tasks[0].args[1].direction, ArgDirection::Output);
        assert_eq!(f.tasks[1].args[0].direction, ArgDirection::Input);
        assert_eq!(f.tasks[1].scope, ScopeMode::Manual);
        let addrs: Vec<u64> = f.tensors.iter().map(|t| t.buffer_addr).collect();
        assert_eq!(addrs, [0x1000, 0x2000]);
        // 256 bytes of FLOAT32.
        assert_eq!(f.tensors[0].buffer_numel, 64);
        assert_eq!(
            f.edges[0].producer.as_ref().map(|p| p.shape.clone()),
            Some(vec![16])
        );
        assert!(f.check_consistency().is_empty());
    }

    #[test]
    fn damage_is_an_error_naming_section_record_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_sample(dir.path(), &sample());
        let bytes = std::fs::read(&path).unwrap();
        for n in 0..bytes.len() {
            assert!(parse(&bytes[..n], &path).is_err(), "prefix {n}");
        }
        // The second task's n_args raised by one: the args count no longer adds up.
        let at = TASKS_AT + 8 + 2 * TASK_BYTES - 4;
        let mut sum = bytes.clone();
        sum[at] += 1;
        let e = parse(&sum, &path).unwrap_err();
        assert_eq!((e.section, e.field), ("args", "count"));
        // The first edge's overlap set to 7.
        let at = EDGES_AT + 8 + 8 + 8 + 4 + 2;
        let mut o = bytes.clone();
        o[at] = 7;
        let e = parse(&o, &path).unwrap_err();
        assert_eq!((e.section, e.index, e.field), ("edges", Some(0), "overlap"));
        assert!(e.to_string().contains("edges[0].overlap"), "{e}");
        // The first edge's producer region 1 of 1.
        let mut p = bytes.clone();
        p[EDGES_AT + 8 + 27..][..4].copy_from_slice(&1u32.to_le_bytes());
        let e = parse(&p, &path).unwrap_err();
        assert_eq!(
            (e.section, e.index, e.field),
            ("edges", Some(0), "producer")
        );
        // The second argument's view 3 of 3.
        let mut v = bytes.clone();
        v[ARGS_AT + 8 + ARG_BYTES + 1..][..4].copy_from_slice(&3u32.to_le_bytes());
        let e = parse(&v, &path).unwrap_err();
        assert_eq!((e.section, e.index, e.field), ("args", Some(1), "view"));
        assert!(e.to_string().contains("beyond the table"), "{e}");
        // A view of 6 dimensions.
        let mut d = bytes.clone();
        d[VIEWS_AT + 8 + VIEW_BYTES + 1] = 6;
        let e = parse(&d, &path).unwrap_err();
        assert_eq!((e.section, e.index, e.field), ("views", Some(1), "ndims"));
        // The views count set to 2^61 (would overflow `count × size`).
        let mut huge = bytes;
        huge[VIEWS_AT..VIEWS_AT + 8].copy_from_slice(&(1u64 << 61).to_le_bytes());
        assert_eq!(parse(&huge, &path).unwrap_err().field, "count");
    }

    #[test]
    fn the_generation_byte_picks_the_json_and_a_newer_version_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = sample();
        r.schema = DfxSchema::V2026_09;
        let path = write_sample(dir.path(), &r);
        let back = read(&path).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.to_model().schema(), DfxSchema::V2026_09);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes[12], 1);
        let mut bad = bytes.clone();
        bad[12] = 2;
        let e = parse(&bad, &path).unwrap_err();
        assert_eq!((e.section, e.field), ("header", "schema"));
        let mut newer = bytes;
        newer[8..12].copy_from_slice(&(super::super::VERSION + 1).to_le_bytes());
        let e = parse(&newer, &path).unwrap_err();
        assert!(matches!(e.kind, CompactErrorKind::Version { .. }), "{e}");
        assert!(e.to_string().contains("the pto that wrote it"), "{e}");
    }
}
