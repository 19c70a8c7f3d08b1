//! `Program`: a loaded single-chip build directory (`pto_runner::CompiledBuild`), run with
//! NumPy arguments. Loading compiles (through the toolchain's caches) and both loading and
//! running release the GIL.

use std::path::PathBuf;

use pto_build_output::ParamInfo as MetaParam;
use pto_runner::{BoundParam, CompiledBuild, ExecuteOutcome};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::bench::BenchmarkStats;
use crate::config::RunOptions;
use crate::conversion;
use crate::error::{build_output_error, runner_error, type_error};

/// One orchestration parameter, as `compiled_meta.json` declares it.
#[pyclass(module = "pypto._native", frozen, get_all)]
#[derive(Clone)]
pub struct ParamInfo {
    /// The parameter name.
    pub name: String,
    /// `In`, `Out` or `InOut`.
    pub direction: String,
    /// The shape (`-1` for a dynamic extent), `None` for a scalar.
    pub shape: Option<Vec<i64>>,
    /// PyPTO's dtype name (`fp32`, `int32`, `bfloat16`, ...).
    pub dtype: String,
}

impl ParamInfo {
    fn from_meta(p: &MetaParam) -> ParamInfo {
        ParamInfo {
            name: p.name.clone(),
            direction: p.direction.name().to_string(),
            shape: p.shape.clone(),
            dtype: p.dtype.clone(),
        }
    }
}

#[pymethods]
impl ParamInfo {
    fn __repr__(&self) -> String {
        let shape = match &self.shape {
            Some(s) => format!("{s:?}"),
            None => "None".to_string(),
        };
        format!(
            "ParamInfo(name='{}', direction='{}', shape={shape}, dtype='{}')",
            self.name, self.direction, self.dtype
        )
    }
}

/// The content of a build directory's `compiled_meta.json`, read without compiling.
#[pyclass(module = "pypto._native", frozen, get_all)]
pub struct CompiledMeta {
    /// The parameters, in orchestration order.
    pub params: Vec<ParamInfo>,
    /// The platform recorded at compile time, if any.
    pub platform: Option<String>,
    /// The backend (`Ascend910B` or `Ascend950`).
    pub backend_type: String,
    /// How many values the PyPTO function returns.
    pub num_return_types: u64,
}

impl CompiledMeta {
    fn from_meta(meta: &pto_build_output::CompiledMeta) -> CompiledMeta {
        CompiledMeta {
            params: meta.params.iter().map(ParamInfo::from_meta).collect(),
            platform: meta.platform.clone(),
            backend_type: meta.backend_type.name().to_string(),
            num_return_types: meta.num_return_types,
        }
    }
}

#[pymethods]
impl CompiledMeta {
    /// Reads `<work_dir>/compiled_meta.json` (or the file itself). Raises
    /// `FileNotFoundError` when it is missing and `ValueError` when it is malformed, with
    /// PyPTO's texts.
    #[staticmethod]
    fn load(work_dir: &Bound<'_, PyAny>) -> PyResult<CompiledMeta> {
        let dir = conversion::path(work_dir, "work_dir")?;
        let meta = pto_build_output::CompiledMeta::load(&dir).map_err(build_output_error)?;
        Ok(CompiledMeta::from_meta(&meta))
    }

