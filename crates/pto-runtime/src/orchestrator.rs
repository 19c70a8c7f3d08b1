//! The orchestrator: the submit path, scopes and blocking tensor access, on the
//! orchestration thread.
//!
//! Everything here runs on the one thread that called the orchestration entry, so the
//! TensorMap, the scope stack and the ring frontiers it allocates from (`head`, heap top,
//! dep-pool top) are plain fields. What other threads need (ring heads, slots) is published
//! through [`Chip`].
//!
//! # Submit, step by step (Simpler's `submit_task_common`)
//!
//! 1. Validate the arguments (a latched argument error, unknown kernel ids, views outside
//!    their buffer, ...): a problem is a fatal `INVALID_ARGS` naming the task and the line.
//! 2. Allocate a slot in the current ring's task window and the outputs' bytes in its heap
//!    (back-pressure: wait for reclaim; if every submitted task has completed and there is
//!    still no room, the scope itself holds the ring: a deadlock with the ring, limit and fix).
//! 3. Compute the fanin: explicit deps (skipping retired ones), creator edges to each
//!    tensor's owner (WAIT|RETAIN), and, outside manual scopes, TensorMap lookups for
//!    INPUT / INOUT (WAIT; an INOUT covering an entry supersedes it).
//! 4. Register INOUT / OUTPUT_EXISTING regions in the TensorMap (outside manual scopes).
//! 5. Fill the payload, publish the slot, wire the task into each live producer's fanout
//!    list, then drop the self-reference (a task with no producer to wire takes none): a
//!    task whose producers are all done is ready now.

use std::ffi::c_char;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::chip::Chip;
use crate::config::N_RINGS;
use crate::deps::{DepLog, DepRecorder, EdgeRecord, EdgeSource, TaskRecord};
use crate::dfx::{OrchRecord, ScopeSample};
use crate::dtype;
use crate::error::ErrorCode;
use crate::fanin::{Fanin, FaninList};
use crate::ffi::{
    predicate_op, ChipTensor, MixedKernels, TaskArgsData, TaskOutputTensors, TensorArgType,
    TensorCreateInfo, DEP_RETAIN, DEP_WAIT, INVALID_TASK_ID, MAX_SCALAR_ARGS, MAX_TENSOR_ARGS,
    MAX_TENSOR_DIMS,
};
use crate::last_len::LastLen;
use crate::platform::{CoreType, Platform};
use crate::ring_census::{Resource, RingCensus};
use crate::task::Site;
use crate::task::{
    pack_claim, ActiveSlot, ArgInfo, GangKind, Predicate, SlotState, TaskId, TaskPayload, TaskSlot,
    MAX_SUBTASKS, NUM_TIMING_SLOTS,
};
use crate::tensor_map::{TensorMap, ViewGeometry};

/// Heap allocations are aligned to this many bytes per output tensor.
pub const HEAP_ALIGN: u64 = 1024;
/// Most scopes open at once (`PTO2_MAX_SCOPE_DEPTH`).
pub const MAX_SCOPE_DEPTH: usize = 64;

/// Scope modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScopeMode {
    /// Dependencies inferred through the TensorMap.
    Auto,
    /// Explicit dependencies (and creator edges) only.
    Manual,
}

struct Scope {
    mode: ScopeMode,
    site: Site,
    first_task: usize,
}

/// Indices into [`Orchestrator::seen_frontiers`].
const ALIVE: usize = 0;
const HEAP_TAIL: usize = 1;
const DEP_TAIL: usize = 2;

/// What the orchestration thread reports back when it finishes.
#[derive(Debug, Default, Clone)]
pub struct OrchestratorSummary {
    /// Submits ignored because a fatal error was latched before them.
    pub ignored_submits: u64,
    /// Where the first ignored submit happened.
    pub first_ignored_site: Option<String>,
    /// Tasks submitted (kernel, dummy and allocation tasks).
    pub n_tasks: u64,
    /// After a ring ran out of room: what the whole run needs there (see `ring_census`).
    pub capacity_advice: Option<String>,
}

/// The orchestrator state (see the module docs).
pub struct Orchestrator {
    chip: Arc<Chip>,
    tensor_map: TensorMap,
    heads: [u64; N_RINGS],
    heap_top: [u64; N_RINGS],
    dep_top: [u64; N_RINGS],
    /// Each ring's reclaim frontiers (`last_alive`, `heap_tail`, `dep_tail`) as this thread
    /// last read them. They only advance, so a space check that passes against these
    /// passes against the live values; the live ones, on lines the reclaiming workers
    /// write, are read again only when it fails.
    seen_frontiers: [[u64; 3]; N_RINGS],
    scopes: Vec<Scope>,
    scope_tasks: Vec<TaskId>,
    fanin: FaninList,
    /// This submit's distinct explicit dependencies, for the dependency log (dep_gen);
    /// empty between submits ([`Orchestrator::log_explicit`] empties it).
    explicit: FaninList,
    inline: Vec<TaskId>,
    /// Queue entries of tasks that were ready at submit, not pushed yet (see
    /// [`Orchestrator::flush_ready`]).
    ready_batch: std::cell::RefCell<ReadyBatch>,
    summary: OrchestratorSummary,
    orch_done: bool,
    deps: Option<DepRecorder>,
    orch_records: Vec<OrchRecord>,
    scope_samples: Vec<ScopeSample>,
    n_submits: u32,
    census: Option<RingCensus>,
}

/// Logs a creator edge `owner → me` through argument `arg`, unless this submit's edges
/// (from `first_edge` on) already name `owner`: as in Simpler's replay, a producer named
/// explicitly, as a creator or through the TensorMap gets no second creator edge, and an
/// explicit edge to it takes on wait+retain instead.
fn log_creator_edge(log: &mut DepLog, first_edge: usize, owner: TaskId, me: TaskId, arg: usize) {
    let mine = &mut log.edges[first_edge..];
    if mine.iter().any(|e| e.pred == owner) {
        for e in mine.iter_mut() {
            if e.pred == owner && e.source == EdgeSource::Explicit {
                e.wait = true;
                e.retain = true;
            }
        }
        return;
    }
    log.edges.push(EdgeRecord {
        pred: owner,
        succ: me,
        arg: arg as i32,
        source: EdgeSource::Creator,
        wait: true,
        retain: true,
        overlap: None,
        consumer: log.open_arg_view(arg),
        producer: None,
    });
}

/// Opens task records in `log` with the arguments of a validated submit: each one's type
/// and, except for runtime-allocated outputs, its view.
fn log_args(log: &mut DepLog, args: &TaskArgsData) {
    log.open_task();
    for i in 0..args.n_tensors as usize {
        let ty = TensorArgType::from_raw(args.tensors[i].arg_type).unwrap_or(TensorArgType::Input);
        // SAFETY: validate() checked every slot reference is non-null.
        let t = (ty != TensorArgType::Output).then(|| unsafe { args.tensor(i) });
        log.push_arg(ty, t);
    }
}

/// Ready-queue entries the orchestrator holds back so that it pushes several at once.
struct ReadyBatch {
    entries: Vec<u64>,
    /// Submits since the oldest entry was collected.
    age: u32,
    /// Submits after which the entries are pushed ([`READY_BATCH_SUBMITS`], or
    /// `PTO_READY_BATCH`: 1 pushes each task at its submit, as Simpler does).
    limit: u32,
}

/// The batch limit: `PTO_READY_BATCH` (1..=1024) when set, else [`READY_BATCH_SUBMITS`].
/// Read once per run; the runtime benchmarks compare the two in one invocation.
fn ready_batch_limit() -> u32 {
    let Ok(v) = std::env::var("PTO_READY_BATCH") else {
        return READY_BATCH_SUBMITS;
    };
    match v.trim().parse::<u32>() {
        Ok(n) if (1..=1024).contains(&n) => n,
        _ => {
            tracing::warn!(
                "PTO_READY_BATCH={v:?} is not a number of submits in 1..=1024; using {READY_BATCH_SUBMITS}"
            );
            READY_BATCH_SUBMITS
        }
    }
}

/// At most this many submits pass between a task found ready at its submit and its push
/// on the ready queue. A batch is also pushed once it holds [`READY_BATCH_TASKS`] entries,
/// when a task without producers is submitted, at every scope end and before the
/// orchestrator waits for anything (ring space, a tensor's producers), so no task it holds
/// can be what it waits for. On a chain the hold lets the worker then run the held task's
/// successors straight from their producers' completions (no queue, no wake-up). A task
/// without producers has no successor that the hold could help, and holding those (four at
/// a time) can leave the workers idle between batches: per independent task, medians
/// 0.139 µs held against 0.133 pushed at once in eight alternating invocations on a quiet
/// machine, 0.131–0.197 against 0.131–0.133 in an earlier five (docs/PERFORMANCE.md,
/// eighth round).
const READY_BATCH_SUBMITS: u32 = 16;

