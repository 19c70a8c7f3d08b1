//! `chip_swimlane_records.bin`: the swimlane records in compact form.
//!
//! After the framing ([`super`]): the header, then one group per worker
//! thread, then the orchestrator's submits. Times are host monotonic
//! nanoseconds as the runtime recorded them; [`model`] converts them to
//! counter ticks (`clock_freq_hz`) for [`crate::swimlane::SwimlaneFile`].
//!
//! | part | layout |
//! |---|---|
//! | header | `level` u8, `clock_freq_hz` u64, `core_types` (u32 count, u8 each: 0 aic, 1 aiv), `core_to_thread` (u32 count, i32 each), `schema` u8 ([`super::schema_code`]), `run_epoch` u64 (these two from version 2), `predicted` u8 (0 host time, 1 the timing model's prediction; from version 3) |
//! | `wide` | u64 count, [`WIDE_BYTES`] each: the times too far from their record's first time for an offset |
//! | `workers` | u32 count; per worker: `subtasks` (u64 count, [`SUBTASK_BYTES`] each), `phases` (u64 count, [`PHASE_BYTES`] each) |
//! | `orchestrator` | u64 count, [`ORCH_BYTES`] each |
//!
//! A record keeps its first time in full and the others as u32 offsets
//! from it: a subtask is `core` u32, `reg_task_id` u32, `task` u64,
//! `dispatch` (u64 ns), then `receive`, `start`, `end`, `finish` (u32 ns
//! after `dispatch`); a phase is `kind` u8 (Simpler's enum value,
//! [`crate::swimlane::SchedPhaseKind::code`]), `shared_at_start` and
//! `shared_at_end` (3 × i16 each), `loop_iter`, `tasks_processed`,
//! `pop_hit`, `pop_miss` (u32), `start` (u64 ns), `end` (u32 ns after it);
//! an orchestrator record is `submit_idx` u32, `task` u64, `start` (u64 ns),
//! `end` (u32 ns after it). A time before its record's first one or 4.3 s or
//! more after it has the offset [`WIDE`] and its value in a `wide` entry:
//! `part` u8 (0 subtask, 1 phase, 2 orchestrator), `worker` u32, `index`
//! u64, `field` u8 (the offset's position in its record, from 0), `value`
//! u64. Every [`WIDE`] offset has exactly one entry and every entry one
//! offset, so at level 4 a task costs about 40 + 2 × 41 + 24 bytes.

use std::path::Path;

use super::{CompactError, CompactErrorKind, Cursor, Enc, Sink};
use crate::core_type::CoreType;
use crate::error::WriteError;
use crate::schema::DfxSchema;
use crate::swimlane::{
    AicoreTaskRow, AicpuTaskRow, OrchPhaseRecord, PopCounts, Rows as _, SchedPhaseKind,
    SchedPhaseRecord, SwimlaneFile, SwimlaneLevel, SwimlaneMetadata,
};
use crate::task_id::TaskId;
use crate::ticks;

/// The file name under the output prefix.
pub const FILE_NAME: &str = "chip_swimlane_records.bin";

/// The first 8 bytes of the file.
pub const MAGIC: [u8; 8] = *b"PTO-SWL\0";

/// Bytes of one subtask record.
pub const SUBTASK_BYTES: usize = 40;
/// Bytes of one scheduler-phase record.
pub const PHASE_BYTES: usize = 41;
/// Bytes of one orchestrator record.
pub const ORCH_BYTES: usize = 24;
/// Bytes of one `wide` entry.
pub const WIDE_BYTES: usize = 22;
/// The offset that says "the value is in the `wide` section".
pub const WIDE: u32 = u32::MAX;

/// The offset of `x` from `base`, or `None` when it needs a `wide` entry.
#[inline(always)]
fn offset(base: u64, x: u64) -> Option<u32> {
    x.checked_sub(base)
        .filter(|d| *d < u64::from(WIDE))
        .map(|d| d as u32)
}

/// One time that does not fit its offset: part, worker, index, field, value.
type WideEntry = (u8, u32, u64, u8, u64);

/// One kernel execution on a logical core (an `aicore_tasks` row and an
/// `aicpu_tasks` row), in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subtask {
    /// Logical core.
    pub core: u32,
    /// Raw task id.
    pub task: u64,
    /// Per-core dispatch token.
    pub reg_task_id: u32,
    /// The worker popped the task.
    pub dispatch_ns: u64,
    /// Arguments ready.
    pub receive_ns: u64,
    /// Kernel start.
    pub start_ns: u64,
    /// Kernel end.
    pub end_ns: u64,
    /// Completion processing done.
    pub finish_ns: u64,
}

/// One scheduler phase of a worker, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phase {
    /// Simpler's enum value of the kind ([`SchedPhaseKind::code`]).
    pub kind: u8,
    /// Start.
    pub start_ns: u64,
    /// End.
    pub end_ns: u64,
    /// The worker loop iteration.
    pub loop_iter: u32,
    /// Tasks handled.
    pub tasks_processed: u32,
    /// Successful pops since the previous dispatch record.
    pub pop_hit: u32,
    /// Empty pops since the previous dispatch record.
    pub pop_miss: u32,
    /// Ready-queue depths `[aic, aiv, mix]` at start.
    pub shared_at_start: [i16; 3],
    /// Ready-queue depths at end.
    pub shared_at_end: [i16; 3],
}

/// One orchestrator submit, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Orch {
    /// Submit ordinal.
    pub submit_idx: u32,
    /// Raw task id.
    pub task: u64,
    /// Start.
    pub start_ns: u64,
    /// End.
    pub end_ns: u64,
}

/// The header: what the JSON's `chip_swimlane_level` and `metadata` come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwimlaneHeader {
    /// Collection level, 1..=4.
    pub level: u8,
    /// Device counter frequency (ticks per second), > 0.
    pub clock_freq_hz: u64,
    /// Core type of each logical core.
    pub core_types: Vec<CoreType>,
    /// Worker thread of each logical core (written in the JSON at level >= 3).
    pub core_to_thread: Vec<i32>,
    /// The generation of Simpler's JSON the run asked for (2026-08 in a
    /// version-1 file).
    pub schema: DfxSchema,
    /// The run's `run_epoch` (stamped on the records of a 2026-09 file; 0 in
    /// a version-1 file).
    pub run_epoch: u64,
    /// Whether the times are the timing model's prediction (`--timing
    /// predicted`, `metadata.timing` `"predicted"` in the JSON) rather than
    /// host time (false in a file before version 3).
    pub predicted: bool,
}

