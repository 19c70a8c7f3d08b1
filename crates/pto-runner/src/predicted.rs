//! `--timing predicted`: the whole-program schedule of the timing model and the substitution
//! of predicted times into the run's records before the DFX writers run.
//!
//! The runtime gives one [`PredictedRecord`] per subtask (cycles and per-pipe busy cycles
//! from the kernel's instruction trace, or why there is none) and the dependency log. Here
//! the task graph is scheduled on the platform's cores ([`pto_timing::graph`]) and every
//! swimlane record's core and times are replaced by the schedule's, in nanoseconds at the
//! model's core clock from the run's first start (the swimlane writer turns them into the
//! platform's counter ticks as usual). Scheduler-phase and orchestrator records measure the
//! host and are dropped. `predicted_timing.json` says what the files hold.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use pto_runtime::dfx::{PredictedRecord, SubtaskRecord};
use pto_runtime::{ChipConfig, CoreType, RunReport};
use pto_timing::graph::{self, CoreKind, Cores, Placed, Subtask, Task};
use pto_timing::{Model, Pipe, SubtaskTiming, N_PIPES};

use crate::error::RunnerError;

/// The file that says which timing the run's diagnostics hold.
pub const FILE_NAME: &str = "predicted_timing.json";

/// The per-subtask pipe busy intervals (written with the swimlane in predicted mode; the
/// swimlane converter draws them as each core's pipe tracks).
pub const PIPES_FILE_NAME: &str = pto_dfx::swimlane::PREDICTED_PIPES_FILE_NAME;

/// One modelled subtask's place in the schedule and its pipes' busy intervals.
#[derive(Clone, Debug, Default)]
pub struct SubtaskPipes {
    /// Raw task id.
    pub task: u64,
    /// The core the schedule placed it on.
    pub core: u32,
    /// Its start in the schedule (cycles from the run's first dispatch).
    pub start: u64,
    /// Its predicted cycles.
    pub cycles: u64,
    /// Busy intervals, in cycles from its start.
    pub spans: Vec<pto_timing::PipeSpan>,
}

/// What the model predicted for a run.
#[derive(Clone, Debug, Default)]
pub struct Prediction {
    /// Predicted makespan in core cycles.
    pub makespan_cycles: u64,
    /// The model's core clock in Hz.
    pub core_hz: f64,
    /// Per-pipe busy cycles summed over every modelled subtask.
    pub busy: [u64; N_PIPES],
    /// Subtasks with a prediction.
    pub modelled: usize,
    /// `(task, func_id, reason)` of each unmodelled subtask (counted as 0 cycles).
    pub unmodelled: Vec<(u64, i32, String)>,
    /// Per kernel (`func_id`): its modelled subtasks' cycles and pipe busy cycles.
    pub kernels: BTreeMap<i32, KernelCycles>,
    /// Every placed modelled subtask with its pipes' busy intervals (the intervals are
    /// moved out of the runtime's records).
    pub pipes: Vec<SubtaskPipes>,
}

/// The modelled subtasks of one kernel, summed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelCycles {
    /// Modelled subtasks.
    pub subtasks: u64,
    /// Their predicted cycles, summed.
    pub cycles: u64,
    /// The longest one's cycles.
    pub max_cycles: u64,
    /// Per-pipe busy cycles summed over them, in [`Pipe::ALL`] order.
    pub busy: [u64; N_PIPES],
}

impl KernelCycles {
    fn add(&mut self, t: &pto_timing::CoreTiming) {
        self.subtasks += 1;
        self.cycles += t.total;
        self.max_cycles = self.max_cycles.max(t.total);
        for (sum, b) in self.busy.iter_mut().zip(t.busy) {
            *sum += b;
        }
    }
}