/// A batch holding this many entries is pushed at once (see [`READY_BATCH_SUBMITS`]).
const READY_BATCH_TASKS: usize = 4;

/// The length of the orchestrator's swimlane records at the end of the process's last run
/// ([`crate::last_len`]).
static LAST_ORCH_RECORDS: LastLen = LastLen::new();

/// An empty `TaskOutputTensors` (what a rejected submit returns).
pub fn empty_outputs() -> TaskOutputTensors {
    TaskOutputTensors {
        task_id: INVALID_TASK_ID,
        count: 0,
        pad0: 0,
        tensors: [std::ptr::null(); MAX_TENSOR_ARGS],
    }
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

impl Orchestrator {
    /// A fresh orchestrator for `chip`.
    pub fn new(chip: Arc<Chip>) -> Orchestrator {
        let capacity = chip.config.rings.tensormap_pool;
        Orchestrator {
            // A run that records dependencies keeps retired writers in its one map.
            tensor_map: if chip.config.record_deps {
                TensorMap::keeping(capacity)
            } else {
                TensorMap::new(capacity)
            },
            heads: [0; N_RINGS],
            heap_top: [0; N_RINGS],
            dep_top: [0; N_RINGS],
            seen_frontiers: [[0; 3]; N_RINGS],
            scopes: Vec::with_capacity(16),
            scope_tasks: Vec::with_capacity(1024),
            fanin: FaninList::with_capacity(64),
            explicit: FaninList::with_capacity(0),
            inline: Vec::with_capacity(64),
            ready_batch: std::cell::RefCell::new(ReadyBatch {
                entries: Vec::with_capacity(2 * READY_BATCH_SUBMITS as usize),
                age: 0,
                limit: ready_batch_limit(),
            }),
            summary: OrchestratorSummary::default(),
            orch_done: false,
            deps: chip.config.record_deps.then(|| DepRecorder::new(capacity)),
            orch_records: if chip.config.dfx.swimlane >= 4 {
                LAST_ORCH_RECORDS.vec(0)
            } else {
                Vec::new()
            },
            scope_samples: Vec::new(),
            n_submits: 0,
            census: None,
            chip,
        }
    }

    /// The chip.
    pub fn chip(&self) -> &Chip {
        &self.chip
    }

    /// What happened, for the run report.
    pub fn summary(&self) -> OrchestratorSummary {
        let mut s = self.summary.clone();
        s.n_tasks = self.heads.iter().sum();
        s.capacity_advice = self.census.as_ref().map(RingCensus::advice);
        s
    }

    /// Takes the orchestrator's swimlane records and scope samples.
    pub fn take_dfx(&mut self) -> (Vec<OrchRecord>, Vec<ScopeSample>) {
        LAST_ORCH_RECORDS.keep(&self.orch_records);
        (
            std::mem::take(&mut self.orch_records),
            std::mem::take(&mut self.scope_samples),
        )
    }

    fn sample_scope(&mut self, depth: usize, site: Site, is_end: bool) {
        let ring = depth.min(N_RINGS - 1);
        let r = &self.chip.rings[ring];
        let sample = ScopeSample {
            site: site.scope_stats_text(),
            is_end,
            depth: depth as u32,
            ring: ring as u32,
            task_window: (r.last_alive.load(Ordering::Acquire), self.heads[ring]),
            heap: (r.heap_tail.load(Ordering::Acquire), self.heap_top[ring]),
            dep_pool: (r.dep_tail.load(Ordering::Acquire), self.dep_top[ring]),
            tensormap: self.tensor_map.live() as u64,
        };
        self.scope_samples.push(sample);
    }

    /// Takes the dependency log (when recording was on).
    pub fn take_deps(&mut self) -> Option<DepLog> {
        self.deps.take().map(DepRecorder::finish)
    }

    /// Live TensorMap entries.
    pub fn tensormap_live(&self) -> usize {
        self.tensor_map.live()
    }

    /// Current ring (scope depth clamped to 3).
    fn current_ring(&self) -> usize {
        self.scopes.len().saturating_sub(1).min(N_RINGS - 1)
    }

    fn in_manual_scope(&self) -> bool {
        self.scopes
            .last()
            .is_some_and(|s| s.mode == ScopeMode::Manual)
    }

    fn fail(&mut self, code: ErrorCode, message: String) {
        self.chip.raise(code, message);
    }

    fn note_ignored(&mut self, site: Site) {
        self.summary.ignored_submits += 1;
        if self.summary.first_ignored_site.is_none() {
            self.summary.first_ignored_site = Some(site.render());
        }
    }

    // ---------------------------------------------------------------------------------
    // Scopes
    // ---------------------------------------------------------------------------------

    /// Opens a scope at `site`.
    pub fn scope_begin(&mut self, mode: ScopeMode, site: Site) {
        self.chip.note_orchestration_site(site);
        if mode == ScopeMode::Auto && self.in_manual_scope() {
            let outer = self
                .scopes
                .last()
                .map(|s| s.site.render())
                .unwrap_or_default();
            self.fail(
                ErrorCode::InvalidArgs,
                format!(
                    "the AUTO scope at {} is nested inside the MANUAL scope at {outer}; AUTO scopes cannot nest in MANUAL ones (make the inner scope MANUAL too)",
                    site.render()
                ),
            );
        }
        if self.scopes.len() >= MAX_SCOPE_DEPTH {
            self.fail(
                ErrorCode::InvalidArgs,
                format!(
                    "the scope at {} would be nested {} deep; at most {MAX_SCOPE_DEPTH} scopes can be open at once",
                    site.render(),
                    self.scopes.len() + 1
                ),
            );
        }
        self.scopes.push(Scope {
            mode,
            site,
            first_task: self.scope_tasks.len(),
        });
        if let Some(c) = &mut self.census {
            c.scope_begin();
        }
        if self.chip.config.dfx.scope_stats {
            self.sample_scope(self.scopes.len() - 1, site, false);
        }
    }

    /// Closes the innermost scope, releasing its reference on each of its tasks.
    pub fn scope_end(&mut self) {
        self.flush_ready();
        let Some(scope) = self.scopes.pop() else {
            self.fail(
                ErrorCode::InvalidArgs,
                "scope_end without an open scope".to_string(),
            );
            return;
        };
        self.chip.release_all(&self.scope_tasks[scope.first_task..]);
        self.scope_tasks.truncate(scope.first_task);
        if let Some(c) = &mut self.census {
            c.scope_end();
        }
        if self.chip.config.dfx.scope_stats {
            self.sample_scope(self.scopes.len(), scope.site, true);
        }
    }

    /// Closes every open scope (end of orchestration or after a fatal error).
    pub fn close_all_scopes(&mut self) {
        while !self.scopes.is_empty() {
            self.scope_end();
        }
    }

    /// Marks submission as finished.
    pub fn orchestration_done(&mut self) {
        self.orch_done = true;
    }

    /// Whether `orchestration_done` was called.
    pub fn is_done(&self) -> bool {
        self.orch_done
    }

    // ---------------------------------------------------------------------------------
    // Submit
    // ---------------------------------------------------------------------------------

    /// Submits a task: a kernel task, a dummy task, or an allocation-only task from
    /// `alloc_tensors`. Its id and runtime-allocated outputs are written to `out` in place
    /// (empty when the submit is rejected).
    pub fn submit(
        &mut self,
        kernels: MixedKernels,
        args: &TaskArgsData,
        site: Site,
        kind: SubmitKind,
        out: &mut TaskOutputTensors,
    ) {
        self.chip.note_orchestration_site(site);
        if self.chip.config.dfx.swimlane < 4 {
            self.submit_inner(kernels, args, site, kind, out);
            return;
        }
        let start_ns = crate::clock::stamp();
        self.submit_inner(kernels, args, site, kind, out);
        self.orch_records.push(OrchRecord {
            submit_idx: self.n_submits,
            task: out.task_id,
            start_ns,
            end_ns: crate::clock::stamp(),
        });
        self.n_submits += 1;
    }

    /// [`Self::submit`]'s work: admit the task ([`Self::admit`]), reserve its slot and
    /// heap ([`Self::reserve_memory`]), collect its fanin ([`Self::gather_fanin`]), fill
    /// its payload ([`fill_payload`]), register the regions it writes
    /// ([`Self::register_writes`]) and publish it ([`Self::publish`]). What the steps
    /// derive goes to locals and `out` through references: nothing large is returned.
    fn submit_inner(
        &mut self,
        kernels: MixedKernels,
        args: &TaskArgsData,
        site: Site,
        kind: SubmitKind,
        out: &mut TaskOutputTensors,
    ) {
        *out = empty_outputs();
        let mut validated = Validated::EMPTY;
        let Some(id) = self.admit(kernels, args, site, kind, &mut validated) else {
            return;
        };
        let ring = id.ring();

        // Step 2: slot, then heap.
        // SAFETY: validate() checked every slot reference is non-null.
        let out_bytes = unsafe { output_bytes(args) };
        let Some((heap_start, heap_base)) = self.reserve_memory(ring, id, site, out_bytes) else {
            return;
        };

        // Step 3: fanin.
        let alloc = kind == SubmitKind::Alloc;
        let Some(n_wait) = self.gather_fanin(kernels, args, id, site, &validated, alloc) else {
            return;
        };

        // Step 5a: fill the payload while the slot is unpublished.
        // SAFETY: used only within this call.
        let chip = unsafe { self.chip_apart() };
        let slot = chip.slot(id);
        out.task_id = id.0;
        {
            // SAFETY: the slot is free (reserve_slot waited for its reclaim) and unpublished:
            // only this thread touches the payload until the self-reference is dropped.
            let payload = unsafe { &mut *slot.payload.get() };
            let heap = HeapPlace {
                start: heap_start,
                base: heap_base,
                size: chip.rings[ring].heap_size,
            };
            fill_payload(payload, id, kernels, &validated, site, args, &heap);
            payload.heap_end = heap_start + out_bytes;
            self.heap_top[ring] = heap_start + out_bytes;
            self.dep_top[ring] += n_wait;
            payload.dep_mark = self.dep_top[ring];
            let mut n_out = 0;
            for (i, info) in payload.args.iter().enumerate() {
                if info.arg_type == TensorArgType::Output {
                    out.tensors[n_out] = &payload.tensors[i];
                    n_out += 1;
                }
            }
            out.count = n_out as u32;
        }

        // Step 4: register the regions this task writes.
        if !self.register_writes(args, id, site) {
            return;
        }

        // Step 5b: publish and wire.
        self.publish(chip, slot, id, ring, validated.units);
    }

    /// The chip, borrowed apart from `self` so that `&mut self` methods can run while a
    /// slot of it is held. Not `Arc::clone`: on the submit path its two locked
    /// instructions on the shared count were a tenth of an independent task's samples.
    ///
    /// # Safety
    /// The caller uses the reference only while `self` lives (within one call of a
    /// `&mut self` method). `self.chip` is set in `new` and never replaced, so the chip
    /// outlives that use; the reference points into the Arc's own allocation, not into
    /// `self`, so it aliases none of `self`'s fields.
    #[inline]
    unsafe fn chip_apart<'c>(&self) -> &'c Chip {
        // SAFETY: as the function's contract says.
        unsafe { &*Arc::as_ptr(&self.chip) }
    }

    /// Whether a submit may go ahead: no fatal error latched, inside a scope, valid
    /// ([`Self::validate`], into `validated`) and within the sync-start limit. Its id (on
    /// the current ring), or `None` after noting why not.
    #[inline]
    fn admit(
        &mut self,
        kernels: MixedKernels,
        args: &TaskArgsData,
        site: Site,
        kind: SubmitKind,
        validated: &mut Validated,
    ) -> Option<TaskId> {
        if self.chip.fatal.is_set() {
            self.note_ignored(site);
            if self.census.is_some() && !self.scopes.is_empty() {
                self.count_ignored(kernels, args, kind);
            }
            return None;
        }
        if self.scopes.is_empty() {
            self.fail(
                ErrorCode::InvalidArgs,
                format!("submit at {} outside any scope", site.render()),
            );
            return None;
        }
        let ring = self.current_ring();
        let id = TaskId::new(ring as u32, self.heads[ring]);
        if let Err(problem) = self.validate(kernels, args, kind, validated) {
            self.fail(
                ErrorCode::InvalidArgs,
                format!("task {id} submitted at {}: {problem}", site.render()),
            );
            return None;
        }
        if let Err(problem) = self.check_sync_start(validated) {
            self.fail(
                ErrorCode::RequireSyncStartInvalid,
                format!("task {id} submitted at {}: {problem}", site.render()),
            );
            return None;
        }
        Some(id)
    }

    /// Reserves task `id`'s slot, then `out_bytes` of heap on `ring`: the heap offset and
    /// the heap's base address (null when nothing is allocated), or `None` on a failure.
    #[inline]
    fn reserve_memory(
        &mut self,
        ring: usize,
        id: TaskId,
        site: Site,
        out_bytes: u64,
    ) -> Option<(u64, *mut u8)> {
        if !self.reserve_slot(ring, id, site) {
            return None;
        }
        let heap_start = self.reserve_heap(ring, id, site, out_bytes)?;
        let heap_base = if out_bytes > 0 {
            match self.chip.rings[ring].heap_base() {
                Ok(base) => base,
                Err(e) => {
                    self.fail(ErrorCode::HeapRingDeadlock, e.to_string());
                    return None;
                }
            }
        } else {
            std::ptr::null_mut()
        };
        Some((heap_start, heap_base))
    }

    /// Collects task `id`'s producers into `self.fanin`, records the task in the
    /// dependency log (if one is kept) and reserves its dependency-pool entries: how
    /// many producers it waits for, or `None` on a failure.
    #[inline]
    fn gather_fanin(
        &mut self,
        kernels: MixedKernels,
        args: &TaskArgsData,
        id: TaskId,
        site: Site,
        validated: &Validated,
        alloc: bool,
    ) -> Option<u64> {
        let ring = id.ring();
        self.fanin.clear();
        if let Some(log) = self.deps.as_mut().map(|d| &mut d.log) {
            log_args(log, args);
        }
        if let Err(problem) = self.collect_fanin(args, id) {
            self.fail(
                ErrorCode::InvalidArgs,
                format!("task {id} submitted at {}: {problem}", site.render()),
            );
            return None;
        }
        if let Some(log) = self.deps.as_mut().map(|d| &mut d.log) {
            let manual_scope = self
                .scopes
                .last()
                .is_some_and(|s| s.mode == ScopeMode::Manual);
            log.close_task(TaskRecord {
                id,
                manual_scope,
                early_dispatch: args.allow_early_resolve != 0,
                kernel_ids: [kernels.aic, kernels.aiv0, kernels.aiv1],
                block_num: validated.block_num,
                is_alloc: alloc,
                args: 0..0,
            });
        }
        let n_wait = self.fanin.as_slice().iter().filter(|f| f.wait).count() as u64;
        if !self.reserve_dep_pool(ring, id, site, n_wait) {
            return None;
        }
        Some(n_wait)
    }

    /// Registers in the tensor map the regions task `id` writes (its `InOut` and
    /// `OutputExisting` arguments not marked manual), unless in a manual scope; false on
    /// a failure.
    #[inline]
    fn register_writes(&mut self, args: &TaskArgsData, id: TaskId, site: Site) -> bool {
        if self.in_manual_scope() {
            return true;
        }
        for i in 0..args.n_tensors as usize {
            let a = &args.tensors[i];
            let ty = TensorArgType::from_raw(a.arg_type);
            if !matches!(
                ty,
                Some(TensorArgType::InOut | TensorArgType::OutputExisting)
            ) {
                continue;
            }
            // SAFETY: validate() checked every slot reference is non-null.
            let t = unsafe { args.tensor(i) };
            if t.manual_dep {
                continue;
            }
            if !self.insert_tensormap(ViewGeometry::of(t), id, site) {
                return false;
            }
        }
        true
    }

    /// Publishes task `id` on `ring` (the counters and state of `slot`, its slot, and the
    /// ring head), wires it to its producers, and makes it ready if it waits for none
    /// (completing inline tasks at once, batching the rest; [`Self::flush_ready`]).
    #[inline]
    fn publish(&mut self, chip: &Chip, slot: &TaskSlot, id: TaskId, ring: usize, units: u32) {
        slot.subtasks_done.store(0, Ordering::Relaxed);
        slot.skipped.store(false, Ordering::Relaxed);
        // The self-reference while wiring; a task with no producer to wire takes none (no
        // other thread can reach it before it is ready).
        let wires = !self.fanin.as_slice().is_empty();
        slot.fanin_remaining
            .store(u32::from(wires), Ordering::Relaxed);
        slot.claim
            .store(pack_claim(id, 0, units), Ordering::Relaxed);
        {
            // SAFETY: no other thread holds or takes this lock now. The slot's last lock
            // holder (its reclaimer) unlocked before its release store of `last_alive`,
            // which `reserve_slot` loaded with acquire before this slot was reused; every
            // other thread that locks it learns this task's id only after the ring head's
            // release store below (through the ready queue or a consumer list: a stale
            // queue entry fails the claim's generation check first, and a reclaimer visits
            // only ids below the head it loaded); `wire` and the scope end's release run on
            // this thread. The lock's two locked instructions were half of an independent
            // submit's samples (docs/PERFORMANCE.md).
            let fanout = unsafe { &mut *slot.fanout.data_ptr() };
            fanout.state = SlotState::Pending;
            fanout.consumers.clear();
            fanout.fanout_count = 1;
            fanout.released = 0;
        }
        self.heads[ring] += 1;
        chip.rings[ring]
            .head
            .store(self.heads[ring], Ordering::Release);
        // This thread is the count's only writer, so a plain release store (no locked
        // instruction, which would wait here for the slot's stores above to drain): each
        // reader learns of a task after the store that counts it (a completer through the
        // ready queue and the completion count's acquire-release chain, the run's own
        // thread through `orchestration_done`), so a completion that catches up with every
        // task still reads the whole count.
        let submitted = chip.submitted.load(Ordering::Relaxed) + 1;
        chip.submitted.store(submitted, Ordering::Release);
        for k in 0..self.fanin.as_slice().len() {
            let f = self.fanin.as_slice()[k];
            self.wire(id, f);
        }
        self.scope_tasks.push(id);
        let batch = self.ready_batch.get_mut();
        if !wires || slot.fanin_remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            let inline = &mut self.inline;
            chip.make_ready_deferred(id, inline, &mut batch.entries);
            while let Some(t) = inline.pop() {
                chip.complete(t, inline);
            }
        }
        if !batch.entries.is_empty() {
            batch.age += 1;
            if !wires || batch.age >= batch.limit || batch.entries.len() >= READY_BATCH_TASKS {
                self.flush_ready();
            }
        }
        // Only after a task that waited for producers: there the cold lines stalled the
        // next submit; after tasks without any, the prefetch cost more than it saved.
        if wires {
            chip.rings[ring].prefetch_ahead(self.heads[ring]);
        }
    }

    /// Pushes the ready tasks held back since the last push (`READY_BATCH_SUBMITS`).
    pub fn flush_ready(&self) {
        let mut batch = self.ready_batch.borrow_mut();
        self.chip.push_ready(&mut batch.entries);
        batch.age = 0;
    }

    fn wire(&mut self, me: TaskId, f: Fanin) {
        let chip = &*self.chip;
        let producer = chip.slot(f.producer);
        let mut fanout = producer.fanout.lock();
        // Re-check under the lock: only this thread reuses slots, so a producer that is not
        // retired now stays in its slot while we hold the lock.
        if chip.is_retired(f.producer)
            || fanout.state == SlotState::Consumed
            || fanout.state == SlotState::Free
        {
            return;
        }
        if f.wait && fanout.state == SlotState::Pending {
            chip.slot(me).fanin_remaining.fetch_add(1, Ordering::AcqRel);
            fanout.consumers.push(me);
        }
        if f.retain {
            fanout.fanout_count += 1;
            // SAFETY: `me` is unpublished (self-reference held); only this thread writes it.
            unsafe { &mut *chip.slot(me).payload.get() }
                .retained
                .push(f.producer);
        }
    }

    /// The explicit dependencies: into the fanin (unless retired or neither waited for
    /// nor retained) and, with dep_gen on, into `self.explicit` for the log.
    fn collect_explicit(&mut self, args: &TaskArgsData) -> Result<(), String> {
        for k in 0..args.n_deps as usize {
            // SAFETY: validate() checked `deps` (and `dep_kinds` when set) is non-null when
            // n_deps > 0; the arrays are the caller's and outlive the submit (API contract).
            let raw = unsafe { *args.deps.add(k) };
            let flags = if args.dep_kinds.is_null() {
                DEP_WAIT | DEP_RETAIN
            } else {
                // SAFETY: as above.
                unsafe { *args.dep_kinds.add(k) }
            };
            let (wait, retain) = (flags & DEP_WAIT != 0, flags & DEP_RETAIN != 0);
            let dep = TaskId(raw);
            if !dep.is_valid() {
                return Err(format!(
                    "explicit dependency {k} is the invalid task id (PTO2TaskId::invalid(), e.g. the result of a failed submit)"
                ));
            }
            if dep.ring() >= N_RINGS || dep.local() >= self.heads[dep.ring()] {
                return Err(format!(
                    "explicit dependency {k} names task {dep}, which has not been submitted"
                ));
            }
            // deps.json records every explicit dependency as Simpler's dep_gen replay does
            // (its replay never retires a producer, and keeps each dependency's kind): one
            // edge per distinct producer, flags OR'd over repeats, whether or not the
            // producer has retired by now; logged after this loop.
            if self.deps.is_some() {
                self.explicit.add(dep, wait, retain);
            }
            if !(wait || retain) || self.chip.is_retired(dep) {
                continue;
            }
            self.fanin.add(dep, wait, retain);
        }
        Ok(())
    }

    /// Logs this submit's distinct explicit dependencies (dep_gen), one edge each.
    fn log_explicit(&mut self, me: TaskId) {
        if let Some(log) = self.deps.as_mut().map(|d| &mut d.log) {
            for f in self.explicit.as_slice() {
                log.edges.push(EdgeRecord {
                    pred: f.producer,
                    succ: me,
                    arg: -1,
                    source: EdgeSource::Explicit,
                    wait: f.wait,
                    retain: f.retain,
                    overlap: None,
                    consumer: None,
                    producer: None,
                });
            }
            self.explicit.clear();
        }
    }

    fn collect_fanin(&mut self, args: &TaskArgsData, me: TaskId) -> Result<(), String> {
        // This submit's edges in the dependency log start here.
        let first_edge = self.deps.as_ref().map_or(0, |d| d.log.edges.len());
        let explicit = self.collect_explicit(args);
        // Logged up to a bad dependency too, as they were seen.
        self.log_explicit(me);
        explicit?;
        let manual_scope = self.in_manual_scope();
        for i in 0..args.n_tensors as usize {
            let a = &args.tensors[i];
            let Some(ty) = TensorArgType::from_raw(a.arg_type) else {
                continue;
            };
            if ty == TensorArgType::Output {
                continue;
            }
            // SAFETY: validate() checked every slot reference is non-null.
            let t = unsafe { args.tensor(i) };
            // A: creator edge (a MANUAL scope skips it: only explicit dependencies order
            // tasks there, as in Simpler).
            let owner = TaskId(t.owner_task_id);
            if owner.is_valid() && owner != me && !manual_scope {
                if owner.ring() >= N_RINGS || owner.local() >= self.heads[owner.ring()] {
                    return Err(format!(
                        "tensor argument {i} claims to be owned by task {owner}, which was never submitted (an uninitialised ChipTensor?)"
                    ));
                }
                if !self.chip.is_retired(owner) {
                    self.fanin.add(owner, true, true);
                }
                // Logged whether or not the owner has retired, as Simpler's replay does.
                if let Some(log) = self.deps.as_mut().map(|d| &mut d.log) {
                    log_creator_edge(log, first_edge, owner, me, i);
                }
            }
            // B: TensorMap lookup.
            if manual_scope
                || t.manual_dep
                || !matches!(ty, TensorArgType::Input | TensorArgType::InOut)
            {
                continue;
            }
            let geometry = ViewGeometry::of(t);
            let supersede = ty == TensorArgType::InOut;
            let chip = &self.chip;
            let retired = |p: TaskId| chip.is_retired(p);
            let mut hits: [TaskId; 16] = [TaskId::INVALID; 16];
            let mut n_hits = 0usize;
            let mut overflow: Vec<TaskId> = Vec::new();
            let mut wire = |p: TaskId| {
                if n_hits < hits.len() {
                    hits[n_hits] = p;
                    n_hits += 1;
                } else {
                    overflow.push(p);
                }
            };
            match self.deps.as_mut() {
                None => self
                    .tensor_map
                    .lookup(&geometry, supersede, &retired, &mut |hit| {
                        wire(hit.producer)
                    }),
                // With dep_gen the map keeps retired writers (a keeping map): deps.json
                // records every writer, as Simpler's replay does; only the others are wired.
                Some(d) => self.tensor_map.lookup_keeping(
                    &geometry,
                    supersede,
                    &retired,
                    &mut |hit, gone| {
                        d.tensormap_edge(&hit, me, i as i32);
                        if !gone {
                            wire(hit.producer);
                        }
                    },
                ),
            }
            for &p in hits[..n_hits].iter().chain(overflow.iter()) {
                if p != me {
                    self.fanin.add(p, true, false);
                }
            }
        }
        Ok(())
    }

    /// The predicate of a submit, resolved to the element's address (Simpler: a predicate
    /// whose tensor is missing or has no buffer degrades to "always dispatch"; the task
    /// still counts as predicated).
    fn capture_predicate(&self, args: &TaskArgsData) -> Result<Option<Predicate>, String> {
        let p = &args.predicate;
        if p.op == predicate_op::NONE {
            return Ok(None);
        }
        if p.op > predicate_op::LE {
            // Simpler's `DispatchPredicate::pass` falls through to "dispatch" for an op it
            // does not know; the task still counts as predicated.
            tracing::warn!(
                "a predicate with an unknown PredicateOp {} always dispatches its task",
                p.op
            );
            return Ok(Some(Predicate::ALWAYS));
        }
        if p.operand.tensor.is_null() {
            tracing::warn!("a predicate without a tensor always dispatches its task");
            return Ok(Some(Predicate::ALWAYS));
        }
        // SAFETY: the predicate's tensor is the caller's object and outlives the submit.
        let t = unsafe { &*p.operand.tensor };
        if t.buffer.addr == 0 {
            tracing::warn!("a predicate on a tensor without a buffer always dispatches its task");
            return Ok(Some(Predicate::ALWAYS));
        }
        let n = p.operand.ndims as usize;
        if n > MAX_TENSOR_DIMS || n > t.dims() {
            return Err(format!(
                "the predicate reads a {n}-index element of a {}-dimensional tensor",
                t.dims()
            ));
        }
        let mut off = t.start_offset;
        for d in 0..n {
            if p.operand.indices[d] >= t.shapes[d] {
                return Err(format!(
                    "the predicate's index {} = {} is outside dimension {d} of size {}",
                    d, p.operand.indices[d], t.shapes[d]
                ));
            }
            off += p.operand.indices[d] as u64 * t.strides[d] as u64;
        }
        let es = dtype::elem_size(t.dtype) as u64;
        if (off + 1) * es > t.buffer.size {
            return Err(format!(
                "the predicate's element (offset {off}) lies outside its {}-byte buffer",
                t.buffer.size
            ));
        }
        Ok(Some(Predicate {
            addr: t.buffer.addr + off * es,
            elem_size: es as u8,
            op: p.op,
            target: p.target,
        }))
    }

    /// Simpler's sync-start limit: all blocks launch at once, one cluster per block for MIX
    /// and AIC tasks, one AIV core per block for AIV tasks.
    fn check_sync_start(&self, v: &Validated) -> Result<(), String> {
        if v.gang != GangKind::Whole {
            return Ok(());
        }
        let clusters = self.chip.topology.n_clusters as u64;
        let (limit, what) = if v.n_active == 1 && v.active[0].slot != 0 {
            (2 * clusters, "AIV cores")
        } else {
            (clusters, "clusters")
        };
        if v.block_num as u64 > limit {
            return Err(format!(
                "set_require_sync_start(true) with {} blocks, but all blocks of a sync-start task launch at once and this {} chip has {limit} {what}; lower the block count to at most {limit} or drop sync-start",
                v.block_num, self.chip.config.platform
            ));
        }
        Ok(())
    }

    /// Checks one submit's kernels and arguments and works out its shape into `v`: the
    /// argument block ([`check_args`]), a kernel task has a kernel, the predicate and
    /// timing slot, the active slots ([`Self::active_slots`]) and the launch
    /// ([`launch_shape`]), in that order (the first failure is the error; `v` then holds
    /// what was derived before it).
    fn validate(
        &self,
        kernels: MixedKernels,
        args: &TaskArgsData,
        kind: SubmitKind,
        v: &mut Validated,
    ) -> Result<(), String> {
        let alloc = kind == SubmitKind::Alloc;
        check_args(args, alloc)?;
        if kind == SubmitKind::Kernel
            && [kernels.aic, kernels.aiv0, kernels.aiv1]
                .iter()
                .all(|&k| k == crate::ffi::INVALID_KERNEL_ID)
        {
            return Err(
                "rt_submit_task with no active kernel (every MixedKernels id is INVALID_KERNEL_ID); set a kernel id, or use rt_submit_dummy_task for a dependency-only task"
                    .to_string(),
            );
        }
        // Most tasks have no predicate: stored directly (a `Result` of one read back at
        // once stalled the store forwarding).
        v.predicate = if args.predicate.op == predicate_op::NONE {
            None
        } else {
            self.capture_predicate(args)?
        };
        let timing_slot = args.timing_slot;
        if !(-1..NUM_TIMING_SLOTS as i32).contains(&timing_slot) {
            return Err(format!(
                "task timing slot {timing_slot}; a slot is -1 (none) or 0..{}",
                NUM_TIMING_SLOTS - 1
            ));
        }
        v.timing_slot = (timing_slot >= 0).then_some(timing_slot as u8);
        self.active_slots(kernels, alloc, v)?;
        (v.block_num, v.subtasks, v.gang, v.units) =
            launch_shape(args, v.n_active, self.chip.config.platform)?;
        Ok(())
    }

    /// The kernels of the used slots of `kernels` (AIC, AIV0, AIV1), packed in slot
    /// order, with how many there are and how many are AIV lanes. Each id must name a
    /// registered kernel of the slot's core type; an alloc task may use none. Written to
    /// `v.active`, `v.n_active` and `v.aiv_lanes`.
    #[inline]
    fn active_slots(
        &self,
        kernels: MixedKernels,
        alloc: bool,
        v: &mut Validated,
    ) -> Result<(), String> {
        let ids = [kernels.aic, kernels.aiv0, kernels.aiv1];
        v.active = [ActiveSlot::NONE; 3];
        v.n_active = 0;
        v.aiv_lanes = 0;
        for (slot_idx, &k) in ids.iter().enumerate() {
            if k == crate::ffi::INVALID_KERNEL_ID {
                continue;
            }
            if k < 0 {
                return Err(format!(
                    "kernel id {k} is negative; only INVALID_KERNEL_ID (-1) marks an unused slot, and func_ids are >= 0 (see kernel_config.py)"
                ));
            }
            if alloc {
                return Err("alloc_tensors cannot run a kernel".to_string());
            }
            let Some(kernel) = self.chip.kernels.get(k) else {
                let known = self.chip.kernels.ids();
                return Err(format!(
                    "kernel id {k} has no kernel (known func_ids: {known:?}); check the func_id against kernel_config.py"
                ));
            };
            let want = if slot_idx == 0 {
                CoreType::Aic
            } else {
                CoreType::Aiv
            };
            if kernel.core_type != want {
                return Err(format!(
                    "kernel {k} '{}' is an {} kernel but was submitted to the {} slot",
                    kernel.name,
                    kernel.core_type.name().to_uppercase(),
                    want.name().to_uppercase()
                ));
            }
            v.active[v.n_active as usize] = ActiveSlot {
                slot: slot_idx as u8,
                entry: Some(kernel.entry),
                invoke: kernel.invoke,
                call: kernel.call,
            };
            v.n_active += 1;
            v.aiv_lanes += u8::from(slot_idx > 0);
        }
        Ok(())
    }

    // ---------------------------------------------------------------------------------
    // Back-pressure
    // ---------------------------------------------------------------------------------

    /// The innermost open scope on `ring`, and how many of its tasks are on that ring.
    fn blocking_scope(&self, ring: usize) -> (String, usize) {
        for (depth, scope) in self.scopes.iter().enumerate().rev() {
            if depth.min(N_RINGS - 1) == ring {
                let n = self.scope_tasks[scope.first_task..]
                    .iter()
                    .filter(|t| t.ring() == ring)
                    .count();
                return (scope.site.render(), n);
            }
        }
        ("?".to_string(), 0)
    }

    /// Whether `fits(frontier)` holds for frontier `which` of `ring` as last seen, or, if
    /// not, as read now (which becomes the seen value). The slow path waits.
    fn space_seen(&mut self, ring: usize, which: usize, fits: impl Fn(u64) -> bool) -> bool {
        if fits(self.seen_frontiers[ring][which]) {
            return true;
        }
        let r = &self.chip.rings[ring];
        let now = match which {
            ALIVE => r.last_alive.load(Ordering::Acquire),
            HEAP_TAIL => r.heap_tail.load(Ordering::Acquire),
            _ => r.dep_tail.load(Ordering::Acquire),
        };
        self.seen_frontiers[ring][which] = now;
        fits(now)
    }

    /// Waits until `has_space` holds; raises `deadlock()` if every submitted task has
    /// finished and there is still no space. Returns false on a fatal error.
    fn back_pressure(
        &self,
        ring: usize,
        has_space: &dyn Fn(&Chip) -> bool,
        deadlock: &dyn Fn() -> (ErrorCode, String),
    ) -> bool {
        let chip = &*self.chip;
        loop {
            if has_space(chip) {
                return true;
            }
            // A held-back task may be what frees the space.
            self.flush_ready();
            chip.advance_blocking(ring);
            if has_space(chip) {
                return true;
            }
            if chip.fatal.is_set() {
                return false;
            }
            if chip.quiescent() {
                for r in 0..N_RINGS {
                    chip.advance_blocking(r);
                }
                if has_space(chip) {
                    return true;
                }
                let (code, message) = deadlock();
                chip.raise(code, message);
                return false;
            }
            chip.orchestrator_wait(&|| has_space(chip) || chip.fatal.is_set() || chip.quiescent());
        }
    }

    fn reserve_slot(&mut self, ring: usize, id: TaskId, site: Site) -> bool {
        let head = self.heads[ring];
        let window = self.chip.rings[ring].window;
        if self.space_seen(ring, ALIVE, |alive| head - alive < window - 1) {
            return true;
        }
        let has_space =
            |chip: &Chip| head - chip.rings[ring].last_alive.load(Ordering::Acquire) < window - 1;
        // Only a failing wait needs the scope census (it walks the scope's tasks).
        let ran_out = std::cell::Cell::new(false);
        let deadlock = || {
            ran_out.set(true);
            let (scope_site, n) = self.blocking_scope(ring);
            (
                ErrorCode::FlowControlDeadlock,
                format!(
                    "task window {window} of ring {ring} cannot hold the {} tasks of the scope at {scope_site} (task {id} at {}): a scope's tasks stay live until it ends and a ring holds at most window-1 = {} of them; raise ring_task_window (or PTO2_RING_TASK_WINDOW) above the largest scope's task count (at least {} so far)",
                    n + 1,
                    site.render(),
                    window - 1,
                    (n as u64 + 2).next_power_of_two()
                ),
            )
        };
        let ok = self.back_pressure(ring, &has_space, &deadlock);
        if ran_out.get() {
            self.start_census(ring, Resource::TaskWindow, 1);
        }
        ok
    }

    fn reserve_heap(&mut self, ring: usize, id: TaskId, site: Site, bytes: u64) -> Option<u64> {
        let size = self.chip.rings[ring].heap_size;
        if bytes > size {
            self.fail(
                ErrorCode::HeapRingDeadlock,
                format!(
                    "task {id} at {} needs {bytes} bytes of outputs but the heap of ring {ring} is {size} bytes; raise ring_heap (or PTO2_RING_HEAP) to at least {}",
                    site.render(),
                    bytes.checked_next_power_of_two().unwrap_or(bytes).max(1024)
                ),
            );
            return None;
        }
        let top = self.heap_top[ring];
        // Never straddle the end of the ring: skip to the next wrap instead (a task without
        // outputs skips the division).
        let start = if bytes > 0 && top % size + bytes > size {
            top + (size - top % size)
        } else {
            top
        };
        let end = start + bytes;
        if self.space_seen(ring, HEAP_TAIL, |tail| end - tail <= size) {
            return Some(start);
        }
        let has_space =
            |chip: &Chip| end - chip.rings[ring].heap_tail.load(Ordering::Acquire) <= size;
        // Only a failing wait needs the scope census (it walks the scope's tasks).
        let ran_out = std::cell::Cell::new(false);
        let deadlock = || {
            ran_out.set(true);
            let (scope_site, n) = self.blocking_scope(ring);
            (
                ErrorCode::HeapRingDeadlock,
                format!(
                    "heap of ring {ring} ({size} bytes) cannot fit the {bytes} bytes of outputs of task {id} at {} while the {n} live tasks of the scope at {scope_site} hold the rest; raise ring_heap (or PTO2_RING_HEAP)",
                    site.render()
                ),
            )
        };
        let ok = self.back_pressure(ring, &has_space, &deadlock);
        if ran_out.get() {
            self.start_census(ring, Resource::Heap, bytes);
        }
        ok.then_some(start)
    }

    /// Starts the census of `ring` after it ran out of `resource` for a task that needed
    /// `failing` (see `ring_census`): what each open scope holds there now.
    fn start_census(&mut self, ring: usize, resource: Resource, failing: u64) {
        if self.census.is_some() {
            return;
        }
        let mut held = vec![0u64; self.scopes.len()];
        let mut largest = failing;
        for (depth, scope) in self.scopes.iter().enumerate() {
            let end = self
                .scopes
                .get(depth + 1)
                .map_or(self.scope_tasks.len(), |s| s.first_task);
            for &task in &self.scope_tasks[scope.first_task..end] {
                if task.ring() != ring {
                    continue;
                }
                let amount = match resource {
                    Resource::TaskWindow => 1,
                    Resource::Heap => self.held_output_bytes(task),
                };
                held[depth] += amount;
                largest = largest.max(amount);
            }
        }
        if let Some(innermost) = held.last_mut() {
            *innermost += failing;
        }
        self.census = Some(RingCensus::start(ring, resource, held, largest));
    }

    /// The heap bytes of a task its scope still holds.
    fn held_output_bytes(&self, task: TaskId) -> u64 {
        // SAFETY: the task's scope holds a reference, so its slot is not reclaimed, and its
        // payload was written by this thread before publication; workers only read it.
        let payload = unsafe { &*self.chip.slot(task).payload.get() };
        payload
            .args
            .iter()
            .zip(&payload.tensors)
            .filter(|(info, _)| info.arg_type == TensorArgType::Output)
            .map(|(_, t)| align_up(t.buffer.size, HEAP_ALIGN))
            .sum()
    }

    /// Counts an ignored submit into the census.
    fn count_ignored(&mut self, kernels: MixedKernels, args: &TaskArgsData, kind: SubmitKind) {
        let ring = self.current_ring();
        let Some(resource) = self.census.as_ref().map(|c| c.resource()) else {
            return;
        };
        let amount = match resource {
            Resource::TaskWindow => 1,
            Resource::Heap => {
                let mut v = Validated::EMPTY;
                if self.validate(kernels, args, kind, &mut v).is_err() {
                    return;
                }
                // SAFETY: validate() checked every slot reference is non-null.
                unsafe { output_bytes(args) }
            }
        };
        if let Some(c) = &mut self.census {
            c.submit(ring, amount);
        }
    }

    fn reserve_dep_pool(&mut self, ring: usize, id: TaskId, site: Site, entries: u64) -> bool {
        let capacity = self.chip.rings[ring].dep_capacity;
        let end = self.dep_top[ring] + entries;
        if entries > capacity {
            self.fail(
                ErrorCode::DepPoolOverflow,
                format!(
                    "task {id} at {} has {entries} producers but the dep pool of ring {ring} holds {capacity} entries; raise ring_dep_pool (or PTO2_RING_DEP_POOL)",
                    site.render()
                ),
            );
            return false;
        }
        if self.space_seen(ring, DEP_TAIL, |tail| end - tail <= capacity) {
            return true;
        }
        let has_space =
            |chip: &Chip| end - chip.rings[ring].dep_tail.load(Ordering::Acquire) <= capacity;
        // Only a failing wait needs the scope census (it walks the scope's tasks).
        let deadlock = || {
            let (scope_site, n) = self.blocking_scope(ring);
            (
                ErrorCode::DepPoolOverflow,
                format!(
                    "dep pool of ring {ring} ({capacity} entries) is full with the dependencies of the {n} live tasks of the scope at {scope_site} (task {id} at {}); raise ring_dep_pool (or PTO2_RING_DEP_POOL)",
                    site.render()
                ),
            )
        };
        self.back_pressure(ring, &has_space, &deadlock)
    }

    fn insert_tensormap(&mut self, geometry: ViewGeometry, id: TaskId, site: Site) -> bool {
        loop {
            let chip = &self.chip;
            let retired = |p: TaskId| chip.is_retired(p);
            if self.tensor_map.insert(geometry, id, &retired) {
                return true;
            }
            let capacity = self.tensor_map.capacity();
            let ring = id.ring();
            let (scope_site, n) = self.blocking_scope(ring);
            let before: Vec<u64> = (0..N_RINGS)
                .map(|r| chip.rings[r].last_alive.load(Ordering::Acquire))
                .collect();
            let progressed = |c: &Chip| {
                (0..N_RINGS).any(|r| c.rings[r].last_alive.load(Ordering::Acquire) != before[r])
            };
            let deadlock = || {
                (
                    ErrorCode::TensorMapOverflow,
                    format!(
                        "the TensorMap pool ({capacity} entries) is full with regions written by live tasks (task {id} at {}, {n} tasks in the scope at {scope_site}); close scopes sooner or mark scratch tensors manual_dep",
                        site.render()
                    ),
                )
            };
            if !self.back_pressure(ring, &progressed, &deadlock) {
                return false;
            }
        }
    }

    // ---------------------------------------------------------------------------------
    // Blocking tensor access
    // ---------------------------------------------------------------------------------

    fn wait_tasks_done(&mut self, pending: &dyn Fn(&Chip) -> bool, what: &str, site: Site) -> bool {
        let timeout = self.chip.config.scheduler_timeout;
        let started = Instant::now();
        let chip = Arc::clone(&self.chip);
        self.flush_ready();
        loop {
            if !pending(&chip) {
                return true;
            }
            if chip.fatal.is_set() {
                return false;
            }
            if started.elapsed() > timeout {
                self.fail(
                    ErrorCode::TensorWaitTimeout,
                    format!(
                        "{what} at {} waited {:.1} s for its producers; a kernel may be stuck (raise the scheduler timeout if it is just slow)",
                        site.render(),
                        timeout.as_secs_f64()
                    ),
                );
                return false;
            }
            chip.orchestrator_wait(&|| !pending(&chip) || chip.fatal.is_set());
        }
    }

    fn element_address(
        &mut self,
        t: &ChipTensor,
        ndims: u32,
        idx: &[u32],
        what: &str,
        site: Site,
    ) -> Option<*mut u8> {
        let fail = |s: &mut Self, p: String| {
            s.fail(
                ErrorCode::InvalidArgs,
                format!("{what} at {}: {p}", site.render()),
            );
            None
        };
        if t.buffer.addr == 0 {
            // Simpler logs and carries on (reads give 0, writes do nothing).
            tracing::error!(
                "{what} at {}: the tensor has no buffer (buffer.addr == 0); {}",
                site.render(),
                if what == "get_tensor_data" {
                    "returning 0"
                } else {
                    "nothing written"
                }
            );
            return None;
        }
        if let Err(p) = check_view(t) {
            return fail(self, p);
        }
        if ndims != t.ndims {
            return fail(
                self,
                format!("{ndims} indices for a {}-dimensional tensor", t.ndims),
            );
        }
        let mut off = t.start_offset;
        for (d, &ix) in idx.iter().enumerate().take(t.dims()) {
            if ix >= t.shapes[d] {
                return fail(
                    self,
                    format!(
                        "index {} is out of range for dimension {d} of size {}",
                        ix, t.shapes[d]
                    ),
                );
            }
            off += ix as u64 * t.strides[d] as u64;
        }
        Some((t.buffer.addr + off * dtype::elem_size(t.dtype) as u64) as *mut u8)
    }

    /// Blocking read of one element; returns its bits (0 after a fatal error).
    pub fn get_tensor_data(&mut self, t: &ChipTensor, ndims: u32, idx: &[u32], site: Site) -> u64 {
        if self.chip.fatal.is_set() {
            return 0;
        }
        let Some(addr) = self.element_address(t, ndims, idx, "get_tensor_data", site) else {
            return 0;
        };
        let chip = Arc::clone(&self.chip);
        let conservative = t.manual_dep || self.in_manual_scope();
        let ok = if conservative {
            self.wait_tasks_done(&|c| !c.quiescent(), "get_tensor_data", site)
        } else {
            let mut producers: Vec<TaskId> = Vec::new();
            let owner = TaskId(t.owner_task_id);
            if owner.is_valid()
                && owner.ring() < N_RINGS
                && owner.local() < self.heads[owner.ring()]
            {
                producers.push(owner);
            }
            let retired = |p: TaskId| chip.is_retired(p);
            self.tensor_map
                .lookup(&ViewGeometry::of(t), false, &retired, &mut |hit| {
                    producers.push(hit.producer)
                });
            let pending = |c: &Chip| {
                producers.iter().any(|&p| {
                    !c.is_retired(p) && c.slot(p).fanout.lock().state == SlotState::Pending
                })
            };
            self.wait_tasks_done(&pending, "get_tensor_data", site)
        };
        if !ok {
            return 0;
        }
        let size = dtype::elem_size(t.dtype);
        let mut bits = [0u8; 8];
        // SAFETY: element_address checked the index against the view and check_view the
        // view against the buffer; producers have finished writing (waited above).
        unsafe { std::ptr::copy_nonoverlapping(addr, bits.as_mut_ptr(), size.min(8)) };
        u64::from_le_bytes(bits)
    }

    /// Blocking write of one element, after every submitted task has finished.
    pub fn set_tensor_data(
        &mut self,
        t: &ChipTensor,
        ndims: u32,
        idx: &[u32],
        value: u64,
        site: Site,
    ) {
        if self.chip.fatal.is_set() {
            return;
        }
        let Some(addr) = self.element_address(t, ndims, idx, "set_tensor_data", site) else {
            return;
        };
        if !self.wait_tasks_done(&|c| !c.quiescent(), "set_tensor_data", site) {
            return;
        }
        let size = dtype::elem_size(t.dtype);
        let bits = value.to_le_bytes();
        // SAFETY: as in get_tensor_data; no task is running, so nothing races the write.
        unsafe { std::ptr::copy_nonoverlapping(bits.as_ptr(), addr, size.min(8)) };
    }

    /// Reports a fatal error from the orchestration (`rt_report_fatal`).
    pub fn report_fatal(&mut self, code: i32, func: &str, message: &str, site: Site) {
        let code = ErrorCode::from_code(code);
        let at = if site.file.is_null() {
            String::new()
        } else {
            format!(" at {}", site.render())
        };
        self.fail(
            code,
            format!("orchestration reported a fatal error in {func}{at}: {message}"),
        );
    }
}

