//! `L3Engine`: the host engine of an L3 run (`pto_runner::l3::Engine`) for
//! `pypto.runtime.distributed_runner`. Calls that wait (start, domain allocation, drain)
//! release the GIL; the values crossing are plain ints, strings and lists.

use std::path::PathBuf;
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use pto_runner::l3::{Access, ChipProgram, Engine, Tag, TensorArg};
use pto_runner::{DfxOptions, RingValue, RunConfig, RunnerError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::dfx::Switches;
use crate::error::{runner_error, type_error, value_error};

/// The engine of one L3 run: one chip process per device id, each with every chip
/// program of the build loaded.
#[pyclass(module = "pypto._native")]
pub struct L3Engine {
    /// Written by the calls that build the run (submit, regions, domains); read by the ones
    /// that wait (drain, the SubWorker threads' polling), so those never block each other.
    engine: RwLock<Option<Engine>>,
    platform: String,
    /// The chip processes' ids (read without the engine's lock: `drain` holds it).
    pids: Mutex<Vec<u32>>,
}

fn closed() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the L3 engine is closed (its run has ended)")
}

/// Why a call on the engine failed: it was closed, or the engine said no.
enum Fail {
    Closed,
    Runner(RunnerError),
}

impl From<RunnerError> for Fail {
    fn from(e: RunnerError) -> Fail {
        Fail::Runner(e)
    }
}

fn py_err(f: Fail) -> PyErr {
    match f {
        Fail::Closed => closed(),
        Fail::Runner(e) => runner_error(e),
    }
}

impl L3Engine {
    // Every lock is taken with the GIL released (and dropped before it is taken back): a
    // thread waiting for the engine never holds the GIL another thread needs to finish.

    fn with<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Engine) -> Result<R, RunnerError> + Send,
    ) -> PyResult<R> {
        py.detach(|| {
            let mut g = self.engine.write().map_err(|_| Fail::Closed)?;
            let e = g.as_mut().ok_or(Fail::Closed)?;
            Ok(f(e)?)
        })
        .map_err(py_err)
    }

    fn read<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Engine) -> Result<R, RunnerError> + Send,
    ) -> PyResult<R> {
        py.detach(|| {
            let g = self.engine.read().map_err(|_| Fail::Closed)?;
            let e = g.as_ref().ok_or(Fail::Closed)?;
            Ok(f(e)?)
        })
        .map_err(py_err)
    }
}

/// A tensor argument as Python passes it: `(region, byte_offset, shape, dtype, tag)`.
type WireTensor = (u64, u64, Vec<u64>, u8, i64);

fn tensor_args(tensors: Vec<WireTensor>) -> PyResult<Vec<TensorArg>> {
    tensors
        .into_iter()
        .enumerate()
        .map(|(i, (region, offset, shape, dtype, tag))| {
            Ok(TensorArg {
                region,
                offset,
                shape,
                dtype,
                tag: Tag::from_code(tag).ok_or_else(|| {
                    value_error(format!(
                        "submit: tensor argument {i} has TensorArgType {tag}, not one of 0..4"
                    ))
                })?,
            })
        })
        .collect()
}

