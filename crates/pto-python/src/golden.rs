//! Output comparison for golden validation, and the `DistributedConfig` check: the rules
//! live in `pto_build_output`; this module only carries values across.

use pto_build_output::{compare as compare_arrays, DistributedConfig, Tolerances};
use pyo3::prelude::*;

use crate::conversion;
use crate::error::build_output_error;

/// Compares `actual` with `expected` element by element with NumPy's `isclose` semantics
/// (`|a - e| <= atol + rtol * |e|`; an infinity matches only itself; NaN matches nothing).
/// Raises `ValueError` for a negative or non-finite tolerance.
///
/// Returns `None` when every element matches, else the mismatch details (counts, the
/// largest difference and the first mismatches, one per line). A shape or dtype
/// difference is a mismatch too. Raises `TypeError` if either is not a NumPy array of a
/// supported dtype.
#[pyfunction]
#[pyo3(signature = (actual, expected, rtol, atol))]
pub fn compare(
    actual: &Bound<'_, PyAny>,
    expected: &Bound<'_, PyAny>,
    rtol: f64,
    atol: f64,
) -> PyResult<Option<String>> {
    let tol = Tolerances::checked(rtol, atol).map_err(pyo3::exceptions::PyValueError::new_err)?;
    let actual = conversion::any_array(actual, "actual")?;
    let expected = conversion::any_array(expected, "expected")?;
    let cmp = match compare_arrays(&actual, &expected, tol) {
        Ok(cmp) => cmp,
        Err(e) => return Ok(Some(e.to_string())),
    };
    if cmp.passed() {
        return Ok(None);
    }
    // The report's first line names the output and its third the tolerances; the caller
    // words both, so only the details are returned.
    let report = cmp.report("");
    let mut lines: Vec<&str> = report.lines().skip(1).collect();
    lines.retain(|l| !l.starts_with("rtol="));
    let mut details = lines.join("\n");
    details.push_str(&format!(
        "\nGreatest absolute difference: {}",
        cmp.max_abs_diff
    ));
    Ok(Some(details))
}

/// Checks a `DistributedConfig`'s values (device ids non-empty, non-negative and distinct;
/// `num_sub_workers >= 0`; `aicpu_thread_num` 0 or at least 2).
///
/// Raises `ValueError` with `pto_build_output`'s text, `TypeError` for a wrong type.
#[pyfunction]
pub fn check_distributed_config(
    device_ids: &Bound<'_, PyAny>,
    num_sub_workers: &Bound<'_, PyAny>,
    runtime: &Bound<'_, PyAny>,
    aicpu_thread_num: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let device_ids = conversion::int_list(device_ids, "DistributedConfig.device_ids")?;
    let num_sub_workers = conversion::int(num_sub_workers, "DistributedConfig.num_sub_workers")?;
    let aicpu_thread_num = conversion::int(aicpu_thread_num, "DistributedConfig.aicpu_thread_num")?;
    let runtime: String = runtime.extract().map_err(|_| {
        crate::error::type_error(format!(
            "DistributedConfig.runtime must be a str, got {}",
            conversion::type_name(runtime)
        ))
    })?;
    DistributedConfig::new(device_ids, num_sub_workers, runtime, aicpu_thread_num)
        .map(|_| ())
        .map_err(build_output_error)
}