    /// Writes `<work_dir>/compiled_meta.json` atomically through the one writer of the
    /// sidecar (`pto_build_output::CompiledMeta::write`, which the DSL's codegen uses too):
    /// `params` as `(name, direction, shape, dtype)` tuples (`direction` `In` / `Out` /
    /// `InOut`, `shape` `None` for a scalar). Returns the file written. `ValueError` names
    /// an unknown direction or backend; `OSError` a failed write.
    #[staticmethod]
    #[pyo3(signature = (work_dir, params, num_return_types, platform, backend_type))]
    fn write(
        work_dir: &Bound<'_, PyAny>,
        params: Vec<(String, String, Option<Vec<i64>>, String)>,
        num_return_types: u64,
        platform: Option<String>,
        backend_type: &str,
    ) -> PyResult<String> {
        let dir = conversion::path(work_dir, "work_dir")?;
        let params = params
            .into_iter()
            .map(|(name, direction, shape, dtype)| {
                let direction = pto_build_output::ParamDirection::from_name(&direction)
                    .ok_or_else(|| {
                        pyo3::exceptions::PyValueError::new_err(format!(
                            "parameter '{name}': direction '{direction}' is not In, Out or InOut"
                        ))
                    })?;
                Ok(MetaParam {
                    name,
                    direction,
                    shape,
                    dtype,
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        let backend_type =
            pto_build_output::BackendType::from_name(backend_type).ok_or_else(|| {
                pyo3::exceptions::PyValueError::new_err(format!(
                    "backend_type '{backend_type}' is not Ascend910B or Ascend950"
                ))
            })?;
        let meta = pto_build_output::CompiledMeta {
            params,
            num_return_types,
            platform,
            backend_type,
        };
        let path = meta.write(&dir).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("cannot write compiled_meta.json: {e}"))
        })?;
        Ok(path.display().to_string())
    }

    fn __repr__(&self) -> String {
        let platform = match &self.platform {
            Some(p) => format!("'{p}'"),
            None => "None".to_string(),
        };
        format!(
            "CompiledMeta(params={}, platform={platform}, backend_type='{}', num_return_types={})",
            self.params.len(),
            self.backend_type,
            self.num_return_types
        )
    }
}

/// What one execution did.
#[pyclass(module = "pypto._native", frozen, get_all)]
pub struct ExecuteReport {
    /// Tasks submitted.
    pub n_tasks: u64,
    /// The platform it ran on.
    pub platform: String,
    /// Host wall time of the run, in seconds.
    pub wall_s: f64,
    /// Device time (orchestration start to the last task's end), in seconds.
    pub device_time_s: f64,
    /// Worker threads used.
    pub n_workers: usize,
    /// Diagnostic files written under `<dir>/dfx_outputs/`.
    pub dfx_files: Vec<String>,
    /// Ready-to-paste commands for the viewers.
    pub dfx_hints: Vec<String>,
    /// Problems that did not stop the run.
    pub dfx_warnings: Vec<String>,
}

impl ExecuteReport {
    fn from_outcome(outcome: &ExecuteOutcome) -> ExecuteReport {
        let r = &outcome.report;
        let show = |p: &PathBuf| p.display().to_string();
        ExecuteReport {
            n_tasks: r.n_tasks,
            platform: r.platform.name().to_string(),
            wall_s: r.wall.as_secs_f64(),
            device_time_s: r.device_time.as_secs_f64(),
            n_workers: r.n_workers,
            dfx_files: outcome.dfx.files.iter().map(show).collect(),
            dfx_hints: outcome.dfx.hints.clone(),
            dfx_warnings: outcome.dfx.warnings.clone(),
        }
    }
}

#[pymethods]
impl ExecuteReport {
    fn __repr__(&self) -> String {
        format!(
            "ExecuteReport(n_tasks={}, platform='{}', wall_s={:.6}, device_time_s={:.6})",
            self.n_tasks, self.platform, self.wall_s, self.device_time_s
        )
    }
}

/// A compiled and loaded single-chip build directory.
#[pyclass(module = "pypto._native", frozen)]
pub struct Program {
    pub(crate) build: CompiledBuild,
}

impl Program {
    /// Binds `args` (one per parameter, in order) as the runner's parameters.
    pub(crate) fn bind(&self, args: &Bound<'_, PyAny>) -> PyResult<Vec<BoundParam>> {
        Program::bind_to(&self.build, args)
    }

    /// Binds `args` (one per parameter, in order) as `build`'s parameters.
    fn bind_to(build: &CompiledBuild, args: &Bound<'_, PyAny>) -> PyResult<Vec<BoundParam>> {
        let args: Vec<Bound<'_, PyAny>> = args
            .try_iter()
            .map_err(|_| type_error("args must be a sequence".to_string()))?
            .collect::<PyResult<_>>()?;
        let params = &build.meta.params;
        if args.len() != params.len() {
            return Err(type_error(format!(
                "{} expects {} arguments ({}), got {}",
                build.dir.display(),
                params.len(),
                build.param_names().join(", "),
                args.len()
            )));
        }
        let mut bound = Vec::with_capacity(args.len());
        for (position, (obj, param)) in args.iter().zip(params).enumerate() {
            bound.push(if param.is_scalar() {
                BoundParam::Scalar {
                    name: param.name.clone(),
                    bits: conversion::scalar_arg(obj, param)?,
                }
            } else {
                BoundParam::Tensor {
                    name: param.name.clone(),
                    direction: param.direction,
                    array: conversion::tensor_arg(obj, param, position)?,
                }
            });
        }
        Ok(bound)
    }

