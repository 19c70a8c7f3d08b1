//! Fast loading of the two big inputs for the viewers, with the careful
//! readers as the authority on damage.
//!
//! [`pto_dfx::swimlane::read`] and [`pto_dfx::deps::read`] build a JSON tree and
//! walk it so that every problem names its key; at a million tasks that
//! costs seconds and gigabytes. The viewers therefore first try a typed,
//! strict serde pass straight into the records ([`load_swimlane`]) or into
//! the part of `deps.json` they use ([`load_graph`]). Any surprise (a
//! missing or mistyped key, a row of another width, an unknown core type,
//! host-orchestration keys, which the fast pass does not model) abandons
//! the fast pass and the careful reader reads the file again: it returns
//! the precise [`ReadError`] or the records plus [`Problem`]s. So a clean
//! file is read fast, and a damaged one is reported exactly as the format
//! module reports it.
//!
//! `deps.json` is read by [`deps_scan`]: one streaming pass that validates
//! every entry (args and tensor views included) and keeps only what the
//! tool asks for, so it accepts a file only when the careful reader reads
//! it without a problem, and its memory is the records', not the text's.
//!
//! The swimlane pass is serde over the whole text. Both refuse the same
//! text: the serde pass skips values it does not need (`IgnoredAny`,
//! unknown keys), and serde_json skips them without checking UTF-8, number
//! ranges or nesting, all of which the careful reader's tree enforces (at
//! most [`JSON_MAX_DEPTH`] levels). So it first reads the whole text once
//! the careful way, keeping nothing, and declines text the careful reader
//! would reject; the careful reader then reports it.

use std::fmt;
use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, SeqAccess, Visitor};

use pto_base::idmap::{self, IdMap};
use pto_dfx::core_type::CoreType;
use pto_dfx::deps_scan::{self, DepsScan, Detail, Scanned};
use pto_dfx::error::{Loaded, Problem, ReadError};
use pto_dfx::swimlane::{
    AicoreTaskRow, AicpuTaskRow, OrchPhaseRecord, PopCounts, SchedPhaseKind, SchedPhaseRecord,
    SwimlaneFile, SwimlaneLevel, SwimlaneMetadata,
};
use pto_dfx::task_id::TaskId;

/// A key that may be absent; unlike `Option`, a present `null` is an error
/// (as it is for the careful readers).
#[derive(Debug, Default)]
enum Present<T> {
    #[default]
    Absent,
    Value(T),
}

impl<T> Present<T> {
    fn into_option(self) -> Option<T> {
        match self {
            Self::Absent => None,
            Self::Value(v) => Some(v),
        }
    }

    fn is_present(&self) -> bool {
        matches!(self, Self::Value(_))
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Present<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Self::Value)
    }
}

/// The deepest nesting serde_json's default recursion limit accepts: the
/// 128th open `[` / `{` is an error.
pub const JSON_MAX_DEPTH: usize = 127;

/// Any JSON value, read the way the careful readers' tree reads it (through
/// `deserialize_any`: strings checked as UTF-8, numbers parsed, nesting
/// counted) and kept nowhere. `IgnoredAny` checks none of these.
struct Valid;

