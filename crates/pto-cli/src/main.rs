//! `pto`: run, replay and diagnose PTO task-graph programs on a simulated Ascend chip.
//!
//! Exit codes: 0 success, 1 a clean "no" (golden mismatch), 2 usage or infrastructure error.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use pto_runner::demo::{example_names, run_demo, DemoResult};
use pto_runner::dfx_switches::{DfxSwitch, SwitchKind, DFX_SWITCHES};
use pto_runner::{ReplayOptions, RingValue, RunConfig};

mod viewers;

/// Run, replay and diagnose PTO task-graph programs on a simulated Ascend chip.
///
/// Exit codes: 0 success, 1 golden mismatch, 2 usage or infrastructure error.
#[derive(Parser)]
#[command(name = "pto", version = version())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an existing `build_output/<dir>/` (a single-chip build) and optionally validate it.
    Replay(ReplayArgs),
    /// Write the bundled examples, run and validate each, and print a summary.
    Demo(DemoArgs),
    /// Benchmark a build directory: per-round device and host times with statistics.
    Bench(BenchArgs),
    /// Delete a build directory's cached binaries and stamps (sources are kept).
    InvalidateCache {
        /// The build directory (its next_levels/*/ sub-builds too).
        dir: PathBuf,
    },
    /// Internal: a chip process serving runs for `pto` (started by `pto` itself).
    #[command(name = "__chip-worker", hide = true)]
    ChipWorker,
    /// Internal: the graph pass of the two-pass swimlane (run by `pto` itself).
    #[command(name = "__dep-gen-capture", hide = true)]
    DepGenCapture {
        /// The spec written by the timing pass.
        spec: PathBuf,
    },
    #[command(flatten)]
    Viewer(viewers::ViewerCommand),
}

/// The five diagnostics; each writes under `<build>/dfx_outputs/`.
#[derive(clap::Args)]
struct DfxArgs {
    #[command(flatten)]
    switches: SwitchArgs,
    /// How the swimlane records and the dependency graph are written: `json` (Simpler's
    /// chip_swimlane_records.json, deps.json) or `compact` (.bin files, a fraction of the
    /// bytes and time; `pto dfx-export DIR` writes the same JSON later, and every viewer
    /// reads them). Default: $PTO_DFX_FORMAT, else json.
    #[arg(long, value_name = "FORMAT", value_parser = ["json", "compact"])]
    dfx_format: Option<String>,
    /// Which generation of Simpler's diagnostic files to write: `2026-08` (deps.json
    /// without `runtime`, scope_stats with `version`, aicpu_tasks) or `2026-09` (`runtime`
    /// keys, `run_epoch`, scheduler_tasks / scheduler_records). Default: $PTO_DFX_SCHEMA,
    /// else the generation of the build directory's sources.
    #[arg(long, value_name = "GENERATION", value_parser = ["2026-08", "2026-09"])]
    dfx_schema: Option<String>,
    #[command(flatten)]
    timing: TimingArg,
}

/// `--timing`, shared by the commands that run a program with diagnostics and `bench`.
#[derive(clap::Args)]
struct TimingArg {
    /// Which time the swimlane and the reports hold: `host` (the simulator's own time) or
    /// `predicted` (the timing model's device cycles, docs/TIMING.md). Default: $PTO_TIMING,
    /// else host.
    #[arg(long, value_name = "TIMING", value_parser = ["host", "predicted"])]
    timing: Option<String>,
}

impl TimingArg {
    /// Whether the model's time is asked for; `env_timing` is `PTO_TIMING`'s choice.
    fn predicted(&self, env_timing: bool) -> bool {
        self.timing
            .as_deref()
            .map_or(env_timing, |t| t == "predicted")
    }
}

impl DfxArgs {
    /// The options; `env_timing` is `PTO_TIMING`'s choice, used without `--timing`.
    fn options(&self, env_timing: bool) -> pto_runner::DfxOptions {
        pto_runner::DfxOptions {
            predicted_timing: self.timing.predicted(env_timing),
            ..self.switches.0
        }
    }
}

