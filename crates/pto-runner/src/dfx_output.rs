//! Post-run collection: turn the runtime's diagnostic records into Simpler's files under
//! `<build>/dfx_outputs/`, synthesise the name map, and compose the viewer hints.
//!
//! The runtime records host monotonic nanoseconds; swimlane files carry the platform's
//! counter ticks (`clock_freq_hz`), converted by `pto_dfx::compact::swimlane`.
//!
//! With `dfx_format = compact` the swimlane records and the dep_gen log are written as
//! `chip_swimlane_records.bin` / `deps.bin` (`pto_dfx::compact`) straight from the report's
//! records; the JSON mode maps the same records into the same types and streams the JSON
//! from them (`pto_dfx::compact::{swimlane,deps}::write_json`: the rows and the layout of
//! the model `pto dfx-export` renders from the compact files, without the model), so the
//! two agree byte for byte.
//!
//! `pmu.csv` has Simpler's counter columns of the resolved event type for the platform
//! (a2a3 for `a2a3sim`, a5 for `a5sim`): `pmu_total_cycles` is the kernel's time, and for
//! event type 2 (PIPE_UTILIZATION) the vector / cube busy-cycles column of the core's type
//! is that time too; every other counter is 0 (the simulator has no pipes to count). On
//! `cpu` the columns are the host's real counters (perf_event_open), not Ascend events.
//! The name map's `orchestrator_name` is the orchestration's name.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use pto_dfx::args_dump::{ArgEntry, ArgKind, ArgRole, ArgsDumpManifestOf, DumpStage, ScalarValue};
use pto_dfx::compact::deps as cdeps;
use pto_dfx::compact::swimlane as cswim;
use pto_dfx::deps::{EdgeSource, Overlap as DepsOverlap};
use pto_dfx::pmu::{Column, PmuRow, RowShape};
use pto_dfx::scope_stats::{ScopePhase, ScopeRecord, ScopeStatsFile, ScopeStatsMeta};
use pto_dfx::{CoreType as DfxCore, TaskId as DfxTaskId};
use pto_runtime::deps::{
    ArgRecord as RtArg, DepLog, EdgeRecord, EdgeSource as RtSource, Region as RtRegion,
    TensorView as RtView,
};
use pto_runtime::dfx::{
    DumpResult, DumpRole, DumpStage as RtStage, OrchRecord, SchedPhaseKind as RtPhaseKind,
    SchedPhaseRecord as RtPhase, SubtaskRecord,
};
use pto_runtime::ffi::TensorArgType;
use pto_runtime::tensor_map::Overlap as RtOverlap;
use pto_runtime::{ChipConfig, CoreType, RunReport};
use pto_timing::{CoreTiming, SubtaskTiming};

use crate::config::{DfxFormat, DfxOptions};
use crate::dfx_switches::DfxSwitch;
use crate::error::RunnerError;
use pto_dfx::DfxSchema;

/// The directory of a build's diagnostics.
pub fn dfx_dir(build: &Path) -> PathBuf {
    build.join("dfx_outputs")
}

/// What post-run collection wrote and what to tell the user.
#[derive(Clone, Debug, Default)]
pub struct DfxSummary {
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Ready-to-paste commands for the viewers.
    pub hints: Vec<String>,
    /// Problems that did not stop the run (counted drops, capture failures).
    pub warnings: Vec<String>,
}

/// `text` quoted for a POSIX shell when it holds anything beyond `[A-Za-z0-9_./:=@%+-]`,
/// so the printed commands can be pasted as they are.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+-".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// What writing one artifact produced, merged into the [`DfxSummary`] in a fixed order.
#[derive(Default)]
struct Part {
    files: Vec<PathBuf>,
    hints: Vec<String>,
    warnings: Vec<String>,
}

type PartResult = Result<Part, RunnerError>;

/// Runs `f` on a thread of `scope` (or here, when no thread can be started), [at
/// work](pto_base::thread::AtWork) while it runs.
fn run_beside<'scope, 'env, F>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    f: F,
) -> Result<std::thread::ScopedJoinHandle<'scope, PartResult>, PartResult>
where
    F: FnOnce() -> PartResult + Send + 'scope,
{
    // The closure is needed again if the thread cannot start; share it through an Option.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(f)));
    let theirs = std::sync::Arc::clone(&slot);
    let take = |m: &std::sync::Mutex<Option<F>>| m.lock().ok().and_then(|mut g| g.take());
    std::thread::Builder::new()
        .name("pto-dfx-write".to_string())
        .spawn_scoped(scope, move || {
            let _at_work = pto_base::thread::AtWork::begin();
            match take(&theirs) {
                Some(f) => f(),
                None => Ok(Part::default()),
            }
        })
        .map_err(|_| match take(&slot) {
            Some(f) => f(),
            None => Ok(Part::default()),
        })
}

fn join_part(h: Result<std::thread::ScopedJoinHandle<'_, PartResult>, PartResult>) -> PartResult {
    match h {
        Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
        Err(done) => done,
    }
}

