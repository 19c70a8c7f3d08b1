//! The swimlane join: raw counter rows to timed tasks and phases.
//!
//! Every viewer that uses timing consumes the records the way Simpler's
//! canonical reader (`read_perf_data`) does, implemented once here:
//!
//! 1. the join key is `(core_id, reg_task_id)`: each `aicpu_tasks` row
//!    looks up its `aicore_tasks` row (the last one wins on a repeated key);
//!    AICPU rows without a match are dropped and counted in a problem;
//! 2. at level 1 with no AICPU rows, every AICore row is a task with no
//!    dispatch or finish time;
//! 3. the time base is the smallest *positive* value among `start −
//!    receive_to_start` and `end` of the AICore rows, `dispatch` and
//!    `finish` of the AICPU rows, and `start` / `end` of every scheduler and
//!    orchestrator record; a zero counter means "absent" and stays 0;
//! 4. tasks are sorted by task id, stably (SPMD rows keep their order).
//!
//! Times here are integer **nanoseconds** since the base (`(c − base) ·
//! 10⁹ / clock_freq_hz`, truncated), not Simpler's float microseconds: every
//! interval is then exact, so slices that touch never overlap by a rounding
//! error, and the trace writer prints µs with three decimals.
//!
//! Host-orchestrated files (host_build_graph) put host records in host
//! nanoseconds since `host_orchestration_origin_ns`; without a clock
//! alignment, device time is laid out after the last host record (Simpler's
//! "causal composite" fallback). The calibrated alignment from clock anchors
//! is not implemented; such files are shown in the composite layout.

use std::path::Path;

use crate::error::ToolError;
use pto_base::idmap::{self, IdMap};
use pto_dfx::core_type::CoreType;
use pto_dfx::error::Problem;
use pto_dfx::swimlane::{PopCounts, SchedPhaseKind, SwimlaneFile, SwimlaneLevel};
use pto_dfx::task_id::TaskId;

/// Nanoseconds since the time base.
pub type Ns = u64;

/// One executed (sub)task: one AICore row joined with its AICPU row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerfTask {
    /// The task id (the AICore row's token).
    pub task_id: TaskId,
    /// The logical core it ran on.
    pub core_id: u32,
    /// The core's type (`metadata.core_types`, default AIV).
    pub core_type: CoreType,
    /// The per-core dispatch token.
    pub reg_task_id: u32,
    /// Kernel start.
    pub start: Ns,
    /// Kernel end.
    pub end: Ns,
    /// When the core received the task (`start − receive_to_start`).
    pub receive: Ns,
    /// AICPU dispatch; `None` at level 1.
    pub dispatch: Option<Ns>,
    /// AICPU finish; `None` at level 1 or when not recorded.
    pub finish: Option<Ns>,
}

impl PerfTask {
    /// Kernel time: `end − start`.
    pub fn exec(&self) -> Ns {
        self.end.saturating_sub(self.start)
    }
}

/// One scheduler phase record, timed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseSpan {
    /// The phase.
    pub kind: SchedPhaseKind,
    /// Start.
    pub start: Ns,
    /// End.
    pub end: Ns,
    /// `loop_iter`.
    pub loop_iter: u32,
    /// `tasks_processed`.
    pub tasks_processed: u32,
    /// `pop_hit` / `pop_miss` (dispatch).
    pub pop: Option<PopCounts>,
    /// `task_id` (dummy_task, predicated_skip, graph_prepare).
    pub task_id: Option<TaskId>,
    /// Ready-queue depths `[aic, aiv, mix]` at the start.
    pub shared_at_start: Option<[i16; 3]>,
    /// Ready-queue depths `[aic, aiv, mix]` at the end.
    pub shared_at_end: Option<[i16; 3]>,
}

/// One orchestrator submit (or `alloc_tensors`) envelope, timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrchSpan {
    /// `submit_idx`.
    pub submit_idx: u32,
    /// The submitted task.
    pub task_id: TaskId,
    /// Start.
    pub start: Ns,
    /// End.
    pub end: Ns,
}