/// The diagnostics switches' flags, one per row of [`DFX_SWITCHES`] (clap's builder API:
/// the table, not a struct, declares them).
struct SwitchArgs(pto_runner::DfxOptions);

/// The flag of one switch.
fn switch_arg(s: &DfxSwitch) -> clap::Arg {
    let arg = clap::Arg::new(s.name).long(s.cli_flag).help(s.cli_help());
    match s.kind {
        SwitchKind::Flag => arg.action(clap::ArgAction::SetTrue),
        SwitchKind::Level {
            max,
            bare,
            value_name,
            ..
        } => {
            let arg = arg
                .value_name(value_name)
                .num_args(0..=1)
                .default_missing_value(bare.to_string());
            if max == u32::MAX {
                arg.value_parser(clap::value_parser!(u32))
            } else {
                arg.value_parser(clap::value_parser!(u32).range(0..=i64::from(max)))
            }
        }
    }
}

impl clap::FromArgMatches for SwitchArgs {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let mut options = pto_runner::DfxOptions::default();
        for s in &DFX_SWITCHES {
            let value = match s.kind {
                SwitchKind::Flag => u32::from(m.get_flag(s.name)),
                SwitchKind::Level { .. } => m.get_one::<u32>(s.name).copied().unwrap_or(0),
            };
            (s.set)(&mut options, value);
        }
        Ok(SwitchArgs(options))
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for SwitchArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.args(DFX_SWITCHES.iter().map(switch_arg))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// Options shared by commands that run a program.
#[derive(clap::Args)]
struct RunArgs {
    /// Platform: a2a3sim (default), a5sim, cpu; a2a3 / a5 need real hardware.
    #[arg(long, default_value = "a2a3sim")]
    platform: String,
    /// Log level: debug, info, timing, warn, error or null. Default: $PYPTO_RUNTIME_LOG, else warn.
    #[arg(long, value_name = "LEVEL")]
    log_level: Option<String>,
    /// Task window slots per scope-depth ring: N, or N0,N1,N2,N3 (0 keeps the default).
    #[arg(long, value_name = "N", value_parser = parse_ring)]
    ring_task_window: Option<RingValue>,
    /// Heap bytes per ring: N, or N0,N1,N2,N3.
    #[arg(long, value_name = "BYTES", value_parser = parse_ring)]
    ring_heap: Option<RingValue>,
    /// Dependency-list pool entries per ring: N, or N0,N1,N2,N3.
    #[arg(long, value_name = "N", value_parser = parse_ring)]
    ring_dep_pool: Option<RingValue>,
    /// A run fails when no task finishes for this long while tasks run (default 10000).
    #[arg(long, value_name = "MS")]
    scheduler_timeout_ms: Option<u64>,
    /// Run the chip inside this process instead of a child process (faster start, but a
    /// crashing kernel takes `pto` down). Also: PTO_IN_PROCESS=1.
    #[arg(long)]
    in_process: bool,
}

fn parse_ring(text: &str) -> Result<RingValue, String> {
    let values: Result<Vec<u64>, _> = text.split(',').map(|v| v.trim().parse::<u64>()).collect();
    match values {
        Ok(v) if v.len() == 1 => Ok(RingValue::Scalar(v[0])),
        Ok(v) => Ok(RingValue::PerRing(v)),
        Err(_) => Err(format!(
            "`{text}` is not a number or a comma-separated list of four numbers"
        )),
    }
}

/// The help of `pto replay DIR`: where DIR goes beside the switches with an optional value.
fn dir_help() -> String {
    let levels: Vec<String> = DFX_SWITCHES
        .iter()
        .filter(|s| matches!(s.kind, SwitchKind::Level { .. }))
        .map(|s| format!("`--{}`", s.cli_flag))
        .collect();
    let (last, rest) = levels.split_last().expect("the table has levels");
    format!(
        "The build directory (contains kernel_config.py). Put it before a bare {} or {last}, or write their level as `--{}=N`",
        rest.join(", "),
        DFX_SWITCHES[0].cli_flag
    )
}

#[derive(clap::Args)]
struct ReplayArgs {
    // The build directory; the help names the switches that take a value.
    #[arg(help = dir_help())]
    dir: PathBuf,
    /// Compare every output with `data/out/<name>.pt` or `.npy` (torch.save or numpy.save)
    /// and write `data/actual/<name>` in the same format.
    #[arg(long)]
    validate: bool,
    /// Reuse cached binaries when they match instead of recompiling.
    #[arg(long)]
    no_recompile: bool,
    /// Do not regenerate kernel .cpp bodies from edited .pto files.
    #[arg(long)]
    no_rebuild_from_pto: bool,
    #[command(flatten)]
    dfx: DfxArgs,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// The build directory (inputs from data/in/).
    dir: PathBuf,
    /// Measured rounds.
    #[arg(long, default_value_t = 100)]
    rounds: usize,
    /// Discarded warm-up rounds.
    #[arg(long, default_value_t = 3)]
    warmup: usize,
    /// Print the statistics as JSON (stdout).
    #[arg(long)]
    json: bool,
    /// `predicted`: every round runs twice, bare and with the timing model, and the
    /// predicted device time is reported next to both host times.
    #[command(flatten)]
    timing: TimingArg,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Args)]
