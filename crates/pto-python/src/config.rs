//! `RunOptions`: `pto_runner::RunConfig` built from Python values and validated once, on
//! construction, by the runner's own validator, so `pto` and `pypto` reject the same input
//! with the same words. `pypto.runtime.RunConfig` builds one in `__post_init__` and again
//! for each run.

use pto_runner::dfx_switches::{DfxSwitch, SwitchKind, DFX_SWITCHES};
use pto_runner::{DfxOptions, RunConfig};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::conversion::{self, python_value_in_message, RingArg, U64_SENTINEL};
use crate::dfx::Switches;
use crate::error::{runner_error, type_error};

/// A validated run configuration (the native side of `pypto.runtime.RunConfig`).
#[pyclass(module = "pypto._native", frozen)]
pub struct RunOptions {
    pub(crate) config: RunConfig,
}

/// Validates `config`, putting the Python values the Rust types could not hold back into the
/// message (see [`conversion::python_value_in_message`]).
fn validate(
    config: &RunConfig,
    portable: bool,
    switches: &Switches,
    rings: [&RingArg; 3],
) -> PyResult<()> {
    let checked = if portable {
        config.validate_portable()
    } else {
        config.validate()
    };
    let Err(err) = checked else {
        return Ok(());
    };
    let mut message = switches.python_message(err.to_string());
    let fields = ["ring_task_window", "ring_heap", "ring_dep_pool"];
    for (field, ring) in fields.iter().zip(rings) {
        if message.starts_with(field) {
            message = python_value_in_message(
                message,
                &U64_SENTINEL.to_string(),
                ring.bad_repr.as_deref(),
            );
        }
    }
    Err(runner_error(pto_runner::RunnerError::config(message)))
}

/// Refuses a keyword that is not a diagnostics switch, as Python refuses an unknown keyword.
fn known_switches(switches: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
    for key in switches.map(|d| d.keys()).into_iter().flatten() {
        let key = key.to_string();
        if !DFX_SWITCHES.iter().any(|s| s.python_keyword == key) {
            return Err(type_error(format!(
                "RunOptions() got an unexpected keyword argument '{key}'"
            )));
        }
    }
    Ok(())
}

