//! The shared state of one run of the simulated chip, and the worker pool that executes it.
//!
//! # Task lifecycle
//!
//! 1. The orchestrator fills a slot, wires the task into its producers' fanout lists and
//!    releases its self-reference on `fanin_remaining` ([`crate::orchestrator`]).
//! 2. Whoever brings `fanin_remaining` to zero calls [`Chip::make_ready`]: a task with
//!    subtasks is pushed to the ready queue (once per worker that can help, at most one per
//!    subtask); a dummy or allocation task completes on the spot.
//! 3. Workers pop task ids and claim subtasks (`block × active slot`) with `claim`;
//!    each subtask runs the kernel on a logical core the worker owns.
//! 4. The thread finishing the last subtask completes the task: it first releases the
//!    producers it retained (and captures dumped outputs), then, under the fanout lock, marks
//!    it `Completed` and counts down each consumer; those that reach zero are made ready
//!    once the lock is released.
//! 5. A task is `Consumed` once completed and every reference (its scope's, each retaining
//!    consumer's) is released; the ring then reclaims consecutive consumed slots, advancing
//!    `last_alive`, the heap tail and the dep-pool tail, which unblocks the orchestrator.
//!
//! # Sleep and wake-up
//!
//! Workers spin briefly on an empty queue, then sleep on [`Waiter`]. A pusher increments
//! nothing on the fast path: it checks `Waiter::sleepers` after its push. The sleeper
//! registers (a SeqCst read-modify-write) *before* re-checking the queue under the mutex,
//! and the pusher issues a SeqCst fence between its push and its read of `sleepers`, so
//! in the single total order either the sleeper sees the item or the pusher sees the
//! sleeper (and notifies under the mutex, which the sleeper holds until it waits). The same
//! protocol wakes threads waiting for progress. Waits also time out, so a mistake here
//! costs latency, never a hang.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use parking_lot::{Condvar, Mutex};

use crate::config::{ChipConfig, N_RINGS};
use crate::dfx::{
    now_ns, DumpCollector, DumpStage, PmuRecord, SchedPhaseKind, SchedPhaseRecord, SubtaskRecord,
    WorkerRecords,
};
use crate::error::{ErrorCode, RuntimeError};
use crate::ffi::{
    GlobalContext, LocalContext, DISPATCH_MAX_ARGS, GLOBAL_CONTEXT_INDEX, LOCAL_CONTEXT_INDEX,
};
use crate::memory::DeviceMemory;
use crate::perf::{PerfGroup, MAX_COUNTERS};
use crate::platform::{CoreType, Topology};
use crate::program::KernelTable;
use crate::task::{claim_subtask, SlotState, TaskId, TaskSlot};

/// A mutex + condvar pair with a count of sleepers, used for workers waiting for work and
/// for threads waiting for progress (see the module docs for the protocol).
pub struct Waiter {
    sleepers: AtomicU32,
    lock: Mutex<()>,
    cond: Condvar,
}

impl Waiter {
    fn new() -> Waiter {
        Waiter {
            sleepers: AtomicU32::new(0),
            lock: Mutex::new(()),
            cond: Condvar::new(),
        }
    }

    /// Sleeps until notified or `timeout`, unless `ready()` already holds once registered.
    pub fn wait_until(&self, timeout: Duration, ready: &dyn Fn() -> bool) {
        let mut guard = self.lock.lock();
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        if !ready() {
            self.cond.wait_for(&mut guard, timeout);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes one sleeper, if any. The caller has just issued a SeqCst fence (or RMW).
    pub fn notify_one(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock();
            self.cond.notify_one();
        }
    }

    /// Wakes every sleeper, if any. The caller has just issued a SeqCst fence (or RMW).
    pub fn notify_all(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock();
            self.cond.notify_all();
        }
    }
}

