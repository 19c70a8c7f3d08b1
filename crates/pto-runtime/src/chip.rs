//! The shared state of one run of the simulated chip, and the worker pool that executes it.
//!
//! # Task lifecycle
//!
//! 1. The orchestrator fills a slot, wires the task into its producers' fanout lists and
//!    releases its self-reference on `fanin_remaining` ([`crate::orchestrator`]).
//! 2. Whoever brings `fanin_remaining` to zero calls [`Chip::make_ready`]: a task with
//!    subtasks is pushed to the ready queue (once per worker that can help, at most one per
//!    subtask); a dummy or allocation task completes on the spot. A worker whose
//!    completion readies a single-unit task keeps the first such task and runs it next
//!    instead of queueing it (a chain's hop then needs no queue operation and wakes no one).
//!    The orchestrator collects the entries of tasks ready at submit and pushes them in
//!    batches ([`Chip::make_ready_deferred`], [`Chip::push_ready`]; when, see
//!    [`crate::orchestrator`]).
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
//! # Elastic pool
//!
//! The workers started with the run (`n_workers`) own clusters and serve until the end. A
//! kernel may hold its core for long (waiting for a flag another core sets, or for time to
//! pass); on the device the other cores carry on. So the run's own thread watches the
//! workers (`ElasticPool` in [`crate::run`](mod@crate::run)): when every one has been inside one unit for a
//! few milliseconds while subtasks wait, it starts extra workers ([`WorkerKind::Extra`]),
//! which run on any free core and exit once idle. Every thread takes the cores of a unit in
//! [`crate::cores::CoreTable`] before running it, so no core runs two subtasks at once
//! however many threads there are.
//!
//! # The reserve worker
//!
//! By default a simulated chip's pool has one worker per host CPU, and the last of them is
//! the reserve: it owns its clusters as any pool worker does, but runs ready work only
//! while the orchestration thread is off its CPU (waiting for ring space, TensorMap room
//! or a tensor's producers, or returned), and sleeps on [`Chip::reserve_wait`] while it
//! submits ([`Chip::orchestrator_wait`], [`Chip::orchestrator_returned`]). On two CPUs,
//! two workers and the orchestrator were three busy threads, and the submit path lost its
//! CPU to a worker's spin
//! (docs/DECISIONS.md, "The pool leaves the orchestrator a CPU"); the reserve gives that
//! CPU to the orchestrator while it submits and back to the work once it stops. Its lane
//! and its cores are a pool worker's, so the swimlane is the same shape as before.
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

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crossbeam_queue::ArrayQueue;
use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

use crate::config::{ChipConfig, N_RINGS};
use crate::cores::CoreTable;
use crate::dfx::{
    DumpCollector, DumpStage, PmuRecord, SchedPhaseKind, SchedPhaseRecord, SubtaskRecord,
    WorkerRecords,
};
use crate::error::{ErrorCode, RuntimeError};
use crate::exec::{subtask_label, ClusterStorage, ExecStatus, Executor, Placement, SimMemorySizes};
use crate::gang::{timed_run, Dispatch, Gang, SubtaskOutcome};
use crate::last_len::PerWorker;
use crate::memory::DeviceMemory;
use crate::monitor::ThreadRole;
use crate::perf::PerfGroup;
use crate::platform::{CoreType, Topology};
use crate::program::KernelTable;
use crate::task::{
    claim_subtask, GangKind, SlotState, TaskId, TaskPayload, TaskSlot, TensorTable,
    NUM_TIMING_SLOTS,
};

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

/// A ring's slots and the tensor table their payloads hold their first tensors in.
struct SlotTable {
    slots: Box<[TaskSlot]>,
    /// Read and written only through the slots' payloads.
    _tensors: TensorTable,
}

impl SlotTable {
    fn new(window: u64) -> SlotTable {
        let tensors = TensorTable::new(window as usize);
        let slots = (0..window as usize)
            // SAFETY: slot `i` alone gets cells `i` of `tensors`, which the table keeps
            // (declared after `slots`, so dropped after them).
            .map(|i| unsafe { TaskSlot::new(tensors.cells_of(i)) })
            .collect();
        SlotTable {
            slots,
            _tensors: tensors,
        }
    }
}

/// One scope-depth ring: its task window, heap and dep-pool frontiers.
///
/// Laid out by who writes what (`repr(C)`, so the order holds): the sizes the orchestrator
/// reads on every submit first, then `head` (the orchestrator's) on a line of its own, then
/// the reclaim frontiers (whichever thread reclaims) on the next. When the sizes shared a
/// line with the frontiers, reading `heap_size` was a tenth of an independent task's
/// samples: a worker's reclaim had just written the line.
#[repr(C)]
pub struct Ring {
    /// Ring index (0..4).
    pub index: usize,
    /// Task window size (power of two).
    pub window: u64,
    slots: OnceLock<SlotTable>,
    /// Heap capacity in bytes.
    pub heap_size: u64,
    heap: OnceLock<Result<DeviceMemory, String>>,
    /// Dep pool capacity (entries).
    pub dep_capacity: u64,
    /// Next local id (published by the orchestrator after filling a slot).
    pub head: CachePadded<AtomicU64>,
    /// Oldest local id not yet reclaimed.
    pub last_alive: AtomicU64,
    /// Cumulative heap bytes reclaimed.
    pub heap_tail: AtomicU64,
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
            heap_size,
            heap: OnceLock::new(),
            dep_capacity,
            head: CachePadded::new(AtomicU64::new(0)),
            last_alive: AtomicU64::new(0),
            heap_tail: AtomicU64::new(0),
            dep_tail: AtomicU64::new(0),
            reclaim_lock: Mutex::new(()),
            reclaim_pending: AtomicBool::new(false),
        }
    }

    /// The ring's slots, created on first use.
    fn slots(&self) -> &[TaskSlot] {
        &self.slots.get_or_init(|| SlotTable::new(self.window)).slots
    }

    /// Creates the ring's slots now, outside any later submit.
    pub fn create_slots(&self) {
        self.slots();
    }

    /// The slot of local id `local`.
    pub fn slot(&self, local: u64) -> &TaskSlot {
        &self.slots()[(local & (self.window - 1)) as usize]
    }

    /// Warms the cache for the orchestrator's next submits on this ring, `head` being the
    /// local id the next one takes: the lines of slot `head + 2`, and the heap blocks of
    /// slot `head + 1`'s tensor and argument vectors (whose pointers its slot, warmed by the
    /// previous call, holds). A slot is reused only a whole window later, so both are cold
    /// otherwise, and a submit that wires a task waits on them (docs/PERFORMANCE.md, "The
    /// chain hop"). Only the orchestrator's thread may call this: it is the only writer of
    /// payloads, so reading the vectors' pointers while workers still read a task in that
    /// slot is no race.
    #[inline]
    pub fn prefetch_ahead(&self, head: u64) {
        let line = |p: *const u8| {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch is a hint: it never faults, whatever the address.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
            };
            #[cfg(not(target_arch = "x86_64"))]
            let _ = p;
        };
        let next: *const TaskSlot = self.slot(head + 2);
        for off in (0..std::mem::size_of::<TaskSlot>()).step_by(64) {
            line(next.cast::<u8>().wrapping_add(off));
        }
        // SAFETY: see above; only the vectors' pointer fields are read, through a shared
        // reference that ends before this thread next writes a payload.
        let payload = unsafe { &*self.slot(head + 1).payload.get() };
        line(payload.tensors.as_ptr().cast());
        line(payload.args.as_ptr().cast());
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

