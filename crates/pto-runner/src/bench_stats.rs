//! Benchmark statistics: the per-round timings of `pto bench` / `benchmark()`
//! and the figures derived from them.
//!
//! [`BenchmarkStats`] mirrors the data fields of PyPTO's `BenchmarkStats`
//! dataclass (`device_wall_us`, `host_wall_us`, `rounds`, `warmup`) and its
//! derived accessors: `device_us_{min,median,mean,max,stdev}` and the same
//! for host, which return `0.0` for no samples, with the *sample* standard
//! deviation (divisor `n - 1`, like Python's `statistics.stdev`) and `0.0`
//! when `n <= 1`. We add p90 and p99.
//!
//! A key decision: percentiles use **linear interpolation between closest
//! ranks** (NumPy's default `method="linear"`): for `p` in `[0, 100]` over
//! the sorted samples `s[0..n]`, `rank = p / 100 * (n - 1)`, and the result
//! is `s[floor(rank)] + (s[ceil(rank)] - s[floor(rank)]) * frac(rank)`. It is
//! continuous in the data, gives the median at `p = 50`, and equals
//! `numpy.percentile`, so numbers can be checked against Python.
//!
//! [`BenchmarkStats`] displays as PyPTO's one-liner
//! `BenchmarkStats(rounds=R, warmup=W): device_wall_us min=.. median=..
//! mean=.. max=.. stdev=..` with three decimals (nanosecond resolution in
//! µs); the alternate form (`{:#}`) adds a `host_wall_us` line.
//! [`BenchmarkStats::to_json`] is the `pto bench --json` document.

use std::fmt;

/// The schema number of [`BenchmarkStats::to_json`].
pub const BENCH_JSON_SCHEMA: u32 = 1;

/// Invalid `rounds` / `warmup` (PyPTO's `ValueError` texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BenchArgsError {
    /// `rounds` was zero or negative.
    #[error("rounds must be positive, got {0}")]
    Rounds(i64),
    /// `warmup` was negative.
    #[error("warmup must be non-negative, got {0}")]
    Warmup(i64),
    /// `rounds` or `warmup` past [`MAX_BENCH_ROUNDS`] (each round is a whole run, and the
    /// samples are kept).
    #[error("{what} must be at most {MAX_BENCH_ROUNDS}, got {value}")]
    TooMany {
        /// `rounds` or `warmup`.
        what: &'static str,
        /// The value asked for, as given (`18446744073709551615`, not `-1`).
        value: u64,
    },
}

/// Most `rounds` (and `warmup`) a benchmark takes: each round is a whole run, and each
/// measured one keeps two samples.
pub const MAX_BENCH_ROUNDS: u64 = 1_000_000;

/// [`validate_bench_args`] for counts as a command line gives them (unsigned): a count past
/// [`MAX_BENCH_ROUNDS`] is reported as given, never wrapped to a negative number.
pub fn validate_bench_counts(rounds: u64, warmup: u64) -> Result<(), BenchArgsError> {
    if rounds > MAX_BENCH_ROUNDS {
        return Err(BenchArgsError::TooMany {
            what: "rounds",
            value: rounds,
        });
    }
    if warmup > MAX_BENCH_ROUNDS {
        return Err(BenchArgsError::TooMany {
            what: "warmup",
            value: warmup,
        });
    }
    // Both fit an i64 now.
    validate_bench_args(rounds as i64, warmup as i64)
}

/// Checks benchmark arguments as PyPTO's `benchmark()` does: `rounds` first
/// (must be positive), then `warmup` (must be non-negative).
pub fn validate_bench_args(rounds: i64, warmup: i64) -> Result<(), BenchArgsError> {
    if rounds <= 0 {
        return Err(BenchArgsError::Rounds(rounds));
    }
    if warmup < 0 {
        return Err(BenchArgsError::Warmup(warmup));
    }
    for (what, value) in [("rounds", rounds), ("warmup", warmup)] {
        if value as u64 > MAX_BENCH_ROUNDS {
            return Err(BenchArgsError::TooMany {
                what,
                value: value as u64,
            });
        }
    }
    Ok(())
}

/// Summary figures of one sample series (all `0.0` when it is empty).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SampleSummary {
    /// Number of samples.
    pub n: usize,
    /// Smallest sample.
    pub min: f64,
    /// Median (mean of the two middle samples when `n` is even).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Largest sample.
    pub max: f64,
    /// Sample standard deviation (divisor `n - 1`); `0.0` when `n <= 1`.
    pub stdev: f64,
    /// 90th percentile (linear interpolation, see the module docs).
    pub p90: f64,
    /// 99th percentile (linear interpolation).
    pub p99: f64,
}

