//! Task ids and task slots.
//!
//! A task lives in a slot of its ring's task window (`slot = local & (window - 1)`). Access
//! rules, per field of [`TaskSlot`]:
//!
//! - `payload` is written only by the orchestrator, and only while the task is unpublished
//!   (before its self-reference on `fanin_remaining` is released). Everyone else reads it
//!   after receiving the task id through the ready queue or a fanout list, both of which
//!   synchronize with the orchestrator's writes (release/acquire). The reclaimer reads
//!   `heap_end` / `dep_mark` after observing `Consumed` under the fanout lock.
//! - `fanout` (state, consumer list, reference counts) is only touched under its mutex:
//!   the orchestrator wiring a consumer, the completing worker, a consumer releasing its
//!   retain, the scope releasing its reference, and the reclaimer.
//! - `fanin_remaining` starts at 1 (the orchestrator's self-reference during wiring) plus one
//!   per waited-on producer; the thread that brings it to zero makes the task ready, exactly once.
//!   A task with no producer to wire takes no self-reference: it starts at 0 and the
//!   orchestrator makes it ready itself (no other thread can reach it before).
//! - `claim` hands out units of work to workers: single subtasks, whole MIX blocks or the
//!   whole task ([`GangKind`]). It packs the task's generation (low 32 bits of its local
//!   id), the next unit index and the unit total into one word, so a stale ready-queue entry of an earlier task in the same slot can never claim
//!   work of the slot's new task: its generation no longer matches. Only a successful claim
//!   makes reading the payload safe. `subtasks_done` counts units back; the thread that
//!   finishes the last one completes the task.

use std::cell::UnsafeCell;
use std::ffi::c_char;
use std::fmt;
use std::sync::atomic::AtomicU32;

use parking_lot::Mutex;

use crate::ffi::{ChipTensor, KernelCallFn, KernelEntryFn, TensorArgType};
use crate::sim_abi::SimInvokeFn;

/// A task id: `(ring << 32) | local`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub u64);

impl TaskId {
    /// The invalid id (all ones).
    pub const INVALID: TaskId = TaskId(u64::MAX);

    /// The id of task `local` of `ring`.
    pub fn new(ring: u32, local: u64) -> TaskId {
        TaskId(((ring as u64) << 32) | (local & 0xFFFF_FFFF))
    }

    /// The ring.
    pub fn ring(self) -> usize {
        ((self.0 >> 32) & 0xFF) as usize
    }

    /// The id within the ring.
    pub fn local(self) -> u64 {
        self.0 & 0xFFFF_FFFF
    }

    /// Whether this is a real id.
    pub fn is_valid(self) -> bool {
        self != TaskId::INVALID
    }
}

impl fmt::Display for TaskId {
    /// `t5` in ring 0, `r1t5` otherwise (Simpler's `format_task_display`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.is_valid() {
            f.write_str("t?")
        } else if self.ring() == 0 {
            write!(f, "t{}", self.local())
        } else {
            write!(f, "r{}t{}", self.ring(), self.local())
        }
    }
}

impl fmt::Debug for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Where in the orchestration source something happened (`__FILE__`, `__LINE__`).
#[derive(Clone, Copy, Debug)]
pub struct Site {
    /// A C string literal inside the orchestration shared object (valid while it is loaded).
    pub file: *const c_char,
    /// Line number.
    pub line: i32,
}

// SAFETY: `file` points to a string literal in a loaded shared object; it is only read.
unsafe impl Send for Site {}
// SAFETY: as above, the pointee is immutable.
unsafe impl Sync for Site {}

/// The file text of [`Site::ROOT`].
const ROOT_FILE: &std::ffi::CStr = c"<orchestration entry>";

impl Site {
    /// No known site.
    pub const UNKNOWN: Site = Site {
        file: std::ptr::null(),
        line: 0,
    };

    /// The site of the root scope the runtime opens around the orchestration entry
    /// (shown in error messages; see [`Site::scope_stats_text`] for scope statistics).
    pub const ROOT: Site = Site {
        file: ROOT_FILE.as_ptr(),
        line: 0,
    };

    /// Whether this is [`Site::ROOT`] (compared by text, not by address).
    pub fn is_root(&self) -> bool {
        // SAFETY: non-null `file` is a NUL-terminated literal (see the field).
        !self.file.is_null() && unsafe { std::ffi::CStr::from_ptr(self.file) } == ROOT_FILE
    }

