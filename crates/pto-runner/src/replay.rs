//! `replay`: run an existing single-chip build directory, optionally validate it against its
//! golden data.

use std::path::{Path, PathBuf};

use pto_build_output::{
    compare, locate_tensor, read_tensor, read_tolerances, write_tensor, Comparison, ParamDirection,
    Tolerances,
};
use pto_runtime::RunReport;

use crate::build::{load_for, CompileSummary};
use crate::config::RunConfig;
use crate::dfx_output::DfxSummary;
use crate::error::RunnerError;
use crate::execute::ExecuteOutcome;
use crate::inputs::{bind_inputs, BoundParam};

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// Compare outputs with `data/out/<name>.pt` or `.npy` and write `data/actual/<name>`
    /// in the golden's format.
    pub validate: bool,
    /// Recompile (the default): force-invalidate the build's cached binaries first.
    /// Without it, they are reused when the stamp matches (and rebuilt otherwise).
    pub recompile: bool,
    /// Regenerate kernel `.cpp` bodies from edited `.pto` files first (the default).
    pub rebuild_from_pto: bool,
}

impl Default for ReplayOptions {
    fn default() -> ReplayOptions {
        ReplayOptions {
            validate: false,
            recompile: true,
            rebuild_from_pto: true,
        }
    }
}

/// One output's check.
#[derive(Clone, Debug)]
pub struct OutputCheck {
    /// Parameter name.
    pub name: String,
    /// Where the actual output was written (`None`: the build directory is read-only).
    pub actual_path: Option<PathBuf>,
    /// The comparison.
    pub comparison: Comparison,
    /// An `Out` parameter that is all zeros after the run, exactly as it was bound, and that
    /// passed: its golden is zeros too, so the comparison cannot tell whether any task wrote
    /// it (an orchestration that forgot its submit passes). Front ends print
    /// [`OutputCheck::untouched_warning`].
    pub untouched: bool,
}

impl OutputCheck {
    /// The warning for an [`OutputCheck::untouched`] output, naming it.
    pub fn untouched_warning(&self) -> Option<String> {
        self.untouched.then(|| {
            format!(
                "warning: output '{}' is all zeros after the run, as it started, and so is its golden: the comparison passes whether or not any task wrote it; check that the orchestration submits a task writing '{}'",
                self.name, self.name
            )
        })
    }
}

/// What a replay did.
#[derive(Debug)]
pub struct ReplayOutcome {
    /// The build directory.
    pub dir: PathBuf,
    /// The runtime's report.
    pub report: RunReport,
    /// Compilation.
    pub compile: CompileSummary,
    /// Per-output checks (empty unless validating).
    pub checks: Vec<OutputCheck>,
    /// The final parameter values (outputs as computed).
    pub params: Vec<BoundParam>,
    /// Diagnostics written, hints and warnings.
    pub dfx: DfxSummary,
}

impl ReplayOutcome {
    /// Whether every validated output matched (true when not validating).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.comparison.passed())
    }
}

/// Runs `dir` once (see the module docs).
pub fn replay(
    dir: &Path,
    config: &RunConfig,
    options: &ReplayOptions,
) -> Result<ReplayOutcome, RunnerError> {
    replay_with(dir, config, options, &mut |_| {})
}

/// What a front end supplies to [`replay_steps`]: how to load the program, run it and check
/// its outputs. `pto replay` supplies the runner's own steps (inputs from `data/in/`, goldens
/// from `data/out/`); Python's `replay()` supplies the caller's tensors and `golden.py`'s
/// check as callbacks, so the sequence around them is this module's, once.
pub trait ReplayHost {
    /// The front end's error (a runner error converts into it).
    type Error: From<RunnerError>;
    /// Loads (compiles when needed) the program, after the splice and the invalidation.
    fn load(&mut self) -> Result<(), Self::Error>;
    /// Runs it once, after the banner.
    fn run(&mut self, say: &mut dyn FnMut(&str)) -> Result<(), Self::Error>;
    /// Checks its outputs (only with `validate`).
    fn check(&mut self) -> Result<(), Self::Error>;
    /// The platform of a run that will isolate the chip in a child process, or `None` (an
    /// in-process run, or not known before `run`): [`replay_steps`] then starts the chip
    /// process before the splice and the compile checks ([`crate::chip_process::prestart`]),
    /// so that its start-up overlaps them.
    fn isolated_platform(&self) -> Option<pto_runtime::Platform> {
        None
    }
}