impl SampleSummary {
    /// Summarizes `samples` (in any order).
    pub fn of(samples: &[f64]) -> SampleSummary {
        let n = samples.len();
        if n == 0 {
            return SampleSummary {
                n,
                min: 0.0,
                median: 0.0,
                mean: 0.0,
                max: 0.0,
                stdev: 0.0,
                p90: 0.0,
                p99: 0.0,
            };
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = samples.iter().sum::<f64>() / n as f64;
        let stdev = if n <= 1 {
            0.0
        } else {
            let ss: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
            (ss / (n - 1) as f64).sqrt()
        };
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        SampleSummary {
            n,
            min: sorted[0],
            median,
            mean,
            max: sorted[n - 1],
            stdev,
            p90: percentile_sorted(&sorted, 90.0),
            p99: percentile_sorted(&sorted, 99.0),
        }
    }

    fn to_json(self, samples: &[f64]) -> serde_json::Value {
        serde_json::json!({
            "n": self.n,
            "min": self.min,
            "median": self.median,
            "mean": self.mean,
            "max": self.max,
            "stdev": self.stdev,
            "p90": self.p90,
            "p99": self.p99,
            "samples": samples,
        })
    }
}

/// The `p`-th percentile (`0 ≤ p ≤ 100`, clamped) of `samples` by linear
/// interpolation between closest ranks (NumPy's default); `0.0` when empty.
pub fn percentile(samples: &[f64], p: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, p)
}

fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return 0.0;
    }
    let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 100.0) };
    let rank = p / 100.0 * (n - 1) as f64;
    // `rank` is in [0, n - 1], so both casts are in range.
    let lo = rank.floor() as usize;
    let hi = (rank.ceil() as usize).min(n - 1);
    let frac = rank - lo as f64;
    sorted[lo] + (sorted[hi] - sorted[lo]) * frac
}

/// Timings of a benchmark: one device and one host wall time per measured
/// round (warm-up rounds already dropped), in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchmarkStats {
    /// Device wall time per round, µs.
    pub device_wall_us: Vec<f64>,
    /// Host wall time per round (the whole launch), µs.
    pub host_wall_us: Vec<f64>,
    /// Measured rounds requested.
    pub rounds: usize,
    /// Warm-up rounds run and discarded.
    pub warmup: usize,
}

impl BenchmarkStats {
    /// The device samples (PyPTO's `samples` alias).
    pub fn samples(&self) -> &[f64] {
        &self.device_wall_us
    }

    /// Summary of [`BenchmarkStats::device_wall_us`].
    pub fn device_summary(&self) -> SampleSummary {
        SampleSummary::of(&self.device_wall_us)
    }

    /// Summary of [`BenchmarkStats::host_wall_us`].
    pub fn host_summary(&self) -> SampleSummary {
        SampleSummary::of(&self.host_wall_us)
    }

    /// Smallest device wall time (0.0 when there are no samples).
    pub fn device_us_min(&self) -> f64 {
        self.device_summary().min
    }

    /// Median device wall time.
    pub fn device_us_median(&self) -> f64 {
        self.device_summary().median
    }

    /// Mean device wall time.
    pub fn device_us_mean(&self) -> f64 {
        self.device_summary().mean
    }

    /// Largest device wall time.
    pub fn device_us_max(&self) -> f64 {
        self.device_summary().max
    }

    /// Sample standard deviation of the device wall time (0.0 when n ≤ 1).
    pub fn device_us_stdev(&self) -> f64 {
        self.device_summary().stdev
    }

    /// 90th percentile of the device wall time.
    pub fn device_us_p90(&self) -> f64 {
        self.device_summary().p90
    }

    /// 99th percentile of the device wall time.
    pub fn device_us_p99(&self) -> f64 {
        self.device_summary().p99
    }

    /// Smallest host wall time (0.0 when there are no samples).
    pub fn host_us_min(&self) -> f64 {
        self.host_summary().min
    }

    /// Median host wall time.
    pub fn host_us_median(&self) -> f64 {
        self.host_summary().median
    }

    /// Mean host wall time.
    pub fn host_us_mean(&self) -> f64 {
        self.host_summary().mean
    }

    /// Largest host wall time.
    pub fn host_us_max(&self) -> f64 {
        self.host_summary().max
    }

    /// Sample standard deviation of the host wall time (0.0 when n ≤ 1).
    pub fn host_us_stdev(&self) -> f64 {
        self.host_summary().stdev
    }

    /// 90th percentile of the host wall time.
    pub fn host_us_p90(&self) -> f64 {
        self.host_summary().p90
    }

    /// 99th percentile of the host wall time.
    pub fn host_us_p99(&self) -> f64 {
        self.host_summary().p99
    }