impl<'de> Deserialize<'de> for Valid {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Valid;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Valid, E> {
                Ok(Valid)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Valid, E> {
                Ok(Valid)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Valid, E> {
                Ok(Valid)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Valid, E> {
                Ok(Valid)
            }
            fn visit_str<E>(self, _: &str) -> Result<Valid, E> {
                Ok(Valid)
            }
            fn visit_unit<E>(self) -> Result<Valid, E> {
                Ok(Valid)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Valid, A::Error> {
                while seq.next_element::<Valid>()?.is_some() {}
                Ok(Valid)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Valid, A::Error> {
                while map.next_entry::<Valid, Valid>()?.is_some() {}
                Ok(Valid)
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether the careful readers' JSON parser takes `bytes` at all. The fast
/// passes skip values (and unknown keys) they do not need, and serde_json
/// skips those without checking UTF-8, number ranges (`1e400`) or nesting;
/// this pass checks them all without building anything.
fn careful_reader_takes(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Valid>(bytes).is_ok()
}

// ---------------------------------------------------------------- swimlane

// Unknown keys (another generation's, or none's) decline: the careful reader names them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FastSwimlane {
    chip_swimlane_level: u64,
    metadata: FastMeta,
    aicore_tasks: Vec<FastAicore>,
    aicpu_tasks: Vec<FastAicpu>,
    #[serde(default)]
    aicpu_scheduler_phases: Present<Vec<Vec<FastSched>>>,
    #[serde(default)]
    aicpu_orchestrator_phases: Present<Vec<Vec<FastOrch>>>,
    #[serde(default)]
    host_orchestrator_phases: Present<IgnoredAny>,
    #[serde(default)]
    host_device_uploads: Present<IgnoredAny>,
}

// Unknown keys (another generation's, or none's) decline: the careful reader names them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FastMeta {
    clock_freq_hz: u64,
    num_cores: u32,
    core_types: Vec<FastCoreType>,
    #[serde(default)]
    core_to_thread: Present<Vec<i32>>,
    #[serde(default)]
    timing: Option<String>,
    // Host-orchestration keys: their presence sends the file to the careful reader.
    #[serde(default)]
    orchestrator_source: Present<IgnoredAny>,
    #[serde(default)]
    orchestrator_clock_domain: Present<IgnoredAny>,
    #[serde(default)]
    device_clock_domain: Present<IgnoredAny>,
    #[serde(default)]
    host_timestamp_resolution_ns: Present<IgnoredAny>,
    #[serde(default)]
    host_timestamp_quantization_ns: Present<IgnoredAny>,
    #[serde(default)]
    host_orchestration_origin_ns: Present<IgnoredAny>,
    #[serde(default)]
    timeline_relation: Present<IgnoredAny>,
    #[serde(default)]
    host_capture: Present<IgnoredAny>,
    #[serde(default)]
    clock_anchors: Present<IgnoredAny>,
}

impl FastMeta {
    fn has_host_keys(&self) -> bool {
        self.orchestrator_source.is_present()
            || self.orchestrator_clock_domain.is_present()
            || self.device_clock_domain.is_present()
            || self.host_timestamp_resolution_ns.is_present()
            || self.host_timestamp_quantization_ns.is_present()
            || self.host_orchestration_origin_ns.is_present()
            || self.timeline_relation.is_present()
            || self.host_capture.is_present()
            || self.clock_anchors.is_present()
    }
}

struct FastCoreType(CoreType);

impl<'de> Deserialize<'de> for FastCoreType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FastCoreType;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"aic\" or \"aiv\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FastCoreType, E> {
                CoreType::from_name(v)
                    .map(FastCoreType)
                    .ok_or_else(|| E::custom("unknown core type"))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads a fixed-width row of unsigned integers: `min..=max` columns.
fn row_visitor<'de, A: SeqAccess<'de>, const N: usize>(
    mut seq: A,
    min: usize,
) -> Result<([u64; N], usize), A::Error> {
    let mut cols = [0u64; N];
    let mut n = 0;
    while n < N {
        match seq.next_element::<u64>()? {
            Some(v) => {
                cols[n] = v;
                n += 1;
            }
            None => break,
        }
    }
    if n < min || (n == N && seq.next_element::<IgnoredAny>()?.is_some()) {
        return Err(de::Error::custom("row of another width"));
    }
    Ok((cols, n))
}

fn narrow<E: de::Error>(v: u64) -> Result<u32, E> {
    u32::try_from(v).map_err(|_| E::custom("value out of u32 range"))
}

struct FastAicore(AicoreTaskRow);

impl<'de> Deserialize<'de> for FastAicore {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FastAicore;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an aicore row of 5 or 6 integers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<FastAicore, A::Error> {
                let (c, n) = row_visitor::<A, 6>(seq, 5)?;
                Ok(FastAicore(AicoreTaskRow {
                    run_epoch: None,
                    core_id: narrow(c[0])?,
                    task_token: TaskId(c[1]),
                    reg_task_id: narrow(c[2])?,
                    start_cycles: c[3],
                    end_cycles: c[4],
                    receive_to_start_cycles: if n == 6 { narrow(c[5])? } else { 0 },
                }))
            }
        }
        d.deserialize_seq(V)
    }
}

struct FastAicpu(AicpuTaskRow);

impl<'de> Deserialize<'de> for FastAicpu {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FastAicpu;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an aicpu row of 4 integers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<FastAicpu, A::Error> {
                let (c, _) = row_visitor::<A, 4>(seq, 4)?;
                Ok(FastAicpu(AicpuTaskRow {
                    run_epoch: None,
                    core_id: narrow(c[0])?,
                    reg_task_id: narrow(c[1])?,
                    dispatch_cycles: c[2],
                    finish_cycles: c[3],
                }))
            }
        }
        d.deserialize_seq(V)
    }
}

struct FastKind(SchedPhaseKind);

impl<'de> Deserialize<'de> for FastKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FastKind;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a phase name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FastKind, E> {
                Ok(FastKind(SchedPhaseKind::from_name(v)))
            }
        }
        d.deserialize_str(V)
    }
}

