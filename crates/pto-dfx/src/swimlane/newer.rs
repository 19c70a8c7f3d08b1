//! The 2026-09 sections of `chip_swimlane_records.json`: generation
//! detection, `scheduler_tasks`, `scheduler_records` and the per-row
//! `run_epoch`.
//!
//! Key and column orders follow Simpler's schema document; the whitespace
//! inside the two new sections (whose newest writer could not be retrieved)
//! follows the file's existing style: rows and records one per line, `", "`
//! between keys, `[a,b,c]` for the ready-queue snapshots.

use serde_json::Value;

use super::{
    is_core_thread, parse_rows, parse_triple, AicpuTaskRow, PopCounts, Rows, SchedPhaseKind,
    SchedPhaseRecord, SwimlaneFile, SwimlaneLevel, MAX_SCHED_THREADS,
};
use crate::error::Problem;
use crate::json::{Issue, Node, Out};
use crate::schema::{self, DfxSchema};
use crate::task_id::TaskId;

/// Top-level keys only the 2026-09 generation writes.
const NEWER_ROOT_KEYS: [&str; 3] = [
    "scheduler_tasks",
    "scheduler_records",
    "aicpu_lifecycle_records",
];

/// The generation of a `chip_swimlane_records.json` from its content:
/// 2026-09 when it has `metadata.runtime`, `scheduler_tasks` or
/// `scheduler_records`, else 2026-08. Text that is not a JSON object is
/// 2026-08 (the reader then reports what is wrong with it).
pub fn detect(bytes: &[u8]) -> DfxSchema {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => detect_value(&v),
        Err(_) => DfxSchema::V2026_08,
    }
}

pub(super) fn detect_value(root: &Value) -> DfxSchema {
    let newer = root.pointer("/metadata/runtime").is_some()
        || NEWER_ROOT_KEYS[..2].iter().any(|k| root.get(*k).is_some());
    if newer {
        DfxSchema::V2026_09
    } else {
        DfxSchema::V2026_08
    }
}

/// Every top-level key of either generation.
pub(super) const ROOT_KEYS: [&str; 11] = [
    "chip_swimlane_level",
    "metadata",
    "aicore_tasks",
    "aicpu_tasks",
    "aicpu_scheduler_phases",
    "aicpu_orchestrator_phases",
    "host_orchestrator_phases",
    "host_device_uploads",
    "scheduler_tasks",
    "scheduler_records",
    "aicpu_lifecycle_records",
];

/// Every `metadata` key of either generation (`collection`,
/// `clock_alignment` and `host_timeline_origin_ns` are read past).
pub(super) const METADATA_KEYS: [&str; 20] = [
    "runtime",
    "collection",
    "clock_freq_hz",
    "num_cores",
    "core_types",
    "orchestrator_source",
    "orchestrator_clock_domain",
    "device_clock_domain",
    "host_timestamp_resolution_ns",
    "host_timestamp_quantization_ns",
    "host_orchestration_origin_ns",
    "timeline_relation",
    "host_capture",
    "host_clock_domain_id",
    "clock_anchors",
    "core_to_thread",
    "clock_alignment",
    "host_timeline_origin_ns",
    "schema_version",
    // Ours, in either generation: which time the records hold (`--timing predicted`).
    "timing",
];

/// The error for a 2026-08 section that a 2026-09 file holds next to its own
/// replacement (two sources of the same timing: which one is meant is unknown).
pub(super) fn check_no_conflict(root: &Node<'_, '_>) -> Result<(), Issue> {
    for (old, new) in [
        ("aicpu_tasks", "scheduler_tasks"),
        ("aicpu_scheduler_phases", "scheduler_records"),
    ] {
        if root.opt_field(new)?.is_some() {
            if let Some(node) = root.opt_field(old)? {
                return Err(node.invalid(schema::foreign_field(
                    old,
                    DfxSchema::V2026_08,
                    DfxSchema::V2026_09,
                )));
            }
        }
    }
    Ok(())
}

/// The platform name of a scheduler stream, from the counter frequency.
fn platform(file: &SwimlaneFile) -> &'static str {
    if file.metadata.clock_freq_hz == 1_000_000_000 {
        "a5"
    } else {
        "a2a3"
    }
}

/// `,\n  "scheduler_tasks": {...}` (level >= 2).
pub(super) fn render_scheduler_tasks<R: Rows>(out: &mut Out, file: &SwimlaneFile, rows: &R) {
    if file.level < SwimlaneLevel::AicpuTiming {
        return;
    }
    out.s(",\n  \"scheduler_tasks\": {\"producer\": \"aicpu\", \"records\": ");
    super::render_rows(out, rows.aicpu(), |out, x| {
        let r = rows.aicpu_row(x);
        out.s("[")
            .u(u64::from(r.core_id))
            .s(", ")
            .u(u64::from(r.reg_task_id))
            .s(", ")
            .u(r.dispatch_cycles)
            .s(", ")
            .u(r.finish_cycles)
            .s(", ")
            .u(r.run_epoch.unwrap_or(0))
            .s("]");
    });
    out.s("}");
}

