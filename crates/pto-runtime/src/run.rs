//! One run: bind the orchestration arguments, start the workers and the orchestration
//! thread, wait for the end (or a fatal error, or the scheduler timeout), copy results back.
//!
//! # Fatal errors and timeouts
//!
//! A fatal error (latched by the orchestrator, an op, or the watchdog below) turns every
//! later submit into a no-op and stops workers from running kernels; the run then returns
//! the error. The watchdog is this function's wait loop: while tasks are in flight and none
//! has completed for `scheduler_timeout`, it raises `SCHEDULER_TIMEOUT` naming the running
//! tasks. A kernel that never returns keeps its worker thread forever: that thread (and the
//! `Arc<Chip>` it holds, with the device memory and libraries) is detached and leaked rather
//! than unmapped under it, and the caller gets the error instead of a hang.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::chip::{core_to_worker, describe_running, worker_main, Chip, WorkerKind};
use crate::config::ChipConfig;
use crate::deps::DepLog;
use crate::dfx::{DumpCollector, DumpResult, OrchRecord, ScopeSample, WorkerRecords};
use crate::error::{ErrorCode, RuntimeError};
use crate::exec::SimMemorySizes;
use crate::ffi::{
    BindRuntimeFn, ChipTaskArgs, ChipTensor, OrchCallFn, OrchConfigFn, OrchEntryFn, RuntimeHandle,
};
use crate::memory::DeviceMemory;
use crate::ops::OPS;
use crate::orchestrator::{Orchestrator, OrchestratorSummary, ScopeMode};
use crate::platform::Platform;
use crate::program::Program;
use crate::task::Site;

/// How the orchestration signature uses a tensor argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgDirection {
    /// Copied in; not copied back.
    In,
    /// Not copied in (zero-filled); copied back.
    Out,
    /// Copied in and back.
    InOut,
}

/// A host tensor bound to an orchestration argument.
#[derive(Debug)]
pub struct HostTensor<'a> {
    /// Direction in the orchestration signature.
    pub direction: ArgDirection,
    /// Element type code.
    pub dtype: u8,
    /// Shape (row-major, contiguous).
    pub shape: Vec<u32>,
    /// The bytes (`numel × elem_size`).
    pub data: &'a mut [u8],
}

