//! Files the Python side writes, through the project's one atomic write
//! (`pto_base::fs::write_atomic`: a hidden temporary unique per writer, renamed over the
//! target, one durability policy; `pypto._files.write_atomic` is the Python entry point, and
//! no module of the package renames temporaries of its own), and the text of `debug/run.py`
//! from its one renderer (`pto_build_output::run_script`).

use std::path::PathBuf;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

/// Writes `data` to `path` atomically, creating the parent directories. Raises `OSError`
/// (the subclass its errno selects, e.g. `PermissionError`) naming the file and the step.
#[pyfunction]
pub fn write_atomic(py: Python<'_>, path: PathBuf, data: Vec<u8>) -> PyResult<()> {
    py.detach(|| pto_base::fs::write_atomic(&path, &data))
        .map_err(|e| {
            let errno = e.source.raw_os_error().unwrap_or(0);
            PyOSError::new_err((errno, e.to_string(), e.path.display().to_string()))
        })
}

/// The text of `debug/run.py` for `params` (`(name, direction, shape, dtype)` tuples as in
/// `compiled_meta.json`, `shape` `None` for a scalar) with `platform` as its default
/// platform, in the form `tensor_lib` (`numpy` or `torch`). `ValueError` for another form
/// or an unknown direction.
#[pyfunction]
pub fn render_run_script(
    params: Vec<(String, String, Option<Vec<i64>>, String)>,
    platform: Option<String>,
    tensor_lib: &str,
) -> PyResult<String> {
    use pto_build_output::run_script::{self, TensorLib};
    let lib = TensorLib::from_name(tensor_lib).ok_or_else(|| {
        let names: Vec<String> = TensorLib::ALL
            .iter()
            .map(|(n, _)| format!("'{n}'"))
            .collect();
        PyValueError::new_err(format!(
            "tensor_lib must be one of [{}], got '{tensor_lib}'",
            names.join(", ")
        ))
    })?;
    let params = params
        .into_iter()
        .map(|(name, direction, shape, dtype)| {
            let direction =
                pto_build_output::ParamDirection::from_name(&direction).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "parameter '{name}': direction '{direction}' is not In, Out or InOut"
                    ))
                })?;
            Ok(pto_build_output::ParamInfo {
                name,
                direction,
                shape,
                dtype,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let meta = pto_build_output::CompiledMeta {
        params,
        num_return_types: 0,
        platform,
        backend_type: pto_build_output::BackendType::Ascend910B,
    };
    Ok(run_script::render(&meta, None, lib))
}

/// Adds this module's functions to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_atomic, m)?)?;
    m.add_function(wrap_pyfunction!(render_run_script, m)?)?;
    let libs: Vec<&str> = pto_build_output::run_script::TensorLib::ALL
        .iter()
        .map(|(n, _)| *n)
        .collect();
    m.add("RUN_SCRIPT_TENSOR_LIBS", libs)?;
    Ok(())
}
