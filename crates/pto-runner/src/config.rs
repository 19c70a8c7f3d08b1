//! `RunConfig`: the seed's per-call configuration, validated once, on construction, so the
//! command line and the Python package reject the same input with the same words.

use std::path::Path;
use std::time::Duration;

use pto_runtime::{ChipConfig, DfxConfig, Platform, RingOverride, RingOverrides, RingSizes};

use crate::dfx_switches::{DfxSwitch, DFX_SWITCHES};
use crate::error::RunnerError;

/// A ring override as the user wrote it: one value, or one per scope-depth ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RingValue {
    /// The same value for all four rings (`ring_heap=1048576`).
    Scalar(u64),
    /// One value per ring, 0 keeping that ring's default (`ring_task_window=[0, 64, 0, 0]`).
    PerRing(Vec<u64>),
}

/// The five diagnostics, each independent of the others.
///
/// The chip-process protocol carries it whole (serde, every field required and no other
/// accepted), so a field added here reaches a chip process without a line of protocol code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DfxOptions {
    /// Chip swimlane level 0–4 (0 off).
    pub chip_swimlane: u8,
    /// Args dump level 0–3 (0 off, 1 partial, 2 full, 3 hybrid).
    pub dump_args: u8,
    /// PMU event type (0 off).
    pub pmu: u32,
    /// Dependency graph (`deps.json`).
    pub dep_gen: bool,
    /// Scope statistics (`scope_stats.jsonl`).
    pub scope_stats: bool,
    /// `--timing predicted` / `PTO_TIMING=predicted`: the swimlane and the other files hold
    /// the timing model's device time instead of the host's (docs/TIMING.md).
    pub predicted_timing: bool,
}

/// Reads `PTO_TIMING` (`host`, the default, or `predicted`).
pub fn timing_from_env() -> Result<bool, RunnerError> {
    match std::env::var("PTO_TIMING") {
        Err(_) => Ok(false),
        Ok(v) => parse_timing(&v).map_err(|e| RunnerError::config(format!("PTO_TIMING: {e}"))),
    }
}

/// `host` → false, `predicted` → true; anything else is an error naming both.
pub fn parse_timing(value: &str) -> Result<bool, String> {
    match value.trim() {
        "" | "host" => Ok(false),
        "predicted" => Ok(true),
        other => Err(format!(
            "unknown timing {other:?}: expected 'host' (the default) or 'predicted'"
        )),
    }
}

impl DfxOptions {
    /// Whether a run writes files under `dfx_outputs/`: one of the five diagnostics, or the
    /// predicted timing (`predicted_timing.json`).
    pub fn writes_files(&self) -> bool {
        self.any() || self.predicted_timing
    }

    /// Only `--timing predicted` (none of the five diagnostics): the run writes one small
    /// file, published without a staging directory ([`crate::dfx_publish::publish_file`]).
    pub fn predicted_only(&self) -> bool {
        self.predicted_timing && !self.any()
    }

    /// `any_dfx_enabled()`: one of the switches ([`DFX_SWITCHES`]) is on.
    pub fn any(&self) -> bool {
        DFX_SWITCHES.iter().any(|s| (s.get)(self) != 0)
    }

    /// Checks the levels' ranges.
    pub fn validate(&self) -> Result<(), RunnerError> {
        DFX_SWITCHES
            .iter()
            .try_for_each(|s| s.check((s.get)(self), s.python_keyword))
    }
}

/// How the two large diagnostics are written (`dfx_format`).
///
/// `Json` (the default) writes Simpler's `chip_swimlane_records.json` and `deps.json`, so
/// Simpler's tools read a run unchanged. `Compact` writes the runtime's records as they are
/// (`chip_swimlane_records.bin`, `deps.bin`; [`pto_dfx::compact`]), a fraction of the bytes
/// and no formatting after the run; `pto dfx-export DIR` then writes the JSON files,
/// byte-identical to what `Json` writes, and every `pto` viewer reads either form.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DfxFormat {
    /// Simpler's JSON files.
    #[default]
    Json,
    /// The compact binary files.
    Compact,
}

/// The environment variable that selects [`DfxFormat`] when the caller does not.
pub const DFX_FORMAT_ENV: &str = "PTO_DFX_FORMAT";