/// The earliest dispatch and latest finish (ns since run start) of the tasks tagged with one
/// timing slot.
pub struct TimingSlot {
    first_dispatch: AtomicU64,
    last_finish: AtomicU64,
}

impl Default for TimingSlot {
    fn default() -> TimingSlot {
        TimingSlot {
            first_dispatch: AtomicU64::new(u64::MAX),
            last_finish: AtomicU64::new(0),
        }
    }
}

impl TimingSlot {
    /// A tagged task's subtask was dispatched at `ns`.
    pub fn dispatch(&self, ns: u64) {
        self.first_dispatch.fetch_min(ns, Ordering::Relaxed);
    }

    /// A tagged task finished at `ns`.
    pub fn finish(&self, ns: u64) {
        self.last_finish.fetch_max(ns, Ordering::Relaxed);
    }

    /// `(first dispatch, last finish)`, if a tagged task was dispatched.
    pub fn span(&self) -> Option<(u64, u64)> {
        let start = self.first_dispatch.load(Ordering::Relaxed);
        (start != u64::MAX).then(|| (start, self.last_finish.load(Ordering::Relaxed).max(start)))
    }
}

/// What a thread completing tasks carries from one completion to the next.
struct Completer<'a> {
    /// Where a worker takes the first single-unit consumer a completion readies, to run it
    /// next instead of queueing it (`Some(None)`: free; `None`: queue everything). A chain's
    /// hop then costs no queue push and no wake-up.
    keep: Option<&'a mut Option<TaskId>>,
    /// The submitted-task count as this thread last read it.
    seen_submitted: &'a mut u64,
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
    /// The orchestrator waiting for task completions or ring space.
    pub progress: Waiter,
    /// The run's own thread waiting for the end (every task done after the orchestration
    /// finished) or a fatal error. Apart from `progress` so that it is woken only by the
    /// completion that catches up with every submitted task, not by every completion.
    pub finished: Waiter,
    /// Tasks submitted (including dummy and allocation tasks). Written by the orchestrator
    /// alone (a release store) on every submit, so on a cache line of its own.
    pub submitted: CachePadded<AtomicU64>,
    /// Tasks completed (written by every completing thread).
    pub completed: CachePadded<AtomicU64>,
    /// The first fatal error.
    pub fatal: FatalLatch,
    /// Set when the orchestration thread has finished.
    pub orchestration_done: AtomicBool,
    /// Set while the orchestration thread is off its CPU: waiting, or finished
    /// ([`Chip::orchestrator_wait`], [`Chip::orchestrator_returned`]). Written only around
    /// the orchestrator's waits.
    orchestrator_idle: AtomicBool,
    /// The reserve worker waiting for the orchestrator to stop submitting.
    pub reserve_wait: Waiter,
    /// The pool worker that is the reserve (the last one), when the pool has one.
    pub reserve: Option<usize>,
    /// Tells workers to exit.
    pub shutdown: AtomicBool,
    /// The workers started with the run (the pool's floor; see "Elastic pool" above).
    pub n_workers: usize,
    /// Status of every worker thread: the first `n_workers` for the pool's own workers, the
    /// rest for extra workers the run's monitor starts (a slot is reused once its thread
    /// has been joined).
    pub workers: Box<[ExecStatus]>,
    /// Which logical cores are running a subtask.
    pub cores: CoreTable,
    /// Status of the gang helper threads (registered when they start).
    helpers: Mutex<Vec<Arc<ExecStatus>>>,
    /// Non-zero once the run is stopping (handed to kernels as `PtoSimContext::stop`).
    stop: AtomicU32,
    /// On-chip memory sizes of every core.
    pub sim_memory: SimMemorySizes,
    /// Per-cluster storage of TPUSH / TPOP pipes.
    pub cluster_storage: ClusterStorage,
    /// Task timing slots (`set_task_timing_slot`).
    pub timing: [TimingSlot; NUM_TIMING_SLOTS],
    last_site_file: std::sync::atomic::AtomicPtr<std::ffi::c_char>,
    last_site_line: std::sync::atomic::AtomicI32,
    /// Run start.
    pub t0: Instant,
    /// ns since `t0` when the last task finished.
    pub last_end_ns: AtomicU64,
    /// The args-dump collector, when the dump is on.
    pub dump: Option<Arc<DumpCollector>>,
    /// Device copies of the orchestration's tensor arguments. Owned by the chip so that a
    /// detached worker stuck in a kernel never sees them unmapped.
    /// (`None` for a tensor bound in place.)
    pub args_memory: Vec<Option<DeviceMemory>>,
    /// The timing model, when `--timing predicted` is on.
    pub timing_model: Option<Arc<pto_timing::Model>>,
    /// Predictions handed over by executors when they end (see `Executor`'s `Drop`).
    pub predicted: Mutex<Vec<crate::dfx::PredictedRecord>>,
}