/// Which generation of DFX files a run of the build configured by `kernel_config` writes:
/// the one the caller asked for (`requested`: `--dfx-schema`, `PTO_DFX_SCHEMA`), else the
/// generation its sources are written against (`pto_toolchain::detect_generation`, the
/// detection the compile used; a build that cannot be read as one writes 2026-08).
pub fn schema_for(
    kernel_config: &pto_build_output::KernelConfig,
    requested: Option<DfxSchema>,
) -> DfxSchema {
    if let Some(schema) = requested {
        return schema;
    }
    let mut sources: Vec<&Path> = vec![kernel_config.orchestration.source.as_path()];
    sources.extend(kernel_config.kernels.iter().map(|k| k.source.as_path()));
    match pto_toolchain::detect_generation(&sources) {
        Ok(pto_toolchain::Generation::Simpler2026_09) => DfxSchema::V2026_09,
        _ => DfxSchema::V2026_08,
    }
}

static RUN_EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The `run_epoch` of the next run of this process: 1 for the first run, then one more
/// per run (2026-09 files stamp every record with it; 2026-08 files have none).
pub fn next_run_epoch() -> u64 {
    RUN_EPOCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
}

/// The generation and run of the files [`write_artifacts`] writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStamp {
    /// The generation.
    pub schema: DfxSchema,
    /// The run's [`next_run_epoch`].
    pub run_epoch: u64,
}

/// Writes every enabled artifact of `report` into `out` (see the module docs).
///
/// The swimlane records and the dep_gen log, the two large files, are written on threads
/// of their own while this thread writes the others, as Simpler's JSON or, with
/// [`DfxFormat::Compact`], as the compact files (`pto dfx-export` turns those into the
/// same JSON later); the summary lists files, hints and warnings in the same order
/// whatever finishes first.
#[allow(clippy::too_many_arguments)]
pub fn write_artifacts(
    out: &Path,
    options: &DfxOptions,
    format: DfxFormat,
    stamp: RunStamp,
    report: &RunReport,
    chip: &ChipConfig,
    names: &BTreeMap<i32, String>,
    orchestrator_name: Option<&str>,
    build_label: &str,
) -> Result<DfxSummary, RunnerError> {
    let mut summary = DfxSummary::default();
    if !options.any() {
        return Ok(summary);
    }
    std::fs::create_dir_all(out).map_err(|source| RunnerError::ArtifactIo {
        action: "creating",
        path: out.to_path_buf(),
        source,
    })?;
    let a = Artifacts {
        out,
        options,
        compact: format == DfxFormat::Compact,
        stamp,
        report,
        chip,
    };
    let name_map = || write_name_map(out, names, orchestrator_name, build_label);
    let parts: Vec<PartResult> = std::thread::scope(|s| {
        let swimlane = (options.chip_swimlane > 0).then(|| run_beside(s, || a.swimlane()));
        let deps = options.dep_gen.then(|| run_beside(s, || a.deps()));
        let at_work = pto_base::thread::AtWork::begin();
        let here = [
            (options.dump_args > 0).then(|| a.dump()),
            (options.pmu > 0).then(|| a.pmu()),
            options.scope_stats.then(|| a.scope_stats()),
            (options.chip_swimlane > 0 || options.dep_gen).then(name_map),
        ];
        drop(at_work);
        let mut parts: Vec<PartResult> = Vec::new();
        parts.extend(swimlane.map(join_part));
        parts.extend(deps.map(join_part));
        parts.extend(here.into_iter().flatten());
        parts
    });
    for part in parts {
        let part = part?;
        summary.files.extend(part.files);
        summary.hints.extend(part.hints);
        summary.warnings.extend(part.warnings);
    }
    Ok(summary)
}

/// `p` as a shell word, for the viewer hints.
fn show(p: &Path) -> String {
    shell_quote(&p.display().to_string())
}

/// What [`write_artifacts`] writes from: one run's report, where and in which form; one
/// method per artifact.
struct Artifacts<'a> {
    out: &'a Path,
    options: &'a DfxOptions,
    /// [`DfxFormat::Compact`]: the swimlane and deps files in their compact forms.
    compact: bool,
    stamp: RunStamp,
    report: &'a RunReport,
    chip: &'a ChipConfig,
}