/// `,\n  "scheduler_records": {"streams": [...]}`: one stream per non-empty
/// scheduler lane, `scheduler_id` = `worker_id` = the lane.
pub(super) fn render_scheduler_records<R: Rows>(out: &mut Out, file: &SwimlaneFile, rows: &R) {
    let Some(lanes) = rows.scheduler_lanes() else {
        return;
    };
    out.s(",\n  \"scheduler_records\": {\"streams\": [");
    let mut first = true;
    for (id, lane) in lanes.iter().enumerate().filter(|(_, l)| !l.is_empty()) {
        out.s(if first { "\n    " } else { ",\n    " });
        first = false;
        out.s("{\"platform\": ")
            .q(platform(file))
            .s(", \"producer\": \"aicpu\", \"scheduler_id\": ")
            .u(id as u64)
            .s(", \"worker_id\": ")
            .u(id as u64)
            .s(", \"core_type\": \"aicpu\", \"physical_core_id\": null, \"capture\": {\"committed\": ")
            .u(lane.len() as u64)
            .s(", \"dropped\": 0, \"truncated\": false}, \"records\": [");
        out.each(lane, "\n      ", ",\n      ", |out, x| {
            render_record(out, &rows.phase(x));
        });
        out.s("\n    ], \"metrics\": [");
        let mut any = false;
        for (i, x) in lane.iter().enumerate() {
            let r = rows.phase(x);
            if r.pop.is_none() && r.shared_at_start.is_none() && r.shared_at_end.is_none() {
                continue;
            }
            out.s(if any { ",\n      " } else { "\n      " });
            any = true;
            render_metric(out, i, &r);
        }
        out.s(if any { "\n    ]}" } else { "]}" });
    }
    out.s(if first { "]}" } else { "\n  ]}" });
}

fn render_record(out: &mut Out, r: &SchedPhaseRecord) {
    out.s("{\"start_cycles\": ")
        .u(r.start_cycles)
        .s(", \"end_cycles\": ")
        .u(r.end_cycles)
        .s(", \"run_epoch\": ")
        .u(r.run_epoch.unwrap_or(0))
        .s(", \"loop_iter\": ")
        .u(u64::from(r.loop_iter))
        .s(", \"kind\": ")
        .q(r.kind.as_str())
        .s(", \"tasks_processed\": ")
        .u(u64::from(r.tasks_processed))
        .s(", \"task_id\": ");
    match r.task_id {
        Some(id) => out.u(id.raw()),
        None => out.s("null"),
    };
    out.s("}");
}

fn render_metric(out: &mut Out, index: usize, r: &SchedPhaseRecord) {
    out.s("{\"record_index\": ").u(index as u64);
    if let Some(pop) = r.pop {
        out.s(", \"pop_hit\": ")
            .u(u64::from(pop.hit))
            .s(", \"pop_miss\": ")
            .u(u64::from(pop.miss));
    }
    if let Some(s) = &r.shared_at_start {
        out.s(", \"shared_at_start\": ").list(s, ",");
    }
    if let Some(s) = &r.shared_at_end {
        out.s(", \"shared_at_end\": ").list(s, ",");
    }
    out.s("}");
}