/// Pipe name → cycles, in [`Pipe::ALL`] order (the JSON form of a busy array).
fn pipe_map(busy: &[u64; N_PIPES]) -> serde_json::Map<String, serde_json::Value> {
    Pipe::ALL
        .iter()
        .map(|pipe| (pipe.name().to_string(), busy[pipe.index()].into()))
        .collect()
}

impl Prediction {
    /// The makespan in nanoseconds.
    pub fn makespan_ns(&self) -> f64 {
        self.makespan_cycles as f64 * 1e9 / self.core_hz
    }
}

fn kind(t: CoreType) -> CoreKind {
    match t {
        CoreType::Aic => CoreKind::Aic,
        CoreType::Aiv => CoreKind::Aiv,
    }
}

/// Builds the graph from the predictions and the dependency log, schedules it and rewrites
/// `report`'s swimlane records with the schedule.
pub fn apply(report: &mut RunReport, chip: &ChipConfig) -> Prediction {
    let model = Model::shared(chip.platform.name());
    let topology = chip.platform.topology(report.n_workers);
    let mut p = Prediction {
        core_hz: model.arch.core_hz,
        ..Prediction::default()
    };
    // Tasks in submission order; subtasks grouped into blocks by the cluster they ran in.
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut tasks: Vec<Task> = Vec::new();
    if let Some(log) = &report.deps {
        for t in &log.tasks {
            index.insert(t.id.0, tasks.len());
            tasks.push(Task::default());
        }
        for e in log.edges.iter().filter(|e| e.wait) {
            if let (Some(&a), Some(&b)) = (index.get(&e.pred.0), index.get(&e.succ.0)) {
                tasks[b].preds.push(a);
            }
        }
    }
    let mut where_: HashMap<(u64, u32), (usize, usize, usize)> = HashMap::new();
    let mut blocks_of: HashMap<(usize, usize), usize> = HashMap::new();
    let mut records: Vec<&PredictedRecord> = report.dfx.predicted.iter().collect();
    records.sort_by_key(|r| (r.task, r.core));
    for r in records {
        let t = *index.entry(r.task).or_insert_with(|| {
            tasks.push(Task::default());
            tasks.len() - 1
        });
        let core = r.core as usize;
        let cycles = match &r.timing {
            SubtaskTiming::Modelled(c) => {
                p.modelled += 1;
                for (sum, b) in p.busy.iter_mut().zip(c.busy) {
                    *sum += b;
                }
                p.kernels.entry(r.func_id).or_default().add(c);
                c.total
            }
            SubtaskTiming::Unmodelled(why) => {
                p.unmodelled.push((r.task, r.func_id, why.clone()));
                0
            }
        };
        let b = *blocks_of
            .entry((t, topology.cluster_of(core)))
            .or_insert_with(|| {
                tasks[t].blocks.push(Vec::new());
                tasks[t].blocks.len() - 1
            });
        tasks[t].blocks[b].push(Subtask {
            kind: kind(topology.core_type(core)),
            cycles,
        });
        where_.insert((r.task, r.core), (t, b, tasks[t].blocks[b].len() - 1));
    }
    let schedule = graph::schedule(
        &tasks,
        Cores {
            clusters: topology.n_clusters,
        },
        model.arch.dispatch_cycles,
    );
    p.makespan_cycles = schedule.makespan;
    let placed = |task: u64, core: u32| -> Option<Placed> {
        let &(t, b, s) = where_.get(&(task, core))?;
        schedule.placed.get(t)?.get(b)?.get(s).copied()
    };
    for r in &mut report.dfx.predicted {
        if let (SubtaskTiming::Modelled(c), Some(pl)) = (&mut r.timing, placed(r.task, r.core)) {
            p.pipes.push(SubtaskPipes {
                task: r.task,
                core: pl.core as u32,
                start: pl.start,
                cycles: c.total,
                spans: std::mem::take(&mut c.spans),
            });
        }
    }
    p.pipes.sort_by_key(|s| (s.core, s.start, s.task));
    rewrite_swimlane(report, &model, &placed);
    rewrite_cores(report, &placed);
    p
}