impl Artifacts<'_> {
    /// The hint that turns the compact files into Simpler's JSON.
    fn export_hint(&self) -> String {
        format!(
            "pto dfx-export {}  # Simpler's JSON files from the compact ones",
            show(self.out)
        )
    }

    /// The chip swimlane records (`chip_swimlane`): JSON or compact; none when no task ran.
    fn swimlane(&self) -> PartResult {
        let Artifacts {
            out,
            options,
            compact,
            stamp,
            report,
            chip,
        } = *self;
        let mut part = Part::default();
        let header = swimlane_header(options.chip_swimlane, stamp, report, chip);
        if report.dfx.workers.iter().all(|w| w.subtasks.is_empty()) {
            part.warnings
                .push("chip swimlane: no task ran, nothing to write".to_string());
        } else if compact {
            let path = out.join(cswim::FILE_NAME);
            cswim::write(
                &path,
                &header,
                report
                    .dfx
                    .workers
                    .iter()
                    .map(|w| (w.subtasks.iter().map(subtask), w.phases.iter().map(phase))),
                report.dfx.orchestrator.iter().map(orch),
            )?;
            part.hints
                .push(format!("pto swimlane-converter {}", show(&path)));
            part.hints.push(self.export_hint());
            part.files.push(path);
        } else {
            let path = out.join(pto_dfx::swimlane::FILE_NAME);
            let workers: Vec<_> = report
                .dfx
                .workers
                .iter()
                .map(|w| (w.subtasks.as_slice(), w.phases.as_slice()))
                .collect();
            cswim::write_json(
                &path,
                &header,
                &workers,
                &report.dfx.orchestrator,
                subtask,
                phase,
                orch,
            )?;
            part.hints
                .push(format!("pto swimlane-converter {}", show(&path)));
            part.files.push(path);
        }
        Ok(part)
    }

    /// The dependency log (`dep_gen`): JSON or compact, with the deps viewer and critical
    /// path hints.
    fn deps(&self) -> PartResult {
        let Artifacts {
            out,
            options,
            compact,
            stamp,
            report,
            ..
        } = *self;
        let mut part = Part::default();
        if let Some(log) = &report.deps {
            let path = if compact {
                let path = out.join(cdeps::FILE_NAME);
                cdeps::write(
                    &path,
                    stamp.schema,
                    log.views.iter().map(dep_view),
                    log.regions.iter().map(dep_region),
                    log.tasks
                        .iter()
                        .map(|t| (dep_task(t), log.args_of(t).iter().map(dep_arg_ref))),
                    log.edges.iter().map(dep_edge_ref),
                )?;
                path
            } else {
                let path = out.join(pto_dfx::deps::FILE_NAME);
                write_deps_json(&path, stamp.schema, log)?;
                path
            };
            part.hints
                .push(format!("pto deps-viewer {} --format html", show(&path)));
            part.hints.push(format!("pto critical-path {}", show(out)));
            if compact && options.chip_swimlane == 0 {
                part.hints.push(self.export_hint());
            }
            part.files.push(path);
        }
        Ok(part)
    }

    /// The tensor dump (`dump_args`): its manifest, with the dump viewer hint.
    fn dump(&self) -> PartResult {
        let (out, report) = (self.out, self.report);
        let mut part = Part::default();
        if let Some(dump) = &report.dfx.dump {
            let mut local = DfxSummary::default();
            let written = write_dump_manifest(out, self.options.dump_args, dump, &mut local)?;
            part.warnings = local.warnings;
            if let Some(path) = written {
                part.hints.push(format!(
                    "pto dump-viewer {} --list",
                    show(path.parent().unwrap_or(out))
                ));
                part.files.push(path);
            }
        }
        Ok(part)
    }

    /// `pmu.csv` (`pmu`): the platform's counter columns, or the host's real counters.
    fn pmu(&self) -> PartResult {
        let mut part = Part::default();
        let path = DfxSwitch::named("pmu").artifact_in(self.out);
        let event = pmu_event(self.options.pmu);
        let columns = pmu_columns(event, self.report, self.chip);
        // What the columns hold is documented (docs/COMPATIBILITY.md, `pmu.csv`): the
        // platform's PMU columns with modelled values on the simulators, the host's real
        // counters on `cpu`.
        if matches!(&columns, PmuColumns::Host(names) if names.is_empty()) {
            part.warnings.push(
                "pmu: perf_event_open is not permitted here (perf_event_paranoid or seccomp); pmu.csv has no host counters"
                    .to_string(),
            );
        }
        write_pmu(&path, event, &columns, self.report, self.chip)?;
        part.files.push(path);
        Ok(part)
    }

    /// The scope statistics (`scope_stats`), with the plot hint.
    fn scope_stats(&self) -> PartResult {
        let mut part = Part::default();
        let path = DfxSwitch::named("scope_stats").artifact_in(self.out);
        let file =
            scope_file(self.report, self.chip).with_schema(self.stamp.schema, self.stamp.run_epoch);
        pto_dfx::scope_stats::write(&path, &file)?;
        part.hints
            .push(format!("pto scope-stats-plot {}", show(&path)));
        part.files.push(path);
        Ok(part)
    }
}

/// The name map of the build `build_label` (with the swimlane or the deps): callable ids
/// to kernel names, and the orchestration's name.
fn write_name_map(
    out: &Path,
    names: &BTreeMap<i32, String>,
    orchestrator_name: Option<&str>,
    build_label: &str,
) -> PartResult {
    let mut part = Part::default();
    let map = pto_dfx::name_map::NameMap {
        level: Some(2),
        orchestrator_name: orchestrator_name.map(str::to_string),
        callable_id_to_name: names
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    };
    let path = out.join(format!(
        "{}{build_label}.json",
        pto_dfx::name_map::FILE_PREFIX
    ));
    pto_dfx::name_map::write(&path, &map)?;
    part.files.push(path);
    Ok(part)
}

fn core_type(t: CoreType) -> DfxCore {
    match t {
        CoreType::Aic => DfxCore::Aic,
        CoreType::Aiv => DfxCore::Aiv,
    }
}

fn subtask(s: &SubtaskRecord) -> cswim::Subtask {
    cswim::Subtask {
        core: s.core,
        task: s.task,
        reg_task_id: s.reg_task_id,
        dispatch_ns: s.dispatch_ns,
        receive_ns: s.receive_ns,
        start_ns: s.start_ns,
        end_ns: s.end_ns,
        finish_ns: s.finish_ns,
    }
}

/// Simpler's enum value of a runtime phase kind (`ChipSwimlaneSchedPhaseKind`).
fn phase_code(kind: RtPhaseKind) -> u8 {
    match kind {
        RtPhaseKind::Complete => 0,
        RtPhaseKind::Dispatch => 1,
    }
}