/// One host → device upload (host-orchestrated runs), timed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UploadSpan {
    /// `graph_upload`, `sm_h2d` or `arena_h2d`.
    pub phase: String,
    /// Start.
    pub start: Ns,
    /// End.
    pub end: Ns,
    /// Bytes uploaded.
    pub bytes: u64,
}

/// A swimlane file, joined and timed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// The file's level.
    pub level: SwimlaneLevel,
    /// Whether the orchestrator ran on the host.
    pub host_mode: bool,
    /// Core types by core id.
    pub core_types: Vec<CoreType>,
    /// Scheduler thread by core id (−1 unassigned); empty below level 3.
    pub core_to_thread: Vec<i32>,
    /// Tasks sorted by task id (stable).
    pub tasks: Vec<PerfTask>,
    /// Scheduler phases per scheduler thread.
    pub sched: Vec<Vec<PhaseSpan>>,
    /// Orchestrator records per orchestrator thread (one lane in host mode).
    pub orch: Vec<Vec<OrchSpan>>,
    /// Host uploads (host mode).
    pub uploads: Vec<UploadSpan>,
    /// What the join stepped over (unmatched rows).
    pub problems: Vec<Problem>,
}

impl Timeline {
    /// Whether the tasks carry AICPU dispatch/finish times (level ≥ 2).
    pub fn has_aicpu_times(&self) -> bool {
        self.tasks.iter().any(|t| t.finish.is_some())
    }

    /// The core type of `core_id` (AIV when unknown, as Simpler defaults).
    pub fn core_type(&self, core_id: u32) -> CoreType {
        self.core_types
            .get(core_id as usize)
            .copied()
            .unwrap_or(CoreType::Aiv)
    }
}

/// Longest span a record may have from the run's first timestamp: a simulated run lasts
/// seconds to hours; an end a day or more later (`end_cycles = 2^64-1`: "Exec%
/// 3689466877682078.0%") is a damaged record.
pub const MAX_RECORD_SPAN_NS: Ns = 24 * 3600 * 1_000_000_000;

/// Flags impossible task records (an end before the start, an end more than
/// [`MAX_RECORD_SPAN_NS`] after the run's first timestamp) as problems naming the task and
/// core, and shows them as zero-length bars ending at their start, so no total or
/// percentage is computed from them.
fn check_task_spans(tasks: &mut [PerfTask], problems: &mut Vec<Problem>) {
    for t in tasks.iter_mut() {
        let key = || format!("task {} (core {})", t.task_id, t.core_id);
        let what = if t.end < t.start {
            Some("its AICore end is before its start")
        } else if t.end > MAX_RECORD_SPAN_NS {
            Some("its AICore end is more than a day after the run's first record")
        } else {
            None
        };
        if let Some(what) = what {
            problems.push(Problem::new(
                key(),
                format!(
                    "{what} (start {} ns, end {} ns); the record is damaged: shown as a zero-length bar at its start",
                    t.start, t.end
                ),
            ));
            t.end = t.start;
        }
        if let (Some(d), Some(f)) = (t.dispatch, t.finish) {
            if f < d || f > MAX_RECORD_SPAN_NS {
                problems.push(Problem::new(
                    key(),
                    format!(
                        "its AICPU finish ({f} ns) is before its dispatch ({d} ns) or more than a day after the run's first record; the record is damaged: its finish is left out"
                    ),
                ));
                t.finish = None;
            }
        }
    }
}