/// One orchestration argument.
#[derive(Debug)]
pub enum OrchArg<'a> {
    /// A tensor, copied into device memory for the run (and back, unless an input).
    Tensor(HostTensor<'a>),
    /// A tensor whose host bytes *are* the device buffer for the run: no copy in or out.
    /// The memory must stay valid until the process ends if a kernel may outlive the run
    /// (a scheduler timeout), which holds for a chip process that is killed afterwards.
    TensorInPlace(HostTensor<'a>),
    /// Raw 64-bit scalar bits.
    Scalar(u64),
}

/// What a successful run reports.
#[derive(Debug)]
pub struct RunReport {
    /// Tasks submitted (kernel, dummy and allocation tasks).
    pub n_tasks: u64,
    /// Host wall time of the whole run (binding to copy-back).
    pub wall: Duration,
    /// Device time: orchestration start to the end of the last task.
    pub device_time: Duration,
    /// The pool's worker threads (the reserve included, extra workers not).
    pub n_workers: usize,
    /// The platform.
    pub platform: Platform,
    /// Submits and edges, when `record_deps` was on.
    pub deps: Option<DepLog>,
    /// The other diagnostics' records.
    pub dfx: DfxData,
    /// Per task timing slot (`set_task_timing_slot`): the first dispatch of a tagged task
    /// (ns after the orchestration started) and the time from it to the last tagged finish.
    pub timing_slots: [Option<(u64, u64)>; crate::task::NUM_TIMING_SLOTS],
}

/// Everything the diagnostics collected during a run.
#[derive(Debug, Default)]
pub struct DfxData {
    /// Per worker: swimlane, scheduler-phase and PMU records.
    pub workers: Vec<WorkerRecords>,
    /// Orchestrator submit records (swimlane level 4).
    pub orchestrator: Vec<OrchRecord>,
    /// Scope statistics samples.
    pub scopes: Vec<ScopeSample>,
    /// The args dump.
    pub dump: Option<DumpResult>,
    /// For each logical core, its worker.
    pub core_to_worker: Vec<i32>,
    /// The logical core topology.
    pub topology: Option<crate::platform::Topology>,
    /// The timing model's per-subtask predictions (`--timing predicted`).
    pub predicted: Vec<crate::dfx::PredictedRecord>,
}

impl DfxData {
    /// Turns the records' [`crate::clock::stamp`]s into nanoseconds.
    fn stamps_to_ns(&mut self, scale: crate::clock::StampScale) {
        for w in &mut self.workers {
            for s in &mut w.subtasks {
                s.dispatch_ns = scale.ns(s.dispatch_ns);
                s.receive_ns = scale.ns(s.receive_ns);
                s.start_ns = scale.ns(s.start_ns);
                s.end_ns = scale.ns(s.end_ns);
                s.finish_ns = scale.ns(s.finish_ns);
            }
            for p in &mut w.phases {
                p.start_ns = scale.ns(p.start_ns);
                p.end_ns = scale.ns(p.end_ns);
            }
            for p in &mut w.pmu {
                p.duration_ns = scale.delta(p.duration_ns);
            }
        }
        for o in &mut self.orchestrator {
            o.start_ns = scale.ns(o.start_ns);
            o.end_ns = scale.ns(o.end_ns);
        }
    }
}

/// Runs `program` once on a fresh simulated chip.
///
/// The phases: bind the arguments to device memory (`bind_args`), start the chip, its
/// workers (`spawn_workers`) and the orchestration thread (`spawn_orchestration`),
/// watch for the end or a stall (`watch`), shut down and collect the records
/// (`shut_down`), then report a fatal error (`with_summary`) or copy the results back
/// (`copy_back`).
pub fn run(
    program: &Program,
    args: &mut [OrchArg<'_>],
    config: &ChipConfig,
) -> Result<RunReport, RuntimeError> {
    let started = Instant::now();
    config.platform.check_available()?;
    let (n_workers, reserve) = pool_size(
        config.n_workers,
        config.platform,
        std::thread::available_parallelism().map_or(2, |n| n.get()),
    );
    let (memory, descriptors, scalars) = bind_args(args)?;
    let n_args = (descriptors.len() + scalars.len()) as i32;
    let dump = start_dump(config)?;
    let sim_memory = SimMemorySizes::resolve(config.platform)?;
    let chip = Arc::new(Chip::new(
        config.clone(),
        Arc::clone(&program.kernels),
        n_workers,
        reserve,
        dump.clone(),
        memory,
        sim_memory,
    ));

    // Every record's stamps lie between this anchor and the one taken after the last
    // thread stopped (crate::clock).
    let start_anchor = crate::clock::anchor();
    let workers = spawn_workers(&chip, n_workers, config.platform)?;
    let mut elastic = ElasticPool::new(&chip);
    let orch_start = Arc::new(AtomicU64::new(0));
    let orchestration =
        spawn_orchestration(program, &chip, descriptors, scalars, n_args, &orch_start)?;
    let interrupted = watch(&chip, config, &mut elastic);
    let (summary, deps, dfx) = shut_down(
        &chip,
        orchestration,
        workers,
        elastic,
        n_workers,
        start_anchor,
        dump.as_ref(),
    );

    if interrupted {
        return Err(RuntimeError::Interrupted);
    }
    if let Some(err) = chip.fatal_error() {
        return Err(with_summary(err, &summary));
    }
    copy_back(args, &chip);
    let start_ns = orch_start.load(Ordering::Acquire);
    let end_ns = chip.last_end_ns.load(Ordering::Acquire).max(start_ns);
    let timing_slots = timing_slots(&chip, start_ns);
    Ok(RunReport {
        n_tasks: summary.n_tasks,
        wall: started.elapsed(),
        device_time: Duration::from_nanos(end_ns - start_ns),
        n_workers,
        platform: config.platform,
        deps,
        dfx,
        timing_slots,
    })
}

/// The device buffers (`None`: a tensor used in place), tensor descriptors and scalars
/// of `args`.
type BoundArgs = (Vec<Option<DeviceMemory>>, Vec<ChipTensor>, Vec<u64>);

/// Binds `args`: one device buffer per tensor, with everything that is not a pure output
/// copied in; a tensor whose shape does not match its bytes is an error.
fn bind_args(args: &[OrchArg<'_>]) -> Result<BoundArgs, RuntimeError> {
    let mut memory = Vec::new();
    let mut descriptors: Vec<ChipTensor> = Vec::new();
    let mut scalars: Vec<u64> = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        match arg {
            OrchArg::Scalar(bits) => scalars.push(*bits),
            OrchArg::Tensor(t) | OrchArg::TensorInPlace(t) => {
                let in_place = matches!(arg, OrchArg::TensorInPlace(_));
                let numel: u64 = t.shape.iter().map(|&s| s as u64).product();
                let bytes = numel * crate::dtype::elem_size(t.dtype) as u64;
                if bytes != t.data.len() as u64 || t.shape.len() > crate::ffi::MAX_TENSOR_DIMS {
                    return Err(RuntimeError::BadArguments {
                        message: format!(
                            "orchestration argument {i}: shape {:?} of {} needs {bytes} bytes but {} were given",
                            t.shape,
                            crate::dtype::name(t.dtype),
                            t.data.len()
                        ),
                    });
                }
                let mem = if in_place {
                    None
                } else {
                    let mem = DeviceMemory::new(bytes as usize)?;
                    if t.direction != ArgDirection::Out {
                        // SAFETY: the mapping has at least `bytes` bytes; source and
                        // destination do not overlap.
                        unsafe {
                            std::ptr::copy_nonoverlapping(t.data.as_ptr(), mem.base(), t.data.len())
                        };
                    }
                    Some(mem)
                };
                let mut d = ChipTensor::zeroed();
                d.buffer.addr = mem
                    .as_ref()
                    .map_or(t.data.as_ptr() as u64, |m| m.base() as u64);
                d.buffer.size = bytes;
                d.ndims = t.shape.len() as u32;
                d.dtype = t.dtype;
                let mut stride = 1u32;
                for k in (0..t.shape.len()).rev() {
                    d.shapes[k] = t.shape[k];
                    d.strides[k] = stride;
                    stride = stride.saturating_mul(t.shape[k]);
                }
                d.extent_elem_cache = d.extent();
                descriptors.push(d);
                memory.push(mem);
            }
        }
    }
    Ok((memory, descriptors, scalars))
}

/// The args-dump writer, when the dump is on.
fn start_dump(config: &ChipConfig) -> Result<Option<Arc<DumpCollector>>, RuntimeError> {
    if config.dfx.dump_args == 0 {
        return Ok(None);
    }
    let dir = config
        .dfx
        .dump_dir
        .clone()
        .ok_or_else(|| RuntimeError::InvalidConfig {
            message: "the args dump is on but no output directory was given".to_string(),
        })?;
    Ok(Some(
        DumpCollector::start(config.dfx.dump_args, dir).map_err(|source| RuntimeError::Io {
            what: "starting the args-dump writer".to_string(),
            source,
        })?,
    ))
}

/// The pool a run starts with, from the host's `cpus`, and whether its last worker is the
/// reserve (crate::chip, "The reserve worker"): `explicit` workers if given, none of them
/// the reserve; otherwise one worker per CPU, the last the reserve on a simulated chip
/// with more than one CPU (the CPU platform pins a worker per CPU, a cluster each).
fn pool_size(explicit: Option<usize>, platform: Platform, cpus: usize) -> (usize, bool) {
    match explicit {
        Some(n) => (n.max(1), false),
        None => (cpus.max(1), cpus > 1 && platform != Platform::Cpu),
    }
}

/// Starts the pool's `n_workers` worker threads (pinned to a CPU each on the CPU
/// platform).
fn spawn_workers(
    chip: &Arc<Chip>,
    n_workers: usize,
    platform: Platform,
) -> Result<Vec<JoinHandle<WorkerRecords>>, RuntimeError> {
    let mut workers: Vec<JoinHandle<WorkerRecords>> = Vec::with_capacity(n_workers);
    for w in 0..n_workers {
        let chip = Arc::clone(chip);
        let pin = platform == Platform::Cpu;
        let handle = std::thread::Builder::new()
            .name(format!("pto-worker-{w}"))
            .spawn(move || {
                if pin {
                    pin_to_cpu(w);
                }
                worker_main(&chip, w, WorkerKind::Pool)
            })
            .map_err(|source| RuntimeError::Io {
                what: "spawning a worker thread".to_string(),
                source,
            })?;
        workers.push(handle);
    }
    Ok(workers)
}

/// What the orchestration thread hands back: its summary, dependency log, and DFX
/// records (submits and scopes).
type OrchOutcome = (
    OrchestratorSummary,
    Option<DepLog>,
    (Vec<OrchRecord>, Vec<ScopeSample>),
);

/// The orchestration library's exports, copied out of the [`Program`] for its thread.
#[derive(Clone, Copy)]
struct OrchExports {
    entry: OrchEntryFn,
    call: Option<OrchCallFn>,
    cfg: Option<OrchConfigFn>,
    bind: BindRuntimeFn,
}

/// Starts the orchestration thread ([`orchestrate`]); it keeps the orchestration library
/// loaded and the bound arguments alive until it returns.
fn spawn_orchestration(
    program: &Program,
    chip: &Arc<Chip>,
    descriptors: Vec<ChipTensor>,
    scalars: Vec<u64>,
    n_args: i32,
    orch_start: &Arc<AtomicU64>,
) -> Result<JoinHandle<OrchOutcome>, RuntimeError> {
    let chip = Arc::clone(chip);
    let library = Arc::clone(&program.orchestration);
    let exports = OrchExports {
        entry: program.entry,
        call: program.call,
        cfg: program.config,
        bind: program.bind,
    };
    let orch_start = Arc::clone(orch_start);
    std::thread::Builder::new()
        .name("pto-orchestrator".to_string())
        .stack_size(16 << 20)
        .spawn(move || {
            let _keep = library;
            let cargs = ChipTaskArgs {
                n_tensors: descriptors.len() as u32,
                n_scalars: scalars.len() as u32,
                tensors: descriptors.as_ptr(),
                scalars: scalars.as_ptr(),
            };
            orchestrate(&chip, exports, &cargs, n_args, &orch_start)
        })
        .map_err(|source| RuntimeError::Io {
            what: "spawning the orchestration thread".to_string(),
            source,
        })
}

/// The orchestration thread's work: bind a runtime handle, check the argument count the
/// orchestration expects, run its entry in the root scope (an uncaught C++ exception is
/// fatal), unbind, and mark the orchestration done.
fn orchestrate(
    chip: &Arc<Chip>,
    exports: OrchExports,
    cargs: &ChipTaskArgs,
    n_args: i32,
    orch_start: &AtomicU64,
) -> OrchOutcome {
    let OrchExports {
        entry,
        call,
        cfg,
        bind,
    } = exports;
    if let Some(m) = &chip.config.monitor {
        m.0.thread_started(0, crate::monitor::ThreadRole::Orchestration);
    }
    let mut orch = Box::new(Orchestrator::new(Arc::clone(chip)));
    let mut handle = Box::new(RuntimeHandle {
        ops: &OPS,
        pending_scope_mode: 0,
        pad: [0; 7],
        context: &mut *orch as *mut Orchestrator as *mut c_void,
    });
    // SAFETY: `bind` is the orchestration's framework_bind_runtime; the handle
    // outlives every call the orchestration makes (this function's scope).
    unsafe { bind(&mut *handle) };
    let expected = match cfg {
        // SAFETY: the config export takes the bound arguments by reference.
        Some(cfg) => unsafe { cfg(cargs) }.expected_arg_count,
        None => 0,
    };
    if expected > n_args {
        chip.raise(
            ErrorCode::InvalidArgs,
            format!(
                "the orchestration expects {expected} arguments (tensors + scalars) but the call passed {n_args}; pass every parameter of the orchestration signature"
            ),
        );
    } else {
        orch.scope_begin(ScopeMode::Auto, Site::ROOT);
        orch_start.store(chip.now_ns(), Ordering::Release);
        match call {
            Some(call) => {
                let mut message = [0 as std::ffi::c_char; 256];
                // SAFETY: as below; `pto_orchestration_call` runs the entry inside
                // a C++ try block and writes at most `message.len()` bytes.
                let rc = unsafe { call(entry, cargs, message.as_mut_ptr(), message.len()) };
                if rc != 0 {
                    // SAFETY: snprintf NUL-terminates within the buffer.
                    let what =
                        unsafe { std::ffi::CStr::from_ptr(message.as_ptr()) }.to_string_lossy();
                    chip.raise(
                        ErrorCode::ExplicitOrchFatal,
                        format!(
                            "the orchestration threw an uncaught C++ exception ({what}); its last submit or scope was at {}",
                            chip.last_orchestration_site().render()
                        ),
                    );
                }
            }
            // SAFETY: the entry follows the orchestration ABI; `cargs` points to
            // descriptors and scalars that live until this closure returns.
            None => unsafe { entry(cargs) },
        }
        orch.close_all_scopes();
    }
    let summary = (orch.summary(), orch.take_deps(), orch.take_dfx());
    // SAFETY: unbind so a stray call after the run cannot reach a freed orchestrator.
    unsafe { bind(std::ptr::null_mut()) };
    drop(handle);
    if let Some(m) = &chip.config.monitor {
        m.0.orchestration_finished();
    }
    chip.orchestration_done.store(true, Ordering::Release);
    chip.orchestrator_returned();
    std::sync::atomic::fence(Ordering::SeqCst);
    chip.progress.notify_all();
    chip.finished.notify_all();
    summary
}

/// Watches the run until the orchestration is done and the chip quiet, a fatal error, an
/// interrupt (true), or a stall: an orchestration that neither returns nor submits, or
/// tasks in flight with none finishing or starting, for longer than the timeouts.
fn watch(chip: &Arc<Chip>, config: &ChipConfig, elastic: &mut ElasticPool) -> bool {
    let timeout = config.scheduler_timeout;
    let mut last_completed = 0u64;
    let mut last_starts = 0u64;
    let mut last_submitted = 0u64;
    let mut last_progress = Instant::now();
    let mut stretch = 1u32;
    let mut last_orch_progress = Instant::now();
    let mut interrupted = false;
    loop {
        if chip.fatal.is_set() {
            break;
        }
        if let Some(check) = &config.interrupt {
            if (check.0)() {
                interrupted = true;
                chip.raise(
                    ErrorCode::ExplicitOrchFatal,
                    "the run was interrupted".to_string(),
                );
                break;
            }
        }
        if chip.orchestration_done.load(Ordering::Acquire) && chip.quiescent() {
            break;
        }
        let completed = chip.completed.load(Ordering::Acquire);
        let submitted = chip.submitted.load(Ordering::Acquire);
        if submitted != last_submitted || completed != last_completed {
            last_submitted = submitted;
            last_orch_progress = Instant::now();
        }
        if !chip.orchestration_done.load(Ordering::Acquire)
            && submitted == completed
            && last_orch_progress.elapsed() >= config.orchestration_timeout
        {
            chip.raise(
                ErrorCode::SchedulerTimeout,
                format!(
                    "the orchestration has neither returned nor submitted a task for {:.1} s and no task is running; it may never return (its last submit or scope was at {}; raise the limit with PTO_ORCHESTRATION_TIMEOUT_MS if it is just slow)",
                    config.orchestration_timeout.as_secs_f64(),
                    chip.last_orchestration_site().render()
                ),
            );
            break;
        }
        // A subtask starting is progress too: the blocks of one SPMD task finish no task
        // until the last of them, however long they take together. (Each worker stamps
        // `since_ns` when it starts a subtask; read here every 50 ms, nothing on the hot path.)
        let starts = chip.workers.iter().fold(0u64, |h, w| {
            h.wrapping_mul(0x100_0000_01b3)
                .wrapping_add(w.since_ns.load(Ordering::Relaxed))
        });
        // The most kernel threads per host CPU since the last progress (blocks that finish
        // lower the count, not the time the others have lost).
        stretch = stretch.max(elastic.oversubscription());
        if completed != last_completed || starts != last_starts {
            last_completed = completed;
            last_starts = starts;
            last_progress = Instant::now();
            stretch = elastic.oversubscription();
        } else if chip.submitted.load(Ordering::Acquire) > completed
            && last_progress.elapsed() >= timeout * stretch
        {
            let limit = timeout * stretch;
            let running = describe_running(chip);
            let detail = if running.is_empty() {
                "tasks are in flight but none is running".to_string()
            } else {
                running.join("; ")
            };
            chip.raise(
                ErrorCode::SchedulerTimeout,
                format!(
                    "no task finished and no subtask started for {:.1} s: {detail}; a kernel may never return (raise the scheduler timeout with SIMPLER_SCHEDULER_TIMEOUT_MS if it is just slow)",
                    limit.as_secs_f64()
                ),
            );
            break;
        }
        let poll = elastic.poll(chip);
        let c = chip;
        chip.finished.wait_until(poll, &|| {
            c.fatal.is_set() || (c.orchestration_done.load(Ordering::Acquire) && c.quiescent())
        });
    }

    interrupted
}

/// Shuts the chip down (workers exit once idle; stuck ones are detached, see the module
/// docs) and collects the orchestration's summary and dependency log and the run's DFX
/// records, stamps in nanoseconds.
fn shut_down(
    chip: &Arc<Chip>,
    orchestration: JoinHandle<OrchOutcome>,
    workers: Vec<JoinHandle<WorkerRecords>>,
    elastic: ElasticPool,
    n_workers: usize,
    start_anchor: crate::clock::Anchor,
    dump: Option<&Arc<DumpCollector>>,
) -> (OrchestratorSummary, Option<DepLog>, DfxData) {
    // Kernels blocked in the PTO-ISA header (a pipe that never fills) give up on the
    // stop flag.
    chip.stop_kernels();
    chip.shutdown.store(true, Ordering::Release);
    std::sync::atomic::fence(Ordering::SeqCst);
    chip.work.notify_all();
    chip.reserve_wait.notify_all();
    let fatal = chip.fatal.is_set();
    let grace = Instant::now() + Duration::from_secs(2);
    let mut summary = OrchestratorSummary::default();
    let mut deps = None;
    let mut dfx = DfxData {
        core_to_worker: core_to_worker(&chip.topology, n_workers),
        topology: Some(chip.topology),
        ..Default::default()
    };
    if !fatal || wait_finished(&|| orchestration.is_finished(), grace) {
        if let Ok((s, d, (orch_records, scopes))) = orchestration.join() {
            summary = s;
            deps = d;
            dfx.orchestrator = orch_records;
            dfx.scopes = scopes;
        }
    }
    for (w, handle) in workers.into_iter().enumerate() {
        let status = &chip.workers[w];
        if !fatal || wait_finished(&|| status.exited.load(Ordering::Acquire), grace) {
            if let Ok(records) = handle.join() {
                dfx.workers.push(records);
            }
        }
    }
    elastic.finish(chip, fatal, grace, &mut dfx);
    dfx.predicted = std::mem::take(&mut *chip.predicted.lock());
    dfx.stamps_to_ns(crate::clock::StampScale::between(
        start_anchor,
        crate::clock::anchor(),
    ));
    if let Some(dump) = dump {
        if !fatal
            || chip
                .workers
                .iter()
                .all(|w| w.exited.load(Ordering::Acquire))
        {
            dfx.dump = Some(dump.finish());
        }
    }

    (summary, deps, dfx)
}

/// The run's fatal error `err`, with the capacity advice and ignored submits of
/// `summary` added to its message.
fn with_summary(err: RuntimeError, summary: &OrchestratorSummary) -> RuntimeError {
    match err {
        RuntimeError::Fatal { code, mut message } => {
            if let Some(advice) = &summary.capacity_advice {
                message.push_str(advice);
            }
            if summary.ignored_submits > 0 {
                message.push_str(&format!(
                    " ({} later submits were ignored, the first at {})",
                    summary.ignored_submits,
                    summary.first_ignored_site.as_deref().unwrap_or("?")
                ));
            }
            RuntimeError::Fatal { code, message }
        }
        other => other,
    }
}

/// Copies every tensor that is not a pure input back from its device buffer.
fn copy_back(args: &mut [OrchArg<'_>], chip: &Chip) {
    let mut k = 0;
    for arg in args.iter_mut() {
        if let OrchArg::Tensor(t) | OrchArg::TensorInPlace(t) = arg {
            let device = chip.args_memory[k].as_ref();
            if let (Some(device), true) = (device, t.direction != ArgDirection::In) {
                // SAFETY: the device buffer has exactly `t.data.len()` bytes and every task
                // has finished.
                unsafe {
                    std::ptr::copy_nonoverlapping(device.base(), t.data.as_mut_ptr(), t.data.len())
                };
            }
            k += 1;
        }
    }
}

/// The span of each task timing slot, relative to the orchestration's start
/// (`start_ns`), each logged as a `[STRACE]` line.
fn timing_slots(chip: &Chip, start_ns: u64) -> [Option<(u64, u64)>; crate::task::NUM_TIMING_SLOTS] {
    std::array::from_fn(|k| {
        chip.timing[k].span().map(|(first, last)| {
            let (ts, dur) = (first.saturating_sub(start_ns), last - first);
            tracing::info!(
                "[STRACE] v=1 pid={} name=chip.run.device_wall.task_slot_{k} ts={ts} dur={dur}",
                std::process::id()
            );
            (ts, dur)
        })
    })
}

/// How long every worker must have been inside one unit (with work waiting) before the
/// monitor starts extra workers.
const ELASTIC_AFTER: Duration = Duration::from_millis(5);
/// The monitor's period while no worker has been inside one unit since the last look.
const POLL_IDLE: Duration = Duration::from_millis(10);
/// Its period while one has (a kernel may be holding its core for long).
const POLL_HELD: Duration = Duration::from_millis(1);

/// The elastic part of the worker pool (docs/ARCHITECTURE.md, "Execution model"): the run's
/// own thread looks at every worker each poll. When every live worker has been inside one
/// unit (a subtask or a gang) for [`ELASTIC_AFTER`] while subtasks wait — queued, or left
/// to claim in a task a held worker is running — it starts extra workers, one per waiting
/// subtask, up to one thread per logical core and no more than there are free cores. An
/// extra worker runs on any free core and exits once it finds nothing to do; its slot of
/// [`Chip::workers`] is reused after it is joined. Nothing here runs on a worker's path:
/// the workers only count their units ([`crate::exec::ExecStatus::units`]) and take their
/// cores ([`crate::cores`]).
struct ElasticPool {
    /// Per slot of `Chip::workers`: the unit count last seen and when it was first seen.
    seen: Vec<(u64, Instant)>,
    /// Per extra slot (`Chip::workers[n_workers..]`): its running thread.
    extra: Vec<Option<JoinHandle<WorkerRecords>>>,
    /// What joined extra workers recorded.
    records: Vec<WorkerRecords>,
    /// Extra workers started over the run.
    started: usize,
    /// Host CPUs the process may use.
    host_cpus: usize,
    /// Worker threads inside a unit at the last look.
    inside: usize,
}

impl ElasticPool {
    fn new(chip: &Chip) -> ElasticPool {
        let now = Instant::now();
        ElasticPool {
            seen: vec![(0, now); chip.workers.len()],
            extra: (chip.n_workers..chip.workers.len()).map(|_| None).collect(),
            records: Vec::new(),
            started: 0,
            host_cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            inside: 0,
        }
    }

    /// Whether the worker of slot `i` is one the pool watches for being held: a pool
    /// worker (not the reserve, which sleeps while the orchestrator submits) or an extra
    /// one running now.
    fn watched(&self, chip: &Chip, i: usize) -> bool {
        match i.checked_sub(chip.n_workers) {
            None => chip.reserve != Some(i),
            Some(k) => self.extra[k].is_some(),
        }
    }

    /// How many times more threads run kernels than the host has CPUs (at least 1). The
    /// scheduler timeout is stretched by it: with the pool grown past the CPUs, each kernel
    /// runs that much slower than alone, and the subtasks all started at once, so no start
    /// shows progress while they share the CPUs. A kernel that never returns still trips it.
    fn oversubscription(&self) -> u32 {
        (self.inside.div_ceil(self.host_cpus.max(1)) as u32).max(1)
    }

    /// One look at the workers; returns how long to wait before the next.
    fn poll(&mut self, chip: &Arc<Chip>) -> Duration {
        let now = Instant::now();
        let n_workers = chip.n_workers;
        // Join the extra workers that left.
        for (k, slot) in self.extra.iter_mut().enumerate() {
            if slot.is_some() && chip.workers[n_workers + k].exited.load(Ordering::Acquire) {
                if let Some(Ok(records)) = slot.take().map(JoinHandle::join) {
                    self.records.push(records);
                }
            }
        }
        let mut all_held = true;
        let mut any_held = false;
        let mut live = 0;
        self.inside = 0;
        for (i, status) in chip.workers.iter().enumerate() {
            if !self.watched(chip, i) {
                continue;
            }
            live += 1;
            let units = status.units.load(Ordering::Acquire);
            let seen = &mut self.seen[i];
            if seen.0 != units {
                *seen = (units, now);
            }
            let inside = units % 2 == 1;
            self.inside += usize::from(inside);
            let held = inside && now.duration_since(seen.1) >= ELASTIC_AFTER;
            any_held |= inside && seen.1 < now;
            all_held &= held;
        }
        let poll = if any_held { POLL_HELD } else { POLL_IDLE };
        if !all_held || live == 0 || chip.shutdown.load(Ordering::Acquire) || chip.fatal.is_set() {
            return poll;
        }
        // Work that waits: queued tasks, and subtasks left to claim in the tasks the held
        // workers run (an SPMD task's blocks are claimed by whoever runs it).
        let mut firsts: Vec<(crate::task::TaskId, u32)> = Vec::new();
        for (i, status) in chip.workers.iter().enumerate() {
            if !self.watched(chip, i) {
                continue;
            }
            let raw = status.task.load(Ordering::Acquire);
            if raw == u64::MAX || firsts.iter().any(|(t, _)| t.0 == raw) {
                continue;
            }
            let id = crate::task::TaskId(raw);
            let left = crate::task::unclaimed_units(chip.slot(id), id);
            if left > 0 {
                firsts.push((id, left));
            }
        }
        let waiting = chip.ready_len() + firsts.iter().map(|f| f.1 as usize).sum::<usize>();
        let free_cores = (0..chip.topology.n_cores())
            .filter(|&c| chip.cores.is_free(c))
            .count();
        let free_slots: Vec<usize> = (0..self.extra.len())
            .filter(|&k| self.extra[k].is_none())
            .collect();
        let n = waiting.min(free_cores).min(free_slots.len());
        let go = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut batch = Vec::with_capacity(n);
        for &k in &free_slots[..n] {
            let first = firsts.iter_mut().find(|f| f.1 > 0).map(|f| {
                f.1 -= 1;
                f.0
            });
            let index = n_workers + k;
            let status = &chip.workers[index];
            status.exited.store(false, Ordering::Release);
            self.seen[index] = (status.units.load(Ordering::Acquire), now);
            let chip2 = Arc::clone(chip);
            let kind = WorkerKind::Extra {
                first,
                go: Arc::clone(&go),
            };
            let spawned = std::thread::Builder::new()
                .name(format!("pto-worker-{index}"))
                .spawn(move || worker_main(&chip2, index, kind));
            match spawned {
                Ok(handle) => {
                    batch.push(handle.thread().clone());
                    self.extra[k] = Some(handle);
                    self.started += 1;
                }
                Err(e) => {
                    // Not fatal: the run goes on with the threads it has.
                    status.exited.store(true, Ordering::Release);
                    tracing::warn!("could not start an extra worker thread: {e}");
                    break;
                }
            }
        }
        go.store(true, Ordering::Release);
        for thread in batch {
            thread.unpark();
        }
        if n > 0 {
            tracing::debug!(
                "elastic pool: every worker held a core for {} ms or more with {waiting} subtasks waiting; started {n} extra workers ({} over the run) in {:?}",
                ELASTIC_AFTER.as_millis(),
                self.started,
                now.elapsed()
            );
        }
        poll
    }

    /// Joins the extra workers still running (within `grace` after a fatal error) and
    /// hands their records to `dfx`: each subtask to the pool worker that owns its core
    /// (so `core_to_worker` stays true), scheduler phases and PMU samples as lanes of
    /// their own.
    fn finish(mut self, chip: &Chip, fatal: bool, grace: Instant, dfx: &mut DfxData) {
        for (k, slot) in self.extra.iter_mut().enumerate() {
            let Some(handle) = slot.take() else {
                continue;
            };
            let status = &chip.workers[chip.n_workers + k];
            if !fatal || wait_finished(&|| status.exited.load(Ordering::Acquire), grace) {
                if let Ok(records) = handle.join() {
                    self.records.push(records);
                }
            }
        }
        if self.records.is_empty() || dfx.workers.is_empty() {
            return;
        }
        for mut records in self.records {
            for s in records.subtasks.drain(..) {
                let owner = dfx
                    .core_to_worker
                    .get(s.core as usize)
                    .and_then(|&w| usize::try_from(w).ok())
                    .filter(|&w| w < dfx.workers.len())
                    .unwrap_or(0);
                dfx.workers[owner].subtasks.push(s);
            }
            if !records.phases.is_empty() || !records.pmu.is_empty() {
                dfx.workers.push(records);
            }
        }
        for w in &mut dfx.workers {
            w.subtasks.sort_by_key(|s| s.start_ns);
        }
    }
}

fn wait_finished(done: &dyn Fn() -> bool, deadline: Instant) -> bool {
    while !done() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

fn pin_to_cpu(worker: usize) {
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes within it; the call affects only
    // the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(worker % n, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            tracing::warn!(
                "could not pin worker {worker}: {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_pool_has_a_reserve_on_a_simulated_chip() {
        let sim = Platform::A2a3Sim;
        assert_eq!(pool_size(None, sim, 2), (2, true));
        assert_eq!(pool_size(None, sim, 8), (8, true));
        assert_eq!(pool_size(None, Platform::A5Sim, 4), (4, true));
        // One CPU: nothing to leave the orchestrator.
        assert_eq!(pool_size(None, sim, 1), (1, false));
        // The CPU platform pins a worker per CPU, a cluster each.
        assert_eq!(pool_size(None, Platform::Cpu, 4), (4, false));
        // An explicit count is the pool, exactly, with no reserve.
        assert_eq!(pool_size(Some(2), sim, 2), (2, false));
        assert_eq!(pool_size(Some(0), sim, 2), (1, false));
    }
}