impl Chip {
    /// Shared state for a run with `n_workers` workers, the last of them the reserve if
    /// `reserve` (see "The reserve worker" above).
    pub fn new(
        config: ChipConfig,
        kernels: Arc<KernelTable>,
        n_workers: usize,
        reserve: bool,
        dump: Option<Arc<DumpCollector>>,
        args_memory: Vec<Option<DeviceMemory>>,
        sim_memory: SimMemorySizes,
    ) -> Chip {
        let topology = config.platform.topology(n_workers);
        let r = &config.rings;
        let rings: [Ring; N_RINGS] =
            std::array::from_fn(|i| Ring::new(i, r.task_window[i], r.heap[i], r.dep_pool[i]));
        // Ring 0 (the outermost scope's) serves every run: its slots are created here,
        // before the device time starts, rather than on the first submit.
        rings[0].create_slots();
        // Every live task is queued at most once per worker (SPMD copies), and at most
        // `window - 1` tasks per ring are live.
        let live: u64 = r.task_window.iter().sum();
        let capacity = (live as usize)
            .saturating_mul(n_workers.max(1))
            .clamp(1024, 1 << 24);
        let chip = Chip {
            topology,
            kernels,
            rings,
            ready: ArrayQueue::new(capacity),
            work: Waiter::new(),
            progress: Waiter::new(),
            finished: Waiter::new(),
            submitted: CachePadded::new(AtomicU64::new(0)),
            completed: CachePadded::new(AtomicU64::new(0)),
            fatal: FatalLatch::new(),
            orchestration_done: AtomicBool::new(false),
            orchestrator_idle: AtomicBool::new(false),
            reserve_wait: Waiter::new(),
            reserve: n_workers.checked_sub(1).filter(|_| reserve),
            shutdown: AtomicBool::new(false),
            n_workers,
            workers: (0..n_workers + max_extra_workers(&topology, n_workers))
                .map(|_| ExecStatus::new())
                .collect(),
            cores: CoreTable::new(topology.n_cores()),
            helpers: Mutex::new(Vec::new()),
            stop: AtomicU32::new(0),
            sim_memory,
            cluster_storage: ClusterStorage::new(topology.n_clusters),
            timing: std::array::from_fn(|_| TimingSlot::default()),
            last_site_file: std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()),
            last_site_line: std::sync::atomic::AtomicI32::new(0),
            t0: Instant::now(),
            last_end_ns: AtomicU64::new(0),
            dump,
            args_memory,
            timing_model: config
                .dfx
                .predicted_timing
                .then(|| pto_timing::Model::shared(config.platform.name())),
            predicted: Mutex::new(Vec::new()),
            config,
        };
        // The extra workers' slots start unused (see `ElasticPool` in crate::run).
        for status in &chip.workers[n_workers..] {
            status.exited.store(true, Ordering::Relaxed);
        }
        chip
    }

    /// The orchestration thread's wait for progress (a completion, a reclaim): up to 10 ms,
    /// or until `ready()` holds once woken. The reserve worker runs ready work on its CPU
    /// meanwhile.
    pub fn orchestrator_wait(&self, ready: &dyn Fn() -> bool) {
        self.set_orchestrator_idle(true);
        self.progress.wait_until(Duration::from_millis(10), ready);
        self.set_orchestrator_idle(false);
    }

    /// Called by the orchestration thread once it has returned: from now on the reserve
    /// worker serves as the others do.
    pub fn orchestrator_returned(&self) {
        self.set_orchestrator_idle(true);
    }

    /// Marks the orchestration thread off its CPU (`true`) or back on it; waking the
    /// reserve worker when it goes off.
    fn set_orchestrator_idle(&self, idle: bool) {
        // A read-modify-write: the SeqCst order `Waiter::notify_one` needs.
        let was = self.orchestrator_idle.swap(idle, Ordering::SeqCst);
        if idle && !was && self.reserve.is_some() {
            self.reserve_wait.notify_one();
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
        self.make_ready_or_keep(id, inline, &mut None);
    }

    /// [`Chip::make_ready`], except that a single-unit task goes to `keep` instead of the
    /// ready queue when `keep` is `Some(None)` (a worker completing a task runs the one
    /// consumer it readies itself: no queue operation, no wake-up of a sleeping worker).
    fn make_ready_or_keep(
        &self,
        id: TaskId,
        inline: &mut Vec<TaskId>,
        keep: &mut Option<&mut Option<TaskId>>,
    ) {
        let copies = self.ready_copies(id, inline, keep);
        if copies == 0 {
            return;
        }
        for _ in 0..copies {
            self.push_raw(id.0);
        }
        self.wake_workers(copies);
    }

    /// [`Chip::make_ready`] for the orchestrator: the queue entries go to `batch`, which
    /// [`Chip::push_ready`] publishes later, several at a time (one fence and at most one
    /// wake-up per batch instead of per task).
    pub fn make_ready_deferred(&self, id: TaskId, inline: &mut Vec<TaskId>, batch: &mut Vec<u64>) {
        let copies = self.ready_copies(id, inline, &mut None);
        batch.extend(std::iter::repeat_n(id.0, copies));
    }

    /// Pushes the entries [`Chip::make_ready_deferred`] collected and wakes workers for them.
    pub fn push_ready(&self, batch: &mut Vec<u64>) {
        if batch.is_empty() {
            return;
        }
        for &raw in batch.iter() {
            self.push_raw(raw);
        }
        self.wake_workers(batch.len());
        batch.clear();
    }

    /// How many ready-queue entries task `id`, whose fanin reached zero, needs: 0 when it
    /// was handled here (a dummy, allocation or skipped task goes to `inline`; a
    /// single-unit task to a free `keep`), else one per worker that can help, at most one
    /// per unit.
    fn ready_copies(
        &self,
        id: TaskId,
        inline: &mut Vec<TaskId>,
        keep: &mut Option<&mut Option<TaskId>>,
    ) -> usize {
        let slot = self.slot(id);
        // SAFETY: the task is published (its fanin reached zero after wiring) and pending.
        let payload = unsafe { slot.payload() };
        let total = payload.units_total;
        if total == 0 {
            inline.push(id);
            return 0;
        }
        if let Some(p) = &payload.predicate {
            // Every producer is done, so the element holds its final value. SAFETY: the
            // address was checked against the tensor's buffer at submit.
            if !unsafe { p.holds() } {
                slot.skipped.store(true, Ordering::Relaxed);
                inline.push(id);
                return 0;
            }
        }
        if let Some(dump) = &self.dump {
            // SAFETY: as above; inputs are captured before any subtask can run.
            dump.capture(
                unsafe { self.slot(id).payload() },
                DumpStage::BeforeDispatch,
            );
        }
        if total == 1 {
            if let Some(next @ None) = keep.as_deref_mut() {
                *next = Some(id);
                return 0;
            }
        }
        (total as usize).min(self.n_workers).max(1)
    }

    /// Pushes one entry on the ready queue. The queue is sized for every live task times
    /// the workers; a full queue means workers are behind by more than that, so this
    /// yields until one pops (or the run has failed).
    fn push_raw(&self, mut raw: u64) {
        while let Err(back) = self.ready.push(raw) {
            raw = back;
            if self.fatal.is_set() {
                return;
            }
            std::thread::yield_now();
        }
    }

    /// Wakes sleeping workers for `pushed` new queue entries.
    fn wake_workers(&self, pushed: usize) {
        // SeqCst fence before reading the sleeper count (module docs).
        std::sync::atomic::fence(Ordering::SeqCst);
        if pushed > 1 {
            self.work.notify_all();
        } else {
            self.work.notify_one();
        }
    }

    /// Completes task `id` and any dummy tasks this readies, iteratively.
    pub fn complete(&self, id: TaskId, inline: &mut Vec<TaskId>) {
        let mut seen_submitted = 0;
        self.complete_with(
            id,
            inline,
            &mut Completer {
                keep: None,
                seen_submitted: &mut seen_submitted,
            },
        );
    }

    /// [`Chip::complete`] for a thread that carries a [`Completer`] from one completion to
    /// the next.
    fn complete_with(&self, id: TaskId, inline: &mut Vec<TaskId>, completer: &mut Completer<'_>) {
        inline.push(id);
        while let Some(id) = inline.pop() {
            self.complete_one(id, inline, completer);
        }
    }

    fn complete_one(&self, id: TaskId, inline: &mut Vec<TaskId>, completer: &mut Completer<'_>) {
        let slot = self.slot(id);
        // Release retained producers first, while this task is still pending: once it is
        // marked completed another thread may consume and reclaim its slot.
        // SAFETY: published, still-pending task: its payload is immutable and live.
        let payload = unsafe { slot.payload() };
        for &producer in &payload.retained {
            self.release(producer);
        }
        if let Some(k) = payload.timing_slot {
            self.timing[k as usize].finish(self.now_ns());
        }
        if let Some(dump) = &self.dump {
            if payload.subtasks_total > 0 && !slot.skipped.load(Ordering::Relaxed) {
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
            for consumer in fanout.consumers.iter() {
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
            self.make_ready_or_keep(consumer, inline, &mut completer.keep);
        }
        if consumed {
            self.try_advance(id.ring());
        }
        // The device window ends at the last completion. Only a completion that catches up
        // with every task submitted so far can be the last one (a task is counted as
        // submitted before it can run), so only those read the clock: while the
        // orchestrator stays ahead, completions skip the reading. The run reads
        // `last_end_ns` after joining every thread that completes tasks. The count the
        // orchestrator writes is read again only once this thread's completions reach the
        // value it last saw (any completion below it cannot be catching up), so a
        // completion does not pull that cache line from the orchestrator every time.
        let done = self.completed.fetch_add(1, Ordering::SeqCst) + 1;
        if done >= *completer.seen_submitted {
            *completer.seen_submitted = self.submitted.load(Ordering::SeqCst);
            if done == *completer.seen_submitted {
                self.last_end_ns.fetch_max(self.now_ns(), Ordering::Relaxed);
                // Every task submitted so far is done: the run may be over.
                self.finished.notify_all();
            }
        }
        self.progress.notify_all();
    }

    /// Releases one reference on `id` (a scope's or a retaining consumer's).
    pub fn release(&self, id: TaskId) {
        if self.release_ref(id) {
            self.try_advance(id.ring());
        }
    }

    /// Releases one reference on each of `ids` (a scope's tasks at its end), then reclaims
    /// once per ring a task was consumed on. One reclaim pass for the scope instead of one
    /// per consumed task: each pass takes the ring's reclaim lock, reads the frontiers the
    /// workers write and publishes new ones, which at one per task was a quarter of an
    /// independent task's orchestrator samples (docs/PERFORMANCE.md).
    pub fn release_all(&self, ids: &[TaskId]) {
        let mut rings = 0u32;
        for &id in ids {
            if self.release_ref(id) {
                rings |= 1 << id.ring();
            }
        }
        for ring in 0..N_RINGS {
            if rings & (1 << ring) != 0 {
                self.try_advance(ring);
            }
        }
    }

    /// Drops one reference on `id`; whether that consumed it (completed and every
    /// reference released), so that its slot may be reclaimed.
    fn release_ref(&self, id: TaskId) -> bool {
        let mut fanout = self.slot(id).fanout.lock();
        fanout.released += 1;
        let consumed =
            fanout.state == SlotState::Completed && fanout.released == fanout.fanout_count;
        if consumed {
            fanout.state = SlotState::Consumed;
        }
        consumed
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

    /// Entries in the ready queue (stale copies of SPMD tasks included).
    pub fn ready_len(&self) -> usize {
        self.ready.len()
    }

    /// Whether every submitted task has completed.
    pub fn quiescent(&self) -> bool {
        self.completed.load(Ordering::SeqCst) == self.submitted.load(Ordering::SeqCst)
    }

    /// Latches a fatal error and wakes everyone (blocking waits inside kernels give up).
    pub fn raise(&self, code: ErrorCode, message: String) {
        self.fatal.raise(code, message);
        self.stop.store(1, Ordering::SeqCst);
        std::sync::atomic::fence(Ordering::SeqCst);
        self.progress.notify_all();
        self.finished.notify_all();
        self.work.notify_all();
    }

    /// Tells kernels blocked in the PTO-ISA header to give up (the run is ending).
    pub fn stop_kernels(&self) {
        self.stop.store(1, Ordering::SeqCst);
    }

    /// The stop flag's address, for `PtoSimContext::stop`.
    pub fn stop_flag(&self) -> *const u32 {
        self.stop.as_ptr().cast_const()
    }

    /// Registers a gang helper's status (for timeout messages and shutdown); returns the
    /// helper's thread slot for the run's monitor.
    pub fn register_helper(&self, status: Arc<ExecStatus>) -> usize {
        let mut helpers = self.helpers.lock();
        helpers.push(status);
        self.workers.len() + helpers.len()
    }

    /// Records the orchestration's latest call site (for crash and timeout messages).
    pub fn note_orchestration_site(&self, site: crate::task::Site) {
        self.last_site_file
            .store(site.file.cast_mut(), Ordering::Relaxed);
        self.last_site_line.store(site.line, Ordering::Relaxed);
        if let Some(m) = &self.config.monitor {
            // SAFETY: a Site's file is a `__FILE__` literal of the loaded orchestration, or null.
            let file =
                (!site.file.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(site.file) });
            m.0.orchestration_site(file, site.line);
        }
    }

    /// The orchestration's latest call site, `file:line`.
    pub fn last_orchestration_site(&self) -> crate::task::Site {
        crate::task::Site {
            file: self.last_site_file.load(Ordering::Relaxed),
            line: self.last_site_line.load(Ordering::Relaxed),
        }
    }

    /// Whether every gang helper thread has exited.
    pub fn helpers_exited(&self) -> bool {
        self.helpers
            .lock()
            .iter()
            .all(|h| h.exited.load(Ordering::Acquire))
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
    next: [usize; 4],
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
            next: [0; 4],
        }
    }

    /// A logical core for cluster slot `slot` (0 = AIC, 1 = AIV0, 2 = AIV1).
    fn pick(&mut self, topology: &Topology, slot: usize) -> usize {
        let i = self.next[slot] % self.clusters.len();
        self.next[slot] = self.next[slot].wrapping_add(1);
        topology.core_of(self.clusters[i], slot)
    }

    /// Every cluster, starting at `start` (an extra worker's: it has no clusters of its own).
    fn all(topology: Topology, start: usize) -> WorkerCores {
        let n = topology.n_clusters.max(1);
        WorkerCores {
            clusters: (0..n).map(|i| (start + i) % n).collect(),
            next: [0; 4],
        }
    }

    /// A whole cluster (for a MIX block or the first block of a sync-start task).
    fn pick_cluster(&mut self) -> usize {
        let i = self.next[3] % self.clusters.len();
        self.next[3] = self.next[3].wrapping_add(1);
        self.clusters[i]
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
/// How long a worker that found no free core for its subtask sleeps before looking again.
const CORE_WAIT: Duration = Duration::from_micros(100);

/// How many of a worker's ready-queue depth readings (two per task: at the start and the
/// end of its completion phase) one sample of the queue serves; see [`Recorder::depth`].
const DEPTH_SAMPLE_EVERY: u32 = 64;

/// Per-worker diagnostic state.
struct Recorder {
    swimlane: u8,
    records: WorkerRecords,
    perf: Option<PerfGroup>,
    pmu_on: bool,
    loop_iter: u32,
    pop_hit: u32,
    pop_miss: u32,
    /// The ready queue's depth as last sampled, and the readings it has served since.
    depth: i16,
    depth_served: u32,
    /// The end of the completion phase that handed this worker its next task
    /// ([`Worker::next`]), which serves as that task's dispatch stamp; 0 when none.
    handoff_ns: u64,
}

/// The lengths of each worker's record vectors at the end of the process's last run
/// ([`crate::last_len`]).
static LAST_SUBTASKS: PerWorker = PerWorker::new();
static LAST_PHASES: PerWorker = PerWorker::new();
static LAST_PMU: PerWorker = PerWorker::new();

impl Recorder {
    /// Remembers, for worker `index`'s next run, the lengths of the record vectors this
    /// run filled (an empty one, its kind switched off, keeps the last length).
    fn keep_lengths(&self, index: usize) {
        LAST_SUBTASKS.of(index).keep(&self.records.subtasks);
        LAST_PHASES.of(index).keep(&self.records.phases);
        LAST_PMU.of(index).keep(&self.records.pmu);
    }

    /// Worker `index`'s recorder: its record vectors reserve what this worker's last run
    /// kept of each kind that is switched on.
    fn new(chip: &Chip, index: usize) -> Recorder {
        let dfx = &chip.config.dfx;
        let pmu_on = dfx.pmu > 0;
        let perf = if chip.config.samples_host_counters() {
            PerfGroup::open()
        } else {
            None
        };
        let mut records = WorkerRecords::default();
        if dfx.swimlane > 0 {
            records.subtasks = LAST_SUBTASKS.of(index).vec(0);
        }
        if dfx.swimlane >= 3 {
            records.phases = LAST_PHASES.of(index).vec(0);
        }
        if pmu_on {
            records.pmu = LAST_PMU.of(index).vec(0);
        }
        if let Some(p) = &perf {
            records.pmu_names = p.names().to_vec();
        }
        Recorder {
            swimlane: dfx.swimlane,
            records,
            perf,
            pmu_on,
            loop_iter: 0,
            pop_hit: 0,
            pop_miss: 0,
            depth: 0,
            depth_served: 0,
            handoff_ns: 0,
        }
    }

    fn active(&self) -> bool {
        self.swimlane > 0 || self.pmu_on
    }

    /// The ready queue's depth for a scheduler phase of a task of shape `shape` (its
    /// `[aic, aiv, mix]` slot holds it, the others 0). The queue is sampled on the first
    /// reading and then once every [`DEPTH_SAMPLE_EVERY`] readings; the ones between
    /// repeat the last sample. Its length is two cache lines the orchestrator and the
    /// other workers write on every push and pop, so a sample per phase cost more than the
    /// rest of the phase records (docs/DECISIONS.md).
    fn depth(&mut self, chip: &Chip, shape: usize) -> [i16; 3] {
        if self.depth_served == 0 {
            self.depth = chip.ready.len().min(i16::MAX as usize) as i16;
        }
        self.depth_served = (self.depth_served + 1) % DEPTH_SAMPLE_EVERY;
        // Built whole, not stored into by index: a 2-byte store then read back as part of
        // the array stalls store-to-load forwarding (seen in `perf annotate`).
        let at = |k: usize| if shape == k { self.depth } else { 0 };
        [at(0), at(1), at(2)]
    }
}

/// What a worker thread is.
#[derive(Clone, Debug)]
pub enum WorkerKind {
    /// One of the pool's own workers: it owns clusters (see [`core_to_worker`]) and serves
    /// until the run shuts down (the reserve, [`Chip::reserve`], only while the
    /// orchestrator is idle).
    Pool,
    /// An extra worker the run's monitor started while every worker was held by a long
    /// kernel: it runs `first` (a task with subtasks left to claim) if given, then whatever
    /// is ready, on any free core, and exits once it finds nothing to do.
    Extra {
        /// The task to help with first.
        first: Option<TaskId>,
        /// Set (and the thread unparked) once the monitor has started every extra worker of
        /// its batch. The thread gets ready, then waits for it: the monitor starts a batch
        /// while kernels spin on every host CPU, and threads that begin to spin one by one
        /// as they are started keep the later ones of the batch from getting a CPU at all
        /// for a long time; released together, they are all woken threads and each gets to
        /// its kernel promptly.
        go: Arc<AtomicBool>,
    },
}

/// The body of worker thread `index` (a slot of [`Chip::workers`]); returns what it
/// recorded.
pub fn worker_main(chip: &Chip, index: usize, kind: WorkerKind) -> WorkerRecords {
    let status = &chip.workers[index];
    let (cores, next, go) = match kind {
        WorkerKind::Pool => (
            WorkerCores::new(chip.topology, index, chip.n_workers),
            None,
            None,
        ),
        WorkerKind::Extra { first, go } => {
            (WorkerCores::all(chip.topology, index), first, Some(go))
        }
    };
    let extra = go.is_some();
    let reserve = chip.reserve == Some(index);
    let records = std::thread::scope(|scope| {
        let mut w = Worker {
            chip,
            index,
            extra,
            reserve,
            cores,
            inline: Vec::with_capacity(64),
            next,
            seen_submitted: 0,
            rec: Recorder::new(chip, index),
            exec: Executor::new(chip, status, 1 + index, ThreadRole::Worker(index)),
            gang: Gang::new(chip, scope),
            places: Vec::new(),
            outcomes: Vec::new(),
        };
        if let Some(go) = &go {
            while !go.load(Ordering::Acquire) && !chip.shutdown.load(Ordering::Acquire) {
                std::thread::park_timeout(Duration::from_millis(1));
            }
        }
        w.serve();
        let Worker { gang, rec, .. } = w;
        gang.shutdown();
        rec.keep_lengths(index);
        rec.records
    });
    status.exited.store(true, Ordering::Release);
    records
}

/// One worker's state (see [`worker_main`]).
struct Worker<'scope, 'env: 'scope> {
    chip: &'env Chip,
    index: usize,
    /// An extra worker (see [`WorkerKind::Extra`]).
    extra: bool,
    /// The reserve ([`Chip::reserve`]).
    reserve: bool,
    cores: WorkerCores,
    inline: Vec<TaskId>,
    /// A consumer this worker readied by a completion and runs next, bypassing the ready
    /// queue ([`Completer::keep`]).
    next: Option<TaskId>,
    /// [`Completer::seen_submitted`].
    seen_submitted: u64,
    rec: Recorder,
    exec: Executor<'env>,
    gang: Gang<'scope, 'env>,
    /// Placements of the unit being run (capacity kept across tasks).
    places: Vec<Placement>,
    /// Their outcomes.
    outcomes: Vec<SubtaskOutcome>,
}

impl<'scope, 'env: 'scope> Worker<'scope, 'env> {
    fn serve(&mut self) {
        let chip = self.chip;
        if let Some(first) = self.next.take() {
            self.run_chain(first);
        }
        'outer: loop {
            let mut spins = 0u32;
            let mut slept = false;
            let raw = loop {
                if self.reserve && !chip.orchestrator_idle.load(Ordering::Acquire) {
                    self.stand_by();
                    if chip.shutdown.load(Ordering::Acquire) {
                        break 'outer;
                    }
                    spins = 0;
                    continue;
                }
                if let Some(raw) = chip.ready.pop() {
                    break raw;
                }
                self.rec.pop_miss = self.rec.pop_miss.wrapping_add(1);
                if chip.shutdown.load(Ordering::Acquire) {
                    break 'outer;
                }
                spins += 1;
                if spins < SPIN_ROUNDS {
                    std::hint::spin_loop();
                } else if spins < SPIN_ROUNDS + 16 {
                    std::thread::yield_now();
                } else if self.extra && slept {
                    // An extra worker leaves once it has waited once for nothing.
                    break 'outer;
                } else {
                    chip.work.wait_until(IDLE_WAIT, &|| {
                        !chip.ready.is_empty() || chip.shutdown.load(Ordering::Acquire)
                    });
                    spins = SPIN_ROUNDS;
                    slept = true;
                }
            };
            self.run_chain(TaskId(raw));
        }
    }

    /// The reserve's wait while the orchestrator submits. A push's wake-up may have gone
    /// to this thread instead of another worker: it is passed on first.
    fn stand_by(&self) {
        let chip = self.chip;
        if !chip.ready.is_empty() {
            std::sync::atomic::fence(Ordering::SeqCst);
            chip.work.notify_one();
        }
        chip.reserve_wait.wait_until(IDLE_WAIT, &|| {
            chip.orchestrator_idle.load(Ordering::Acquire) || chip.shutdown.load(Ordering::Acquire)
        });
    }

    /// Runs task `id`, then each consumer a completion hands to this worker.
    fn run_chain(&mut self, mut id: TaskId) {
        loop {
            self.rec.pop_hit = self.rec.pop_hit.wrapping_add(1);
            self.rec.loop_iter = self.rec.loop_iter.wrapping_add(1);
            self.run_task(id);
            // A consumer the completion handed to this worker runs at once.
            match self.next.take() {
                Some(next) => id = next,
                None => break,
            }
        }
    }

    /// Where the subtasks of claim unit `unit` of `payload` run: fills `self.places` and
    /// takes their cores. First the cores this worker would pick on its own (its clusters, in
    /// rotation); if another thread runs on one of them, any free core of the right kind
    /// (cluster, for a MIX block or a sync-start task), waiting until enough are free.
    /// `false` if the run failed while waiting (nothing is taken then).
    fn place(&mut self, payload: &TaskPayload, unit: u32) -> bool {
        let chip = self.chip;
        let topology = &chip.topology;
        let n_active = payload.n_active.max(1) as u32;
        self.places.clear();
        match payload.gang {
            GangKind::Single => {
                let active_index = (unit % n_active) as u8;
                let slot = payload.active[active_index as usize].slot as usize;
                let core = self.cores.pick(topology, slot);
                if let Some(reg) = chip.cores.try_take(core) {
                    self.places.push(Placement {
                        core,
                        cluster: topology.cluster_of(core),
                        block: unit / n_active,
                        active_index,
                        reg,
                    });
                    return true;
                }
                let first = topology.cluster_of(core);
                let block = unit / n_active;
                self.wait_for_cores(|places| {
                    take_any_core(chip, first, slot, places, block, active_index)
                })
            }
            GangKind::Block => {
                let cluster = self.cores.pick_cluster();
                let block = unit;
                self.wait_for_cores(|places| {
                    (0..topology.n_clusters).any(|i| {
                        let c = (cluster + i) % topology.n_clusters;
                        take_cluster(chip, payload, c, block, places)
                    })
                })
            }
            GangKind::Whole => {
                // Every block at once: consecutive clusters (or AIV cores, for AIV tasks)
                // from this worker's next one, skipping those another thread runs on.
                let first = self.cores.pick_cluster();
                let aiv_only = n_active == 1 && payload.active[0].slot != 0;
                self.wait_for_cores(|places| {
                    if aiv_only {
                        let lanes = 2 * topology.n_clusters;
                        let mut b = 0;
                        for i in 0..lanes {
                            if b == payload.block_num {
                                break;
                            }
                            let lane = (2 * first + i) % lanes;
                            let cluster = lane / 2;
                            let core = topology.core_of(cluster, 1 + lane % 2);
                            if let Some(reg) = chip.cores.try_take(core) {
                                places.push(Placement {
                                    core,
                                    cluster,
                                    block: b,
                                    active_index: 0,
                                    reg,
                                });
                                b += 1;
                            }
                        }
                        return b == payload.block_num;
                    }
                    let mut b = 0;
                    for i in 0..topology.n_clusters {
                        if b == payload.block_num {
                            break;
                        }
                        let c = (first + i) % topology.n_clusters;
                        if take_cluster(chip, payload, c, b, places) {
                            b += 1;
                        }
                    }
                    b == payload.block_num
                })
            }
        }
    }

    /// Runs `take` (which pushes the places whose cores it took to its argument and says
    /// whether it found all it needs) until it succeeds, giving back what a failed attempt
    /// took and backing off between attempts; `false` if the run fails meanwhile.
    fn wait_for_cores(&mut self, mut take: impl FnMut(&mut Vec<Placement>) -> bool) -> bool {
        let chip = self.chip;
        let mut attempts = 0u32;
        loop {
            if take(&mut self.places) {
                return true;
            }
            for p in self.places.drain(..) {
                chip.cores.give_back(p.core);
            }
            if chip.fatal.is_set() || chip.shutdown.load(Ordering::Acquire) {
                return false;
            }
            attempts += 1;
            if attempts < 16 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(CORE_WAIT);
            }
        }
    }

    /// Gives back the cores of the unit just run.
    fn give_back_cores(&self) {
        for p in &self.places {
            self.chip.cores.give_back(p.core);
        }
    }

    fn run_task(&mut self, id: TaskId) {
        let chip = self.chip;
        let slot = chip.slot(id);
        let recording = self.rec.active();
        loop {
            // Only swimlane records show the dispatch (PMU rows have the kernel's duration).
            // Ordered: it must not precede the completion (on another thread) that readied
            // the task.
            // A task handed over by this worker's own completion takes that phase's end
            // reading: only the previous task's records were pushed since.
            let dispatch_ns = match std::mem::take(&mut self.rec.handoff_ns) {
                0 if self.rec.swimlane > 0 => crate::clock::stamp_ordered(),
                handoff => handoff,
            };
            let Some((unit, total)) = claim_subtask(slot, id) else {
                return;
            };
            // SAFETY: a successful claim means the slot holds this (published) task, and it
            // cannot be reclaimed before the claimed unit is counted done below.
            let payload = unsafe { slot.payload() };
            let shape = if payload.n_active > 1 {
                2
            } else if payload.active[0].slot == 0 {
                0
            } else {
                1
            };
            if let Some(k) = payload.timing_slot {
                chip.timing[k as usize].dispatch(chip.now_ns());
            }
            let ran = !chip.fatal.is_set() && self.place(payload, unit);
            if ran {
                // Inside a unit until the second count (odd): what the run's monitor reads.
                let units = &self.exec.status().units;
                units.store(units.load(Ordering::Relaxed) + 1, Ordering::Release);
                let n = self.places.len();
                if self.outcomes.len() < n {
                    self.outcomes.resize(n, SubtaskOutcome::default());
                }
                let d = Dispatch {
                    id,
                    payload,
                    recording,
                };
                if n == 1 {
                    self.outcomes[0] =
                        timed_run(&mut self.exec, self.rec.perf.as_mut(), &d, self.places[0]);
                } else {
                    self.gang.run(
                        &mut self.exec,
                        self.rec.perf.as_mut(),
                        &d,
                        &self.places,
                        &mut self.outcomes,
                    );
                }
                self.give_back_cores();
                units.store(units.load(Ordering::Relaxed) + 1, Ordering::Release);
            }
            // Stamped before this unit counts as done: once the last unit completes the
            // task its successors may be dispatched at once, and no record may show a
            // predecessor finishing after a successor's dispatch.
            // A single subtask's end reading serves: nothing happened since.
            let finish_ns = match (recording && ran, self.places.len()) {
                (false, _) => 0,
                (true, 1) if self.outcomes[0].end_ns != 0 => self.outcomes[0].end_ns,
                (true, _) => crate::clock::stamp(),
            };
            let last = slot.subtasks_done.fetch_add(1, Ordering::AcqRel) + 1 == total;
            // Completion processing starts right after the count (one atomic add later).
            let complete_start = if recording && self.rec.swimlane >= 3 {
                finish_ns
            } else {
                0
            };
            let depth_before = if self.rec.swimlane >= 3 {
                self.rec.depth(chip, shape)
            } else {
                [0; 3]
            };
            if last {
                chip.complete_with(
                    id,
                    &mut self.inline,
                    &mut Completer {
                        keep: Some(&mut self.next),
                        seen_submitted: &mut self.seen_submitted,
                    },
                );
            }
            if recording && ran {
                let complete_end = if self.rec.swimlane >= 3 {
                    crate::clock::stamp()
                } else {
                    0
                };
                self.record(
                    id,
                    dispatch_ns,
                    finish_ns,
                    (complete_start, complete_end),
                    depth_before,
                    shape,
                    last,
                );
                if self.next.is_some() {
                    self.rec.handoff_ns = complete_end;
                }
            }
            if last {
                return;
            }
        }
    }

    /// Records the subtasks of the unit just run (swimlane, PMU, scheduler phases).
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        id: TaskId,
        dispatch_ns: u64,
        finish_ns: u64,
        (complete_start, complete_end): (u64, u64),
        depth_before: [i16; 3],
        shape: usize,
        last: bool,
    ) {
        let chip = self.chip;
        let rec = &mut self.rec;
        let mut first_start = 0;
        for (place, out) in self.places.iter().zip(&self.outcomes) {
            if out.start_ns == 0 {
                continue;
            }
            if first_start == 0 {
                first_start = out.start_ns;
            }
            if rec.swimlane > 0 {
                rec.records.subtasks.push(SubtaskRecord {
                    core: place.core as u32,
                    task: id.0,
                    reg_task_id: place.reg,
                    dispatch_ns,
                    receive_ns: out.receive_ns,
                    start_ns: out.start_ns,
                    end_ns: out.end_ns,
                    finish_ns,
                });
            }
            if rec.pmu_on {
                rec.records.pmu.push(PmuRecord {
                    worker: self.index as u32,
                    core: place.core as u32,
                    task: id.0,
                    func_id: out.func_id,
                    core_type: (chip.topology.core_type(place.core) != CoreType::Aic) as u8,
                    duration_ns: out.end_ns.saturating_sub(out.start_ns),
                    counters: out.counters,
                });
            }
        }
        if rec.swimlane >= 3 && first_start != 0 {
            let depth_after = rec.depth(chip, shape);
            rec.records.phases.push(SchedPhaseRecord {
                kind: SchedPhaseKind::Dispatch,
                start_ns: dispatch_ns,
                end_ns: first_start,
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
                end_ns: complete_end,
                loop_iter: rec.loop_iter,
                tasks_processed: last as u32,
                pop_hit: 0,
                pop_miss: 0,
                shared_at_start: depth_before,
                shared_at_end: depth_after,
            });
        }
    }
}

