//! Per-run configuration of the chip runtime: platform, ring sizes, timeouts, workers.
//!
//! Ring sizes resolve with Simpler's precedence: a per-run override (scalar or one value per
//! ring) beats the `PTO2_RING_TASK_WINDOW` / `PTO2_RING_HEAP` / `PTO2_RING_DEP_POOL`
//! environment variables (scalar or `a,b,c,d`), which beat the defaults. Validation follows
//! Simpler: a task window is a power of two in `[4, i32::MAX]`, a heap at least 1024 bytes,
//! a dep pool in `[4, i32::MAX]`.

use std::time::Duration;

use crate::error::RuntimeError;
use crate::platform::Platform;

/// Number of scope-depth rings.
pub const N_RINGS: usize = 4;
/// Default task window slots per ring.
pub const DEFAULT_TASK_WINDOW: u64 = 16384;
/// Default heap bytes per ring.
pub const DEFAULT_HEAP: u64 = 256 * 1024 * 1024;
/// Default dependency-list pool entries per ring.
pub const DEFAULT_DEP_POOL: u64 = 16384;
/// Default TensorMap entry pool size (global).
pub const DEFAULT_TENSORMAP_POOL: usize = 65536;
/// Default scheduler timeout (Simpler's `PLATFORM_SCHEDULER_TIMEOUT_MS`).
pub const DEFAULT_SCHEDULER_TIMEOUT: Duration = Duration::from_secs(10);

/// A per-ring override: one value for every ring, or one per ring (0 = keep the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingOverride {
    /// The same value for all four rings.
    All(u64),
    /// One value per ring; 0 keeps that ring's default.
    PerRing([u64; N_RINGS]),
}

impl RingOverride {
    fn apply(self, values: &mut [u64; N_RINGS]) {
        match self {
            RingOverride::All(0) => {}
            RingOverride::All(v) => *values = [v; N_RINGS],
            RingOverride::PerRing(per) => {
                for (slot, v) in values.iter_mut().zip(per) {
                    if v != 0 {
                        *slot = v;
                    }
                }
            }
        }
    }
}

/// The ring overrides a caller asks for (before environment and defaults).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingOverrides {
    /// `ring_task_window`.
    pub task_window: Option<RingOverride>,
    /// `ring_heap`.
    pub heap: Option<RingOverride>,
    /// `ring_dep_pool`.
    pub dep_pool: Option<RingOverride>,
}

/// Resolved and validated ring sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RingSizes {
    /// Task window slots per ring (powers of two).
    pub task_window: [u64; N_RINGS],
    /// Heap bytes per ring.
    pub heap: [u64; N_RINGS],
    /// Dependency-list pool entries per ring.
    pub dep_pool: [u64; N_RINGS],
    /// TensorMap entry pool size.
    pub tensormap_pool: usize,
}

impl RingSizes {
    /// Resolves overrides > `PTO2_RING_*` environment > defaults, then validates.
    pub fn resolve(overrides: &RingOverrides) -> Result<RingSizes, RuntimeError> {
        Self::resolve_with_env(overrides, &|name| std::env::var(name).ok())
    }

