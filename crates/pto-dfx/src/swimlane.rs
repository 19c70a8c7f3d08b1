//! `chip_swimlane_records.json`: the raw chip (L2) swimlane.
//!
//! One file per run at `<output_prefix>/chip_swimlane_records.json`. Device
//! times are raw counter cycles (`metadata.clock_freq_hz`: 50 MHz on a2a3,
//! 1 GHz on a5); host-orchestration records are host monotonic ns.
//!
//! [`render`] reproduces Simpler's hand-built layout byte for byte: two-space
//! indentation, one row per line, `", "` inside rows, `[a,b,c]` (no spaces)
//! for the ready-queue snapshots, `"[]"` for an empty task list, a trailing
//! newline. Optional parts appear exactly when the record type holds them:
//! the scheduler lanes when [`SwimlaneFile::scheduler_phases`] is `Some`
//! (Simpler: level >= 3), and so on.
//!
//! [`read`] follows the canonical reader (`read_perf_data`): the level must
//! be 1..=4 and `clock_freq_hz` positive, AICore rows may have 6 columns or
//! the archived 5 (the missing `receive_to_start_cycles` reads as 0). A bad
//! row or phase record is skipped with a [`Problem`]; a file mixing AICPU
//! and host orchestrator records (which Simpler refuses to write and its
//! reader rejects) is read with a problem so that a viewer can show it.
//!
//! Generations ([`crate::DfxSchema`], told apart by [`detect`]): a 2026-09 file has
//! `metadata.runtime` (and `host_clock_domain_id` with host records),
//! 7-column `aicore_tasks` rows ending in `run_epoch`, `scheduler_tasks` /
//! `scheduler_records` instead of `aicpu_tasks` / `aicpu_scheduler_phases`,
//! and `run_epoch` on every phase record; [`SwimlaneMetadata::runtime`] being set
//! selects it for [`render`]. The 2026-09 sections are in `swimlane/newer.rs`.
//!
//! The joins, time-base and clock alignment of the converter are consumers'
//! business and live with the viewers, not here.

use std::borrow::Cow;
use std::path::Path;

use crate::core_type::CoreType;
use crate::error::{Loaded, Problem, ReadError, WriteError};
use crate::json::{self, Issue, Node, Out};
use crate::schema;
use crate::task_id::TaskId;

mod newer;
pub use newer::detect;

/// The file name under the output prefix.
pub const FILE_NAME: &str = "chip_swimlane_records.json";

/// The sidecar a `--timing predicted` run writes beside [`FILE_NAME`] (ours): per placed
/// subtask, the timing model's per-pipe busy intervals, which the swimlane converter draws.
pub const PREDICTED_PIPES_FILE_NAME: &str = "predicted_pipes.json";

/// Scheduler threads a `core_to_thread` entry may name: `0..MAX_SCHED_THREADS` (a run has
/// at most 1024 worker threads, `pto_runner::config::MAX_WORKERS`); a negative entry is
/// "unassigned". The converter names one lane per scheduler thread up to the highest one
/// named, so an entry past this limit (one flipped bit: 2^29) would cost gigabytes: the
/// readers refuse it (a problem in JSON, an error in the compact form).
pub const MAX_SCHED_THREADS: i32 = 1024;

/// Whether `thread` is a `core_to_thread` entry the readers accept (see
/// [`MAX_SCHED_THREADS`]).
pub fn is_core_thread(thread: i32) -> bool {
    thread < MAX_SCHED_THREADS
}

/// How much the swimlane collector recorded (`chip_swimlane_level`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SwimlaneLevel {
    /// 1: AICore start/end per task.
    AicoreTiming = 1,
    /// 2: plus AICPU dispatch/finish.
    AicpuTiming = 2,
    /// 3: plus scheduler phases and `core_to_thread`.
    SchedPhases = 3,
    /// 4: plus orchestrator submit envelopes.
    OrchPhases = 4,
}

impl SwimlaneLevel {
    /// The level with number `n`, if 1..=4.
    pub fn from_number(n: u64) -> Option<Self> {
        match n {
            1 => Some(Self::AicoreTiming),
            2 => Some(Self::AicpuTiming),
            3 => Some(Self::SchedPhases),
            4 => Some(Self::OrchPhases),
            _ => None,
        }
    }

    /// The number written in the file.
    pub const fn number(self) -> u8 {
        self as u8
    }
}

/// The whole file.
#[derive(Clone, Debug, PartialEq)]
pub struct SwimlaneFile {
    /// `chip_swimlane_level`.
    pub level: SwimlaneLevel,
    /// `metadata`.
    pub metadata: SwimlaneMetadata,
    /// `aicore_tasks`, grouped by core ascending, collection order within a core.
    pub aicore_tasks: Vec<AicoreTaskRow>,
    /// `aicpu_tasks`, grouped by core; empty at level 1.
    pub aicpu_tasks: Vec<AicpuTaskRow>,
    /// `aicpu_scheduler_phases`: one lane per scheduler thread slot (trailing
    /// empty lanes are possible). Simpler writes it iff level >= 3.
    pub scheduler_phases: Option<Vec<Vec<SchedPhaseRecord>>>,
    /// `aicpu_orchestrator_phases`: one lane per orchestrator thread. Simpler
    /// writes it iff AICPU orchestrator records exist (level 4).
    pub orchestrator_phases: Option<Vec<Vec<OrchPhaseRecord>>>,
    /// `host_orchestrator_phases` (always exactly one lane on disk): written
    /// iff `Some`; Simpler writes it iff host submit records exist.
    pub host_orchestrator_phases: Option<Vec<HostSubmitRecord>>,
    /// `host_device_uploads`: written iff `Some`.
    pub host_device_uploads: Option<Vec<HostUploadRecord>>,
}

/// `metadata`.
#[derive(Clone, Debug, PartialEq)]
pub struct SwimlaneMetadata {
    /// `clock_freq_hz`: device counter frequency, > 0.
    pub clock_freq_hz: u64,
    /// `num_cores`.
    pub num_cores: u32,
    /// `core_types`, indexed by core id.
    pub core_types: Vec<CoreType>,
    /// The host-orchestration keys (host_build_graph runs).
    pub host: Option<HostOrchestrationMetadata>,
    /// `clock_anchors` (host-orchestration runs with a clock-correlation session).
    pub clock_anchors: Option<ClockAnchors>,
    /// `core_to_thread`, indexed by core id: scheduler thread or -1.
    /// Written only when non-empty (level >= 3).
    pub core_to_thread: Vec<i32>,
    /// `runtime` (2026-09, written first): whose task-id layout the ids
    /// follow. Its presence makes the file 2026-09.
    pub runtime: Option<String>,
    /// `host_clock_domain_id` (2026-09, host-orchestrated runs only), e.g.
    /// `linux-boot-id:<id>`.
    pub host_clock_domain_id: Option<String>,
    /// `timing` (ours, not Simpler's): which time the records hold, `"host"` (the
    /// simulator's own clock) or `"predicted"` (the timing model's schedule,
    /// docs/TIMING.md). Written iff `Some`; files without it hold host time.
    pub timing: Option<String>,
}