/// The banner printed before the run, as PyPTO prints it.
pub const EXECUTE_BANNER: &str = "[execute] running on device...";

/// The replay lifecycle, in the seeds' order, for every front end: refuse what is no build
/// directory (and diagnostics into a directory that cannot take them, when `dfx_on`), the
/// `.pto` -> cpp splice and the forced invalidation ([`crate::lifecycle::prepare`]), then
/// `host`'s load, the banner, its run and, with `options.validate`, its check.
pub fn replay_steps<H: ReplayHost>(
    dir: &Path,
    options: &ReplayOptions,
    dfx_on: bool,
    host: &mut H,
    say: &mut dyn FnMut(&str),
) -> Result<(), H::Error> {
    // Fail on a missing or foreign directory before touching anything.
    let layout = pto_build_output::BuildLayout::detect(dir).map_err(RunnerError::from)?;
    // A build directory this process cannot write still runs: binaries come from the shared
    // object cache and the golden comparison is done without writing `data/actual/`; only
    // what must be written there (diagnostics) is refused before anything runs.
    if dfx_on && !pto_toolchain::binary_cache::dir_writable(dir) {
        return Err(RunnerError::config(format!(
            "{} is not writable, so the diagnostics cannot be written to its dfx_outputs/; copy the build directory somewhere writable, or run without the DFX switches",
            dir.display()
        ))
        .into());
    }
    if let (pto_build_output::BuildLayout::SingleChip, Some(platform)) =
        (&layout, host.isolated_platform())
    {
        crate::chip_process::prestart(dir, platform);
    }
    crate::lifecycle::prepare(dir, options.rebuild_from_pto, options.recompile, say)?;
    host.load()?;
    say(EXECUTE_BANNER);
    host.run(say)?;
    if options.validate {
        host.check()?;
    }
    Ok(())
}

/// [`replay`], with the seeds' progress lines sent to `say` as they happen.
pub fn replay_with(
    dir: &Path,
    config: &RunConfig,
    options: &ReplayOptions,
    say: &mut dyn FnMut(&str),
) -> Result<ReplayOutcome, RunnerError> {
    config.validate()?;
    let mut host = RunnerHost {
        dir,
        config,
        loaded: None,
        ran: None,
        checks: Vec::new(),
    };
    replay_steps(dir, options, config.dfx.writes_files(), &mut host, say)?;
    let (build, params) = host
        .loaded
        .take()
        .expect("replay_steps loads before it runs");
    let ExecuteOutcome { report, dfx } = host.ran.take().expect("replay_steps runs");
    Ok(ReplayOutcome {
        dir: dir.to_path_buf(),
        report,
        compile: build.compile,
        checks: host.checks,
        params,
        dfx,
    })
}

/// The runner's own replay steps: inputs from `data/in/`, goldens from `data/out/`.
struct RunnerHost<'a> {
    dir: &'a Path,
    config: &'a RunConfig,
    loaded: Option<(crate::build::CompiledBuild, Vec<BoundParam>)>,
    ran: Option<ExecuteOutcome>,
    checks: Vec<OutputCheck>,
}

