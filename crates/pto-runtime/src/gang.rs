//! Gangs: subtasks that must run at the same time.
//!
//! The AIC and AIV cores of a MIX block run together on the device (they talk through
//! TPUSH / TPOP pipes and may wait on each other), and every block of a sync-start task
//! launches at once. A worker of the pool runs its tasks one subtask at a time, so a gang is
//! spread over *helper threads* that the worker owns: the worker hands every member but the
//! first to an idle helper, runs the first itself, and waits until all have finished. Helpers
//! are spawned on first need (inside the worker's thread scope, so they never outlive it) and
//! then reused; a worker keeps as many as the widest gang it has launched needs, at most one
//! per logical core of the chip. Each helper has its own [`Executor`] (and on-chip memories)
//! and, when the PMU is on, its own counter group.
//!
//! Hand-off protocol (per helper): the worker writes the job, then sets `state` to `POSTED`
//! (release) and unparks the helper; the helper spins briefly, then parks with a timeout,
//! re-checking `state` (acquire). When done it writes the outcome, sets `state` back to
//! `IDLE`, and counts down the gang's latch; the worker parks until the latch reaches zero.
//! Park / unpark never lose a wake-up (an unpark before the park makes it return at once),
//! and every park has a timeout, so a mistake costs latency, never a hang.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle, Thread};
use std::time::Duration;

use crate::chip::Chip;
use crate::clock::{stamp, stamp_ordered};
use crate::exec::{ExecStatus, Executor, Placement};
use crate::monitor::ThreadRole;
use crate::perf::{PerfGroup, MAX_COUNTERS};
use crate::task::{TaskId, TaskPayload};

/// What one subtask reported.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubtaskOutcome {
    /// The kernel's func_id.
    pub func_id: i32,
    /// When the core received the subtask ([`crate::clock::stamp`]; 0 when not recording).
    pub receive_ns: u64,
    /// Kernel start.
    pub start_ns: u64,
    /// Kernel end.
    pub end_ns: u64,
    /// PMU counter deltas over the kernel.
    pub counters: [u64; MAX_COUNTERS],
}

/// The task a unit of work belongs to.
#[derive(Clone, Copy)]
pub struct Dispatch<'a> {
    /// The task.
    pub id: TaskId,
    /// Its payload (live while any of its units runs).
    pub payload: &'a TaskPayload,
    /// Whether to time the subtasks (swimlane or PMU on).
    pub recording: bool,
}

/// Runs one subtask on `exec`, timing it (and sampling `perf`) when the dispatch records.
pub fn timed_run(
    exec: &mut Executor<'_>,
    perf: Option<&mut PerfGroup>,
    d: &Dispatch<'_>,
    place: Placement,
) -> SubtaskOutcome {
    let (recording, id, payload) = (d.recording, d.id, d.payload);
    let mut out = SubtaskOutcome::default();
    let mut before = [0u64; MAX_COUNTERS];
    let mut perf = perf.filter(|_| recording);
    if recording {
        // Nothing happens between receiving the arguments and the call: one reading serves
        // both (a clock reading costs about as much as an empty kernel here), and with
        // counters it is theirs.
        out.start_ns = match perf.as_deref_mut() {
            Some(p) => p.sample(&mut before),
            None => 0,
        };
        if out.start_ns == 0 {
            // Ordered: a gang helper takes it after the worker's hand-over (and a worker
            // after its dispatch stamp); it must not precede either.
            out.start_ns = stamp_ordered();
        }
        out.receive_ns = out.start_ns;
    }
    out.func_id = exec.run(id, payload, place);
    if recording {
        let mut after = [0u64; MAX_COUNTERS];
        out.end_ns = match perf {
            Some(p) => p.sample(&mut after),
            None => 0,
        };
        if out.end_ns == 0 {
            out.end_ns = stamp();
        }
        for k in 0..MAX_COUNTERS {
            out.counters[k] = after[k].wrapping_sub(before[k]);
        }
    }
    out
}

const IDLE: u32 = 0;
const POSTED: u32 = 1;
const EXIT: u32 = 2;

/// One member of a gang, as the worker describes it to a helper.
#[derive(Clone, Copy)]
struct Job {
    id: TaskId,
    place: Placement,
    recording: bool,
    outcome: *mut SubtaskOutcome,
    latch: *const Latch,
}

/// Counts the members of a running gang down to zero and wakes the worker.
struct Latch {
    remaining: AtomicU32,
    owner: Thread,
}

struct Helper {
    state: AtomicU32,
    job: UnsafeCell<Option<Job>>,
    status: Arc<ExecStatus>,
    thread: UnsafeCell<Option<Thread>>,
}

// SAFETY: `job` is written by the worker only while `state == IDLE` and read by the helper
// only after observing `POSTED` (release / acquire on `state`); `thread` is written once by
// the worker before the first job is posted.
unsafe impl Sync for Helper {}
// SAFETY: the raw pointers in a posted job point into the posting worker's frame, which
// outlives the job (the worker waits on the latch); see `Gang::run`.
unsafe impl Send for Helper {}

/// The helpers of one worker.
pub struct Gang<'scope, 'env: 'scope> {
    chip: &'env Chip,
    scope: &'scope Scope<'scope, 'env>,
    helpers: Vec<Arc<Helper>>,
    handles: Vec<ScopedJoinHandle<'scope, ()>>,
}