#[pymethods]
impl RunOptions {
    /// Builds and validates a run configuration. `dfx_schema` (`2026-08` / `2026-09`) and
    /// `timing` (`host` / `predicted`) override `PTO_DFX_SCHEMA` / `PTO_TIMING`; `switches`
    /// are the diagnostics switches by their Python keywords (`enable_chip_swimlane=2`,
    /// the rows of `dfx_switches()`).
    ///
    /// Raises `ValueError` for an unknown platform, a level out of range or an invalid ring
    /// override, and `TypeError` for a value of the wrong type or an unknown keyword, with
    /// the runner's texts. With `portable=True` only PyPTO's own `RunConfig` rules are
    /// checked (the platform, the ring overrides); the runtime's limits are checked when a
    /// run builds its options.
    #[new]
    #[pyo3(signature = (
        platform = None,
        *,
        ring_task_window = None,
        ring_heap = None,
        ring_dep_pool = None,
        rtol = None,
        atol = None,
        scheduler_timeout = None,
        n_workers = None,
        in_process = None,
        dfx_schema = None,
        timing = None,
        portable = false,
        **switches,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        platform: Option<&str>,
        ring_task_window: Option<&Bound<'_, PyAny>>,
        ring_heap: Option<&Bound<'_, PyAny>>,
        ring_dep_pool: Option<&Bound<'_, PyAny>>,
        rtol: Option<&Bound<'_, PyAny>>,
        atol: Option<&Bound<'_, PyAny>>,
        scheduler_timeout: Option<&Bound<'_, PyAny>>,
        n_workers: Option<&Bound<'_, PyAny>>,
        in_process: Option<&Bound<'_, PyAny>>,
        dfx_schema: Option<&str>,
        timing: Option<&str>,
        portable: bool,
        switches: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<RunOptions> {
        let mut config = RunConfig::new(platform).map_err(runner_error)?;
        known_switches(switches)?;
        let switches = Switches::read(|k| match switches {
            Some(d) => d.get_item(k),
            None => Ok(None),
        })?;
        config.dfx = DfxOptions {
            // PTO_TIMING, as RunConfig::new read (and checked) it.
            predicted_timing: config.dfx.predicted_timing,
            ..switches.options
        };
        let ring = |v: Option<&Bound<'_, PyAny>>| match v {
            Some(v) => RingArg::extract(v),
            None => RingArg {
                value: None,
                bad_repr: None,
            },
        };
        let rings = [ring(ring_task_window), ring(ring_heap), ring(ring_dep_pool)];
        config.ring_task_window = rings[0].value.clone();
        config.ring_heap = rings[1].value.clone();
        config.ring_dep_pool = rings[2].value.clone();
        if let Some(v) = rtol {
            config.rtol = conversion::float(v, "rtol")?;
        }
        if let Some(v) = atol {
            config.atol = conversion::float(v, "atol")?;
        }
        if let Some(v) = scheduler_timeout {
            config.scheduler_timeout = conversion::optional_seconds(v, "scheduler_timeout")?;
        }
        if let Some(v) = n_workers {
            config.n_workers = conversion::optional_count(v, "n_workers")?;
        }
        if let Some(v) = in_process {
            if !v.is_none() && conversion::flag(v)? {
                config.in_process = true;
            }
        }
        if let Some(g) = dfx_schema {
            config.dfx_schema =
                Some(pto_runner::config::parse_dfx_schema(g, "dfx_schema").map_err(runner_error)?);
        }
        if let Some(t) = timing {
            config.dfx.predicted_timing = pto_runner::config::parse_timing(t).map_err(|e| {
                runner_error(pto_runner::RunnerError::config(format!("timing: {e}")))
            })?;
        }
        validate(
            &config,
            portable,
            &switches,
            [&rings[0], &rings[1], &rings[2]],
        )?;
        Ok(RunOptions { config })
    }

    /// The platform name (`a2a3sim`, `a2a3`, `a5sim`, `a5` or `cpu`).
    #[getter]
    fn platform(&self) -> String {
        self.config.platform().name().to_string()
    }

    /// The chip swimlane level, 0-4.
    #[getter]
    fn enable_chip_swimlane(&self) -> u8 {
        self.config.dfx.chip_swimlane
    }

    /// The args dump level, 0-3.
    #[getter]
    fn enable_dump_args(&self) -> u8 {
        self.config.dfx.dump_args
    }

    /// The PMU event type (0 off).
    #[getter]
    fn enable_pmu(&self) -> u32 {
        self.config.dfx.pmu
    }

    /// Whether `deps.json` is recorded.
    #[getter]
    fn enable_dep_gen(&self) -> bool {
        self.config.dfx.dep_gen
    }

    /// Whether scope statistics are recorded.
    #[getter]
    fn enable_scope_stats(&self) -> bool {
        self.config.dfx.scope_stats
    }

    /// The generation of the DFX files asked for (`2026-08` / `2026-09`), or `None`: the
    /// build directory's.
    #[getter]
    fn dfx_schema(&self) -> Option<&'static str> {
        self.config.dfx_schema.map(|s| s.name())
    }

    /// `predicted` when the DFX files hold the timing model's times, else `host`.
    #[getter]
    fn timing(&self) -> &'static str {
        if self.config.dfx.predicted_timing {
            "predicted"
        } else {
            "host"
        }
    }

    /// The golden comparison's relative tolerance.
    #[getter]
    fn rtol(&self) -> f64 {
        self.config.rtol
    }

    /// The golden comparison's absolute tolerance.
    #[getter]
    fn atol(&self) -> f64 {
        self.config.atol
    }

    /// True when any of the five diagnostics is on.
    fn any_dfx_enabled(&self) -> bool {
        self.config.dfx.any()
    }

    /// True when a run writes files under `dfx_outputs/`: one of the five diagnostics, or
    /// the predicted timing (`predicted_timing.json`).
    fn writes_dfx_files(&self) -> bool {
        self.config.dfx.writes_files()
    }

    fn __repr__(&self) -> String {
        let switches = DFX_SWITCHES.iter().map(|s| {
            let value = (s.get)(&self.config.dfx);
            match s.kind {
                SwitchKind::Flag if value != 0 => format!(", {}=True", s.python_keyword),
                SwitchKind::Flag => format!(", {}=False", s.python_keyword),
                SwitchKind::Level { .. } => format!(", {}={value}", s.python_keyword),
            }
        });
        format!(
            "RunOptions(platform='{}'{})",
            self.config.platform().name(),
            switches.collect::<String>()
        )
    }
}

/// Normalizes a swimlane level: `True` gives 4, `False` 0, an int in [0, 4] itself.
///
/// Raises `TypeError` for a non-int and `ValueError` for an int out of range, naming
/// `source` (`enable_chip_swimlane`, or the deprecated alias the caller used).
#[pyfunction]
pub fn normalize_swimlane_level(value: &Bound<'_, PyAny>, source: &str) -> PyResult<u8> {
    let switch = DfxSwitch::named("chip_swimlane");
    let (level, bad_repr) = conversion::switch_value(switch, value, source)?;
    match switch.check(level, source) {
        Ok(()) => Ok(u8::try_from(level).unwrap_or(u8::MAX)),
        Err(err) => {
            let message =
                python_value_in_message(err.to_string(), &level.to_string(), bad_repr.as_deref());
            Err(runner_error(pto_runner::RunnerError::config(message)))
        }
    }
}