    /// The `site` of a `scope_stats.jsonl` record, as Simpler's collector writes it:
    /// the file's basename cut to 31 bytes (Simpler's `char[32]`), `:` and the line.
    /// A scope opened without a source site, which is the root scope (Simpler's executor
    /// opens it with no `PTO2_SCOPE`, so no pending site is set), is `(unknown):0`.
    pub fn scope_stats_text(&self) -> String {
        if self.file.is_null() || self.is_root() {
            return "(unknown):0".to_string();
        }
        // SAFETY: non-null `file` is a NUL-terminated literal of the loaded orchestration.
        let full = unsafe { std::ffi::CStr::from_ptr(self.file) }.to_bytes();
        let base = full
            .rsplit(|b| *b == b'/' || *b == b'\\')
            .next()
            .unwrap_or(full);
        let base = &base[..base.len().min(31)];
        format!("{}:{}", String::from_utf8_lossy(base), self.line)
    }

    /// `orch.cpp:41` (the file's basename), or `?` when unknown.
    pub fn render(&self) -> String {
        if self.file.is_null() {
            return "?".to_string();
        }
        // SAFETY: non-null `file` is a NUL-terminated literal of the loaded orchestration.
        let full = unsafe { std::ffi::CStr::from_ptr(self.file) }.to_string_lossy();
        let base = full.rsplit('/').next().unwrap_or(&full);
        format!("{base}:{}", self.line)
    }
}

/// Most subtasks (`block_num × active slots`) one task may have.
pub const MAX_SUBTASKS: u32 = 0xFFFF;

/// Packs a claim word: generation, next subtask index, total subtasks.
pub fn pack_claim(id: TaskId, next: u32, total: u32) -> u64 {
    ((id.local() & 0xFFFF_FFFF) << 32) | ((next as u64 & 0xFFFF) << 16) | (total as u64 & 0xFFFF)
}

/// Claims the next subtask of task `id`: `Some((index, total))`, or `None` when every
/// subtask is taken or the slot now holds another task.
pub fn claim_subtask(slot: &TaskSlot, id: TaskId) -> Option<(u32, u32)> {
    claim_from(&slot.claim, id.local() & 0xFFFF_FFFF)
}

/// How many subtask units of task `id` no thread has claimed yet (0 once the slot holds
/// another task). A read, for the run's monitor: the answer may be stale at once.
pub fn unclaimed_units(slot: &TaskSlot, id: TaskId) -> u32 {
    use crate::sync::Ordering;
    let cur = slot.claim.load(Ordering::Acquire);
    if cur >> 32 != id.local() & 0xFFFF_FFFF {
        return 0;
    }
    let next = ((cur >> 16) & 0xFFFF) as u32;
    let total = (cur & 0xFFFF) as u32;
    total.saturating_sub(next)
}

/// The claim protocol on a claim word (see the module docs): succeeds only for the word's
/// current `generation` and while subtasks remain.
pub fn claim_from(word: &crate::sync::AtomicU64, generation: u64) -> Option<(u32, u32)> {
    use crate::sync::Ordering;
    let mut cur = word.load(Ordering::Acquire);
    loop {
        if cur >> 32 != generation {
            return None;
        }
        let next = ((cur >> 16) & 0xFFFF) as u32;
        let total = (cur & 0xFFFF) as u32;
        if next >= total {
            return None;
        }
        match word.compare_exchange_weak(cur, cur + (1 << 16), Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => return Some((next, total)),
            Err(actual) => cur = actual,
        }
    }
}

/// Lifecycle of a slot (under the fanout lock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// Reclaimed; may be reused by the orchestrator.
    Free,
    /// Submitted, not finished.
    Pending,
    /// All subtasks finished.
    Completed,
    /// Completed and every reference released; the ring may reclaim it.
    Consumed,
}

/// The part of a slot guarded by its fanout lock. `repr(C)` with the consumers first: the
/// first consumer's id sits right after the lock word, so a worker completing a task with
/// one consumer (a chain's hop) reads it from the cache line its lock has just brought over.
#[repr(C)]
pub struct Fanout {
    /// Tasks waiting for this one.
    pub consumers: Consumers,
    /// Lifecycle state.
    pub state: SlotState,
    /// References that must be released before the slot is consumed: the scope's, plus one
    /// per retaining consumer.
    pub fanout_count: u32,
    /// References released so far.
    pub released: u32,
}