    /// True when there are device samples and every one is zero (a
    /// simulator or a build without device timing).
    pub fn all_zero_device(&self) -> bool {
        !self.device_wall_us.is_empty() && self.device_wall_us.iter().all(|&x| x == 0.0)
    }

    /// The `pto bench --json` document, keys in this fixed order:
    /// `schema`, `rounds`, `warmup`, `all_zero_device`, then
    /// `device_wall_us` and `host_wall_us`, each an object with `n`, `min`,
    /// `median`, `mean`, `max`, `stdev`, `p90`, `p99` and `samples`.
    /// Non-finite numbers become `null`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "schema": BENCH_JSON_SCHEMA,
            "rounds": self.rounds,
            "warmup": self.warmup,
            "all_zero_device": self.all_zero_device(),
            "device_wall_us": self.device_summary().to_json(&self.device_wall_us),
            "host_wall_us": self.host_summary().to_json(&self.host_wall_us),
        })
    }

    /// [`BenchmarkStats::to_json`] as text, two-space indented, with a
    /// trailing newline.
    pub fn to_json_string(&self) -> String {
        let mut text = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        text.push('\n');
        text
    }
}

fn write_series(f: &mut fmt::Formatter<'_>, name: &str, s: SampleSummary) -> fmt::Result {
    write!(
        f,
        "{name} min={:.3} median={:.3} mean={:.3} max={:.3} stdev={:.3}",
        s.min, s.median, s.mean, s.max, s.stdev
    )
}