fn phase(p: &RtPhase) -> cswim::Phase {
    cswim::Phase {
        kind: phase_code(p.kind),
        start_ns: p.start_ns,
        end_ns: p.end_ns,
        loop_iter: p.loop_iter,
        tasks_processed: p.tasks_processed,
        pop_hit: p.pop_hit,
        pop_miss: p.pop_miss,
        shared_at_start: p.shared_at_start,
        shared_at_end: p.shared_at_end,
    }
}

fn orch(o: &OrchRecord) -> cswim::Orch {
    cswim::Orch {
        submit_idx: o.submit_idx,
        task: o.task,
        start_ns: o.start_ns,
        end_ns: o.end_ns,
    }
}

/// The swimlane header at `level` (1–4): the platform's clock, the run's topology (or
/// the platform's for its worker count), the core-to-worker map and the run's generation
/// and epoch.
pub fn swimlane_header(
    level: u8,
    stamp: RunStamp,
    report: &RunReport,
    chip: &ChipConfig,
) -> cswim::SwimlaneHeader {
    let topology = report
        .dfx
        .topology
        .unwrap_or_else(|| chip.platform.topology(report.n_workers));
    cswim::SwimlaneHeader {
        level,
        clock_freq_hz: chip.platform.clock_freq_hz(),
        core_types: (0..topology.n_cores())
            .map(|c| core_type(topology.core_type(c)))
            .collect(),
        core_to_thread: report.dfx.core_to_worker.clone(),
        schema: stamp.schema,
        run_epoch: stamp.run_epoch,
        predicted: chip.dfx.predicted_timing,
    }
}

fn dep_view(t: &RtView) -> cdeps::View {
    cdeps::View {
        addr: t.addr,
        buffer_bytes: t.buffer_bytes,
        start_offset: t.start_offset,
        version: t.version,
        dtype: t.dtype,
        ndims: t.ndims,
        shapes: t.shapes,
        strides: t.strides,
    }
}

fn dep_region(g: &RtRegion) -> cdeps::Geometry {
    cdeps::Geometry {
        start_offset: g.start_offset,
        ndims: g.ndims,
        shapes: g.shapes,
        strides: g.strides,
    }
}

fn arg_type(ty: TensorArgType) -> cdeps::ArgType {
    match ty {
        TensorArgType::Input => cdeps::ArgType::Input,
        TensorArgType::Output => cdeps::ArgType::Output,
        TensorArgType::InOut => cdeps::ArgType::InOut,
        TensorArgType::OutputExisting => cdeps::ArgType::OutputExisting,
        TensorArgType::NoDep => cdeps::ArgType::NoDep,
    }
}

fn dep_arg_ref(a: &RtArg) -> cdeps::ArgRef {
    cdeps::ArgRef {
        ty: arg_type(a.ty),
        view: a.view,
    }
}

fn dep_task(t: &pto_runtime::deps::TaskRecord) -> cdeps::Task {
    cdeps::Task {
        task: t.id.0,
        manual_scope: t.manual_scope,
        early_dispatch: t.early_dispatch,
        is_alloc: t.is_alloc,
        kernel_ids: t.kernel_ids,
        block_num: t.block_num,
    }
}

fn dep_edge_ref(e: &EdgeRecord) -> cdeps::EdgeRef {
    cdeps::EdgeRef {
        pred: e.pred.0,
        succ: e.succ.0,
        arg: e.arg,
        source: match e.source {
            RtSource::Explicit => EdgeSource::Explicit,
            RtSource::Creator => EdgeSource::Creator,
            RtSource::TensorMap => EdgeSource::Tensormap,
        },
        wait: e.wait,
        retain: e.retain,
        overlap: e.overlap.map(|o| match o {
            RtOverlap::None => DepsOverlap::NoOverlap,
            RtOverlap::Covered => DepsOverlap::Covered,
            RtOverlap::Other => DepsOverlap::Other,
        }),
        consumer: e.consumer,
        producer: e.producer,
    }
}

/// Writes the run's `deps.json` in generation `schema` to `path`, streamed from the log
/// (the views and regions resolved by index; no model of the file).
fn write_deps_json(
    path: &Path,
    schema: DfxSchema,
    log: &DepLog,
) -> Result<(), pto_dfx::WriteError> {
    let tasks = log.tasks.iter().map(|t| {
        let args = log.args_of(t).iter().map(|a| cdeps::Arg {
            ty: arg_type(a.ty),
            view: log.view(a.view).map(dep_view),
        });
        (dep_task(t), args)
    });
    let edges = log.edges.iter().map(|e| {
        dep_edge_ref(e).with_views(
            log.view(e.consumer).map(dep_view),
            log.region(e.producer).map(dep_region),
        )
    });
    cdeps::write_json(path, schema, tasks, edges)
}

/// The name the diagnostic files give the runtime's element type `code` (`FLOAT32`, ...).
fn file_dtype_name(code: u8) -> &'static str {
    pto_dfx::DataType::name_of_code(u32::from(code))
}

/// A scalar argument's value from its raw slot, by the runtime's element type `dtype`.
fn scalar_value(dtype: u8, bits: u64) -> ScalarValue {
    use pto_dfx::DataType as D;
    match D::from_code(u32::from(dtype)) {
        Some(D::Float32) => ScalarValue::F32(f32::from_bits(bits as u32)),
        Some(D::Int32) => ScalarValue::I64(bits as u32 as i32 as i64),
        Some(D::Int16) => ScalarValue::I64(bits as u16 as i16 as i64),
        Some(D::Int8) => ScalarValue::I64(bits as u8 as i8 as i64),
        Some(D::Int64) => ScalarValue::I64(bits as i64),
        Some(D::Bool) => ScalarValue::Bool(bits & 0xFF != 0),
        Some(D::UInt8) => ScalarValue::U64(bits & 0xFF),
        Some(D::UInt16) => ScalarValue::U64(bits & 0xFFFF),
        Some(D::UInt32) => ScalarValue::U64(bits & 0xFFFF_FFFF),
        _ => ScalarValue::U64(bits),
    }
}

