//! `pto replay` (and `pto demo`) on an L3 build: the host orchestration is Python (PyPTO's
//! generated `orchestration/host_orch.py`), so the command line hands the replay to the
//! installed `pypto` package (`pypto.runtime.debug.replay`'s command line, run by a small
//! driver that maps its outcome to `pto replay`'s exit codes), which needs torch as PyPTO's
//! L3 does. The interpreter is `PTO_PYTHON`, else `python3` on `PATH`; without a usable one
//! the error says how to get it.

use std::path::Path;
use std::process::Command;

use crate::config::RunConfig;
use crate::dfx_switches::{DfxSwitch, SwitchKind, DFX_SWITCHES};
use crate::error::{ErrorKind, RunnerError};
use crate::replay::ReplayOptions;

/// Whether `dir` is an L3 build (`orchestration/host_orch.py`, no top-level
/// `kernel_config.py`).
pub fn is_l3(dir: &Path) -> bool {
    matches!(
        pto_build_output::BuildLayout::detect(dir),
        Ok(pto_build_output::BuildLayout::Distributed)
    )
}

/// The interpreter an L3 replay runs in.
pub fn interpreter() -> String {
    std::env::var("PTO_PYTHON")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "python3".to_string())
}

/// What the interpreter runs: `pypto.runtime.debug.replay`'s child driver, which maps the
/// replay's outcome to `pto replay`'s exit codes (0 success, 1 golden mismatch, 2 any other
/// error, 130 Ctrl-C) and writes them as a result record (`{"code": N}`) into the file named
/// by [`RESULT_ENV`] as its last act. User Python (`golden.py`, `host_orch.py`, SubWorkers)
/// runs with `sys.exit()` / `os._exit()` turned into errors; whatever else ends the
/// interpreter leaves no record, which [`outcome`] turns into an error.
const DRIVER: &str = "from pypto.runtime.debug.replay import _child_main\n_child_main()\n";

/// The environment variable naming the result record's file.
pub const RESULT_ENV: &str = "PTO_REPLAY_RESULT_FILE";

/// The exit code of a replay whose interpreter ended with `status` after writing `record`
/// (`None`: none, or an empty file), and the error to print, if any. The record decides; a
/// missing or malformed one is an error (2; 130 after SIGINT), and so is a success record
/// followed by a failing exit. Python's `pypto.runtime.debug.replay.outcome` is the same.
pub fn outcome(status: std::process::ExitStatus, record: Option<&str>) -> (i32, Option<String>) {
    use std::os::unix::process::ExitStatusExt;
    let code = record
        .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
        .and_then(|v| v.get("code").and_then(serde_json::Value::as_i64))
        .filter(|c| matches!(c, 0 | 1 | 2 | 130))
        .map(|c| c as i32);
    let how = match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        (None, None) => "ended".to_string(),
    };
    match code {
        None if status.signal() == Some(libc::SIGINT) || status.code() == Some(130) => (130, None),
        None => (
            2,
            Some(format!(
                "the replay {how} without reporting a result: its Python code (golden.py, orchestration/host_orch.py or a SubWorker) ended the interpreter early (os._exit(), a C-level exit(), a crash or a signal), so nothing was validated; make that code return, or raise an exception to report an error"
            )),
        ),
        Some(0) if !status.success() => (
            2,
            Some(format!(
                "the replay reported success but then {how} while shutting down"
            )),
        ),
        Some(c) => (c, None),
    }
}

/// A fresh empty file for the result record (removed on drop).
struct ResultFile(std::path::PathBuf);

impl ResultFile {
    fn new() -> Result<Self, RunnerError> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!(
            "pto-replay-result-{}-{nanos}-{}.json",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|source| RunnerError::Io {
                action: "creating",
                path: path.clone(),
                source,
            })?;
        Ok(Self(path))
    }

    /// The record, `None` when the file is empty or unreadable.
    fn read(&self) -> Option<String> {
        std::fs::read_to_string(&self.0)
            .ok()
            .filter(|s| !s.trim().is_empty())
    }
}

impl Drop for ResultFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The Python replay's option for switch `s` at `value` (`None`: off), spelled as
/// `debug/replay.py` makes its options from the same table: `--<flag>` for an on/off
/// switch, `--<flag>=<value>` for a level, or `--<replay_level_option>=<value>` where the
/// table gives the level an option of its own (the swimlane).
fn python_replay_flag(s: &DfxSwitch, value: u32) -> Option<String> {
    if value == 0 {
        return None;
    }
    Some(match s.kind {
        SwitchKind::Flag => format!("--{}", s.cli_flag),
        SwitchKind::Level { .. } => {
            let option = s.replay_level_option.unwrap_or(s.cli_flag);
            format!("--{option}={value}")
        }
    })
}

