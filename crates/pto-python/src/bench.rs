//! `BenchmarkStats`: the per-round timings of `benchmark()` and their summaries, all
//! computed by `pto_runner::bench_stats`.

use pto_runner::bench_stats::{validate_bench_args as validate_args, BenchmarkStats as Stats};
use pyo3::prelude::*;

use crate::error::value_error;

/// Benchmark timings: one device and one host wall time per measured round (warm-up rounds
/// dropped), in microseconds, with their summaries.
#[pyclass(module = "pypto._native", frozen)]
pub struct BenchmarkStats {
    pub(crate) stats: Stats,
}

#[pymethods]
impl BenchmarkStats {
    /// Builds statistics from samples (`rounds` defaults to the number of device samples).
    #[new]
    #[pyo3(signature = (device_wall_us, host_wall_us, rounds = None, warmup = 0))]
    fn new(
        device_wall_us: Vec<f64>,
        host_wall_us: Vec<f64>,
        rounds: Option<usize>,
        warmup: usize,
    ) -> BenchmarkStats {
        let rounds = rounds.unwrap_or(device_wall_us.len());
        BenchmarkStats {
            stats: Stats {
                device_wall_us,
                host_wall_us,
                rounds,
                warmup,
            },
        }
    }

    /// Device wall time per round, µs.
    #[getter]
    fn device_wall_us(&self) -> Vec<f64> {
        self.stats.device_wall_us.clone()
    }

    /// Host wall time per round (the whole launch), µs.
    #[getter]
    fn host_wall_us(&self) -> Vec<f64> {
        self.stats.host_wall_us.clone()
    }

    /// The device samples (alias of `device_wall_us`).
    #[getter]
    fn samples(&self) -> Vec<f64> {
        self.stats.samples().to_vec()
    }

    /// Measured rounds.
    #[getter]
    fn rounds(&self) -> usize {
        self.stats.rounds
    }

    /// Warm-up rounds run and discarded.
    #[getter]
    fn warmup(&self) -> usize {
        self.stats.warmup
    }

    /// Smallest device wall time, µs (0.0 without samples).
    #[getter]
    fn device_us_min(&self) -> f64 {
        self.stats.device_us_min()
    }

    /// Median device wall time, µs.
    #[getter]
    fn device_us_median(&self) -> f64 {
        self.stats.device_us_median()
    }

    /// Mean device wall time, µs.
    #[getter]
    fn device_us_mean(&self) -> f64 {
        self.stats.device_us_mean()
    }

    /// Largest device wall time, µs.
    #[getter]
    fn device_us_max(&self) -> f64 {
        self.stats.device_us_max()
    }

    /// Sample standard deviation of the device wall time, µs (0.0 when n <= 1).
    #[getter]
    fn device_us_stdev(&self) -> f64 {
        self.stats.device_us_stdev()
    }

    /// 90th percentile of the device wall time, µs.
    #[getter]
    fn device_us_p90(&self) -> f64 {
        self.stats.device_us_p90()
    }

    /// 99th percentile of the device wall time, µs.
    #[getter]
    fn device_us_p99(&self) -> f64 {
        self.stats.device_us_p99()
    }

    /// Smallest host wall time, µs.
    #[getter]
    fn host_us_min(&self) -> f64 {
        self.stats.host_us_min()
    }

    /// Median host wall time, µs.
    #[getter]
    fn host_us_median(&self) -> f64 {
        self.stats.host_us_median()
    }

    /// Mean host wall time, µs.
    #[getter]
    fn host_us_mean(&self) -> f64 {
        self.stats.host_us_mean()
    }

    /// Largest host wall time, µs.
    #[getter]
    fn host_us_max(&self) -> f64 {
        self.stats.host_us_max()
    }

    /// Sample standard deviation of the host wall time, µs.
    #[getter]
    fn host_us_stdev(&self) -> f64 {
        self.stats.host_us_stdev()
    }

    /// True when there are device samples and every one is zero.
    #[getter]
    fn all_zero_device(&self) -> bool {
        self.stats.all_zero_device()
    }

    /// The `pto bench --json` document as text.
    fn to_json(&self) -> String {
        self.stats.to_json_string()
    }

    fn __str__(&self) -> String {
        self.stats.to_string()
    }

    fn __repr__(&self) -> String {
        self.stats.to_string()
    }
}

/// Checks `rounds` (positive) then `warmup` (non-negative); raises `ValueError` with
/// PyPTO's texts (`rounds must be positive, got 0`).
#[pyfunction]
pub fn validate_bench_args(rounds: i64, warmup: i64) -> PyResult<()> {
    validate_args(rounds, warmup).map_err(|e| value_error(e.to_string()))
}