    /// Writes every Out / InOut tensor of `bound` back into its argument.
    pub(crate) fn write_back(args: &Bound<'_, PyAny>, bound: &[BoundParam]) -> PyResult<()> {
        for (obj, param) in args.try_iter()?.zip(bound) {
            let obj = obj?;
            if let BoundParam::Tensor {
                direction, array, ..
            } = param
            {
                if *direction != pto_build_output::ParamDirection::In {
                    conversion::write_back(&obj, array)?;
                }
            }
        }
        Ok(())
    }
}

/// Sees a Ctrl-C that Python's own pending-signal flag no longer shows: Python code that
/// runs on the calling thread while a run lasts (a finalizer when the GIL is taken, a
/// progress `print`) can handle the signal there and drop its `KeyboardInterrupt`
/// ("Exception ignored"). Python's C-level handler writes the signal's number to the wakeup
/// fd before anything else, so while a run lasts the wakeup fd is a socket this side reads;
/// what it reads is passed on to the previous wakeup fd (asyncio's, say) when the run ends.
/// Only the main thread may set the wakeup fd, and only Python's default SIGINT handler
/// means "raise KeyboardInterrupt", so elsewhere this watches nothing.
struct SignalWatch {
    read: std::os::unix::net::UnixStream,
    _write: std::os::unix::net::UnixStream,
    previous: i64,
    seen: std::sync::Mutex<Vec<u8>>,
}

impl SignalWatch {
    fn start(py: Python<'_>) -> Option<SignalWatch> {
        use std::os::fd::AsRawFd as _;
        // The C module `signal` wraps: the same functions, without importing `enum`.
        let signal = py.import("_signal").ok()?;
        let default = signal.getattr("default_int_handler").ok()?;
        let sigint = signal.getattr("SIGINT").ok()?;
        if !signal
            .call_method1("getsignal", (sigint,))
            .ok()?
            .is(&default)
        {
            return None;
        }
        let (read, write) = std::os::unix::net::UnixStream::pair().ok()?;
        read.set_nonblocking(true).ok()?;
        write.set_nonblocking(true).ok()?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("warn_on_full_buffer", false).ok()?;
        // Raises ValueError off the main thread: then nothing is watched.
        let previous = signal
            .call_method("set_wakeup_fd", (write.as_raw_fd(),), Some(&kwargs))
            .ok()?
            .extract::<i64>()
            .ok()?;
        Some(SignalWatch {
            read,
            _write: write,
            previous,
            seen: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// Whether a SIGINT has arrived since [`SignalWatch::start`] (no GIL needed).
    fn saw_sigint(&self) -> bool {
        use std::io::Read as _;
        let Ok(mut seen) = self.seen.lock() else {
            return false;
        };
        let mut buf = [0u8; 64];
        while let Ok(n @ 1..) = (&self.read).read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
        }
        seen.contains(&SIGINT)
    }

    /// Puts the previous wakeup fd back and passes on what this one received.
    fn finish(&self, py: Python<'_>) {
        self.saw_sigint();
        let Ok(signal) = py.import("_signal") else {
            return;
        };
        let _ = signal.call_method1("set_wakeup_fd", (self.previous,));
        let seen = self.seen.lock().map(|s| s.clone()).unwrap_or_default();
        if self.previous >= 0 && !seen.is_empty() {
            if let Ok(os) = py.import("os") {
                let _ = os.call_method1(
                    "write",
                    (self.previous, pyo3::types::PyBytes::new(py, &seen)),
                );
            }
        }
    }
}

/// SIGINT's number (2 on every Unix), as the wakeup fd carries it.
const SIGINT: u8 = 2;

/// Where a run's interrupt check keeps the signal's exception until the run has returned.
type PendingSignal = std::sync::Arc<std::sync::Mutex<Option<PyErr>>>;

/// A copy of `config` whose runs stop when Python has a pending signal (Ctrl-C), the slot
/// where the signal's exception is kept to be raised once the run has returned, and the
/// [`SignalWatch`] to finish after it.
fn interruptible(
    py: Python<'_>,
    config: &pto_runner::RunConfig,
) -> (
    pto_runner::RunConfig,
    PendingSignal,
    Option<std::sync::Arc<SignalWatch>>,
) {
    let pending: PendingSignal = Default::default();
    let slot = std::sync::Arc::clone(&pending);
    let watch = SignalWatch::start(py).map(std::sync::Arc::new);
    let watching = watch.clone();
    let mut config = config.clone();
    config.interrupt = Some(pto_runner::Interrupt(std::sync::Arc::new(move || {
        let keep = |e: PyErr| {
            if let Ok(mut s) = slot.lock() {
                s.get_or_insert(e);
            }
            true
        };
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            return keep(e);
        }
        match &watching {
            // The byte is written after Python's flag is set: a second check either
            // handles the signal now or shows that something else already did.
            Some(w) if w.saw_sigint() => match Python::attach(|py| py.check_signals()) {
                Err(e) => keep(e),
                Ok(()) => keep(pyo3::exceptions::PyKeyboardInterrupt::new_err(())),
            },
            _ => false,
        }
    })));
    (config, pending, watch)
}

/// A run's result for Python: the signal's exception if the run was interrupted, and
/// `KeyboardInterrupt` too when a Ctrl-C came during the call but after the run's last
/// interrupt check (or was handled by Python code the call ran): a Ctrl-C during a call is
/// never lost, as it is not in pure Python code.
fn after_run<T>(
    py: Python<'_>,
    watch: Option<&SignalWatch>,
    pending: &std::sync::Mutex<Option<PyErr>>,
    result: Result<T, pto_runner::RunnerError>,
) -> PyResult<T> {
    let Some(w) = watch else {
        return result.map_err(|e| interrupted_or(pending, e));
    };
    w.finish(py);
    let value = result.map_err(|e| interrupted_or(pending, e))?;
    if w.saw_sigint() {
        py.check_signals()?;
        return Err(pyo3::exceptions::PyKeyboardInterrupt::new_err(()));
    }
    Ok(value)
}

/// The signal's exception, if a run was interrupted, else `err` mapped as usual.
fn interrupted_or(
    pending: &std::sync::Mutex<Option<PyErr>>,
    err: pto_runner::RunnerError,
) -> PyErr {
    match pending.lock().ok().and_then(|mut p| p.take()) {
        Some(e) => e,
        None => runner_error(err),
    }
}

/// One run of `build` with `args` (one per parameter, in order; outputs are written back
/// into them) and `options`, the GIL released while it runs: `Program.execute`, and the run
/// of `replay_run` (`crate::lifecycle`).
pub(crate) fn execute_build(
    py: Python<'_>,
    build: &CompiledBuild,
    args: &Bound<'_, PyAny>,
    options: &RunOptions,
) -> PyResult<ExecuteReport> {
    let mut bound = Program::bind_to(build, args)?;
    let (config, pending, watch) = interruptible(py, &options.config);
    let result = py.detach(|| build.execute_with(&mut bound, &config, &mut print_line));
    let outcome = after_run(py, watch.as_deref(), &pending, result)?;
    Program::write_back(args, &bound)?;
    Ok(ExecuteReport::from_outcome(&outcome))
}

/// Progress lines the runner prints (the two-pass swimlane banner), sent to Python's
/// `print` so they interleave with the caller's own output.
pub(crate) fn print_line(line: &str) {
    Python::attach(|py| {
        let printed = py
            .import("builtins")
            .and_then(|b| b.getattr("print"))
            .and_then(|print| print.call1((line,)));
        if let Err(e) = printed {
            // Printing is best effort; a closed stdout must not fail the run.
            e.print(py);
        }
    });
}

#[pymethods]
impl Program {
    /// Loads `work_dir` (a single-chip build with `kernel_config.py` and
    /// `compiled_meta.json`) for `platform` (default: the recorded one) and compiles it.
    /// Never splices `.pto` files nor forces invalidation: binaries cached next to the
    /// sources are reused when their stamp matches.
    #[staticmethod]
    #[pyo3(signature = (work_dir, platform = None))]
    fn load(
        py: Python<'_>,
        work_dir: &Bound<'_, PyAny>,
        platform: Option<&str>,
    ) -> PyResult<Program> {
        let dir = conversion::path(work_dir, "work_dir")?;
        let platform = platform
            .map(pto_runner::config::parse_platform)
            .transpose()
            .map_err(runner_error)?;
        let build = py
            .detach(|| pto_runner::load_for(&dir, platform))
            .map_err(runner_error)?;
        Ok(Program { build })
    }

