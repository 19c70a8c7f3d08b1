//! A chip process's L3 requests: it holds every chip program of an L3 build (loaded once),
//! the host memory regions it was handed (mapped once, by descriptor), its comm domains,
//! and runs one dispatch at a time over them.
//!
//! Requests (`op`):
//! - `l3_load` `{platform, programs: [{name, dir, spec}]}`: load the compiled programs;
//! - `l3_dispatch` `{program, regions: [{id, len}], tensors: [{region, offset, bytes, shape,
//!   dtype, tag}], scalars, config, out}`: map the new regions (their descriptors ride on the
//!   frame, in order), bind every tensor *in place* and run; diagnostics go to `out`, whose
//!   name map is written as `name_map.json` (L3's per-dispatch name);
//! - `l3_join` `{domain, rank, nranks, window, total}` (+ the domain file's descriptor):
//!   join a comm domain; the reply carries `device_ctx` and `local_window_base`;
//! - `l3_release` `{domains, regions}`: leave domains and unmap regions.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;

use pto_runtime::{ArgDirection, HostTensor, Monitor, OrchArg};
use serde_json::{json, Value};

use super::protocol::{decode_config, decode_spec, encode_error, path_from};
use super::shm::Mapping;
use crate::build::CompiledBuild;
use crate::error::RunnerError;
use crate::l3::comm::{self, Joined};

/// What an L3 chip process holds between requests.
#[derive(Default)]
pub struct L3State {
    programs: HashMap<String, CompiledBuild>,
    regions: HashMap<u64, Mapping>,
    domains: HashMap<u64, Joined>,
    /// The windows of a domain region's mapping, as GM every PTO-ISA subtask may touch (a
    /// kernel adds a peer's offset to a window tensor's address; see pto_runtime::shared_gm).
    region_windows: HashMap<u64, pto_runtime::shared_gm::SharedGmRange>,
}

fn bad(what: &str) -> RunnerError {
    RunnerError::config(format!("malformed L3 request from the host: {what}"))
}

fn u64_of(v: &Value, k: &str) -> Result<u64, RunnerError> {
    v.get(k).and_then(Value::as_u64).ok_or_else(|| bad(k))
}

impl L3State {
    /// Serves one request; the reply is `{op: ...}` or an error frame.
    pub fn handle(&mut self, op: &str, req: &Value, fds: Vec<OwnedFd>, monitor: &Monitor) -> Value {
        let r = match op {
            "l3_load" => self.load(req),
            "l3_dispatch" => self.dispatch(req, fds, monitor),
            "l3_join" => self.join(req, fds),
            "l3_release" => self.release(req),
            _ => Err(bad("unknown op")),
        };
        r.unwrap_or_else(|e| encode_error(&e))
    }