/// Joins and times `file` (read from `path`, named in errors).
pub fn join(file: &SwimlaneFile, path: &Path) -> Result<Timeline, ToolError> {
    let md = &file.metadata;
    if md.clock_freq_hz == 0 {
        return Err(ToolError::invalid(
            path,
            "metadata.clock_freq_hz",
            "is 0; expected a positive frequency in Hz",
        ));
    }
    let host_mode = is_host_mode(file);
    if host_mode && file.orchestrator_phases.is_some() {
        return Err(ToolError::invalid(
            path,
            "aicpu_orchestrator_phases",
            "is present in a host-orchestrated file (mixed clock domains); the file cannot be laid out on one timeline",
        ));
    }
    let host = if host_mode {
        host_records(file, path)?
    } else {
        HostRecords::default()
    };
    let clock = CycleClock {
        base: time_base(file),
        freq: md.clock_freq_hz,
        device_offset: host.device_offset,
    };

    let mut problems = Vec::new();
    let mut tasks = task_rows(file, &clock, &mut problems);
    check_task_spans(&mut tasks, &mut problems);
    tasks.sort_by_key(|t| t.task_id);
    let orch = if host_mode {
        vec![host.submits]
    } else {
        device_orchestrator_spans(file, &clock)
    };
    Ok(Timeline {
        level: file.level,
        host_mode,
        core_types: md.core_types.clone(),
        core_to_thread: md.core_to_thread.clone(),
        tasks,
        sched: scheduler_spans(file, &clock),
        orch,
        uploads: host.uploads,
        problems,
    })
}

/// Whether the orchestrator ran on the host (the metadata says so, or host submit records
/// are present).
fn is_host_mode(file: &SwimlaneFile) -> bool {
    file.metadata
        .host
        .as_ref()
        .is_some_and(|h| h.orchestrator_source == "host" || h.host_capture.is_some())
        || file
            .host_orchestrator_phases
            .as_ref()
            .is_some_and(|v| !v.is_empty())
}

/// A host-orchestrated file's records, in ns since the host origin.
#[derive(Default)]
struct HostRecords {
    /// The submits (one orchestrator lane).
    submits: Vec<OrchSpan>,
    uploads: Vec<UploadSpan>,
    /// The composite layout's device offset (the last host record's end), where the
    /// device's records start.
    device_offset: Ns,
}

/// The host records of a host-orchestrated file ([`HostRecords`]); a record before the
/// origin or backwards is an error naming it.
fn host_records(file: &SwimlaneFile, path: &Path) -> Result<HostRecords, ToolError> {
    let submits = file.host_orchestrator_phases.as_deref().unwrap_or(&[]);
    let ups = file.host_device_uploads.as_deref().unwrap_or(&[]);
    let origin = file
        .metadata
        .host
        .as_ref()
        .map(|h| h.host_orchestration_origin_ns)
        .filter(|&o| o > 0)
        .or_else(|| {
            submits
                .iter()
                .map(|s| s.start_host_ns)
                .chain(ups.iter().map(|u| u.start_host_ns))
                .min()
        })
        .unwrap_or(0);
    let check = |key: String, start: u64, end: u64| -> Result<(Ns, Ns), ToolError> {
        if start < origin || end < start {
            return Err(ToolError::invalid(
                path,
                &key,
                format!("spans {start}..{end} ns, before the origin {origin} ns or backwards"),
            ));
        }
        Ok((start - origin, end - origin))
    };
    let mut device_offset: Ns = 0;
    let mut lane = Vec::with_capacity(submits.len());
    for (i, s) in submits.iter().enumerate() {
        let (start, end) = check(
            format!("host_orchestrator_phases[0][{i}]"),
            s.start_host_ns,
            s.end_host_ns,
        )?;
        lane.push(OrchSpan {
            submit_idx: s.submit_idx,
            task_id: s.task_id,
            start,
            end,
        });
        device_offset = device_offset.max(end);
    }
    let mut uploads = Vec::new();
    for (i, u) in ups.iter().enumerate() {
        let (start, end) = check(
            format!("host_device_uploads[{i}]"),
            u.start_host_ns,
            u.end_host_ns,
        )?;
        uploads.push(UploadSpan {
            phase: u.phase.clone(),
            start,
            end,
            bytes: u.detail,
        });
        device_offset = device_offset.max(end);
    }
    Ok(HostRecords {
        submits: lane,
        uploads,
        device_offset,
    })
}