/// The consumers of a task: the first held inline (next to the fanout lock), the others in a
/// vector. A chain's producer has one consumer: the orchestrator that adds it and the worker
/// that counts it down then touch no line beyond the lock's (with a vector, its heap block
/// was a second line moving between their cores on every hop, more than half of
/// `complete_with`'s samples in issue 29's profile), and the vector is never allocated.
#[repr(C)]
pub struct Consumers {
    /// The first consumer, [`TaskId::INVALID`] when there is none.
    first: TaskId,
    /// The consumers after the first.
    rest: Vec<TaskId>,
}

impl Consumers {
    /// No consumer.
    pub const fn new() -> Consumers {
        Consumers {
            first: TaskId::INVALID,
            rest: Vec::new(),
        }
    }

    /// Adds a consumer.
    pub fn push(&mut self, id: TaskId) {
        if self.first.is_valid() {
            self.rest.push(id);
        } else {
            self.first = id;
        }
    }

    /// Removes every consumer (keeping the vector's capacity).
    pub fn clear(&mut self) {
        self.first = TaskId::INVALID;
        self.rest.clear();
    }

    /// The consumers, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = TaskId> + '_ {
        let first = self.first.is_valid().then_some(self.first);
        first.into_iter().chain(self.rest.iter().copied())
    }
}

impl Default for Consumers {
    fn default() -> Consumers {
        Consumers::new()
    }
}

/// Tensors per task held in the slot's first cells of the ring's tensor table
/// ([`TaskTensors`]).
pub const INLINE_TENSORS: usize = 2;

/// Tensors per task held in the slot's overflow cells of the ring's tensor table, for a
/// task with more than [`INLINE_TENSORS`]; more spill into a vector. The arguments' uses,
/// as many, inline in the slot ([`InlineList`]; six keep the slot at 400 bytes).
pub const OVERFLOW_TENSORS: usize = 6;

/// Scalar arguments per task held inline in its slot ([`InlineList`]); more spill into a
/// vector.
pub const INLINE_SCALARS: usize = 2;

/// A list whose first `N` elements live inline (in the task slot, created with the ring,
/// outside any submit); a longer one moves into a vector. A payload's lists were vectors
/// that grew on each slot's first use in every run (a `malloc`, and the first touch of
/// fresh heap pages, on the submit path of the window's first lap: issue 29's chain
/// profile put `malloc` / `free` and the kernel's page faults at ~95 ns per hop); a task
/// with at most `N` elements now allocates nothing, ever.
///
/// Its size is kept small (a length, the inline elements, one pointer): every slot of a
/// window carries one, and a larger slot measured slower on independent tasks.
pub struct InlineList<T: Copy, const N: usize> {
    len: u32,
    inline: [T; N],
    /// Every element, once there are more than `N` (none before the first spill).
    #[allow(clippy::box_collection)] // one pointer in every slot, not a vector's three words
    spill: Option<Box<Vec<T>>>,
}

/// The ring's tensor table, one anonymous mapping made with the slots: first
/// [`INLINE_TENSORS`] cells for each slot of its window, then [`OVERFLOW_TENSORS`] more for
/// each. Its pages are zero until a task first writes a tensor there, so a run whose tasks
/// have none never touches it (the table is made inside the first submit of a ring that
/// `Chip::new` does not prepare: written there, its 4 MB cost independent tasks ~10 % of
/// their device time), and a run whose tasks have at most [`INLINE_TENSORS`] never touches
/// the overflow part. A slot's tensors live here rather than in the slot: held in the slot
/// they made every slot of the window 256 bytes larger (docs/PERFORMANCE.md, issue 29,
/// 2026-12-06 second round). The overflow part replaced a vector per slot for a task with
/// more tensors, made on the slot's first use in every run and freed with the chip (paged
/// attention: a quarter of the orchestrator's time, and 10–20 ms of teardown per run;
/// docs/PERFORMANCE.md, issue 29, ninth round).
pub struct TensorTable {
    /// `None` when the mapping failed: every payload then keeps its tensors in a vector.
    memory: Option<crate::memory::DeviceMemory>,
    /// The window's slots.
    slots: usize,
}

/// A slot's cells of its ring's [`TensorTable`] ([`TensorTable::cells_of`]).
#[derive(Clone, Copy, Debug)]
pub struct SlotCells {
    /// Its [`INLINE_TENSORS`] first cells (null: none, every tensor in a vector).
    first: *mut ChipTensor,
    /// Cells from `first` to its [`OVERFLOW_TENSORS`] overflow cells.
    overflow: u32,
}

impl SlotCells {
    /// No cells: every tensor in a vector.
    pub const NONE: SlotCells = SlotCells {
        first: std::ptr::null_mut(),
        overflow: 0,
    };
}