fn ring(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<RingValue>> {
    let Some(v) = d.get_item(key)? else {
        return Ok(None);
    };
    if v.is_none() {
        return Ok(None);
    }
    if let Ok(n) = v.extract::<u64>() {
        return Ok(Some(RingValue::Scalar(n)));
    }
    let list: Vec<u64> = v.extract().map_err(|_| {
        type_error(format!(
            "CallConfig.{key} must be an int or a list of 4 ints"
        ))
    })?;
    Ok(Some(RingValue::PerRing(list)))
}

/// A string field of this runtime's (`timing`, `dfx_schema`): `None` when absent, `None`
/// or blank (the default), `TypeError` for a non-string.
fn opt_str(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<String>> {
    let Some(v) = d.get_item(key)? else {
        return Ok(None);
    };
    if v.is_none() {
        return Ok(None);
    }
    let text: String = v.extract().map_err(|_| {
        type_error(format!(
            "CallConfig.{key} must be a str, got {}",
            crate::conversion::type_name(&v)
        ))
    })?;
    Ok((!text.trim().is_empty()).then_some(text))
}

/// One dispatch's run options from its `CallConfig` dict; `has_out`: whether the dispatch
/// has an output directory (an unset `timing` follows `PTO_TIMING` only then).
fn run_config(platform: &str, cfg: &Bound<'_, PyDict>, has_out: bool) -> PyResult<RunConfig> {
    let mut c = RunConfig::new(Some(platform)).map_err(runner_error)?;
    // The switches as `RunOptions` reads them: the same conversion, checks and texts.
    let switches = Switches::read(|k| cfg.get_item(k))?;
    c.dfx = DfxOptions {
        // `timing` (ours): "host" / "predicted"; unset is PTO_TIMING (as RunConfig::new
        // read it) for a dispatch with an output directory, host time for one without
        // (the prediction's file would have nowhere to go).
        predicted_timing: match opt_str(cfg, "timing")? {
            Some(text) => pto_runner::config::parse_timing(&text)
                .map_err(|e| value_error(format!("CallConfig.timing: {e}")))?,
            None => c.dfx.predicted_timing && has_out,
        },
        ..switches.options
    };
    if let Some(text) = opt_str(cfg, "dfx_schema")? {
        c.dfx_schema = Some(
            pto_runner::config::parse_dfx_schema(&text, "CallConfig.dfx_schema")
                .map_err(runner_error)?,
        );
    }
    c.ring_task_window = ring(cfg, "ring_task_window")?;
    c.ring_heap = ring(cfg, "ring_heap")?;
    c.ring_dep_pool = ring(cfg, "ring_dep_pool")?;
    c.validate().map_err(|e| {
        let message = switches.python_message(e.to_string());
        runner_error(RunnerError::config(message))
    })?;
    Ok(c)
}

#[pymethods]
impl L3Engine {
    /// Compiles every chip program (`programs`: `(name, directory)` pairs, through each
    /// sub-build's binary cache), then starts one chip process per device id and loads
    /// them all. Raises `RuntimeError` naming the rank that failed to start.
    #[new]
    #[pyo3(signature = (platform, device_ids, programs))]
    fn new(
        py: Python<'_>,
        platform: String,
        device_ids: Vec<i64>,
        programs: Vec<(String, PathBuf)>,
    ) -> PyResult<L3Engine> {
        let p = pto_runner::config::parse_platform(&platform).map_err(runner_error)?;
        let engine = py
            .detach(|| -> Result<Engine, RunnerError> {
                let mut compiled = Vec::with_capacity(programs.len());
                for (name, dir) in &programs {
                    compiled.push(ChipProgram::compile(name, dir, p)?);
                }
                Engine::start(p, &device_ids, compiled)
            })
            .map_err(runner_error)?;
        let pids = engine.chip_pids();
        Ok(L3Engine {
            engine: RwLock::new(Some(engine)),
            platform: p.name().to_string(),
            pids: Mutex::new(pids),
        })
    }

    /// The platform name.
    #[getter]
    fn platform(&self) -> String {
        self.platform.clone()
    }

    /// Registers shared memory (`fd`, duplicated) of `nbytes` bytes; `writable=False`
    /// grants reads only. Returns the region id.
    fn add_region(&self, py: Python<'_>, fd: i32, nbytes: u64, writable: bool) -> PyResult<u64> {
        let access = if writable {
            Access::READ_WRITE
        } else {
            Access::READ
        };
        self.with(py, |e| e.add_region(fd, nbytes, access))
    }

    /// A read-only region holding a copy of `data`. Returns the region id.
    fn add_snapshot(&self, py: Python<'_>, data: Vec<u8>) -> PyResult<u64> {
        self.with(py, |e| e.add_snapshot(&data))
    }

    /// Creates a comm domain over `workers` with windows of `window_size` bytes; returns
    /// `(region, [(device_ctx, local_window_base) per member])`.
    fn allocate_domain(
        &self,
        py: Python<'_>,
        workers: Vec<usize>,
        window_size: usize,
    ) -> PyResult<(u64, Vec<(u64, u64)>)> {
        self.with(py, |e| e.allocate_domain(&workers, window_size))
    }

    /// Submits one dispatch: `tensors` are `(region, byte_offset, shape, dtype, tag)`;
    /// `config` a dict of `CallConfig` fields; `out` the diagnostics directory (required
    /// when a diagnostic or predicted timing is on); `deps` the ids of earlier dispatches it waits for
    /// (`TaskArgs.add_dep_wait`; `None`, the default, for none). Returns the dispatch id.
    #[pyo3(signature = (program, worker, tensors, scalars, config, out=None, deps=None))]
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &self,
        py: Python<'_>,
        program: &str,
        worker: usize,
        tensors: Vec<WireTensor>,
        scalars: Vec<u64>,
        config: &Bound<'_, PyDict>,
        out: Option<PathBuf>,
        deps: Option<Vec<usize>>,
    ) -> PyResult<usize> {
        let config = run_config(&self.platform, config, out.is_some())?;
        let args = tensor_args(tensors)?;
        let deps = deps.unwrap_or_default();
        self.with(py, |e| {
            e.submit(program, worker, &args, &scalars, &deps, &config, out)
        })
    }

    /// Submits a host task (a SubWorker call named `name`) over `tensors` (as in
    /// `submit`): ordered by the TensorMap, handed out by `next_host_task` once its
    /// producers completed. Returns its id.
    fn submit_host(&self, py: Python<'_>, name: &str, tensors: Vec<WireTensor>) -> PyResult<usize> {
        let args = tensor_args(tensors)?;
        self.with(py, |e| e.submit_host(name, &args))
    }

    /// The id of the next READY host task, waiting up to `timeout_s` seconds (`None` when
    /// none became ready); raises `RuntimeError` once the run is ending.
    fn next_host_task(&self, py: Python<'_>, timeout_s: f64) -> PyResult<Option<usize>> {
        let timeout = Duration::try_from_secs_f64(timeout_s.max(0.0)).unwrap_or(Duration::ZERO);
        self.read(py, |e| e.next_host_task(timeout))
    }

    /// Reports host task `id` finished; `error` (its text) fails it and the run.
    #[pyo3(signature = (id, error=None))]
    fn finish_host_task(&self, py: Python<'_>, id: usize, error: Option<String>) -> PyResult<()> {
        self.read(py, |e| e.finish_host_task(id, error.map_or(Ok(()), Err)))
    }

    /// Waits for every dispatch; raises `RuntimeError` with the first failure (rank,
    /// dispatch, program, kernel).
    fn drain(&self, py: Python<'_>) -> PyResult<()> {
        self.read(py, |e| e.drain())
    }

    /// `drain()` for at most `timeout_s` seconds: `True` once every dispatch finished,
    /// `False` while some still run (Python waits in slices so a Ctrl-C stops it at once).
    fn drain_for(&self, py: Python<'_>, timeout_s: f64) -> PyResult<bool> {
        let timeout = Duration::try_from_secs_f64(timeout_s.max(0.0)).unwrap_or(Duration::ZERO);
        self.read(py, |e| e.drain_for(timeout))
    }

    /// Ends the run (see `Engine::close`); `kill=True` kills the chips at once. Idempotent.
    #[pyo3(signature = (kill=false))]
    fn close(&self, py: Python<'_>, kill: bool) {
        py.detach(|| {
            let engine = self.engine.write().ok().and_then(|mut g| g.take());
            if let Some(e) = engine {
                e.close(kill);
            }
        });
        if let Ok(mut p) = self.pids.lock() {
            p.clear();
        }
    }

    /// The chip processes' ids (empty once closed).
    fn chip_pids(&self) -> Vec<u32> {
        self.pids.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Dispatches submitted so far.
    fn n_dispatches(&self, py: Python<'_>) -> usize {
        self.read(py, |e| Ok(e.n_dispatches())).unwrap_or(0)
    }
}

/// Loads `distributed_meta.json` of `work_dir` with PyPTO's checks and texts
/// (`FileNotFoundError` / `ValueError`). Returns `(params, num_return_types, platform,
/// backend_type, (device_ids, num_sub_workers, runtime, aicpu_thread_num))`, each param
/// `(name, direction, shape or None, dtype)`. With `with_config=False` (the caller brings
/// its own `DistributedConfig`) the persisted `distributed_config` block is neither
/// validated nor returned (`None`), as in PyPTO's `from_dir`.
#[pyfunction]
#[pyo3(signature = (work_dir, with_config=true))]
#[allow(clippy::type_complexity)]
pub fn load_distributed_meta(
    work_dir: PathBuf,
    with_config: bool,
) -> PyResult<(
    Vec<(String, String, Option<Vec<i64>>, String)>,
    u64,
    Option<String>,
    String,
    Option<(Vec<i64>, i64, String, i64)>,
)> {
    let (program, dc) = if with_config {
        let m = pto_build_output::DistributedMeta::load(&work_dir)
            .map_err(crate::error::build_output_error)?;
        let dc = &m.distributed_config;
        let dc = (
            dc.device_ids().to_vec(),
            dc.num_sub_workers(),
            dc.runtime().to_string(),
            dc.aicpu_thread_num(),
        );
        (m.program, Some(dc))
    } else {
        let program = pto_build_output::DistributedMeta::load_program(&work_dir)
            .map_err(crate::error::build_output_error)?;
        (program, None)
    };
    Ok((
        program
            .params
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    p.direction.name().to_string(),
                    p.shape.clone(),
                    p.dtype.clone(),
                )
            })
            .collect(),
        program.num_return_types,
        program.platform.clone(),
        program.backend_type.name().to_string(),
        dc,
    ))
}

