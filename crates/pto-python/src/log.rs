//! The runtime's log level, as `PYPTO_RUNTIME_LOG` and `configure_log(level)` set it.
//!
//! The runner and the runtime log through `tracing`; the first call installs a subscriber
//! writing to stderr, later calls swap its filter. Level names are PyPTO's: `debug`,
//! `info`, `timing`, `warn`, `error`, `null` (the same the `pto` CLI accepts).

use std::sync::{Mutex, OnceLock};

use pyo3::prelude::*;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{reload, EnvFilter, Registry};

use crate::error::value_error;

type FilterHandle = reload::Handle<EnvFilter, Registry>;

/// The installed subscriber's filter handle, and the level name last set.
static STATE: OnceLock<Mutex<(Option<FilterHandle>, String)>> = OnceLock::new();

/// Sets the runtime's log level (`debug`, `info`, `timing`, `warn`, `error` or `null`).
///
/// Raises `ValueError` for an unknown level name.
#[pyfunction]
pub fn configure_log(level: &str) -> PyResult<()> {
    let filter =
        pto_runner::log_level::tracing_filter(level).map_err(|e| value_error(e.to_string()))?;
    let state = STATE.get_or_init(|| Mutex::new((None, "warn".to_string())));
    let mut state = state
        .lock()
        .map_err(|_| value_error("the log configuration is poisoned".to_string()))?;
    match &state.0 {
        Some(handle) => {
            // The subscriber is alive for the life of the process, so reloading succeeds.
            let _ = handle.reload(EnvFilter::new(filter));
        }
        None => {
            let (layer, handle) = reload::Layer::new(EnvFilter::new(filter));
            let fmt = tracing_subscriber::fmt::layer()
                .with_ansi(pto_runner::log_level::stderr_color())
                .with_writer(std::io::stderr)
                .with_target(false)
                .without_time();
            // Another subscriber may already be installed by the host process; then ours
            // stays out of the way and the level has no effect.
            if tracing_subscriber::registry()
                .with(layer)
                .with(fmt)
                .try_init()
                .is_ok()
            {
                state.0 = Some(handle);
            }
        }
    }
    state.1 = level.trim().to_ascii_lowercase();
    Ok(())
}

/// The level name last set with [`configure_log`] (`warn` before any call).
#[pyfunction]
pub fn log_level() -> String {
    STATE
        .get()
        .and_then(|s| s.lock().ok().map(|s| s.1.clone()))
        .unwrap_or_else(|| "warn".to_string())
}
