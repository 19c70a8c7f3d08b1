//! The offline viewer subcommands: `swimlane-converter`, `deps-viewer`,
//! `scope-stats-plot`, `dump-viewer`, `critical-path` and `dfx-export`.
//!
//! Each parses its flags, calls the matching `pto_dfx_view` function and
//! prints what it returns: data (tables, reports, "Wrote ..." lines) on
//! stdout, warnings on stderr. Exit codes: 0 success; 1 when a dump-viewer
//! filter matches nothing (a clean "no", with the valid values); 2 for any
//! error (unreadable or malformed input, named by file and key; an
//! unwritable output), reported by `main`.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Subcommand, ValueEnum};
use pto_dfx::args_dump::{ArgRole, DumpStage};
use pto_dfx::printable::printable;
use pto_dfx_view::deps_viewer::{self, DepsViewerOptions, EdgeMode, Format, LayoutChoice};
use pto_dfx_view::dump_viewer::{self, DumpFilter, ExportFormat};
use pto_dfx_view::layout::Engine;
use pto_dfx_view::swimlane_converter::{self, ConvertExtras, ConvertOptions};
use pto_dfx_view::{critical_path, dfx_export, scope_stats_plot, ToolError};

/// The viewer subcommands (flattened into `pto`'s command list).
#[derive(Subcommand)]
pub enum ViewerCommand {
    /// Convert chip_swimlane_records.json (or its compact .bin) into a Chrome trace (Perfetto,
    /// chrome://tracing).
    ///
    /// Writes merged_swimlane_<YYYYmmdd_HHMMSS>.json (UTC) beside the input and prints a
    /// per-kernel timing summary. Kernel names come from --func-names, else -k, else a unique
    /// name_map*.json beside the input; dependency arrows and func_ids from deps.bin or deps.json
    /// beside it.
    /// Exit codes: 0 success, 2 error.
    SwimlaneConverter(SwimlaneArgs),
    /// Show deps.json (or deps.bin) as a text summary (default) or a self-contained interactive HTML graph.
    ///
    /// HTML: drag to pan, wheel to zoom, `f` fits, `r` resets. Graphviz `dot` lays a small
    /// graph out when it is on PATH, the built-in layered layout a large one (or any, without
    /// Graphviz); Graphviz never runs past a time budget. Exit codes: 0 success, 2 error.
    DepsViewer(DepsArgs),
    /// Plot scope_stats.jsonl as a self-contained scope_stats.html beside it.
    ///
    /// Exit codes: 0 success, 2 error.
    ScopeStatsPlot(ScopeStatsArgs),
    /// List (default) or export the tensors and scalars of an args_dump/ directory.
    ///
    /// Exports go to `<dump dir>/npy/` or `<dump dir>/txt/` as
    /// `task_<task_id>_<before|after>_<in|out|inout><arg>.<ext>`.
    /// Exit codes: 0 success, 1 a filter matched nothing, 2 error.
    DumpViewer(DumpArgs),
    /// Static and observed critical paths of a run, as Markdown.
    ///
    /// Reads deps.json or deps.bin (required), chip_swimlane_records.json or .bin and
    /// name_map*.json from the
    /// directory, writes critical_path_report.md there and prints it. The observed path
    /// blames each wait on a data or a core predecessor (data-wait / core-wait). With a
    /// merged_swimlane*.json there, also writes CPM_static.json and CPM_observed.json:
    /// copies of the trace whose off-path Worker View bars are renamed `·(<task>)`.
    /// Exit codes: 0 success, 2 error.
    CriticalPath(CriticalPathArgs),
    /// Write Simpler's JSON beside a run's compact files (`--dfx-format compact`).
    ///
    /// chip_swimlane_records.bin becomes chip_swimlane_records.json and deps.bin deps.json,
    /// each written atomically and byte-identical to what `--dfx-format json` writes for the
    /// same records, for Simpler's tools, in the generation the run wrote (its
    /// --dfx-schema) unless --dfx-schema here names another. (`pto` viewers read the .bin
    /// files directly.)
    /// Exit codes: 0 success, 2 error.
    DfxExport(DfxExportArgs),
}

