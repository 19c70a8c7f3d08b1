//! A build directory's life around a run: the two-pass swimlane's child process, forced
//! invalidation of cached binaries and the `.pto` → cpp rebuild.
//!
//! The runner never prints; the functions that have something to say return the lines and
//! the Python caller prints them.

use pyo3::prelude::*;

use crate::config::RunOptions;
use crate::conversion;
use crate::error::runner_error;
use crate::program::{print_line, ExecuteReport};

/// Installs the command the two-pass swimlane runs for its graph pass
/// (`<command...> <spec path>`); `pypto.runtime` installs
/// `[sys.executable, "-m", "pypto.runtime._dep_gen_capture"]` on import.
#[pyfunction]
pub fn set_capture_command(command: Vec<String>) {
    pto_runner::two_pass::set_capture_command(command);
}

/// The graph pass of the two-pass swimlane: loads the spec the timing pass wrote, runs the
/// build with only dep_gen on and writes `deps.json`.
#[pyfunction]
pub fn dep_gen_capture_main(py: Python<'_>, spec: &Bound<'_, PyAny>) -> PyResult<()> {
    let spec = conversion::path(spec, "spec")?;
    py.detach(|| pto_runner::two_pass::capture_main(&spec))
        .map_err(runner_error)
}

/// Installs the command that starts a chip process (`pypto.runtime` installs
/// `[sys.executable, "-m", "pypto.runtime._chip_worker"]` on import): runs then isolate the
/// chip in a child process unless `RunConfig(in_process=True)` or `PTO_IN_PROCESS=1`.
#[pyfunction]
pub fn set_worker_command(command: Vec<String>) {
    pto_runner::chip_process::set_worker_command(command);
}

/// The chip process's main loop (`python -m pypto.runtime._chip_worker`): serves the host
/// over the inherited descriptors and returns the exit code.
#[pyfunction]
pub fn chip_worker_main(py: Python<'_>) -> i32 {
    py.detach(pto_runner::chip_process::serve)
}

