//! `benchmark`: run a loaded build many times and collect per-round device and host times.
//!
//! Device time is measured inside the runtime (orchestration start to the end of the last
//! task); host time is the whole call (binding, run, copy-back). Every round starts from
//! the same inputs: outputs and INOUT tensors are restored before each launch, as Simpler
//! does for `--rounds > 1`, and diagnostics are off (they would perturb the timing).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::bench_stats::{validate_bench_counts, BenchmarkStats};
use crate::build::CompiledBuild;
use crate::config::{DfxOptions, RunConfig};
use crate::error::RunnerError;
use crate::execute::ExecuteOutcome;
use crate::inputs::BoundParam;
use crate::predicted::PredictedSummary;

/// Runs `warmup` discarded launches and `rounds` measured ones; `progress(done, total)` is
/// called after each launch.
pub fn benchmark(
    build: &CompiledBuild,
    params: &mut [BoundParam],
    config: &RunConfig,
    rounds: usize,
    warmup: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<BenchmarkStats, RunnerError> {
    let mut bench = Bench::new(build, params, config, rounds, warmup)?;
    let mut stats = bench.stats();
    let total = rounds + warmup;
    for i in 0..total {
        let (out, _) = bench.round(false)?;
        if i >= warmup {
            stats.push(&out, out.report.wall);
        }
        progress(i + 1, total);
    }
    bench.finish();
    Ok(stats)
}

/// `pto bench --timing predicted`: the same rounds with and without the timing model.
#[derive(Clone, Debug)]
pub struct PredictedBenchmark {
    /// Rounds without the model (a bare replay).
    pub bare: BenchmarkStats,
    /// Rounds with `--timing predicted` (trace, pipe and graph schedules,
    /// `predicted_timing.json`).
    pub predicted: BenchmarkStats,
    /// What the model predicted (the same every round: the model is deterministic).
    pub summary: PredictedSummary,
}

impl PredictedBenchmark {
    /// Median host time with the model over median host time without it.
    pub fn overhead(&self) -> f64 {
        let bare = self.bare.host_us_median();
        if bare > 0.0 {
            self.predicted.host_us_median() / bare
        } else {
            0.0
        }
    }

    /// The statistics and the prediction as one JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "bare": self.bare.to_json(),
            "predicted_timing": self.predicted.to_json(),
            "host_median_ratio": self.overhead(),
            "predicted": self.summary.to_json(),
        })
    }
}

/// Like [`benchmark`], with each round run twice, once bare and once with the timing model
/// on (alternating, so both see the same machine load); `progress` counts both. Host time
/// here is the whole call of each round (with the model: the trace, the pipe and graph
/// schedules and `predicted_timing.json`), for both kinds of round.
pub fn benchmark_predicted(
    build: &CompiledBuild,
    params: &mut [BoundParam],
    config: &RunConfig,
    rounds: usize,
    warmup: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<PredictedBenchmark, RunnerError> {
    let mut bench = Bench::new(build, params, config, rounds, warmup)?;
    let (mut bare, mut predicted) = (bench.stats(), bench.stats());
    let mut summary = None;
    let total = 2 * (rounds + warmup);
    for i in 0..rounds + warmup {
        let (out, wall) = bench.round(false)?;
        progress(2 * i + 1, total);
        let (timed_out, timed_wall) = bench.round(true)?;
        progress(2 * i + 2, total);
        if i >= warmup {
            bare.push(&out, wall);
            predicted.push(&timed_out, timed_wall);
        }
        if summary.is_none() {
            summary = Some(read_prediction(&timed_out)?);
        }
    }
    bench.finish();
    Ok(PredictedBenchmark {
        bare,
        predicted,
        summary: summary.unwrap_or_default(),
    })
}

/// The prediction a timed round wrote.
fn read_prediction(out: &ExecuteOutcome) -> Result<PredictedSummary, RunnerError> {
    let path = out
        .dfx
        .files
        .iter()
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n == crate::predicted::FILE_NAME)
        })
        .ok_or_else(|| {
            RunnerError::config(format!(
                "a --timing predicted round wrote no {}",
                crate::predicted::FILE_NAME
            ))
        })?;
    PredictedSummary::read(path)
}