/// One scope-depth ring: its task window, heap and dep-pool frontiers.
pub struct Ring {
    /// Ring index (0..4).
    pub index: usize,
    /// Task window size (power of two).
    pub window: u64,
    slots: OnceLock<Box<[TaskSlot]>>,
    /// Next local id (published by the orchestrator after filling a slot).
    pub head: AtomicU64,
    /// Oldest local id not yet reclaimed.
    pub last_alive: AtomicU64,
    /// Heap capacity in bytes.
    pub heap_size: u64,
    heap: OnceLock<Result<DeviceMemory, String>>,
    /// Cumulative heap bytes reclaimed.
    pub heap_tail: AtomicU64,
    /// Dep pool capacity (entries).
    pub dep_capacity: u64,
    /// Cumulative dep-pool entries reclaimed.
    pub dep_tail: AtomicU64,
    reclaim_lock: Mutex<()>,
    reclaim_pending: AtomicBool,
}

impl Ring {
    fn new(index: usize, window: u64, heap_size: u64, dep_capacity: u64) -> Ring {
        Ring {
            index,
            window,
            slots: OnceLock::new(),
            head: AtomicU64::new(0),
            last_alive: AtomicU64::new(0),
            heap_size,
            heap: OnceLock::new(),
            heap_tail: AtomicU64::new(0),
            dep_capacity,
            dep_tail: AtomicU64::new(0),
            reclaim_lock: Mutex::new(()),
            reclaim_pending: AtomicBool::new(false),
        }
    }

    /// The slot of local id `local`.
    pub fn slot(&self, local: u64) -> &TaskSlot {
        let slots = self
            .slots
            .get_or_init(|| (0..self.window).map(|_| TaskSlot::new()).collect());
        &slots[(local & (self.window - 1)) as usize]
    }

    /// Base address of the heap (mapped on first use).
    pub fn heap_base(&self) -> Result<*mut u8, RuntimeError> {
        match self
            .heap
            .get_or_init(|| DeviceMemory::new(self.heap_size as usize).map_err(|e| e.to_string()))
        {
            Ok(mem) => Ok(mem.base()),
            Err(message) => Err(RuntimeError::Io {
                what: format!("heap ring {}", self.index),
                source: std::io::Error::other(message.clone()),
            }),
        }
    }

    /// Whether the task `id` (of this ring) has been reclaimed.
    pub fn is_retired(&self, local: u64) -> bool {
        local < self.last_alive.load(Ordering::Acquire)
    }
}

/// A fatal error, latched once.
pub struct FatalLatch {
    set: AtomicBool,
    first: Mutex<Option<(ErrorCode, String)>>,
}

impl FatalLatch {
    fn new() -> FatalLatch {
        FatalLatch {
            set: AtomicBool::new(false),
            first: Mutex::new(None),
        }
    }

