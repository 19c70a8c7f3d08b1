//! Files the Python side writes, through the project's one atomic write
//! (`pto_base::fs::write_atomic`: a hidden temporary unique per writer, renamed over the
//! target, one durability policy; `pypto._files.write_atomic` is the Python entry point, and
//! no module of the package renames temporaries of its own), and the text of `debug/run.py`
//! and `golden.py` from their one renderers (`pto_build_output::run_script`,
//! `pto_build_output::golden_script`).

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
    Ok(run_script::render(&params, platform.as_deref(), lib))
}

/// One parameter of `golden.py` as Python passes it: `(name, kind, dtype, shape, expr)`, with
/// `kind` `load` (from `data/in`), `zeros` (`dtype` and `shape` given) or `scalar` (`expr`,
/// the ctypes expression, given).
type GoldenParamTuple = (
    String,
    String,
    Option<String>,
    Option<Vec<usize>>,
    Option<String>,
);

/// The [`GoldenInput`](pto_build_output::golden_script::GoldenInput) of one parameter tuple.
fn golden_input(
    (name, kind, dtype, shape, expr): GoldenParamTuple,
) -> PyResult<pto_build_output::golden_script::GoldenParam> {
    use pto_build_output::golden_script::{GoldenInput, GoldenParam};
    let input = match (kind.as_str(), dtype, shape, expr) {
        ("load", ..) => GoldenInput::Load,
        ("zeros", Some(dtype), Some(shape), _) => GoldenInput::Zeros {
            dtype: pto_build_output::DType::from_pypto_str(&dtype)
                .map_err(|e| PyValueError::new_err(format!("parameter '{name}': {e}")))?,
            shape,
        },
        ("scalar", _, _, Some(expr)) => GoldenInput::Scalar { expr },
        (kind, ..) => {
            return Err(PyValueError::new_err(format!(
                "parameter '{name}': kind '{kind}' needs load, zeros (with dtype and shape) or \
                 scalar (with expr)"
            )))
        }
    };
    Ok(GoldenParam { name, input })
}

/// The text of `golden.py` (`pto_build_output::golden_script`): `generated_by` for its
/// docstring, the parameters as `(name, kind, dtype, shape, expr)` tuples, the output
/// names, the tolerances and the whole `compute_golden` function. `ValueError` for a
/// malformed parameter or a zero-filled output NumPy has no type for.
#[pyfunction]
pub fn render_golden_script(
    generated_by: String,
    params: Vec<GoldenParamTuple>,
    outputs: Vec<String>,
    rtol: f64,
    atol: f64,
    compute_golden: String,
) -> PyResult<String> {
    use pto_build_output::golden_script::{self, GoldenScript};
    let script = GoldenScript {
        generated_by,
        params: params
            .into_iter()
            .map(golden_input)
            .collect::<PyResult<_>>()?,
        outputs,
        rtol,
        atol,
        compute_golden,
    };
    golden_script::render(&script).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Adds this module's functions to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(write_atomic, m)?)?;
    m.add_function(wrap_pyfunction!(render_run_script, m)?)?;
    m.add_function(wrap_pyfunction!(render_golden_script, m)?)?;
    let libs: Vec<&str> = pto_build_output::run_script::TensorLib::ALL
        .iter()
        .map(|(n, _)| *n)
        .collect();
    m.add("RUN_SCRIPT_TENSOR_LIBS", libs)?;
    Ok(())
}
