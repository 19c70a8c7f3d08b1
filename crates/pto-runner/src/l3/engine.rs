//! The host engine of an L3 run: one chip process per device id, the host memory regions
//! and comm domains they share, the TensorMap that orders dispatches, and one driver thread
//! per chip that runs its READY dispatches one at a time in FIFO order while the chips run
//! concurrently.
//!
//! A dispatch is submitted with its tensors as `(region, offset, shape, dtype, tag)`
//! descriptors: the bytes stay where they are (shared memory every chip maps), only the
//! descriptors travel. The TensorMap lookup gives its producers; when the last one
//! completes it becomes READY and joins its chip's FIFO. A failed dispatch fails its
//! consumers; the first failure is what [`Engine::drain`] reports, naming the rank, the
//! dispatch, the program and (from the chip's status board) the kernel.
//!
//! The chip side of the wire is [`crate::chip_process`]'s `l3_*` requests, reached through
//! the [`ChipTransport`] trait: a transport that reaches chips on other hosts (MPI) would
//! implement the same four calls without touching the engine or the chip runtime.

use std::collections::{HashMap, HashSet, VecDeque};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use pto_build_output::KernelConfig;
use pto_runtime::Platform;
use serde_json::{json, Value};

use super::comm::{domain_bytes, DomainFile};
use super::tensor_map::{Access, Footprint, Tag, TensorMap};
use crate::build::{load_sub_build, CompiledBuild};
use crate::chip_process::parent::{self, ChipProcess};
use crate::chip_process::{board, protocol};
use crate::config::RunConfig;
use crate::error::{ErrorKind, RunnerError};

/// How the engine reaches one chip (the chip process on this host, or a remote one).
pub trait ChipTransport: Send {
    /// Sends `msg` with `fds` and waits for the reply; a dead or hung chip is an error
    /// whose text says what happened (named with `names` when a kernel was running).
    fn call(
        &mut self,
        msg: &Value,
        fds: &[RawFd],
        names: Option<&KernelConfig>,
    ) -> Result<Value, RunnerError>;
    /// Stops the chip now (a failed run); no process or memory of it survives.
    fn stop(self: Box<Self>);
    /// The chip's process id, if it is a local process.
    fn pid(&self) -> Option<u32>;
}

/// A chip in a child process of this host ([`crate::chip_process`]).
pub struct LocalChip {
    process: Option<ChipProcess>,
    platform: Platform,
}

impl LocalChip {
    /// Starts the chip process.
    pub fn spawn(platform: Platform) -> Result<LocalChip, RunnerError> {
        Ok(LocalChip {
            process: Some(parent::spawn_process()?),
            platform,
        })
    }
}

impl ChipTransport for LocalChip {
    fn call(
        &mut self,
        msg: &Value,
        fds: &[RawFd],
        names: Option<&KernelConfig>,
    ) -> Result<Value, RunnerError> {
        let p = self
            .process
            .as_mut()
            .ok_or_else(|| RunnerError::ChipProcess {
                message: "the chip process is gone (an earlier request killed it)".to_string(),
            })?;
        match parent::request_fds(p, msg, fds, None, &mut |_| {}) {
            Ok(v) => Ok(v),
            Err(RunnerError::ChipProcess { message }) => {
                let Some(mut p) = self.process.take() else {
                    return Err(RunnerError::ChipProcess { message });
                };
                let status = parent::wait_briefly(&mut p.child);
                // SAFETY: the child is dead or about to be killed; nobody writes the board.
                let snap = unsafe { board::snapshot(p.board()) };
                let kernel_name = |f: i32| {
                    names.and_then(|kc| {
                        kc.kernels
                            .iter()
                            .find(|k| k.func_id == f)
                            .map(|k| k.name.clone())
                    })
                };
                let topology = self
                    .platform
                    .topology(std::thread::available_parallelism().map_or(2, usize::from));
                let core_label = |c: u32| {
                    let kind = match topology.core_type(c as usize) {
                        pto_runtime::CoreType::Aic => "AIC",
                        pto_runtime::CoreType::Aiv => "AIV",
                    };
                    format!("{kind} core {}", topology.core_label(c as usize))
                };
                let ctx = parent::DeathContext::new(&kernel_name, &core_label);
                let mut text = parent::describe_death(status, &snap, "during the dispatch", &ctx);
                if status.is_none() {
                    text.push_str(" (it was killed)");
                }
                let _ = message;
                p.kill();
                Err(RunnerError::ChipProcess { message: text })
            }
            Err(e) => Err(e),
        }
    }

