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
        let args: Vec<Bound<'_, PyAny>> = args
            .try_iter()
            .map_err(|_| type_error("args must be a sequence".to_string()))?
            .collect::<PyResult<_>>()?;
        let params = &self.build.meta.params;
        if args.len() != params.len() {
            return Err(type_error(format!(
                "{} expects {} arguments ({}), got {}",
                self.build.dir.display(),
                params.len(),
                self.build.param_names().join(", "),
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

/// Progress lines the runner prints (the two-pass swimlane banner), sent to Python's
/// `print` so they interleave with the caller's own output.
/// A copy of `config` whose runs stop when Python has a pending signal (Ctrl-C), and the
/// slot where the signal's exception is kept to be raised once the run has returned.
fn interruptible(
    config: &pto_runner::RunConfig,
) -> (
    pto_runner::RunConfig,
    std::sync::Arc<std::sync::Mutex<Option<PyErr>>>,
) {
    let pending: std::sync::Arc<std::sync::Mutex<Option<PyErr>>> = Default::default();
    let slot = std::sync::Arc::clone(&pending);
    let mut config = config.clone();
    config.interrupt = Some(pto_runner::Interrupt(std::sync::Arc::new(move || {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                if let Ok(mut s) = slot.lock() {
                    *s = Some(e);
                }
                true
            }
        })
    })));
    (config, pending)
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
        let mut bound = self.bind(args.as_any())?;
        let (config, pending) = interruptible(&options.config);
        let build = &self.build;
        let outcome = py
            .detach(|| build.execute_with(&mut bound, &config, &mut print_line))
            .map_err(|e| interrupted_or(&pending, e))?;
        Program::write_back(args.as_any(), &bound)?;
        Ok(ExecuteReport::from_outcome(&outcome))
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
        let (config, pending) = interruptible(&options.config);
        let build = &self.build;
        let stats = py
            .detach(|| {
                pto_runner::benchmark(build, &mut bound, &config, rounds, warmup, &mut |_, _| {})
            })
            .map_err(|e| interrupted_or(&pending, e))?;
        Program::write_back(args.as_any(), &bound)?;
        Ok(BenchmarkStats { stats })
    }

    fn __repr__(&self) -> String {
        format!("Program(dir={:?})", self.build.dir.display().to_string())
    }
}
