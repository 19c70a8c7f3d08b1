//! The host's side: start chip processes, run requests on them, and explain their deaths.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use pto_runtime::{DfxData, Platform, RunReport, RuntimeError};
use serde_json::{json, Value};

use super::board::{self, Board, Snapshot};
use super::protocol::{self, decode_error, direction_name, encode_config, path_value};
use super::shm::{align64, page_align, Mapping, SharedFile};
use super::signals;
use crate::build::CompiledBuild;
use crate::config::RunConfig;
use crate::dfx_output::DfxSummary;
use crate::error::{ErrorKind, RunnerError};
use crate::execute::ExecuteOutcome;
use crate::inputs::BoundParam;
use pto_toolchain::freshness::ProgramIdentity;

/// A running chip process.
pub(crate) struct ChipProcess {
    pub(crate) child: Child,
    pub(crate) sock: UnixStream,
    shared: SharedFile,
    board: Mapping,
    /// Tensor area `(offset, len)` mapped in the host.
    area: Option<(usize, usize, Mapping)>,
    /// The identity of the program the process loaded (`None`: nothing loaded yet).
    loaded: Option<ProgramIdentity>,
}

impl ChipProcess {
    pub(crate) fn board(&self) -> *mut Board {
        self.board.base().cast::<Board>()
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the process group and reaps the child.
    pub(crate) fn kill(mut self) {
        let pid = self.child.id() as i32;
        // SAFETY: signalling our own child's process group.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Idle chip processes by build directory and platform.
/// Idle chip processes kept warm, one per (build directory, platform), each with the
/// sequence number of its return (the oldest is stopped first when the pool is full).
static POOL: Mutex<Option<IdlePool>> = Mutex::new(None);

/// Idle chip processes by (build directory, platform), with their return sequence numbers.
type IdlePool = HashMap<(PathBuf, Platform), (u64, ChipProcess)>;

/// At most this many idle chip processes stay alive: a long session that runs many build
/// directories keeps the most recently used ones warm instead of one process (threads,
/// shared memory) per directory it ever ran.
const MAX_IDLE: usize = 8;

fn take(dir: &Path, platform: Platform) -> Option<ChipProcess> {
    POOL.lock()
        .ok()?
        .as_mut()?
        .remove(&(dir.to_path_buf(), platform))
        .map(|(_, p)| p)
}

fn put_back(dir: &Path, platform: Platform, p: ChipProcess) {
    static RETURNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let stamp = RETURNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut stopped = Vec::new();
    if let Ok(mut pool) = POOL.lock() {
        let pool = pool.get_or_insert_with(HashMap::new);
        if let Some((_, old)) = pool.insert((dir.to_path_buf(), platform), (stamp, p)) {
            stopped.push(old);
        }
        while pool.len() > MAX_IDLE {
            let Some(oldest) = pool
                .iter()
                .min_by_key(|(_, (stamp, _))| *stamp)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            if let Some((_, p)) = pool.remove(&oldest) {
                stopped.push(p);
            }
        }
    }
    // Killed outside the lock (reaping waits for the child).
    for p in stopped {
        p.kill();
    }
}

/// Stops every idle chip process (e.g. before a build directory is rebuilt), the one
/// [`prestart`] started included.
pub fn shutdown_all() {
    let mut procs: Vec<ChipProcess> = match POOL.lock() {
        Ok(mut pool) => pool
            .take()
            .map(|m| m.into_values().map(|(_, p)| p).collect())
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    procs.extend(take_prestarted());
    for p in procs {
        p.kill();
    }
}

/// A chip process started ahead of its first use, that has loaded nothing yet.
static PRESTARTED: Mutex<Option<ChipProcess>> = Mutex::new(None);

/// Starts a chip process now, before the first run needs one, so that its start-up (a
/// whole interpreter, for the Python package's worker) overlaps what the caller does until
/// then (the compile checks, binding the inputs). A process has loaded nothing when it
/// starts, so the next run of any build directory takes it instead of starting its own.
/// Does nothing when one is waiting already, when an idle process already serves `dir` on
/// `platform` (the run reuses that one) or when no worker command is registered; a process
/// that cannot be started is not reported here: the run that needs one starts its own and
/// reports that.
pub fn prestart(dir: &Path, platform: Platform) {
    let pooled = POOL.lock().is_ok_and(|pool| {
        pool.as_ref()
            .is_some_and(|m| m.contains_key(&(dir.to_path_buf(), platform)))
    });
    let Ok(mut slot) = PRESTARTED.lock() else {
        return;
    };
    if !pooled && slot.is_none() && super::worker_command().is_some() {
        *slot = spawn_process().ok();
    }
}

/// The process [`prestart`] started, if any.
fn take_prestarted() -> Option<ChipProcess> {
    PRESTARTED.lock().ok()?.take()
}

fn chip_error(message: String) -> RunnerError {
    RunnerError::ChipProcess { message }
}

/// A new chip process holding `build`: the [`prestart`]ed one while it is alive, else one
/// started now.
fn spawn(build: &CompiledBuild) -> Result<ChipProcess, RunnerError> {
    let p = match take_prestarted() {
        Some(mut p) => {
            if matches!(p.child.try_wait(), Ok(None)) {
                p
            } else {
                p.kill();
                spawn_process()?
            }
        }
        None => spawn_process()?,
    };
    load(p, build)
}

/// A chip process that holds exactly `build`'s program: a pooled one whose program has
/// `build`'s identity, a pooled one told to load `build` (its program changed on disk or
/// was replaced since), or a new one.
fn acquire(build: &CompiledBuild, platform: Platform) -> Result<ChipProcess, RunnerError> {
    match take(&build.dir, platform) {
        Some(p) if p.loaded.as_ref() == Some(&build.identity) => Ok(p),
        Some(p) => {
            tracing::info!(
                "{}: the program changed since the chip process {} loaded it (identity {} -> {}); reloading",
                build.dir.display(),
                p.pid(),
                p.loaded.as_ref().map_or("none", ProgramIdentity::short),
                build.identity.short(),
            );
            load(p, build)
        }
        None => spawn(build),
    }
}

/// Has `p` load `build` (the objects of its spec; the child checks that the configuration
/// files it reads still have the identity the host computed).
fn load(mut p: ChipProcess, build: &CompiledBuild) -> Result<ChipProcess, RunnerError> {
    let load = json!({
        "op": "load",
        "dir": path_value(&build.dir),
        // The platform the build was loaded for: the child computes the same identity.
        "platform": build.platform.name(),
        "spec": protocol::encode_spec(&build.spec),
        "identity": build.identity.as_str(),
    });
    match request(&mut p, &load, None, &mut |_| {}) {
        Ok(reply) if reply.get("op").and_then(Value::as_str) == Some("loaded") => {
            p.loaded = Some(build.identity.clone());
            Ok(p)
        }
        Ok(reply) => {
            p.kill();
            Err(decode_error(&reply))
        }
        Err(e) => Err(e),
    }
}

/// Starts a chip process that has loaded nothing yet (its board initialised).
pub(crate) fn spawn_process() -> Result<ChipProcess, RunnerError> {
    let command = super::worker_command()
        .ok_or_else(|| chip_error("no chip-worker command is registered".to_string()))?;
    let (host_end, child_end) = UnixStream::pair()
        .map_err(|e| chip_error(format!("cannot create the chip-process channel: {e}")))?;
    let shared = SharedFile::create("pto-chip", board::board_bytes()).map_err(|e| {
        chip_error(format!(
            "cannot create shared memory for the chip process: {e}"
        ))
    })?;
    let board = Mapping::new(shared.fd(), 0, board::board_bytes())
        .map_err(|e| chip_error(format!("cannot map the status board: {e}")))?;
    // SAFETY: a fresh mapping of board_bytes() bytes.
    unsafe { board::init(board.base().cast::<Board>()) };
    let (sock_fd, shm_fd) = (child_end.as_raw_fd(), shared.fd());
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..])
        .stdin(Stdio::null())
        .env("PTO_CHIP_WORKER", "1")
        .process_group(0);
    // SAFETY: only async-signal-safe calls between fork and exec (dup2, fcntl).
    unsafe {
        cmd.pre_exec(move || {
            for (from, to) in [
                (sock_fd, super::child::CONTROL_FD),
                (shm_fd, super::child::SHARED_FD),
            ] {
                if from == to {
                    let flags = libc::fcntl(to, libc::F_GETFD);
                    libc::fcntl(to, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
                } else if libc::dup2(from, to) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| {
        chip_error(format!(
            "cannot start the chip process `{}`: {e}{}",
            command.join(" "),
            spawn_limit_hint(&e)
        ))
    })?;
    drop(child_end);
    Ok(ChipProcess {
        child,
        sock: host_end,
        shared,
        board,
        area: None,
        loaded: None,
    })
}

/// Which limit a failed spawn ran into, when the error says (the fix is the user's).
fn spawn_limit_hint(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::EAGAIN) => "; the per-user process limit is reached (RLIMIT_NPROC, `ulimit -u`): end other processes or raise the limit",
        Some(libc::EMFILE) | Some(libc::ENFILE) => "; the open-file limit is reached (RLIMIT_NOFILE, `ulimit -n`): raise it or run fewer programs at once",
        Some(libc::ENOMEM) => "; the system is out of memory for a new process",
        Some(libc::ENOENT) => "; the worker program does not exist (reinstall pto / pypto, or fix PTO_CHIP_WORKER_COMMAND)",
        _ => "",
    }
}

/// How long the child may go without a heartbeat before it counts as hung.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(30);

/// Sends `msg` and waits for the final reply, forwarding progress lines to `say`, polling
/// the heartbeat and `interrupt`. A death or a hang consumes the process (`Err`).
fn request(
    p: &mut ChipProcess,
    msg: &Value,
    interrupt: Option<&pto_runtime::Interrupt>,
    say: &mut dyn FnMut(&str),
) -> Result<Value, RunnerError> {
    request_fds(p, msg, &[], interrupt, say)
}

/// [`request`] with descriptors attached to the request frame ([`super::fdpass`]).
pub(crate) fn request_fds(
    p: &mut ChipProcess,
    msg: &Value,
    fds: &[std::os::fd::RawFd],
    interrupt: Option<&pto_runtime::Interrupt>,
    say: &mut dyn FnMut(&str),
) -> Result<Value, RunnerError> {
    // SAFETY: the child is idle between requests.
    unsafe { board::reset(p.board()) };
    if super::fdpass::send(&p.sock, msg, fds).is_err() {
        return Err(died(p, "while receiving a request"));
    }
    // SAFETY: mapped board.
    let mut last_beat = (unsafe { board::heartbeat(p.board()) }, Instant::now());
    loop {
        // Polled on every pass, before the wait, as the in-process run loop does: a request
        // that answers within one poll interval still sees a pending Ctrl-C (the caller
        // kills the process, which is still running it).
        if interrupt.is_some_and(|check| (check.0)()) {
            return Err(RunnerError::Runtime(RuntimeError::Interrupted));
        }
        let mut pfd = libc::pollfd {
            fd: p.sock.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a bounded wait.
        let ready = unsafe { libc::poll(&mut pfd, 1, 200) };
        if ready > 0 {
            if pfd.revents & libc::POLLIN == 0 {
                return Err(died(p, "during the run"));
            }
            match protocol::recv(&mut p.sock) {
                Ok(Some(v)) => {
                    if v.get("op").and_then(Value::as_str) == Some("say") {
                        if let Some(line) = v.get("line").and_then(Value::as_str) {
                            say(line);
                        }
                        continue;
                    }
                    return Ok(v);
                }
                Ok(None) | Err(_) => return Err(died(p, "during the run")),
            }
        }
        if let Ok(Some(_)) = p.child.try_wait() {
            return Err(died(p, "during the run"));
        }
        // SAFETY: mapped board.
        let beat = unsafe { board::heartbeat(p.board()) };
        if beat != last_beat.0 {
            last_beat = (beat, Instant::now());
        } else if last_beat.1.elapsed() > HEARTBEAT_TIMEOUT {
            return Err(chip_error(format!(
                "the chip process stopped responding (no heartbeat for {} s); it was killed",
                HEARTBEAT_TIMEOUT.as_secs()
            )));
        }
    }
}

/// The error for a chip process that died; `p` must not be reused.
fn died(p: &mut ChipProcess, when: &str) -> RunnerError {
    let status = wait_briefly(&mut p.child);
    // SAFETY: the child is dead (or being killed); nobody writes the board any more.
    let snap = unsafe { board::snapshot(p.board()) };
    chip_error(describe_death(status, &snap, when, &DeathContext::none()))
}

pub(crate) fn wait_briefly(child: &mut Child) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => return None,
        }
    }
}

/// What the host knows to name things in a death report.
pub struct DeathContext<'a> {
    kernel_name: Option<&'a dyn Fn(i32) -> Option<String>>,
    core_label: Option<&'a dyn Fn(u32) -> String>,
}

impl<'a> DeathContext<'a> {
    /// Names kernels by func_id and cores by index.
    pub fn new(
        kernel_name: &'a dyn Fn(i32) -> Option<String>,
        core_label: &'a dyn Fn(u32) -> String,
    ) -> DeathContext<'a> {
        DeathContext {
            kernel_name: Some(kernel_name),
            core_label: Some(core_label),
        }
    }