/// Moves the PMU samples and the predictions to the cores the schedule placed them on, so
/// `pmu.csv` and the swimlane name the same core for a subtask.
fn rewrite_cores(report: &mut RunReport, placed: &impl Fn(u64, u32) -> Option<Placed>) {
    let core = |task: u64, core: u32| placed(task, core).map_or(core, |pl| pl.core as u32);
    for w in &mut report.dfx.workers {
        for r in &mut w.pmu {
            r.core = core(r.task, r.core);
        }
    }
    for r in &mut report.dfx.predicted {
        r.core = core(r.task, r.core);
    }
}

/// Replaces each swimlane record's core and times with its placement in the schedule.
fn rewrite_swimlane(
    report: &mut RunReport,
    model: &Model,
    placed: &impl Fn(u64, u32) -> Option<Placed>,
) {
    let workers = &mut report.dfx.workers;
    let base = workers
        .iter()
        .flat_map(|w| w.subtasks.iter().map(|s| s.dispatch_ns))
        .min()
        .unwrap_or(0);
    let ns = |cycles: u64| base + model.arch.cycles_to_ns(cycles).round() as u64;
    let mut all: Vec<SubtaskRecord> = Vec::new();
    for w in workers.iter_mut() {
        for mut s in w.subtasks.drain(..) {
            if let Some(pl) = placed(s.task, s.core) {
                s.core = pl.core as u32;
                s.dispatch_ns = ns(pl.dispatch);
                s.receive_ns = ns(pl.start);
                s.start_ns = ns(pl.start);
                s.end_ns = ns(pl.end);
                s.finish_ns = ns(pl.end);
            }
            all.push(s);
        }
        w.phases.clear();
    }
    all.sort_by_key(|s| (s.core, s.start_ns, s.task));
    if let Some(first) = workers.first_mut() {
        first.subtasks = all;
    }
    report.dfx.orchestrator.clear();
}

/// Writes [`FILE_NAME`] into `dir`: the timing mode, clock, makespan, per-pipe busy cycles
/// and every unmodelled subtask with its reason.
pub fn write_summary(
    dir: &Path,
    p: &Prediction,
    chip: &ChipConfig,
) -> Result<std::path::PathBuf, RunnerError> {
    let path = dir.join(FILE_NAME);
    pto_dfx::atomic_write(&path, summary_text(p, chip).as_bytes())?;
    Ok(path)
}