// Unknown keys (another generation's, or none's) decline: the careful reader names them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FastSched {
    kind: FastKind,
    start_cycles: u64,
    end_cycles: u64,
    loop_iter: u32,
    tasks_processed: u32,
    #[serde(default)]
    pop_hit: Present<u32>,
    #[serde(default)]
    pop_miss: Present<u32>,
    #[serde(default)]
    task_id: Present<u64>,
    #[serde(default)]
    shared_at_start: Present<[i16; 3]>,
    #[serde(default)]
    shared_at_end: Present<[i16; 3]>,
}

// Unknown keys (another generation's, or none's) decline: the careful reader names them.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FastOrch {
    submit_idx: u32,
    task_id: u64,
    start_cycles: u64,
    end_cycles: u64,
}

/// The fast pass alone: the records of a clean `chip_swimlane_records.json`,
/// or `None` when anything surprises it (then [`pto_dfx::swimlane::parse`]
/// decides). Whenever it returns records, the careful reader returns the
/// same records and no problem.
pub fn fast_swimlane(bytes: &[u8]) -> Option<SwimlaneFile> {
    if !careful_reader_takes(bytes) {
        return None;
    }
    let raw: FastSwimlane = serde_json::from_slice(bytes).ok()?;
    let level = SwimlaneLevel::from_number(raw.chip_swimlane_level)?;
    if raw.metadata.clock_freq_hz == 0
        || raw.metadata.has_host_keys()
        || raw.host_orchestrator_phases.is_present()
        || raw.host_device_uploads.is_present()
    {
        return None;
    }
    let mut scheduler_phases = None;
    if let Some(lanes) = raw.aicpu_scheduler_phases.into_option() {
        let mut out = Vec::with_capacity(lanes.len());
        for lane in lanes {
            let mut records = Vec::with_capacity(lane.len());
            for r in lane {
                let pop = match (r.pop_hit.into_option(), r.pop_miss.into_option()) {
                    (None, None) => None,
                    (Some(hit), Some(miss)) => Some(PopCounts { hit, miss }),
                    _ => return None,
                };
                records.push(SchedPhaseRecord {
                    run_epoch: None,
                    kind: r.kind.0,
                    start_cycles: r.start_cycles,
                    end_cycles: r.end_cycles,
                    loop_iter: r.loop_iter,
                    tasks_processed: r.tasks_processed,
                    pop,
                    task_id: r.task_id.into_option().map(TaskId),
                    shared_at_start: r.shared_at_start.into_option(),
                    shared_at_end: r.shared_at_end.into_option(),
                });
            }
            out.push(records);
        }
        scheduler_phases = Some(out);
    }
    let orchestrator_phases = raw.aicpu_orchestrator_phases.into_option().map(|lanes| {
        lanes
            .into_iter()
            .map(|lane| {
                lane.into_iter()
                    .map(|o| OrchPhaseRecord {
                        run_epoch: None,
                        submit_idx: o.submit_idx,
                        task_id: TaskId(o.task_id),
                        start_cycles: o.start_cycles,
                        end_cycles: o.end_cycles,
                    })
                    .collect()
            })
            .collect()
    });
    let core_to_thread = raw
        .metadata
        .core_to_thread
        .into_option()
        .unwrap_or_default();
    if !core_to_thread
        .iter()
        .all(|&t| pto_dfx::swimlane::is_core_thread(t))
    {
        return None; // the careful reader reports it
    }
    Some(SwimlaneFile {
        level,
        metadata: SwimlaneMetadata {
            host_clock_domain_id: None,
            runtime: None,
            clock_freq_hz: raw.metadata.clock_freq_hz,
            num_cores: raw.metadata.num_cores,
            core_types: raw.metadata.core_types.into_iter().map(|c| c.0).collect(),
            host: None,
            clock_anchors: None,
            core_to_thread,
            timing: raw.metadata.timing,
        },
        aicore_tasks: raw.aicore_tasks.into_iter().map(|r| r.0).collect(),
        aicpu_tasks: raw.aicpu_tasks.into_iter().map(|r| r.0).collect(),
        scheduler_phases,
        orchestrator_phases,
        host_orchestrator_phases: None,
        host_device_uploads: None,
    })
}

