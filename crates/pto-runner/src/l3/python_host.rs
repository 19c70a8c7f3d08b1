//! `pto replay` (and `pto demo`) on an L3 build: the host orchestration is Python (PyPTO's
//! generated `orchestration/host_orch.py`), so the command line hands the replay to the
//! installed `pypto` package (`pypto.runtime.debug.replay`'s command line, run by a small
//! driver that maps its outcome to `pto replay`'s exit codes), which needs torch as PyPTO's
//! L3 does. The interpreter is `PTO_PYTHON`, else `python3` on `PATH`; without a usable one
//! the error says how to get it.

use std::path::Path;
use std::process::Command;

use crate::config::RunConfig;
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

/// Runs `pypto.runtime.debug.replay`'s command line with `pto replay`'s exit codes: 0
/// success, 1 golden mismatch (the replay's `AssertionError`), 2 any other error (its
/// traceback, which names the file and line, then `error: ...`).
const DRIVER: &str = "import sys, traceback\nfrom pypto.runtime.debug.replay import _main\ntry:\n    code = _main(sys.argv[1:])\nexcept AssertionError as e:\n    print(f'FAIL: golden mismatch\\n{e}', flush=True)\n    sys.exit(1)\nexcept KeyboardInterrupt:\n    sys.exit(130)\nexcept SystemExit:\n    raise\nexcept BaseException as e:\n    traceback.print_exc()\n    print(f'error: {type(e).__name__}: {e}', file=sys.stderr, flush=True)\n    sys.exit(2)\nsys.exit(code or 0)\n";

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
    if d.chip_swimlane > 0 {
        a.push(format!("--swimlane-level={}", d.chip_swimlane));
    }
    if d.pmu > 0 {
        a.push(format!("--pmu={}", d.pmu));
    }
    if d.dump_args > 0 {
        a.push(format!("--dump-args={}", d.dump_args));
    }
    if d.dep_gen {
        a.push("--dep-gen".to_string());
    }
    if d.scope_stats {
        a.push("--scope-stats".to_string());
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
    let status = Command::new(&python)
        .args(replay_args(dir, config, options))
        .status()
        .map_err(|e| RunnerError::Config {
            message: format!(
                "cannot run `{python}` for the L3 replay of {}: {e}",
                dir.display()
            ),
            kind: ErrorKind::Runtime,
        })?;
    Ok(status.code().unwrap_or(2))
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
    let out = Command::new(&python)
        .args(replay_args(dir, config, options))
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
    Ok(CapturedReplay {
        code: out.status.code().unwrap_or(2),
        n_tasks,
        wall,
        output: format!("{stdout}{}", String::from_utf8_lossy(&out.stderr)),
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
