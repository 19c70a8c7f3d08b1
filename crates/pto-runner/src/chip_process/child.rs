//! The chip process's side: serve `load` and `run` requests from the host until it says
//! `exit` or closes the channel.

use std::io::Write as _;
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pto_build_output::{DType, NpyArray, ParamDirection};
use pto_runtime::{ArgDirection, HostTensor, Monitor, OrchArg};
use serde_json::{json, Value};

use super::board::{self, Board, BoardMonitor};
use super::protocol::{self, decode_config, direction_from, encode_error, path_from};
use super::shm::Mapping;
use crate::build::CompiledBuild;
use crate::error::RunnerError;
use crate::inputs::BoundParam;
use pto_toolchain::freshness::ProgramIdentity;

/// The control socket's descriptor in the child.
pub const CONTROL_FD: i32 = 3;
/// The shared file's descriptor in the child.
pub const SHARED_FD: i32 = 4;

/// A parameter as the host laid it out in the tensor area.
struct Param {
    name: String,
    direction: ParamDirection,
    dtype: DType,
    shape: Vec<usize>,
    /// `(offset, bytes)` in the tensor area, or the scalar's bits.
    place: Result<(usize, usize), u64>,
}

fn params_from(v: &Value) -> Result<Vec<Param>, RunnerError> {
    let bad =
        |what: &str| RunnerError::config(format!("malformed parameter from the host: {what}"));
    let list = v.as_array().ok_or_else(|| bad("not a list"))?;
    list.iter()
        .map(|p| {
            let name = p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            if let Some(bits) = p.get("bits").and_then(Value::as_u64) {
                return Ok(Param {
                    name,
                    direction: ParamDirection::In,
                    dtype: DType::UInt64,
                    shape: vec![],
                    place: Err(bits),
                });
            }
            let direction = p
                .get("direction")
                .and_then(Value::as_str)
                .and_then(direction_from)
                .ok_or_else(|| bad("direction"))?;
            let dtype: DType = p
                .get("dtype")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("dtype"))?
                .parse()?;
            let shape = p
                .get("shape")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("shape"))?
                .iter()
                .map(|d| d.as_u64().map(|d| d as usize).ok_or_else(|| bad("shape")))
                .collect::<Result<Vec<_>, _>>()?;
            let offset = p
                .get("offset")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad("offset"))? as usize;
            let bytes = p
                .get("bytes")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad("bytes"))? as usize;
            Ok(Param {
                name,
                direction,
                dtype,
                shape,
                place: Ok((offset, bytes)),
            })
        })
        .collect()
}

