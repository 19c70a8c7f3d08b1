//! `pto replay` on an L3 build: the host orchestration is Python (PyPTO's generated
//! `orchestration/host_orch.py`), so the command line hands the replay to the installed
//! `pypto` package (`python -m pypto.runtime.debug.replay`), which needs torch as PyPTO's
//! L3 does. The interpreter is `PTO_PYTHON`, else `python3` on `PATH`.

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

/// The arguments of `python -m pypto.runtime.debug.replay` for this replay.
pub fn replay_args(dir: &Path, config: &RunConfig, options: &ReplayOptions) -> Vec<String> {
    let mut a = vec![
        "-m".to_string(),
        "pypto.runtime.debug.replay".to_string(),
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

/// Runs the replay in Python with inherited stdout / stderr; returns its exit code
/// (0 success, 1 golden mismatch, 2 error). Without a usable interpreter, the error says
/// how to install one.
pub fn replay(dir: &Path, config: &RunConfig, options: &ReplayOptions) -> Result<i32, RunnerError> {
    let python = interpreter();
    let probe = Command::new(&python)
        .args(["-c", "import torch, pypto.runtime.distributed_runner"])
        .output();
    let usable = matches!(&probe, Ok(o) if o.status.success());
    if !usable {
        let why = match &probe {
            Err(e) => format!("`{python}` cannot be started ({e})"),
            Ok(o) => {
                let text = String::from_utf8_lossy(&o.stderr);
                let last = text.lines().last().unwrap_or("").trim().to_string();
                format!("`{python}` cannot import pypto's L3 runner and torch ({last})")
            }
        };
        return Err(RunnerError::Config {
            message: format!(
                "{} is an L3 (distributed) build: its host orchestration (orchestration/host_orch.py) runs in Python, and {why}. Install the pypto package and torch into that interpreter (pip install <pto checkout> torch) or point PTO_PYTHON at one that has them, then re-run `pto replay`; `python -m pypto.runtime.debug.replay {}` runs the same replay directly",
                dir.display(),
                dir.display()
            ),
            kind: ErrorKind::NotFound,
        });
    }
    let status = Command::new(&python)
        .args(replay_args(dir, config, options))
        .status()
        .map_err(|e| RunnerError::Config {
            message: format!("cannot run `{python} -m pypto.runtime.debug.replay`: {e}"),
            kind: ErrorKind::Runtime,
        })?;
    Ok(status.code().unwrap_or(2))
}