    fn none() -> DeathContext<'static> {
        DeathContext {
            kernel_name: None,
            core_label: None,
        }
    }
}

fn arg_type_name(t: u8) -> &'static str {
    match t {
        0 => "INPUT",
        1 => "OUTPUT",
        2 => "INOUT",
        3 => "OUTPUT_EXISTING",
        4 => "NO_DEP",
        _ => "?",
    }
}

fn describe_slot(rec: &board::SlotRecord, ctx: &DeathContext<'_>) -> String {
    let name = ctx
        .kernel_name
        .and_then(|f| f(rec.func_id))
        .unwrap_or_else(|| "?".to_string());
    let core = ctx
        .core_label
        .map(|f| f(rec.core))
        .unwrap_or_else(|| format!("core {}", rec.core));
    let mut args: Vec<String> = rec
        .tensors
        .iter()
        .take((rec.n_tensors as usize).min(board::SLOT_TENSORS))
        .enumerate()
        .map(|(i, a)| {
            let shape: Vec<String> = a.shapes[..a.ndims as usize]
                .iter()
                .map(u32::to_string)
                .collect();
            format!(
                "[{i}] {} {} [{}] at 0x{:x} ({} bytes)",
                arg_type_name(a.arg_type),
                pto_runtime::dtype::name(a.dtype),
                shape.join(", "),
                a.addr,
                a.bytes
            )
        })
        .collect();
    if rec.n_tensors as usize > board::SLOT_TENSORS {
        args.push(format!(
            "... {} more tensors",
            rec.n_tensors as usize - board::SLOT_TENSORS
        ));
    }
    for (j, s) in rec
        .scalars
        .iter()
        .take((rec.n_scalars as usize).min(board::SLOT_SCALARS))
        .enumerate()
    {
        args.push(format!("[{}] scalar 0x{s:x}", rec.n_tensors as usize + j));
    }
    format!(
        "task {} (kernel {} '{name}', func_id {}) on {core}; arguments: {}",
        pto_runtime::TaskId(rec.task),
        rec.func_id,
        rec.func_id,
        if args.is_empty() {
            "none".to_string()
        } else {
            args.join(", ")
        }
    )
}