/// Where a task's outputs go in its ring's heap: its offset, the heap's base address and
/// its size.
struct HeapPlace {
    start: u64,
    base: *mut u8,
    size: u64,
}

/// Fills the payload of unpublished task `id`: its kernels and shape from `validated`,
/// its tensors (each output materialized in the heap at `heap`, the rest copied), the
/// arguments' types and dump marks, and its scalars.
#[inline]
fn fill_payload(
    payload: &mut TaskPayload,
    id: TaskId,
    kernels: MixedKernels,
    validated: &Validated,
    site: Site,
    args: &TaskArgsData,
    heap: &HeapPlace,
) {
    payload.id = id;
    payload.kernel_ids = [kernels.aic, kernels.aiv0, kernels.aiv1];
    payload.active = validated.active;
    payload.n_active = validated.n_active;
    payload.aiv_lanes = validated.aiv_lanes;
    payload.block_num = validated.block_num;
    payload.subtasks_total = validated.subtasks;
    payload.gang = validated.gang;
    payload.units_total = validated.units;
    payload.site = site;
    payload.tensors.clear();
    payload.args.clear();
    payload.scalars.clear();
    payload.retained.clear();
    let mut heap_off = heap.start;
    for i in 0..args.n_tensors as usize {
        let a = &args.tensors[i];
        let arg_type = TensorArgType::from_raw(a.arg_type).unwrap_or(TensorArgType::Input);
        let t = if arg_type == TensorArgType::Output {
            // SAFETY: validate() checked every slot reference is non-null.
            let ci = unsafe { args.create_info(i) };
            let bytes = create_info_bytes(ci);
            let phys = heap_off % heap.size;
            // SAFETY: [phys, phys + bytes) lies inside the heap mapping (reserve_heap
            // never lets an allocation straddle the end) and belongs to this task.
            let addr = unsafe { heap.base.add(phys as usize) };
            heap_off += align_up(bytes, HEAP_ALIGN);
            materialize_output(ci, addr, bytes, id)
        } else {
            // SAFETY: as above.
            *unsafe { args.tensor(i) }
        };
        payload.tensors.push(t);
        payload.args.push(ArgInfo {
            arg_type,
            dump: a.dump != 0 || args.dump_all != 0,
        });
    }
    for &bits in &args.scalars[..args.n_scalars as usize] {
        payload.scalars.push(bits);
    }
    payload.predicate = validated.predicate;
    payload.timing_slot = validated.timing_slot;
    payload.scalar_info.clear();
    for j in 0..args.n_scalars as usize {
        let marked = args.scalar_dump[j] & 1 != 0 || args.dump_all != 0;
        payload.scalar_info.push((args.scalar_dtype[j], marked));
    }
}