impl TensorTable {
    /// Room for `slots` slots' tensors.
    pub fn new(slots: usize) -> TensorTable {
        let bytes = slots * (INLINE_TENSORS + OVERFLOW_TENSORS) * std::mem::size_of::<ChipTensor>();
        TensorTable {
            memory: crate::memory::DeviceMemory::new(bytes).ok(),
            slots,
        }
    }

    /// Slot `index`'s cells, for [`TaskSlot::new`] ([`SlotCells::NONE`] when the table has
    /// none, or when its overflow cells are further than a `u32` count of cells away: a
    /// window of 2^29 slots or more, which keeps every task's tensors in vectors).
    pub fn cells_of(&self, index: usize) -> SlotCells {
        let Some(memory) = &self.memory else {
            return SlotCells::NONE;
        };
        assert!(index < self.slots, "slot {index} beyond the tensor table");
        let first = index * INLINE_TENSORS;
        let overflow = self.slots * INLINE_TENSORS + index * OVERFLOW_TENSORS;
        let Ok(distance) = u32::try_from(overflow - first) else {
            return SlotCells::NONE;
        };
        debug_assert!(
            (overflow + OVERFLOW_TENSORS) * std::mem::size_of::<ChipTensor>() <= memory.len()
        );
        SlotCells {
            // SAFETY: in bounds (`index < slots`, and the mapping holds every slot's cells);
            // the mapping is page-aligned, so every cell is aligned for a `ChipTensor`, and
            // zero bytes are a valid one.
            first: unsafe { memory.base().cast::<ChipTensor>().add(first) },
            overflow: distance,
        }
    }
}

/// A task's tensors: up to [`INLINE_TENSORS`] in its slot's first cells of the ring's
/// [`TensorTable`], up to [`OVERFLOW_TENSORS`] in its overflow cells, all of them in a
/// vector once there are more.
///
/// The same size as the vector it replaced (a slot must not grow, see [`InlineList`]).
pub struct TaskTensors {
    len: u32,
    /// Cells from `cells` to this slot's overflow cells (unused when `cells` is null).
    overflow: u32,
    /// This slot's first cells of the ring's table (null: none, every tensor spills).
    cells: *mut ChipTensor,
    /// Every tensor, once there are more than fit the cells (none before the first spill).
    #[allow(clippy::box_collection)] // one pointer in every slot, not a vector's three words
    spill: Option<Box<Vec<ChipTensor>>>,
}

impl TaskTensors {
    /// Removes every tensor (keeping the vector, if any, and its capacity).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// How many tensors the slot's cells hold: [`OVERFLOW_TENSORS`], or none without a
    /// table.
    #[inline]
    fn room(&self) -> usize {
        if self.cells.is_null() {
            0
        } else {
            OVERFLOW_TENSORS
        }
    }

    /// Where `len` tensors (at most [`Self::room`], cells not null) are: the first cells,
    /// or from more than [`INLINE_TENSORS`] on the overflow cells.
    #[inline]
    fn cells_for(&self, len: usize) -> *mut ChipTensor {
        if len <= INLINE_TENSORS {
            self.cells
        } else {
            // SAFETY: `overflow` cells from `cells` are this slot's overflow cells, in the
            // same mapping (`TensorTable::cells_of`).
            unsafe { self.cells.add(self.overflow as usize) }
        }
    }

    /// Appends a tensor.
    #[inline]
    pub fn push(&mut self, t: ChipTensor) {
        let (len, room) = (self.len as usize, self.room());
        if len < room {
            if len == INLINE_TENSORS {
                // SAFETY: the first cells and the overflow cells are this slot's alone and
                // do not overlap; the first `len` are initialised; the payload's writer is
                // the only thread touching them now.
                unsafe {
                    std::ptr::copy_nonoverlapping(self.cells, self.cells_for(room), len);
                }
            }
            // SAFETY: cell `len` of where `len + 1` tensors live is this slot's (`len` <
            // `room`), written by this thread alone now.
            unsafe { self.cells_for(len + 1).add(len).write(t) };
        } else {
            let held = self.cells_for(room);
            let spill = self.spill.get_or_insert_with(Box::default);
            if len == room {
                spill.clear();
                if room > 0 {
                    // SAFETY: as above; the `room` tensors so far are in the overflow cells.
                    spill.extend_from_slice(unsafe { std::slice::from_raw_parts(held, room) });
                }
            }
            spill.push(t);
        }
        self.len += 1;
    }