/// Runs one request over the tensor area `area`.
fn run(
    build: &CompiledBuild,
    req: &Value,
    area: &Mapping,
    monitor: &Monitor,
) -> Result<Value, RunnerError> {
    let mut config = decode_config(req.get("config").unwrap_or(&Value::Null))?;
    config.monitor = Some(monitor.clone());
    let params = params_from(req.get("params").unwrap_or(&Value::Null))?;
    let pass_dir = path_from(req.get("pass_dir"));
    let mut say_lines: Vec<String> = Vec::new();
    let outcome = if crate::two_pass::applies(&config) && pass_dir.is_none() {
        // The two-pass protocol writes its inputs to files: bind owned copies.
        let mut bound = Vec::with_capacity(params.len());
        for p in &params {
            bound.push(match p.place {
                Err(bits) => BoundParam::Scalar {
                    name: p.name.clone(),
                    bits,
                },
                Ok((offset, bytes)) => {
                    // SAFETY: the host does not touch the area during a run.
                    let data = unsafe { area.slice_mut(offset, bytes) }.ok_or_else(|| {
                        RunnerError::config("a parameter lies outside the tensor area".into())
                    })?;
                    BoundParam::Tensor {
                        name: p.name.clone(),
                        direction: p.direction,
                        array: NpyArray {
                            dtype: p.dtype,
                            shape: p.shape.clone(),
                            data: data.to_vec(),
                        },
                    }
                }
            });
        }
        let outcome =
            build.execute_with(&mut bound, &config, &mut |l| say_lines.push(l.to_string()))?;
        for (p, b) in params.iter().zip(&bound) {
            if let (Ok((offset, bytes)), BoundParam::Tensor { array, .. }) = (p.place, b) {
                // SAFETY: as above.
                if let Some(dst) = unsafe { area.slice_mut(offset, bytes) } {
                    dst.copy_from_slice(&array.data[..bytes.min(array.data.len())]);
                }
            }
        }
        outcome
    } else {
        let mut args = Vec::with_capacity(params.len());
        for p in &params {
            match p.place {
                Err(bits) => args.push(OrchArg::Scalar(bits)),
                Ok((offset, bytes)) => {
                    // SAFETY: the host does not touch the area during a run; parameters do
                    // not overlap (the host laid them out).
                    let data = unsafe { area.slice_mut(offset, bytes) }.ok_or_else(|| {
                        RunnerError::config("a parameter lies outside the tensor area".into())
                    })?;
                    let shape = p
                        .shape
                        .iter()
                        .map(|&d| u32::try_from(d))
                        .collect::<Result<Vec<u32>, _>>()
                        .map_err(|_| {
                            RunnerError::config(format!(
                                "parameter '{}' has a dimension above 2^32",
                                p.name
                            ))
                        })?;
                    args.push(OrchArg::TensorInPlace(HostTensor {
                        direction: match p.direction {
                            ParamDirection::In => ArgDirection::In,
                            ParamDirection::Out => ArgDirection::Out,
                            ParamDirection::InOut => ArgDirection::InOut,
                        },
                        dtype: p.dtype.runtime_code(),
                        shape,
                        data,
                    }));
                }
            }
        }
        let out = pass_dir.unwrap_or_else(|| crate::dfx_output::dfx_dir(&build.dir));
        build.execute_args(&mut args, &config, &out)?
    };
    let r = &outcome.report;
    Ok(json!({
        "op": "done",
        "say": say_lines,
        "n_tasks": r.n_tasks,
        "wall_ns": r.wall.as_nanos() as u64,
        "device_ns": r.device_time.as_nanos() as u64,
        "n_workers": r.n_workers,
        "timing_slots": r.timing_slots.iter().map(|s| s.map(|(a, b)| vec![a, b])).collect::<Vec<_>>(),
        "files": outcome.dfx.files.iter().map(|p| protocol::path_value(p)).collect::<Vec<_>>(),
        "hints": outcome.dfx.hints,
        "warnings": outcome.dfx.warnings,
    }))
}

/// The host's pid, recorded when the chip process starts serving (0: not a chip process).
static HOST_PID: AtomicI32 = AtomicI32::new(0);

/// Whether the host that started this chip process is still its parent (always true outside
/// a chip process). When the host dies, the kernel re-parents the chip process, so a changed
/// parent pid means the host is gone.
pub fn host_alive() -> bool {
    let host = HOST_PID.load(Ordering::Relaxed);
    // SAFETY: getppid has no preconditions.
    host == 0 || unsafe { libc::getppid() } == host
}

/// Ends this chip process and everything it started (its own process group) at once: the
/// host is gone, so nothing of its run may go on or publish.
fn die_with_host() -> ! {
    // SAFETY: signalling our own process group (the chip process leads it), then exiting.
    unsafe {
        libc::kill(0, libc::SIGKILL);
        libc::_exit(3)
    }
}

/// A `load` request: the build directory's program from the host's compiled objects. The
/// configuration files are read here again; if they no longer have the identity the host
/// computed (edited between the host's load and this one), `from_spec` refuses the load
/// rather than run a program the host did not check.
fn load(req: &Value) -> Result<CompiledBuild, RunnerError> {
    let malformed = || RunnerError::config("malformed load request from the host".into());
    let dir: PathBuf = path_from(req.get("dir")).ok_or_else(malformed)?;
    let spec = req
        .get("spec")
        .and_then(protocol::decode_spec)
        .ok_or_else(malformed)?;
    let platform: pto_runtime::Platform = req
        .get("platform")
        .and_then(Value::as_str)
        .and_then(|p| p.parse().ok())
        .ok_or_else(malformed)?;
    let expected = req
        .get("identity")
        .and_then(Value::as_str)
        .map(ProgramIdentity::from_hex);
    CompiledBuild::from_spec(&dir, platform, spec, expected.as_ref())
}