    fn stop(mut self: Box<Self>) {
        if let Some(p) = self.process.take() {
            p.kill();
        }
    }

    fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ChipProcess::pid)
    }
}

/// A chip program of the build (`next_levels/<name>/`).
pub struct ChipProgram {
    /// The directory name (the `callables` key).
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Its kernels, for naming them in errors and name maps.
    pub kernel_config: KernelConfig,
    spec: Value,
}

impl ChipProgram {
    /// Compiles (through the sub-build's binary cache) and loads the program once in
    /// this process, so that the chip processes only load the compiled objects.
    pub fn compile(
        name: &str,
        dir: &std::path::Path,
        platform: Platform,
    ) -> Result<ChipProgram, RunnerError> {
        let build: CompiledBuild = load_sub_build(dir, platform)?;
        Ok(ChipProgram {
            name: name.to_string(),
            dir: dir.to_path_buf(),
            spec: protocol::encode_spec(&build.spec),
            kernel_config: build.kernel_config,
        })
    }
}

/// One tensor argument of a dispatch.
#[derive(Clone, Debug)]
pub struct TensorArg {
    /// The region holding it.
    pub region: u64,
    /// Byte offset of element 0 in the region.
    pub offset: u64,
    /// Shape.
    pub shape: Vec<u64>,
    /// Element type code.
    pub dtype: u8,
    /// How the dispatch uses it.
    pub tag: Tag,
}

/// A shared-memory region chips can map.
struct Region {
    fd: OwnedFd,
    len: u64,
    access: Access,
}