    /// The tensors, in the order they were pushed.
    #[inline]
    pub fn as_slice(&self) -> &[ChipTensor] {
        let len = self.len as usize;
        if len == 0 {
            return &[];
        }
        match &self.spill {
            Some(spill) if len > self.room() => spill,
            // SAFETY: the `len` tensors were written there by `push` before the payload was
            // published (module docs); nobody writes them while the payload is read.
            _ => unsafe { std::slice::from_raw_parts(self.cells_for(len), len) },
        }
    }
}

impl std::ops::Deref for TaskTensors {
    type Target = [ChipTensor];

    fn deref(&self) -> &[ChipTensor] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a TaskTensors {
    type Item = &'a ChipTensor;
    type IntoIter = std::slice::Iter<'a, ChipTensor>;

    fn into_iter(self) -> std::slice::Iter<'a, ChipTensor> {
        self.as_slice().iter()
    }
}

impl<T: Copy, const N: usize> InlineList<T, N> {
    /// An empty list; `fill` initialises the inline storage (never read as an element).
    pub const fn new(fill: T) -> InlineList<T, N> {
        InlineList {
            len: 0,
            inline: [fill; N],
            spill: None,
        }
    }

    /// Removes every element (keeping the vector, if any, and its capacity).
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends an element.
    #[inline]
    pub fn push(&mut self, value: T) {
        let len = self.len as usize;
        if len < N {
            self.inline[len] = value;
        } else {
            let spill = self.spill.get_or_insert_with(Box::default);
            if len == N {
                spill.clear();
                spill.extend_from_slice(&self.inline);
            }
            spill.push(value);
        }
        self.len += 1;
    }

    /// The elements, in the order they were pushed.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        let len = self.len as usize;
        match &self.spill {
            Some(spill) if len > N => spill,
            _ => &self.inline[..len],
        }
    }
}

impl<T: Copy, const N: usize> std::ops::Deref for InlineList<T, N> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'a, T: Copy, const N: usize> IntoIterator for &'a InlineList<T, N> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> std::slice::Iter<'a, T> {
        self.as_slice().iter()
    }
}

/// How a task's argument tensors are used (for DFX collectors and messages).
#[derive(Clone, Copy, Debug)]
pub struct ArgInfo {
    /// The argument type.
    pub arg_type: TensorArgType,
    /// Marked by `dump(...)`.
    pub dump: bool,
}

/// One active cluster slot of a task: which slot, and the kernel it runs.
#[derive(Clone, Copy, Debug)]
pub struct ActiveSlot {
    /// 0 = AIC, 1 = AIV0, 2 = AIV1.
    pub slot: u8,
    /// The kernel's `kernel_entry`.
    pub entry: Option<KernelEntryFn>,
    /// The kernel library's `pto_sim_invoke`, when it was built over the PTO-ISA header.
    pub invoke: Option<SimInvokeFn>,
    /// The kernel library's `pto_kernel_call` (exceptions caught), when it has one.
    pub call: Option<KernelCallFn>,
}

impl ActiveSlot {
    /// An unused slot.
    pub const NONE: ActiveSlot = ActiveSlot {
        slot: 0,
        entry: None,
        invoke: None,
        call: None,
    };
}

/// Task timing slots (`NUM_TASK_TIMING_SLOTS`).
pub const NUM_TIMING_SLOTS: usize = 16;

/// A predicate resolved at submit: the element at `addr` (`elem_size` bytes, sign-extended)
/// compared with `target` when the task becomes ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Predicate {
    /// Absolute address of the element (0 = no element: always dispatch).
    pub addr: u64,
    /// Bytes read (1, 2, 4 or 8).
    pub elem_size: u8,
    /// `PredicateOp` code.
    pub op: u8,
    /// The value compared against.
    pub target: i64,
}

impl Predicate {
    /// A predicate without an element: the task always dispatches.
    pub const ALWAYS: Predicate = Predicate {
        addr: 0,
        elem_size: 0,
        op: 0,
        target: 0,
    };

    /// Whether the task runs: reads the element now and compares.
    ///
    /// # Safety
    /// `addr` must point to `elem_size` readable bytes (checked against the tensor's buffer at
    /// submit; the buffer outlives the task).
    pub unsafe fn holds(&self) -> bool {
        use crate::ffi::predicate_op as op;
        if self.addr == 0 {
            return true;
        }
        let p = self.addr as *const u8;
        // SAFETY: forwarded to the caller; unaligned reads are allowed.
        let value: i64 = unsafe {
            match self.elem_size {
                1 => p.cast::<i8>().read_unaligned() as i64,
                2 => p.cast::<i16>().read_unaligned() as i64,
                4 => p.cast::<i32>().read_unaligned() as i64,
                _ => p.cast::<i64>().read_unaligned(),
            }
        };
        match self.op {
            op::EQ => value == self.target,
            op::NE => value != self.target,
            op::GT => value > self.target,
            op::LT => value < self.target,
            op::GE => value >= self.target,
            op::LE => value <= self.target,
            _ => true,
        }
    }
}