/// What one worker thread recorded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WorkerRecords {
    /// Kernel executions, in collection order.
    pub subtasks: Vec<Subtask>,
    /// Scheduler phases, in collection order.
    pub phases: Vec<Phase>,
}

/// A whole compact swimlane file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwimlaneRecords {
    /// The header.
    pub header: SwimlaneHeader,
    /// Per worker thread.
    pub workers: Vec<WorkerRecords>,
    /// The orchestrator's submits.
    pub orchestrator: Vec<Orch>,
}

impl SwimlaneRecords {
    /// Writes the JSON of these records to `path` atomically, streamed ([`write_json`]: the
    /// bytes of [`Self::to_model`]'s rendering, without the model).
    pub fn write_json(&self, path: &Path) -> Result<(), WriteError> {
        let workers: Vec<(&[Subtask], &[Phase])> = self
            .workers
            .iter()
            .map(|w| (w.subtasks.as_slice(), w.phases.as_slice()))
            .collect();
        write_json(
            path,
            &self.header,
            &workers,
            &self.orchestrator,
            |s| *s,
            |p| *p,
            |o| *o,
        )
    }

    /// The JSON model of these records ([`model`]) in the header's generation.
    pub fn to_model(&self) -> SwimlaneFile {
        model(
            &self.header,
            self.workers
                .iter()
                .map(|w| (w.subtasks.iter().copied(), w.phases.iter().copied())),
            self.orchestrator.iter().copied(),
        )
    }
}

/// The swimlane file of the records, whichever way they come: per worker its
/// subtasks and phases (collection order), then the orchestrator's submits.
///
/// AICore and AICPU rows are grouped by core ascending, collection order
/// within a core; the AICPU rows and `core_to_thread` appear from level 2
/// and 3, one scheduler lane per worker from level 3, the orchestrator lane
/// at level 4 when it has records. Times become ticks at `clock_freq_hz`
/// (rounded down). The file is in the header's generation
/// ([`SwimlaneFile::with_schema`] with its `schema` and `run_epoch`).
pub fn model<W, S, P, O>(header: &SwimlaneHeader, workers: W, orchestrator: O) -> SwimlaneFile
where
    W: IntoIterator<Item = (S, P)>,
    S: IntoIterator<Item = Subtask>,
    P: IntoIterator<Item = Phase>,
    O: IntoIterator<Item = Orch>,
{
    let (subtasks, phases): (Vec<Vec<Subtask>>, Vec<Vec<Phase>>) = workers
        .into_iter()
        .map(|(s, p)| (s.into_iter().collect(), p.into_iter().collect()))
        .unzip();
    let orchestrator: Vec<Orch> = orchestrator.into_iter().collect();
    let workers: Vec<(&[Subtask], &[Phase])> = subtasks
        .iter()
        .zip(&phases)
        .map(|(s, p)| (s.as_slice(), p.as_slice()))
        .collect();
    let rows = RecordRows::new(
        header,
        &workers,
        &orchestrator,
        |s: &Subtask| *s,
        |p: &Phase| *p,
        |o: &Orch| *o,
    );
    SwimlaneFile {
        aicore_tasks: rows.aicore().iter().map(|x| rows.aicore_row(x)).collect(),
        aicpu_tasks: rows.aicpu().iter().map(|x| rows.aicpu_row(x)).collect(),
        scheduler_phases: collect_lanes(rows.scheduler_lanes(), |x| rows.phase(x).into_owned()),
        orchestrator_phases: collect_lanes(rows.orchestrator_lanes(), |x| rows.orch(x)),
        ..head(header)
    }
}

/// Lanes of items as lanes of the records `f` makes of them.
fn collect_lanes<T, R>(lanes: Option<Vec<&[T]>>, f: impl Fn(&T) -> R) -> Option<Vec<Vec<R>>> {
    lanes.map(|l| l.iter().map(|lane| lane.iter().map(&f).collect()).collect())
}

/// Writes the swimlane JSON of a run's records to `path` atomically, streamed: the file
/// [`model`] makes of them, in the same bytes, without the model (each row is made as it
/// is written). `workers` are each worker's subtasks and phases (collection order), made
/// into records by `subtask` and `phase`; `orchestrator` the submits, by `orch`.
pub fn write_json<S: Sync, P: Sync, O: Sync>(
    path: &Path,
    header: &SwimlaneHeader,
    workers: &[(&[S], &[P])],
    orchestrator: &[O],
    subtask: impl Fn(&S) -> Subtask + Sync,
    phase: impl Fn(&P) -> Phase + Sync,
    orch: impl Fn(&O) -> Orch + Sync,
) -> Result<(), WriteError> {
    let rows = RecordRows::new(header, workers, orchestrator, subtask, phase, orch);
    crate::swimlane::write_rows(path, &head(header), &rows)
}

/// Everything of the file but its large sections: level, metadata, in the header's
/// generation.
fn head(header: &SwimlaneHeader) -> SwimlaneFile {
    let level = header.level;
    SwimlaneFile {
        level: SwimlaneLevel::from_number(u64::from(level)).unwrap_or(SwimlaneLevel::AicoreTiming),
        metadata: SwimlaneMetadata {
            host_clock_domain_id: None,
            runtime: None,
            clock_freq_hz: header.clock_freq_hz,
            num_cores: header.core_types.len() as u32,
            core_types: header.core_types.clone(),
            host: None,
            clock_anchors: None,
            core_to_thread: if level >= 3 {
                header.core_to_thread.clone()
            } else {
                Vec::new()
            },
            timing: header.predicted.then(|| "predicted".to_string()),
        },
        aicore_tasks: Vec::new(),
        aicpu_tasks: Vec::new(),
        scheduler_phases: None,
        orchestrator_phases: None,
        host_orchestrator_phases: None,
        host_device_uploads: None,
    }
    .with_schema(header.schema, header.run_epoch)
}