    /// Whether a fatal error has been latched.
    pub fn is_set(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Latches `code` / `message` unless an earlier error is already latched.
    pub fn raise(&self, code: ErrorCode, message: String) {
        let mut first = self.first.lock();
        if first.is_none() {
            tracing::debug!("fatal: {} ({}): {message}", code.name(), code.code());
            *first = Some((code, message));
            self.set.store(true, Ordering::Release);
        }
    }

    /// The latched error.
    pub fn take(&self) -> Option<(ErrorCode, String)> {
        self.first.lock().clone()
    }
}

/// What a worker is running, for timeout messages.
pub struct WorkerStatus {
    /// Raw task id, or `u64::MAX` when idle.
    pub task: AtomicU64,
    /// Logical core.
    pub core: AtomicUsize,
    /// When the subtask started (ns since run start).
    pub since_ns: AtomicU64,
    /// Set once the worker thread has exited.
    pub exited: AtomicBool,
}

/// The shared state of one run.
pub struct Chip {
    /// Configuration.
    pub config: ChipConfig,
    /// Logical cores.
    pub topology: Topology,
    /// Kernels by func_id (keeps their libraries loaded).
    pub kernels: Arc<KernelTable>,
    /// The four rings.
    pub rings: [Ring; N_RINGS],
    ready: ArrayQueue<u64>,
    /// Workers waiting for work.
    pub work: Waiter,
    /// Threads waiting for task completions.
    pub progress: Waiter,
    /// Tasks submitted (including dummy and allocation tasks).
    pub submitted: AtomicU64,
    /// Tasks completed.
    pub completed: AtomicU64,
    /// The first fatal error.
    pub fatal: FatalLatch,
    /// Set when the orchestration thread has finished.
    pub orchestration_done: AtomicBool,
    /// Tells workers to exit.
    pub shutdown: AtomicBool,
    /// Per-worker status.
    pub workers: Box<[WorkerStatus]>,
    /// Run start.
    pub t0: Instant,
    /// ns since `t0` when the last task finished.
    pub last_end_ns: AtomicU64,
    /// The args-dump collector, when the dump is on.
    pub dump: Option<Arc<DumpCollector>>,
    /// Device copies of the orchestration's tensor arguments. Owned by the chip so that a
    /// detached worker stuck in a kernel never sees them unmapped.
    pub args_memory: Vec<DeviceMemory>,
}

impl Chip {
    /// Shared state for a run with `n_workers` workers.
    pub fn new(
        config: ChipConfig,
        kernels: Arc<KernelTable>,
        n_workers: usize,
        dump: Option<Arc<DumpCollector>>,
        args_memory: Vec<DeviceMemory>,
    ) -> Chip {
        let topology = config.platform.topology(n_workers);
        let r = &config.rings;
        let rings =
            std::array::from_fn(|i| Ring::new(i, r.task_window[i], r.heap[i], r.dep_pool[i]));
        // Every live task is queued at most once per worker (SPMD copies), and at most
        // `window - 1` tasks per ring are live.
        let live: u64 = r.task_window.iter().sum();
        let capacity = (live as usize)
            .saturating_mul(n_workers.max(1))
            .clamp(1024, 1 << 24);
        Chip {
            topology,
            kernels,
            rings,
            ready: ArrayQueue::new(capacity),
            work: Waiter::new(),
            progress: Waiter::new(),
            submitted: AtomicU64::new(0),
            completed: AtomicU64::new(0),
            fatal: FatalLatch::new(),
            orchestration_done: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            workers: (0..n_workers)
                .map(|_| WorkerStatus {
                    task: AtomicU64::new(u64::MAX),
                    core: AtomicUsize::new(0),
                    since_ns: AtomicU64::new(0),
                    exited: AtomicBool::new(false),
                })
                .collect(),
            t0: Instant::now(),
            last_end_ns: AtomicU64::new(0),
            dump,
            args_memory,
            config,
        }
    }

    /// The slot of task `id`.
    pub fn slot(&self, id: TaskId) -> &TaskSlot {
        self.rings[id.ring()].slot(id.local())
    }

    /// Whether task `id` has been reclaimed.
    pub fn is_retired(&self, id: TaskId) -> bool {
        self.rings[id.ring()].is_retired(id.local())
    }

    /// ns since run start.
    pub fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    /// Makes a task whose fanin reached zero runnable (see the module docs, step 2). Dummy
    /// tasks are pushed to `inline` for the caller to complete without recursion.
    pub fn make_ready(&self, id: TaskId, inline: &mut Vec<TaskId>) {
        // SAFETY: the task is published (its fanin reached zero after wiring) and pending.
        let total = unsafe { self.slot(id).payload() }.subtasks_total;
        if total == 0 {
            inline.push(id);
            return;
        }
        if let Some(dump) = &self.dump {
            // SAFETY: as above; inputs are captured before any subtask can run.
            dump.capture(
                unsafe { self.slot(id).payload() },
                DumpStage::BeforeDispatch,
            );
        }
        let copies = (total as usize).min(self.workers.len()).max(1);
        for _ in 0..copies {
            let mut raw = id.0;
            // The queue is sized for every live task times the workers; a full queue means
            // workers are behind by more than that, so yield until one pops.
            while let Err(back) = self.ready.push(raw) {
                raw = back;
                if self.fatal.is_set() {
                    return;
                }
                std::thread::yield_now();
            }
        }
        // SeqCst fence before reading the sleeper count (module docs).
        std::sync::atomic::fence(Ordering::SeqCst);
        if copies > 1 {
            self.work.notify_all();
        } else {
            self.work.notify_one();
        }
    }

    /// Completes task `id` and any dummy tasks this readies, iteratively.
    pub fn complete(&self, id: TaskId, inline: &mut Vec<TaskId>) {
        inline.push(id);
        while let Some(id) = inline.pop() {
            self.complete_one(id, inline);
        }
    }