/// The arguments of the interpreter for this replay (the driver, then the arguments of
/// `python -m pypto.runtime.debug.replay`).
pub fn replay_args(dir: &Path, config: &RunConfig, options: &ReplayOptions) -> Vec<String> {
    let mut a = vec![
        "-c".to_string(),
        DRIVER.to_string(),
        dir.display().to_string(),
        "--platform".to_string(),
        config.platform().name().to_string(),
    ];
    let d = &config.dfx;
    a.extend(
        DFX_SWITCHES
            .iter()
            .filter_map(|s| python_replay_flag(s, (s.get)(d))),
    );
    if d.predicted_timing {
        a.push("--timing=predicted".to_string());
    }
    if let Some(schema) = config.dfx_schema {
        a.push(format!("--dfx-schema={}", schema.name()));
    }
    if !options.recompile {
        a.push("--no-recompile".to_string());
    }
    if !options.rebuild_from_pto {
        a.push("--no-rebuild-from-pto".to_string());
    }
    a.push(
        if options.validate {
            "--validate"
        } else {
            "--no-validate"
        }
        .to_string(),
    );
    a
}

/// The interpreter, checked that it can run an L3 replay of `dir`; the error says what is
/// missing and how to get it.
pub fn usable_interpreter(dir: &Path) -> Result<String, RunnerError> {
    let python = interpreter();
    let probe = Command::new(&python)
        .args(["-c", "import torch, pypto.runtime.distributed_runner"])
        .output();
    if matches!(&probe, Ok(o) if o.status.success()) {
        return Ok(python);
    }
    let why = match &probe {
        Err(e) => format!("`{python}` cannot be started ({e})"),
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stderr);
            let last = text.lines().last().unwrap_or("").trim().to_string();
            format!("`{python}` cannot import pypto's L3 runner and torch ({last})")
        }
    };
    Err(RunnerError::Config {
        message: format!(
            "{} is an L3 (distributed) build: its host orchestration (orchestration/host_orch.py) runs in Python, and {why}. {}",
            dir.display(),
            how_to_get_python(dir)
        ),
        kind: ErrorKind::NotFound,
    })
}

/// How to get an interpreter that runs L3 builds.
pub fn how_to_get_python(dir: &Path) -> String {
    format!(
        "Install the pypto package and torch into an interpreter (pip install torch, then pip install <pto checkout>) and point PTO_PYTHON at it (default: python3), then re-run; `python -m pypto.runtime.debug.replay {}` runs the same replay directly",
        dir.display()
    )
}

/// Runs the replay in Python with inherited stdout / stderr; returns its exit code
/// (0 success, 1 golden mismatch, 2 error). Without a usable interpreter, the error says
/// how to install one.
pub fn replay(dir: &Path, config: &RunConfig, options: &ReplayOptions) -> Result<i32, RunnerError> {
    let python = usable_interpreter(dir)?;
    let result = ResultFile::new()?;
    let status = Command::new(&python)
        .args(replay_args(dir, config, options))
        .env(RESULT_ENV, &result.0)
        .status()
        .map_err(|e| RunnerError::Config {
            message: format!(
                "cannot run `{python}` for the L3 replay of {}: {e}",
                dir.display()
            ),
            kind: ErrorKind::Runtime,
        })?;
    let (code, error) = outcome(status, result.read().as_deref());
    if let Some(e) = error {
        eprintln!("error: {e}");
    }
    Ok(code)
}

/// What a captured L3 replay did.
#[derive(Debug)]
pub struct CapturedReplay {
    /// The exit code (0 success, 1 golden mismatch, 2 error).
    pub code: i32,
    /// Tasks the run executed (chip dispatches and SubWorker calls), from its summary line.
    pub n_tasks: u64,
    /// The run's wall time (entry to drain), from its summary line.
    pub wall: std::time::Duration,
    /// Everything it printed (stdout, then stderr).
    pub output: String,
}