/// How a task's subtasks are handed out (the unit of the claim word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GangKind {
    /// Each unit is one subtask, run alone (AIC-only or AIV-only tasks).
    Single,
    /// Each unit is one block whose active slots run together on one cluster (MIX tasks).
    Block,
    /// One unit: every subtask of every block runs together (sync-start tasks).
    Whole,
}

/// What the orchestrator writes once per task (see the module docs for access rules).
pub struct TaskPayload {
    /// The task's id.
    pub id: TaskId,
    /// Kernel ids of the AIC, AIV0, AIV1 slots (−1 inactive).
    pub kernel_ids: [i32; 3],
    /// The active slots, in slot order.
    pub active: [ActiveSlot; 3],
    /// Number of active slots.
    pub n_active: u8,
    /// Active AIV slots (AIV lanes the task uses per cluster).
    pub aiv_lanes: u8,
    /// SPMD blocks.
    pub block_num: u32,
    /// `block_num * n_active` (0 for dummy and allocation tasks).
    pub subtasks_total: u32,
    /// How subtasks are handed out.
    pub gang: GangKind,
    /// Claim units: subtasks, blocks or 1 (see [`GangKind`]); 0 for dummy tasks.
    pub units_total: u32,
    /// Dispatch only if this holds when the task becomes ready.
    pub predicate: Option<Predicate>,
    /// Timing slot of `set_task_timing_slot`.
    pub timing_slot: Option<u8>,
    /// How each tensor is used.
    pub args: InlineList<ArgInfo, OVERFLOW_TENSORS>,
    /// Scalar arguments.
    pub scalars: InlineList<u64, INLINE_SCALARS>,
    /// Per scalar: element type code and `dump(...)` mark.
    pub scalar_info: InlineList<(u8, bool), INLINE_SCALARS>,
    /// Producers this task retains until it completes.
    pub retained: Vec<TaskId>,
    /// Cumulative heap offset just past this task's outputs.
    pub heap_end: u64,
    /// Cumulative dep-pool top after wiring this task.
    pub dep_mark: u64,
    /// Where it was submitted.
    pub site: Site,
    /// Tensor arguments as the kernel sees them.
    pub tensors: TaskTensors,
}

impl TaskPayload {
    fn empty(cells: SlotCells) -> TaskPayload {
        TaskPayload {
            id: TaskId::INVALID,
            kernel_ids: [-1; 3],
            active: [ActiveSlot::NONE; 3],
            n_active: 0,
            aiv_lanes: 0,
            block_num: 1,
            subtasks_total: 0,
            gang: GangKind::Single,
            units_total: 0,
            predicate: None,
            timing_slot: None,
            tensors: TaskTensors {
                len: 0,
                overflow: cells.overflow,
                cells: cells.first,
                spill: None,
            },
            args: InlineList::new(ArgInfo {
                arg_type: TensorArgType::Input,
                dump: false,
            }),
            scalars: InlineList::new(0),
            scalar_info: InlineList::new((0, false)),
            retained: Vec::new(),
            heap_end: 0,
            dep_mark: 0,
            site: Site::UNKNOWN,
        }
    }
}

/// One slot of a task window.
pub struct TaskSlot {
    /// Written by the orchestrator before publication (module docs).
    pub payload: UnsafeCell<TaskPayload>,
    /// Producers not yet finished, plus the orchestrator's self-reference while wiring.
    pub fanin_remaining: AtomicU32,
    /// `generation << 32 | next << 16 | total` (see [`pack_claim`]).
    pub claim: crate::sync::AtomicU64,
    /// Claim units finished.
    pub subtasks_done: AtomicU32,
    /// Set when the task's predicate was false: it retired without running.
    pub skipped: std::sync::atomic::AtomicBool,
    /// State, consumers and references.
    pub fanout: Mutex<Fanout>,
}

// SAFETY: `payload` follows the single-writer-before-publication protocol in the module
// docs; every other field is atomic or behind a mutex.
unsafe impl Sync for TaskSlot {}
// SAFETY: the only field that is not `Send` by itself is the payload's pointer to the
// slot's cells of its ring's tensor table, which lives as long as the slots (`Ring`) and is
// used under the same protocol as the rest of the payload.
unsafe impl Send for TaskSlot {}