/// What [`Orchestrator::validate`] derives from one submit (the shape of its payload).
struct Validated {
    active: [ActiveSlot; 3],
    n_active: u8,
    aiv_lanes: u8,
    block_num: u32,
    subtasks: u32,
    gang: GangKind,
    units: u32,
    predicate: Option<Predicate>,
    timing_slot: Option<u8>,
}

impl Validated {
    /// Before validation: no kernel, no block.
    const EMPTY: Validated = Validated {
        active: [ActiveSlot::NONE; 3],
        n_active: 0,
        aiv_lanes: 0,
        block_num: 0,
        subtasks: 0,
        gang: GangKind::Single,
        units: 0,
        predicate: None,
        timing_slot: None,
    };
}

/// What a submit is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitKind {
    /// `rt_submit_*_task`: at least one kernel.
    Kernel,
    /// `rt_submit_dummy_task`: dependency-only.
    Dummy,
    /// `alloc_tensors`: allocation-only.
    Alloc,
}

/// The heap bytes a submit's runtime-allocated outputs take (each 64-byte aligned).
///
/// # Safety
/// Every OUTPUT slot of `args` must reference a live `TensorCreateInfo` (validate() checks).
unsafe fn output_bytes(args: &TaskArgsData) -> u64 {
    (0..args.n_tensors as usize)
        .filter(|&i| args.tensors[i].arg_type == TensorArgType::Output as u8)
        .map(|i| {
            // SAFETY: the caller's contract.
            let ci = unsafe { args.create_info(i) };
            align_up(create_info_bytes(ci), HEAP_ALIGN)
        })
        .sum()
}