impl DfxFormat {
    /// `json` / `compact`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Compact => "compact",
        }
    }

    /// The format named `text` (`json` or `compact`, any case).
    pub fn parse(text: &str) -> Result<Self, RunnerError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "json" => Ok(Self::Json),
            "compact" => Ok(Self::Compact),
            _ => Err(RunnerError::config(format!(
                "dfx_format must be 'json' or 'compact', got '{text}'"
            ))),
        }
    }

    /// The format [`DFX_FORMAT_ENV`] names; `Json` when it is unset or empty.
    pub fn from_env() -> Result<Self, RunnerError> {
        match std::env::var(DFX_FORMAT_ENV) {
            Ok(v) if !v.trim().is_empty() => Self::parse(&v).map_err(|_| {
                RunnerError::config(format!(
                    "{DFX_FORMAT_ENV} must be 'json' or 'compact', got '{v}'"
                ))
            }),
            _ => Ok(Self::Json),
        }
    }
}

/// The environment variable that selects the generation of the DFX files
/// ([`pto_dfx::DfxSchema`], `2026-08` or `2026-09`) when the caller does not.
pub const DFX_SCHEMA_ENV: &str = "PTO_DFX_SCHEMA";

/// The DFX generation named `text` (`2026-08` / `2026-09`); `what` names the
/// setting in the error.
pub fn parse_dfx_schema(text: &str, what: &str) -> Result<pto_dfx::DfxSchema, RunnerError> {
    text.parse().map_err(|_| {
        RunnerError::config(format!(
            "{what} must be '2026-08' or '2026-09', got '{text}'"
        ))
    })
}

/// The generation [`DFX_SCHEMA_ENV`] names; `None` when it is unset or empty.
pub fn dfx_schema_from_env() -> Result<Option<pto_dfx::DfxSchema>, RunnerError> {
    match std::env::var(DFX_SCHEMA_ENV) {
        Ok(v) if !v.trim().is_empty() => parse_dfx_schema(&v, DFX_SCHEMA_ENV).map(Some),
        _ => Ok(None),
    }
}

/// Per-call configuration (the seed's `RunConfig`, the fields this runtime uses).
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Set by [`RunConfig::new`] (read with [`RunConfig::platform`]); crate-visible so the
    /// chip-process protocol's test can name every field.
    pub(crate) platform: Platform,
    /// The diagnostics.
    pub dfx: DfxOptions,
    /// How the swimlane records and the dep_gen log are written; [`RunConfig::new`] takes it
    /// from `PTO_DFX_FORMAT` (default `json`). A chip process reads the same variable.
    pub dfx_format: DfxFormat,
    /// Which generation of Simpler's DFX files to write (`dfx_schema`, `--dfx-schema`,
    /// `PTO_DFX_SCHEMA`); `None`: the build directory's, see
    /// [`crate::dfx_output::schema_for`].
    pub dfx_schema: Option<pto_dfx::DfxSchema>,
    /// `ring_task_window`.
    pub ring_task_window: Option<RingValue>,
    /// `ring_heap`.
    pub ring_heap: Option<RingValue>,
    /// `ring_dep_pool`.
    pub ring_dep_pool: Option<RingValue>,
    /// Golden comparison tolerances when `golden.py` has none.
    pub rtol: f64,
    /// See `rtol`.
    pub atol: f64,
    /// Scheduler timeout; `None` = `SIMPLER_SCHEDULER_TIMEOUT_MS` or 10 s.
    pub scheduler_timeout: Option<Duration>,
    /// The pool's worker threads, exactly; `None` = the runtime's default pool (one per host
    /// CPU, on a simulated chip the last of them the reserve worker).
    pub n_workers: Option<usize>,
    /// Polled while a run waits (the Python package checks for Ctrl-C here).
    pub interrupt: Option<pto_runtime::Interrupt>,
    /// Run the chip in this process instead of a chip process (`--in-process`,
    /// `PTO_IN_PROCESS=1`; always when no chip-worker command is registered).
    pub in_process: bool,
    /// Watches the run's threads (set by a chip process for its own runs).
    pub(crate) monitor: Option<pto_runtime::Monitor>,
}