struct DemoArgs {
    /// Where to write the examples (default: a fresh directory under the system temp dir).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    run: RunArgs,
}

/// `0.1.0+<commit>` for a build of a clean checkout, else the version and a warning that
/// cached binaries are never trusted.
fn version() -> &'static str {
    pto_runner::runtime_revision().unwrap_or(concat!(
        env!("CARGO_PKG_VERSION"),
        " (built from a modified checkout: no runtime identity, cached binaries are always rebuilt)"
    ))
}

/// PyPTO's level names mapped onto a tracing filter.
fn init_logging(level: Option<&str>) -> anyhow::Result<()> {
    let level = match level {
        Some(l) => l.to_string(),
        None => std::env::var("PYPTO_RUNTIME_LOG").unwrap_or_else(|_| "warn".to_string()),
    };
    let filter = pto_runner::log_level::tracing_filter(&level)?;
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_ansi(pto_runner::log_level::stderr_color())
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
    Ok(())
}

fn run_config(args: &RunArgs) -> anyhow::Result<RunConfig> {
    let mut config = RunConfig::new(Some(&args.platform))?;
    config.ring_task_window = args.ring_task_window.clone();
    config.ring_heap = args.ring_heap.clone();
    config.ring_dep_pool = args.ring_dep_pool.clone();
    config.scheduler_timeout = args
        .scheduler_timeout_ms
        .map(std::time::Duration::from_millis);
    if args.in_process {
        config.in_process = true;
    }
    config.validate()?;
    Ok(config)
}

