//! The two-pass swimlane protocol of the `cpu` platform (seed 000, reference §3).
//!
//! Recording the dependency graph perturbs timing, so on the real-hardware platform a
//! swimlane run executes twice:
//!
//! 1. **Graph pass**, in a child process with only dep_gen on: the parent writes a spec
//!    (`dfx_outputs/_dep_gen_spec_<id>.json`) naming the build directory and the
//!    arguments (each tensor saved as `.npy` beside it, scalars inline); the child
//!    ([`capture_main`]) loads the build, rebuilds the arguments and writes `deps.json`.
//!    Best-effort: a failure prints the seed's warning, keeps the spec for a rerun, and the
//!    timing pass still runs (lanes stay anonymous).
//! 2. **Timing pass**, in-process, with the requested swimlane level and the other
//!    diagnostics, dep_gen forced off.
//!
//! Both write the same `dfx_outputs/`. The simulated platforms stay single-pass: their
//! timing is not real hardware timing, and dep_gen rides along.
//!
//! The child command is `<current executable> __dep-gen-capture <spec>` (the `pto` binary
//! has that hidden subcommand); a host process that is not `pto` (the Python package)
//! installs its own with [`set_capture_command`], or `PTO_DEP_GEN_CAPTURE` names one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use pto_build_output::{write_npy, DType, NpyArray, ParamDirection};
use serde_json::{json, Value};

use crate::config::{DfxOptions, RunConfig};
use crate::error::RunnerError;
use crate::inputs::BoundParam;

/// The seed's printed lines, in order.
pub const BANNER: [&str; 3] = [
    "[swimlane] chip swimlane enabled -> running the kernel twice (dep_gen perturbs timing, so the graph and the timing are captured separately):",
    "[swimlane] run 1/2: capturing the task dependency graph (deps.json) in a subprocess; its timing is discarded.",
    "[swimlane] run 2/2: measuring clean per-task timing (this run's numbers are the ones reported).",
];

static CAPTURE_COMMAND: Mutex<Option<Vec<String>>> = Mutex::new(None);

/// Installs the command that runs a graph pass (`<cmd...> <spec path>`).
pub fn set_capture_command(command: Vec<String>) {
    if let Ok(mut c) = CAPTURE_COMMAND.lock() {
        *c = Some(command);
    }
}

fn capture_command() -> Result<Vec<String>, String> {
    if let Ok(text) = std::env::var("PTO_DEP_GEN_CAPTURE") {
        let parts: Vec<String> = text.split_whitespace().map(str::to_string).collect();
        if !parts.is_empty() {
            return Ok(parts);
        }
    }
    if let Some(c) = CAPTURE_COMMAND.lock().ok().and_then(|c| c.clone()) {
        return Ok(c);
    }
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot locate the current executable: {e}"))?;
    Ok(vec![
        exe.to_string_lossy().into_owned(),
        "__dep-gen-capture".to_string(),
    ])
}

/// Whether a run with `dfx` on `config`'s platform takes the two-pass path.
pub fn applies(config: &RunConfig) -> bool {
    config.dfx.chip_swimlane > 0 && config.platform() == pto_runtime::Platform::Cpu
}

/// Runs the graph pass for `build_dir` with `params` (see the module docs). Returns the
/// printed lines; never fails the run.
pub fn capture_deps(
    build_dir: &Path,
    dfx_dir: &Path,
    params: &[BoundParam],
    config: &RunConfig,
) -> Vec<String> {
    let mut lines = Vec::new();
    let deps_name = match config.dfx_format {
        crate::config::DfxFormat::Json => pto_dfx::deps::FILE_NAME,
        crate::config::DfxFormat::Compact => pto_dfx::compact::deps::FILE_NAME,
    };
    let run_id = format!("{:x}{:x}", std::process::id(), pto_runtime::dfx::now_ns());
    let spec_path = dfx_dir.join(format!("_dep_gen_spec_{run_id}.json"));
    let staged = match write_spec(build_dir, dfx_dir, &spec_path, &run_id, params, config) {
        Ok(files) => files,
        Err(e) => {
            lines.push(format!(
                "dep_gen graph capture could not start ({e}); the swimlane will render without dependency arrows / resolved kernel names (expected {}).",
                dfx_dir.join(deps_name).display()
            ));
            return lines;
        }
    };
    let status = capture_command().and_then(|cmd| {
        Command::new(&cmd[0])
            .args(&cmd[1..])
            .arg(&spec_path)
            .status()
            .map_err(|e| format!("cannot run {}: {e}", cmd[0]))
    });
    match status {
        Ok(s) if s.success() => {
            for f in staged.iter().chain(std::iter::once(&spec_path)) {
                let _ = std::fs::remove_file(f);
            }
        }
        other => {
            let why = match other {
                Ok(s) => format!("exit {}", s.code().unwrap_or(-1)),
                Err(e) => e,
            };
            lines.push(format!(
                "dep_gen graph capture subprocess failed ({why}); the swimlane will render without dependency arrows / resolved kernel names (expected {}). Inputs kept at {} for re-run.",
                dfx_dir.join(deps_name).display(),
                spec_path.display()
            ));
        }
    }
    lines
}

