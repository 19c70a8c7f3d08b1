//! The control channel between the host and a chip process: length-prefixed JSON messages
//! over a Unix stream socket, and the encodings of what they carry (the run configuration,
//! where each parameter lives in the shared tensor area, the run summary, errors).
//!
//! Frames are a 4-byte little-endian length and that many bytes of UTF-8 JSON, at most
//! [`MAX_FRAME`] bytes (a larger length is a protocol error, never an allocation).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

use pto_build_output::ParamDirection;
use pto_runtime::{ErrorCode, RuntimeError};
use serde_json::{json, Value};

use crate::config::{RingValue, RunConfig};
use crate::error::{ErrorKind, RunnerError};

/// Largest frame either side accepts.
pub const MAX_FRAME: usize = 64 << 20;

/// Writes one frame.
pub fn send(w: &mut impl Write, msg: &Value) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    if bytes.len() > MAX_FRAME {
        return Err(std::io::Error::other(
            "message too large for the chip-process channel",
        ));
    }
    w.write_all(&(bytes.len() as u32).to_le_bytes())?;
    w.write_all(&bytes)?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
pub fn recv(r: &mut impl Read) -> std::io::Result<Option<Value>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(std::io::Error::other(format!(
            "chip-process frame of {len} bytes exceeds the {MAX_FRAME}-byte limit"
        )));
    }
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf)?;
    serde_json::from_slice(&buf)
        .map(Some)
        .map_err(std::io::Error::other)
}

fn ring_value(v: &Option<RingValue>) -> Value {
    match v {
        None => Value::Null,
        Some(RingValue::Scalar(n)) => json!(n),
        Some(RingValue::PerRing(v)) => json!(v),
    }
}

fn ring_from(v: Option<&Value>) -> Option<RingValue> {
    match v? {
        Value::Number(n) => n.as_u64().map(RingValue::Scalar),
        Value::Array(a) => Some(RingValue::PerRing(
            a.iter().filter_map(Value::as_u64).collect(),
        )),
        _ => None,
    }
}

/// The parts of a [`RunConfig`] the chip process needs (not the interrupt check: the host
/// polls it and stops the child itself).
pub fn encode_config(c: &RunConfig) -> Value {
    json!({
        "platform": c.platform().name(),
        "dfx": c.dfx,
        "dfx_format": c.dfx_format.name(),
        "dfx_schema": c.dfx_schema.map(|s| s.name()),
        "ring_task_window": ring_value(&c.ring_task_window),
        "ring_heap": ring_value(&c.ring_heap),
        "ring_dep_pool": ring_value(&c.ring_dep_pool),
        "rtol": c.rtol,
        "atol": c.atol,
        "scheduler_timeout_ms": c.scheduler_timeout.map(|d| d.as_millis() as u64),
        "n_workers": c.n_workers,
    })
}

/// The configuration [`encode_config`] wrote, to run in this (child) process.
pub fn decode_config(v: &Value) -> Result<RunConfig, RunnerError> {
    let bad = || RunnerError::config("malformed run configuration from the host".to_string());
    let platform = v.get("platform").and_then(Value::as_str).ok_or_else(bad)?;
    let mut c = RunConfig::new(Some(platform))?;
    c.dfx = serde_json::from_value(v.get("dfx").cloned().unwrap_or(Value::Null)).map_err(|e| {
        RunnerError::config(format!(
            "malformed diagnostics options from the host ({e}); the host and the chip worker are different versions"
        ))
    })?;
    // A host of this version always sends the format; one that does not leaves the
    // child's own choice (its environment's PTO_DFX_FORMAT).
    if let Some(f) = v.get("dfx_format").and_then(Value::as_str) {
        c.dfx_format = crate::config::DfxFormat::parse(f)?;
    }
    if let Some(g) = v.get("dfx_schema").and_then(Value::as_str) {
        c.dfx_schema = Some(crate::config::parse_dfx_schema(g, "dfx_schema")?);
    }
    c.ring_task_window = ring_from(v.get("ring_task_window"));
    c.ring_heap = ring_from(v.get("ring_heap"));
    c.ring_dep_pool = ring_from(v.get("ring_dep_pool"));
    c.rtol = v.get("rtol").and_then(Value::as_f64).unwrap_or(c.rtol);
    c.atol = v.get("atol").and_then(Value::as_f64).unwrap_or(c.atol);
    c.scheduler_timeout = v
        .get("scheduler_timeout_ms")
        .and_then(Value::as_u64)
        .map(Duration::from_millis);
    c.n_workers = v
        .get("n_workers")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    c.in_process = true;
    Ok(c)
}

/// `in`, `out` or `inout`.
pub fn direction_name(d: ParamDirection) -> &'static str {
    match d {
        ParamDirection::In => "in",
        ParamDirection::Out => "out",
        ParamDirection::InOut => "inout",
    }
}