/// The text of a death report.
pub fn describe_death(
    status: Option<std::process::ExitStatus>,
    snap: &Snapshot,
    when: &str,
    ctx: &DeathContext<'_>,
) -> String {
    let how = match status {
        Some(s) if s.signal().is_some() => {
            let sig = s.signal().unwrap_or(0);
            // The record is this signal's only if it names it (an exit() records signal 0).
            let fault = snap.fault.filter(|f| f.0 == sig);
            let (name, meaning) = signals::describe(sig, fault.map_or(0, |f| f.1));
            match fault {
                Some((_, code, addr, _)) if signals::has_fault_address(sig, code) => {
                    format!("was killed by {name} at address 0x{addr:x} ({meaning})")
                }
                _ => format!("was killed by {name} ({meaning})"),
            }
        }
        Some(s) => format!(
            "exited with status {} (a kernel or the orchestration called exit() or _exit())",
            s.code().unwrap_or(-1)
        ),
        None => "stopped responding".to_string(),
    };
    let mut text = format!("the chip process {how} {when}");
    let faulting = snap.fault.map(|f| f.3 as usize);
    let busy: Vec<&(usize, board::SlotRecord)> = snap.busy.iter().collect();
    // The faulting thread's own subtask; only when no thread with a slot is known to have
    // faulted does a lone running subtask take the blame (the orchestration's thread, slot
    // 0, runs no subtask: blaming the kernel beside it would name the wrong code).
    let known_thread = faulting.filter(|&slot| slot != u32::MAX as usize);
    let culprit = match known_thread {
        Some(slot) => busy.iter().find(|(s, _)| *s == slot),
        None => (busy.len() == 1).then(|| &busy[0]),
    };
    match (culprit, faulting) {
        (Some((_, rec)), _) => {
            text.push_str(&format!(": in {}", describe_slot(rec, ctx)));
        }
        (None, Some(0)) => {
            text.push_str(&format!(
                ": in the orchestration, after its last submit or scope at {}",
                snap.orch_site
                    .as_deref()
                    .unwrap_or("(none yet: in the orchestration entry)")
            ));
        }
        _ if !busy.is_empty() => {
            let list: Vec<String> = busy.iter().map(|(_, r)| describe_slot(r, ctx)).collect();
            text.push_str(&format!("; running at the time: {}", list.join("; ")));
        }
        _ if !snap.orch_finished && snap.orch_site.is_some() => {
            text.push_str(&format!(
                ": no kernel was running; the orchestration had reached {}",
                snap.orch_site.as_deref().unwrap_or("?")
            ));
        }
        _ => {}
    }
    text.push_str(". The host is unaffected; the next run starts a new chip process");
    text
}