/// The metadata keys a host-orchestrated run adds, in writer order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostOrchestrationMetadata {
    /// `orchestrator_source`: `"host"`.
    pub orchestrator_source: String,
    /// `orchestrator_clock_domain`: `"host_monotonic_ns"`.
    pub orchestrator_clock_domain: String,
    /// `device_clock_domain`: `"device_syscnt_cycles"`.
    pub device_clock_domain: String,
    /// `host_timestamp_resolution_ns`: 1.
    pub host_timestamp_resolution_ns: u64,
    /// `host_timestamp_quantization_ns`: 0.
    pub host_timestamp_quantization_ns: u64,
    /// `host_orchestration_origin_ns`: min start over submit and upload records.
    pub host_orchestration_origin_ns: u64,
    /// `timeline_relation`: `"host_orchestration_precedes_device"`.
    pub timeline_relation: String,
    /// `host_capture`, written on one line after the keys above.
    pub host_capture: Option<HostCapture>,
}

impl HostOrchestrationMetadata {
    /// The values Simpler writes, with the given origin and capture.
    pub fn simpler_defaults(origin_ns: u64, host_capture: Option<HostCapture>) -> Self {
        Self {
            orchestrator_source: String::from("host"),
            orchestrator_clock_domain: String::from("host_monotonic_ns"),
            device_clock_domain: String::from("device_syscnt_cycles"),
            host_timestamp_resolution_ns: 1,
            host_timestamp_quantization_ns: 0,
            host_orchestration_origin_ns: origin_ns,
            timeline_relation: String::from("host_orchestration_precedes_device"),
            host_capture,
        }
    }
}

/// `metadata.host_capture`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostCapture {
    /// `"complete"`, `"dropped"` or `"incomplete"`.
    pub status: String,
    /// `expected_records`.
    pub expected_records: u64,
    /// `recorded_records`.
    pub recorded_records: u64,
    /// `pool_records`.
    pub pool_records: u64,
    /// `dropped_records`.
    pub dropped_records: u64,
    /// `null`, `"pool_overflow"` or `"record_count_mismatch"`.
    pub error: Option<String>,
}

/// `metadata.clock_anchors`: host/device timestamp pairs for clock alignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockAnchors {
    /// `schema_version`: 1.
    pub schema_version: u64,
    /// `provider`.
    pub provider: String,
    /// `device_timestamp_unit`: `"syscnt_cycles"`.
    pub device_timestamp_unit: String,
    /// `raw_device_timestamp_unit`: `"syscnt_cycles"`, `"device_uptime_us"`, ...
    pub raw_device_timestamp_unit: String,
    /// `samples_per_position`: 3.
    pub samples_per_position: u64,
    /// `samples`.
    pub samples: Vec<ClockAnchorSample>,
}

/// One entry of `clock_anchors.samples`.
///
/// `raw_device_timestamp` and `device_cycles` use 0 for "absent", which is
/// written as `null` (and `null` reads as 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockAnchorSample {
    /// `"pre_host_orchestration"` or `"post_device_execution"`.
    pub position: String,
    /// `sample_idx`.
    pub sample_idx: u64,
    /// `host_before_ns`.
    pub host_before_ns: u64,
    /// `raw_device_timestamp` (0 = `null`).
    pub raw_device_timestamp: u64,
    /// `device_cycles` (0 = `null`).
    pub device_cycles: u64,
    /// `host_after_ns`.
    pub host_after_ns: u64,
    /// `rtt_ns`: after − before.
    pub rtt_ns: u64,
    /// `uncertainty_ns`: (rtt + 1) / 2.
    pub uncertainty_ns: u64,
    /// `error`: `null` or the failing stage and code.
    pub error: Option<ClockAnchorError>,
}

/// `clock_anchors.samples[].error`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockAnchorError {
    /// `create_stream`, `create_event`, `record_event`, `synchronize_event`
    /// or `get_timestamp`.
    pub stage: String,
    /// The runtime's error code.
    pub code: i64,
}

/// One `aicore_tasks` row: `[core_id, task_token_raw, reg_task_id,
/// start_cycles, end_cycles, receive_to_start_cycles]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AicoreTaskRow {
    /// Logical core index.
    pub core_id: u32,
    /// The full task id (identity only; the join key is `(core_id, reg_task_id)`).
    pub task_token: TaskId,
    /// Per-core dispatch token.
    pub reg_task_id: u32,
    /// Kernel start (after dcci + ack).
    pub start_cycles: u64,
    /// Kernel end.
    pub end_cycles: u64,
    /// `start - receive`; 0 for archived 5-column rows.
    pub receive_to_start_cycles: u32,
    /// `run_epoch`, the 7th column of a 2026-09 row.
    pub run_epoch: Option<u64>,
}

/// One `aicpu_tasks` row: `[core_id, reg_task_id, dispatch_cycles, finish_cycles]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AicpuTaskRow {
    /// Logical core index.
    pub core_id: u32,
    /// Per-core dispatch token.
    pub reg_task_id: u32,
    /// When the AICPU dispatched the task.
    pub dispatch_cycles: u64,
    /// When the AICPU saw it finish.
    pub finish_cycles: u64,
    /// `run_epoch`, the 5th column of a 2026-09 `scheduler_tasks` row.
    pub run_epoch: Option<u64>,
}

/// Scheduler phase names (`ChipSwimlaneSchedPhaseKind`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SchedPhaseKind {
    /// `complete` (0).
    Complete,
    /// `dispatch` (1); its records carry `pop_hit` / `pop_miss`.
    Dispatch,
    /// `release` (2).
    Release,
    /// `dummy` (4).
    Dummy,
    /// `early_dispatch` (5).
    EarlyDispatch,
    /// `resolve` (6, inner phase).
    Resolve,
    /// `dummy_task` (7, separate-lane marker with `task_id`).
    DummyTask,
    /// `drain` (8).
    Drain,
    /// `drain_prepare` (9, inner phase).
    DrainPrepare,
    /// `drain_publish` (10, inner phase).
    DrainPublish,
    /// `async_poll` (11).
    AsyncPoll,
    /// `predicated_skip` (12, separate-lane marker with `task_id`).
    PredicatedSkip,
    /// `graph_prepare` (13, with the outer Graph `task_id`).
    GraphPrepare,
    /// Any other name, e.g. the legacy `scan`, `poll`, `idle`, `fanout`, `prestage`.
    Other(String),
}