/// The large sections of a run's records as rows made one at a time: the AICore and
/// AICPU rows grouped by core ascending, collection order within a core (from level 2 for
/// the AICPU rows), one scheduler lane per worker from level 3, the orchestrator lane at
/// level 4 when it has records; times in ticks at `clock_freq_hz` (rounded down), and the
/// generation's `run_epoch` on every row.
struct RecordRows<'a, S, P, O, FS, FP, FO> {
    level: u8,
    freq: u64,
    epoch: Option<u64>,
    workers: &'a [(&'a [S], &'a [P])],
    orchestrator: &'a [O],
    /// The rows' order: (core, worker, index) of each subtask.
    order: Vec<(u32, u32, u32)>,
    subtask: FS,
    phase: FP,
    orch: FO,
}

impl<'a, S, P, O, FS, FP, FO> RecordRows<'a, S, P, O, FS, FP, FO>
where
    FS: Fn(&S) -> Subtask,
{
    fn new(
        header: &SwimlaneHeader,
        workers: &'a [(&'a [S], &'a [P])],
        orchestrator: &'a [O],
        subtask: FS,
        phase: FP,
        orch: FO,
    ) -> Self {
        let mut order: Vec<(u32, u32, u32)> = Vec::new();
        for (w, (subtasks, _)) in workers.iter().enumerate() {
            order.extend(
                subtasks
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (subtask(s).core, w as u32, i as u32)),
            );
        }
        // Grouped by core ascending, collection order within a core (stable sort).
        order.sort_by_key(|&(core, _, _)| core);
        Self {
            level: header.level,
            freq: header.clock_freq_hz,
            epoch: SwimlaneFile::stamped_epoch(header.schema, header.run_epoch, None),
            workers,
            orchestrator,
            order,
            subtask,
            phase,
            orch,
        }
    }

    fn subtask_at(&self, &(_, w, i): &(u32, u32, u32)) -> Subtask {
        (self.subtask)(&self.workers[w as usize].0[i as usize])
    }
}

impl<S, P, O, FS, FP, FO> crate::swimlane::Rows for RecordRows<'_, S, P, O, FS, FP, FO>
where
    S: Sync,
    P: Sync,
    O: Sync,
    FS: Fn(&S) -> Subtask + Sync,
    FP: Fn(&P) -> Phase + Sync,
    FO: Fn(&O) -> Orch + Sync,
{
    type Aicore = (u32, u32, u32);
    type Aicpu = (u32, u32, u32);
    type Phase = P;
    type Orch = O;

    fn aicore(&self) -> &[(u32, u32, u32)] {
        &self.order
    }

    fn aicore_row(&self, x: &(u32, u32, u32)) -> AicoreTaskRow {
        let s = self.subtask_at(x);
        let start = ticks(s.start_ns, self.freq);
        AicoreTaskRow {
            run_epoch: self.epoch,
            core_id: s.core,
            task_token: TaskId(s.task),
            reg_task_id: s.reg_task_id,
            start_cycles: start,
            end_cycles: ticks(s.end_ns, self.freq),
            receive_to_start_cycles: start.wrapping_sub(ticks(s.receive_ns, self.freq)) as u32,
        }
    }

    fn aicpu(&self) -> &[(u32, u32, u32)] {
        if self.level >= 2 {
            &self.order
        } else {
            &[]
        }
    }

    fn aicpu_row(&self, x: &(u32, u32, u32)) -> AicpuTaskRow {
        let s = self.subtask_at(x);
        AicpuTaskRow {
            run_epoch: self.epoch,
            core_id: s.core,
            reg_task_id: s.reg_task_id,
            dispatch_cycles: ticks(s.dispatch_ns, self.freq),
            finish_cycles: ticks(s.finish_ns, self.freq),
        }
    }

    fn scheduler_lanes(&self) -> Option<Vec<&[P]>> {
        (self.level >= 3).then(|| self.workers.iter().map(|(_, p)| *p).collect())
    }

    fn phase<'x>(&self, x: &'x P) -> std::borrow::Cow<'x, SchedPhaseRecord> {
        let mut r = phase_record(&(self.phase)(x), self.freq);
        r.run_epoch = self.epoch;
        std::borrow::Cow::Owned(r)
    }

    fn orchestrator_lanes(&self) -> Option<Vec<&[O]>> {
        (self.level >= 4 && !self.orchestrator.is_empty()).then(|| vec![self.orchestrator])
    }

    fn orch(&self, x: &O) -> OrchPhaseRecord {
        let o = (self.orch)(x);
        OrchPhaseRecord {
            run_epoch: self.epoch,
            submit_idx: o.submit_idx,
            task_id: TaskId(o.task),
            start_cycles: ticks(o.start_ns, self.freq),
            end_cycles: ticks(o.end_ns, self.freq),
        }
    }
}

fn phase_record(p: &Phase, freq: u64) -> SchedPhaseRecord {
    let kind = SchedPhaseKind::from_code(p.kind)
        .unwrap_or_else(|| SchedPhaseKind::Other(p.kind.to_string()));
    let pop = (kind == SchedPhaseKind::Dispatch).then_some(PopCounts {
        hit: p.pop_hit,
        miss: p.pop_miss,
    });
    SchedPhaseRecord {
        run_epoch: None,
        kind,
        start_cycles: ticks(p.start_ns, freq),
        end_cycles: ticks(p.end_ns, freq),
        loop_iter: p.loop_iter,
        tasks_processed: p.tasks_processed,
        pop,
        task_id: None,
        shared_at_start: Some(p.shared_at_start),
        shared_at_end: Some(p.shared_at_end),
    }
}

// ---------------------------------------------------------------- writer

#[inline(always)]
fn encode_subtask(s: &Subtask) -> [u8; SUBTASK_BYTES] {
    let off = |x| offset(s.dispatch_ns, x).unwrap_or(WIDE);
    *Enc::<SUBTASK_BYTES>::new()
        .u32(s.core)
        .u32(s.reg_task_id)
        .u64(s.task)
        .u64(s.dispatch_ns)
        .u32(off(s.receive_ns))
        .u32(off(s.start_ns))
        .u32(off(s.end_ns))
        .u32(off(s.finish_ns))
        .done()
}

#[inline(always)]
fn encode_phase(p: &Phase) -> [u8; PHASE_BYTES] {
    let mut e = Enc::<PHASE_BYTES>::new();
    e.u8(p.kind);
    for v in p.shared_at_start.iter().chain(&p.shared_at_end) {
        e.bytes(&v.to_le_bytes());
    }
    *e.u32(p.loop_iter)
        .u32(p.tasks_processed)
        .u32(p.pop_hit)
        .u32(p.pop_miss)
        .u64(p.start_ns)
        .u32(offset(p.start_ns, p.end_ns).unwrap_or(WIDE))
        .done()
}