/// [`FILE_NAME`]'s content (see [`write_summary`]).
pub fn summary_text(p: &Prediction, chip: &ChipConfig) -> String {
    let kernels: Vec<serde_json::Value> = p
        .kernels
        .iter()
        .map(|(func_id, k)| {
            serde_json::json!({"func_id": func_id, "subtasks": k.subtasks, "cycles": k.cycles,
                "max_cycles": k.max_cycles, "busy_cycles_by_pipe": pipe_map(&k.busy)})
        })
        .collect();
    let unmodelled: Vec<serde_json::Value> = p
        .unmodelled
        .iter()
        .map(|(task, func_id, why)| {
            serde_json::json!({"task": pto_dfx::task_id::TaskId(*task).to_string(), "func_id": func_id, "reason": why})
        })
        .collect();
    let doc = serde_json::json!({
        "timing": "predicted",
        "platform": chip.platform.name(),
        "core_clock_hz": p.core_hz,
        "swimlane_clock_freq_hz": chip.platform.clock_freq_hz(),
        "makespan_cycles": p.makespan_cycles,
        "makespan_us": p.makespan_ns() / 1e3,
        "modelled_subtasks": p.modelled,
        "busy_cycles_by_pipe": pipe_map(&p.busy),
        "kernels": kernels,
        "unmodelled_subtasks": unmodelled,
        "note": "chip_swimlane_records.json task times are the model's schedule (docs/TIMING.md); unmodelled subtasks count 0 cycles",
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

/// Writes [`PIPES_FILE_NAME`] into `dir`: per placed subtask, its task, core, start and
/// cycles in the schedule and its pipes' busy intervals as `[pipe, start, end]` in cycles from
/// its start (the layout `pto swimlane-converter` reads; docs/TIMING.md).
pub fn write_pipes(dir: &Path, p: &Prediction) -> Result<std::path::PathBuf, RunnerError> {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(64 + p.pipes.len() * 96);
    let _ = write!(
        text,
        "{{\"timing\": \"predicted\", \"core_clock_hz\": {}, \"subtasks\": [",
        p.core_hz
    );
    for (i, s) in p.pipes.iter().enumerate() {
        text.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(
            text,
            "{{\"task\": {}, \"core\": {}, \"start_cycle\": {}, \"cycles\": {}, \"spans\": [",
            s.task, s.core, s.start, s.cycles
        );
        for (j, sp) in s.spans.iter().enumerate() {
            let _ = write!(
                text,
                "{}[\"{}\", {}, {}]",
                if j == 0 { "" } else { ", " },
                sp.pipe.name(),
                sp.start,
                sp.end
            );
        }
        text.push_str("]}");
    }
    text.push_str("\n]}\n");
    let path = dir.join(PIPES_FILE_NAME);
    pto_dfx::atomic_write(&path, text.as_bytes())
        .map_err(|e| RunnerError::config(e.to_string()))?;
    Ok(path)
}

/// What [`FILE_NAME`] says about a run, read back (`pto bench --timing predicted`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PredictedSummary {
    /// Predicted makespan in core cycles.
    pub makespan_cycles: u64,
    /// The model's core clock in Hz.
    pub core_clock_hz: f64,
    /// Subtasks with a prediction.
    pub modelled: u64,
    /// Subtasks without one (counted as 0 cycles).
    pub unmodelled: u64,
}

impl PredictedSummary {
    /// Reads `path` (a [`FILE_NAME`] written by [`write_summary`]).
    pub fn read(path: &Path) -> Result<PredictedSummary, RunnerError> {
        let bad = |what: String| RunnerError::config(format!("{}: {what}", path.display()));
        let text = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
        let doc: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
        let field = |key: &str| {
            doc.get(key)
                .ok_or_else(|| bad(format!("missing key `{key}`")))
        };
        let number = |key: &str| {
            field(key)?
                .as_u64()
                .ok_or_else(|| bad(format!("`{key}` is not a count")))
        };
        Ok(PredictedSummary {
            makespan_cycles: number("makespan_cycles")?,
            core_clock_hz: field("core_clock_hz")?
                .as_f64()
                .ok_or_else(|| bad("`core_clock_hz` is not a number".to_string()))?,
            modelled: number("modelled_subtasks")?,
            unmodelled: field("unmodelled_subtasks")?
                .as_array()
                .map_or(0, |a| a.len() as u64),
        })
    }

    /// The makespan in microseconds at the model's clock.
    pub fn makespan_us(&self) -> f64 {
        if self.core_clock_hz > 0.0 {
            self.makespan_cycles as f64 * 1e6 / self.core_clock_hz
        } else {
            0.0
        }
    }

    /// The summary as JSON (the keys of [`FILE_NAME`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "timing": "predicted",
            "makespan_cycles": self.makespan_cycles,
            "makespan_us": self.makespan_us(),
            "core_clock_hz": self.core_clock_hz,
            "modelled_subtasks": self.modelled,
            "unmodelled_subtasks": self.unmodelled,
        })
    }
}

impl std::fmt::Display for PredictedSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "predicted device time: {} cycles = {:.3} us at {:.2} GHz ({} subtasks modelled, {} not)",
            self.makespan_cycles,
            self.makespan_us(),
            self.core_clock_hz / 1e9,
            self.modelled,
            self.unmodelled
        )
    }
}