/// Reads a `chip_swimlane_records.json`: the fast pass for a clean file,
/// else [`pto_dfx::swimlane::parse`] (see the module docs). A compact file
/// (`chip_swimlane_records.bin`, told by its magic) is read by
/// [`pto_dfx::compact::swimlane::read`] into the same model.
pub fn load_swimlane(path: &Path) -> Result<Loaded<SwimlaneFile>, ReadError> {
    if pto_dfx::compact::sniff(path) == Some(pto_dfx::compact::CompactKind::Swimlane) {
        return Ok(Loaded {
            value: pto_dfx::compact::swimlane::read(path)?.to_model(),
            problems: Vec::new(),
        });
    }
    parse_swimlane(&pto_dfx::read_artifact(path)?, path)
}

/// [`load_swimlane`] over file content; `path` only names the file in messages.
pub fn parse_swimlane(bytes: &[u8], path: &Path) -> Result<Loaded<SwimlaneFile>, ReadError> {
    if pto_dfx::compact::kind_of(bytes) == Some(pto_dfx::compact::CompactKind::Swimlane) {
        return Ok(Loaded {
            value: pto_dfx::compact::swimlane::parse(bytes, path)?.to_model(),
            problems: Vec::new(),
        });
    }
    match fast_swimlane(bytes) {
        Some(value) => Ok(Loaded {
            value,
            problems: Vec::new(),
        }),
        None => pto_dfx::swimlane::parse(bytes, path),
    }
}

// ---------------------------------------------------------------- deps graph

/// A task of the graph: what the tools need from a `tasks[]` entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphTask {
    /// `task_id`.
    pub task_id: TaskId,
    /// `kernel_ids` `[aic, aiv0, aiv1]` (−1 inactive; missing slots read as −1).
    pub kernel_ids: [i32; 3],
    /// `block_num`, at least 1.
    pub block_num: u32,
    /// `early_dispatch`.
    pub early_dispatch: bool,
}

impl GraphTask {
    /// Whether every slot is inactive (a dummy task).
    pub fn is_dummy(&self) -> bool {
        self.kernel_ids.iter().all(|&k| k < 0)
    }

    /// Simpler's func_id for a row on a core of type `core`: AIC → slot 0;
    /// AIV → slot 1, or slot 2 when slot 1 is inactive. `None` when inactive.
    pub fn func_id_for(&self, core: CoreType) -> Option<i32> {
        let id = match core {
            CoreType::Aic => self.kernel_ids[0],
            CoreType::Aiv if self.kernel_ids[1] >= 0 => self.kernel_ids[1],
            CoreType::Aiv => self.kernel_ids[2],
        };
        (id >= 0).then_some(id)
    }
}

/// The dependency graph as the converter and the critical path see it:
/// tasks, and unique `(pred, succ)` pairs in first-seen order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskGraph {
    /// `tasks[]`, in file order.
    pub tasks: Vec<GraphTask>,
    /// Unique edges (self-edges included as written), first-seen order.
    pub edges: Vec<(TaskId, TaskId)>,
    /// `edges[]` entries before removing repeated pairs.
    pub n_annotated_edges: usize,
}

impl TaskGraph {
    /// Task index by raw id.
    pub fn index(&self) -> IdMap<u64, usize> {
        let mut index = idmap::map_with_capacity(self.tasks.len());
        for (i, t) in self.tasks.iter().enumerate() {
            index.entry(t.task_id.raw()).or_insert(i);
        }
        index
    }