    /// The build directory.
    #[getter]
    fn dir(&self) -> String {
        self.build.dir.display().to_string()
    }

    /// The parameters, in orchestration order.
    #[getter]
    fn params(&self) -> Vec<ParamInfo> {
        self.build
            .meta
            .params
            .iter()
            .map(ParamInfo::from_meta)
            .collect()
    }

    /// The build's `compiled_meta.json`.
    #[getter]
    fn meta(&self) -> CompiledMeta {
        CompiledMeta::from_meta(&self.build.meta)
    }

    /// The platform recorded at compile time, if any.
    #[getter]
    fn platform(&self) -> Option<String> {
        self.build.meta.platform.clone()
    }

    /// The backend recorded at compile time (`Ascend910B` or `Ascend950`).
    #[getter]
    fn backend_type(&self) -> &'static str {
        self.build.meta.backend_type.name()
    }

    /// How many values the PyPTO function returns (its pure outputs).
    #[getter]
    fn num_return_types(&self) -> u64 {
        self.build.meta.num_return_types
    }

    /// The runtime's wire name from `kernel_config.py`'s `RUNTIME_CONFIG`
    /// (`tensormap_and_ringbuffer`).
    #[getter]
    fn runtime_name(&self) -> String {
        self.build.kernel_config.runtime.runtime.clone()
    }