    fn load(&mut self, req: &Value) -> Result<Value, RunnerError> {
        let list = req
            .get("programs")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("programs"))?;
        let platform: pto_runtime::Platform = req
            .get("platform")
            .and_then(Value::as_str)
            .and_then(|p| p.parse().ok())
            .ok_or_else(|| bad("platform"))?;
        for p in list {
            let name = p
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("program name"))?;
            let dir: PathBuf = path_from(p.get("dir")).ok_or_else(|| bad("program dir"))?;
            let spec = p
                .get("spec")
                .and_then(decode_spec)
                .ok_or_else(|| bad("program spec"))?;
            let build = CompiledBuild::from_spec_sub_build(&dir, platform, spec)?;
            self.programs.insert(name.to_string(), build);
        }
        Ok(json!({"op": "loaded"}))
    }

    fn dispatch(
        &mut self,
        req: &Value,
        fds: Vec<OwnedFd>,
        monitor: &Monitor,
    ) -> Result<Value, RunnerError> {
        let new_regions = req
            .get("regions")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("regions"))?;
        if new_regions.len() != fds.len() {
            return Err(bad("region descriptors"));
        }
        for (r, fd) in new_regions.iter().zip(&fds) {
            let id = u64_of(r, "id")?;
            let len = u64_of(r, "len")? as usize;
            let m = Mapping::new(fd.as_raw_fd(), 0, len).map_err(|e| {
                RunnerError::config(format!("cannot map host memory region {id}: {e}"))
            })?;
            if self.domains.contains_key(&id) && m.len() > comm::HEADER_BYTES {
                let base = m.base() as u64;
                let range = pto_runtime::shared_gm::register(
                    base + comm::HEADER_BYTES as u64,
                    base + m.len() as u64,
                )
                .map_err(|e| RunnerError::config(e.to_string()))?;
                self.region_windows.insert(id, range);
            }
            self.regions.insert(id, m);
        }
        drop(fds);
        let name = req
            .get("program")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("program"))?;
        let build = self.programs.get(name).ok_or_else(|| {
            RunnerError::config(format!("chip program '{name}' was not loaded on this chip"))
        })?;
        let mut config = decode_config(req.get("config").unwrap_or(&Value::Null))?;
        config.monitor = Some(monitor.clone());
        let mut args = Vec::new();
        for (i, t) in req
            .get("tensors")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("tensors"))?
            .iter()
            .enumerate()
        {
            let region = u64_of(t, "region")?;
            let offset = u64_of(t, "offset")? as usize;
            let bytes = u64_of(t, "bytes")? as usize;
            let dtype = u8::try_from(u64_of(t, "dtype")?).map_err(|_| bad("dtype"))?;
            let shape = t
                .get("shape")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("shape"))?
                .iter()
                .map(|d| d.as_u64().and_then(|d| u32::try_from(d).ok()))
                .collect::<Option<Vec<u32>>>()
                .ok_or_else(|| bad("shape"))?;
            let m = self.regions.get(&region).ok_or_else(|| {
                RunnerError::config(format!(
                    "tensor {i} of the dispatch lies in host memory region {region}, which this chip never received"
                ))
            })?;
            // SAFETY: the host orders dispatches by the TensorMap, so no other task of
            // this process writes these bytes during the run; the runtime only takes the
            // address of an in-place tensor (arguments of one task may alias for reads).
            let data = unsafe { m.slice_mut(offset, bytes) }.ok_or_else(|| {
                RunnerError::config(format!(
                    "tensor {i} of the dispatch ({bytes} bytes at offset {offset}) lies outside its host memory region {region} ({} bytes)",
                    m.len()
                ))
            })?;
            let direction = match t.get("tag").and_then(Value::as_i64) {
                Some(0) => ArgDirection::In,
                _ => ArgDirection::InOut,
            };
            args.push(OrchArg::TensorInPlace(HostTensor {
                direction,
                dtype,
                shape,
                data,
            }));
        }
        for s in req
            .get("scalars")
            .and_then(Value::as_array)
            .ok_or_else(|| bad("scalars"))?
        {
            args.push(OrchArg::Scalar(s.as_u64().ok_or_else(|| bad("scalar"))?));
        }
        let out = path_from(req.get("out"));
        let scratch = std::env::temp_dir();
        let outcome = build.execute_args(&mut args, &config, out.as_deref().unwrap_or(&scratch))?;
        if let Some(out) = &out {
            // L3's per-dispatch name map is `name_map.json`.
            let label = build
                .dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let written = out.join(format!("{}{label}.json", pto_dfx::name_map::FILE_PREFIX));
            if written.is_file() {
                let _ = std::fs::rename(&written, out.join("name_map.json"));
            }
        }
        let r = &outcome.report;
        Ok(json!({
            "op": "done",
            "n_tasks": r.n_tasks,
            "wall_ns": r.wall.as_nanos() as u64,
            "device_ns": r.device_time.as_nanos() as u64,
            "warnings": outcome.dfx.warnings,
        }))
    }

    fn join(&mut self, req: &Value, fds: Vec<OwnedFd>) -> Result<Value, RunnerError> {
        let id = u64_of(req, "domain")?;
        let fd = fds.first().ok_or_else(|| bad("domain descriptor"))?;
        let j = comm::join(
            fd.as_raw_fd(),
            u64_of(req, "total")? as usize,
            u64_of(req, "rank")? as usize,
            u64_of(req, "nranks")? as usize,
            u64_of(req, "window")? as usize,
        )
        .map_err(|e| RunnerError::config(e.to_string()))?;
        let reply = json!({
            "op": "joined",
            "device_ctx": j.device_ctx(),
            "local_window_base": j.local_window_base,
        });
        self.domains.insert(id, j);
        Ok(reply)
    }

    fn release(&mut self, req: &Value) -> Result<Value, RunnerError> {
        for id in req
            .get("domains")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
        {
            if let Some(j) = self.domains.remove(&id) {
                j.release();
            }
        }
        for id in req
            .get("regions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
        {
            self.region_windows.remove(&id);
            self.regions.remove(&id);
        }
        Ok(json!({"op": "released"}))
    }
}