    fn complete_one(&self, id: TaskId, inline: &mut Vec<TaskId>) {
        let slot = self.slot(id);
        let end = self.now_ns();
        // Release retained producers first, while this task is still pending: once it is
        // marked completed another thread may consume and reclaim its slot.
        // SAFETY: published, still-pending task: its payload is immutable and live.
        let payload = unsafe { slot.payload() };
        for &producer in &payload.retained {
            self.release(producer);
        }
        if let Some(dump) = &self.dump {
            if payload.subtasks_total > 0 {
                // Outputs are captured before any consumer is released.
                dump.capture(payload, DumpStage::AfterCompletion);
            }
        }
        // Consumers whose last producer this was; they are made ready after the lock is
        // released (pushing may wake a sleeping worker, a system call).
        let mut ready = [TaskId::INVALID; 32];
        let mut n_ready = 0;
        let mut more_ready: Vec<TaskId> = Vec::new();
        let consumed = {
            let mut fanout = slot.fanout.lock();
            fanout.state = SlotState::Completed;
            for &consumer in &fanout.consumers {
                if self
                    .slot(consumer)
                    .fanin_remaining
                    .fetch_sub(1, Ordering::AcqRel)
                    == 1
                {
                    if n_ready < ready.len() {
                        ready[n_ready] = consumer;
                        n_ready += 1;
                    } else {
                        more_ready.push(consumer);
                    }
                }
            }
            fanout.consumers.clear();
            let consumed = fanout.released == fanout.fanout_count;
            if consumed {
                fanout.state = SlotState::Consumed;
            }
            consumed
        };
        for &consumer in ready[..n_ready].iter().chain(&more_ready) {
            self.make_ready(consumer, inline);
        }
        if consumed {
            self.try_advance(id.ring());
        }
        self.last_end_ns.fetch_max(end, Ordering::Relaxed);
        self.completed.fetch_add(1, Ordering::SeqCst);
        self.progress.notify_all();
    }

    /// Releases one reference on `id` (a scope's or a retaining consumer's).
    pub fn release(&self, id: TaskId) {
        let consumed = {
            let mut fanout = self.slot(id).fanout.lock();
            fanout.released += 1;
            let consumed =
                fanout.state == SlotState::Completed && fanout.released == fanout.fanout_count;
            if consumed {
                fanout.state = SlotState::Consumed;
            }
            consumed
        };
        if consumed {
            self.try_advance(id.ring());
        }
    }

    /// Reclaims consecutive consumed slots at the tail of `ring` (try-lock; a contended
    /// call leaves a note that the lock holder picks up).
    pub fn try_advance(&self, ring: usize) {
        let ring = &self.rings[ring];
        loop {
            let Some(_guard) = ring.reclaim_lock.try_lock() else {
                ring.reclaim_pending.store(true, Ordering::Release);
                return;
            };
            ring.reclaim_pending.store(false, Ordering::Release);
            self.advance_locked(ring);
            drop(_guard);
            if !ring.reclaim_pending.load(Ordering::Acquire) {
                return;
            }
        }
    }

    /// Like [`Chip::try_advance`] but waits for the lock (orchestrator under back-pressure).
    pub fn advance_blocking(&self, ring: usize) {
        let ring = &self.rings[ring];
        let _guard = ring.reclaim_lock.lock();
        ring.reclaim_pending.store(false, Ordering::Release);
        self.advance_locked(ring);
    }

    fn advance_locked(&self, ring: &Ring) {
        let mut local = ring.last_alive.load(Ordering::Relaxed);
        let head = ring.head.load(Ordering::Acquire);
        let start = local;
        let mut heap_tail = None;
        let mut dep_tail = None;
        while local < head {
            let slot = ring.slot(local);
            let mut fanout = slot.fanout.lock();
            if fanout.state != SlotState::Consumed {
                break;
            }
            fanout.state = SlotState::Free;
            drop(fanout);
            // SAFETY: consumed: no thread reads or writes the payload any more.
            let payload = unsafe { slot.payload() };
            heap_tail = Some(payload.heap_end);
            dep_tail = Some(payload.dep_mark);
            local += 1;
        }
        if local != start {
            if let Some(h) = heap_tail {
                ring.heap_tail.fetch_max(h, Ordering::Release);
            }
            if let Some(d) = dep_tail {
                ring.dep_tail.fetch_max(d, Ordering::Release);
            }
            ring.last_alive.store(local, Ordering::Release);
            std::sync::atomic::fence(Ordering::SeqCst);
            self.progress.notify_all();
        }
    }