    /// `kernel_config.py`'s `RUNTIME_CONFIG` as a dict: `runtime`, `aicpu_thread_num`, and
    /// `enable_sdma` when some kernel uses SDMA.
    #[getter]
    fn runtime_config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let rc = &self.build.kernel_config.runtime;
        let dict = PyDict::new(py);
        dict.set_item("runtime", &rc.runtime)?;
        dict.set_item("aicpu_thread_num", rc.aicpu_thread_num)?;
        if rc.enable_sdma {
            dict.set_item("enable_sdma", true)?;
        }
        Ok(dict)
    }

    /// Units compiled or served from the cache, and how many came from the cache.
    #[getter]
    fn compile_stats(&self) -> (usize, usize) {
        (self.build.compile.n_units, self.build.compile.n_cached)
    }

    /// Runs once with `args` (NumPy arrays and scalars, one per parameter); outputs are
    /// written back into their arrays. Diagnostics enabled in `options` go to
    /// `<dir>/dfx_outputs/`.
    fn execute(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyList>,
        options: &RunOptions,
    ) -> PyResult<ExecuteReport> {
        execute_build(py, &self.build, args.as_any(), options)
    }

    /// Runs `warmup` discarded launches, then `rounds` measured ones, each from the same
    /// inputs (outputs are written back after the last), with diagnostics off.
    fn benchmark(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyList>,
        options: &RunOptions,
        rounds: usize,
        warmup: usize,
    ) -> PyResult<BenchmarkStats> {
        let mut bound = self.bind(args.as_any())?;
        let (config, pending, watch) = interruptible(py, &options.config);
        let build = &self.build;
        let result = py.detach(|| {
            pto_runner::benchmark(build, &mut bound, &config, rounds, warmup, &mut |_, _| {})
        });
        let stats = after_run(py, watch.as_deref(), &pending, result)?;
        Program::write_back(args.as_any(), &bound)?;
        Ok(BenchmarkStats { stats })
    }

    fn __repr__(&self) -> String {
        format!("Program(dir={:?})", self.build.dir.display().to_string())
    }
}