fn write_dump_manifest(
    out: &Path,
    level: u8,
    dump: &DumpResult,
    summary: &mut DfxSummary,
) -> Result<Option<PathBuf>, RunnerError> {
    if let Some(e) = &dump.error {
        summary.warnings.push(format!("args dump: {e}"));
    }
    if dump.entries.is_empty() {
        summary.warnings.push(match level {
            1 => "args dump (partial): no task marks an argument with dump(...), nothing to write; --dump-args=2 (full) dumps every task's arguments"
                .to_string(),
            _ => "args dump: no records".to_string(),
        });
        // An empty, valid dump at this run's level replaces an earlier run's: the set on
        // disk says what this run captured (nothing), not what a run before it did.
    }
    if dump.dropped_records > 0 {
        summary.warnings.push(format!(
            "args dump: {} records lost their payload (counted in the manifest)",
            dump.dropped_records
        ));
    }
    let args = dump
        .entries
        .iter()
        .map(|e| {
            // Borrowed from the runtime's entry: no allocation per entry.
            ArgEntry {
                task_id: DfxTaskId(e.task),
                func_id: e.func_ids(),
                arg_index: e.arg_index,
                role: match e.role {
                    DumpRole::Input => ArgRole::Input,
                    DumpRole::Output => ArgRole::Output,
                    DumpRole::InOut => ArgRole::Inout,
                },
                stage: match e.stage {
                    RtStage::BeforeDispatch => DumpStage::BeforeDispatch,
                    RtStage::AfterCompletion => DumpStage::AfterCompletion,
                },
                kind: if e.scalar.is_some() {
                    ArgKind::Scalar
                } else {
                    ArgKind::Tensor
                },
                dtype: file_dtype_name(e.dtype),
                value: e.scalar.map(|bits| scalar_value(e.dtype, bits)),
                is_contiguous: e.is_contiguous,
                numel: pto_dfx::args_dump::numel(e.shape()),
                shape: e.shape(),
                strides: e.strides(),
                start_offset: e.start_offset,
                arg_index_ambiguous: false,
                bin_offset: e.bin_offset,
                bin_size: e.bin_size,
                truncated: e.truncated,
                overwritten: e.overwritten,
            }
        })
        .collect();
    let manifest = ArgsDumpManifestOf::new(
        level as u32,
        dump.bin_written
            .then(|| pto_dfx::args_dump::BIN_FILE_NAME.to_string()),
        args,
        dump.dropped_records,
        dump.entries.iter().filter(|e| e.overwritten).count() as u64,
    );
    let path = DfxSwitch::named("dump_args")
        .artifact_in(out)
        .join(pto_dfx::args_dump::MANIFEST_FILE_NAME);
    pto_dfx::args_dump::write(&path, &manifest)?;
    Ok(Some(path))
}

/// The counter columns of `pmu.csv`.
enum PmuColumns {
    /// `cpu`: the host counters the runtime read (empty when perf was not permitted).
    Host(Vec<&'static str>),
    /// A chip platform: Simpler's columns of the event type, values modelled or 0.
    Modelled(&'static [&'static str]),
}

impl PmuColumns {
    fn names(&self) -> &[&'static str] {
        match self {
            Self::Host(n) => n,
            Self::Modelled(n) => n,
        }
    }
}

/// The pipe whose predicted busy cycles counter `name` holds in predicted mode (event type
/// 2, a2a3's and a5's pipe-utilisation columns; docs/TIMING.md): `None` for the columns no
/// pipe of the model fills (icache counters; FIXP has a column on a5 only).
fn predicted_pipe(name: &str) -> Option<pto_timing::Pipe> {
    use pto_timing::Pipe;
    Some(match name {
        "vec_busy_cycles" | "pmu_idc_aic_vec_busy_o" => Pipe::Vec,
        "cube_busy_cycles" | "cube_instr_busy" => Pipe::Cube,
        "scalar_busy_cycles" | "scalar_instr_busy" => Pipe::Scalar,
        "mte1_busy_cycles" | "mte1_instr_busy" => Pipe::Mte1,
        "mte2_busy_cycles" | "mte2_instr_busy" => Pipe::Mte2,
        "mte3_busy_cycles" | "mte3_instr_busy" => Pipe::Mte3,
        "pmu_fix_instr_busy" => Pipe::Fixp,
        _ => return None,
    })
}

/// The predicted timing of each subtask by `(task, core)` (empty unless `--timing
/// predicted`; the cores are the schedule's, as in the swimlane and `pmu.csv`).
fn predicted_by_subtask(report: &RunReport) -> HashMap<(u64, u32), Option<&CoreTiming>> {
    report
        .dfx
        .predicted
        .iter()
        .map(|r| {
            let t = match &r.timing {
                SubtaskTiming::Modelled(c) => Some(c),
                SubtaskTiming::Unmodelled(_) => None,
            };
            ((r.task, r.core), t)
        })
        .collect()
}