fn create_info_bytes(ci: &TensorCreateInfo) -> u64 {
    let n: u64 = ci.shapes[..(ci.ndims as usize).min(MAX_TENSOR_DIMS)]
        .iter()
        .map(|&s| s as u64)
        .product();
    n * dtype::elem_size(ci.dtype) as u64
}

fn materialize_output(
    ci: &TensorCreateInfo,
    addr: *mut u8,
    bytes: u64,
    owner: TaskId,
) -> ChipTensor {
    let mut t = ChipTensor::zeroed();
    t.buffer.addr = addr as u64;
    t.buffer.size = bytes;
    t.owner_task_id = owner.0;
    t.ndims = ci.ndims;
    t.dtype = ci.dtype;
    t.manual_dep = ci.manual_dep;
    t.is_contiguous = true;
    let dims = (ci.ndims as usize).min(MAX_TENSOR_DIMS);
    let mut stride = 1u32;
    for d in (0..dims).rev() {
        t.shapes[d] = ci.shapes[d];
        t.strides[d] = stride;
        stride = stride.saturating_mul(ci.shapes[d]);
    }
    t.extent_elem_cache = t.extent();
    if ci.has_initial_value != 0 {
        let es = dtype::elem_size(ci.dtype);
        let pattern = ci.initial_value.to_le_bytes();
        let n = bytes as usize / es;
        for i in 0..n {
            // SAFETY: the element lies inside this task's fresh heap allocation.
            unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), addr.add(i * es), es) };
        }
    }
    t
}