const SCHED_KINDS: [(SchedPhaseKind, &str, u8); 13] = [
    (SchedPhaseKind::Complete, "complete", 0),
    (SchedPhaseKind::Dispatch, "dispatch", 1),
    (SchedPhaseKind::Release, "release", 2),
    (SchedPhaseKind::Dummy, "dummy", 4),
    (SchedPhaseKind::EarlyDispatch, "early_dispatch", 5),
    (SchedPhaseKind::Resolve, "resolve", 6),
    (SchedPhaseKind::DummyTask, "dummy_task", 7),
    (SchedPhaseKind::Drain, "drain", 8),
    (SchedPhaseKind::DrainPrepare, "drain_prepare", 9),
    (SchedPhaseKind::DrainPublish, "drain_publish", 10),
    (SchedPhaseKind::AsyncPoll, "async_poll", 11),
    (SchedPhaseKind::PredicatedSkip, "predicated_skip", 12),
    (SchedPhaseKind::GraphPrepare, "graph_prepare", 13),
];

impl SchedPhaseKind {
    /// The kind named `name`; unknown names become [`SchedPhaseKind::Other`].
    pub fn from_name(name: &str) -> Self {
        SCHED_KINDS
            .iter()
            .find(|(_, n, _)| *n == name)
            .map_or_else(|| Self::Other(name.to_string()), |(k, _, _)| k.clone())
    }

    /// The kind with enum value `code` (3 is unused).
    pub fn from_code(code: u8) -> Option<Self> {
        SCHED_KINDS
            .iter()
            .find(|(_, _, c)| *c == code)
            .map(|(k, _, _)| k.clone())
    }

    /// The name written in `kind`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Other(name) => name,
            known => SCHED_KINDS
                .iter()
                .find(|(k, _, _)| k == known)
                .map_or("", |(_, n, _)| n),
        }
    }

    /// The enum value; `None` for [`SchedPhaseKind::Other`].
    pub fn code(&self) -> Option<u8> {
        SCHED_KINDS
            .iter()
            .find(|(k, _, _)| k == self)
            .map(|(_, _, c)| *c)
    }

    /// Whether Simpler writes a `task_id` for this kind.
    pub fn has_task_id(&self) -> bool {
        matches!(
            self,
            Self::DummyTask | Self::PredicatedSkip | Self::GraphPrepare
        )
    }
}

/// One scheduler phase record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedPhaseRecord {
    /// `kind`.
    pub kind: SchedPhaseKind,
    /// `start_cycles`.
    pub start_cycles: u64,
    /// `end_cycles`.
    pub end_cycles: u64,
    /// `loop_iter`.
    pub loop_iter: u32,
    /// `tasks_processed`.
    pub tasks_processed: u32,
    /// `pop_hit` / `pop_miss` (Simpler: `dispatch` only): ready-queue
    /// hit/miss deltas since the previous dispatch record.
    pub pop: Option<PopCounts>,
    /// `task_id` (Simpler: `dummy_task`, `predicated_skip`, `graph_prepare`).
    pub task_id: Option<TaskId>,
    /// `shared_at_start`: ready-queue depths `[aic, aiv, mix]`; absent in
    /// legacy captures.
    pub shared_at_start: Option<[i16; 3]>,
    /// `shared_at_end`: ready-queue depths `[aic, aiv, mix]`.
    pub shared_at_end: Option<[i16; 3]>,
    /// `run_epoch` (2026-09 `scheduler_records`).
    pub run_epoch: Option<u64>,
}

/// `pop_hit` / `pop_miss` of a dispatch record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PopCounts {
    /// `pop_hit`.
    pub hit: u32,
    /// `pop_miss`.
    pub miss: u32,
}

/// One `aicpu_orchestrator_phases` record (per `submit_task()` / `alloc_tensors()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrchPhaseRecord {
    /// `submit_idx`.
    pub submit_idx: u32,
    /// `task_id`.
    pub task_id: TaskId,
    /// `start_cycles`.
    pub start_cycles: u64,
    /// `end_cycles`.
    pub end_cycles: u64,
    /// `run_epoch` (2026-09).
    pub run_epoch: Option<u64>,
}

/// One `host_orchestrator_phases` record, in host ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostSubmitRecord {
    /// `submit_idx`.
    pub submit_idx: u32,
    /// `task_id`.
    pub task_id: TaskId,
    /// `start_host_ns`.
    pub start_host_ns: u64,
    /// `end_host_ns`.
    pub end_host_ns: u64,
}

/// One `host_device_uploads` record, in host ns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostUploadRecord {
    /// `"graph_upload"`, `"sm_h2d"` or `"arena_h2d"`.
    pub phase: String,
    /// `start_host_ns`.
    pub start_host_ns: u64,
    /// `end_host_ns`.
    pub end_host_ns: u64,
    /// `detail`: bytes uploaded.
    pub detail: u64,
}

// ---------------------------------------------------------------- writer

/// The large sections of a swimlane file as the JSON writer reads them: a model's vectors
/// ([`SwimlaneFile`]) or rows made one at a time from a run's records
/// ([`crate::compact::swimlane::write_json`]), so that one layout writes both. The rest of
/// the file (level, metadata, host sections) comes from a [`SwimlaneFile`].
pub(crate) trait Rows: Sync {
    /// What an `aicore_tasks` row is made from.
    type Aicore: Sync;
    /// What an `aicpu_tasks` (2026-09: `scheduler_tasks`) row is made from.
    type Aicpu: Sync;
    /// What a scheduler phase record is made from.
    type Phase: Sync;
    /// What an orchestrator phase record is made from.
    type Orch: Sync;
    /// The `aicore_tasks` items, in row order.
    fn aicore(&self) -> &[Self::Aicore];
    /// Item `x`'s row.
    fn aicore_row(&self, x: &Self::Aicore) -> AicoreTaskRow;
    /// The `aicpu_tasks` items, in row order.
    fn aicpu(&self) -> &[Self::Aicpu];
    /// Item `x`'s row.
    fn aicpu_row(&self, x: &Self::Aicpu) -> AicpuTaskRow;
    /// The scheduler lanes (`None`: the file has none).
    fn scheduler_lanes(&self) -> Option<Vec<&[Self::Phase]>>;
    /// Item `x`'s record.
    fn phase<'x>(&self, x: &'x Self::Phase) -> Cow<'x, SchedPhaseRecord>;
    /// The orchestrator lanes (`None`: the file has none).
    fn orchestrator_lanes(&self) -> Option<Vec<&[Self::Orch]>>;
    /// Item `x`'s record.
    fn orch(&self, x: &Self::Orch) -> OrchPhaseRecord;
}