    /// [`RingSizes::resolve`] with an explicit environment (for tests).
    pub fn resolve_with_env(
        overrides: &RingOverrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<RingSizes, RuntimeError> {
        let resolve_one = |default: u64,
                           over: Option<RingOverride>,
                           var: &str,
                           rule: &str,
                           ok: &dyn Fn(u64) -> bool|
         -> [u64; N_RINGS] {
            let mut values = [default; N_RINGS];
            if let Some(text) = env(var) {
                match env_ring_values(&text, ok) {
                    Some(parsed) => values = parsed,
                    // Simpler's runtime logs a warning and ignores the variable.
                    None => tracing::warn!(
                        "{var}={text:?} ignored (as Simpler does): it must be one value or four comma-separated values, each {rule}"
                    ),
                }
            }
            if let Some(over) = over {
                over.apply(&mut values);
            }
            values
        };
        let sizes = RingSizes {
            task_window: resolve_one(
                DEFAULT_TASK_WINDOW,
                overrides.task_window,
                "PTO2_RING_TASK_WINDOW",
                "a power of two in [4, 2147483647]",
                &|v| v.is_power_of_two() && (4..=i32::MAX as u64).contains(&v),
            ),
            heap: resolve_one(
                DEFAULT_HEAP,
                overrides.heap,
                "PTO2_RING_HEAP",
                "at least 1024 (bytes)",
                &|v| v >= 1024,
            ),
            dep_pool: resolve_one(
                DEFAULT_DEP_POOL,
                overrides.dep_pool,
                "PTO2_RING_DEP_POOL",
                "in [4, 2147483647]",
                &|v| (4..=i32::MAX as u64).contains(&v),
            ),
            tensormap_pool: DEFAULT_TENSORMAP_POOL,
        };
        sizes.validate()?;
        Ok(sizes)
    }

    fn validate(&self) -> Result<(), RuntimeError> {
        let bad = |message: String| Err(RuntimeError::InvalidConfig { message });
        for ring in 0..N_RINGS {
            let w = self.task_window[ring];
            if !w.is_power_of_two() || !(4..=i32::MAX as u64).contains(&w) {
                return bad(format!(
                    "ring_task_window[{ring}] = {w}: a task window must be a power of two in [4, {}]",
                    i32::MAX
                ));
            }
            let h = self.heap[ring];
            if h < 1024 {
                return bad(format!(
                    "ring_heap[{ring}] = {h}: a heap ring must be at least 1024 bytes"
                ));
            }
            let d = self.dep_pool[ring];
            if !(4..=i32::MAX as u64).contains(&d) {
                return bad(format!(
                    "ring_dep_pool[{ring}] = {d}: a dep pool must hold between 4 and {} entries",
                    i32::MAX
                ));
            }
        }
        self.check_memory(physical_memory())
    }

    /// The rings must fit this machine: a task window's slots are allocated whole (each
    /// slot holds a task's payload), so their total is checked against half the physical
    /// memory, and each heap (mapped, touched as used) against all of it — before anything
    /// is allocated, so an absurd size is an error naming the field, not an abort.
    fn check_memory(&self, physical: Option<u64>) -> Result<(), RuntimeError> {
        let Some(physical) = physical else {
            return Ok(());
        };
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        let slot = std::mem::size_of::<crate::task::TaskSlot>() as u64;
        let slots: u64 = self
            .task_window
            .iter()
            .map(|w| w.saturating_mul(slot))
            .fold(0, u64::saturating_add);
        if slots > physical / 2 {
            let (ring, w) = (0..N_RINGS)
                .map(|r| (r, self.task_window[r]))
                .max_by_key(|&(r, w)| (w, std::cmp::Reverse(r)))
                .unwrap_or((0, 0));
            return Err(RuntimeError::InvalidConfig {
                message: format!(
                    "ring_task_window[{ring}] = {w}: the four task windows need {:.1} GiB of task slots ({slot} bytes each), more than half of this machine's {:.1} GiB of memory; lower ring_task_window (or PTO2_RING_TASK_WINDOW)",
                    gib(slots),
                    gib(physical)
                ),
            });
        }
        for ring in 0..N_RINGS {
            let h = self.heap[ring];
            if h > physical {
                return Err(RuntimeError::InvalidConfig {
                    message: format!(
                        "ring_heap[{ring}] = {h}: {:.1} GiB is more than this machine's {:.1} GiB of memory; lower ring_heap (or PTO2_RING_HEAP)",
                        gib(h),
                        gib(physical)
                    ),
                });
            }
        }
        Ok(())
    }
}

/// This machine's physical memory in bytes (`None` when the system does not say).
fn physical_memory() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages > 0 && page > 0).then(|| (pages as u64).saturating_mul(page as u64))
}

/// A check the run's wait loop calls about every 50 ms; returning `true` stops the run
/// (e.g. Ctrl-C in a host interpreter that released its lock during the run).
#[derive(Clone)]
pub struct Interrupt(pub std::sync::Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Interrupt(..)")
    }
}