/// Checks a submit's argument block: no latched error, counts in range, a dependency
/// array where dependencies are declared, and each tensor argument ([`check_tensor_arg`]);
/// an alloc task (`alloc`) takes only `TensorCreateInfo` outputs.
#[inline]
fn check_args(args: &TaskArgsData, alloc: bool) -> Result<(), String> {
    if args.has_error {
        // SAFETY: the header latches static NUL-terminated texts (or null).
        let text = unsafe { c_str(args.error_msg) };
        return Err(format!("the task's arguments have an error: {text}"));
    }
    if args.n_tensors as usize > MAX_TENSOR_ARGS || args.n_scalars as usize > MAX_SCALAR_ARGS {
        return Err("corrupt argument block (too many arguments)".to_string());
    }
    if args.n_deps > 0 && args.deps.is_null() {
        return Err("set_dependencies was given a null array".to_string());
    }
    if alloc && args.n_scalars > 0 {
        return Err(format!(
            "alloc_tensors takes only TensorCreateInfo outputs, but the arguments hold {} scalars",
            args.n_scalars
        ));
    }
    for i in 0..args.n_tensors as usize {
        check_tensor_arg(args, i, alloc)?;
    }
    Ok(())
}

/// Checks tensor argument `i` (below `args.n_tensors`): a known argument type, a
/// non-null pointer, and a valid `TensorCreateInfo` (an output) or view (any other).
#[inline]
fn check_tensor_arg(args: &TaskArgsData, i: usize, alloc: bool) -> Result<(), String> {
    let a = &args.tensors[i];
    let Some(ty) = TensorArgType::from_raw(a.arg_type) else {
        return Err(format!(
            "tensor argument {i} has an unknown argument type {}",
            a.arg_type
        ));
    };
    if a.reference.is_null() {
        return Err(format!(
            "tensor argument {i} ({}) is a null pointer",
            ty.name()
        ));
    }
    if ty == TensorArgType::Output {
        // SAFETY: non-null (checked above); the caller's object outlives the submit.
        let ci = unsafe { args.create_info(i) };
        if ci.ndims == 0 || ci.ndims as usize > MAX_TENSOR_DIMS {
            return Err(format!(
                "output {i} has {} dimensions; a TensorCreateInfo needs 1 to {MAX_TENSOR_DIMS}",
                ci.ndims
            ));
        }
        if crate::dtype::elem_size_checked(ci.dtype).is_none() {
            return Err(format!("output {i} has an unknown DataType {}", ci.dtype));
        }
        return Ok(());
    }
    if alloc {
        return Err(format!(
            "alloc_tensors takes only TensorCreateInfo outputs (argument {i} is {})",
            ty.name()
        ));
    }
    // SAFETY: as above.
    let t = unsafe { args.tensor(i) };
    check_view(t).map_err(|p| format!("tensor argument {i} ({}): {p}", ty.name()))
}