impl Rows for SwimlaneFile {
    type Aicore = AicoreTaskRow;
    type Aicpu = AicpuTaskRow;
    type Phase = SchedPhaseRecord;
    type Orch = OrchPhaseRecord;

    fn aicore(&self) -> &[AicoreTaskRow] {
        &self.aicore_tasks
    }

    fn aicore_row(&self, x: &AicoreTaskRow) -> AicoreTaskRow {
        *x
    }

    fn aicpu(&self) -> &[AicpuTaskRow] {
        &self.aicpu_tasks
    }

    fn aicpu_row(&self, x: &AicpuTaskRow) -> AicpuTaskRow {
        *x
    }

    fn scheduler_lanes(&self) -> Option<Vec<&[SchedPhaseRecord]>> {
        lanes_of(self.scheduler_phases.as_deref())
    }

    fn phase<'x>(&self, x: &'x SchedPhaseRecord) -> Cow<'x, SchedPhaseRecord> {
        Cow::Borrowed(x)
    }

    fn orchestrator_lanes(&self) -> Option<Vec<&[OrchPhaseRecord]>> {
        lanes_of(self.orchestrator_phases.as_deref())
    }

    fn orch(&self, x: &OrchPhaseRecord) -> OrchPhaseRecord {
        *x
    }
}

/// A model's lanes as slices.
fn lanes_of<T>(lanes: Option<&[Vec<T>]>) -> Option<Vec<&[T]>> {
    lanes.map(|l| l.iter().map(Vec::as_slice).collect())
}

/// The file's exact bytes.
pub fn render(file: &SwimlaneFile) -> String {
    let mut out = Out::with_capacity(
        256 + 48 * (file.aicore_tasks.len() + file.aicpu_tasks.len())
            + file
                .scheduler_phases
                .iter()
                .flatten()
                .map(|lane| 200 * lane.len())
                .sum::<usize>(),
    );
    render_into(&mut out, file, file);
    out.into_string()
}

/// Appends the bytes of the file whose level, metadata and host sections are `file`'s and
/// whose large sections are `rows` to `out`.
fn render_into<R: Rows>(out: &mut Out, file: &SwimlaneFile, rows: &R) {
    let newer = file.schema().is_newer();
    out.s("{\n  \"chip_swimlane_level\": ")
        .u(u64::from(file.level.number()));
    render_metadata(out, &file.metadata);

    out.s(",\n  \"aicore_tasks\": ");
    render_rows(out, rows.aicore(), |out, x| {
        let r = rows.aicore_row(x);
        out.s("[")
            .u(u64::from(r.core_id))
            .s(", ")
            .u(r.task_token.raw())
            .s(", ")
            .u(u64::from(r.reg_task_id))
            .s(", ")
            .u(r.start_cycles)
            .s(", ")
            .u(r.end_cycles)
            .s(", ")
            .u(u64::from(r.receive_to_start_cycles));
        if let Some(e) = written_epoch(newer, r.run_epoch) {
            out.s(", ").u(e);
        }
        out.s("]");
    });
    if newer {
        newer::render_scheduler_tasks(out, file, rows);
        newer::render_scheduler_records(out, file, rows);
        render_orchestrator_phases(out, rows, true);
        render_host_sections(out, file);
        out.s("\n}\n");
        return;
    }
    out.s(",\n  \"aicpu_tasks\": ");
    render_rows(out, rows.aicpu(), |out, x| {
        let r = rows.aicpu_row(x);
        out.s("[")
            .u(u64::from(r.core_id))
            .s(", ")
            .u(u64::from(r.reg_task_id))
            .s(", ")
            .u(r.dispatch_cycles)
            .s(", ")
            .u(r.finish_cycles)
            .s("]");
    });

    if let Some(lanes) = rows.scheduler_lanes() {
        out.s(",\n  \"aicpu_scheduler_phases\": ");
        render_lanes(out, &lanes, |out, x| {
            render_sched_record(out, &rows.phase(x))
        });
    }
    render_orchestrator_phases(out, rows, false);
    render_host_sections(out, file);
    out.s("\n}\n");
}

/// Writes the file whose level, metadata and host sections are `file`'s and whose large
/// sections are `rows` to `path` atomically, streamed.
pub(crate) fn write_rows<R: Rows>(
    path: &Path,
    file: &SwimlaneFile,
    rows: &R,
) -> Result<(), WriteError> {
    Out::write(path, |out| render_into(out, file, rows))
}

/// `aicpu_orchestrator_phases`, with `run_epoch` last in a 2026-09 file.
fn render_orchestrator_phases<R: Rows>(out: &mut Out, rows: &R, newer: bool) {
    if let Some(lanes) = rows.orchestrator_lanes() {
        out.s(",\n  \"aicpu_orchestrator_phases\": ");
        render_lanes(out, &lanes, |out, x| {
            let r = rows.orch(x);
            out.s("{\"submit_idx\": ")
                .u(u64::from(r.submit_idx))
                .s(", \"task_id\": ")
                .u(r.task_id.raw())
                .s(", \"start_cycles\": ")
                .u(r.start_cycles)
                .s(", \"end_cycles\": ")
                .u(r.end_cycles);
            if let Some(e) = written_epoch(newer, r.run_epoch) {
                out.s(", \"run_epoch\": ").u(e);
            }
            out.s("}");
        });
    }
}

/// `host_orchestrator_phases` and `host_device_uploads` (host-orchestrated runs).
fn render_host_sections(out: &mut Out, file: &SwimlaneFile) {
    if let Some(records) = &file.host_orchestrator_phases {
        out.s(",\n  \"host_orchestrator_phases\": [[");
        render_host_records(out, records, |out, r| {
            out.s("{\"submit_idx\": ")
                .u(u64::from(r.submit_idx))
                .s(", \"task_id\": ")
                .u(r.task_id.raw())
                .s(", \"start_host_ns\": ")
                .u(r.start_host_ns)
                .s(", \"end_host_ns\": ")
                .u(r.end_host_ns)
                .s("}");
        });
        out.s("\n    ]]");
    }
    if let Some(records) = &file.host_device_uploads {
        out.s(",\n  \"host_device_uploads\": [");
        render_host_records(out, records, |out, r| {
            out.s("{\"phase\": ")
                .q(&r.phase)
                .s(", \"start_host_ns\": ")
                .u(r.start_host_ns)
                .s(", \"end_host_ns\": ")
                .u(r.end_host_ns)
                .s(", \"detail\": ")
                .u(r.detail)
                .s("}");
        });
        out.s("\n    ]");
    }
}

/// Writes `file` to `path` atomically, streamed (the text is never whole in memory).
pub fn write(path: &Path, file: &SwimlaneFile) -> Result<(), WriteError> {
    write_rows(path, file, file)
}

