//! The status board: a fixed block at the start of the shared file in which the chip
//! process keeps, at every moment, what each of its threads is doing, and in which its
//! signal handler records a fatal signal. After the child died the host reads it to name
//! the task, kernel, core and arguments that were running.
//!
//! Concurrency: each thread of the child writes only its own slot (with volatile stores);
//! the fault record is claimed with one compare-and-swap, so the first fault wins. The host
//! reads the board only while the child is not running a request or after it died, so no
//! read races a write of interest; a torn value could at worst garble a diagnostic.

use std::cell::Cell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use pto_runtime::task::{TaskId, TaskPayload};
use pto_runtime::{ExecMonitor, ThreadRole};

/// "PTOBOARD".
pub const MAGIC: u64 = 0x5054_4F42_4F41_5244;
/// Thread slots (the orchestration, the workers, their gang helpers).
pub const N_SLOTS: usize = 256;
/// Tensor arguments recorded per running subtask.
pub const SLOT_TENSORS: usize = 8;
/// Scalar arguments recorded per running subtask.
pub const SLOT_SCALARS: usize = 4;

/// One tensor argument of a running subtask.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ArgRecord {
    /// `TensorArgType`.
    pub arg_type: u8,
    /// `DataType`.
    pub dtype: u8,
    /// Dimensions.
    pub ndims: u8,
    /// Padding.
    pub pad: u8,
    /// Extents.
    pub shapes: [u32; 5],
    /// Buffer base address.
    pub addr: u64,
    /// Buffer size in bytes.
    pub bytes: u64,
}

/// What one thread is doing.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct SlotRecord {
    /// 0 unused, 1 orchestration, 2 worker, 3 gang helper.
    pub role: u32,
    /// 1 while a subtask runs.
    pub busy: u32,
    /// Raw task id.
    pub task: u64,
    /// Logical core.
    pub core: u32,
    /// func_id.
    pub func_id: i32,
    /// Tensor arguments of the task.
    pub n_tensors: u32,
    /// Scalar arguments of the task.
    pub n_scalars: u32,
    /// The first [`SLOT_TENSORS`] tensor arguments.
    pub tensors: [ArgRecord; SLOT_TENSORS],
    /// The first [`SLOT_SCALARS`] scalars.
    pub scalars: [u64; SLOT_SCALARS],
}

/// A fatal signal.
#[repr(C)]
pub struct FaultRecord {
    /// 0 = none, 1 = recorded.
    pub state: AtomicU32,
    /// The signal number.
    pub signal: i32,
    /// `si_code`.
    pub code: i32,
    /// The slot of the thread that received it (`u32::MAX`: a thread without a slot).
    pub slot: u32,
    /// `si_addr` (the faulting address or instruction).
    pub addr: u64,
}

/// The orchestration's progress.
#[repr(C)]
pub struct OrchRecord {
    /// Line of the last submit or scope.
    pub line: i32,
    /// 1 once the entry returned.
    pub finished: u32,
    /// File of the last submit or scope (NUL-terminated, truncated).
    pub file: [u8; 256],
}

/// The whole board.
#[repr(C)]
pub struct Board {
    /// [`MAGIC`] once initialised by the host.
    pub magic: u64,
    /// Bumped by the child's heartbeat thread while it is alive.
    pub heartbeat: AtomicU64,
    /// 1 while the child runs a request.
    pub running: AtomicU32,
    /// Padding.
    pub pad: u32,
    /// The first fatal signal.
    pub fault: FaultRecord,
    /// The orchestration.
    pub orch: OrchRecord,
    /// One per thread.
    pub slots: [SlotRecord; N_SLOTS],
}

/// Bytes the board occupies at the start of the shared file (whole pages).
pub fn board_bytes() -> usize {
    super::shm::page_align(std::mem::size_of::<Board>())
}

/// Zeroes the board and stamps it (host side, before the child starts).
///
/// # Safety
/// `board` points to [`board_bytes`] writable bytes nobody else uses yet.
pub unsafe fn init(board: *mut Board) {
    // SAFETY: forwarded to the caller.
    unsafe {
        std::ptr::write_bytes(board.cast::<u8>(), 0, std::mem::size_of::<Board>());
        std::ptr::addr_of_mut!((*board).magic).write_volatile(MAGIC);
    }
}