/// Most worker threads a run may ask for.
pub const MAX_WORKERS: usize = 1024;

/// The platforms the invalid-platform message lists: PyPTO's four, verbatim (PyPTO's
/// callers match the text). `cpu`, this runtime's extra platform, is accepted all the same
/// and named in the `--platform` help.
pub const PLATFORM_CHOICES: &str = "'a2a3sim', 'a2a3', 'a5sim', or 'a5'";

/// Most task slots a ring may have here. PyPTO sets no upper bound on `ring_task_window`;
/// this runtime allocates the window up front, so a larger one is refused when the run
/// starts (not when the configuration is built).
pub const MAX_RING_TASK_WINDOW: u64 = i32::MAX as u64;

impl RunConfig {
    /// The defaults of the seed for `platform` (`a2a3sim` when `None`).
    pub fn new(platform: Option<&str>) -> Result<RunConfig, RunnerError> {
        let platform = parse_platform(platform.unwrap_or("a2a3sim"))?;
        Ok(RunConfig {
            platform,
            dfx: DfxOptions {
                predicted_timing: timing_from_env()?,
                ..DfxOptions::default()
            },
            dfx_format: DfxFormat::from_env()?,
            dfx_schema: dfx_schema_from_env()?,
            ring_task_window: None,
            ring_heap: None,
            ring_dep_pool: None,
            rtol: 1e-5,
            atol: 1e-5,
            scheduler_timeout: None,
            n_workers: None,
            interrupt: None,
            in_process: !crate::chip_process::isolated_by_default(),
            monitor: None,
        })
    }

    /// The platform.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// Validates every field before a run: the args dump level, this runtime's own fields
    /// and the ring sizes by the runtime's rules, which are Simpler's (a task window a power
    /// of two in `[4, 2^31-1]`, a heap of at least 1024 bytes, a dep pool in `[4, 2^31-1]`).
    /// PyPTO's `RunConfig` is stricter on the heap (a power of two); that rule is
    /// [`validate_portable`](Self::validate_portable)'s, which the Python `RunConfig` runs on
    /// construction. The `pto` command line takes what Simpler's runtime takes.
    pub fn validate(&self) -> Result<(), RunnerError> {
        self.dfx.validate()?;
        self.validate_own_fields()?;
        self.check_rings(false)?;
        let windows = match &self.ring_task_window {
            None => Vec::new(),
            Some(RingValue::Scalar(v)) => vec![*v],
            Some(RingValue::PerRing(per)) => per.clone(),
        };
        if let Some(v) = windows.iter().find(|&&v| v > MAX_RING_TASK_WINDOW) {
            return Err(RunnerError::config(format!(
                "ring_task_window {v} is larger than this runtime's limit of {MAX_RING_TASK_WINDOW} task slots per ring; use a smaller power of 2"
            )));
        }
        Ok(())
    }

    /// The checks a configuration gets when it is built: PyPTO's ring rules with its texts
    /// (scalar or four per-ring entries, 0 keeping a ring's default; a heap a power of two,
    /// which Simpler's runtime does not ask) and this runtime's own fields (tolerances, worker
    /// count, timeout), which no PyPTO caller sets. The Python `RunConfig` runs only these on
    /// construction, so every configuration PyPTO accepts can be built; a run then checks
    /// [`validate`](Self::validate).
    pub fn validate_portable(&self) -> Result<(), RunnerError> {
        self.validate_own_fields()?;
        self.check_rings(true)
    }

    /// The three ring overrides' rules; `heap_power_of_two` adds PyPTO's rule on the heap.
    fn check_rings(&self, heap_power_of_two: bool) -> Result<(), RunnerError> {
        check_ring(
            "ring_task_window",
            &self.ring_task_window,
            "be a power of 2 >= 4",
            |v| v.is_power_of_two() && v >= 4,
        )?;
        let (heap_rule, heap_ok): (&str, fn(u64) -> bool) = if heap_power_of_two {
            ("be a power of 2 >= 1024 (bytes per ring)", |v| {
                v.is_power_of_two() && v >= 1024
            })
        } else {
            ("be >= 1024 (bytes per ring)", |v| v >= 1024)
        };
        check_ring("ring_heap", &self.ring_heap, heap_rule, heap_ok)?;
        check_ring(
            "ring_dep_pool",
            &self.ring_dep_pool,
            "be in [4, INT32_MAX]",
            |v| (4..=i32::MAX as u64).contains(&v),
        )
    }