/// The kind of build `work_dir` is, by the one detection the runner uses
/// (`pto_build_output::BuildLayout`): `"single_chip"`, `"distributed"` (L3) or
/// `"multi_orch_parent"`; `None` when it is no build directory (missing, not a directory,
/// neither marker).
#[pyfunction]
pub fn build_kind(work_dir: &Bound<'_, PyAny>) -> PyResult<Option<&'static str>> {
    let dir = conversion::path(work_dir, "work_dir")?;
    Ok(pto_build_output::BuildLayout::detect(&dir)
        .ok()
        .map(|l| match l.kind() {
            pto_build_output::BuildKind::SingleChip => "single_chip",
            pto_build_output::BuildKind::Distributed => "distributed",
            pto_build_output::BuildKind::MultiOrchParent => "multi_orch_parent",
        }))
}

/// Deletes the cached binaries and compatibility stamps of `work_dir` and every
/// `next_levels/*/` sub-build (sources are kept); returns the `[cpp->.so]` status line.
///
/// Raises `FileNotFoundError` when `work_dir` does not exist.
#[pyfunction]
pub fn invalidate_binary_cache(py: Python<'_>, work_dir: &Bound<'_, PyAny>) -> PyResult<String> {
    let dir = conversion::path(work_dir, "work_dir")?;
    py.detach(|| pto_runner::lifecycle::invalidate_binary_cache(&dir))
        .map_err(runner_error)
}

/// Regenerates kernel cpp bodies from edited `ptoas/*.pto` files (also under
/// `next_levels/*/`), printing the `[pto->cpp]` status lines as they happen; returns the
/// touched cpp paths relative to `work_dir`. `enabled=False` (and
/// `PYPTO_REBUILD_FROM_PTO=0|false|no`) skip it.
///
/// Raises `RuntimeError` when ptoas fails or a cpp lacks the ptoas sentinels.
#[pyfunction]
pub fn rebuild_kernel_cpp_from_pto(
    py: Python<'_>,
    work_dir: &Bound<'_, PyAny>,
    enabled: bool,
) -> PyResult<Vec<String>> {
    let dir = conversion::path(work_dir, "work_dir")?;
    py.detach(|| pto_runner::lifecycle::rebuild_kernel_cpp_from_pto(&dir, enabled, &mut print_line))
        .map_err(runner_error)
}

/// A Python error carried through the runner's replay lifecycle (a runner error converts
/// into the Python exception the module maps it to).
struct HostError(PyErr);

impl From<pto_runner::RunnerError> for HostError {
    fn from(e: pto_runner::RunnerError) -> Self {
        HostError(runner_error(e))
    }
}

/// Python's steps of a replay (`pypto.runtime.debug.replay`): callables taking no argument.
struct PyHost {
    load: Py<PyAny>,
    run: Py<PyAny>,
    check: Py<PyAny>,
    /// The platform of a run that isolates the chip (see [`isolated`]).
    isolated: Option<pto_runner::Platform>,
}

/// `platform` when a run on it isolates the chip in a child process: the run does not ask
/// to stay in-process and `pto_runner::chip_process::isolated_by_default` holds (a worker
/// command is registered, `PTO_IN_PROCESS` is not set). `None` for an unknown platform
/// too: the run reports that.
fn isolated(platform: Option<&str>, in_process: bool) -> Option<pto_runner::Platform> {
    let platform = pto_runner::config::parse_platform(platform?).ok()?;
    (!in_process && pto_runner::chip_process::isolated_by_default()).then_some(platform)
}

fn call(f: &Py<PyAny>) -> Result<(), HostError> {
    Python::attach(|py| f.call0(py).map(drop).map_err(HostError))
}

impl pto_runner::replay::ReplayHost for PyHost {
    type Error = HostError;

    fn load(&mut self) -> Result<(), HostError> {
        call(&self.load)
    }

    fn run(&mut self, _say: &mut dyn FnMut(&str)) -> Result<(), HostError> {
        call(&self.run)
    }

    fn check(&mut self) -> Result<(), HostError> {
        call(&self.check)
    }

    fn isolated_platform(&self) -> Option<pto_runner::Platform> {
        self.isolated
    }
}

/// The replay lifecycle of `pto replay` (`pto_runner::replay::replay_steps`) with Python's
/// steps: refuses what is no build directory (and diagnostics, `dfx_on`, into a directory
/// that cannot take them), splices edited `.pto` files (`rebuild_from_pto`), invalidates
/// cached binaries (`recompile`), then calls `load()`, prints the banner, calls `run()` and,
/// with `validate`, `check()`; each step's line is printed as it happens. Exceptions raised
/// by the callables propagate as they are. `platform` (with `in_process=False`) is that of
/// the run: when it isolates the chip, the chip process starts before the splice, so that
/// its start-up overlaps the steps before the run.
#[pyfunction]
#[pyo3(signature = (
    work_dir, *, rebuild_from_pto, recompile, validate, dfx_on, load, run, check,
    platform = None, in_process = false,
))]
#[allow(clippy::too_many_arguments)]
pub fn replay_steps(
    py: Python<'_>,
    work_dir: &Bound<'_, PyAny>,
    rebuild_from_pto: bool,
    recompile: bool,
    validate: bool,
    dfx_on: bool,
    load: Py<PyAny>,
    run: Py<PyAny>,
    check: Py<PyAny>,
    platform: Option<&str>,
    in_process: bool,
) -> PyResult<()> {
    let dir = conversion::path(work_dir, "work_dir")?;
    let options = pto_runner::ReplayOptions {
        validate,
        recompile,
        rebuild_from_pto,
    };
    let mut host = PyHost {
        load,
        run,
        check,
        isolated: isolated(platform, in_process),
    };
    py.detach(|| {
        pto_runner::replay::replay_steps(&dir, &options, dfx_on, &mut host, &mut print_line)
    })
    .map_err(|HostError(e)| e)
}

/// The steps of a replay that runs no Python code: the build loaded for `options`'
/// platform (`Program.load`) and run once with `args` (`Program.execute`).
struct NativeHost<'a> {
    dir: &'a std::path::Path,
    args: &'a Py<PyAny>,
    options: &'a RunOptions,
    build: Option<pto_runner::CompiledBuild>,
    report: Option<ExecuteReport>,
}