impl TaskSlot {
    /// An empty, free slot whose tensors go to `cells` of its ring's [`TensorTable`]
    /// ([`TensorTable::cells_of`]), which must outlive the slot and belong to it alone;
    /// [`SlotCells::NONE`] for none (every tensor in a vector).
    ///
    /// # Safety
    ///
    /// `cells` is [`SlotCells::NONE`], or its first and overflow cells are writable cells
    /// of one mapping that no other slot uses and that stay mapped while the slot lives.
    pub unsafe fn new(cells: SlotCells) -> TaskSlot {
        TaskSlot {
            payload: UnsafeCell::new(TaskPayload::empty(cells)),
            fanin_remaining: AtomicU32::new(0),
            claim: crate::sync::AtomicU64::new(u64::MAX),
            subtasks_done: AtomicU32::new(0),
            skipped: std::sync::atomic::AtomicBool::new(false),
            fanout: Mutex::new(Fanout {
                state: SlotState::Free,
                consumers: Consumers::new(),
                fanout_count: 0,
                released: 0,
            }),
        }
    }

    /// The payload, for readers that received the task id through a synchronizing handoff.
    ///
    /// # Safety
    /// The caller must have obtained the task id after its publication (ready queue, fanout
    /// list, or being the orchestrator itself after writing it), and the slot must not be
    /// reclaimed while the reference lives.
    pub unsafe fn payload(&self) -> &TaskPayload {
        // SAFETY: per the caller's contract no writer is active.
        unsafe { &*self.payload.get() }
    }
}

impl Default for TaskSlot {
    /// A slot without tensor cells.
    fn default() -> TaskSlot {
        // SAFETY: null is always allowed.
        unsafe { TaskSlot::new(SlotCells::NONE) }
    }
}

#[cfg(all(test, loom))]
mod loom_models {
    //! Run with `RUSTFLAGS="--cfg loom" cargo test -p pto-runtime --lib --release loom`.
    use loom::sync::Arc;

    use super::*;
    use crate::sync::{AtomicU32, AtomicU64, Ordering};