/// Where a `pmu.csv` row's counter values come from: which [`RowShape`] of
/// [`PmuSource::shapes`] it takes and what its variable values are (resolved once per file
/// from the column names, not per row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PmuSource {
    /// `cpu`: column `i` is the host counter at index `i` of a record's counters.
    Host,
    /// A simulated chip: on its core type's shape (AIC 0, AIV 1) the core type's busy
    /// column holds the kernel's host time in ticks (the one variable), the rest 0.
    Busy,
    /// `--timing predicted`: a modelled subtask's shape (0) has each pipe column the
    /// model's busy cycles of its pipe (the variables, in [`pto_timing::Pipe::ALL`]
    /// order; event type 2 only), the rest 0; an unmodelled one's (1) is all 0.
    Predicted,
}

impl PmuSource {
    /// The source of a file of `columns`.
    fn of(columns: &PmuColumns, predicted: bool) -> Self {
        match columns {
            PmuColumns::Host(_) => Self::Host,
            PmuColumns::Modelled(_) if predicted => Self::Predicted,
            PmuColumns::Modelled(_) => Self::Busy,
        }
    }

    /// The row shapes of counter columns `columns` for event type `event`, indexed as
    /// the variants say.
    fn shapes(self, event: pto_dfx::pmu::PmuEventType, columns: &PmuColumns) -> Vec<RowShape> {
        let names = columns.names();
        let shape = |column: &dyn Fn(&str) -> Column| {
            RowShape::new(&names.iter().map(|n| column(n)).collect::<Vec<_>>())
        };
        let zero = Column::Const(0);
        match self {
            Self::Host => vec![RowShape::new(
                &(0..names.len()).map(Column::Var).collect::<Vec<_>>(),
            )],
            Self::Busy => [0, 1]
                .map(|core_type| {
                    shape(&|name| {
                        if modelled_busy(event, name, core_type) {
                            Column::Var(0)
                        } else {
                            zero
                        }
                    })
                })
                .to_vec(),
            Self::Predicted => vec![
                shape(&|name| {
                    predicted_pipe(name)
                        .filter(|_| event == pto_dfx::pmu::PmuEventType::PipeUtilization)
                        .map_or(zero, |pipe| Column::Var(pipe.index()))
                }),
                shape(&|_| zero),
            ],
        }
    }
}

/// Whether modelled counter `name` counts the kernel's busy time on core type `core_type`
/// (0 AIC, 1 AIV) for event type `event`.
fn modelled_busy(event: pto_dfx::pmu::PmuEventType, name: &str, core_type: u8) -> bool {
    event == pto_dfx::pmu::PmuEventType::PipeUtilization
        && match core_type {
            0 => matches!(name, "cube_busy_cycles" | "cube_instr_busy"),
            _ => matches!(name, "vec_busy_cycles" | "pmu_idc_aic_vec_busy_o"),
        }
}

/// The event type of option value `event` (pipe utilisation when it names none).
fn pmu_event(event: u32) -> pto_dfx::pmu::PmuEventType {
    pto_dfx::pmu::PmuEventType::resolve(event)
        .unwrap_or(pto_dfx::pmu::PmuEventType::PipeUtilization)
}

/// The counter columns of `pmu.csv` on the run's platform.
fn pmu_columns(
    event: pto_dfx::pmu::PmuEventType,
    report: &RunReport,
    chip: &ChipConfig,
) -> PmuColumns {
    use pto_dfx::pmu::{a2a3_counter_names, a5_counter_names};
    use pto_runtime::Platform;
    if chip.platform.pmu_counts_host() {
        return PmuColumns::Host(
            report
                .dfx
                .workers
                .iter()
                .find(|w| !w.pmu_names.is_empty())
                .map(|w| w.pmu_names.clone())
                .unwrap_or_default(),
        );
    }
    match chip.platform {
        Platform::A5Sim | Platform::A5 => PmuColumns::Modelled(a5_counter_names(event)),
        Platform::A2a3Sim | Platform::A2a3 | Platform::Cpu => {
            PmuColumns::Modelled(a2a3_counter_names(event))
        }
    }
}

/// Writes `pmu.csv` to `path`, streamed: one row per PMU record
/// ([`pto_dfx::pmu::PmuCsv::push_all`]; a large file's second half rendered on another
/// thread, the run's CPUs being idle by then).
fn write_pmu(
    path: &Path,
    event: pto_dfx::pmu::PmuEventType,
    columns: &PmuColumns,
    report: &RunReport,
    chip: &ChipConfig,
) -> Result<(), pto_dfx::WriteError> {
    let source = PmuSource::of(columns, chip.dfx.predicted_timing);
    let rows = PmuRows {
        event,
        source,
        columns: columns.names().len(),
        freq: chip.platform.clock_freq_hz(),
        predicted: chip
            .dfx
            .predicted_timing
            .then(|| predicted_by_subtask(report)),
    };
    let shapes = source.shapes(event, columns);
    let records = report.dfx.workers.iter().flat_map(|w| w.pmu.iter());
    let n_records: usize = report.dfx.workers.iter().map(|w| w.pmu.len()).sum();
    // The header's names are checked before any row is rendered.
    let mut csv = pto_dfx::pmu::PmuCsv::streaming(path, columns.names())?;
    csv.push_all(n_records, records, &shapes, |r, row, values| {
        rows.fill(row, values, r)
    })
    .map_err(|e| pto_dfx::WriteError::invalid(path, e))?;
    csv.commit()
}