#[inline(always)]
fn encode_orch(o: &Orch) -> [u8; ORCH_BYTES] {
    *Enc::<ORCH_BYTES>::new()
        .u32(o.submit_idx)
        .u64(o.task)
        .u64(o.start_ns)
        .u32(offset(o.start_ns, o.end_ns).unwrap_or(WIDE))
        .done()
}

/// The `wide` entries of the records (one pass over them).
fn wide_entries<W, S, P, O>(workers: W, orchestrator: O) -> Vec<WideEntry>
where
    W: Iterator<Item = (S, P)>,
    S: Iterator<Item = Subtask>,
    P: Iterator<Item = Phase>,
    O: Iterator<Item = Orch>,
{
    let mut out = Vec::new();
    for (w, (subtasks, phases)) in workers.enumerate() {
        let w = w as u32;
        for (i, s) in subtasks.enumerate() {
            for (f, x) in [s.receive_ns, s.start_ns, s.end_ns, s.finish_ns]
                .into_iter()
                .enumerate()
            {
                if offset(s.dispatch_ns, x).is_none() {
                    out.push((0, w, i as u64, f as u8, x));
                }
            }
        }
        for (i, p) in phases.enumerate() {
            if offset(p.start_ns, p.end_ns).is_none() {
                out.push((1, w, i as u64, 0, p.end_ns));
            }
        }
    }
    for (i, o) in orchestrator.enumerate() {
        if offset(o.start_ns, o.end_ns).is_none() {
            out.push((2, 0, i as u64, 0, o.end_ns));
        }
    }
    out
}

/// Writes the records to `path` atomically, straight from the iterators (no
/// allocation per record); returns the bytes written. The iterators are
/// walked twice (first for the `wide` entries, so they must be `Clone`, as
/// iterators over slices are). An iterator that yields another number of
/// records than its `len()` is an error and leaves no file.
pub fn write<W, S, P, O>(
    path: &Path,
    header: &SwimlaneHeader,
    workers: W,
    orchestrator: O,
) -> Result<u64, WriteError>
where
    W: ExactSizeIterator<Item = (S, P)> + Clone,
    S: ExactSizeIterator<Item = Subtask>,
    P: ExactSizeIterator<Item = Phase>,
    O: ExactSizeIterator<Item = Orch> + Clone,
{
    let mut out = Sink::create(path)?;
    out.put(&MAGIC)?;
    out.put(&super::VERSION.to_le_bytes())?;
    out.put(&[header.level])?;
    out.put(&header.clock_freq_hz.to_le_bytes())?;
    out.put(&(header.core_types.len() as u32).to_le_bytes())?;
    for t in &header.core_types {
        out.put(&[t.code()])?;
    }
    out.put(&(header.core_to_thread.len() as u32).to_le_bytes())?;
    for t in &header.core_to_thread {
        out.put(&t.to_le_bytes())?;
    }
    out.put(&[super::schema_code(header.schema)])?;
    out.put(&header.run_epoch.to_le_bytes())?;
    out.put(&[u8::from(header.predicted)])?;
    let wide = wide_entries(workers.clone(), orchestrator.clone());
    out.put(&(wide.len() as u64).to_le_bytes())?;
    for (part, worker, index, field, value) in &wide {
        out.put(
            Enc::<WIDE_BYTES>::new()
                .u8(*part)
                .u32(*worker)
                .u64(*index)
                .u8(*field)
                .u64(*value)
                .done(),
        )?;
    }
    let n_workers = workers.len();
    out.put(&(n_workers as u32).to_le_bytes())?;
    let mut seen = 0usize;
    for (subtasks, phases) in workers {
        seen += 1;
        section(&mut out, subtasks, encode_subtask, "subtasks")?;
        section(&mut out, phases, encode_phase, "phases")?;
    }
    if seen != n_workers {
        return Err(super::length_mismatch(out.path(), "workers"));
    }
    section(&mut out, orchestrator, encode_orch, "orchestrator")?;
    out.commit()
}

fn section<T, const N: usize>(
    out: &mut Sink,
    records: impl ExactSizeIterator<Item = T>,
    encode: impl Fn(&T) -> [u8; N],
    key: &str,
) -> Result<(), WriteError> {
    let n = records.len();
    out.put(&(n as u64).to_le_bytes())?;
    let mut seen = 0usize;
    for r in records {
        seen += 1;
        if seen > n {
            break;
        }
        out.put_record(&encode(&r))?;
    }
    if seen != n {
        return Err(super::length_mismatch(out.path(), key));
    }
    Ok(())
}

// ---------------------------------------------------------------- reader

/// The time at offset `off` from `base`, or the `wide` entry `key` when the
/// offset is [`WIDE`] (taken out of `wide`, so that leftovers can be found).
fn resolve<R: std::io::Read>(
    c: &Cursor<'_, R>,
    wide: &mut std::collections::HashMap<(u8, u32, u64, u8), u64>,
    key: (u8, u32, u64, u8),
    base: u64,
    off: u32,
    field: &'static str,
) -> Result<u64, CompactError> {
    if off == WIDE {
        return wide.remove(&key).ok_or_else(|| {
            c.error(
                field,
                CompactErrorKind::Value {
                    value: u64::from(off),
                    reason: "is marked wide but the wide section has no entry for it",
                },
            )
        });
    }
    base.checked_add(u64::from(off)).ok_or_else(|| {
        c.error(
            field,
            CompactErrorKind::Value {
                value: u64::from(off),
                reason: "added to its record's first time overflows 64 bits",
            },
        )
    })
}

/// Reads the compact swimlane file at `path`.
pub fn read(path: &Path) -> Result<SwimlaneRecords, CompactError> {
    let (reader, len) = super::open(path)?;
    walk(&mut Cursor::new(reader, len, path))
}

/// [`read`] over file content; `path` only names the file in errors.
pub fn parse(bytes: &[u8], path: &Path) -> Result<SwimlaneRecords, CompactError> {
    walk(&mut Cursor::new(bytes, bytes.len() as u64, path))
}

