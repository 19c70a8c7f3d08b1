//! PyPTO's log level names as `tracing` filters, shared by the `pto` command line
//! (`--log-level`, `PYPTO_RUNTIME_LOG`) and `pypto.configure_log`.
//!
//! The names are PyPTO's: `debug`, `info`, `timing`, `warn`, `error`, `null` (matched
//! without regard to case or surrounding blanks; `warning`, `off` and `none` are accepted
//! as aliases). `timing` keeps warnings and adds the runtime's timing lines (target
//! `pto::timing`).

/// A level name that is none of PyPTO's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown log level '{0}'; use debug, info, timing, warn, error or null")]
pub struct UnknownLogLevel(pub String);

/// The `tracing` filter directive of the PyPTO level name `level`.
pub fn tracing_filter(level: &str) -> Result<&'static str, UnknownLogLevel> {
    Ok(match level.trim().to_ascii_lowercase().as_str() {
        "debug" => "debug",
        "info" => "info",
        "timing" => "warn,pto::timing=info",
        "warn" | "warning" => "warn",
        "error" => "error",
        "null" | "off" | "none" => "off",
        _ => return Err(UnknownLogLevel(level.to_string())),
    })
}

/// Whether log lines on stderr get colour: only on a terminal, and never when `NO_COLOR`
/// is set to a non-empty value (the `NO_COLOR` convention).
pub fn stderr_color() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_names_map_to_filters() {
        assert_eq!(tracing_filter("debug"), Ok("debug"));
        assert_eq!(tracing_filter(" Timing "), Ok("warn,pto::timing=info"));
        assert_eq!(tracing_filter("WARNING"), Ok("warn"));
        assert_eq!(tracing_filter("null"), Ok("off"));
        assert_eq!(tracing_filter("error"), Ok("error"));
    }

    #[test]
    fn an_unknown_name_lists_the_known_ones() {
        let err = tracing_filter("loud").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown log level 'loud'; use debug, info, timing, warn, error or null"
        );
    }
}