/// Clears the per-request state (host side, before each request).
///
/// # Safety
/// `board` is a mapped board and the child is idle.
pub unsafe fn reset(board: *mut Board) {
    // SAFETY: forwarded to the caller.
    unsafe {
        (*board).fault.state.store(0, Ordering::SeqCst);
        std::ptr::addr_of_mut!((*board).orch).write_bytes(0, 1);
        for i in 0..N_SLOTS {
            std::ptr::addr_of_mut!((*board).slots[i].busy).write_volatile(0);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Child side
// ---------------------------------------------------------------------------------------

thread_local! {
    /// This thread's slot (`u32::MAX`: none); read by the signal handler.
    static SLOT: Cell<u32> = const { Cell::new(u32::MAX) };
    /// The file literal last copied into the orchestration record.
    static LAST_FILE: Cell<*const u8> = const { Cell::new(std::ptr::null()) };
}

/// The current thread's slot, for the signal handler.
pub fn current_slot() -> u32 {
    SLOT.with(Cell::get)
}

/// The child's [`ExecMonitor`]: writes every thread's progress into the board.
pub struct BoardMonitor {
    board: *mut Board,
}

// SAFETY: every thread writes only its own slot (see the module docs).
unsafe impl Send for BoardMonitor {}
// SAFETY: as above.
unsafe impl Sync for BoardMonitor {}

impl BoardMonitor {
    /// A monitor over a mapped board that stays mapped for the life of the process.
    ///
    /// # Safety
    /// `board` must point to a mapped [`Board`] that is never unmapped.
    pub unsafe fn new(board: *mut Board) -> BoardMonitor {
        BoardMonitor { board }
    }

    fn slot(&self, slot: usize) -> Option<*mut SlotRecord> {
        // SAFETY: in bounds of the mapped board.
        (slot < N_SLOTS).then(|| unsafe { std::ptr::addr_of_mut!((*self.board).slots[slot]) })
    }
}

impl ExecMonitor for BoardMonitor {
    fn thread_started(&self, slot: usize, role: ThreadRole) {
        SLOT.with(|s| s.set(u32::try_from(slot).unwrap_or(u32::MAX)));
        super::signals::install_alt_stack();
        if let Some(p) = self.slot(slot) {
            let role = match role {
                ThreadRole::Orchestration => 1,
                ThreadRole::Worker(_) => 2,
                ThreadRole::Helper => 3,
            };
            // SAFETY: this thread's own slot.
            unsafe {
                std::ptr::addr_of_mut!((*p).role).write_volatile(role);
                std::ptr::addr_of_mut!((*p).busy).write_volatile(0);
            }
        }
    }

    fn subtask_started(
        &self,
        slot: usize,
        task: TaskId,
        core: usize,
        func_id: i32,
        payload: &TaskPayload,
    ) {
        let Some(p) = self.slot(slot) else {
            return;
        };
        let mut rec = SlotRecord {
            role: 0,
            busy: 1,
            task: task.0,
            core: core as u32,
            func_id,
            ..SlotRecord::default()
        };
        rec.n_tensors = payload.tensors.len() as u32;
        rec.n_scalars = payload.scalars.len() as u32;
        for (r, (t, a)) in rec
            .tensors
            .iter_mut()
            .zip(payload.tensors.iter().zip(&payload.args))
        {
            r.arg_type = a.arg_type as u8;
            r.dtype = t.dtype;
            r.ndims = t.ndims.min(5) as u8;
            r.shapes = t.shapes;
            r.addr = t.buffer.addr;
            r.bytes = t.buffer.size;
        }
        for (r, s) in rec.scalars.iter_mut().zip(&payload.scalars) {
            *r = *s;
        }
        // SAFETY: this thread's own slot; the role is kept, busy is written last.
        unsafe {
            rec.role = std::ptr::addr_of!((*p).role).read_volatile();
            rec.busy = 0;
            p.write_volatile(rec);
            std::sync::atomic::fence(Ordering::Release);
            std::ptr::addr_of_mut!((*p).busy).write_volatile(1);
        }
    }

    fn subtask_finished(&self, slot: usize) {
        if let Some(p) = self.slot(slot) {
            // SAFETY: this thread's own slot.
            unsafe { std::ptr::addr_of_mut!((*p).busy).write_volatile(0) };
        }
    }

    fn orchestration_site(&self, file: Option<&CStr>, line: i32) {
        let key = file.map_or(std::ptr::null(), |f| f.as_ptr().cast::<u8>());
        // SAFETY: the orchestration record is written by the orchestration thread only.
        unsafe {
            let orch = std::ptr::addr_of_mut!((*self.board).orch);
            std::ptr::addr_of_mut!((*orch).line).write_volatile(line);
            if LAST_FILE.with(Cell::get) != key {
                LAST_FILE.with(|c| c.set(key));
                let dst = std::ptr::addr_of_mut!((*orch).file).cast::<u8>();
                let bytes = file.map_or(&[][..], CStr::to_bytes);
                let base = bytes.rsplit(|&b| b == b'/').next().unwrap_or(bytes);
                let n = base.len().min(255);
                std::ptr::copy_nonoverlapping(base.as_ptr(), dst, n);
                dst.add(n).write_volatile(0);
            }
        }
    }

    fn orchestration_finished(&self) {
        // SAFETY: as in orchestration_site.
        unsafe { std::ptr::addr_of_mut!((*self.board).orch.finished).write_volatile(1) };
        LAST_FILE.with(|c| c.set(std::ptr::null()));
    }
}

/// Records a fatal signal (async-signal-safe: plain stores and one CAS).
///
/// # Safety
/// `board` points to the mapped board.
pub unsafe fn record_fault(board: *mut Board, signal: i32, code: i32, addr: u64) {
    // SAFETY: forwarded to the caller; the fields are written once, by the CAS winner.
    unsafe {
        let f = std::ptr::addr_of_mut!((*board).fault);
        if (*f)
            .state
            .compare_exchange(0, 2, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        std::ptr::addr_of_mut!((*f).signal).write_volatile(signal);
        std::ptr::addr_of_mut!((*f).code).write_volatile(code);
        std::ptr::addr_of_mut!((*f).slot).write_volatile(current_slot());
        std::ptr::addr_of_mut!((*f).addr).write_volatile(addr);
        (*f).state.store(1, Ordering::Release);
    }
}

// ---------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------

/// What the board says after the child stopped.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// `(signal, si_code, address, slot)` of the first fatal signal.
    pub fault: Option<(i32, i32, u64, u32)>,
    /// `(slot, record)` of every thread that was running a subtask.
    pub busy: Vec<(usize, SlotRecord)>,
    /// Every slot's record (for the faulting thread's role).
    pub roles: Vec<u32>,
    /// The orchestration's last `file:line`, if it reached one.
    pub orch_site: Option<String>,
    /// Whether the orchestration entry returned.
    pub orch_finished: bool,
}

/// Reads the board.
///
/// # Safety
/// `board` points to a mapped board whose writer is stopped or idle.
pub unsafe fn snapshot(board: *const Board) -> Snapshot {
    let mut s = Snapshot::default();
    // SAFETY: forwarded to the caller.
    unsafe {
        let f = std::ptr::addr_of!((*board).fault);
        if (*f).state.load(Ordering::Acquire) == 1 {
            s.fault = Some((
                std::ptr::addr_of!((*f).signal).read_volatile(),
                std::ptr::addr_of!((*f).code).read_volatile(),
                std::ptr::addr_of!((*f).addr).read_volatile(),
                std::ptr::addr_of!((*f).slot).read_volatile(),
            ));
        }
        for i in 0..N_SLOTS {
            let rec = std::ptr::addr_of!((*board).slots[i]).read_volatile();
            s.roles.push(rec.role);
            if rec.busy == 1 {
                s.busy.push((i, rec));
            }
        }
        let orch = std::ptr::addr_of!((*board).orch).read_volatile();
        s.orch_finished = orch.finished == 1;
        let n = orch
            .file
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(orch.file.len());
        if n > 0 {
            s.orch_site = Some(format!(
                "{}:{}",
                String::from_utf8_lossy(&orch.file[..n]),
                orch.line
            ));
        }
    }
    s
}

/// The child's heartbeat counter.
///
/// # Safety
/// `board` points to a mapped board.
pub unsafe fn heartbeat(board: *const Board) -> u64 {
    // SAFETY: forwarded to the caller.
    unsafe { (*board).heartbeat.load(Ordering::Relaxed) }
}

/// Marks a request as running (`true`) or done (`false`); read by the host after a death.
///
/// # Safety
/// `board` points to a mapped board.
pub unsafe fn set_running(board: *mut Board, running: bool) {
    // SAFETY: forwarded to the caller.
    unsafe { (*board).running.store(running as u32, Ordering::SeqCst) };
}

/// Bumps the heartbeat (child side).
///
/// # Safety
/// `board` points to a mapped board.
pub unsafe fn beat(board: *mut Board) {
    // SAFETY: forwarded to the caller.
    unsafe { (*board).heartbeat.fetch_add(1, Ordering::Relaxed) };
}