    fn from_pairs(tasks: Vec<GraphTask>, pairs: impl Iterator<Item = (u64, u64)>) -> Self {
        let mut seen = idmap::set_with_capacity(tasks.len() * 2);
        let mut edges = Vec::new();
        let mut n = 0;
        for (p, s) in pairs {
            n += 1;
            if seen.insert((p, s)) {
                edges.push((TaskId(p), TaskId(s)));
            }
        }
        Self {
            tasks,
            edges,
            n_annotated_edges: n,
        }
    }

    /// The graph of a scanned `deps.json`.
    pub fn from_scan(scan: &DepsScan) -> Self {
        let tasks = scan
            .tasks
            .iter()
            .map(|t| GraphTask {
                task_id: t.task_id,
                kernel_ids: t.kernel_ids,
                block_num: t.block_num.max(1),
                early_dispatch: t.early_dispatch,
            })
            .collect();
        Self::from_pairs(
            tasks,
            scan.edges.iter().map(|e| (e.pred.raw(), e.succ.raw())),
        )
    }

    /// The graph of a compact dep_gen log (allocation tasks left out, as
    /// `deps.json` leaves them), without building the `deps.json` model.
    pub fn from_compact(records: &pto_dfx::compact::deps::DepsRecords) -> Self {
        let tasks = records
            .tasks
            .iter()
            .filter(|t| !t.task.is_alloc)
            .map(|t| GraphTask {
                task_id: TaskId(t.task.task),
                kernel_ids: t.task.kernel_ids,
                block_num: t.task.block_num.max(1),
                early_dispatch: t.task.early_dispatch,
            })
            .collect();
        Self::from_pairs(tasks, records.edges.iter().map(|e| (e.pred, e.succ)))
    }

    /// The graph of a fully read `deps.json`.
    pub fn from_deps(file: &pto_dfx::deps::DepsFile) -> Self {
        let tasks = file
            .tasks
            .iter()
            .map(|t| {
                let mut kernel_ids = [-1; 3];
                for (slot, k) in kernel_ids.iter_mut().zip(&t.kernel_ids) {
                    *slot = *k;
                }
                GraphTask {
                    task_id: t.task_id,
                    kernel_ids,
                    block_num: t.block_num.max(1),
                    early_dispatch: t.early_dispatch,
                }
            })
            .collect();
        Self::from_pairs(
            tasks,
            file.edges.iter().map(|e| (e.pred.raw(), e.succ.raw())),
        )
    }
}

/// Keeps what the graph needs of a compact dep_gen log as it streams by:
/// the tasks (allocation tasks left out, as `deps.json` leaves them) and
/// the edges' endpoints.
#[derive(Default)]
struct GraphVisitor {
    tasks: Vec<GraphTask>,
    pairs: Vec<(u64, u64)>,
}

impl pto_dfx::compact::deps::DepsVisitor for GraphVisitor {
    fn task(&mut self, _index: usize, t: &pto_dfx::compact::deps::Task, _n_args: u32) {
        if !t.is_alloc {
            self.tasks.push(GraphTask {
                task_id: TaskId(t.task),
                kernel_ids: t.kernel_ids,
                block_num: t.block_num.max(1),
                early_dispatch: t.early_dispatch,
            });
        }
    }

    fn arg(&mut self, _arg: &pto_dfx::compact::deps::Arg) {}

    fn edge(&mut self, _index: usize, e: &pto_dfx::compact::deps::Edge) {
        self.pairs.push((e.pred, e.succ));
    }
}

/// The fast pass alone: the graph of a clean `deps.json`, or `None` when
/// anything surprises it (then [`pto_dfx::deps::parse`] decides). Whenever it
/// returns a graph, the careful reader reads the file without a problem and
/// its file makes the same graph ([`pto_dfx::deps_scan`] validates
/// every entry, args and tensor views included).
pub fn fast_graph(bytes: &[u8]) -> Option<TaskGraph> {
    match deps_scan::scan_bytes(bytes, Detail::Graph) {
        Scanned::Read(scan) => Some(TaskGraph::from_scan(&scan)),
        Scanned::Declined => None,
    }
}

