//! `benchmark`: run a loaded build many times and collect per-round device and host times.
//!
//! Device time is measured inside the runtime (orchestration start to the end of the last
//! task); host time is the whole call (binding, run, copy-back). Every round starts from
//! the same inputs: outputs and INOUT tensors are restored before each launch, as Simpler
//! does for `--rounds > 1`, and diagnostics are off (they would perturb the timing).

use crate::bench_stats::{validate_bench_counts, BenchmarkStats};
use crate::build::CompiledBuild;
use crate::config::{DfxOptions, RunConfig};
use crate::error::RunnerError;
use crate::inputs::BoundParam;

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
    validate_bench_counts(rounds as u64, warmup as u64)
        .map_err(|e| RunnerError::config(e.to_string()))?;
    let mut config = config.clone();
    config.dfx = DfxOptions::default();
    let initial: Vec<Vec<u8>> = params
        .iter()
        .map(|p| match p {
            BoundParam::Tensor { array, .. } => array.data.clone(),
            BoundParam::Scalar { .. } => Vec::new(),
        })
        .collect();
    let mut stats = BenchmarkStats {
        device_wall_us: Vec::with_capacity(rounds),
        host_wall_us: Vec::with_capacity(rounds),
        rounds,
        warmup,
    };
    let total = rounds + warmup;
    for i in 0..total {
        for (p, init) in params.iter_mut().zip(&initial) {
            if let BoundParam::Tensor { array, .. } = p {
                array.data.copy_from_slice(init);
            }
        }
        let out = build.execute_pass(params, &config, &crate::dfx_output::dfx_dir(&build.dir))?;
        if i >= warmup {
            stats
                .device_wall_us
                .push(out.report.device_time.as_secs_f64() * 1e6);
            stats.host_wall_us.push(out.report.wall.as_secs_f64() * 1e6);
        }
        progress(i + 1, total);
    }
    if let Some(note) = build.loaded_files.change_note(&build.identity) {
        tracing::warn!("{note}");
    }
    Ok(stats)
}