/// The direction [`direction_name`] wrote.
pub fn direction_from(s: &str) -> Option<ParamDirection> {
    match s {
        "in" => Some(ParamDirection::In),
        "out" => Some(ParamDirection::Out),
        "inout" => Some(ParamDirection::InOut),
        _ => None,
    }
}

/// An error as the child reports it: a runtime fatal error keeps its code and raw message
/// (so the host shows it exactly as an in-process run would), anything else its kind.
pub fn encode_error(e: &RunnerError) -> Value {
    match e {
        RunnerError::Runtime(RuntimeError::Fatal { code, message }) => {
            json!({"op": "error", "code": code.code(), "message": message})
        }
        RunnerError::Runtime(RuntimeError::Interrupted) => {
            json!({"op": "error", "interrupted": true, "message": e.to_string()})
        }
        other => json!({
            "op": "error",
            "kind": match other.kind() {
                ErrorKind::NotFound => "not_found",
                ErrorKind::Invalid => "invalid",
                ErrorKind::Type => "type",
                ErrorKind::Runtime => "runtime",
                ErrorKind::Artifact => "artifact",
            },
            "message": other.to_string(),
        }),
    }
}

/// The error [`encode_error`] wrote.
pub fn decode_error(v: &Value) -> RunnerError {
    let message = v
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("(no message)")
        .to_string();
    if let Some(code) = v.get("code").and_then(Value::as_i64) {
        return RunnerError::Runtime(RuntimeError::Fatal {
            code: ErrorCode::from_code(code as i32),
            message,
        });
    }
    if v.get("interrupted").and_then(Value::as_bool) == Some(true) {
        return RunnerError::Runtime(RuntimeError::Interrupted);
    }
    let kind = match v.get("kind").and_then(Value::as_str) {
        Some("not_found") => ErrorKind::NotFound,
        Some("type") => ErrorKind::Type,
        Some("runtime") => ErrorKind::Runtime,
        Some("artifact") => ErrorKind::Artifact,
        _ => ErrorKind::Invalid,
    };
    RunnerError::Remote { kind, message }
}

/// A program spec (the compiled objects a chip process loads).
pub fn encode_spec(spec: &pto_runtime::ProgramSpec) -> Value {
    json!({
        "orchestration_so": path_value(&spec.orchestration_so),
        "entry_symbol": spec.entry_symbol,
        "config_symbol": spec.config_symbol,
        "kernels": spec.kernels.iter().map(|k| json!({
            "func_id": k.func_id,
            "name": k.name,
            "core": k.core_type.name(),
            "so": path_value(&k.so_path),
        })).collect::<Vec<_>>(),
    })
}