impl ReplayHost for RunnerHost<'_> {
    type Error = RunnerError;

    fn load(&mut self) -> Result<(), RunnerError> {
        let dir = self.dir;
        // The inputs are bound before the compile: a missing or misshapen input is reported
        // at once, not after a long build. Another layout gets the loader's error, which
        // names what to run instead (a multi-orch parent its sub-builds).
        let early = match pto_build_output::BuildLayout::detect(dir)? {
            pto_build_output::BuildLayout::SingleChip => {
                Some(bind_inputs(dir, &crate::build::load_meta(dir)?)?)
            }
            _ => None,
        };
        let build = load_for(dir, Some(self.config.platform()))?;
        let params = match early {
            Some(p) => p,
            None => bind_inputs(dir, &build.meta)?,
        };
        tracing::info!(
            "compiled {} units ({} from the cache) in {:.2} s",
            build.compile.n_units,
            build.compile.n_cached,
            build.compile.elapsed.as_secs_f64()
        );
        self.loaded = Some((build, params));
        Ok(())
    }

    fn run(&mut self, say: &mut dyn FnMut(&str)) -> Result<(), RunnerError> {
        let (build, params) = self.loaded.as_mut().expect("loaded before the run");
        self.ran = Some(build.execute_with(params, self.config, say)?);
        Ok(())
    }

    fn isolated_platform(&self) -> Option<pto_runtime::Platform> {
        (!self.config.in_process).then(|| self.config.platform())
    }

    fn check(&mut self) -> Result<(), RunnerError> {
        let (_, params) = self.loaded.as_ref().expect("loaded before the check");
        let writable = pto_toolchain::binary_cache::dir_writable(self.dir);
        self.checks = validate(self.dir, self.config, params, writable)?;
        Ok(())
    }
}

/// What replay says instead of invalidating a build directory it cannot write.
pub const READ_ONLY_INVALIDATION_MESSAGE: &str =
    "[cpp->.so] the build directory is read-only: nothing to invalidate; binaries are built in the shared object cache and loaded from there";

/// Compares each output with `data/out/<name>.pt` or `.npy` (whichever exists; both is an
/// error) and, when the directory is writable, writes `data/actual/<name>` in the golden's
/// format (`.pt` beside `.pt` goldens, as PyPTO does).
fn validate(
    dir: &Path,
    config: &RunConfig,
    params: &[BoundParam],
    write_actual: bool,
) -> Result<Vec<OutputCheck>, RunnerError> {
    let golden_py = dir.join("golden.py");
    if golden_py.exists() {
        // `__outputs__` naming something that is not an output was ignored silently.
        if let Some(declared) = pto_build_output::read_declared_outputs(&golden_py)? {
            let outputs: Vec<&str> = params
                .iter()
                .filter_map(|p| match p {
                    BoundParam::Tensor {
                        name, direction, ..
                    } if *direction != ParamDirection::In => Some(name.as_str()),
                    _ => None,
                })
                .collect();
            let unknown: Vec<&String> = declared
                .iter()
                .filter(|n| !outputs.contains(&n.as_str()))
                .collect();
            if !unknown.is_empty() {
                return Err(RunnerError::Data {
                    path: golden_py.clone(),
                    message: format!(
                        "__outputs__ names {unknown:?}, which are not outputs of the program (its outputs: {outputs:?}); fix __outputs__"
                    ),
                });
            }
        }
    }
    let tolerances = if golden_py.exists() {
        read_tolerances(&golden_py)?
    } else {
        Tolerances {
            rtol: config.rtol,
            atol: config.atol,
        }
    };
    let mut checks = Vec::new();
    for p in params {
        let BoundParam::Tensor {
            name,
            direction,
            array,
        } = p
        else {
            continue;
        };
        if *direction == ParamDirection::In {
            continue;
        }
        let out_dir = dir.join("data").join("out");
        let Some((golden_path, format)) = locate_tensor(&out_dir, name)? else {
            return Err(RunnerError::Data {
                path: out_dir.join(format!("{name}.npy")),
                message: format!("no golden data for output '{name}' (nor is there data/out/{name}.pt); regenerate the goldens or run without --validate"),
            });
        };
        let expected = read_tensor(&golden_path)?;
        let actual_path =
            write_actual.then(|| format.path_in(&dir.join("data").join("actual"), name));
        if let Some(actual_path) = &actual_path {
            if let Some(parent) = actual_path.parent() {
                std::fs::create_dir_all(parent).map_err(|source| RunnerError::Io {
                    action: "creating",
                    path: parent.to_path_buf(),
                    source,
                })?;
            }
            write_tensor(actual_path, array)?;
        }
        let comparison = compare(array, &expected, tolerances).map_err(|e| RunnerError::Data {
            path: golden_path.clone(),
            message: e.to_string(),
        })?;
        let untouched = *direction == ParamDirection::Out
            && comparison.passed()
            && array.data.iter().all(|&b| b == 0);
        checks.push(OutputCheck {
            name: name.clone(),
            actual_path,
            comparison,
            untouched,
        });
    }
    Ok(checks)
}