/// Everything the runtime needs for one run. Built by the runner from the user's
/// `RunConfig`; the runtime itself knows nothing of build directories or front ends.
#[derive(Clone, Debug)]
pub struct ChipConfig {
    /// The platform to simulate.
    pub platform: Platform,
    /// Resolved ring sizes.
    pub rings: RingSizes,
    /// No task finishing for this long while tasks run is a fatal `SCHEDULER_TIMEOUT`.
    pub scheduler_timeout: Duration,
    /// The pool's worker threads, exactly; `None` = the default pool (one per host CPU, on a
    /// simulated chip the last of them the reserve worker: crate::chip).
    pub n_workers: Option<usize>,
    /// Record submits and edges for `deps.json` (dep_gen).
    pub record_deps: bool,
    /// The other diagnostics.
    pub dfx: crate::dfx::DfxConfig,
    /// Polled while waiting for the run; `true` stops it with [`RuntimeError::Interrupted`].
    pub interrupt: Option<Interrupt>,
    /// An orchestration that neither returns nor submits for this long, with no task in
    /// flight, is a fatal `SCHEDULER_TIMEOUT` (`PTO_ORCHESTRATION_TIMEOUT_MS`; default 10 s).
    pub orchestration_timeout: Duration,
    /// Watches every thread of the run (used to explain a crash of the whole process).
    pub monitor: Option<crate::monitor::Monitor>,
}

impl ChipConfig {
    /// Whether the workers open and sample this host's counters: PMU on, on the platform
    /// whose `pmu.csv` shows them ([`Platform::pmu_counts_host`]).
    pub fn samples_host_counters(&self) -> bool {
        self.dfx.pmu > 0 && self.platform.pmu_counts_host()
    }

    /// A configuration with default rings (after the environment) and timeout
    /// (`SIMPLER_SCHEDULER_TIMEOUT_MS` when set).
    pub fn new(platform: Platform) -> Result<ChipConfig, RuntimeError> {
        let ms_from_env = |var: &str| -> Result<Option<Duration>, RuntimeError> {
            match std::env::var(var) {
                Ok(text) if !text.trim().is_empty() => match text.trim().parse::<u64>() {
                    Ok(ms) if ms > 0 => Ok(Some(Duration::from_millis(ms))),
                    _ => Err(RuntimeError::InvalidConfig {
                        message: format!("{var}={text:?} is not a positive number of milliseconds"),
                    }),
                },
                _ => Ok(None),
            }
        };
        let scheduler_timeout =
            scheduler_timeout_from_env(std::env::var("SIMPLER_SCHEDULER_TIMEOUT_MS").ok());
        let orchestration_timeout =
            ms_from_env("PTO_ORCHESTRATION_TIMEOUT_MS")?.unwrap_or(DEFAULT_SCHEDULER_TIMEOUT);
        Ok(ChipConfig {
            platform,
            rings: RingSizes::resolve(&RingOverrides::default())?,
            scheduler_timeout,
            n_workers: None,
            record_deps: false,
            dfx: crate::dfx::DfxConfig::default(),
            interrupt: None,
            orchestration_timeout,
            monitor: None,
        })
    }
}

/// The scheduler timeout from `SIMPLER_SCHEDULER_TIMEOUT_MS`, as Simpler's simulator reads it:
/// a positive number of milliseconds; unset, empty or 0 keeps the default; anything else is a
/// warning and keeps the default (Simpler ignores an invalid value).
fn scheduler_timeout_from_env(text: Option<String>) -> Duration {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return DEFAULT_SCHEDULER_TIMEOUT;
    };
    match text.trim().parse::<u64>() {
        Ok(0) => DEFAULT_SCHEDULER_TIMEOUT,
        Ok(ms) => Duration::from_millis(ms),
        Err(_) => {
            tracing::warn!(
                "SIMPLER_SCHEDULER_TIMEOUT_MS={text:?} ignored (as Simpler does): it must be a number of milliseconds"
            );
            DEFAULT_SCHEDULER_TIMEOUT
        }
    }
}