/// The spec [`encode_spec`] wrote.
pub fn decode_spec(v: &Value) -> Option<pto_runtime::ProgramSpec> {
    let kernels = v
        .get("kernels")?
        .as_array()?
        .iter()
        .map(|k| {
            Some(pto_runtime::KernelSpec {
                func_id: i32::try_from(k.get("func_id")?.as_i64()?).ok()?,
                name: k.get("name")?.as_str()?.to_string(),
                core_type: match k.get("core")?.as_str()? {
                    "aic" => pto_runtime::CoreType::Aic,
                    _ => pto_runtime::CoreType::Aiv,
                },
                so_path: path_from(k.get("so"))?,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(pto_runtime::ProgramSpec {
        orchestration_so: path_from(v.get("orchestration_so"))?,
        entry_symbol: v.get("entry_symbol")?.as_str()?.to_string(),
        config_symbol: v
            .get("config_symbol")
            .and_then(Value::as_str)
            .map(str::to_string),
        kernels,
    })
}

/// Paths in messages.
pub fn path_value(p: &std::path::Path) -> Value {
    Value::String(p.to_string_lossy().into_owned())
}

/// A path from a message.
pub fn path_from(v: Option<&Value>) -> Option<PathBuf> {
    v.and_then(Value::as_str).map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DfxOptions;

    #[test]
    fn frames_round_trip_and_oversized_lengths_are_refused() {
        let mut buf = Vec::new();
        send(&mut buf, &json!({"op": "x", "n": 3})).unwrap();
        let v = recv(&mut buf.as_slice()).unwrap().unwrap();
        assert_eq!(v["n"], 3);
        assert!(recv(&mut [].as_slice()).unwrap().is_none());
        let huge = ((MAX_FRAME + 1) as u32).to_le_bytes();
        assert!(recv(&mut huge.as_slice()).is_err());
    }

    /// Every field of [`RunConfig`] and [`DfxOptions`] set to a value other than its default
    /// survives the protocol. The patterns below name every field: a field added to either
    /// struct fails to compile here until it is carried (and compared) or listed as not
    /// carried.
    #[test]
    fn every_config_field_round_trips_with_a_non_default_value() {
        let mut c = RunConfig::new(Some("a5")).unwrap();
        c.dfx = DfxOptions {
            chip_swimlane: 2,
            dump_args: 3,
            pmu: 4,
            dep_gen: true,
            scope_stats: true,
            predicted_timing: true,
        };
        c.dfx_format = crate::config::DfxFormat::Compact;
        c.dfx_schema = Some(pto_dfx::DfxSchema::V2026_09);
        c.ring_task_window = Some(RingValue::Scalar(64));
        c.ring_heap = Some(RingValue::PerRing(vec![0, 1 << 20, 0, 2048]));
        c.ring_dep_pool = Some(RingValue::Scalar(4096));
        c.rtol = 0.25;
        c.atol = 0.5;
        c.scheduler_timeout = Some(Duration::from_millis(2500));
        c.n_workers = Some(3);
        let d = decode_config(&encode_config(&c)).unwrap();
        let RunConfig {
            platform,
            dfx,
            dfx_format,
            dfx_schema,
            ring_task_window,
            ring_heap,
            ring_dep_pool,
            rtol,
            atol,
            scheduler_timeout,
            n_workers,
            // Not carried: the host polls the interrupt and stops the child itself; the
            // child watches its own threads; a chip process always runs in process.
            interrupt: _,
            monitor: _,
            in_process: _,
        } = &c;
        // Every diagnostics field is set away from its default, so one the protocol dropped
        // would come back different.
        let DfxOptions {
            chip_swimlane,
            dump_args,
            pmu,
            dep_gen,
            scope_stats,
            predicted_timing,
        } = *dfx;
        let off = DfxOptions::default();
        assert!(chip_swimlane != off.chip_swimlane && dump_args != off.dump_args);
        assert!(pmu != off.pmu && dep_gen != off.dep_gen);
        assert!(scope_stats != off.scope_stats && predicted_timing != off.predicted_timing);
        assert_eq!(d.platform(), *platform);
        assert_eq!(d.dfx, *dfx);
        assert_eq!((d.dfx_format, d.dfx_schema), (*dfx_format, *dfx_schema));
        assert_eq!(&d.ring_task_window, ring_task_window);
        assert_eq!(&d.ring_heap, ring_heap);
        assert_eq!(&d.ring_dep_pool, ring_dep_pool);
        assert_eq!((d.rtol, d.atol), (*rtol, *atol));
        assert_eq!(
            (d.scheduler_timeout, d.n_workers),
            (*scheduler_timeout, *n_workers)
        );
        assert!(d.in_process);
    }

    #[test]
    fn diagnostics_options_missing_or_unknown_fields_are_refused() {
        let mut v = encode_config(&RunConfig::new(None).unwrap());
        v["dfx"]["enable_trace"] = json!(true);
        let err = decode_config(&v).unwrap_err().to_string();
        assert!(err.contains("unknown field `enable_trace`"), "{err}");
        let mut v = encode_config(&RunConfig::new(None).unwrap());
        v["dfx"].as_object_mut().unwrap().remove("scope_stats");
        let err = decode_config(&v).unwrap_err().to_string();
        assert!(err.contains("missing field `scope_stats`"), "{err}");
    }

    /// An artifact that cannot be written is its own kind (not a configuration error), on
    /// either side of the channel.
    #[test]
    fn an_artifact_write_failure_keeps_its_kind_across_the_channel() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not_a_dir");
        std::fs::write(&file, "x").unwrap();
        let err = RunnerError::from(pto_dfx::atomic_write(&file.join("pmu.csv"), b"").unwrap_err());
        assert_eq!(err.kind(), ErrorKind::Artifact);
        let d = decode_error(&encode_error(&err));
        assert_eq!(
            (d.kind(), d.to_string()),
            (ErrorKind::Artifact, err.to_string())
        );
    }

    #[test]
    fn config_and_errors_round_trip() {
        let mut c = RunConfig::new(Some("a5sim")).unwrap();
        c.dfx.chip_swimlane = 3;
        c.dfx_format = crate::config::DfxFormat::Compact;
        c.ring_heap = Some(RingValue::PerRing(vec![0, 1 << 20, 0, 0]));
        c.scheduler_timeout = Some(Duration::from_millis(1500));
        let d = decode_config(&encode_config(&c)).unwrap();
        assert_eq!(d.platform().name(), "a5sim");
        assert_eq!(d.dfx.chip_swimlane, 3);
        assert_eq!(d.dfx_format, crate::config::DfxFormat::Compact);
        assert_eq!(d.ring_heap, c.ring_heap);
        assert_eq!(d.scheduler_timeout, c.scheduler_timeout);
        assert!(d.in_process);
        let e = RunnerError::Runtime(RuntimeError::Fatal {
            code: ErrorCode::KernelFault,
            message: "boom".into(),
        });
        match decode_error(&encode_error(&e)) {
            RunnerError::Runtime(RuntimeError::Fatal { code, message }) => {
                assert_eq!((code, message.as_str()), (ErrorCode::KernelFault, "boom"));
            }
            other => panic!("{other:?}"),
        }
        let e = RunnerError::config("bad ring".into());
        let d = decode_error(&encode_error(&e));
        assert_eq!(
            (d.kind(), d.to_string()),
            (ErrorKind::Invalid, "bad ring".to_string())
        );
    }
}