fn cmd_replay(args: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let mut config = run_config(&args.run)?;
    config.dfx = args.dfx.options(config.dfx.predicted_timing);
    if let Some(f) = &args.dfx.dfx_format {
        config.dfx_format = pto_runner::config::DfxFormat::parse(f)?;
    }
    if let Some(g) = &args.dfx.dfx_schema {
        config.dfx_schema = Some(pto_runner::config::parse_dfx_schema(g, "--dfx-schema")?);
    }
    let options = ReplayOptions {
        validate: args.validate,
        recompile: !args.no_recompile,
        rebuild_from_pto: !args.no_rebuild_from_pto,
    };
    // An L3 build's host orchestration is Python: the installed pypto package runs it.
    if pto_runner::l3::python_host::is_l3(&args.dir) {
        let code = pto_runner::l3::python_host::replay(&args.dir, &config, &options)?;
        return Ok(ExitCode::from(code.clamp(0, 255) as u8));
    }
    let outcome =
        pto_runner::replay_with(&args.dir, &config, &options, &mut |line| println!("{line}"))?;
    let r = &outcome.report;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}: {} tasks on {} in {:.2} ms (device {:.2} ms)",
        args.dir.display(),
        r.n_tasks,
        r.platform,
        r.wall.as_secs_f64() * 1e3,
        r.device_time.as_secs_f64() * 1e3
    )?;
    for w in &outcome.dfx.warnings {
        eprintln!("warning: {}", pto_dfx::printable::printable(w));
    }
    if !outcome.dfx.files.is_empty() {
        writeln!(
            out,
            "DFX artifacts under {}:",
            outcome.dir.join("dfx_outputs").display()
        )?;
        for f in &outcome.dfx.files {
            writeln!(out, "  {}", f.display())?;
        }
        if !outcome.dfx.hints.is_empty() {
            writeln!(out, "view them with:")?;
            for h in &outcome.dfx.hints {
                writeln!(out, "  {h}")?;
            }
        }
    }
    if !args.validate {
        return Ok(ExitCode::SUCCESS);
    }
    for c in &outcome.checks {
        let cmp = &c.comparison;
        if cmp.passed() {
            writeln!(
                out,
                "  {}: PASS ({}/{} elements matched)",
                c.name, cmp.n_total, cmp.n_total
            )?;
            if let Some(w) = c.untouched_warning() {
                writeln!(out, "  {w}")?;
            }
        } else {
            writeln!(out, "  {}: FAIL\n{}", c.name, indent(&cmp.report(&c.name)))?;
        }
    }
    if outcome.checks.iter().any(|c| c.actual_path.is_some()) {
        let actual_dir = outcome.dir.join("data").join("actual");
        writeln!(out, "actual outputs written to {}", actual_dir.display())?;
    } else if !outcome.checks.is_empty() {
        writeln!(
            out,
            "actual outputs not written: {} is read-only",
            outcome.dir.display()
        )?;
    }
    if outcome.passed() {
        writeln!(out, "PASS")?;
        Ok(ExitCode::SUCCESS)
    } else {
        writeln!(out, "FAIL: golden mismatch")?;
        Ok(ExitCode::from(1))
    }
}