    /// Two workers drain a three-subtask claim word: every subtask is claimed exactly once,
    /// and a stale queue entry of the slot's previous task claims nothing.
    #[test]
    fn loom_claim_hands_out_each_subtask_once() {
        loom::model(|| {
            let id = TaskId::new(1, 5);
            let word = Arc::new(AtomicU64::new(pack_claim(id, 0, 3)));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let word = Arc::clone(&word);
                    loom::thread::spawn(move || {
                        let mut got = Vec::new();
                        while let Some((i, total)) = claim_from(&word, 5) {
                            assert_eq!(total, 3);
                            got.push(i);
                        }
                        got
                    })
                })
                .collect();
            let stale = claim_from(&word, 4);
            let mut all: Vec<u32> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            all.sort();
            assert_eq!(all, [0, 1, 2]);
            assert_eq!(stale, None);
        });
    }

    /// The fanin countdown: two producers complete while the orchestrator drops its
    /// self-reference; exactly one of the three makes the task ready.
    #[test]
    fn loom_fanin_countdown_readies_exactly_once() {
        loom::model(|| {
            let fanin = Arc::new(AtomicU32::new(3));
            let readied = Arc::new(AtomicU32::new(0));
            let handles: Vec<_> = (0..2)
                .map(|_| {
                    let (fanin, readied) = (Arc::clone(&fanin), Arc::clone(&readied));
                    loom::thread::spawn(move || {
                        if fanin.fetch_sub(1, Ordering::AcqRel) == 1 {
                            readied.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            if fanin.fetch_sub(1, Ordering::AcqRel) == 1 {
                readied.fetch_add(1, Ordering::Relaxed);
            }
            for h in handles {
                h.join().unwrap();
            }
            assert_eq!(readied.load(Ordering::Relaxed), 1);
        });
    }
}

#[cfg(test)]
mod site_tests {
    use super::Site;

    #[test]
    fn scope_stats_sites_are_written_as_simpler_writes_them() {
        assert_eq!(Site::ROOT.scope_stats_text(), "(unknown):0");
        assert_eq!(Site::UNKNOWN.scope_stats_text(), "(unknown):0");
        assert_eq!(Site::ROOT.render(), "<orchestration entry>:0");
        let user = Site {
            file: c"/src/kernels/orchestration/scale_add.cpp".as_ptr(),
            line: 77,
        };
        assert!(!user.is_root());
        assert_eq!(user.scope_stats_text(), "scale_add.cpp:77");
        let windows = Site {
            file: c"C:\\src\\orch.cpp".as_ptr(),
            line: 5,
        };
        assert_eq!(windows.scope_stats_text(), "orch.cpp:5");
        let long = Site {
            file: c"/a/abcdefghijklmnopqrstuvwxyz0123456789.cpp".as_ptr(),
            line: 1,
        };
        assert_eq!(long.scope_stats_text(), "abcdefghijklmnopqrstuvwxyz01234:1");
    }
}

#[cfg(test)]
mod consumers_tests {
    use super::{Consumers, TaskId};

    #[test]
    fn consumers_keep_their_order_across_inline_and_vector_and_clear() {
        let mut c = Consumers::new();
        assert_eq!(c.iter().count(), 0);
        let ids: Vec<TaskId> = (0..4).map(|k| TaskId::new(0, k)).collect();
        c.push(ids[0]);
        assert_eq!(c.iter().collect::<Vec<_>>(), ids[..1]);
        for &id in &ids[1..] {
            c.push(id);
        }
        assert_eq!(c.iter().collect::<Vec<_>>(), ids);
        c.clear();
        assert_eq!(c.iter().count(), 0);
        // Reused after a clear: the first goes inline again, the rest after it.
        c.push(ids[3]);
        c.push(ids[2]);
        assert_eq!(c.iter().collect::<Vec<_>>(), [ids[3], ids[2]]);
    }
}

#[cfg(test)]
mod inline_list_tests {
    use super::{InlineList, TaskSlot, TensorTable, INLINE_TENSORS, OVERFLOW_TENSORS};
    use crate::ffi::ChipTensor;

    fn tensor(offset: u64) -> ChipTensor {
        let mut t = ChipTensor::zeroed();
        t.start_offset = offset;
        t
    }

    fn offsets(slot: &TaskSlot) -> Vec<u64> {
        // SAFETY: the test is the only thread; no writer is active while reading.
        unsafe { slot.payload() }
            .tensors
            .iter()
            .map(|t| t.start_offset)
            .collect()
    }

    #[test]
    fn task_tensors_use_their_own_cells_then_spill_and_clear() {
        let table = TensorTable::new(2);
        // SAFETY: each slot gets its own cells of `table`, which outlives them.
        let slots = unsafe {
            [
                TaskSlot::new(table.cells_of(0)),
                TaskSlot::new(table.cells_of(1)),
            ]
        };
        let write = |k: usize, values: &[u64]| {
            // SAFETY: as above.
            let p = unsafe { &mut *slots[k].payload.get() };
            p.tensors.clear();
            for &v in values {
                p.tensors.push(tensor(v));
            }
        };
        write(1, &[100, 101]);
        for n in (0..=OVERFLOW_TENSORS as u64 + 2).chain([INLINE_TENSORS as u64, 1]) {
            let values: Vec<u64> = (0..n).collect();
            write(0, &values);
            assert_eq!(offsets(&slots[0]), values, "{n} tensors");
            assert_eq!(
                offsets(&slots[1]),
                [100, 101],
                "the next slot's cells are its own"
            );
        }
        write(0, &[7]);
        assert_eq!(offsets(&slots[0]), [7], "cleared after a spill");
        // A slot without cells keeps every tensor in its vector.
        let bare = TaskSlot::default();
        // SAFETY: as above.
        let p = unsafe { &mut *bare.payload.get() };
        p.tensors.push(tensor(1));
        p.tensors.push(tensor(2));
        p.tensors.push(tensor(3));
        assert_eq!(offsets(&bare), [1, 2, 3]);
    }

    #[test]
    fn an_inline_list_keeps_its_order_inline_spilled_and_after_clear() {
        let mut l: InlineList<u32, 2> = InlineList::new(u32::MAX);
        assert!(l.is_empty());
        for n in 1..=5u32 {
            l.push(n * 10);
            let expected: Vec<u32> = (1..=n).map(|k| k * 10).collect();
            assert_eq!(l.as_slice(), expected, "after {n} pushes");
        }
        let collected: Vec<u32> = (&l).into_iter().copied().collect();
        assert_eq!(collected, [10, 20, 30, 40, 50]);
        // Cleared after a spill: back to the inline storage, none of the old elements seen.
        l.clear();
        assert!(l.is_empty());
        l.push(7);
        assert_eq!(l.as_slice(), [7]);
        l.push(8);
        l.push(9);
        assert_eq!(
            l.as_slice(),
            [7, 8, 9],
            "a second spill starts from the inline elements"
        );
    }
}