    /// Whether every submitted task has completed.
    pub fn quiescent(&self) -> bool {
        self.completed.load(Ordering::SeqCst) == self.submitted.load(Ordering::SeqCst)
    }

    /// Latches a fatal error and wakes everyone.
    pub fn raise(&self, code: ErrorCode, message: String) {
        self.fatal.raise(code, message);
        std::sync::atomic::fence(Ordering::SeqCst);
        self.progress.notify_all();
        self.work.notify_all();
    }

    /// The fatal error as a [`RuntimeError`], if any.
    pub fn fatal_error(&self) -> Option<RuntimeError> {
        self.fatal
            .take()
            .map(|(code, message)| RuntimeError::Fatal { code, message })
    }
}

/// The logical cores a worker runs subtasks on: worker `w` of `n` owns clusters
/// `w, w + n, ...` and rotates through them so the swimlane spreads over the chip.
struct WorkerCores {
    clusters: Vec<usize>,
    next: [usize; 3],
}

impl WorkerCores {
    fn new(topology: Topology, worker: usize, n_workers: usize) -> WorkerCores {
        let mut clusters: Vec<usize> = (worker..topology.n_clusters)
            .step_by(n_workers.max(1))
            .collect();
        if clusters.is_empty() {
            clusters.push(worker % topology.n_clusters.max(1));
        }
        WorkerCores {
            clusters,
            next: [0; 3],
        }
    }

    /// A logical core for cluster slot `slot` (0 = AIC, 1 = AIV0, 2 = AIV1).
    fn pick(&mut self, topology: &Topology, slot: usize) -> usize {
        let i = self.next[slot] % self.clusters.len();
        self.next[slot] = self.next[slot].wrapping_add(1);
        topology.core_of(self.clusters[i], slot)
    }
}

/// For each logical core, the worker that runs its subtasks (swimlane `core_to_thread`).
pub fn core_to_worker(topology: &Topology, n_workers: usize) -> Vec<i32> {
    let mut map = vec![-1i32; topology.n_cores()];
    for w in 0..n_workers {
        for slot in 0..3 {
            for &c in &WorkerCores::new(*topology, w, n_workers).clusters {
                map[topology.core_of(c, slot)] = w as i32;
            }
        }
    }
    map
}

/// How long an idle worker spins before sleeping.
const SPIN_ROUNDS: u32 = 64;
/// How long a sleeping worker waits before re-checking the queue on its own.
const IDLE_WAIT: Duration = Duration::from_millis(20);

/// Per-worker diagnostic state.
struct Recorder {
    swimlane: u8,
    records: WorkerRecords,
    perf: Option<PerfGroup>,
    pmu_on: bool,
    reg_task_id: Vec<u32>,
    loop_iter: u32,
    pop_hit: u32,
    pop_miss: u32,
}

impl Recorder {
    fn new(chip: &Chip) -> Recorder {
        let dfx = &chip.config.dfx;
        let pmu_on = dfx.pmu > 0;
        let perf = if pmu_on { PerfGroup::open() } else { None };
        let mut records = WorkerRecords::default();
        if let Some(p) = &perf {
            records.pmu_names = p.names().to_vec();
        }
        Recorder {
            swimlane: dfx.swimlane,
            records,
            perf,
            pmu_on,
            reg_task_id: vec![0; chip.topology.n_cores()],
            loop_iter: 0,
            pop_hit: 0,
            pop_miss: 0,
        }
    }