fn render_metadata(out: &mut Out, md: &SwimlaneMetadata) {
    out.s(",\n  \"metadata\": {\n    ");
    if let Some(runtime) = &md.runtime {
        out.s("\"runtime\": ").q(runtime).s(",\n    ");
    }
    out.s("\"clock_freq_hz\": ")
        .u(md.clock_freq_hz)
        .s(",\n    \"num_cores\": ")
        .u(u64::from(md.num_cores))
        .s(",\n    \"core_types\": [");
    for (i, t) in md.core_types.iter().enumerate() {
        if i > 0 {
            out.s(", ");
        }
        out.q(t.as_str());
    }
    out.s("]");
    if let Some(timing) = &md.timing {
        out.s(",\n    \"timing\": ").q(timing);
    }
    if let Some(host) = &md.host {
        out.s(",\n    \"orchestrator_source\": ")
            .q(&host.orchestrator_source)
            .s(",\n    \"orchestrator_clock_domain\": ")
            .q(&host.orchestrator_clock_domain)
            .s(",\n    \"device_clock_domain\": ")
            .q(&host.device_clock_domain)
            .s(",\n    \"host_timestamp_resolution_ns\": ")
            .u(host.host_timestamp_resolution_ns)
            .s(",\n    \"host_timestamp_quantization_ns\": ")
            .u(host.host_timestamp_quantization_ns)
            .s(",\n    \"host_orchestration_origin_ns\": ")
            .u(host.host_orchestration_origin_ns)
            .s(",\n    \"timeline_relation\": ")
            .q(&host.timeline_relation);
        if let Some(c) = &host.host_capture {
            out.s(",\n    \"host_capture\": {\"status\": ")
                .q(&c.status)
                .s(", \"expected_records\": ")
                .u(c.expected_records)
                .s(", \"recorded_records\": ")
                .u(c.recorded_records)
                .s(", \"pool_records\": ")
                .u(c.pool_records)
                .s(", \"dropped_records\": ")
                .u(c.dropped_records)
                .s(", \"error\": ");
            opt_str(out, c.error.as_deref());
            out.s("}");
        }
    }
    if let Some(a) = &md.clock_anchors {
        out.s(",\n    \"clock_anchors\": {\"schema_version\": ")
            .u(a.schema_version)
            .s(", \"provider\": ")
            .q(&a.provider)
            .s(", \"device_timestamp_unit\": ")
            .q(&a.device_timestamp_unit)
            .s(", \"raw_device_timestamp_unit\": ")
            .q(&a.raw_device_timestamp_unit)
            .s(", \"samples_per_position\": ")
            .u(a.samples_per_position)
            .s(", \"samples\": [");
        for (i, s) in a.samples.iter().enumerate() {
            if i > 0 {
                out.s(", ");
            }
            out.s("{\"position\": ")
                .q(&s.position)
                .s(", \"sample_idx\": ")
                .u(s.sample_idx)
                .s(", \"host_before_ns\": ")
                .u(s.host_before_ns)
                .s(", \"raw_device_timestamp\": ");
            zero_as_null(out, s.raw_device_timestamp);
            out.s(", \"device_cycles\": ");
            zero_as_null(out, s.device_cycles);
            out.s(", \"host_after_ns\": ")
                .u(s.host_after_ns)
                .s(", \"rtt_ns\": ")
                .u(s.rtt_ns)
                .s(", \"uncertainty_ns\": ")
                .u(s.uncertainty_ns)
                .s(", \"error\": ");
            match &s.error {
                None => {
                    out.s("null");
                }
                Some(e) => {
                    out.s("{\"stage\": ")
                        .q(&e.stage)
                        .s(", \"code\": ")
                        .i(e.code)
                        .s("}");
                }
            }
            out.s("}");
        }
        out.s("]}");
    }
    if let Some(id) = &md.host_clock_domain_id {
        out.s(",\n    \"host_clock_domain_id\": ").q(id);
    }
    if !md.core_to_thread.is_empty() {
        out.s(",\n    \"core_to_thread\": ")
            .list(&md.core_to_thread, ", ");
    }
    out.s("\n  }");
}

fn opt_str(out: &mut Out, v: Option<&str>) {
    match v {
        Some(s) => out.q(s),
        None => out.s("null"),
    };
}

fn zero_as_null(out: &mut Out, v: u64) {
    if v == 0 {
        out.s("null");
    } else {
        out.u(v);
    }
}

/// `[]`, or `[` + `\n    row` joined by `,` + `\n  ]`.
fn render_rows<T: Sync>(out: &mut Out, rows: &[T], row: impl Fn(&mut Out, &T) + Sync) {
    if rows.is_empty() {
        out.s("[]");
        return;
    }
    out.s("[");
    out.each(rows, "\n    ", ",\n    ", row);
    out.s("\n  ]");
}

/// `[\n`, per lane `    [` + `\n      {..}` joined by `,` + (`\n    ` if any)
/// + `]` + (`,` unless last) + `\n`, then `  ]`.
fn render_lanes<T: Sync>(out: &mut Out, lanes: &[&[T]], record: impl Fn(&mut Out, &T) + Sync) {
    out.s("[\n");
    for (i, lane) in lanes.iter().enumerate() {
        out.s("    [");
        out.each(lane, "\n      ", ",\n      ", &record);
        if !lane.is_empty() {
            out.s("\n    ");
        }
        out.s("]");
        if i + 1 < lanes.len() {
            out.s(",");
        }
        out.s("\n");
    }
    out.s("  ]");
}

fn render_host_records<T: Sync>(
    out: &mut Out,
    records: &[T],
    record: impl Fn(&mut Out, &T) + Sync,
) {
    out.each(records, "\n      ", ",\n      ", record);
}

fn render_sched_record(out: &mut Out, r: &SchedPhaseRecord) {
    out.s("{\"kind\": ")
        .q(r.kind.as_str())
        .s(", \"start_cycles\": ")
        .u(r.start_cycles)
        .s(", \"end_cycles\": ")
        .u(r.end_cycles)
        .s(", \"loop_iter\": ")
        .u(u64::from(r.loop_iter))
        .s(", \"tasks_processed\": ")
        .u(u64::from(r.tasks_processed));
    if let Some(pop) = r.pop {
        out.s(", \"pop_hit\": ")
            .u(u64::from(pop.hit))
            .s(", \"pop_miss\": ")
            .u(u64::from(pop.miss));
    }
    if let Some(id) = r.task_id {
        out.s(", \"task_id\": ").u(id.raw());
    }
    if let Some(s) = &r.shared_at_start {
        out.s(", \"shared_at_start\": ").list(s, ",");
    }
    if let Some(s) = &r.shared_at_end {
        out.s(", \"shared_at_end\": ").list(s, ",");
    }
    if let Some(e) = written_epoch(false, r.run_epoch) {
        out.s(", \"run_epoch\": ").u(e);
    }
    out.s("}");
}