/// A task's launch from its launch spec and `n_active` used slots: the block count, the
/// subtasks (blocks × slots, at most [`MAX_SUBTASKS`]), how its subtasks are ganged, and
/// the dispatch units that makes. `platform` names the block-count setter in errors.
#[inline]
fn launch_shape(
    args: &TaskArgsData,
    n_active: u8,
    platform: Platform,
) -> Result<(u32, u32, GangKind, u32), String> {
    let count = args.launch_spec.count;
    if count < 1 {
        let setter = match platform {
            Platform::A5Sim | Platform::A5 => "set_core_num",
            _ => "set_block_num",
        };
        return Err(format!(
            "launch_spec.{setter}({count}): a task needs at least one block"
        ));
    }
    let block_num = count as u32;
    let subtasks = if n_active == 0 {
        0
    } else {
        block_num as u64 * n_active as u64
    };
    if subtasks > MAX_SUBTASKS as u64 {
        return Err(format!(
            "{block_num} blocks × {n_active} slots = {subtasks} subtasks; at most {MAX_SUBTASKS} per task"
        ));
    }
    let sync_start = args.launch_spec.require_sync_start && block_num > 1 && n_active > 0;
    let (gang, units) = if n_active == 0 {
        (GangKind::Single, 0)
    } else if sync_start {
        (GangKind::Whole, 1)
    } else if n_active > 1 {
        (GangKind::Block, block_num)
    } else {
        (GangKind::Single, subtasks as u32)
    };
    Ok((block_num, subtasks as u32, gang, units))
}