/// How long an idle helper spins before parking.
const SPIN_ROUNDS: u32 = 200;
/// How long a parked thread waits before re-checking on its own.
const PARK: Duration = Duration::from_millis(20);

impl<'scope, 'env: 'scope> Gang<'scope, 'env> {
    /// No helpers yet; they are spawned in `scope` on first need.
    pub fn new(chip: &'env Chip, scope: &'scope Scope<'scope, 'env>) -> Gang<'scope, 'env> {
        Gang {
            chip,
            scope,
            helpers: Vec::new(),
            handles: Vec::new(),
        }
    }

    fn ensure(&mut self, n: usize) -> bool {
        while self.helpers.len() < n {
            let status = Arc::new(ExecStatus::new());
            let slot = self.chip.register_helper(Arc::clone(&status));
            let helper = Arc::new(Helper {
                state: AtomicU32::new(IDLE),
                job: UnsafeCell::new(None),
                status,
                thread: UnsafeCell::new(None),
            });
            let chip = self.chip;
            let h = Arc::clone(&helper);
            let spawned = std::thread::Builder::new()
                .name(format!("pto-gang-{}", self.helpers.len()))
                .spawn_scoped(self.scope, move || helper_main(chip, &h, slot));
            match spawned {
                Ok(handle) => {
                    // SAFETY: the helper has not been posted a job, so nobody reads `thread`.
                    unsafe { *helper.thread.get() = Some(handle.thread().clone()) };
                    self.handles.push(handle);
                    self.helpers.push(helper);
                }
                Err(e) => {
                    self.chip.raise(
                        crate::error::ErrorCode::KernelFault,
                        format!(
                            "cannot start a thread for a core of a MIX or sync-start task: {e}"
                        ),
                    );
                    return false;
                }
            }
        }
        true
    }

    /// Runs `places` of task `id` at the same time: `places[0]` on `exec` (the calling
    /// worker), the rest on helpers. Fills `outcomes[i]` for `places[i]`.
    pub fn run(
        &mut self,
        exec: &mut Executor<'_>,
        perf: Option<&mut PerfGroup>,
        d: &Dispatch<'_>,
        places: &[Placement],
        outcomes: &mut [SubtaskOutcome],
    ) {
        let n = places.len().min(outcomes.len());
        if n == 0 {
            return;
        }
        if n > 1 && !self.ensure(n - 1) {
            return;
        }
        let latch = Latch {
            remaining: AtomicU32::new((n - 1) as u32),
            owner: std::thread::current(),
        };
        let (first, rest) = outcomes[..n].split_at_mut(1);
        for ((helper, place), outcome) in self.helpers.iter().zip(&places[1..n]).zip(rest) {
            // SAFETY: the helper is idle (every gang waits for all its members before
            // returning), so it does not read `job` until the POSTED store below.
            unsafe {
                *helper.job.get() = Some(Job {
                    id: d.id,
                    place: *place,
                    recording: d.recording,
                    outcome,
                    latch: &latch,
                })
            };
            helper.state.store(POSTED, Ordering::Release);
            // SAFETY: written once in `ensure` before any job was posted.
            if let Some(t) = unsafe { &*helper.thread.get() } {
                t.unpark();
            }
        }
        first[0] = timed_run(exec, perf, d, places[0]);
        while latch.remaining.load(Ordering::Acquire) != 0 {
            std::thread::park_timeout(PARK);
        }
    }

    /// Stops and joins the helpers.
    pub fn shutdown(self) {
        for h in &self.helpers {
            h.state.store(EXIT, Ordering::Release);
            // SAFETY: written once in `ensure`.
            if let Some(t) = unsafe { &*h.thread.get() } {
                t.unpark();
            }
        }
        for handle in self.handles {
            let _ = handle.join();
        }
    }
}

fn helper_main(chip: &Chip, me: &Helper, slot: usize) {
    let mut exec = Executor::new(chip, &me.status, slot, ThreadRole::Helper);
    let mut perf = if chip.config.samples_host_counters() {
        PerfGroup::open()
    } else {
        None
    };
    let mut spins = 0u32;
    loop {
        match me.state.load(Ordering::Acquire) {
            POSTED => {
                spins = 0;
                // SAFETY: POSTED was stored (release) after the job was written.
                let Some(job) = (unsafe { *me.job.get() }) else {
                    me.state.store(IDLE, Ordering::Release);
                    continue;
                };
                // SAFETY: the worker keeps the task running (and its slot unreclaimable)
                // until this member counts the latch down.
                let payload = unsafe { chip.slot(job.id).payload() };
                let d = Dispatch {
                    id: job.id,
                    payload,
                    recording: job.recording,
                };
                let outcome = timed_run(&mut exec, perf.as_mut(), &d, job.place);
                // SAFETY: `outcome` and `latch` live in the worker's frame until the latch
                // reaches zero; this is the only writer of this outcome.
                unsafe {
                    *job.outcome = outcome;
                    me.state.store(IDLE, Ordering::Release);
                    let latch = &*job.latch;
                    let owner = latch.owner.clone();
                    if latch.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
                        owner.unpark();
                    }
                }
            }
            EXIT => break,
            _ => {
                spins += 1;
                if spins < SPIN_ROUNDS {
                    std::hint::spin_loop();
                } else {
                    std::thread::park_timeout(PARK);
                }
            }
        }
    }
    me.status.exited.store(true, Ordering::Release);
}