/// The `run_epoch` a row or record is written with: always in a 2026-09 file (0 when it
/// has none), and in a 2026-08 file only the one it was read with (a 2026-08 file that
/// carries epochs is read with them, and written back without losing them).
fn written_epoch(newer: bool, epoch: Option<u64>) -> Option<u64> {
    if newer {
        Some(epoch.unwrap_or(0))
    } else {
        epoch
    }
}

// ---------------------------------------------------------------- reader

/// Reads and checks the file at `path`.
pub fn read(path: &Path) -> Result<Loaded<SwimlaneFile>, ReadError> {
    parse(&json::read_file(path)?, path)
}

/// Parses file content; `path` only names the file in messages.
pub fn parse(bytes: &[u8], path: &Path) -> Result<Loaded<SwimlaneFile>, ReadError> {
    let value = json::parse(bytes, path)?;
    let mut problems = Vec::new();
    let file =
        parse_value(&Node::root(&value), &mut problems).map_err(|e| e.into_read_error(path))?;
    Ok(Loaded {
        value: file,
        problems,
    })
}

fn parse_value(root: &Node<'_, '_>, problems: &mut Vec<Problem>) -> Result<SwimlaneFile, Issue> {
    schema::unknown_keys(root.object()?.keys(), &newer::ROOT_KEYS, "", problems);
    newer::check_no_conflict(root)?;
    let level_node = root.field("chip_swimlane_level")?;
    let level_number = level_node.u64().map_err(|_| {
        level_node.invalid(format!("is {}; expected 1, 2, 3 or 4", level_node.value))
    })?;
    let level = SwimlaneLevel::from_number(level_number)
        .ok_or_else(|| level_node.invalid(format!("is {level_number}; expected 1, 2, 3 or 4")))?;

    let metadata = parse_metadata(&root.field("metadata")?, problems)?;

    let aicore_tasks = parse_rows(&root.field("aicore_tasks")?, problems, |row| {
        let cols = row.vec(|c| c.u64())?;
        if !(5..=7).contains(&cols.len()) {
            return Err(row.invalid(format!(
                "has {} columns; expected 7 (2026-09: ending in run_epoch), 6 (2026-08) or 5 (archived files)",
                cols.len()
            )));
        }
        let narrow = |i: usize| {
            u32::try_from(cols[i]).map_err(|_| {
                row.invalid(format!(
                    "column {i} is {}; expected a 32-bit value",
                    cols[i]
                ))
            })
        };
        Ok(AicoreTaskRow {
            core_id: narrow(0)?,
            task_token: TaskId(cols[1]),
            reg_task_id: narrow(2)?,
            start_cycles: cols[3],
            end_cycles: cols[4],
            receive_to_start_cycles: if cols.len() >= 6 { narrow(5)? } else { 0 },
            run_epoch: cols.get(6).copied(),
        })
    })?;
    let aicpu_tasks = match root.opt_field("scheduler_tasks")? {
        Some(node) => newer::parse_scheduler_tasks(&node, problems)?,
        None if metadata.runtime.is_some() => match root.opt_field("aicpu_tasks")? {
            Some(node) => parse_aicpu_rows(&node, problems)?,
            None => Vec::new(),
        },
        None => parse_aicpu_rows(&root.field("aicpu_tasks")?, problems)?,
    };
    let scheduler_phases = match root.opt_field("scheduler_records")? {
        Some(node) => Some(newer::parse_scheduler_records(&node, problems)?),
        None => match root.opt_field("aicpu_scheduler_phases")? {
            Some(node) => Some(parse_lanes(&node, problems, parse_sched_record)?),
            None => None,
        },
    };
    let orchestrator_phases = match root.opt_field("aicpu_orchestrator_phases")? {
        Some(node) => Some(parse_lanes(&node, problems, |n| {
            Ok(OrchPhaseRecord {
                submit_idx: n.field("submit_idx")?.u32()?,
                task_id: TaskId(n.field("task_id")?.u64()?),
                start_cycles: n.field("start_cycles")?.u64()?,
                end_cycles: n.field("end_cycles")?.u64()?,
                run_epoch: n.opt_field("run_epoch")?.map(|e| e.u64()).transpose()?,
            })
        })?),
        None => None,
    };
    parse_tail(
        level,
        metadata,
        aicore_tasks,
        aicpu_tasks,
        scheduler_phases,
        orchestrator_phases,
        root,
        problems,
    )
}

fn parse_aicpu_rows(
    node: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
) -> Result<Vec<AicpuTaskRow>, Issue> {
    parse_rows(node, problems, |row| {
        let cols = row.vec(|c| c.u64())?;
        if cols.len() != 4 {
            return Err(row.invalid(format!("has {} columns; expected 4", cols.len())));
        }
        let narrow = |i: usize| {
            u32::try_from(cols[i]).map_err(|_| {
                row.invalid(format!(
                    "column {i} is {}; expected a 32-bit value",
                    cols[i]
                ))
            })
        };
        Ok(AicpuTaskRow {
            core_id: narrow(0)?,
            reg_task_id: narrow(1)?,
            dispatch_cycles: cols[2],
            finish_cycles: cols[3],
            run_epoch: None,
        })
    })
}