/// The chip process's main loop (`pto __chip-worker`, `python -m
/// pypto.runtime._chip_worker`): returns the process exit code once the host is done, after
/// the replaced diagnostics set aside by its runs are freed
/// ([`crate::dfx_publish::finish_freeing`]).
pub fn serve() -> i32 {
    let code = serve_requests();
    crate::dfx_publish::finish_freeing();
    code
}

fn serve_requests() -> i32 {
    // SAFETY: the host passes the control socket as fd 3; this process owns it from here.
    let mut sock = unsafe { UnixStream::from_raw_fd(CONTROL_FD) };
    let board_map = match Mapping::new(SHARED_FD, 0, board::board_bytes()) {
        Ok(m) => m,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "chip worker: cannot map the status board: {e}"
            );
            return 2;
        }
    };
    let board_ptr = board_map.base().cast::<Board>();
    // The board stays mapped until the process exits (the signal handler writes into it).
    std::mem::forget(board_map);
    // SAFETY: the board is mapped for the rest of the process.
    if let Err(e) = unsafe { super::signals::install(board_ptr) } {
        let _ = writeln!(
            std::io::stderr(),
            "chip worker: cannot install signal handlers: {e}"
        );
        return 2;
    }
    let board_addr = board_ptr as usize;
    // SAFETY: getppid has no preconditions.
    let host = unsafe { libc::getppid() };
    HOST_PID.store(host, Ordering::Relaxed);
    std::thread::spawn(move || loop {
        // SAFETY: mapped for the life of the process.
        unsafe { board::beat(board_addr as *mut Board) };
        if !host_alive() {
            die_with_host();
        }
        std::thread::sleep(Duration::from_millis(100));
    });
    // SAFETY: as above.
    let monitor = Monitor(Arc::new(unsafe { BoardMonitor::new(board_ptr) }));
    let mut build: Option<CompiledBuild> = None;
    let mut area: Option<(usize, usize, Mapping)> = None;
    let mut l3 = super::l3_child::L3State::default();
    loop {
        let (req, fds) = match super::fdpass::recv(&mut sock) {
            Ok(Some(r)) => r,
            Ok(None) | Err(_) => return 0, // the host went away
        };
        let reply = match req.get("op").and_then(Value::as_str) {
            Some(op) if op.starts_with("l3_") => {
                // SAFETY: the board is mapped for the life of the process.
                unsafe { board::set_running(board_ptr, true) };
                let r = l3.handle(op, &req, fds, &monitor);
                // SAFETY: as above.
                unsafe { board::set_running(board_ptr, false) };
                r
            }
            Some("load") => {
                // The old program is dropped first: a failed load leaves nothing to run.
                build = None;
                match load(&req) {
                    Ok(b) => {
                        build = Some(b);
                        json!({"op": "loaded"})
                    }
                    Err(e) => encode_error(&e),
                }
            }
            Some("run") => match &build {
                None => encode_error(&RunnerError::config("run before load".into())),
                Some(b) => {
                    let offset =
                        req.get("area_offset").and_then(Value::as_u64).unwrap_or(0) as usize;
                    let len = req.get("area_len").and_then(Value::as_u64).unwrap_or(0) as usize;
                    let fresh = !matches!(&area, Some((o, l, _)) if *o == offset && *l == len);
                    if fresh {
                        area = None;
                        match Mapping::new(SHARED_FD, offset, len) {
                            Ok(m) => area = Some((offset, len, m)),
                            Err(e) => {
                                let _ = protocol::send(
                                    &mut sock,
                                    &encode_error(&RunnerError::config(format!(
                                        "cannot map the tensor area: {e}"
                                    ))),
                                );
                                continue;
                            }
                        }
                    }
                    let Some((_, _, m)) = &area else { continue };
                    // SAFETY: the board is mapped for the life of the process.
                    unsafe { board::set_running(board_ptr, true) };
                    let r = run(b, &req, m, &monitor).unwrap_or_else(|e| encode_error(&e));
                    // SAFETY: as above.
                    unsafe { board::set_running(board_ptr, false) };
                    r
                }
            },
            Some("exit") => return 0,
            _ => encode_error(&RunnerError::config("unknown request from the host".into())),
        };
        if protocol::send(&mut sock, &reply).is_err() {
            return 0;
        }
    }
}