    /// Tolerances, worker count and scheduler timeout: this runtime's fields.
    fn validate_own_fields(&self) -> Result<(), RunnerError> {
        pto_build_output::Tolerances::checked(self.rtol, self.atol).map_err(RunnerError::config)?;
        if let Some(n) = self.n_workers {
            if n == 0 || n > MAX_WORKERS {
                return Err(RunnerError::config(format!(
                    "n_workers must be between 1 and {MAX_WORKERS}, got {n}"
                )));
            }
        }
        if let Some(t) = self.scheduler_timeout {
            if t.is_zero() {
                return Err(RunnerError::config(
                    "scheduler_timeout must be positive".to_string(),
                ));
            }
        }
        Ok(())
    }

    /// The runtime's configuration for this call. `output_prefix` is the directory the
    /// diagnostics write into; it is required when any of them is on (the seed's contract,
    /// checked before anything runs).
    pub fn chip_config(&self, output_prefix: Option<&Path>) -> Result<ChipConfig, RunnerError> {
        self.validate()?;
        let prefix = output_prefix.filter(|p| !p.as_os_str().is_empty());
        if self.dfx.any() && prefix.is_none() {
            return Err(RunnerError::config(format!(
                "execute_on_device: output_prefix is required when any DFX flag ({}) is enabled — runtime CallConfig::validate() would otherwise reject the call.",
                crate::dfx_switches::python_keywords_text()
            )));
        }
        let mut chip = ChipConfig::new(self.platform)?;
        let over = |v: &Option<RingValue>| {
            v.as_ref().map(|v| match v {
                RingValue::Scalar(s) => RingOverride::All(*s),
                RingValue::PerRing(per) => {
                    let mut a = [0u64; 4];
                    a.copy_from_slice(&per[..4]);
                    RingOverride::PerRing(a)
                }
            })
        };
        chip.rings = RingSizes::resolve(&RingOverrides {
            task_window: over(&self.ring_task_window),
            heap: over(&self.ring_heap),
            dep_pool: over(&self.ring_dep_pool),
        })?;
        if let Some(t) = self.scheduler_timeout {
            chip.scheduler_timeout = t;
        }
        chip.n_workers = self.n_workers;
        chip.interrupt = self.interrupt.clone();
        chip.monitor = self.monitor.clone();
        // The predicted schedule needs the task graph.
        chip.record_deps = self.dfx.dep_gen || self.dfx.predicted_timing;
        chip.dfx = DfxConfig {
            swimlane: self.dfx.chip_swimlane,
            dump_args: self.dfx.dump_args,
            dump_dir: prefix.map(|p| DfxSwitch::named("dump_args").artifact_in(p)),
            pmu: self.dfx.pmu,
            scope_stats: self.dfx.scope_stats,
            predicted_timing: self.dfx.predicted_timing,
        };
        Ok(chip)
    }
}

/// Parses a platform name (PyPTO's four and `cpu`) with PyPTO's error text.
pub fn parse_platform(name: &str) -> Result<Platform, RunnerError> {
    name.parse::<Platform>().map_err(|_| {
        RunnerError::config(format!(
            "Invalid platform '{name}'. Expected {PLATFORM_CHOICES}."
        ))
    })
}