/// `pto dfx-export`.
#[derive(clap::Args)]
pub struct DfxExportArgs {
    /// The run's diagnostics directory (dfx_outputs/), or a .bin file in it.
    dir: PathBuf,
    /// Write this generation of Simpler's files (`2026-08`: deps.json without `runtime`,
    /// aicpu_tasks; `2026-09`: `runtime` keys, `run_epoch`, scheduler_tasks) instead of
    /// the one the run wrote.
    #[arg(long, value_name = "GENERATION", value_parser = ["2026-08", "2026-09"])]
    dfx_schema: Option<String>,
}

/// `pto swimlane-converter`.
#[derive(clap::Args)]
pub struct SwimlaneArgs {
    /// The chip_swimlane_records.json, or chip_swimlane_records.bin (told by its content).
    input: PathBuf,
    /// Output trace (default: merged_swimlane_<YYYYmmdd_HHMMSS>.json beside the input).
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Kernel names from this name map (`name_map_<label>.json`); wins over -k.
    #[arg(long, value_name = "NAME_MAP")]
    func_names: Option<PathBuf>,
    /// Kernel names from this kernel_config.py (read, never executed).
    #[arg(short = 'k', long, value_name = "KERNEL_CONFIG")]
    kernel_config: Option<PathBuf>,
    /// The dependency graph (default: deps.bin or deps.json beside the input, if any).
    #[arg(long, value_name = "DEPS")]
    deps_json: Option<PathBuf>,
    /// Add the eight oh_* scheduler-overhead counter tracks (per-engine idle / ready /
    /// overhead, all_overhead, has_overhead) under AICPU Scheduler; needs deps.json.
    #[arg(long)]
    overhead: bool,
}

/// Output format of `pto deps-viewer`.
#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// deps_viewer.txt.
    Text,
    /// deps_viewer.html.
    Html,
}

/// `pto deps-viewer --edge-mode`.
#[derive(Clone, Copy, ValueEnum)]
#[value(rename_all = "snake_case")]
enum EdgeModeArg {
    /// Every pair.
    Full,
    /// The transitive reduction; pairs with a creator annotation are kept.
    Reduced,
    /// Only the pairs `reduced` drops.
    Omitted,
    /// The reduction, creator pairs dropped only when dataflow proves them implied.
    ReducedDataflow,
    /// Only the pairs `reduced_dataflow` drops.
    OmittedDataflow,
}

/// Layout engine of `pto deps-viewer --format html`.
#[derive(Clone, Copy, ValueEnum)]
enum EngineArg {
    /// Graphviz dot (hierarchical).
    Dot,
    /// Graphviz sfdp.
    Sfdp,
    /// Graphviz fdp.
    Fdp,
    /// Graphviz neato.
    Neato,
    /// Graphviz circo.
    Circo,
    /// Graphviz twopi.
    Twopi,
    /// The built-in layered layout (no Graphviz needed).
    Builtin,
}