    fn active(&self) -> bool {
        self.swimlane > 0 || self.pmu_on
    }
}

/// The body of worker thread `index`; returns what it recorded.
pub fn worker_main(chip: &Chip, index: usize) -> WorkerRecords {
    let n_workers = chip.workers.len();
    let mut cores = WorkerCores::new(chip.topology, index, n_workers);
    let mut inline: Vec<TaskId> = Vec::with_capacity(64);
    let mut rec = Recorder::new(chip);
    let status = &chip.workers[index];
    'outer: loop {
        let mut spins = 0u32;
        let raw = loop {
            if let Some(raw) = chip.ready.pop() {
                break raw;
            }
            rec.pop_miss = rec.pop_miss.wrapping_add(1);
            if chip.shutdown.load(Ordering::Acquire) {
                break 'outer;
            }
            spins += 1;
            if spins < SPIN_ROUNDS {
                std::hint::spin_loop();
            } else if spins < SPIN_ROUNDS + 16 {
                std::thread::yield_now();
            } else {
                chip.work.wait_until(IDLE_WAIT, &|| {
                    !chip.ready.is_empty() || chip.shutdown.load(Ordering::Acquire)
                });
                spins = SPIN_ROUNDS;
            }
        };
        rec.pop_hit = rec.pop_hit.wrapping_add(1);
        rec.loop_iter = rec.loop_iter.wrapping_add(1);
        run_task(
            chip,
            index,
            TaskId(raw),
            status,
            &mut cores,
            &mut inline,
            &mut rec,
        );
    }
    status.exited.store(true, Ordering::Release);
    rec.records
}

fn queue_depth(chip: &Chip, shape: usize) -> [i16; 3] {
    let mut d = [0i16; 3];
    d[shape] = chip.ready.len().min(i16::MAX as usize) as i16;
    d
}