/// Takes a free core for a subtask of cluster slot `slot` (0 = AIC; an AIV subtask may run
/// on either AIV core of a cluster, its own lane first), searching the clusters from
/// `first`; pushes its placement. Whether one was free.
fn take_any_core(
    chip: &Chip,
    first: usize,
    slot: usize,
    places: &mut Vec<Placement>,
    block: u32,
    active_index: u8,
) -> bool {
    let topology = &chip.topology;
    let lanes: &[usize] = match slot {
        0 => &[0],
        1 => &[1, 2],
        _ => &[2, 1],
    };
    for i in 0..topology.n_clusters {
        let cluster = (first + i) % topology.n_clusters;
        for &lane in lanes {
            let core = topology.core_of(cluster, lane);
            if let Some(reg) = chip.cores.try_take(core) {
                places.push(Placement {
                    core,
                    cluster,
                    block,
                    active_index,
                    reg,
                });
                return true;
            }
        }
    }
    false
}

/// Takes the cores of `cluster` that a block of `payload` runs on (one per active slot),
/// all or none; pushes their placements. Whether all were free.
fn take_cluster(
    chip: &Chip,
    payload: &TaskPayload,
    cluster: usize,
    block: u32,
    places: &mut Vec<Placement>,
) -> bool {
    let topology = &chip.topology;
    let before = places.len();
    for k in 0..payload.n_active.max(1) {
        let core = topology.core_of(cluster, payload.active[k as usize].slot as usize);
        match chip.cores.try_take(core) {
            Some(reg) => places.push(Placement {
                core,
                cluster,
                block,
                active_index: k,
                reg,
            }),
            None => {
                for p in places.drain(before..) {
                    chip.cores.give_back(p.core);
                }
                return false;
            }
        }
    }
    true
}

/// How many extra workers the monitor may start beyond the pool's `n_workers`: enough for
/// one thread per logical core.
pub fn max_extra_workers(topology: &Topology, n_workers: usize) -> usize {
    topology.n_cores().saturating_sub(n_workers)
}

/// The status of every stuck executing thread, for the timeout message.
pub fn describe_running(chip: &Chip) -> Vec<String> {
    let now = crate::dfx::coarse_now_ns();
    let helpers = chip.helpers.lock();
    chip.workers
        .iter()
        .chain(helpers.iter().map(|h| &**h))
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
            let slot = chip.topology.core_slot(core);
            let func = payload.kernel_ids[slot];
            let waiting = w
                .waiting_on()
                .map(|what| format!(", blocked in {what}"))
                .unwrap_or_default();
            Some(format!(
                "{} has run for {:.1} s{waiting}",
                subtask_label(chip, id, payload, core, func),
                (now.saturating_sub(since)) as f64 / 1e9
            ))
        })
        .collect()
}