fn check_ring(
    field: &str,
    value: &Option<RingValue>,
    phrase: &str,
    ok: impl Fn(u64) -> bool,
) -> Result<(), RunnerError> {
    match value {
        None => Ok(()),
        Some(RingValue::Scalar(v)) => {
            if ok(*v) {
                Ok(())
            } else {
                Err(RunnerError::config(format!(
                    "{field} must {phrase}, got {v}"
                )))
            }
        }
        Some(RingValue::PerRing(per)) => {
            if per.len() != 4 {
                return Err(RunnerError::config(format!(
                    "{field} must have exactly 4 entries (one per scope-depth ring), got {}",
                    per.len()
                )));
            }
            for &v in per {
                if v != 0 && !ok(v) {
                    return Err(RunnerError::config(format!(
                        "{field} entries must {phrase} (or 0 to keep default), got {v}"
                    )));
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(edit: impl Fn(&mut RunConfig), expected: Option<&str>) {
        let mut c = RunConfig::new(None).unwrap();
        edit(&mut c);
        let got = c.validate().err().map(|e| e.to_string());
        assert_eq!(got.as_deref(), expected);
    }

    #[test]
    fn ring_validation_texts() {
        check(|c| c.ring_task_window = Some(RingValue::Scalar(64)), None);
        check(
            |c| c.ring_task_window = Some(RingValue::Scalar(6)),
            Some("ring_task_window must be a power of 2 >= 4, got 6"),
        );
        check(
            |c| c.ring_heap = Some(RingValue::PerRing(vec![0, 1024, 0])),
            Some("ring_heap must have exactly 4 entries (one per scope-depth ring), got 3"),
        );
        check(
            |c| c.ring_dep_pool = Some(RingValue::PerRing(vec![0, 2, 0, 0])),
            Some("ring_dep_pool entries must be in [4, INT32_MAX] (or 0 to keep default), got 2"),
        );
        check(
            |c| c.ring_heap = Some(RingValue::Scalar(0)),
            Some("ring_heap must be >= 1024 (bytes per ring), got 0"),
        );
    }

    #[test]
    fn a_heap_simpler_accepts_runs_and_pyptos_rule_stays_on_construction() {
        // Simpler's runtime asks a heap of at least 1024 bytes, no power of two (its
        // heap_empty_ring_rebase scene passes 1.5 MiB); PyPTO's RunConfig asks a power of two.
        let heap = RingValue::PerRing(vec![1 << 28, 3 << 19, 0, 0]);
        check(|c| c.ring_heap = Some(heap.clone()), None);
        let mut c = RunConfig::new(None).unwrap();
        c.ring_heap = Some(heap);
        assert_eq!(
            c.validate_portable().unwrap_err().to_string(),
            "ring_heap entries must be a power of 2 >= 1024 (bytes per ring) (or 0 to keep default), got 1572864"
        );
        let chip = c.chip_config(None).unwrap();
        assert_eq!(chip.rings.heap[1], 3 << 19);
    }

    #[test]
    fn any_dfx_flag_needs_an_output_prefix() {
        let mut c = RunConfig::new(None).unwrap();
        c.dfx.dep_gen = true;
        let err = c.chip_config(None).unwrap_err().to_string();
        assert!(
            err.starts_with("execute_on_device: output_prefix is required when any DFX flag"),
            "{err}"
        );
        assert!(c.chip_config(Some(Path::new(""))).is_err());
        assert!(c.chip_config(Some(Path::new("/tmp/x"))).is_ok());
        c.dfx = DfxOptions::default();
        assert!(c.chip_config(None).is_ok());
    }

    #[test]
    fn platforms_and_levels() {
        assert!(RunConfig::new(Some("cpu")).is_ok());
        let err = RunConfig::new(Some("gpu")).unwrap_err().to_string();
        assert_eq!(
            err,
            "Invalid platform 'gpu'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'."
        );
        check(
            |c| c.ring_task_window = Some(RingValue::Scalar(1 << 40)),
            Some("ring_task_window 1099511627776 is larger than this runtime's limit of 2147483647 task slots per ring; use a smaller power of 2"),
        );
        let mut c = RunConfig::new(None).unwrap();
        c.ring_task_window = Some(RingValue::PerRing(vec![0, 1 << 40, 0, 0]));
        c.dfx.dump_args = 7;
        assert!(c.validate_portable().is_ok(), "PyPTO's rules accept both");
        assert!(c.validate().is_err());
        check(|c| c.dfx.chip_swimlane = 5, Some("enable_chip_swimlane must be a collection level in [0, 4] (0=off, 1=AICore timing, 2=+dispatch/finish, 3=+sched phases, 4=+orch phases), got 5"));
        check(
            |c| c.dfx.dump_args = 4,
            Some("enable_dump_args must be 0 (off), 1 (partial), 2 (full) or 3 (hybrid), got 4"),
        );
    }
}