/// Reads the graph of a `deps.json`: the streaming fast pass for a clean
/// file (memory: the graph, not the text), else [`pto_dfx::deps::parse`]
/// (see the module docs).
pub fn load_graph(path: &Path) -> Result<Loaded<TaskGraph>, ReadError> {
    if pto_dfx::compact::sniff(path) == Some(pto_dfx::compact::CompactKind::Deps) {
        let mut v = GraphVisitor::default();
        pto_dfx::compact::deps::visit(path, &mut v)?;
        return Ok(Loaded {
            value: TaskGraph::from_pairs(v.tasks, v.pairs.into_iter()),
            problems: Vec::new(),
        });
    }
    match deps_scan::scan_file(path, Detail::Graph)? {
        Scanned::Read(scan) => Ok(Loaded {
            value: TaskGraph::from_scan(&scan),
            problems: Vec::new(),
        }),
        Scanned::Declined => careful_graph(&pto_dfx::read_artifact(path)?, path),
    }
}

/// [`load_graph`] over file content; `path` only names the file in messages.
pub fn parse_graph(bytes: &[u8], path: &Path) -> Result<Loaded<TaskGraph>, ReadError> {
    if pto_dfx::compact::kind_of(bytes) == Some(pto_dfx::compact::CompactKind::Deps) {
        let mut v = GraphVisitor::default();
        pto_dfx::compact::deps::visit_bytes(bytes, path, &mut v)?;
        return Ok(Loaded {
            value: TaskGraph::from_pairs(v.tasks, v.pairs.into_iter()),
            problems: Vec::new(),
        });
    }
    if let Some(graph) = fast_graph(bytes) {
        return Ok(Loaded {
            value: graph,
            problems: Vec::new(),
        });
    }
    careful_graph(bytes, path)
}