#[allow(clippy::too_many_arguments)]
fn parse_tail(
    level: SwimlaneLevel,
    metadata: SwimlaneMetadata,
    aicore_tasks: Vec<AicoreTaskRow>,
    aicpu_tasks: Vec<AicpuTaskRow>,
    scheduler_phases: Option<Vec<Vec<SchedPhaseRecord>>>,
    orchestrator_phases: Option<Vec<Vec<OrchPhaseRecord>>>,
    root: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
) -> Result<SwimlaneFile, Issue> {
    let host_orchestrator_phases: Option<Vec<HostSubmitRecord>> =
        match root.opt_field("host_orchestrator_phases")? {
            Some(node) => {
                let lanes = parse_lanes(&node, problems, |n| {
                    Ok(HostSubmitRecord {
                        submit_idx: n.field("submit_idx")?.u32()?,
                        task_id: TaskId(n.field("task_id")?.u64()?),
                        start_host_ns: n.field("start_host_ns")?.u64()?,
                        end_host_ns: n.field("end_host_ns")?.u64()?,
                    })
                })?;
                if lanes.len() > 1 {
                    problems.push(Problem::new(
                        node.key.to_string(),
                        format!(
                            "has {} lanes; expected exactly one; merged them",
                            lanes.len()
                        ),
                    ));
                }
                Some(lanes.into_iter().flatten().collect())
            }
            None => None,
        };
    let host_device_uploads = match root.opt_field("host_device_uploads")? {
        Some(node) => Some(parse_rows(&node, problems, |n| {
            Ok(HostUploadRecord {
                phase: n.field("phase")?.str()?.to_string(),
                start_host_ns: n.field("start_host_ns")?.u64()?,
                end_host_ns: n.field("end_host_ns")?.u64()?,
                detail: n.field("detail")?.u64()?,
            })
        })?),
        None => None,
    };

    let host_mode = metadata
        .host
        .as_ref()
        .is_some_and(|h| h.orchestrator_source == "host" || h.host_capture.is_some())
        || host_orchestrator_phases
            .as_ref()
            .is_some_and(|v| !v.is_empty());
    if host_mode && orchestrator_phases.is_some() {
        problems.push(Problem::new(
            "aicpu_orchestrator_phases",
            "present in a host-orchestrated file (mixed clock domains); Simpler's reader rejects this file",
        ));
    }

    Ok(SwimlaneFile {
        level,
        metadata,
        aicore_tasks,
        aicpu_tasks,
        scheduler_phases,
        orchestrator_phases,
        host_orchestrator_phases,
        host_device_uploads,
    })
}

fn parse_metadata(
    md: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
) -> Result<SwimlaneMetadata, Issue> {
    schema::unknown_keys(
        md.object()?.keys(),
        &newer::METADATA_KEYS,
        "metadata.",
        problems,
    );
    let runtime = match md.opt_field("runtime")? {
        Some(r) => {
            let value = r.str()?;
            problems.extend(schema::runtime_problem("metadata.runtime", value));
            Some(value.to_string())
        }
        None => None,
    };
    let host_clock_domain_id = md
        .opt_field("host_clock_domain_id")?
        .map(|n| n.str().map(str::to_string))
        .transpose()?;
    let freq_node = md.field("clock_freq_hz")?;
    let clock_freq_hz = freq_node.u64()?;
    if clock_freq_hz == 0 {
        return Err(freq_node.invalid("is 0; expected a positive frequency in Hz"));
    }

    let mut core_types = Vec::new();
    match md.opt_field("core_types")? {
        Some(node) => match node.array() {
            Ok(items) => {
                for (i, v) in items.iter().enumerate() {
                    let item = node.item(i, v);
                    match item.str().map(|s| (s, CoreType::from_name(s))) {
                        Ok((_, Some(t))) => core_types.push(t),
                        Ok((name, None)) => {
                            problems.push(Problem::new(
                                item.key.to_string(),
                                format!(
                                    "is {name:?}; expected \"aic\" or \"aiv\"; read as \"aiv\""
                                ),
                            ));
                            core_types.push(CoreType::Aiv);
                        }
                        Err(issue) => {
                            problems.push(issue.into_problem("read as \"aiv\""));
                            core_types.push(CoreType::Aiv);
                        }
                    }
                }
            }
            Err(issue) => problems.push(issue.into_problem("no core types; cores read as \"aiv\"")),
        },
        None => problems.push(Problem::new(
            "metadata.core_types",
            "missing key; cores read as \"aiv\"",
        )),
    }

    let num_cores = match md.opt_field("num_cores")?.map(|n| n.u32()) {
        Some(Ok(n)) => n,
        Some(Err(issue)) => {
            problems.push(issue.into_problem("used the length of core_types"));
            u32::try_from(core_types.len()).unwrap_or(u32::MAX)
        }
        None => {
            problems.push(Problem::new(
                "metadata.num_cores",
                "missing key; used the length of core_types",
            ));
            u32::try_from(core_types.len()).unwrap_or(u32::MAX)
        }
    };

    let host = parse_host_metadata(md, problems)?;

    let clock_anchors = match md.opt_field("clock_anchors")? {
        Some(node) => match parse_clock_anchors(&node) {
            Ok(a) => Some(a),
            Err(issue) => {
                problems.push(issue.into_problem("ignored the clock anchors"));
                None
            }
        },
        None => None,
    };

    let core_to_thread = match md.opt_field("core_to_thread")? {
        Some(node) => match node.vec(|n| n.i32()) {
            Ok(v) => match v.iter().position(|&t| !is_core_thread(t)) {
                None => v,
                Some(i) => {
                    problems.push(Problem::new(
                        format!("metadata.core_to_thread[{i}]"),
                        format!(
                            "is {}, past the {MAX_SCHED_THREADS} scheduler threads a run has at most; ignored core_to_thread",
                            v[i]
                        ),
                    ));
                    Vec::new()
                }
            },
            Err(issue) => {
                problems.push(issue.into_problem("ignored core_to_thread"));
                Vec::new()
            }
        },
        None => Vec::new(),
    };

    let timing = match md.opt_field("timing")?.map(|n| n.str().map(str::to_string)) {
        Some(Ok(t)) => Some(t),
        Some(Err(issue)) => {
            problems.push(issue.into_problem("read as host time"));
            None
        }
        None => None,
    };

    Ok(SwimlaneMetadata {
        clock_freq_hz,
        num_cores,
        core_types,
        host,
        clock_anchors,
        core_to_thread,
        runtime,
        host_clock_domain_id,
        timing,
    })
}

const HOST_KEYS: [&str; 8] = [
    "orchestrator_source",
    "orchestrator_clock_domain",
    "device_clock_domain",
    "host_timestamp_resolution_ns",
    "host_timestamp_quantization_ns",
    "host_orchestration_origin_ns",
    "timeline_relation",
    "host_capture",
];

fn parse_host_metadata(
    md: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
) -> Result<Option<HostOrchestrationMetadata>, Issue> {
    let obj = md.object()?;
    if !HOST_KEYS.iter().any(|k| obj.contains_key(*k)) {
        return Ok(None);
    }
    let defaults = HostOrchestrationMetadata::simpler_defaults(0, None);
    let mut text = |name: &str, default: &str| -> String {
        match md.field(name).and_then(|n| n.str().map(str::to_string)) {
            Ok(s) => s,
            Err(issue) => {
                problems.push(issue.into_problem(&format!("used {default:?}")));
                default.to_string()
            }
        }
    };
    let orchestrator_source = text("orchestrator_source", &defaults.orchestrator_source);
    let orchestrator_clock_domain = text(
        "orchestrator_clock_domain",
        &defaults.orchestrator_clock_domain,
    );
    let device_clock_domain = text("device_clock_domain", &defaults.device_clock_domain);
    let timeline_relation = text("timeline_relation", &defaults.timeline_relation);
    let mut number = |name: &str, default: u64| -> u64 {
        match md.field(name).and_then(|n| n.u64()) {
            Ok(v) => v,
            Err(issue) => {
                problems.push(issue.into_problem(&format!("used {default}")));
                default
            }
        }
    };
    let host_timestamp_resolution_ns = number("host_timestamp_resolution_ns", 1);
    let host_timestamp_quantization_ns = number("host_timestamp_quantization_ns", 0);
    let host_orchestration_origin_ns = number("host_orchestration_origin_ns", 0);
    let host_capture = match md.opt_field("host_capture")? {
        Some(node) => match parse_host_capture(&node) {
            Ok(c) => Some(c),
            Err(issue) => {
                problems.push(issue.into_problem("ignored host_capture"));
                None
            }
        },
        None => None,
    };
    Ok(Some(HostOrchestrationMetadata {
        orchestrator_source,
        orchestrator_clock_domain,
        device_clock_domain,
        host_timestamp_resolution_ns,
        host_timestamp_quantization_ns,
        host_orchestration_origin_ns,
        timeline_relation,
        host_capture,
    }))
}