fn run_task(
    chip: &Chip,
    worker: usize,
    id: TaskId,
    status: &WorkerStatus,
    cores: &mut WorkerCores,
    inline: &mut Vec<TaskId>,
    rec: &mut Recorder,
) {
    let slot = chip.slot(id);
    let mut args = [0i64; DISPATCH_MAX_ARGS];
    let recording = rec.active();
    loop {
        let dispatch_ns = if recording { now_ns() } else { 0 };
        let Some((i, total)) = claim_subtask(slot, id) else {
            return;
        };
        // SAFETY: a successful claim means the slot holds this (published) task, and it
        // cannot be reclaimed before the claimed subtask is counted done below.
        let payload = unsafe { slot.payload() };
        let mut sub = SubtaskRecord {
            core: 0,
            task: id.0,
            reg_task_id: 0,
            dispatch_ns,
            receive_ns: 0,
            start_ns: 0,
            end_ns: 0,
            finish_ns: 0,
        };
        let mut shape = 1usize;
        let mut func_id = -1;
        let mut counters = [[0u64; MAX_COUNTERS]; 2];
        if !chip.fatal.is_set() {
            let n_active = payload.n_active.max(1) as u32;
            let (slot_idx, entry) = payload.active[(i % n_active) as usize];
            shape = if payload.n_active > 1 {
                2
            } else if slot_idx == 0 {
                0
            } else {
                1
            };
            func_id = payload.kernel_ids[slot_idx as usize];
            let block = i / n_active;
            let core = cores.pick(&chip.topology, slot_idx as usize);
            let local = LocalContext {
                block_idx: block as i32,
                block_num: payload.block_num as i32,
            };
            let global = GlobalContext {
                sub_block_id: chip.topology.sub_block(core),
                core_id: core as i32,
            };
            let n_t = payload.tensors.len();
            for (a, t) in args.iter_mut().zip(&payload.tensors) {
                *a = t as *const _ as i64;
            }
            for (a, s) in args[n_t..].iter_mut().zip(&payload.scalars) {
                *a = *s as i64;
            }
            args[LOCAL_CONTEXT_INDEX] = &local as *const LocalContext as i64;
            args[GLOBAL_CONTEXT_INDEX] = &global as *const GlobalContext as i64;
            status.core.store(core, Ordering::Relaxed);
            status.since_ns.store(chip.now_ns(), Ordering::Relaxed);
            status.task.store(id.0, Ordering::Release);
            if recording {
                sub.core = core as u32;
                let reg = &mut rec.reg_task_id[core];
                *reg = reg.wrapping_add(1).max(1);
                sub.reg_task_id = *reg;
                sub.receive_ns = now_ns();
                if let Some(p) = &rec.perf {
                    p.read(&mut counters[0]);
                }
                sub.start_ns = now_ns();
            }
            if let Some(entry) = entry {
                // SAFETY: `entry` is a `kernel_entry` resolved from a library the chip keeps
                // loaded; `args` follows the kernel ABI (tensor pointers into the payload,
                // which outlives the call, then scalars, then the two context pointers).
                unsafe { entry(args.as_mut_ptr()) };
            }
            if recording {
                sub.end_ns = now_ns();
                if let Some(p) = &rec.perf {
                    p.read(&mut counters[1]);
                }
            }
            status.task.store(u64::MAX, Ordering::Release);
        }
        let last = slot.subtasks_done.fetch_add(1, Ordering::AcqRel) + 1 == total;
        let complete_start = if recording && rec.swimlane >= 3 {
            now_ns()
        } else {
            0
        };
        let depth_before = if rec.swimlane >= 3 {
            queue_depth(chip, shape)
        } else {
            [0; 3]
        };
        if last {
            chip.complete(id, inline);
        }
        if recording && sub.start_ns != 0 {
            sub.finish_ns = now_ns();
            if rec.swimlane > 0 {
                rec.records.subtasks.push(sub);
            }
            if rec.perf.is_some() || rec.pmu_on {
                let mut deltas = [0u64; MAX_COUNTERS];
                for k in 0..MAX_COUNTERS {
                    deltas[k] = counters[1][k].wrapping_sub(counters[0][k]);
                }
                rec.records.pmu.push(PmuRecord {
                    worker: worker as u32,
                    core: sub.core,
                    task: id.0,
                    func_id,
                    core_type: (chip.topology.core_type(sub.core as usize) != CoreType::Aic) as u8,
                    duration_ns: sub.end_ns - sub.start_ns,
                    counters: deltas,
                });
            }
            if rec.swimlane >= 3 {
                let depth_after = queue_depth(chip, shape);
                rec.records.phases.push(SchedPhaseRecord {
                    kind: SchedPhaseKind::Dispatch,
                    start_ns: sub.dispatch_ns,
                    end_ns: sub.start_ns,
                    loop_iter: rec.loop_iter,
                    tasks_processed: 1,
                    pop_hit: rec.pop_hit,
                    pop_miss: rec.pop_miss,
                    shared_at_start: depth_before,
                    shared_at_end: depth_before,
                });
                rec.pop_hit = 0;
                rec.pop_miss = 0;
                rec.records.phases.push(SchedPhaseRecord {
                    kind: SchedPhaseKind::Complete,
                    start_ns: complete_start,
                    end_ns: sub.finish_ns,
                    loop_iter: rec.loop_iter,
                    tasks_processed: last as u32,
                    pop_hit: 0,
                    pop_miss: 0,
                    shared_at_start: depth_before,
                    shared_at_end: depth_after,
                });
            }
        }
        if last {
            return;
        }
    }
}

/// The status of one stuck worker, for the timeout message.
pub fn describe_running(chip: &Chip) -> Vec<String> {
    let now = chip.now_ns();
    chip.workers
        .iter()
        .filter_map(|w| {
            let raw = w.task.load(Ordering::Acquire);
            if raw == u64::MAX {
                return None;
            }
            let id = TaskId(raw);
            let core = w.core.load(Ordering::Relaxed);
            let since = w.since_ns.load(Ordering::Relaxed);
            // SAFETY: a running task's slot cannot be reclaimed.
            let payload = unsafe { chip.slot(id).payload() };
            let func = payload.kernel_ids.iter().copied().find(|&k| k >= 0).unwrap_or(-1);
            let name = chip.kernels.name(func).unwrap_or("?");
            let kind = match chip.topology.core_type(core) {
                CoreType::Aic => "AIC",
                CoreType::Aiv => "AIV",
            };
            Some(format!(
                "task {id} (kernel {func} '{name}', submitted at {}) has run on {kind} core {} for {:.1} s",
                payload.site.render(),
                chip.topology.core_label(core),
                (now.saturating_sub(since)) as f64 / 1e9
            ))
        })
        .collect()
}
