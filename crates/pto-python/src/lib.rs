//! `pypto._native`: the PyO3 binding of the runner, the one crate that knows PyO3.
//!
//! The Python package `pypto` (in `python/pypto/`) is the seed's API: `RunConfig`,
//! `CompiledProgram.from_dir`, `replay`, the `debug/run.py` writer, the pytest plugin. It
//! calls this module for everything that runs or validates, so that `pto` and `pypto` share
//! one implementation and one set of error texts. This crate holds no run logic and no
//! validation rule of its own:
//!
//! - [`conversion`]: every Python value → Rust value conversion (NumPy arrays, scalars,
//!   levels, ring overrides, paths); a wrong type is a `TypeError` naming the parameter.
//! - [`error`]: every Rust error → Python exception mapping (by `pto_runner::ErrorKind`).
//! - [`config`]: `RunOptions`, the validated `pto_runner::RunConfig`.
//! - [`dfx`]: the diagnostics switches' table (`dfx_switches()`) and their conversion.
//! - [`dtype`]: the element types' table (`element_type_table()`, `element_types()`).
//! - [`program`]: `Program`, a loaded build directory (`pto_runner::CompiledBuild`), run
//!   and benchmarked with the GIL released; `CompiledMeta`, `ParamInfo`, `ExecuteReport`.
//! - [`bench`](mod@bench): `BenchmarkStats` over `pto_runner::bench_stats`.
//! - [`golden`]: output comparison and the `DistributedConfig` check.
//! - [`host_array`]: `HostArray`, a tensor held natively (`data/in` bound without NumPy).
//! - [`lifecycle`]: binary-cache invalidation, the `.pto` rebuild and the two-pass
//!   swimlane's child.
//! - [`log`]: the runtime's log level.
//! - [`ir`]: the DSL compiler's IR (`IrProgram`, ...), built by `pypto.language`.
//! - [`l3`]: `L3Engine`, the host engine of an L3 (several chips) run.
//! - [`files`]: the atomic write the Python side's files go through.
//!
//! The stub `python/pypto/_native.pyi` mirrors every definition here; `mypy.stubtest`
//! checks that they agree.

#![deny(missing_docs)]

pub mod bench;
pub mod config;
pub mod conversion;
pub mod dfx;
pub mod dtype;
pub mod error;
pub mod files;
pub mod golden;
pub mod host_array;
pub mod ir;
pub mod l3;
pub mod lifecycle;
pub mod log;
pub mod program;

use pyo3::prelude::*;

/// The native module `pypto._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<config::RunOptions>()?;
    m.add_class::<program::Program>()?;
    m.add_class::<program::ParamInfo>()?;
    m.add_class::<program::CompiledMeta>()?;
    m.add(
        "COMPILED_META_SCHEMA",
        pto_build_output::compiled_meta::COMPILED_META_SCHEMA,
    )?;
    m.add_class::<program::ExecuteReport>()?;
    m.add_class::<bench::BenchmarkStats>()?;
    m.add_class::<host_array::HostArray>()?;
    m.add_function(wrap_pyfunction!(bench::validate_bench_args, m)?)?;
    m.add_function(wrap_pyfunction!(config::normalize_swimlane_level, m)?)?;
    m.add_function(wrap_pyfunction!(golden::compare, m)?)?;
    m.add_function(wrap_pyfunction!(golden::check_distributed_config, m)?)?;
    m.add_function(wrap_pyfunction!(log::configure_log, m)?)?;
    m.add_function(wrap_pyfunction!(log::log_level, m)?)?;
    dfx::register(m)?;
    dtype::register(m)?;
    error::register(m)?;
    lifecycle::register(m)?;
    files::register(m)?;
    ir::register(m)?;
    l3::register(m)?;
    Ok(())
}