impl fmt::Display for BenchmarkStats {
    /// `BenchmarkStats(rounds=R, warmup=W): device_wall_us min=.. median=..
    /// mean=.. max=.. stdev=..`; with `{:#}` a second line
    /// `  host_wall_us min=.. ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BenchmarkStats(rounds={}, warmup={}): ",
            self.rounds, self.warmup
        )?;
        write_series(f, "device_wall_us", self.device_summary())?;
        if f.alternate() {
            f.write_str("\n  ")?;
            write_series(f, "host_wall_us", self.host_summary())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    fn stats(device: &[f64], host: &[f64]) -> BenchmarkStats {
        BenchmarkStats {
            device_wall_us: device.to_vec(),
            host_wall_us: host.to_vec(),
            rounds: device.len(),
            warmup: 3,
        }
    }

    #[test]
    fn argument_validation_texts() {
        assert_eq!(validate_bench_args(1, 0), Ok(()));
        assert_eq!(validate_bench_args(100, 3), Ok(()));
        let cases = [
            (0, 3, "rounds must be positive, got 0"),
            (-5, 3, "rounds must be positive, got -5"),
            (10, -1, "warmup must be non-negative, got -1"),
            // rounds is checked first.
            (0, -1, "rounds must be positive, got 0"),
        ];
        for (rounds, warmup, text) in cases {
            let err = validate_bench_args(rounds, warmup).err();
            assert_eq!(err.map(|e| e.to_string()).as_deref(), Some(text));
        }
    }

    /// `pto bench --rounds 18446744073709551615` was reported as `rounds must be positive,
    /// got -1` (and a huge count reserved its samples up front): counts are checked
    /// unsigned, against MAX_BENCH_ROUNDS, and reported as given.
    #[test]
    fn huge_counts_are_reported_as_given() {
        assert_eq!(validate_bench_counts(100, 3), Ok(()));
        assert_eq!(validate_bench_counts(MAX_BENCH_ROUNDS, 0), Ok(()));
        let text = |r: Result<(), BenchArgsError>| r.unwrap_err().to_string();
        assert_eq!(
            text(validate_bench_counts(u64::MAX, 3)),
            "rounds must be at most 1000000, got 18446744073709551615"
        );
        assert_eq!(
            text(validate_bench_counts(10, u64::MAX)),
            "warmup must be at most 1000000, got 18446744073709551615"
        );
        assert_eq!(
            text(validate_bench_counts(0, 3)),
            "rounds must be positive, got 0"
        );
        assert_eq!(
            text(validate_bench_args(i64::MAX, 0)),
            "rounds must be at most 1000000, got 9223372036854775807"
        );
    }

    /// Expected values from Python's `statistics` and `numpy.percentile`.
    #[test]
    fn known_values() {
        let cases: &[(&[f64], [f64; 7])] = &[
            // samples: min, median, mean, max, stdev, p90, p99
            (
                &[1.0, 2.0, 3.0, 4.0],
                [1.0, 2.5, 2.5, 4.0, 1.2909944487358056, 3.7, 3.97],
            ),
            (
                &[4.0, 1.0, 3.0, 2.0],
                [1.0, 2.5, 2.5, 4.0, 1.2909944487358056, 3.7, 3.97],
            ),
            (
                &[10.0, 20.0, 30.0],
                [10.0, 20.0, 20.0, 30.0, 10.0, 28.0, 29.8],
            ),
            (&[5.0], [5.0, 5.0, 5.0, 5.0, 0.0, 5.0, 5.0]),
            (&[], [0.0; 7]),
            (
                &[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0],
                [2.0, 4.5, 5.0, 9.0, 2.138089935299395, 7.6, 8.86],
            ),
        ];
        for (samples, [min, median, mean, max, stdev, p90, p99]) in cases {
            let s = SampleSummary::of(samples);
            let got = [s.min, s.median, s.mean, s.max, s.stdev, s.p90, s.p99];
            let want = [*min, *median, *mean, *max, *stdev, *p90, *p99];
            for (g, w) in got.iter().zip(want) {
                assert!(close(*g, w), "{samples:?}: got {got:?}, want {want:?}");
            }
            assert_eq!(s.n, samples.len());
        }
        assert!(close(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0), 2.5));
        assert!(close(percentile(&[1.0, 2.0, 3.0, 4.0], 0.0), 1.0));
        assert!(close(percentile(&[1.0, 2.0, 3.0, 4.0], 100.0), 4.0));
        assert!(close(percentile(&[1.0, 2.0, 3.0, 4.0], 250.0), 4.0));
        assert_eq!(percentile(&[], 90.0), 0.0);
    }

    #[test]
    fn accessors_cover_device_and_host() {
        let s = stats(&[1.0, 2.0, 3.0, 4.0], &[10.0, 20.0, 30.0]);
        assert_eq!(s.samples(), &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            [
                s.device_us_min(),
                s.device_us_median(),
                s.device_us_mean(),
                s.device_us_max()
            ],
            [1.0, 2.5, 2.5, 4.0]
        );
        assert!(close(s.device_us_stdev(), 1.2909944487358056));
        assert!(close(s.device_us_p90(), 3.7));
        assert!(close(s.device_us_p99(), 3.97));
        assert_eq!(
            [
                s.host_us_min(),
                s.host_us_median(),
                s.host_us_mean(),
                s.host_us_max(),
                s.host_us_stdev()
            ],
            [10.0, 20.0, 20.0, 30.0, 10.0]
        );
        assert!(close(s.host_us_p90(), 28.0));
        assert!(close(s.host_us_p99(), 29.8));
    }

    #[test]
    fn all_zero_device_needs_samples() {
        assert!(!stats(&[], &[]).all_zero_device());
        assert!(stats(&[0.0, 0.0], &[5.0, 6.0]).all_zero_device());
        assert!(!stats(&[0.0, 0.1], &[5.0, 6.0]).all_zero_device());
    }

    #[test]
    fn display_matches_pypto_head() {
        let s = BenchmarkStats {
            device_wall_us: vec![1.0, 2.0, 3.0, 4.0],
            host_wall_us: vec![10.0, 20.0, 30.0],
            rounds: 4,
            warmup: 2,
        };
        assert_eq!(
            s.to_string(),
            "BenchmarkStats(rounds=4, warmup=2): device_wall_us min=1.000 median=2.500 mean=2.500 max=4.000 stdev=1.291"
        );
        assert_eq!(
            format!("{s:#}"),
            "BenchmarkStats(rounds=4, warmup=2): device_wall_us min=1.000 median=2.500 mean=2.500 max=4.000 stdev=1.291\n  host_wall_us min=10.000 median=20.000 mean=20.000 max=30.000 stdev=10.000"
        );
        let empty = BenchmarkStats {
            device_wall_us: vec![],
            host_wall_us: vec![],
            rounds: 1,
            warmup: 0,
        };
        assert_eq!(
            empty.to_string(),
            "BenchmarkStats(rounds=1, warmup=0): device_wall_us min=0.000 median=0.000 mean=0.000 max=0.000 stdev=0.000"
        );
    }

    #[test]
    fn json_has_stable_keys() {
        let s = BenchmarkStats {
            device_wall_us: vec![0.0, 0.0],
            host_wall_us: vec![1.5],
            rounds: 2,
            warmup: 1,
        };
        let expected = r#"{
  "schema": 1,
  "rounds": 2,
  "warmup": 1,
  "all_zero_device": true,
  "device_wall_us": {
    "n": 2,
    "min": 0.0,
    "median": 0.0,
    "mean": 0.0,
    "max": 0.0,
    "stdev": 0.0,
    "p90": 0.0,
    "p99": 0.0,
    "samples": [
      0.0,
      0.0
    ]
  },
  "host_wall_us": {
    "n": 1,
    "min": 1.5,
    "median": 1.5,
    "mean": 1.5,
    "max": 1.5,
    "stdev": 0.0,
    "p90": 1.5,
    "p99": 1.5,
    "samples": [
      1.5
    ]
  }
}
"#;
        assert_eq!(s.to_json_string(), expected);
    }
}