enum Job {
    Dispatch(usize),
    Join {
        fd: RawFd,
        msg: Value,
        reply: mpsc::Sender<Result<(u64, u64), RunnerError>>,
    },
    Release(Value),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Status {
    Pending,
    Ready,
    Done,
    Failed,
}

struct Task {
    /// The chip that runs it; `None` for a host (SubWorker) task.
    worker: Option<usize>,
    program: usize,
    remaining: usize,
    consumers: Vec<usize>,
    status: Status,
    frame: Option<Value>,
    regions: Vec<u64>,
    label: String,
}

/// The first failure of a run.
#[derive(Clone, Debug)]
pub struct DispatchFailure {
    /// Worker index (the rank); `None` for a host (SubWorker) task.
    pub rank: Option<usize>,
    /// The text.
    pub message: String,
}

#[derive(Default)]
struct State {
    tasks: Vec<Task>,
    map: TensorMap,
    unfinished: usize,
    failure: Option<DispatchFailure>,
    per_chip: Vec<usize>,
    host_calls: usize,
}

struct ChipQueue {
    jobs: Mutex<VecDeque<Job>>,
    ready: Condvar,
}

struct Shared {
    state: Mutex<State>,
    idle: Condvar,
    chips: Vec<ChipQueue>,
    /// READY host (SubWorker) tasks, taken by [`Engine::next_host_task`].
    host: ChipQueue,
    regions: Mutex<HashMap<u64, Region>>,
    programs: Vec<ChipProgram>,
    stop: AtomicBool,
    device_ids: Vec<i64>,
}

/// The chips' transports while no driver thread holds them.
type Parked = Arc<Mutex<Vec<Option<Box<dyn ChipTransport>>>>>;

/// The engine of one L3 run.
pub struct Engine {
    shared: Arc<Shared>,
    drivers: Vec<JoinHandle<()>>,
    transports: Parked,
    next_region: u64,
    domains: Vec<(u64, DomainFile, Vec<usize>)>,
    platform: Platform,
    pids: Vec<u32>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn type_error(message: String) -> RunnerError {
    RunnerError::Config {
        message,
        kind: ErrorKind::Type,
    }
}

impl Engine {
    /// Starts one chip process per entry of `device_ids` and loads every program on each.
    pub fn start(
        platform: Platform,
        device_ids: &[i64],
        programs: Vec<ChipProgram>,
    ) -> Result<Engine, RunnerError> {
        let mut transports: Vec<Option<Box<dyn ChipTransport>>> = Vec::new();
        let load = json!({
            "op": "l3_load",
            "platform": platform.name(),
            "programs": programs.iter().map(|p| json!({
                "name": p.name,
                "dir": protocol::path_value(&p.dir),
                "spec": p.spec,
            })).collect::<Vec<_>>(),
        });
        let fail = |transports: Vec<Option<Box<dyn ChipTransport>>>| {
            for t in transports.into_iter().flatten() {
                t.stop();
            }
        };
        for (rank, id) in device_ids.iter().enumerate() {
            let mut chip: Box<dyn ChipTransport> = match LocalChip::spawn(platform) {
                Ok(c) => Box::new(c),
                Err(e) => {
                    fail(transports);
                    return Err(e);
                }
            };
            match chip.call(&load, &[], None) {
                Ok(r) if r.get("op").and_then(Value::as_str) == Some("loaded") => {}
                Ok(r) => {
                    chip.stop();
                    fail(transports);
                    let e = protocol::decode_error(&r);
                    return Err(RunnerError::ChipProcess {
                        message: format!(
                            "rank {rank} (device {id}) could not load the chip programs: {e}"
                        ),
                    });
                }
                Err(e) => {
                    fail(transports);
                    return Err(RunnerError::ChipProcess {
                        message: format!(
                            "rank {rank} (device {id}) could not load the chip programs: {e}"
                        ),
                    });
                }
            }
            transports.push(Some(chip));
        }
        let n = device_ids.len();
        let pids: Vec<u32> = transports
            .iter()
            .flatten()
            .filter_map(|t| t.pid())
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                per_chip: vec![0; n],
                ..State::default()
            }),
            idle: Condvar::new(),
            chips: (0..n)
                .map(|_| ChipQueue {
                    jobs: Mutex::new(VecDeque::new()),
                    ready: Condvar::new(),
                })
                .collect(),
            host: ChipQueue {
                jobs: Mutex::new(VecDeque::new()),
                ready: Condvar::new(),
            },
            regions: Mutex::new(HashMap::new()),
            programs,
            stop: AtomicBool::new(false),
            device_ids: device_ids.to_vec(),
        });
        let transports = Arc::new(Mutex::new(transports));
        let mut drivers = Vec::with_capacity(n);
        for w in 0..n {
            let shared = Arc::clone(&shared);
            let Some(t) = lock(&transports)[w].take() else {
                continue;
            };
            let transports = Arc::clone(&transports);
            let h = std::thread::Builder::new()
                .name(format!("pto-l3-chip-{w}"))
                .spawn(move || drive(&shared, w, t, &transports))
                .map_err(|source| RunnerError::Io {
                    action: "spawning a chip driver thread for",
                    path: PathBuf::from(format!("rank{w}")),
                    source,
                })?;
            drivers.push(h);
        }
        Ok(Engine {
            shared,
            drivers,
            transports,
            next_region: 1,
            domains: Vec::new(),
            platform,
            pids,
        })
    }

    /// The platform every chip runs.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// Chips (ranks).
    pub fn n_chips(&self) -> usize {
        self.shared.chips.len()
    }

    /// The program index of `name`.
    pub fn program_index(&self, name: &str) -> Option<usize> {
        self.shared.programs.iter().position(|p| p.name == name)
    }

    /// Process ids of the chip processes still running (for tests and diagnostics).
    pub fn chip_pids(&self) -> Vec<u32> {
        self.pids.clone()
    }

    /// Registers shared memory the chips may map: `fd` (duplicated; the caller keeps
    /// its own) of `len` bytes, granting `access`. Returns the region id.
    pub fn add_region(&mut self, fd: RawFd, len: u64, access: Access) -> Result<u64, RunnerError> {
        // SAFETY: plain syscall; the result is checked.
        let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if dup < 0 {
            return Err(RunnerError::config(format!(
                "cannot share host memory (descriptor {fd}): {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(dup) };
        let id = self.next_region;
        self.next_region += 1;
        lock(&self.shared.regions).insert(id, Region { fd, len, access });
        Ok(id)
    }

    /// A read-only region holding a copy of `bytes` (a host tensor that is not in shared
    /// memory: chips see it as it was when it was passed).
    pub fn add_snapshot(&mut self, bytes: &[u8]) -> Result<u64, RunnerError> {
        let mut f =
            crate::chip_process::shm::SharedFile::create("pto-l3-snapshot", bytes.len().max(1))
                .map_err(|e| {
                    RunnerError::config(format!(
                        "cannot create shared memory for a host tensor: {e}"
                    ))
                })?;
        f.grow(bytes.len().max(1)).map_err(|e| {
            RunnerError::config(format!("cannot size shared memory for a host tensor: {e}"))
        })?;
        let m =
            crate::chip_process::shm::Mapping::new(f.fd(), 0, bytes.len().max(1)).map_err(|e| {
                RunnerError::config(format!("cannot map shared memory for a host tensor: {e}"))
            })?;
        // SAFETY: a fresh mapping of at least `bytes.len()` bytes nobody else uses yet.
        if let Some(dst) = unsafe { m.slice_mut(0, bytes.len()) } {
            dst.copy_from_slice(bytes);
        }
        self.add_region(f.fd(), bytes.len() as u64, Access::READ)
    }

    /// What `region` grants, if it exists.
    pub fn region_access(&self, region: u64) -> Option<(u64, Access)> {
        lock(&self.shared.regions)
            .get(&region)
            .map(|r| (r.len, r.access))
    }

    /// Creates a comm domain over `workers` (worker indices, domain rank = position) with
    /// windows of `window_size` bytes; every member chip joins it. Returns the domain's
    /// region id and, per member, `(device_ctx, local_window_base)`.
    pub fn allocate_domain(
        &mut self,
        workers: &[usize],
        window_size: usize,
    ) -> Result<(u64, Vec<(u64, u64)>), RunnerError> {
        let n = self.n_chips();
        if let Some(w) = workers.iter().find(|&&w| w >= n) {
            return Err(RunnerError::config(format!(
                "allocate_domain: worker_id {w} outside [0, {n})"
            )));
        }
        let file = DomainFile::create(workers.len(), window_size)
            .map_err(|e| RunnerError::config(e.to_string()))?;
        let total = domain_bytes(workers.len(), window_size).unwrap_or(0);
        let region = self.add_region(file.file.fd(), total as u64, Access::READ_WRITE)?;
        let mut replies = Vec::new();
        for (rank, &w) in workers.iter().enumerate() {
            let (tx, rx) = mpsc::channel();
            let msg = json!({
                "op": "l3_join",
                "domain": region,
                "rank": rank,
                "nranks": workers.len(),
                "window": window_size,
                "total": total,
            });
            self.push(
                w,
                Job::Join {
                    fd: file.file.fd(),
                    msg,
                    reply: tx,
                },
            );
            replies.push((w, rx));
        }
        let mut out = Vec::new();
        let mut first_err = None;
        for (w, rx) in replies {
            match rx.recv_timeout(Duration::from_secs(120)) {
                Ok(Ok(v)) => out.push(v),
                Ok(Err(e)) => {
                    first_err.get_or_insert(RunnerError::ChipProcess {
                        message: format!("rank {w} could not join the comm domain: {e}"),
                    });
                }
                Err(_) => {
                    first_err.get_or_insert(RunnerError::ChipProcess {
                        message: format!("rank {w} did not join the comm domain within 120 s"),
                    });
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        self.domains.push((region, file, workers.to_vec()));
        Ok((region, out))
    }

    fn push(&self, worker: usize, job: Job) {
        let q = &self.shared.chips[worker];
        lock(&q.jobs).push_back(job);
        q.ready.notify_one();
    }

    /// Checks every tensor argument (its region, the access its tag needs, its bounds, and
    /// that no two writes of one task overlap); returns their footprints and wire form.
    fn check_tensors(
        &self,
        tensors: &[TensorArg],
    ) -> Result<(Vec<Footprint>, Vec<Value>), RunnerError> {
        let mut fps = Vec::with_capacity(tensors.len());
        let mut json_tensors = Vec::with_capacity(tensors.len());
        let regions = lock(&self.shared.regions);
        for (i, t) in tensors.iter().enumerate() {
            let r = regions.get(&t.region).ok_or_else(|| {
                type_error(format!(
                    "submit: tensor argument {i} names no shared memory region of this run"
                ))
            })?;
            if !t.tag.allowed_by(r.access) {
                return Err(RunnerError::config(
                    "submit: an argument's TensorArgType requests access the backing does not grant".to_string(),
                ));
            }
            let elem = pto_runtime::dtype::elem_size_checked(t.dtype).ok_or_else(|| {
                type_error(format!(
                    "submit: tensor argument {i} has unknown dtype code {}",
                    t.dtype
                ))
            })? as u64;
            let numel = t
                .shape
                .iter()
                .try_fold(1u64, |a, &d| a.checked_mul(d))
                .ok_or_else(|| {
                    RunnerError::config(format!("submit: tensor argument {i} is too large"))
                })?;
            let bytes = numel.saturating_mul(elem);
            if t.offset.checked_add(bytes).is_none_or(|end| end > r.len) {
                return Err(RunnerError::config(format!(
                    "submit: tensor argument {i} ({bytes} bytes at offset {}) lies outside its buffer of {} bytes",
                    t.offset, r.len
                )));
            }
            fps.push(Footprint::contiguous(t.offset, t.dtype, &t.shape));
            json_tensors.push(json!({
                "region": t.region,
                "offset": t.offset,
                "bytes": bytes,
                "shape": t.shape,
                "dtype": t.dtype,
                "tag": match t.tag { Tag::Input => 0, Tag::Output => 1, Tag::InOut => 2, Tag::OutputExisting => 3, Tag::NoDep => 4 },
            }));
        }
        drop(regions);
        for i in 0..tensors.len() {
            for j in i + 1..tensors.len() {
                if tensors[i].tag.writes()
                    && tensors[j].tag.writes()
                    && tensors[i].region == tensors[j].region
                    && fps[i].overlaps(&fps[j])
                {
                    return Err(RunnerError::config(
                        "submit: two arguments of one task write overlapping bytes of the same buffer; give them disjoint ranges, or order them as separate tasks".to_string(),
                    ));
                }
            }
        }
        Ok((fps, json_tensors))
    }

    /// Records a checked task: its producers from the TensorMap and `explicit` (checked
    /// dispatch ids, `TaskArgs.add_dep_wait`), its outputs into the TensorMap, and (when
    /// nothing it depends on is pending) its place in a READY queue. `label` gets the task's
    /// per-target sequence number.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        worker: Option<usize>,
        program: usize,
        tensors: &[TensorArg],
        fps: &[Footprint],
        explicit: &[usize],
        frame: Option<Value>,
        label: &dyn Fn(usize) -> String,
    ) -> usize {
        let mut deps = explicit.to_vec();
        let mut st = lock(&self.shared.state);
        let id = st.tasks.len();
        for (t, fp) in tensors.iter().zip(fps) {
            let mut d = Vec::new();
            st.map.lookup(t.region, fp, t.tag, &mut d);
            deps.extend(d.into_iter().map(|x| x as usize));
        }
        deps.sort_unstable();
        deps.dedup();
        for (t, fp) in tensors.iter().zip(fps) {
            st.map.insert(t.region, fp, t.tag, id as u64);
        }
        let seq = match worker {
            Some(w) => {
                st.per_chip[w] += 1;
                st.per_chip[w] - 1
            }
            None => {
                st.host_calls += 1;
                st.host_calls - 1
            }
        };
        let mut remaining = 0;
        let mut poisoned = None;
        for &d in &deps {
            match st.tasks[d].status {
                Status::Done => {}
                Status::Failed => poisoned = Some(d),
                _ => {
                    remaining += 1;
                    st.tasks[d].consumers.push(id);
                }
            }
        }
        let mut regions: Vec<u64> = tensors.iter().map(|t| t.region).collect();
        regions.sort_unstable();
        regions.dedup();
        st.tasks.push(Task {
            worker,
            program,
            remaining,
            consumers: Vec::new(),
            status: Status::Pending,
            frame,
            regions,
            label: label(seq),
        });
        st.unfinished += 1;
        if let Some(d) = poisoned {
            let why = format!("skipped: it depends on {}, which failed", st.tasks[d].label);
            finish(&self.shared, &mut st, id, Err(why));
        } else if remaining == 0 {
            st.tasks[id].status = Status::Ready;
            drop(st);
            match worker {
                Some(w) => self.push(w, Job::Dispatch(id)),
                None => {
                    lock(&self.shared.host.jobs).push_back(Job::Dispatch(id));
                    self.shared.host.ready.notify_one();
                }
            }
        }
        id
    }

    /// The explicit dependencies of a dispatch, checked: each must be the id of an earlier
    /// NEXT_LEVEL dispatch of this engine.
    fn check_explicit(&self, deps: &[usize]) -> Result<(), RunnerError> {
        let st = lock(&self.shared.state);
        for &d in deps {
            if st.tasks.get(d).is_none_or(|t| t.worker.is_none()) {
                return Err(RunnerError::config(format!(
                    "TaskArgs.add_dep_wait: task handle {d} is not a NEXT_LEVEL dispatch submitted earlier in this run (a handle comes from _submit_chip / orch.submit_next_level of the same run)"
                )));
            }
        }
        Ok(())
    }

    /// Submits one dispatch of `program` to `worker` (see the module docs), after the
    /// dispatches `deps` (explicit WAIT dependencies, on top of the TensorMap's). Returns
    /// its id.
    #[allow(clippy::too_many_arguments)]
    pub fn submit(
        &mut self,
        program: &str,
        worker: usize,
        tensors: &[TensorArg],
        scalars: &[u64],
        deps: &[usize],
        config: &RunConfig,
        out: Option<PathBuf>,
    ) -> Result<usize, RunnerError> {
        let n = self.n_chips();
        if worker >= n {
            return Err(RunnerError::config(format!(
                "submit_next_level: worker {worker} is not a NEXT_LEVEL worker of this run (it has {n}: 0..{})",
                n.saturating_sub(1)
            )));
        }
        let pi = self.program_index(program).ok_or_else(|| {
            RunnerError::config(format!(
                "submit_next_level: no chip program '{program}' in next_levels/ (known: {})",
                self.shared
                    .programs
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        // Check every argument before anything is recorded.
        let (fps, json_tensors) = self.check_tensors(tensors)?;
        self.check_explicit(deps)?;
        if config.dfx.writes_files() && out.is_none() {
            let what = if config.dfx.any() {
                "a diagnostic is enabled"
            } else {
                "timing is 'predicted' (CallConfig.timing or PTO_TIMING): predicted_timing.json goes there"
            };
            return Err(RunnerError::config(format!(
                "CallConfig.output_prefix is required when {what}"
            )));
        }
        let frame = json!({
            "op": "l3_dispatch",
            "program": program,
            "tensors": json_tensors,
            "scalars": scalars,
            "config": protocol::encode_config(config),
            "out": out.as_ref().map(|p| protocol::path_value(p)),
        });
        let device = self.shared.device_ids[worker];
        let where_ = out
            .as_ref()
            .and_then(|o| {
                let d = o.file_name()?.to_string_lossy().into_owned();
                let r = o.parent()?.file_name()?.to_string_lossy().into_owned();
                Some(format!(", diagnostics in {r}/{d}"))
            })
            .unwrap_or_default();
        let label = move |seq: usize| {
            format!(
                "dispatch {seq} of rank {worker} (device {device}, program '{program}'{where_})"
            )
        };
        Ok(self.record(Some(worker), pi, tensors, &fps, deps, Some(frame), &label))
    }

    /// Submits a host task (a SubWorker call, `name` for messages) over `tensors`: it is
    /// ordered by the TensorMap like a chip dispatch, and once its producers completed it
    /// is handed out by [`Engine::next_host_task`]; whoever runs it reports back with
    /// [`Engine::finish_host_task`]. Returns its id.
    pub fn submit_host(&mut self, name: &str, tensors: &[TensorArg]) -> Result<usize, RunnerError> {
        let (fps, _) = self.check_tensors(tensors)?;
        let label = |seq: usize| format!("SubWorker call {seq} ('{name}')");
        Ok(self.record(None, usize::MAX, tensors, &fps, &[], None, &label))
    }

    /// The next READY host task, waiting up to `timeout`: `Ok(Some(id))`, `Ok(None)` when
    /// none became ready in time, or an error once the run is stopping.
    pub fn next_host_task(&self, timeout: Duration) -> Result<Option<usize>, RunnerError> {
        let q = &self.shared.host;
        let mut jobs = lock(&q.jobs);
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if let Some(Job::Dispatch(id)) = jobs.pop_front() {
                return Ok(Some(id));
            }
            if self.shared.stop.load(Ordering::Acquire) {
                return Err(RunnerError::config(
                    "the L3 run has ended: no more SubWorker calls".to_string(),
                ));
            }
            let now = std::time::Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            jobs = q
                .ready
                .wait_timeout(jobs, deadline - now)
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// Reports host task `id` done (`Err(text)`: it failed, which fails the run and skips
    /// its consumers).
    pub fn finish_host_task(
        &self,
        id: usize,
        result: Result<(), String>,
    ) -> Result<(), RunnerError> {
        let mut st = lock(&self.shared.state);
        match st.tasks.get(id) {
            Some(t) if t.worker.is_none() && t.status == Status::Ready => {}
            _ => {
                return Err(RunnerError::config(format!(
                    "finish_host_task: {id} is not a running SubWorker call of this run"
                )))
            }
        }
        let result = result.map_err(|e| format!("{} failed: {e}", st.tasks[id].label));
        finish(&self.shared, &mut st, id, result);
        Ok(())
    }

    /// Waits until every submitted dispatch finished, or the first one failed (the
    /// error; dispatches still running — a peer waiting for the failed chip — are stopped
    /// by [`Engine::close`]).
    pub fn drain(&self) -> Result<(), RunnerError> {
        while !self.drain_for(Duration::from_secs(3600))? {}
        Ok(())
    }

    /// [`Engine::drain`] for at most `timeout`: `Ok(true)` once every dispatch finished,
    /// `Ok(false)` while some still run. A front end that must stay interruptible (Python's
    /// Ctrl-C between calls) waits in slices with it.
    pub fn drain_for(&self, timeout: Duration) -> Result<bool, RunnerError> {
        let deadline = std::time::Instant::now() + timeout;
        let mut st = lock(&self.shared.state);
        while st.unfinished > 0 && st.failure.is_none() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            st = self
                .shared
                .idle
                .wait_timeout(st, left.min(Duration::from_millis(100)))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        match &st.failure {
            Some(f) => Err(RunnerError::ChipProcess {
                message: f.message.clone(),
            }),
            None => Ok(true),
        }
    }

    /// The first failure so far, if any.
    pub fn failure(&self) -> Option<DispatchFailure> {
        lock(&self.shared.state).failure.clone()
    }

    /// Dispatches submitted so far.
    pub fn n_dispatches(&self) -> usize {
        lock(&self.shared.state).tasks.len()
    }

    /// Ends the run: after a success the chips leave their domains and exit; after a
    /// failure (or with `kill`) they are killed at once (a chip blocked on a dead peer
    /// would otherwise wait for its timeout). Either way no chip process survives.
    pub fn close(mut self, kill: bool) {
        self.shutdown(kill || self.failure().is_some());
    }

    fn shutdown(&mut self, kill: bool) {
        if self.drivers.is_empty() {
            return;
        }
        if kill {
            for &pid in &self.pids {
                // SAFETY: signalling our own chip process's group.
                unsafe { libc::kill(-(pid as i32), libc::SIGKILL) };
            }
        } else {
            let domains: Vec<u64> = self.domains.iter().map(|d| d.0).collect();
            for w in 0..self.n_chips() {
                self.push(
                    w,
                    Job::Release(json!({"op": "l3_release", "domains": domains})),
                );
            }
        }
        self.shared.stop.store(true, Ordering::Release);
        for q in self.shared.chips.iter().chain([&self.shared.host]) {
            q.ready.notify_all();
        }
        for h in self.drivers.drain(..) {
            let _ = h.join();
        }
        for t in lock(&self.transports).drain(..).flatten() {
            t.stop();
        }
        self.domains.clear();
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shutdown(true);
    }
}

/// Marks `id` finished and releases (or fails) its consumers.
fn finish(shared: &Shared, st: &mut State, id: usize, result: Result<(), String>) {
    let mut work = vec![(id, result)];
    while let Some((t, r)) = work.pop() {
        st.unfinished = st.unfinished.saturating_sub(1);
        let consumers = std::mem::take(&mut st.tasks[t].consumers);
        st.tasks[t].frame = None;
        match r {
            Ok(()) => {
                st.tasks[t].status = Status::Done;
                for c in consumers {
                    if st.tasks[c].status != Status::Pending {
                        continue;
                    }
                    st.tasks[c].remaining -= 1;
                    if st.tasks[c].remaining == 0 {
                        st.tasks[c].status = Status::Ready;
                        let q = match st.tasks[c].worker {
                            Some(w) => &shared.chips[w],
                            None => &shared.host,
                        };
                        lock(&q.jobs).push_back(Job::Dispatch(c));
                        q.ready.notify_one();
                    }
                }
            }
            Err(message) => {
                st.tasks[t].status = Status::Failed;
                if st.failure.is_none() {
                    st.failure = Some(DispatchFailure {
                        rank: st.tasks[t].worker,
                        message: message.clone(),
                    });
                }
                for c in consumers {
                    if st.tasks[c].status == Status::Pending {
                        let why =
                            format!("skipped: it depends on {}, which failed", st.tasks[t].label);
                        work.push((c, Err(why)));
                    }
                }
            }
        }
    }
    shared.idle.notify_all();
}

/// A chip's driver thread: runs its FIFO until told to stop.
fn drive(
    shared: &Shared,
    w: usize,
    mut chip: Box<dyn ChipTransport>,
    parked: &Mutex<Vec<Option<Box<dyn ChipTransport>>>>,
) {
    let mut mapped: HashSet<u64> = HashSet::new();
    let mut dead = false;
    loop {
        let job = {
            let q = &shared.chips[w];
            let mut jobs = lock(&q.jobs);
            loop {
                if let Some(j) = jobs.pop_front() {
                    break Some(j);
                }
                if shared.stop.load(Ordering::Acquire) {
                    break None;
                }
                jobs = q
                    .ready
                    .wait_timeout(jobs, Duration::from_millis(100))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
        };
        let Some(job) = job else { break };
        match job {
            Job::Join { fd, msg, reply } => {
                let r = if dead {
                    Err(RunnerError::ChipProcess {
                        message: "the chip process is gone".to_string(),
                    })
                } else {
                    chip.call(&msg, &[fd], None).and_then(|v| {
                        if v.get("op").and_then(Value::as_str) == Some("joined") {
                            Ok((
                                v.get("device_ctx").and_then(Value::as_u64).unwrap_or(0),
                                v.get("local_window_base")
                                    .and_then(Value::as_u64)
                                    .unwrap_or(0),
                            ))
                        } else {
                            Err(protocol::decode_error(&v))
                        }
                    })
                };
                if matches!(r, Err(RunnerError::ChipProcess { .. })) {
                    dead = true;
                }
                let _ = reply.send(r);
            }
            Job::Release(msg) => {
                if !dead {
                    let _ = chip.call(&msg, &[], None);
                }
            }
            Job::Dispatch(id) => {
                let (mut frame, regions, program, label) = {
                    let mut st = lock(&shared.state);
                    let t = &mut st.tasks[id];
                    (
                        t.frame.take().unwrap_or(Value::Null),
                        t.regions.clone(),
                        t.program,
                        t.label.clone(),
                    )
                };
                let result = if dead {
                    Err(format!(
                        "{label} failed: the chip process of rank {w} died earlier in this run"
                    ))
                } else {
                    let mut fds = Vec::new();
                    let mut new = Vec::new();
                    {
                        let reg = lock(&shared.regions);
                        for r in regions.iter().filter(|r| !mapped.contains(r)) {
                            if let Some(region) = reg.get(r) {
                                fds.push(region.fd.as_raw_fd());
                                new.push(json!({"id": r, "len": region.len}));
                            }
                        }
                    }
                    frame["regions"] = Value::Array(new);
                    let names = shared.programs.get(program).map(|p| &p.kernel_config);
                    match chip.call(&frame, &fds, names) {
                        Ok(v) if v.get("op").and_then(Value::as_str) == Some("done") => {
                            mapped.extend(regions.iter().copied());
                            Ok(())
                        }
                        Ok(v) => {
                            mapped.extend(regions.iter().copied());
                            Err(format!("{label} failed: {}", protocol::decode_error(&v)))
                        }
                        Err(e) => {
                            if matches!(e, RunnerError::ChipProcess { .. }) {
                                dead = true;
                            }
                            Err(format!("{label} failed: {e}"))
                        }
                    }
                };
                let mut st = lock(&shared.state);
                finish(shared, &mut st, id, result);
            }
        }
    }
    lock(parked)[w] = Some(chip);
}