/// Checks that a view is well formed and lies inside its buffer (a kernel would otherwise
/// read or write memory that is not the tensor's). Any strides are accepted, 0 included
/// (a broadcast view), as in Simpler.
pub fn check_view(t: &ChipTensor) -> Result<(), String> {
    if t.ndims as usize > MAX_TENSOR_DIMS {
        return Err(format!("{} dimensions; at most {MAX_TENSOR_DIMS}", t.ndims));
    }
    if t.buffer.addr == 0 && t.buffer.size > 0 {
        return Err("null buffer address".to_string());
    }
    let extent = t.extent();
    if extent == 0 {
        return Ok(());
    }
    let es = dtype::elem_size(t.dtype) as u64;
    let end = (t.start_offset + extent) * es;
    if end > t.buffer.size {
        return Err(format!(
            "the view (offset {} + {} elements of {} bytes) ends at byte {end}, outside its {}-byte buffer",
            t.start_offset,
            extent,
            es,
            t.buffer.size
        ));
    }
    Ok(())
}

/// The C string at `p`, or "?".
///
/// # Safety
/// `p` must be null or point to a NUL-terminated string.
pub unsafe fn c_str(p: *const c_char) -> String {
    if p.is_null() {
        return "?".to_string();
    }
    // SAFETY: the C++ side passes NUL-terminated strings (literals or formatted buffers).
    unsafe { std::ffi::CStr::from_ptr(p) }
        .to_string_lossy()
        .into_owned()
}