fn cmd_bench(args: &BenchArgs) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal as _;
    let config = run_config(&args.run)?;
    let build = pto_runner::load_for(&args.dir, Some(config.platform()))?;
    let mut params = pto_runner::inputs::bind_inputs(&args.dir, &build.meta)?;
    let show_progress = std::io::stderr().is_terminal() && !args.json;
    let mut progress = |done: usize, total: usize| {
        if show_progress {
            let width = 30;
            let filled = done * width / total.max(1);
            eprint!(
                "\r[{}{}] {done}/{total}",
                "#".repeat(filled),
                " ".repeat(width - filled)
            );
            if done == total {
                eprintln!();
            }
        }
    };
    let (rounds, warmup) = (args.rounds, args.warmup);
    let mut out = std::io::stdout().lock();
    if args.timing.predicted(config.dfx.predicted_timing) {
        let b = pto_runner::benchmark_predicted(
            &build,
            &mut params,
            &config,
            rounds,
            warmup,
            &mut progress,
        )?;
        if args.json {
            writeln!(out, "{}", b.to_json())?;
            return Ok(ExitCode::SUCCESS);
        }
        write_bench_header(&mut out, args, &b.bare, &config)?;
        writeln!(out, "{}", b.summary)?;
        writeln!(out, "bare replay:\n{}", indent(&format!("{:#}", b.bare)))?;
        writeln!(
            out,
            "with --timing predicted:\n{}",
            indent(&format!("{:#}", b.predicted))
        )?;
        writeln!(
            out,
            "host median with the model / without: {:.2}x",
            b.overhead()
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let stats = pto_runner::benchmark(&build, &mut params, &config, rounds, warmup, &mut progress)?;
    if args.json {
        writeln!(out, "{}", stats.to_json_string())?;
    } else {
        write_bench_header(&mut out, args, &stats, &config)?;
        writeln!(out, "{stats:#}")?;
        let d = stats.device_summary();
        writeln!(out, "device p90={:.3} us p99={:.3} us", d.p90, d.p99)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_bench_header(
    out: &mut impl std::io::Write,
    args: &BenchArgs,
    stats: &pto_runner::BenchmarkStats,
    config: &pto_runner::RunConfig,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} rounds after {} warm-up on {}",
        args.dir.display(),
        stats.rounds,
        stats.warmup,
        config.platform()
    )
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn cmd_demo(args: &DemoArgs) -> anyhow::Result<ExitCode> {
    let config = run_config(&args.run)?;
    let out_dir = match &args.out {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("pto-demo-{}", std::process::id())),
    };
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("creating `{}`", out_dir.display()))?;
    eprintln!(
        "writing {} examples to {}",
        example_names().len(),
        out_dir.display()
    );
    let rows = run_demo(&out_dir, &config)?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<22} {:>8} {:>12}  result",
        "example", "tasks", "wall (ms)"
    )?;
    let mut all_ok = true;
    let mut any_error = false;
    let mut skipped = None;
    for row in &rows {
        let result = match &row.result {
            DemoResult::Passed => "PASS".to_string(),
            DemoResult::Mismatch => {
                all_ok = false;
                "FAIL (golden mismatch)".to_string()
            }
            DemoResult::Error(e) => {
                all_ok = false;
                any_error = true;
                format!("ERROR: {e}")
            }
            DemoResult::Skipped(why) => {
                skipped = Some(why);
                "SKIPPED (see below)".to_string()
            }
        };
        writeln!(
            out,
            "{:<22} {:>8} {:>12.2}  {result}",
            row.name,
            row.n_tasks,
            row.wall.as_secs_f64() * 1e3
        )?;
    }
    if let Some(why) = skipped {
        writeln!(out, "L3 examples skipped: {why}")?;
    }
    writeln!(
        out,
        "examples are in {}; replay one with `pto replay {} --validate`",
        out_dir.display(),
        example_path(&out_dir, &rows)
    )?;
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else if any_error {
        ExitCode::from(2)
    } else {
        ExitCode::from(1)
    })
}

/// Compiles name their unit on stderr: each one on a terminal, else one still running after
/// `SLOW_COMPILE` (docs/DECISIONS.md); `PTO_COMPILE_PROGRESS` overrides.
fn announce_compiles() -> Result<(), String> {
    use std::io::IsTerminal as _;
    let default = if std::io::stderr().is_terminal() {
        pto_toolchain::Progress::EachUnit
    } else {
        pto_toolchain::Progress::Slow(pto_toolchain::progress::SLOW_COMPILE)
    };
    pto_toolchain::set_progress(pto_toolchain::Progress::from_env_or(default)?);
    Ok(())
}