/// The time base: the smallest nonzero cycle count of any device record (0 without one).
fn time_base(file: &SwimlaneFile) -> u64 {
    let mut base = u64::MAX;
    let mut note = |c: u64| {
        if c > 0 && c < base {
            base = c;
        }
    };
    for r in &file.aicore_tasks {
        note(
            r.start_cycles
                .saturating_sub(u64::from(r.receive_to_start_cycles)),
        );
        note(r.end_cycles);
    }
    for r in &file.aicpu_tasks {
        note(r.dispatch_cycles);
        note(r.finish_cycles);
    }
    for p in file.scheduler_phases.iter().flatten().flatten() {
        note(p.start_cycles);
        note(p.end_cycles);
    }
    for o in file.orchestrator_phases.iter().flatten().flatten() {
        note(o.start_cycles);
        note(o.end_cycles);
    }
    if base == u64::MAX {
        0
    } else {
        base
    }
}

/// Device cycles to timeline ns.
struct CycleClock {
    base: u64,
    freq: u64,
    device_offset: Ns,
}

impl CycleClock {
    /// `c` cycles as ns since the base, after the device offset; 0 (no record) stays 0.
    fn ns(&self, c: u64) -> Ns {
        if c == 0 {
            return 0;
        }
        pto_dfx::cycles_ns(c.saturating_sub(self.base), self.freq)
            .saturating_add(self.device_offset)
    }
}

/// One row per subtask: the AICore rows alone at level 1 without AICPU rows, else each
/// AICPU row joined with its AICore row by `(core_id, reg_task_id)` (unmatched AICPU rows
/// dropped, with a problem).
fn task_rows(
    file: &SwimlaneFile,
    clock: &CycleClock,
    problems: &mut Vec<Problem>,
) -> Vec<PerfTask> {
    let core_type_of = |core: u32| {
        file.metadata
            .core_types
            .get(core as usize)
            .copied()
            .unwrap_or(CoreType::Aiv)
    };
    let mut tasks = Vec::with_capacity(file.aicpu_tasks.len().max(file.aicore_tasks.len()));
    if file.aicpu_tasks.is_empty() && file.level == SwimlaneLevel::AicoreTiming {
        for r in &file.aicore_tasks {
            let start = clock.ns(r.start_cycles);
            tasks.push(PerfTask {
                task_id: r.task_token,
                core_id: r.core_id,
                core_type: core_type_of(r.core_id),
                reg_task_id: r.reg_task_id,
                start,
                end: clock.ns(r.end_cycles),
                receive: clock.ns(r
                    .start_cycles
                    .saturating_sub(u64::from(r.receive_to_start_cycles))),
                dispatch: None,
                finish: None,
            });
        }
        return tasks;
    }
    // Rows written in one order (ours, and Simpler's per-core sections) with keys that
    // only grow are joined row by row: each key names its one row, the one at the same
    // index. Any other file is joined through a map (the last row of a key wins).
    let aicore = &file.aicore_tasks;
    let aligned = aicore.len() == file.aicpu_tasks.len()
        && aicore
            .windows(2)
            .all(|w| (w[0].core_id, w[0].reg_task_id) < (w[1].core_id, w[1].reg_task_id))
        && aicore
            .iter()
            .zip(&file.aicpu_tasks)
            .all(|(r, c)| (r.core_id, r.reg_task_id) == (c.core_id, c.reg_task_id));
    let lookup: IdMap<(u32, u32), usize> = if aligned {
        IdMap::default()
    } else {
        let mut lookup = idmap::map_with_capacity(aicore.len());
        lookup.extend(
            aicore
                .iter()
                .enumerate()
                .map(|(i, r)| ((r.core_id, r.reg_task_id), i)),
        );
        lookup
    };
    let mut unmatched = 0usize;
    for (k, c) in file.aicpu_tasks.iter().enumerate() {
        let found = if aligned {
            Some(k)
        } else {
            lookup.get(&(c.core_id, c.reg_task_id)).copied()
        };
        let Some(i) = found else {
            unmatched += 1;
            continue;
        };
        let r = &file.aicore_tasks[i];
        tasks.push(PerfTask {
            task_id: r.task_token,
            core_id: c.core_id,
            core_type: core_type_of(c.core_id),
            reg_task_id: c.reg_task_id,
            start: clock.ns(r.start_cycles),
            end: clock.ns(r.end_cycles),
            receive: clock.ns(r
                .start_cycles
                .saturating_sub(u64::from(r.receive_to_start_cycles))),
            dispatch: Some(clock.ns(c.dispatch_cycles)),
            finish: (c.finish_cycles > 0).then(|| clock.ns(c.finish_cycles)),
        });
    }
    if unmatched > 0 {
        problems.push(Problem::new(
            "aicpu_tasks",
            format!("{unmatched} row(s) have no aicore_tasks row with the same (core_id, reg_task_id); dropped them"),
        ));
    }
    tasks
}