/// What every `pmu.csv` row is made from, besides its record.
struct PmuRows<'a> {
    event: pto_dfx::pmu::PmuEventType,
    source: PmuSource,
    /// Counter columns.
    columns: usize,
    freq: u64,
    /// The predicted timing by (task, core), with `--timing predicted`.
    predicted: Option<HashMap<(u64, u32), Option<&'a CoreTiming>>>,
}

impl PmuRows<'_> {
    /// Fills `row` and its variable `values` from record `r`; returns its shape's index
    /// in [`PmuSource::shapes`].
    fn fill(
        &self,
        row: &mut PmuRow,
        values: &mut Vec<u64>,
        r: &pto_runtime::dfx::PmuRecord,
    ) -> usize {
        let timing = self
            .predicted
            .as_ref()
            .map(|p| p.get(&(r.task, r.core)).copied().flatten());
        let busy_ticks = pto_dfx::ticks(r.duration_ns, self.freq);
        row.thread_id = r.worker as i32;
        row.core_id = r.core;
        row.task_id = DfxTaskId(r.task);
        row.func_id = r.func_id as u32;
        row.core_type = if r.core_type == 0 {
            DfxCore::Aic
        } else {
            DfxCore::Aiv
        };
        row.pmu_total_cycles = match timing {
            Some(t) => t.map_or(0, |t| t.total),
            None => busy_ticks,
        };
        row.event_type = self.event.number();
        values.clear();
        match self.source {
            PmuSource::Host => {
                let n = self.columns.min(r.counters.len());
                values.extend_from_slice(&r.counters[..n]);
                values.resize(self.columns, 0);
                0
            }
            PmuSource::Busy => {
                values.push(busy_ticks);
                usize::from(r.core_type != 0)
            }
            PmuSource::Predicted => match timing.flatten() {
                Some(t) => {
                    values.extend_from_slice(&t.busy);
                    0
                }
                None => 1,
            },
        }
    }
}