impl pto_runner::replay::ReplayHost for NativeHost<'_> {
    type Error = HostError;

    fn load(&mut self) -> Result<(), HostError> {
        let platform = self.options.config.platform();
        self.build = Some(pto_runner::load_for(self.dir, Some(platform))?);
        Ok(())
    }

    fn run(&mut self, _say: &mut dyn FnMut(&str)) -> Result<(), HostError> {
        let build = self
            .build
            .as_ref()
            .expect("replay_steps loads before it runs");
        let report = Python::attach(|py| {
            crate::program::execute_build(py, build, self.args.bind(py), self.options)
        })
        .map_err(HostError)?;
        self.report = Some(report);
        Ok(())
    }

    fn check(&mut self) -> Result<(), HostError> {
        Ok(())
    }

    fn isolated_platform(&self) -> Option<pto_runner::Platform> {
        (!self.options.config.in_process).then(|| self.options.config.platform())
    }
}

/// Starts the chip process a replay of `work_dir` with `options` will run in
/// ([`pto_runner::chip_process::prestart`]), so that its start-up overlaps what the caller
/// does before [`replay_run`] (reading `golden.py`'s inputs); nothing for an in-process run
/// or a directory that is no single-chip build. The replay takes it (or starts one if it
/// died); one left unused ends with this process.
#[pyfunction]
pub fn replay_prestart(
    work_dir: &Bound<'_, PyAny>,
    options: PyRef<'_, RunOptions>,
) -> PyResult<()> {
    let dir = conversion::path(work_dir, "work_dir")?;
    let single_chip = matches!(
        pto_build_output::BuildLayout::detect(&dir),
        Ok(pto_build_output::BuildLayout::SingleChip)
    );
    if single_chip && !options.config.in_process {
        pto_runner::chip_process::prestart(&dir, options.config.platform());
    }
    Ok(())
}

/// A replay that runs no Python code, in one call: what `replay(work_dir, *args,
/// config=...)` without validation does through [`replay_steps`] with
/// `Program.load(work_dir, platform)` and `Program.execute(args, options)` as its steps,
/// with the same lines, errors and report, without calling back into Python between the
/// steps (and with the chip process started first when the run isolates the chip).
/// `options` are the run's (`RunConfig.native_options()`); the diagnostics switched on
/// there decide whether the directory must be writable. Returns the run's report.
#[pyfunction]
#[pyo3(signature = (work_dir, args, options, *, rebuild_from_pto, recompile))]
pub fn replay_run(
    py: Python<'_>,
    work_dir: &Bound<'_, PyAny>,
    args: Py<PyAny>,
    options: PyRef<'_, RunOptions>,
    rebuild_from_pto: bool,
    recompile: bool,
) -> PyResult<ExecuteReport> {
    let dir = conversion::path(work_dir, "work_dir")?;
    let replay = pto_runner::ReplayOptions {
        validate: false,
        recompile,
        rebuild_from_pto,
    };
    let dfx_on = options.config.dfx.writes_files();
    let mut host = NativeHost {
        dir: &dir,
        args: &args,
        options: &options,
        build: None,
        report: None,
    };
    py.detach(|| {
        pto_runner::replay::replay_steps(&dir, &replay, dfx_on, &mut host, &mut print_line)
    })
    .map_err(|HostError(e)| e)?;
    Ok(host.report.expect("replay_steps runs"))
}

/// Registers this module's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_capture_command, m)?)?;
    m.add_function(wrap_pyfunction!(dep_gen_capture_main, m)?)?;
    m.add_function(wrap_pyfunction!(set_worker_command, m)?)?;
    m.add_function(wrap_pyfunction!(chip_worker_main, m)?)?;
    m.add_function(wrap_pyfunction!(invalidate_binary_cache, m)?)?;
    m.add_function(wrap_pyfunction!(build_kind, m)?)?;
    m.add_function(wrap_pyfunction!(replay_steps, m)?)?;
    m.add_function(wrap_pyfunction!(replay_prestart, m)?)?;
    m.add_function(wrap_pyfunction!(replay_run, m)?)?;
    m.add_function(wrap_pyfunction!(rebuild_kernel_cpp_from_pto, m)?)?;
    Ok(())
}