/// The kernels of a `kernel_config.py`, `(func_id, name)` sorted by func_id (the name map of
/// one program: func_ids are per program).
#[pyfunction]
pub fn kernel_names(kernel_config: PathBuf) -> PyResult<Vec<(i32, String)>> {
    let kc = pto_build_output::KernelConfig::load(&kernel_config)
        .map_err(crate::error::build_output_error)?;
    Ok(kc.name_map().into_iter().collect())
}

/// Converts one dispatch's swimlane records (`records`) into `merged_swimlane_<ts>.json`
/// in `out_dir` (the records' directory), naming kernels from `name_map` when given.
/// Returns the trace's path.
#[pyfunction]
#[pyo3(signature = (records, out_dir, name_map=None))]
pub fn convert_swimlane(
    py: Python<'_>,
    records: PathBuf,
    out_dir: PathBuf,
    name_map: Option<PathBuf>,
) -> PyResult<String> {
    let _ = out_dir;
    let options = pto_dfx_view::swimlane_converter::ConvertOptions {
        input: &records,
        output: None,
        deps: None,
        func_names: name_map.as_deref(),
        kernel_config: None,
    };
    py.detach(|| pto_dfx_view::swimlane_converter::convert(&options))
        .map(|r| r.output.display().to_string())
        .map_err(|e| runner_error(RunnerError::config(e.to_string())))
}

/// Registers the class and functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<L3Engine>()?;
    m.add_function(wrap_pyfunction!(load_distributed_meta, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_names, m)?)?;
    m.add_function(wrap_pyfunction!(convert_swimlane, m)?)?;
    Ok(())
}