/// The launches of one benchmark: the build, its parameters and their initial bytes.
struct Bench<'a> {
    build: &'a CompiledBuild,
    params: &'a mut [BoundParam],
    initial: Vec<Vec<u8>>,
    /// The run configuration without diagnostics (they would perturb the timing).
    bare: RunConfig,
    /// `bare` with `--timing predicted`.
    timed: RunConfig,
    /// Where the timed rounds write `predicted_timing.json`: a private directory, so the
    /// build's `dfx_outputs/` keeps its files (created on the first timed round).
    timed_dir: Option<PathBuf>,
    rounds: usize,
    warmup: usize,
}

impl<'a> Bench<'a> {
    fn new(
        build: &'a CompiledBuild,
        params: &'a mut [BoundParam],
        config: &RunConfig,
        rounds: usize,
        warmup: usize,
    ) -> Result<Bench<'a>, RunnerError> {
        validate_bench_counts(rounds as u64, warmup as u64)
            .map_err(|e| RunnerError::config(e.to_string()))?;
        let mut bare = config.clone();
        bare.dfx = DfxOptions::default();
        let initial = params
            .iter()
            .map(|p| match p {
                BoundParam::Tensor { array, .. } => array.data.clone(),
                BoundParam::Scalar { .. } => Vec::new(),
            })
            .collect();
        let mut timed = bare.clone();
        timed.dfx.predicted_timing = true;
        Ok(Bench {
            build,
            params,
            initial,
            timed,
            timed_dir: None,
            bare,
            rounds,
            warmup,
        })
    }

    fn stats(&self) -> BenchmarkStats {
        BenchmarkStats {
            device_wall_us: Vec::with_capacity(self.rounds),
            host_wall_us: Vec::with_capacity(self.rounds),
            rounds: self.rounds,
            warmup: self.warmup,
        }
    }

    /// One launch from the initial inputs, with the timing model when `timed`, and its host
    /// time as a whole (the run, the graph schedule, the files).
    fn round(&mut self, timed: bool) -> Result<(ExecuteOutcome, Duration), RunnerError> {
        for (p, init) in self.params.iter_mut().zip(&self.initial) {
            if let BoundParam::Tensor { array, .. } = p {
                array.data.copy_from_slice(init);
            }
        }
        let dir = if timed {
            self.timed_dir()?
        } else {
            crate::dfx_output::dfx_dir(&self.build.dir)
        };
        let config = if timed { &self.timed } else { &self.bare };
        let start = Instant::now();
        let out = self.build.execute_pass(self.params, config, &dir)?;
        Ok((out, start.elapsed()))
    }

    fn timed_dir(&mut self) -> Result<PathBuf, RunnerError> {
        if let Some(d) = &self.timed_dir {
            return Ok(d.clone());
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "pto-bench-predicted-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).map_err(|source| RunnerError::Io {
            action: "creating",
            path: dir.clone(),
            source,
        })?;
        self.timed_dir = Some(dir.clone());
        Ok(dir)
    }

    fn finish(&self) {
        if let Some(note) = self.build.loaded_files.change_note(&self.build.identity) {
            tracing::warn!("{note}");
        }
    }
}

impl Drop for Bench<'_> {
    fn drop(&mut self) {
        if let Some(d) = &self.timed_dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

impl BenchmarkStats {
    /// Adds one measured round with host time `host`.
    fn push(&mut self, out: &ExecuteOutcome, host: Duration) {
        self.device_wall_us
            .push(out.report.device_time.as_secs_f64() * 1e6);
        self.host_wall_us.push(host.as_secs_f64() * 1e6);
    }
}