/// `scheduler_tasks.records` as `aicpu_tasks` rows (a 4-column row, as the
/// #2127 writer had, reads without an epoch).
pub(super) fn parse_scheduler_tasks(
    node: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
) -> Result<Vec<AicpuTaskRow>, Issue> {
    if let Some(p) = node.opt_field("producer")? {
        let producer = p.str()?;
        if producer != "aicpu" && producer != "aicore" {
            problems.push(Problem::new(
                p.key.to_string(),
                format!("is {producer:?}, a producer this reader does not know; read as \"aicpu\""),
            ));
        }
    }
    parse_rows(&node.field("records")?, problems, |row| {
        let cols = row.vec(|c| c.u64())?;
        if cols.len() != 5 && cols.len() != 4 {
            return Err(row.invalid(format!(
                "has {} columns; expected 5 (core_id, reg_task_id, dispatch_cycles, finish_cycles, run_epoch)",
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
        Ok(AicpuTaskRow {
            core_id: narrow(0)?,
            reg_task_id: narrow(1)?,
            dispatch_cycles: cols[2],
            finish_cycles: cols[3],
            run_epoch: cols.get(4).copied(),
        })
    })
}

/// `scheduler_records.streams` as scheduler lanes indexed by `scheduler_id`
/// (a damaged stream is skipped with a problem).
pub(super) fn parse_scheduler_records(
    node: &Node<'_, '_>,
    problems: &mut Vec<Problem>,
) -> Result<Vec<Vec<SchedPhaseRecord>>, Issue> {
    let streams = node.field("streams")?;
    let mut lanes: Vec<Vec<SchedPhaseRecord>> = Vec::new();
    for (i, v) in streams.array()?.iter().enumerate() {
        let stream = streams.item(i, v);
        match parse_stream(&stream) {
            Ok((id, records)) => {
                if lanes.len() <= id {
                    lanes.resize_with(id + 1, Vec::new);
                }
                lanes[id].extend(records);
            }
            Err(issue) => problems.push(issue.into_problem("skipped the stream")),
        }
    }
    Ok(lanes)
}

fn parse_stream(stream: &Node<'_, '_>) -> Result<(usize, Vec<SchedPhaseRecord>), Issue> {
    let id_node = stream.field("scheduler_id")?;
    let id = id_node.i32()?;
    if !is_core_thread(id) || id < 0 {
        return Err(id_node.invalid(format!("is {id}; expected 0..{MAX_SCHED_THREADS}")));
    }
    let records = stream.field("records")?;
    let mut out = Vec::new();
    for (i, v) in records.array()?.iter().enumerate() {
        let n = records.item(i, v);
        out.push(SchedPhaseRecord {
            kind: SchedPhaseKind::from_name(n.field("kind")?.str()?),
            start_cycles: n.field("start_cycles")?.u64()?,
            end_cycles: n.field("end_cycles")?.u64()?,
            loop_iter: n.field("loop_iter")?.u32()?,
            tasks_processed: n.field("tasks_processed")?.u32()?,
            pop: None,
            task_id: match n.opt_field("task_id")? {
                Some(t) if !t.value.is_null() => Some(TaskId(t.u64()?)),
                _ => None,
            },
            shared_at_start: None,
            shared_at_end: None,
            run_epoch: n.opt_field("run_epoch")?.map(|e| e.u64()).transpose()?,
        });
    }
    if let Some(metrics) = stream.opt_field("metrics")? {
        for (i, v) in metrics.array()?.iter().enumerate() {
            let m = metrics.item(i, v);
            let index_node = m.field("record_index")?;
            let index = index_node.u64()?;
            let r = usize::try_from(index)
                .ok()
                .and_then(|k| out.get_mut(k))
                .ok_or_else(|| {
                    index_node.invalid(format!("is {index}, past the stream's records"))
                })?;
            if m.opt_field("pop_hit")?.is_some() || m.opt_field("pop_miss")?.is_some() {
                r.pop = Some(PopCounts {
                    hit: m.field("pop_hit")?.u32()?,
                    miss: m.field("pop_miss")?.u32()?,
                });
            }
            r.shared_at_start = m
                .opt_field("shared_at_start")?
                .map(|s| parse_triple(&s))
                .transpose()?;
            r.shared_at_end = m
                .opt_field("shared_at_end")?
                .map(|s| parse_triple(&s))
                .transpose()?;
        }
    }
    Ok((id as usize, out))
}

impl SwimlaneFile {
    /// The generation the file follows: 2026-09 exactly when it has `metadata.runtime`.
    pub fn schema(&self) -> DfxSchema {
        if self.metadata.runtime.is_some() {
            DfxSchema::V2026_09
        } else {
            DfxSchema::V2026_08
        }
    }

    /// A row's `run_epoch` as `schema` writes it: its own (`v`), else `epoch`, in a 2026-09
    /// file; none in a 2026-08 one.
    pub(crate) fn stamped_epoch(schema: DfxSchema, epoch: u64, v: Option<u64>) -> Option<u64> {
        schema.is_newer().then(|| v.unwrap_or(epoch))
    }

    /// The file as `schema` writes it. 2026-09: `metadata.runtime`
    /// ([`schema::RUNTIME_TMR`] unless set) and `run_epoch` `epoch` on every
    /// row and phase record without one; 2026-08: neither.
    pub fn with_schema(mut self, schema: DfxSchema, epoch: u64) -> Self {
        let newer = schema.is_newer();
        let e = |v: Option<u64>| Self::stamped_epoch(schema, epoch, v);
        self.metadata.runtime = if newer {
            self.metadata
                .runtime
                .or_else(|| Some(schema::RUNTIME_TMR.to_string()))
        } else {
            None
        };
        if !newer {
            self.metadata.host_clock_domain_id = None;
        }
        for r in &mut self.aicore_tasks {
            r.run_epoch = e(r.run_epoch);
        }
        for r in &mut self.aicpu_tasks {
            r.run_epoch = e(r.run_epoch);
        }
        for r in self.scheduler_phases.iter_mut().flatten().flatten() {
            r.run_epoch = e(r.run_epoch);
        }
        for r in self.orchestrator_phases.iter_mut().flatten().flatten() {
            r.run_epoch = e(r.run_epoch);
        }
        self
    }
}