/// The scheduler phases per thread, timed.
fn scheduler_spans(file: &SwimlaneFile, clock: &CycleClock) -> Vec<Vec<PhaseSpan>> {
    file.scheduler_phases
        .iter()
        .flatten()
        .map(|lane| {
            lane.iter()
                .map(|p| PhaseSpan {
                    kind: p.kind.clone(),
                    start: clock.ns(p.start_cycles),
                    end: clock.ns(p.end_cycles),
                    loop_iter: p.loop_iter,
                    tasks_processed: p.tasks_processed,
                    pop: p.pop,
                    task_id: p.task_id,
                    shared_at_start: p.shared_at_start,
                    shared_at_end: p.shared_at_end,
                })
                .collect()
        })
        .collect()
}

/// The device orchestrator's submits per lane, timed.
fn device_orchestrator_spans(file: &SwimlaneFile, clock: &CycleClock) -> Vec<Vec<OrchSpan>> {
    file.orchestrator_phases
        .iter()
        .flatten()
        .map(|lane| {
            lane.iter()
                .map(|o| OrchSpan {
                    submit_idx: o.submit_idx,
                    task_id: o.task_id,
                    start: clock.ns(o.start_cycles),
                    end: clock.ns(o.end_cycles),
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pto_dfx::swimlane::parse;

    /// The reference's §2.5 example (a2a3, 50 MHz: 20 ns per cycle).
    pub(crate) const EXAMPLE: &str = r#"{
  "chip_swimlane_level": 4,
  "metadata": {"clock_freq_hz": 50000000, "num_cores": 2, "core_types": ["aic", "aiv"], "core_to_thread": [0, 0]},
  "aicore_tasks": [[0, 4294967296, 1, 1100, 1400, 10], [1, 0, 1, 1000, 1050, 8], [1, 4294967297, 2, 1450, 1500, 8]],
  "aicpu_tasks": [[0, 1, 1080, 1420], [1, 1, 980, 1060], [1, 2, 1430, 1520], [1, 9, 1, 2]],
  "aicpu_scheduler_phases": [[
    {"kind": "dispatch", "start_cycles": 975, "end_cycles": 985, "loop_iter": 1, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 0, "shared_at_start": [0,1,0], "shared_at_end": [0,0,0]},
    {"kind": "complete", "start_cycles": 1055, "end_cycles": 1065, "loop_iter": 2, "tasks_processed": 1, "shared_at_start": [1,0,0], "shared_at_end": [1,0,0]}
  ]],
  "aicpu_orchestrator_phases": [[{"submit_idx": 0, "task_id": 0, "start_cycles": 900, "end_cycles": 920}]]
}"#;

    #[test]
    fn joins_on_core_and_token_and_times_in_ns() {
        let file = parse(EXAMPLE.as_bytes(), Path::new("x")).unwrap().value;
        let t = join(&file, Path::new("x")).unwrap();
        // The unmatched [1, 9, ...] row is dropped and counted; its cycles
        // 1 and 2 still set the base (they are positive).
        assert_eq!(t.problems.len(), 1);
        assert_eq!(t.tasks.len(), 3);
        let ids: Vec<String> = t.tasks.iter().map(|x| x.task_id.to_string()).collect();
        assert_eq!(ids, ["t0", "r1t0", "r1t1"]);
        // base = 1 cycle; t0 on core 1 starts at cycle 1000 → 999 · 20 ns.
        assert_eq!(t.tasks[0].start, 999 * 20);
        assert_eq!(t.tasks[0].receive, 991 * 20);
        assert_eq!(t.tasks[0].dispatch, Some(979 * 20));
        assert_eq!(t.tasks[0].core_type, CoreType::Aiv);
        assert_eq!(t.sched[0][1].kind, SchedPhaseKind::Complete);
        assert_eq!(t.orch[0][0].start, 899 * 20);
    }

    /// Rows in one order with growing keys are joined row by row; the same rows in another
    /// order, or with a key twice (the last AICore row of a key wins), through the map: the
    /// same tasks either way.
    #[test]
    fn aligned_rows_join_as_the_map_joins_them() {
        let mut file = parse(EXAMPLE.as_bytes(), Path::new("x")).unwrap().value;
        file.aicpu_tasks.truncate(3);
        let aligned = join(&file, Path::new("x")).unwrap();
        assert!(aligned.problems.is_empty(), "{:?}", aligned.problems);
        file.aicpu_tasks.reverse();
        let mapped = join(&file, Path::new("x")).unwrap();
        let spans = |t: &Timeline| -> Vec<(TaskId, u32, Ns, Ns, Option<Ns>)> {
            let mut v: Vec<_> = t
                .tasks
                .iter()
                .map(|x| (x.task_id, x.core_id, x.start, x.end, x.dispatch))
                .collect();
            v.sort();
            v
        };
        assert_eq!(spans(&aligned), spans(&mapped));
        // A key twice: the map keeps the last AICore row of it, and so must the join.
        file.aicpu_tasks.reverse();
        file.aicore_tasks[2].reg_task_id = 1;
        file.aicpu_tasks[2].reg_task_id = 1;
        let twice = join(&file, Path::new("x")).unwrap();
        let last = file.aicore_tasks[2].task_token;
        let on_core_1: Vec<TaskId> = twice
            .tasks
            .iter()
            .filter(|x| x.core_id == 1)
            .map(|x| x.task_id)
            .collect();
        assert_eq!(on_core_1, [last, last]);
    }

    /// `end < start` and `end_cycles = 2^64-1` were accepted silently ("Exec%
    /// 3689466877682078.0%"): both are problems naming the task, shown zero-length.
    #[test]
    fn impossible_spans_are_problems_not_totals() {
        let text = EXAMPLE
            .replace(
                "[0, 4294967296, 1, 1100, 1400, 10]",
                "[0, 4294967296, 1, 1100, 18446744073709551615, 10]",
            )
            .replace("[1, 0, 1, 1000, 1050, 8]", "[1, 0, 1, 1000, 900, 8]");
        let file = parse(text.as_bytes(), Path::new("x")).unwrap().value;
        let t = join(&file, Path::new("x")).unwrap();
        let texts: Vec<String> = t
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.key, p.message))
            .collect();
        assert!(
            texts
                .iter()
                .any(|p| p.starts_with("task t0 (core 1): its AICore end is before its start")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|p| p.starts_with("task r1t0 (core 0): its AICore end is more than a day after the run's first record")),
            "{texts:?}"
        );
        assert!(t
            .tasks
            .iter()
            .all(|x| x.end >= x.start && x.end <= MAX_RECORD_SPAN_NS));
    }

    #[test]
    fn level_one_uses_aicore_rows_only() {
        let text = EXAMPLE
            .replace("\"chip_swimlane_level\": 4", "\"chip_swimlane_level\": 1")
            .replace(
                "[[0, 1, 1080, 1420], [1, 1, 980, 1060], [1, 2, 1430, 1520], [1, 9, 1, 2]]",
                "[]",
            );
        let file = parse(text.as_bytes(), Path::new("x")).unwrap().value;
        let t = join(&file, Path::new("x")).unwrap();
        assert_eq!(t.tasks.len(), 3);
        assert!(t.tasks.iter().all(|x| x.dispatch.is_none()));
        assert!(!t.has_aicpu_times());
    }
}