/// Runs the replay in Python with its output captured (the demo's rows).
pub fn replay_captured(
    dir: &Path,
    config: &RunConfig,
    options: &ReplayOptions,
) -> Result<CapturedReplay, RunnerError> {
    let python = usable_interpreter(dir)?;
    let result = ResultFile::new()?;
    let out = Command::new(&python)
        .args(replay_args(dir, config, options))
        .env(RESULT_ENV, &result.0)
        .output()
        .map_err(|e| RunnerError::Config {
            message: format!(
                "cannot run `{python}` for the L3 replay of {}: {e}",
                dir.display()
            ),
            kind: ErrorKind::Runtime,
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (n_tasks, wall) = stdout
        .lines()
        .rev()
        .find_map(parse_summary)
        .unwrap_or((0, std::time::Duration::ZERO));
    let (code, error) = outcome(out.status, result.read().as_deref());
    let error = error.map(|e| format!("error: {e}\n")).unwrap_or_default();
    Ok(CapturedReplay {
        code,
        n_tasks,
        wall,
        output: format!("{stdout}{}{error}", String::from_utf8_lossy(&out.stderr)),
    })
}

/// `(tasks, wall)` of the runner's `[execute] L3 run: N tasks on R chips (P) in T ms` line.
fn parse_summary(line: &str) -> Option<(u64, std::time::Duration)> {
    let rest = line.strip_prefix("[execute] L3 run: ")?;
    let (n, rest) = rest.split_once(" tasks on ")?;
    let (_, ms) = rest.rsplit_once(") in ")?;
    let ms: f64 = ms.strip_suffix(" ms")?.parse().ok()?;
    Some((
        n.parse().ok()?,
        std::time::Duration::try_from_secs_f64(ms / 1e3).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(raw: i32) -> std::process::ExitStatus {
        use std::os::unix::process::ExitStatusExt;
        std::process::ExitStatus::from_raw(raw)
    }

    #[test]
    fn the_result_record_decides_the_exit_code() {
        let exit = |c: i32| status(c << 8);
        assert_eq!(outcome(exit(0), Some(r#"{"code": 0}"#)), (0, None));
        assert_eq!(outcome(exit(1), Some(r#"{"code": 1}"#)), (1, None));
        assert_eq!(outcome(exit(2), Some(r#"{"code": 2}"#)), (2, None));
        // os._exit(0) (or a C exit(0)) in user code: status 0, no record: an error.
        let (code, e) = outcome(exit(0), None);
        assert_eq!(code, 2);
        let e = e.unwrap();
        assert!(
            e.contains("exited with status 0 without reporting a result"),
            "{e}"
        );
        assert!(e.contains("nothing was validated"), "{e}");
        // A record that is not one.
        assert_eq!(outcome(exit(0), Some("{\"code\": 7}")).0, 2);
        assert_eq!(outcome(exit(0), Some("garbage")).0, 2);
        // Killed: by SIGKILL an error naming the signal, by SIGINT 130.
        let (code, e) = outcome(status(libc::SIGKILL), None);
        assert_eq!(code, 2);
        assert!(e.unwrap().contains("killed by signal 9"));
        assert_eq!(outcome(status(libc::SIGINT), None), (130, None));
        // Success, then a crash while shutting down.
        let (code, e) = outcome(status(libc::SIGSEGV), Some(r#"{"code": 0}"#));
        assert_eq!(code, 2);
        assert!(e
            .unwrap()
            .contains("reported success but then was killed by signal 11"));
    }

    #[test]
    fn every_run_option_reaches_the_python_replay() {
        let mut config = RunConfig::new(Some("a2a3sim")).unwrap();
        config.dfx.chip_swimlane = 3;
        config.dfx.pmu = 2;
        config.dfx.dump_args = 1;
        config.dfx.dep_gen = true;
        config.dfx.scope_stats = true;
        config.dfx.predicted_timing = true;
        config.dfx_schema = Some(pto_dfx::DfxSchema::V2026_09);
        let options = ReplayOptions {
            validate: false,
            recompile: false,
            rebuild_from_pto: false,
        };
        let args = replay_args(Path::new("d"), &config, &options);
        assert_eq!(
            args[2..],
            [
                "d",
                "--platform",
                "a2a3sim",
                "--swimlane-level=3",
                "--dump-args=1",
                "--pmu=2",
                "--dep-gen",
                "--scope-stats",
                "--timing=predicted",
                "--dfx-schema=2026-09",
                "--no-recompile",
                "--no-rebuild-from-pto",
                "--no-validate",
            ]
        );
    }

    /// Each switch of the table alone adds a flag of the Python replay's (whose spellings
    /// are PyPTO's), so a switch added to the table and not forwarded fails here.
    #[test]
    fn each_switch_reaches_the_python_replay() {
        let options = ReplayOptions {
            validate: true,
            recompile: true,
            rebuild_from_pto: true,
        };
        let off = RunConfig::new(Some("a2a3sim")).unwrap();
        let base = replay_args(Path::new("d"), &off, &options);
        for s in &crate::dfx_switches::DFX_SWITCHES {
            let mut config = off.clone();
            (s.set)(&mut config.dfx, 1);
            let args = replay_args(Path::new("d"), &config, &options);
            assert_eq!(args.len(), base.len() + 1, "{}: {args:?}", s.name);
        }
    }

    #[test]
    fn the_runners_summary_line_parses() {
        let (n, wall) =
            parse_summary("[execute] L3 run: 6 tasks on 2 chips (a2a3sim) in 12.50 ms").unwrap();
        assert_eq!(n, 6);
        assert_eq!(wall, std::time::Duration::from_micros(12_500));
        assert_eq!(parse_summary("[execute] running on device..."), None);
        assert_eq!(
            parse_summary("[execute] L3 run: x tasks on 2 chips (a) in 1 ms"),
            None
        );
    }
}