fn careful_graph(bytes: &[u8], path: &Path) -> Result<Loaded<TaskGraph>, ReadError> {
    let loaded = pto_dfx::deps::parse(bytes, path)?;
    let problems: Vec<Problem> = loaded.problems;
    Ok(Loaded {
        value: TaskGraph::from_deps(&loaded.value),
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDS: &str = r#"{
  "chip_swimlane_level": 4,
  "metadata": {"clock_freq_hz": 50000000, "num_cores": 2, "core_types": ["aic", "aiv"], "core_to_thread": [0, 0]},
  "aicore_tasks": [[0, 4294967296, 1, 1100, 1400, 10], [1, 0, 1, 1000, 1050]],
  "aicpu_tasks": [[0, 1, 1080, 1420], [1, 1, 980, 1060]],
  "aicpu_scheduler_phases": [[
    {"kind": "dispatch", "start_cycles": 975, "end_cycles": 985, "loop_iter": 1, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [0,1,0], "shared_at_end": [0,0,0]}
  ]],
  "aicpu_orchestrator_phases": [[{"submit_idx": 0, "task_id": 0, "start_cycles": 900, "end_cycles": 920}]]
}"#;

    #[test]
    fn fast_and_careful_swimlane_agree_on_a_clean_file() {
        let fast = fast_swimlane(RECORDS.as_bytes()).unwrap();
        let careful = pto_dfx::swimlane::parse(RECORDS.as_bytes(), Path::new("x.json")).unwrap();
        assert!(careful.problems.is_empty(), "{:?}", careful.problems);
        assert_eq!(fast, careful.value);
    }

    #[test]
    fn fast_swimlane_declines_what_it_does_not_model() {
        for (from, to) in [
            ("\"chip_swimlane_level\": 4", "\"chip_swimlane_level\": 7"),
            ("\"clock_freq_hz\": 50000000", "\"clock_freq_hz\": 0"),
            ("[1, 0, 1, 1000, 1050]", "[1, 0, 1, 1000]"),
            ("[\"aic\", \"aiv\"]", "[\"aic\", \"mix\"]"),
            ("\"pop_miss\": 0, ", ""),
            (
                "\"num_cores\": 2,",
                "\"num_cores\": 2, \"orchestrator_source\": \"host\",",
            ),
            (
                "\"aicpu_orchestrator_phases\": [[",
                "\"aicpu_orchestrator_phases\": null, \"x\": [[",
            ),
        ] {
            let text = RECORDS.replace(from, to);
            assert_ne!(text, RECORDS, "{from}");
            assert!(fast_swimlane(text.as_bytes()).is_none(), "{to}");
        }
    }

    /// `clock_anchors` without host keys (Simpler's L3 device-orchestration capture): the
    /// fast pass hands the file to the careful reader, which keeps the anchors, and the file
    /// stays device-orchestrated, as in Simpler's reader (the key alone is not host mode).
    #[test]
    fn clock_anchors_alone_do_not_make_a_file_host_mode() {
        let anchors = r#""core_to_thread": [0, 0], "clock_anchors": {"schema_version": 1, "provider": "acl", "device_timestamp_unit": "syscnt_cycles", "raw_device_timestamp_unit": "syscnt_cycles", "samples_per_position": 3, "samples": [{"position": "pre_host_orchestration", "sample_idx": 0, "host_before_ns": 900, "raw_device_timestamp": 40, "device_cycles": 40, "host_after_ns": 940, "rtt_ns": 40, "uncertainty_ns": 20, "error": null}]}"#;
        let text = RECORDS.replace("\"core_to_thread\": [0, 0]", anchors);
        assert_ne!(text, RECORDS);
        assert!(fast_swimlane(text.as_bytes()).is_none());
        let path = Path::new("chip_swimlane_records.json");
        let with = parse_swimlane(text.as_bytes(), path).unwrap();
        assert!(with.problems.is_empty(), "{:?}", with.problems);
        assert!(with.value.metadata.clock_anchors.is_some());
        let without = parse_swimlane(RECORDS.as_bytes(), path).unwrap();
        let (a, b) = (
            crate::perf::join(&with.value, path).unwrap(),
            crate::perf::join(&without.value, path).unwrap(),
        );
        assert!(!a.host_mode && !b.host_mode);
        assert_eq!(a.tasks, b.tasks);
    }

    #[test]
    fn load_swimlane_reports_damage_like_the_careful_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chip_swimlane_records.json");
        std::fs::write(&path, &RECORDS[..RECORDS.len() / 2]).unwrap();
        let err = load_swimlane(&path).unwrap_err();
        assert!(err.to_string().contains("truncated JSON"), "{err}");
        std::fs::write(
            &path,
            RECORDS.replace("\"chip_swimlane_level\": 4", "\"chip_swimlane_level\": 9"),
        )
        .unwrap();
        let err = load_swimlane(&path).unwrap_err();
        assert_eq!(err.key(), Some("chip_swimlane_level"), "{err}");
        std::fs::write(&path, RECORDS.replace("[1, 0, 1, 1000, 1050]", "[1, 0]")).unwrap();
        let loaded = load_swimlane(&path).unwrap();
        assert_eq!(loaded.value.aicore_tasks.len(), 1);
        assert_eq!(loaded.problems[0].key, "aicore_tasks[1]");
    }

    const DEPS: &str = r#"{"tasks":[{"task_id":"0","scope":"auto","early_dispatch":false,"kernel_ids":[-1,0,-1],"block_num":1,"args":[]},{"task_id":"4294967296","scope":"manual","kernel_ids":[7,-1,-1],"block_num":4,"args":[{"idx":0,"type":"INPUT"}]}],"tensors":[],"edges":[{"pred":"0","succ":"4294967296","arg":0,"source":"explicit","flags":["wait","retain"]},{"pred":"0","succ":"4294967296","arg":1,"source":"explicit","flags":["wait","retain"]}]}
"#;

    #[test]
    fn fast_and_careful_graph_agree() {
        let fast = fast_graph(DEPS.as_bytes()).unwrap();
        let careful = pto_dfx::deps::parse(DEPS.as_bytes(), Path::new("deps.json")).unwrap();
        assert_eq!(fast, TaskGraph::from_deps(&careful.value));
        assert_eq!(fast.edges.len(), 1);
        assert_eq!(fast.n_annotated_edges, 2);
        assert_eq!(fast.tasks[1].func_id_for(CoreType::Aic), Some(7));
        assert_eq!(fast.tasks[0].func_id_for(CoreType::Aiv), Some(0));
        assert_eq!(fast.tasks[0].func_id_for(CoreType::Aic), None);
    }

    /// A regression found by the deps fuzz target: a deps.json whose `args`
    /// (skipped unread by the fast pass) nest past serde_json's limit was
    /// accepted by the viewers' fast pass but rejected by `pto deps-viewer`.
    #[test]
    fn both_passes_refuse_the_same_nesting() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        // `{"tasks":[{..."x":` puts the value at level 4. The fast pass may
        // decline what the careful reader takes (it stops a level early),
        // never the other way round.
        for (depth, careful_takes, fast_takes) in [
            (100, true, true),
            (JSON_MAX_DEPTH - 3, true, false),
            (JSON_MAX_DEPTH - 2, false, false),
        ] {
            let text = DEPS.replace("\"args\":[]", &format!("\"args\":[],\"x\":{}", nest(depth)));
            let careful = pto_dfx::deps::parse(text.as_bytes(), Path::new("deps.json"));
            assert_eq!(careful.is_ok(), careful_takes, "{depth}");
            assert_eq!(fast_graph(text.as_bytes()).is_some(), fast_takes, "{depth}");
        }
        let text = RECORDS.replace(
            "\"aicpu_tasks\"",
            &format!("\"x\": {}, \"aicpu_tasks\"", nest(127)),
        );
        assert!(fast_swimlane(text.as_bytes()).is_none());
        assert!(pto_dfx::swimlane::parse(text.as_bytes(), Path::new("x")).is_err());
        // Brackets inside strings do not count; the unknown key declines the fast pass
        // and the careful reader reads past it, naming it.
        let text = RECORDS.replace(
            "\"aicpu_tasks\"",
            &format!("\"x\": \"{}\\\"\", \"aicpu_tasks\"", "[".repeat(500)),
        );
        assert!(fast_swimlane(text.as_bytes()).is_none());
        let loaded = pto_dfx::swimlane::parse(text.as_bytes(), Path::new("x")).unwrap();
        assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
        assert_eq!(loaded.problems[0].key, "x");
    }

    /// A regression found by the deps fuzz target: invalid UTF-8 inside a
    /// string the fast pass skips (an edge's `source`) was accepted by it and
    /// rejected by the careful reader.
    #[test]
    fn both_passes_refuse_invalid_utf8() {
        let mut bytes = DEPS.as_bytes().to_vec();
        let at = DEPS.find("explicit").unwrap() + 2;
        bytes.splice(at..at, [0xff, 0xfe]);
        assert!(pto_dfx::deps::parse(&bytes, Path::new("deps.json")).is_err());
        assert!(fast_graph(&bytes).is_none());
        let mut bytes = RECORDS.as_bytes().to_vec();
        let at = RECORDS.find("dispatch").unwrap() + 2;
        bytes.splice(at..at, [0xc3]);
        assert!(pto_dfx::swimlane::parse(&bytes, Path::new("x")).is_err());
        assert!(fast_swimlane(&bytes).is_none());
    }

    /// A regression found by the deps property test: a number out of f64's
    /// range (`1e400`) in a value the fast pass skips (an edge's `arg`, an
    /// unknown key) was accepted by it and rejected by the careful reader.
    #[test]
    fn both_passes_refuse_out_of_range_numbers() {
        for text in [
            DEPS.replace("\"arg\":0", "\"arg\":1e400"),
            DEPS.replace("\"tensors\":[]", "\"tensors\":[1e400]"),
            DEPS.replace("\"block_num\":1,", "\"block_num\":1,\"x\":-1e999,"),
        ] {
            assert!(pto_dfx::deps::parse(text.as_bytes(), Path::new("deps.json")).is_err());
            assert!(fast_graph(text.as_bytes()).is_none(), "{text}");
        }
        let text = RECORDS.replace("\"aicpu_tasks\"", "\"x\": 1e400, \"aicpu_tasks\"");
        assert!(pto_dfx::swimlane::parse(text.as_bytes(), Path::new("x")).is_err());
        assert!(fast_swimlane(text.as_bytes()).is_none());
    }

    #[test]
    fn load_graph_names_the_missing_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deps.json");
        std::fs::write(&path, DEPS.replace("\"edges\"", "\"edgez\"")).unwrap();
        let err = load_graph(&path).unwrap_err();
        assert_eq!(err.key(), Some("edges"), "{err}");
        assert!(err.to_string().contains(&path.display().to_string()));
    }
}