/// Lays `params` out in the tensor area and copies the inputs in.
fn stage(
    p: &mut ChipProcess,
    params: &[BoundParam],
) -> Result<(usize, usize, Vec<Value>), RunnerError> {
    let mut layout = Vec::with_capacity(params.len());
    let mut total = 0usize;
    for prm in params {
        match prm {
            BoundParam::Scalar { name, bits } => layout.push(json!({"name": name, "bits": bits})),
            BoundParam::Tensor {
                name,
                direction,
                array,
            } => {
                let offset = total;
                total = align64(total + array.data.len());
                layout.push(json!({
                    "name": name,
                    "direction": direction_name(*direction),
                    "dtype": array.dtype.pypto_name(),
                    "shape": array.shape,
                    "offset": offset,
                    "bytes": array.data.len(),
                }));
            }
        }
    }
    let area_offset = board::board_bytes();
    let area_len = page_align(total.max(1));
    p.shared.grow(area_offset + area_len).map_err(|e| {
        chip_error(format!(
            "cannot grow the shared tensor area to {area_len} bytes: {e}"
        ))
    })?;
    if !matches!(&p.area, Some((o, l, _)) if *o == area_offset && *l == area_len) {
        p.area = None;
        let m = Mapping::new(p.shared.fd(), area_offset, area_len)
            .map_err(|e| chip_error(format!("cannot map the shared tensor area: {e}")))?;
        p.area = Some((area_offset, area_len, m));
    }
    let Some((_, _, area)) = &p.area else {
        return Err(chip_error(
            "the shared tensor area is not mapped".to_string(),
        ));
    };
    for (prm, l) in params.iter().zip(&layout) {
        if let BoundParam::Tensor {
            array, direction, ..
        } = prm
        {
            let offset = l["offset"].as_u64().unwrap_or(0) as usize;
            // SAFETY: the child is idle; the slice lies in the area (laid out above).
            if let Some(dst) = unsafe { area.slice_mut(offset, array.data.len()) } {
                if *direction == pto_build_output::ParamDirection::Out {
                    dst.fill(0);
                } else {
                    dst.copy_from_slice(&array.data);
                }
            }
        }
    }
    Ok((area_offset, area_len, layout))
}