/// The wide time values by (record kind, worker, record index, field), taken out as they
/// are used.
type Wide = std::collections::HashMap<(u8, u32, u64, u8), u64>;

/// Reads a whole compact swimlane file from `c`: framing and header, the wide times, each
/// worker's subtasks and phases, the orchestrator records; every wide entry must be used.
fn walk<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<SwimlaneRecords, CompactError> {
    let version = c.framing(&MAGIC, FILE_NAME)?;
    let level = c.u8("level")?;
    if !(1..=4).contains(&level) {
        return Err(c.error(
            "level",
            CompactErrorKind::Value {
                value: u64::from(level),
                reason: "is not a swimlane level (1..=4)",
            },
        ));
    }
    let clock_freq_hz = c.u64("clock_freq_hz")?;
    if clock_freq_hz == 0 {
        return Err(c.error(
            "clock_freq_hz",
            CompactErrorKind::Value {
                value: 0,
                reason: "is not a positive frequency",
            },
        ));
    }
    let core_types = read_core_types(c)?;
    c.index = None;
    let core_to_thread = read_core_to_thread(c)?;
    c.index = None;
    c.section = "header";
    let schema = c.schema(version)?;
    let run_epoch = if version >= 2 { c.u64("run_epoch")? } else { 0 };
    let predicted = version >= 3 && predicted_byte(c)?;
    let mut wide = read_wide(c)?;
    c.index = None;
    c.section = "workers";
    // Each worker holds at least its two counts.
    let n_workers = c.count(16, false)?;
    let mut workers = Vec::with_capacity(n_workers);
    for w in 0..n_workers {
        let w = w as u32;
        let subtasks = read_subtasks(c, &mut wide, w)?;
        let phases = read_phases(c, &mut wide, w)?;
        workers.push(WorkerRecords { subtasks, phases });
    }
    let orchestrator = read_orchestrator(c, &mut wide)?;
    no_wide_left(c, &wide)?;
    c.end()?;
    Ok(SwimlaneRecords {
        header: SwimlaneHeader {
            level,
            clock_freq_hz,
            core_types,
            core_to_thread,
            schema,
            run_epoch,
            predicted,
        },
        workers,
        orchestrator,
    })
}

/// The `core_types` section.
fn read_core_types<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<Vec<CoreType>, CompactError> {
    c.section = "core_types";
    let n = c.count(1, false)?;
    let mut core_types = Vec::with_capacity(n);
    for i in 0..n {
        c.index = Some(i as u64);
        let code = c.u8("core_type")?;
        core_types.push(CoreType::from_code(u64::from(code)).ok_or_else(|| {
            c.error(
                "core_type",
                CompactErrorKind::Value {
                    value: u64::from(code),
                    reason: "is not a core type (0 aic, 1 aiv)",
                },
            )
        })?);
    }
    Ok(core_types)
}

/// The `core_to_thread` section.
fn read_core_to_thread<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<Vec<i32>, CompactError> {
    c.section = "core_to_thread";
    let n = c.count(4, false)?;
    let mut core_to_thread = Vec::with_capacity(n);
    for i in 0..n {
        c.index = Some(i as u64);
        let thread = i32::from_le_bytes(c.take("thread")?);
        if !crate::swimlane::is_core_thread(thread) {
            return Err(c.error(
                "thread",
                CompactErrorKind::Value {
                    value: thread as u64,
                    reason:
                        "is past the 1024 scheduler threads a run has at most (MAX_SCHED_THREADS)",
                },
            ));
        }
        core_to_thread.push(thread);
    }
    Ok(core_to_thread)
}

/// The `wide` section: each entry names an existing field of a record kind, once.
fn read_wide<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<Wide, CompactError> {
    c.section = "wide";
    let n = c.count(WIDE_BYTES, true)?;
    let mut wide: std::collections::HashMap<(u8, u32, u64, u8), u64> =
        std::collections::HashMap::with_capacity(n);
    for i in 0..n {
        c.index = Some(i as u64);
        let part = c.u8("part")?;
        let worker = c.u32("worker")?;
        let index = c.u64("index")?;
        let field = c.u8("field")?;
        let value = c.u64("value")?;
        let fields = match part {
            0 => 4,
            1 | 2 => 1,
            _ => {
                return Err(c.error(
                    "part",
                    CompactErrorKind::Value {
                        value: u64::from(part),
                        reason: "is not a record kind (0 subtask, 1 phase, 2 orchestrator)",
                    },
                ))
            }
        };
        if field >= fields {
            return Err(c.error(
                "field",
                CompactErrorKind::Value {
                    value: u64::from(field),
                    reason: "is not an offset of its record",
                },
            ));
        }
        if wide.insert((part, worker, index, field), value).is_some() {
            return Err(c.error(
                "index",
                CompactErrorKind::Value {
                    value: index,
                    reason: "repeats an earlier entry's record and field",
                },
            ));
        }
    }
    Ok(wide)
}

/// Worker `w`'s subtasks, their times resolved against `wide`.
fn read_subtasks<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
    wide: &mut Wide,
    w: u32,
) -> Result<Vec<Subtask>, CompactError> {
    c.section = "subtasks";
    c.index = None;
    let n = c.count(SUBTASK_BYTES, true)?;
    let mut subtasks = Vec::with_capacity(n);
    for i in 0..n {
        c.index = Some(i as u64);
        let core = c.u32("core")?;
        let reg_task_id = c.u32("reg_task_id")?;
        let task = c.u64("task")?;
        let dispatch_ns = c.u64("dispatch_ns")?;
        let mut times = [0u64; 4];
        for (f, (t, name)) in times
            .iter_mut()
            .zip(["receive_ns", "start_ns", "end_ns", "finish_ns"])
            .enumerate()
        {
            let off = c.u32(name)?;
            *t = resolve(c, wide, (0, w, i as u64, f as u8), dispatch_ns, off, name)?;
        }
        subtasks.push(Subtask {
            core,
            task,
            reg_task_id,
            dispatch_ns,
            receive_ns: times[0],
            start_ns: times[1],
            end_ns: times[2],
            finish_ns: times[3],
        });
    }
    Ok(subtasks)
}