fn example_path(out_dir: &Path, rows: &[pto_runner::demo::DemoRow]) -> String {
    rows.first()
        .map(|r| out_dir.join(&r.name).display().to_string())
        .unwrap_or_default()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let log_level = match &cli.command {
        Command::Replay(a) => a.run.log_level.clone(),
        Command::Demo(a) => a.run.log_level.clone(),
        Command::Bench(a) => a.run.log_level.clone(),
        Command::InvalidateCache { .. }
        | Command::DepGenCapture { .. }
        | Command::ChipWorker
        | Command::Viewer(_) => None,
    };
    if matches!(cli.command, Command::ChipWorker) {
        let _ = init_logging(None);
        return ExitCode::from(pto_runner::chip_process::serve().clamp(0, 255) as u8);
    }
    // Runs isolate the chip in a child process: `pto __chip-worker`.
    if let Ok(exe) = std::env::current_exe() {
        pto_runner::chip_process::set_worker_command(vec![
            exe.to_string_lossy().into_owned(),
            "__chip-worker".to_string(),
        ]);
    }
    if let Err(e) = init_logging(log_level.as_deref()) {
        eprintln!("error: {}", pto_dfx::printable::printable(&error_text(&e)));
        return ExitCode::from(2);
    }
    if let Err(e) = announce_compiles() {
        eprintln!("error: {}", pto_dfx::printable::printable(&e));
        return ExitCode::from(2);
    }
    if let Some(level) = &log_level {
        // Chip processes inherit the level through the environment (set before any thread).
        std::env::set_var("PYPTO_RUNTIME_LOG", level);
    }
    if let Command::Replay(ReplayArgs {
        dfx: DfxArgs {
            dfx_format: Some(format),
            ..
        },
        ..
    }) = &cli.command
    {
        // So do chip processes and the dep_gen capture of a two-pass swimlane the format.
        std::env::set_var(pto_runner::config::DFX_FORMAT_ENV, format);
    }
    if let Command::Replay(ReplayArgs {
        dfx: DfxArgs {
            dfx_schema: Some(schema),
            ..
        },
        ..
    }) = &cli.command
    {
        // Chip processes and the dep_gen capture write the same generation.
        std::env::set_var(pto_runner::config::DFX_SCHEMA_ENV, schema);
    }
    let res = match &cli.command {
        Command::Viewer(cmd) => viewers::run(cmd),
        Command::Replay(a) => cmd_replay(a),
        Command::Demo(a) => cmd_demo(a),
        Command::Bench(a) => cmd_bench(a),
        Command::InvalidateCache { dir } => pto_runner::lifecycle::invalidate_binary_cache(dir)
            .map(|line| {
                println!("{line}");
                ExitCode::SUCCESS
            })
            .map_err(anyhow::Error::from),
        Command::ChipWorker => Ok(ExitCode::SUCCESS),
        Command::DepGenCapture { spec } => {
            println!("[swimlane:dep_gen subprocess] capturing the task dependency graph for the swimlane; the following compile/run output is for deps.json only (timing is discarded).");
            pto_runner::two_pass::capture_main(spec)
                .map(|()| ExitCode::SUCCESS)
                .map_err(anyhow::Error::from)
        }
    };
    // Idle chip processes are stopped and reaped before `pto` exits, so none outlives
    // it and their CPU time is counted as this process's children's.
    pto_runner::chip_process::shutdown_all();
    // Replaced diagnostics set aside by this process's runs are freed before it exits (the
    // run itself did not wait for them), so none is left for the next run's sweep.
    pto_runner::dfx_publish::finish_freeing();
    match res {
        Ok(code) => code,
        Err(e) => {
            if let Some(io) = e.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("error: {}", pto_dfx::printable::printable(&error_text(&e)));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes, each cause once: most of our error types already put their
/// source into their own text (`cannot read <path>: <os error>`), so printing the whole
/// chain (`{:#}`) repeated it (`…: No space left on device (os error 28): No space left on
/// device (os error 28)`). A cause whose text the message already holds is left out.
fn error_text(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::error_text;

    /// ENOSPC, a bad PTO_CACHE_DIR and `.pt` errors printed their cause twice.
    #[test]
    fn an_error_that_holds_its_source_prints_it_once() {
        let e = anyhow::Error::from(pto_runner::RunnerError::Io {
            action: "writing",
            path: "/x/f".into(),
            source: std::io::Error::from_raw_os_error(28),
        });
        let text = error_text(&e);
        assert_eq!(text.matches("os error 28").count(), 1, "{text}");
        assert!(text.starts_with("writing `/x/f`: "), "{text}");
        // A context whose text does not hold the cause still shows it.
        let e = anyhow::Error::from(std::io::Error::from_raw_os_error(2)).context("reading x");
        assert_eq!(
            error_text(&e),
            format!("reading x: {}", std::io::Error::from_raw_os_error(2))
        );
    }
}