fn unstage(p: &ChipProcess, params: &mut [BoundParam], layout: &[Value]) {
    let Some((_, _, area)) = &p.area else { return };
    for (prm, l) in params.iter_mut().zip(layout) {
        if let BoundParam::Tensor {
            array, direction, ..
        } = prm
        {
            if *direction == pto_build_output::ParamDirection::In {
                continue;
            }
            let offset = l["offset"].as_u64().unwrap_or(0) as usize;
            // SAFETY: the child finished the run and is idle.
            if let Some(src) = unsafe { area.slice_mut(offset, array.data.len()) } {
                array.data.copy_from_slice(src);
            }
        }
    }
}

fn outcome_from(reply: &Value, platform: Platform) -> ExecuteOutcome {
    let u = |k: &str| reply.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut timing_slots = [None; pto_runtime::task::NUM_TIMING_SLOTS];
    if let Some(slots) = reply.get("timing_slots").and_then(Value::as_array) {
        for (dst, v) in timing_slots.iter_mut().zip(slots) {
            if let Some(pair) = v.as_array() {
                if let (Some(a), Some(b)) = (
                    pair.first().and_then(Value::as_u64),
                    pair.get(1).and_then(Value::as_u64),
                ) {
                    *dst = Some((a, b));
                }
            }
        }
    }
    let strings = |k: &str| -> Vec<String> {
        reply
            .get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    ExecuteOutcome {
        report: RunReport {
            n_tasks: u("n_tasks"),
            wall: Duration::from_nanos(u("wall_ns")),
            device_time: Duration::from_nanos(u("device_ns")),
            n_workers: u("n_workers") as usize,
            platform,
            deps: None,
            dfx: DfxData::default(),
            timing_slots,
        },
        dfx: DfxSummary {
            files: strings("files").into_iter().map(PathBuf::from).collect(),
            hints: strings("hints"),
            warnings: strings("warnings"),
        },
    }
}

/// Whether an error leaves the chip process usable (argument and data errors do; a fatal
/// runtime error may leave threads stuck in kernels, so the process is replaced).
fn process_survives(e: &RunnerError) -> bool {
    !matches!(e, RunnerError::Runtime(_) | RunnerError::ChipProcess { .. })
        && e.kind() != ErrorKind::Runtime
}

fn run_request(
    build: &CompiledBuild,
    params: &mut [BoundParam],
    config: &RunConfig,
    pass_dir: Option<&Path>,
    say: &mut dyn FnMut(&str),
) -> Result<ExecuteOutcome, RunnerError> {
    let platform = config.platform();
    let mut p = acquire(build, platform)?;
    let (area_offset, area_len, layout) = match stage(&mut p, params) {
        Ok(v) => v,
        Err(e) => {
            p.kill();
            return Err(e);
        }
    };
    let mut msg = json!({
        "op": "run",
        "config": encode_config(config),
        "params": layout,
        "area_offset": area_offset,
        "area_len": area_len,
    });
    if let Some(d) = pass_dir {
        msg["pass_dir"] = path_value(d);
    }
    let kernel_name = |f: i32| {
        build
            .kernel_config
            .kernels
            .iter()
            .find(|k| k.func_id == f)
            .map(|k| k.name.clone())
    };
    let topology = platform.topology(
        config
            .n_workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from)),
    );
    let core_label = |c: u32| {
        let kind = match topology.core_type(c as usize) {
            pto_runtime::CoreType::Aic => "AIC",
            pto_runtime::CoreType::Aiv => "AIV",
        };
        format!("{kind} core {}", topology.core_label(c as usize))
    };
    let ctx = DeathContext {
        kernel_name: Some(&kernel_name),
        core_label: Some(&core_label),
    };
    let result = request(&mut p, &msg, config.interrupt.as_ref(), say);
    match result {
        Ok(reply) if reply.get("op").and_then(Value::as_str) == Some("done") => {
            unstage(&p, params, &layout);
            if let Some(lines) = reply.get("say").and_then(Value::as_array) {
                for l in lines.iter().filter_map(Value::as_str) {
                    say(l);
                }
            }
            let outcome = outcome_from(&reply, platform);
            put_back(&build.dir, platform, p);
            Ok(outcome)
        }
        Ok(reply) => {
            let e = decode_error(&reply);
            if process_survives(&e) {
                put_back(&build.dir, platform, p);
            } else {
                p.kill();
            }
            Err(e)
        }
        Err(RunnerError::ChipProcess { .. }) => {
            // Re-describe with the build's names (the generic text had none).
            let status = wait_briefly(&mut p.child);
            // SAFETY: the child is dead; nobody writes the board any more.
            let snap = unsafe { board::snapshot(p.board()) };
            let text = if status.is_some() {
                describe_death(status, &snap, "during the run", &ctx)
            } else {
                let mut t = describe_death(None, &snap, "during the run", &ctx);
                t.push_str(" (it was killed)");
                t
            };
            p.kill();
            Err(chip_error(text))
        }
        Err(e) => {
            p.kill();
            Err(e)
        }
    }
}

/// [`CompiledBuild::execute_with`] in a chip process.
pub fn execute(
    build: &CompiledBuild,
    params: &mut [BoundParam],
    config: &RunConfig,
    say: &mut dyn FnMut(&str),
) -> Result<ExecuteOutcome, RunnerError> {
    run_request(build, params, config, None, say)
}

/// [`CompiledBuild::execute_pass`] (diagnostics into `out`) in a chip process.
pub fn execute_pass(
    build: &CompiledBuild,
    params: &mut [BoundParam],
    config: &RunConfig,
    out: &Path,
) -> Result<ExecuteOutcome, RunnerError> {
    run_request(build, params, config, Some(out), &mut |_| {})
}

#[cfg(test)]
mod tests {
    use super::spawn_limit_hint;

    #[test]
    fn a_failed_spawn_names_the_limit() {
        let e = std::io::Error::from_raw_os_error(libc::EAGAIN);
        assert!(spawn_limit_hint(&e).contains("RLIMIT_NPROC"));
        let e = std::io::Error::from_raw_os_error(libc::EMFILE);
        assert!(spawn_limit_hint(&e).contains("RLIMIT_NOFILE"));
        assert_eq!(spawn_limit_hint(&std::io::Error::other("x")), "");
    }
}