/// Worker `w`'s scheduler phases, their ends resolved against `wide`.
fn read_phases<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
    wide: &mut Wide,
    w: u32,
) -> Result<Vec<Phase>, CompactError> {
    c.section = "phases";
    c.index = None;
    let n = c.count(PHASE_BYTES, true)?;
    let mut phases = Vec::with_capacity(n);
    for i in 0..n {
        c.index = Some(i as u64);
        let kind = c.u8("kind")?;
        if SchedPhaseKind::from_code(kind).is_none() {
            return Err(c.error(
                "kind",
                CompactErrorKind::Value {
                    value: u64::from(kind),
                    reason: "is not a scheduler phase kind",
                },
            ));
        }
        let mut shared = [0i16; 6];
        for v in &mut shared {
            *v = i16::from_le_bytes(c.take("shared")?);
        }
        let loop_iter = c.u32("loop_iter")?;
        let tasks_processed = c.u32("tasks_processed")?;
        let pop_hit = c.u32("pop_hit")?;
        let pop_miss = c.u32("pop_miss")?;
        let start_ns = c.u64("start_ns")?;
        let off = c.u32("end_ns")?;
        let end_ns = resolve(c, wide, (1, w, i as u64, 0), start_ns, off, "end_ns")?;
        phases.push(Phase {
            kind,
            shared_at_start: [shared[0], shared[1], shared[2]],
            shared_at_end: [shared[3], shared[4], shared[5]],
            loop_iter,
            tasks_processed,
            pop_hit,
            pop_miss,
            start_ns,
            end_ns,
        });
    }
    Ok(phases)
}

/// The orchestrator section, its ends resolved against `wide`.
fn read_orchestrator<R: std::io::Read>(
    c: &mut Cursor<'_, R>,
    wide: &mut Wide,
) -> Result<Vec<Orch>, CompactError> {
    c.section = "orchestrator";
    c.index = None;
    let n = c.count(ORCH_BYTES, true)?;
    let mut orchestrator = Vec::with_capacity(n);
    for i in 0..n {
        c.index = Some(i as u64);
        let submit_idx = c.u32("submit_idx")?;
        let task = c.u64("task")?;
        let start_ns = c.u64("start_ns")?;
        let off = c.u32("end_ns")?;
        let end_ns = resolve(c, wide, (2, 0, i as u64, 0), start_ns, off, "end_ns")?;
        orchestrator.push(Orch {
            submit_idx,
            task,
            start_ns,
            end_ns,
        });
    }
    Ok(orchestrator)
}

/// A wide entry no record used is an error naming the lowest such entry's index.
fn no_wide_left<R: std::io::Read>(c: &mut Cursor<'_, R>, wide: &Wide) -> Result<(), CompactError> {
    if let Some((&(_, _, index, _), _)) = wide.iter().min() {
        c.section = "wide";
        c.index = None;
        return Err(c.error(
            "index",
            CompactErrorKind::Value {
                value: index,
                reason: "names a record or field whose offset is not wide",
            },
        ));
    }
    Ok(())
}