/// `pto deps-viewer`.
#[derive(clap::Args)]
pub struct DepsArgs {
    /// The deps.json, or deps.bin (told by its content).
    input: PathBuf,
    /// Output file (default: deps_viewer.txt or deps_viewer.html beside the input;
    /// `deps_viewer_<mode>.*` for a reduction mode).
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Which (pred, succ) pairs to show: every one; the transitive reduction (creator
    /// pairs kept); only what it drops; the reduction whose creator pairs go only when
    /// TensorMap dataflow proves them implied; only what that drops. HTML keeps the full
    /// layout and paints unselected edges in the background colour.
    #[arg(long, value_enum, default_value = "full")]
    edge_mode: EdgeModeArg,
    /// Text summary or interactive HTML graph.
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    /// HTML layout engine (default: dot when on PATH and the graph has at most 300 nodes,
    /// given 10 s, else builtin); a missing Graphviz engine, or one still running after
    /// --layout-timeout, falls back to builtin with a warning.
    #[arg(long, value_enum)]
    engine: Option<EngineArg>,
    /// Seconds a Graphviz engine asked for with --engine may run before the built-in
    /// layout is used instead (0: no limit).
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    layout_timeout: f64,
    /// Kernel names from this name map (default: the newest name_map_*.json beside the input).
    #[arg(long, value_name = "NAME_MAP")]
    func_names: Option<PathBuf>,
    /// HTML of a graph with more than N nodes is the level-of-detail page: one node per
    /// ring and kernel, with dependency counts on the edges, opened into ranges of tasks
    /// and tasks on click (default: 10000; 0: always).
    #[arg(long, value_name = "N")]
    lod_above: Option<usize>,
}

/// `pto scope-stats-plot`.
#[derive(clap::Args)]
pub struct ScopeStatsArgs {
    /// The scope_stats.jsonl.
    input: PathBuf,
    /// Output page (default: scope_stats.html beside the input).
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
}

/// Export format of `pto dump-viewer --export`.
#[derive(Clone, Copy, ValueEnum)]
enum ExportArg {
    /// NumPy .npy files.
    Npy,
    /// Text files with an overview grid and per-element detail.
    Txt,
    /// torch .pt files (torch.save's format, for torch.load).
    Pt,
}

/// Stage filter.
#[derive(Clone, Copy, ValueEnum)]
enum StageArg {
    /// before_dispatch.
    Before,
    /// after_completion.
    After,
}

/// Role filter.
#[derive(Clone, Copy, ValueEnum)]
enum RoleArg {
    /// input.
    Input,
    /// output.
    Output,
    /// inout.
    Inout,
}

/// `pto dump-viewer`.
#[derive(clap::Args)]
pub struct DumpArgs {
    /// The args_dump directory (a dfx_outputs directory holding args_dump/ also works).
    dir: PathBuf,
    /// List the selected records (the default).
    #[arg(long, conflicts_with = "export")]
    list: bool,
    /// Export the selected records as files.
    #[arg(long)]
    export: bool,
    /// Export format.
    #[arg(long, value_enum, default_value = "npy", requires = "export")]
    format: ExportArg,
    /// Only this task (as listed, e.g. 0x0000000100000001; decimal works too).
    #[arg(short, long, value_name = "TASK_ID")]
    task: Option<String>,
    /// Only this stage.
    #[arg(short, long, value_enum)]
    stage: Option<StageArg>,
    /// Only this role.
    #[arg(short, long, value_enum)]
    role: Option<RoleArg>,
    /// Only this arg index.
    #[arg(short, long, value_name = "ARG_INDEX")]
    arg: Option<u32>,
    /// Only the record with this idx (the listing's first column).
    #[arg(short, long, value_name = "IDX")]
    index: Option<usize>,
}

/// `pto critical-path`.
#[derive(clap::Args)]
pub struct CriticalPathArgs {
    /// The run's diagnostics directory (dfx_outputs/) holding deps.json.
    dir: PathBuf,
}

fn warn_all(warnings: &[String]) {
    for w in warnings {
        eprintln!("warning: {}", printable(w));
    }
}

/// Runs one viewer command.
pub fn run(cmd: &ViewerCommand) -> anyhow::Result<ExitCode> {
    let res = match cmd {
        ViewerCommand::SwimlaneConverter(a) => swimlane(a),
        ViewerCommand::DepsViewer(a) => deps(a),
        ViewerCommand::ScopeStatsPlot(a) => scope_stats(a),
        ViewerCommand::DumpViewer(a) => dump(a),
        ViewerCommand::CriticalPath(a) => critical(a),
        ViewerCommand::DfxExport(a) => export(a),
    };
    match res {
        Err(Failure::Tool(e @ ToolError::NoMatch { .. })) => {
            eprintln!("error: {}", printable(&e.to_string()));
            Ok(ExitCode::from(1))
        }
        Err(Failure::Tool(e)) => Err(e.into()),
        Err(Failure::Other(e)) => Err(e),
        Ok(()) => Ok(ExitCode::SUCCESS),
    }
}

/// A tool error (kept typed to pick the exit code) or anything else.
enum Failure {
    Tool(ToolError),
    Other(anyhow::Error),
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Self {
        Self::Tool(e)
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Self::Other(e.into())
    }
}

fn swimlane(a: &SwimlaneArgs) -> Result<(), Failure> {
    let report = swimlane_converter::convert_with(
        &ConvertOptions {
            input: &a.input,
            output: a.output.as_deref(),
            deps: a.deps_json.as_deref(),
            func_names: a.func_names.as_deref(),
            kernel_config: a.kernel_config.as_deref(),
        },
        ConvertExtras {
            overhead: a.overhead,
        },
    )?;
    warn_all(&report.warnings);
    let mut out = std::io::stdout().lock();
    write!(out, "{}", printable(&report.summary.render()))?;
    writeln!(
        out,
        "Wrote {} ({} task rows, {} events, {} flows); open it in https://ui.perfetto.dev or chrome://tracing",
        report.output.display(),
        report.n_tasks,
        report.n_events,
        report.n_flows
    )?;
    if let Some(pipes) = &report.pipes {
        writeln!(
            out,
            "Pipe View (predicted): {} pipe intervals from {}",
            report.n_pipe_slices,
            pipes.display()
        )?;
    }
    if a.overhead && report.n_overhead_samples > 0 {
        writeln!(
            out,
            "Overhead Analysis: {} counter points (8 tracks)",
            report.n_overhead_samples
        )?;
    }
    Ok(())
}

/// The layout `--engine` and `--layout-timeout` ask for.
fn layout_choice(a: &DepsArgs) -> Result<LayoutChoice, Failure> {
    if !(a.layout_timeout.is_finite() && a.layout_timeout >= 0.0) {
        return Err(Failure::Other(anyhow::anyhow!(
            "`--layout-timeout {}` is not a number of seconds >= 0 (0: no limit)",
            a.layout_timeout
        )));
    }
    let budget = (a.layout_timeout > 0.0).then(|| Duration::from_secs_f64(a.layout_timeout));
    let engine = match a.engine {
        None => return Ok(LayoutChoice::Auto),
        Some(EngineArg::Builtin) => return Ok(LayoutChoice::Builtin),
        Some(EngineArg::Dot) => Engine::Dot,
        Some(EngineArg::Sfdp) => Engine::Sfdp,
        Some(EngineArg::Fdp) => Engine::Fdp,
        Some(EngineArg::Neato) => Engine::Neato,
        Some(EngineArg::Circo) => Engine::Circo,
        Some(EngineArg::Twopi) => Engine::Twopi,
    };
    Ok(LayoutChoice::Graphviz { engine, budget })
}

fn deps(a: &DepsArgs) -> Result<(), Failure> {
    let format = match a.format {
        FormatArg::Text => Format::Text,
        FormatArg::Html => Format::Html,
    };
    if format == Format::Text && a.engine.is_some() {
        return Err(Failure::Other(anyhow::anyhow!(
            "`--engine` applies to `--format html` only"
        )));
    }
    if format == Format::Text && a.lod_above.is_some() {
        return Err(Failure::Other(anyhow::anyhow!(
            "`--lod-above` applies to `--format html` only"
        )));
    }
    let lod_above = a.lod_above.unwrap_or(deps_viewer::DEFAULT_LOD_ABOVE);
    let layout = layout_choice(a)?;
    let report = deps_viewer::view_with_lod(
        &DepsViewerOptions {
            input: &a.input,
            output: a.output.as_deref(),
            format,
            layout,
            func_names: a.func_names.as_deref(),
            edge_mode: match a.edge_mode {
                EdgeModeArg::Full => EdgeMode::Full,
                EdgeModeArg::Reduced => EdgeMode::Reduced,
                EdgeModeArg::Omitted => EdgeMode::Omitted,
                EdgeModeArg::ReducedDataflow => EdgeMode::ReducedDataflow,
                EdgeModeArg::OmittedDataflow => EdgeMode::OmittedDataflow,
            },
        },
        lod_above,
    )?;
    warn_all(&report.warnings);
    let mut out = std::io::stdout().lock();
    if let Some(r) = &report.reduction {
        writeln!(out, "{}", r.headline())?;
        for e in &r.removed {
            writeln!(out, "  - {}", printable(e))?;
        }
    }
    write!(out, "{}", report.summary_line())?;
    if let Some(l) = &report.layout {
        write!(out, "; layout: {l}")?;
    }
    match report.aggregates {
        Some(n) => writeln!(
            out,
            "; level of detail: {n} aggregates (more than --lod-above {lod_above} nodes)"
        )?,
        None => writeln!(out)?,
    }
    Ok(())
}

fn scope_stats(a: &ScopeStatsArgs) -> Result<(), Failure> {
    let report = scope_stats_plot::plot(&a.input, a.output.as_deref())?;
    warn_all(&report.warnings);
    let rings: Vec<String> = report.rings.iter().map(usize::to_string).collect();
    writeln!(
        std::io::stdout().lock(),
        "Wrote {} ({} records, {} scopes, rings [{}])",
        report.output.display(),
        report.n_records,
        report.n_scopes,
        rings.join(", ")
    )?;
    Ok(())
}

fn dump(a: &DumpArgs) -> Result<(), Failure> {
    let loaded = dump_viewer::load(&a.dir)?;
    warn_all(&loaded.warnings);
    let filter = DumpFilter {
        task: a.task.as_deref(),
        stage: a.stage.map(|s| match s {
            StageArg::Before => DumpStage::BeforeDispatch,
            StageArg::After => DumpStage::AfterCompletion,
        }),
        role: a.role.map(|r| match r {
            RoleArg::Input => ArgRole::Input,
            RoleArg::Output => ArgRole::Output,
            RoleArg::Inout => ArgRole::Inout,
        }),
        arg_index: a.arg,
        index: a.index,
    };
    let chosen = dump_viewer::select(&loaded, &filter)?;
    let mut out = std::io::stdout().lock();
    if !a.export {
        write!(
            out,
            "{}",
            printable(&dump_viewer::render_list(&loaded, &chosen))
        )?;
        return Ok(());
    }
    let format = match a.format {
        ExportArg::Npy => ExportFormat::Npy,
        ExportArg::Txt => ExportFormat::Txt,
        ExportArg::Pt => ExportFormat::Pt,
    };
    let report = dump_viewer::export(&loaded, &chosen, format)?;
    warn_all(&report.warnings);
    let sub = format.subdir();
    writeln!(
        out,
        "Wrote {} file(s) to {}",
        report.files.len(),
        loaded.dir.join(sub).display()
    )?;
    Ok(())
}

fn export(a: &DfxExportArgs) -> Result<(), Failure> {
    let schema = a
        .dfx_schema
        .as_deref()
        .map(str::parse::<pto_dfx::DfxSchema>)
        .transpose()
        .map_err(|e| Failure::Other(e.into()))?;
    let report = dfx_export::export(&a.dir, schema)?;
    let mut out = std::io::stdout().lock();
    for f in &report.written {
        writeln!(out, "Wrote {}", f.display())?;
    }
    Ok(())
}

fn critical(a: &CriticalPathArgs) -> Result<(), Failure> {
    let report = critical_path::analyze(&a.dir)?;
    warn_all(&report.warnings);
    let mut out = std::io::stdout().lock();
    write!(out, "{}", report.markdown)?;
    writeln!(out, "\nWrote {}", report.output.display())?;
    for f in &report.cpm_files {
        writeln!(out, "Wrote {}", f.display())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::DepsArgs;

    /// `--lod-above`'s help states the default, which lives in `pto-dfx-view`.
    #[test]
    fn lod_above_help_names_the_library_default() {
        let cmd = <DepsArgs as clap::Args>::augment_args(clap::Command::new("deps-viewer"));
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_id() == "lod_above")
            .unwrap();
        let help = arg.get_long_help().or(arg.get_help()).unwrap().to_string();
        let default = format!(
            "(default: {}; 0: always)",
            pto_dfx_view::deps_viewer::DEFAULT_LOD_ABOVE
        );
        assert!(help.contains(&default), "{help}");
    }
}