fn parse_host_capture(n: &Node<'_, '_>) -> Result<HostCapture, Issue> {
    Ok(HostCapture {
        status: n.field("status")?.str()?.to_string(),
        expected_records: n.field("expected_records")?.u64()?,
        recorded_records: n.field("recorded_records")?.u64()?,
        pool_records: n.field("pool_records")?.u64()?,
        dropped_records: n.field("dropped_records")?.u64()?,
        error: match n.opt_field("error")? {
            Some(e) => e.opt_str()?.map(str::to_string),
            None => None,
        },
    })
}

fn null_as_zero(n: &Node<'_, '_>) -> Result<u64, Issue> {
    if n.value.is_null() {
        Ok(0)
    } else {
        n.u64()
    }
}

fn parse_clock_anchors(n: &Node<'_, '_>) -> Result<ClockAnchors, Issue> {
    Ok(ClockAnchors {
        schema_version: n.field("schema_version")?.u64()?,
        provider: n.field("provider")?.str()?.to_string(),
        device_timestamp_unit: n.field("device_timestamp_unit")?.str()?.to_string(),
        raw_device_timestamp_unit: n.field("raw_device_timestamp_unit")?.str()?.to_string(),
        samples_per_position: n.field("samples_per_position")?.u64()?,
        samples: n.field("samples")?.vec(|s| {
            Ok(ClockAnchorSample {
                position: s.field("position")?.str()?.to_string(),
                sample_idx: s.field("sample_idx")?.u64()?,
                host_before_ns: s.field("host_before_ns")?.u64()?,
                raw_device_timestamp: null_as_zero(&s.field("raw_device_timestamp")?)?,
                device_cycles: null_as_zero(&s.field("device_cycles")?)?,
                host_after_ns: s.field("host_after_ns")?.u64()?,
                rtt_ns: s.field("rtt_ns")?.u64()?,
                uncertainty_ns: s.field("uncertainty_ns")?.u64()?,
                error: match s.opt_field("error")? {
                    Some(e) if !e.value.is_null() => Some(ClockAnchorError {
                        stage: e.field("stage")?.str()?.to_string(),
                        code: e.field("code")?.i64()?,
                    }),
                    _ => None,
                },
            })
        })?,
    })
}

/// An array whose bad elements are skipped with a problem.
fn parse_rows<T>(
    node: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
    mut row: impl FnMut(&Node<'_, '_>) -> Result<T, Issue>,
) -> Result<Vec<T>, Issue> {
    let items = node.array()?;
    let mut out = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        match row(&node.item(i, v)) {
            Ok(r) => out.push(r),
            Err(issue) => problems.push(issue.into_problem("skipped it")),
        }
    }
    Ok(out)
}

/// An array of lanes; a lane that is not an array reads as empty (keeping
/// the thread numbering), a bad record is skipped.
fn parse_lanes<T>(
    node: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
    mut record: impl FnMut(&Node<'_, '_>) -> Result<T, Issue>,
) -> Result<Vec<Vec<T>>, Issue> {
    let lanes = node.array()?;
    let mut out = Vec::with_capacity(lanes.len());
    for (i, v) in lanes.iter().enumerate() {
        let lane = node.item(i, v);
        match parse_rows(&lane, problems, &mut record) {
            Ok(records) => out.push(records),
            Err(issue) => {
                problems.push(issue.into_problem("read the lane as empty"));
                out.push(Vec::new());
            }
        }
    }
    Ok(out)
}

fn parse_triple(n: &Node<'_, '_>) -> Result<[i16; 3], Issue> {
    let v = n.vec(|x| x.i16())?;
    <[i16; 3]>::try_from(v.as_slice()).map_err(|_| {
        n.invalid(format!(
            "has {} entries; expected 3 ([aic, aiv, mix])",
            v.len()
        ))
    })
}

fn parse_sched_record(n: &Node<'_, '_>) -> Result<SchedPhaseRecord, Issue> {
    let kind = SchedPhaseKind::from_name(n.field("kind")?.str()?);
    let pop = match (n.opt_field("pop_hit")?, n.opt_field("pop_miss")?) {
        (None, None) => None,
        _ => Some(PopCounts {
            hit: n.field("pop_hit")?.u32()?,
            miss: n.field("pop_miss")?.u32()?,
        }),
    };
    Ok(SchedPhaseRecord {
        kind,
        start_cycles: n.field("start_cycles")?.u64()?,
        end_cycles: n.field("end_cycles")?.u64()?,
        loop_iter: n.field("loop_iter")?.u32()?,
        tasks_processed: n.field("tasks_processed")?.u32()?,
        pop,
        task_id: match n.opt_field("task_id")? {
            Some(t) => Some(TaskId(t.u64()?)),
            None => None,
        },
        shared_at_start: match n.opt_field("shared_at_start")? {
            Some(s) => Some(parse_triple(&s)?),
            None => None,
        },
        shared_at_end: match n.opt_field("shared_at_end")? {
            Some(s) => Some(parse_triple(&s)?),
            None => None,
        },
        run_epoch: n.opt_field("run_epoch")?.map(|e| e.u64()).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sched_kind_names_and_codes() {
        for (kind, name, code) in SCHED_KINDS {
            assert_eq!(SchedPhaseKind::from_name(name), kind);
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.code(), Some(code));
            assert_eq!(SchedPhaseKind::from_code(code), Some(kind));
        }
        assert_eq!(SchedPhaseKind::from_code(3), None);
        let legacy = SchedPhaseKind::from_name("fanout");
        assert_eq!(legacy, SchedPhaseKind::Other("fanout".into()));
        assert_eq!(legacy.as_str(), "fanout");
        assert_eq!(legacy.code(), None);
    }
}