fn scope_file(report: &RunReport, chip: &ChipConfig) -> ScopeStatsFile {
    let r = &chip.rings;
    let clamp = |v: u64| v.min(i32::MAX as u64) as i32;
    let mut meta = ScopeStatsMeta::new(
        r.task_window.map(clamp),
        r.heap,
        r.dep_pool.map(clamp),
        r.tensormap_pool.min(i32::MAX as usize) as i32,
    );
    let records: Vec<ScopeRecord> = report
        .dfx
        .scopes
        .iter()
        .map(|s| ScopeRecord {
            buf_seq: None,
            run_epoch: None,
            site: s.site.clone(),
            phase: if s.is_end {
                ScopePhase::End
            } else {
                ScopePhase::Begin
            },
            depth: s.depth as i32,
            ring: s.ring as i32,
            task_window_start: clamp(s.task_window.0),
            task_window_end: clamp(s.task_window.1),
            heap_start: s.heap.0,
            heap_end: s.heap.1,
            dep_pool_start: clamp(s.dep_pool.0),
            dep_pool_end: clamp(s.dep_pool.1),
            tensormap: clamp(s.tensormap),
        })
        .collect();
    meta.total = records.len() as u32;
    ScopeStatsFile { meta, records }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    /// The counter values of the rows `rows` renders for `records`, through the shapes of
    /// `columns` and the file's own renderer and reader.
    fn pmu_values(
        rows: &super::PmuRows<'_>,
        columns: &super::PmuColumns,
        records: &[pto_runtime::dfx::PmuRecord],
    ) -> Vec<Vec<u64>> {
        let shapes = rows.source.shapes(rows.event, columns);
        let mut csv = pto_dfx::pmu::PmuCsv::new(columns.names(), records.len()).unwrap();
        csv.push_all(records.len(), records.iter(), &shapes, |r, row, values| {
            rows.fill(row, values, r)
        })
        .unwrap();
        let text = csv.finish();
        let read = pto_dfx::pmu::parse(text.as_bytes(), std::path::Path::new("pmu.csv")).unwrap();
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        let values = |r: &pto_dfx::pmu::PmuRow| r.counters.iter().map(|(_, v)| *v).collect();
        read.value.rows.iter().map(values).collect()
    }

    #[test]
    fn pmu_columns_take_their_values_as_the_names_say() {
        use super::{PmuColumns, PmuRows, PmuSource};
        use pto_dfx::pmu::{a2a3_counter_names, PmuEventType};
        let event = PmuEventType::PipeUtilization;
        let names = a2a3_counter_names(event);
        let modelled = PmuColumns::Modelled(names);
        let record = |task: u64, core_type: u8| pto_runtime::dfx::PmuRecord {
            worker: 0,
            core: 0,
            task,
            func_id: 0,
            core_type,
            duration_ns: 1000,
            counters: [7; pto_runtime::perf::MAX_COUNTERS],
        };
        let rows = |event, source, columns: usize, predicted| PmuRows {
            event,
            source,
            columns,
            freq: 50_000_000,
            predicted,
        };
        let column = |name: &str| names.iter().position(|n| *n == name).unwrap();
        // The kernel's host time, 1000 ns = 50 ticks at 50 MHz, in its core type's busy
        // column only.
        let busy = rows(event, PmuSource::Busy, names.len(), None);
        let values = pmu_values(&busy, &modelled, &[record(1, 0), record(2, 1)]);
        for (v, name) in values.iter().zip(["cube_busy_cycles", "vec_busy_cycles"]) {
            let nonzero: Vec<usize> = (0..v.len()).filter(|&i| v[i] != 0).collect();
            assert_eq!(nonzero, vec![column(name)], "{name}: {v:?}");
            assert_eq!(v[column(name)], 50);
        }
        // Predicted: each pipe column its pipe's busy cycles, unmodelled subtasks 0.
        let mut timing = pto_timing::CoreTiming::default();
        timing.busy[pto_timing::Pipe::Mte2.index()] = 9;
        timing.busy[pto_timing::Pipe::Vec.index()] = 4;
        let by_task = [((1, 0), Some(&timing)), ((2, 0), None)]
            .into_iter()
            .collect();
        let predicted = rows(event, PmuSource::Predicted, names.len(), Some(by_task));
        let values = pmu_values(&predicted, &modelled, &[record(1, 1), record(2, 1)]);
        assert_eq!(values[0][column("mte2_busy_cycles")], 9);
        assert_eq!(values[0][column("vec_busy_cycles")], 4);
        assert_eq!(values[0].iter().sum::<u64>(), 13, "{:?}", values[0]);
        assert!(values[1].iter().all(|v| *v == 0), "{:?}", values[1]);
        // Another event type models no busy column.
        let memory = PmuEventType::Memory;
        let other = PmuColumns::Modelled(a2a3_counter_names(memory));
        let n = other.names().len();
        let values = pmu_values(
            &rows(memory, PmuSource::Busy, n, None),
            &other,
            &[record(1, 0)],
        );
        assert!(values[0].iter().all(|v| *v == 0), "{:?}", values[0]);
        // Host counters by index.
        let host = PmuColumns::Host(vec!["a", "b"]);
        let mut r = record(1, 0);
        r.counters[1] = 8;
        let values = pmu_values(&rows(event, PmuSource::Host, 2, None), &host, &[r]);
        assert_eq!(values, vec![vec![7, 8]]);
    }

    #[test]
    fn a_large_pmu_csv_streamed_in_halves_keeps_every_row_in_order() {
        use pto_runtime::dfx::{PmuRecord, WorkerRecords};
        use pto_runtime::DfxData;
        let worker = |w: u32, n: u64| WorkerRecords {
            pmu: (0..n)
                .map(|t| PmuRecord {
                    worker: w,
                    core: w,
                    task: u64::from(w) << 32 | t,
                    func_id: 1,
                    core_type: 1,
                    duration_ns: 1000 + t,
                    counters: [0; pto_runtime::perf::MAX_COUNTERS],
                })
                .collect(),
            ..Default::default()
        };
        let n = 10_000; // two workers: past the size at which the rows render in halves
        let report = pto_runtime::RunReport {
            n_tasks: 2 * n,
            wall: std::time::Duration::ZERO,
            device_time: std::time::Duration::ZERO,
            n_workers: 2,
            platform: pto_runtime::Platform::A2a3Sim,
            deps: None,
            dfx: DfxData {
                workers: vec![worker(0, n), worker(1, n)],
                ..Default::default()
            },
            timing_slots: Default::default(),
        };
        let chip = pto_runtime::ChipConfig::new(pto_runtime::Platform::A2a3Sim).unwrap();
        let event = super::pmu_event(2);
        let columns = super::pmu_columns(event, &report, &chip);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pmu.csv");
        super::write_pmu(&path, event, &columns, &report, &chip).unwrap();
        let read = pto_dfx::pmu::read(&path).unwrap();
        assert!(read.problems.is_empty(), "{:?}", read.problems);
        let tasks: Vec<u64> = read.value.rows.iter().map(|r| r.task_id.raw()).collect();
        let want: Vec<u64> = report
            .dfx
            .workers
            .iter()
            .flat_map(|w| w.pmu.iter().map(|r| r.task))
            .collect();
        assert_eq!(tasks, want);
    }

    #[test]
    fn runtime_and_file_dtype_tables_agree() {
        // The runtime keeps its own table (sizes on the hot path, names in its messages);
        // the files use pto-dfx's. They must describe the same types.
        for code in 0..=u8::MAX {
            let file = pto_dfx::DataType::from_code(u32::from(code));
            assert_eq!(
                pto_runtime::dtype::name(code),
                pto_dfx::DataType::name_of_code(u32::from(code)),
                "code {code}"
            );
            if let Some(d) = file {
                assert_eq!(
                    pto_runtime::dtype::elem_size(code),
                    d.elem_size(),
                    "code {code}"
                );
            }
        }
    }

    #[test]
    fn phase_codes_are_simplers_enum_values() {
        use pto_runtime::dfx::SchedPhaseKind as K;
        for k in [K::Dispatch, K::Complete] {
            assert_eq!(
                Some(super::phase_code(k)),
                pto_dfx::swimlane::SchedPhaseKind::from_name(k.name()).code(),
                "{k:?}"
            );
        }
    }

    #[test]
    fn hints_quote_paths_for_the_shell() {
        assert_eq!(shell_quote("/tmp/a_b/deps.json"), "/tmp/a_b/deps.json");
        assert_eq!(
            shell_quote("/tmp/my dir/deps.json"),
            "'/tmp/my dir/deps.json'"
        );
        assert_eq!(shell_quote("/tmp/it's"), "'/tmp/it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