/// A `PTO2_RING_*` value by Simpler's rule: one integer, or four comma-separated ones, each
/// non-negative decimal and accepted by `ok` (0 included: it is below every minimum). `None`
/// when any token fails; the caller then ignores the whole variable, as Simpler does.
fn env_ring_values(text: &str, ok: &dyn Fn(u64) -> bool) -> Option<[u64; N_RINGS]> {
    let tokens: Vec<&str> = text.split(',').map(str::trim).collect();
    let value = |t: &str| -> Option<u64> {
        if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        t.parse().ok().filter(|v| ok(*v))
    };
    match tokens.as_slice() {
        [one] => value(one).map(|v| [v; N_RINGS]),
        [a, b, c, d] => Some([value(a)?, value(b)?, value(c)?, value(d)?]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(over: RingOverrides, env: &[(&str, &str)]) -> Result<RingSizes, String> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RingSizes::resolve_with_env(&over, &|name| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_then_env_then_override() {
        let s = resolve(RingOverrides::default(), &[]).unwrap();
        assert_eq!(s.task_window, [16384; 4]);
        assert_eq!(s.heap, [256 << 20; 4]);
        let s = resolve(
            RingOverrides::default(),
            &[("PTO2_RING_TASK_WINDOW", "64,128,4096,16384")],
        )
        .unwrap();
        assert_eq!(s.task_window, [64, 128, 4096, 16384]);
        let over = RingOverrides {
            task_window: Some(RingOverride::All(8)),
            ..Default::default()
        };
        let s = resolve(over, &[("PTO2_RING_TASK_WINDOW", "64")]).unwrap();
        assert_eq!(s.task_window, [8; 4]);
    }

    #[test]
    fn simpler_validation_rules() {
        let check = |over: RingOverrides, needle: &str| {
            let err = resolve(over, &[]).unwrap_err();
            assert!(err.contains(needle), "{err}");
        };
        check(
            RingOverrides {
                task_window: Some(RingOverride::All(6)),
                ..Default::default()
            },
            "power of two",
        );
        check(
            RingOverrides {
                task_window: Some(RingOverride::All(2)),
                ..Default::default()
            },
            "power of two",
        );
        check(
            RingOverrides {
                heap: Some(RingOverride::All(512)),
                ..Default::default()
            },
            "at least 1024",
        );
        check(
            RingOverrides {
                dep_pool: Some(RingOverride::All(3)),
                ..Default::default()
            },
            "between 4",
        );
    }

    #[test]
    fn the_scheduler_timeout_variable_is_read_as_simpler_reads_it() {
        let t = |v: &str| scheduler_timeout_from_env(Some(v.to_string()));
        assert_eq!(t("120000"), Duration::from_secs(120));
        for keep in ["", "0", "soon", "-5"] {
            assert_eq!(t(keep), DEFAULT_SCHEDULER_TIMEOUT, "{keep}");
        }
        assert_eq!(scheduler_timeout_from_env(None), DEFAULT_SCHEDULER_TIMEOUT);
    }

    #[test]
    fn an_invalid_environment_value_is_ignored_as_simpler_does() {
        // Simpler's runtime warns and falls back to the defaults for the whole variable.
        for bad in ["lots", "-1", "512", "1024,1024", "1024,,1024,1024", "0"] {
            let s = resolve(RingOverrides::default(), &[("PTO2_RING_HEAP", bad)]).unwrap();
            assert_eq!(s.heap, [DEFAULT_HEAP; N_RINGS], "{bad}");
        }
        let s = resolve(
            RingOverrides::default(),
            &[("PTO2_RING_TASK_WINDOW", "64,96,64,64")],
        )
        .unwrap();
        assert_eq!(
            s.task_window, [DEFAULT_TASK_WINDOW; N_RINGS],
            "96 is no power of two"
        );
        let s = resolve(
            RingOverrides::default(),
            &[("PTO2_RING_HEAP", " 1536, 1048576 ,4096,1024")],
        )
        .unwrap();
        assert_eq!(s.heap, [1536, 1 << 20, 4096, 1024]);
    }

    /// Sizes that could not be allocated on this machine are errors naming the field, not
    /// aborts when the rings are first used.
    #[test]
    fn rings_must_fit_the_machine() {
        let sizes = |window: u64, heap: u64| RingSizes {
            task_window: [window, 64, 64, 64],
            heap: [heap; N_RINGS],
            dep_pool: [1024; N_RINGS],
            tensormap_pool: DEFAULT_TENSORMAP_POOL,
        };
        let gib = 1u64 << 30;
        assert!(sizes(16384, 256 << 20).check_memory(Some(24 * gib)).is_ok());
        let err = sizes(1 << 30, 256 << 20)
            .check_memory(Some(24 * gib))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("ring_task_window[0] = 1073741824")
                && err.contains("more than half of this machine's 24.0 GiB")
                && err.contains("PTO2_RING_TASK_WINDOW"),
            "{err}"
        );
        let err = sizes(64, 1 << 40)
            .check_memory(Some(24 * gib))
            .unwrap_err()
            .to_string();
        assert!(err.contains("ring_heap[0] = 1099511627776"), "{err}");
        // The real machine: a window of 2^30 never fits in a test environment.
        let err = resolve(
            RingOverrides {
                task_window: Some(RingOverride::All(1 << 30)),
                ..Default::default()
            },
            &[],
        )
        .unwrap_err();
        assert!(err.contains("task slots"), "{err}");
    }
}