/// The header's timing byte: 0 host time, 1 predicted.
fn predicted_byte<R: std::io::Read>(c: &mut Cursor<'_, R>) -> Result<bool, CompactError> {
    match c.u8("predicted")? {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(c.error(
            "predicted",
            CompactErrorKind::Value {
                value: u64::from(v),
                reason: "is not a timing (0 host time, 1 predicted)",
            },
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample's header bytes (level, clock, 3 core types, 3 threads,
    /// schema, epoch, timing).
    const HEADER: usize = 1 + 8 + 4 + 3 + 4 + 12 + 1 + 8 + 1;

    pub(crate) fn sample() -> SwimlaneRecords {
        let sub = |core, task, reg, t: u64| Subtask {
            core,
            task,
            reg_task_id: reg,
            dispatch_ns: t,
            receive_ns: t + 40,
            start_ns: t + 100,
            end_ns: t + 900,
            finish_ns: t + 1000,
        };
        let phase = |kind, t: u64| Phase {
            kind,
            start_ns: t,
            end_ns: t + 55,
            loop_iter: 3,
            tasks_processed: 1,
            pop_hit: 2,
            pop_miss: 1,
            shared_at_start: [0, 1, -1],
            shared_at_end: [2, 0, 0],
        };
        SwimlaneRecords {
            header: SwimlaneHeader {
                level: 4,
                clock_freq_hz: 50_000_000,
                core_types: vec![CoreType::Aic, CoreType::Aiv, CoreType::Aiv],
                core_to_thread: vec![0, 1, -1],
                schema: DfxSchema::V2026_08,
                run_epoch: 0,
                predicted: false,
            },
            workers: vec![
                WorkerRecords {
                    subtasks: vec![sub(1, 1 << 32, 1, 10_000), sub(0, 7, 1, 12_345)],
                    phases: vec![phase(1, 9_000), phase(0, 11_000)],
                },
                WorkerRecords::default(),
                WorkerRecords {
                    subtasks: vec![sub(0, 9, 2, 20_000)],
                    phases: vec![phase(1, 19_999)],
                },
            ],
            orchestrator: vec![Orch {
                submit_idx: 0,
                task: 7,
                start_ns: 8_000,
                end_ns: 8_100,
            }],
        }
    }

    fn write_sample(dir: &Path, r: &SwimlaneRecords) -> std::path::PathBuf {
        let path = dir.join(FILE_NAME);
        write(
            &path,
            &r.header,
            r.workers
                .iter()
                .map(|w| (w.subtasks.iter().copied(), w.phases.iter().copied())),
            r.orchestrator.iter().copied(),
        )
        .unwrap();
        path
    }

    /// Records with `n` subtasks over two workers (cores in any order, one phase kind
    /// Simpler does not name, times past the 64-bit product), `n` orchestrator records.
    fn many(n: u64, level: u8, schema: DfxSchema, predicted: bool) -> SwimlaneRecords {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            x >> 33
        };
        let base = 1u64 << 45;
        let mut workers = vec![WorkerRecords::default(), WorkerRecords::default()];
        for i in 0..n {
            let t = base + i * 1000 + next() % 500;
            let w = &mut workers[(next() % 2) as usize];
            w.subtasks.push(Subtask {
                core: (next() % 7) as u32,
                task: (next() % 3) << 32 | i,
                reg_task_id: i as u32,
                dispatch_ns: t,
                receive_ns: t + next() % 50,
                start_ns: t + 60,
                end_ns: t + 60 + next() % 900,
                finish_ns: t + 1_000,
            });
            w.phases.push(Phase {
                kind: [0, 1, 2, 4, 5, 6, 9][(next() % 7) as usize],
                start_ns: t,
                end_ns: t + next() % 80,
                loop_iter: i as u32,
                tasks_processed: (next() % 3) as u32,
                pop_hit: (next() % 4) as u32,
                pop_miss: (next() % 4) as u32,
                shared_at_start: [(next() % 5) as i16, -1, 0],
                shared_at_end: [0, (next() % 5) as i16, 3],
            });
        }
        SwimlaneRecords {
            header: SwimlaneHeader {
                level,
                clock_freq_hz: if predicted { 1_000_000_000 } else { 50_000_000 },
                core_types: (0..7)
                    .map(|c| {
                        if c % 3 == 0 {
                            CoreType::Aic
                        } else {
                            CoreType::Aiv
                        }
                    })
                    .collect(),
                core_to_thread: vec![0, 0, 0, 1, 1, 1, -1],
                schema,
                run_epoch: 42,
                predicted,
            },
            workers,
            orchestrator: (0..n)
                .map(|i| Orch {
                    submit_idx: i as u32,
                    task: i,
                    start_ns: base + i * 1000,
                    end_ns: base + i * 1000 + 30,
                })
                .collect(),
        }
    }

    /// The JSON streamed from the records is the model's rendering, byte for byte: both
    /// generations, every level, a section split between two threads or not.
    #[test]
    fn json_from_the_records_is_the_models_json() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chip_swimlane_records.json");
        for (n, level, schema, predicted) in [
            (20_000, 4, DfxSchema::V2026_08, false),
            (20_000, 4, DfxSchema::V2026_09, true),
            (300, 3, DfxSchema::V2026_09, false),
            (300, 2, DfxSchema::V2026_08, false),
            (300, 1, DfxSchema::V2026_09, false),
            (0, 4, DfxSchema::V2026_09, false),
        ] {
            let r = many(n, level, schema, predicted);
            r.write_json(&path).unwrap();
            let want = crate::swimlane::render(&r.to_model());
            let got = std::fs::read_to_string(&path).unwrap();
            assert!(got == want, "{n} records, level {level}, {schema:?}");
        }
    }

    #[test]
    fn records_round_trip_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let r = sample();
        let path = write_sample(dir.path(), &r);
        let len = std::fs::metadata(&path).unwrap().len();
        // Framing 12, header 1 + 8 + 4 + 3 + 4 + 12 + 1 + 8 + 1, no wide entry, workers 4 + 3 × 16.
        let fixed = 12 + HEADER + 8 + 52 + 8;
        assert_eq!(
            len as usize,
            fixed + 3 * SUBTASK_BYTES + 3 * PHASE_BYTES + ORCH_BYTES
        );
        assert_eq!(
            super::super::sniff(&path),
            Some(super::super::CompactKind::Swimlane)
        );
        assert_eq!(read(&path).unwrap(), r);
    }

    /// One flipped bit in `core_to_thread` (2^29) made the converter name half a billion
    /// scheduler lanes (past 6 GB): the reader refuses an entry past the limit.
    #[test]
    fn a_core_to_thread_entry_past_the_limit_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = sample();
        r.header.core_to_thread[1] = 1 << 29;
        let path = write_sample(dir.path(), &r);
        let err = read(&path).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("core_to_thread"), "{text}");
        assert!(text.contains("536870912"), "{text}");
        assert!(
            text.contains("past the 1024 scheduler threads a run has at most"),
            "{text}"
        );
        r.header.core_to_thread[1] = crate::swimlane::MAX_SCHED_THREADS - 1;
        let path = write_sample(dir.path(), &r);
        assert_eq!(read(&path).unwrap(), r);
    }

    #[test]
    fn the_model_sorts_by_core_converts_to_ticks_and_gates_by_level() {
        let r = sample();
        let f = r.to_model();
        let cores: Vec<u32> = f.aicore_tasks.iter().map(|t| t.core_id).collect();
        assert_eq!(cores, [0, 0, 1]);
        // Start 12,445 ns at 50 MHz: 622.25 → 622 ticks; receive 12,385 ns: 619.25 → 619.
        assert_eq!(f.aicore_tasks[0].task_token, TaskId(7));
        assert_eq!(f.aicore_tasks[0].start_cycles, 622);
        assert_eq!(f.aicore_tasks[0].receive_to_start_cycles, 622 - 619);
        assert_eq!(f.aicpu_tasks.len(), 3);
        let lanes = f.scheduler_phases.as_ref().unwrap();
        assert_eq!(lanes.len(), 3);
        assert!(lanes[1].is_empty());
        assert_eq!(lanes[0][0].kind, SchedPhaseKind::Dispatch);
        assert_eq!(lanes[0][0].pop, Some(PopCounts { hit: 2, miss: 1 }));
        assert_eq!(lanes[0][1].kind, SchedPhaseKind::Complete);
        assert_eq!(lanes[0][1].pop, None);
        assert_eq!(f.orchestrator_phases.as_ref().map(|o| o[0].len()), Some(1));
        assert_eq!(f.metadata.core_to_thread, [0, 1, -1]);

        let mut low = r.clone();
        low.header.level = 2;
        let f = low.to_model();
        assert!(f.scheduler_phases.is_none() && f.orchestrator_phases.is_none());
        assert!(f.metadata.core_to_thread.is_empty());
        assert_eq!(f.aicpu_tasks.len(), 3);
        low.header.level = 1;
        assert!(low.to_model().aicpu_tasks.is_empty());
    }

    #[test]
    fn damage_is_an_error_naming_section_record_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let path = write_sample(dir.path(), &sample());
        let bytes = std::fs::read(&path).unwrap();
        // Every truncation is an error, never a panic.
        for n in 0..bytes.len() {
            assert!(parse(&bytes[..n], &path).is_err(), "prefix {n}");
        }
        let mut more = bytes.clone();
        more.push(0);
        let e = parse(&more, &path).unwrap_err();
        assert!(matches!(e.kind, CompactErrorKind::Trailing(1)), "{e}");

        // The first worker's subtask count set to 2^40.
        let at = 12 + HEADER + 8 + 4;
        let mut huge = bytes.clone();
        huge[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        let e = parse(&huge, &path).unwrap_err();
        assert_eq!((e.section, e.field), ("subtasks", "count"));
        assert!(e.to_string().contains("do not fit"), "{e}");

        // The first phase's kind set to 3 (unused in Simpler's enum).
        let at = 12 + HEADER + 8 + 4 + 8 + 2 * SUBTASK_BYTES + 8;
        let mut kind = bytes.clone();
        kind[at] = 3;
        let e = parse(&kind, &path).unwrap_err();
        assert_eq!((e.section, e.index, e.field), ("phases", Some(0), "kind"));
        assert!(e.to_string().contains("phases[0].kind"), "{e}");

        let mut version = bytes.clone();
        version[8] = 9;
        assert!(matches!(
            parse(&version, &path).unwrap_err().kind,
            CompactErrorKind::Version { found: 9 }
        ));
        let mut level = bytes;
        level[12] = 5;
        assert_eq!(parse(&level, &path).unwrap_err().field, "level");
    }

    #[test]
    fn the_header_carries_the_generation_and_a_version_1_file_is_2026_08() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = sample();
        r.header.schema = DfxSchema::V2026_09;
        r.header.run_epoch = 3;
        let path = write_sample(dir.path(), &r);
        let back = read(&path).unwrap();
        assert_eq!(back, r);
        let f = back.to_model();
        assert_eq!(f.schema(), DfxSchema::V2026_09);
        assert!(f.aicore_tasks.iter().all(|t| t.run_epoch == Some(3)));

        // The generation byte sits after core_to_thread (12 + 1 + 8 + 4 + 3 + 4 + 12).
        let bytes = std::fs::read(&path).unwrap();
        let at = 12 + 32;
        assert_eq!(bytes[at], 1);
        let mut bad = bytes.clone();
        bad[at] = 7;
        let e = parse(&bad, &path).unwrap_err();
        assert_eq!((e.section, e.field), ("header", "schema"));
        assert!(e.to_string().contains("2026-09"), "{e}");

        // Version 1: no generation byte, epoch nor timing; read as 2026-08.
        let mut v1 = bytes[..at].to_vec();
        v1.extend_from_slice(&bytes[at + 10..]);
        v1[8..12].copy_from_slice(&1u32.to_le_bytes());
        let old = parse(&v1, &path).unwrap();
        assert_eq!(
            (old.header.schema, old.header.run_epoch),
            (DfxSchema::V2026_08, 0)
        );
        assert_eq!(old.workers, r.workers);
        assert_eq!(old.to_model().schema(), DfxSchema::V2026_08);
    }

    #[test]
    fn the_header_says_whether_the_times_are_predicted() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = sample();
        assert_eq!(
            r.to_model().metadata.timing,
            None,
            "host time: Simpler's layout"
        );
        r.header.predicted = true;
        let path = write_sample(dir.path(), &r);
        let back = read(&path).unwrap();
        assert_eq!(back, r);
        assert_eq!(
            back.to_model().metadata.timing.as_deref(),
            Some("predicted")
        );

        // The timing byte follows run_epoch (12 + 32 + 1 + 8).
        let bytes = std::fs::read(&path).unwrap();
        let at = 12 + 32 + 9;
        assert_eq!(bytes[at], 1);
        let mut bad = bytes.clone();
        bad[at] = 2;
        let e = parse(&bad, &path).unwrap_err();
        assert_eq!((e.section, e.field), ("header", "predicted"));

        // Version 2 has no timing byte: host time.
        let mut v2 = bytes.clone();
        v2.remove(at);
        v2[8..12].copy_from_slice(&2u32.to_le_bytes());
        let old = parse(&v2, &path).unwrap();
        assert!(!old.header.predicted);
        assert_eq!(old.workers, r.workers);
    }

    #[test]
    fn times_beyond_an_offset_go_wide_and_come_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = sample();
        // A receive before the dispatch, an end 5 s after the start, a phase ending
        // before it starts, an orchestrator submit at the end of the clock.
        r.workers[0].subtasks[0].receive_ns = 5;
        r.workers[0].subtasks[1].end_ns = r.workers[0].subtasks[1].dispatch_ns + 5_000_000_000;
        r.workers[2].phases[0].end_ns = 0;
        r.orchestrator[0].start_ns = u64::MAX - 1;
        r.orchestrator[0].end_ns = u64::MAX;
        let path = write_sample(dir.path(), &r);
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        let plain = 12 + HEADER + 8 + 52 + 8 + 3 * SUBTASK_BYTES + 3 * PHASE_BYTES + ORCH_BYTES;
        assert_eq!(len, plain + 3 * WIDE_BYTES);
        assert_eq!(read(&path).unwrap(), r);

        let bytes = std::fs::read(&path).unwrap();
        for n in 0..bytes.len() {
            assert!(parse(&bytes[..n], &path).is_err(), "prefix {n}");
        }
        // An entry dropped (count 3 → 2, its bytes cut): an offset marked wide has none.
        let start = 12 + HEADER + 8;
        let mut fewer = bytes.clone();
        fewer[start - 8..start].copy_from_slice(&2u64.to_le_bytes());
        fewer.drain(start + 2 * WIDE_BYTES..start + 3 * WIDE_BYTES);
        let e = parse(&fewer, &path).unwrap_err();
        assert!(e.to_string().contains("marked wide"), "{e}");
        // An entry that names a record whose offset is not wide.
        let mut unused = bytes.clone();
        let at = start + 5; // the first entry's index
        unused[at..at + 8].copy_from_slice(&1u64.to_le_bytes());
        let e = parse(&unused, &path).unwrap_err();
        assert!(e.to_string().contains("wide"), "{e}");
    }

    #[test]
    fn a_lying_iterator_leaves_no_file() {
        #[derive(Clone)]
        struct Liar(usize);
        impl Iterator for Liar {
            type Item = Orch;
            fn next(&mut self) -> Option<Orch> {
                (self.0 > 0).then(|| {
                    self.0 -= 1;
                    Orch::default()
                })
            }
        }
        impl ExactSizeIterator for Liar {
            fn len(&self) -> usize {
                self.0 + 1
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let r = sample();
        let e = write(
            &path,
            &r.header,
            std::iter::empty::<(std::iter::Empty<Subtask>, std::iter::Empty<Phase>)>(),
            Liar(2),
        );
        assert!(e.is_err());
        assert!(!path.exists());
    }
}