fn write_spec(
    build_dir: &Path,
    dfx_dir: &Path,
    spec_path: &Path,
    run_id: &str,
    params: &[BoundParam],
    config: &RunConfig,
) -> Result<Vec<PathBuf>, RunnerError> {
    std::fs::create_dir_all(dfx_dir).map_err(|source| RunnerError::ArtifactIo {
        action: "creating",
        path: dfx_dir.to_path_buf(),
        source,
    })?;
    let mut staged = Vec::new();
    let mut args = Vec::new();
    for (i, p) in params.iter().enumerate() {
        match p {
            BoundParam::Tensor {
                direction: ParamDirection::Out,
                array,
                ..
            } => {
                args.push(json!({"kind": "tensor_zeros", "shape": array.shape, "dtype": array.dtype.pypto_name()}));
            }
            BoundParam::Tensor { array, .. } => {
                let path = dfx_dir.join(format!("_dep_gen_arg_{run_id}_{i}.npy"));
                write_npy(&path, array)?;
                args.push(json!({"kind": "tensor_file", "path": path.to_string_lossy()}));
                staged.push(path);
            }
            BoundParam::Scalar { bits, .. } => {
                args.push(json!({"kind": "scalar", "bits": bits.to_string()}))
            }
        }
    }
    let spec = json!({
        "mode": "argspec",
        "work_dir": build_dir.to_string_lossy(),
        "platform": config.platform().name(),
        "dfx_dir": dfx_dir.to_string_lossy(),
        "dfx_format": config.dfx_format.name(),
        "dfx_schema": config.dfx_schema.map(|s| s.name()),
        "args": args,
    });
    let text =
        serde_json::to_string_pretty(&spec).map_err(|e| RunnerError::config(e.to_string()))?;
    pto_dfx::atomic_write(spec_path, text.as_bytes())?;
    Ok(staged)
}

fn spec_err(spec: &Path, message: String) -> RunnerError {
    RunnerError::Data {
        path: spec.to_path_buf(),
        message,
    }
}

/// The child side: reads `spec`, rebuilds the arguments and runs the build once with only
/// dep_gen on, writing `deps.json` into the spec's `dfx_dir`.
pub fn capture_main(spec_path: &Path) -> Result<(), RunnerError> {
    let text = std::fs::read_to_string(spec_path).map_err(|source| RunnerError::Io {
        action: "reading",
        path: spec_path.to_path_buf(),
        source,
    })?;
    let spec: Value = serde_json::from_str(&text)
        .map_err(|e| spec_err(spec_path, format!("not valid JSON ({e})")))?;
    let field = |k: &str| {
        spec.get(k)
            .and_then(Value::as_str)
            .ok_or_else(|| spec_err(spec_path, format!("missing string key '{k}'")))
    };
    if field("mode")? != "argspec" {
        return Err(spec_err(
            spec_path,
            format!("Unknown spec mode: {}", field("mode")?),
        ));
    }
    let work_dir = PathBuf::from(field("work_dir")?);
    let dfx_dir = PathBuf::from(field("dfx_dir")?);
    let platform = field("platform")?.to_string();
    let specs = spec
        .get("args")
        .and_then(Value::as_array)
        .ok_or_else(|| spec_err(spec_path, "missing list key 'args'".into()))?;
    // Built for the timing pass's platform, so both passes run (and their artifacts name)
    // the same program.
    let build = crate::build::load_for(&work_dir, platform.parse().ok())?;
    if specs.len() != build.meta.params.len() {
        return Err(spec_err(
            spec_path,
            format!(
                "{} arguments for {} parameters",
                specs.len(),
                build.meta.params.len()
            ),
        ));
    }
    let mut params = Vec::with_capacity(specs.len());
    for (a, p) in specs.iter().zip(&build.meta.params) {
        let kind = a.get("kind").and_then(Value::as_str).unwrap_or("");
        let param = match kind {
            "tensor_file" => {
                let path = a
                    .get("path")
                    .and_then(Value::as_str)
                    .ok_or_else(|| spec_err(spec_path, "tensor_file without 'path'".into()))?;
                BoundParam::Tensor {
                    name: p.name.clone(),
                    direction: p.direction,
                    array: pto_build_output::read_tensor(Path::new(path))?,
                }
            }
            "tensor_zeros" => {
                let dtype: DType = a
                    .get("dtype")
                    .and_then(Value::as_str)
                    .and_then(|d| DType::from_pypto_str(d).ok())
                    .ok_or_else(|| spec_err(spec_path, format!("Unknown dtype name in {a}")))?;
                let shape: Vec<usize> = a
                    .get("shape")
                    .and_then(Value::as_array)
                    .map(|s| {
                        s.iter()
                            .filter_map(Value::as_u64)
                            .map(|d| d as usize)
                            .collect()
                    })
                    .unwrap_or_default();
                BoundParam::Tensor {
                    name: p.name.clone(),
                    direction: p.direction,
                    array: NpyArray::zeros(dtype, &shape)?,
                }
            }
            "scalar" => {
                let bits = a
                    .get("bits")
                    .and_then(Value::as_str)
                    .and_then(|b| b.parse().ok())
                    .ok_or_else(|| spec_err(spec_path, format!("bad scalar {a}")))?;
                BoundParam::Scalar {
                    name: p.name.clone(),
                    bits,
                }
            }
            other => {
                return Err(spec_err(
                    spec_path,
                    format!("Unknown arg spec kind: {other}"),
                ))
            }
        };
        params.push(param);
    }
    let mut config = RunConfig::new(Some(&platform))?;
    config.dfx = DfxOptions {
        dep_gen: true,
        ..Default::default()
    };
    // The timing pass's format (a spec without the key: the environment's, as before).
    if let Some(f) = spec.get("dfx_format").and_then(Value::as_str) {
        config.dfx_format = crate::config::DfxFormat::parse(f)?;
    }
    if let Some(g) = spec.get("dfx_schema").and_then(Value::as_str) {
        config.dfx_schema = Some(crate::config::parse_dfx_schema(g, "dfx_schema")?);
    }
    build.execute_pass(&mut params, &config, &dfx_dir)?;
    Ok(())
}
