//! Executing one subtask on a logical core: the kernel's `args` array, the PTO-ISA
//! simulation context ([`crate::sim_abi`]), each executing thread's on-chip memories, the
//! per-cluster storage behind TPUSH / TPOP pipes, and faults reported by the header.
//!
//! Every OS thread that runs kernels (a worker of the pool, or a gang helper of
//! [`crate::gang`]) owns one [`Executor`]. Its on-chip memories belong to the thread, not to
//! the logical core: a thread runs one subtask at a time, and nothing on the device promises
//! that a core's buffers survive from one task to the next, so the difference cannot be
//! observed by a correct kernel. Cross-core state that *must* be shared (the pipes of a MIX
//! cluster) lives in [`ClusterStorage`], keyed by the cluster and the pipe, for the whole run.

use std::cell::UnsafeCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::chip::Chip;
use crate::error::{ErrorCode, RuntimeError};
use crate::ffi::{
    GlobalContext, KernelCallFn, KernelEntryFn, LocalContext, DISPATCH_MAX_ARGS,
    GLOBAL_CONTEXT_INDEX, LOCAL_CONTEXT_INDEX, MAX_TENSOR_ARGS,
};
use crate::monitor::ThreadRole;
use crate::platform::{CoreType, Platform};
use crate::sim_abi::{
    PtoSimContext, PtoSimMemory, SimInvokeFn, ABI_VERSION, BUFFER_COUNT, CORE_AIC, CORE_AIV,
    STATUS_EXCEPTION, STATUS_FAULT, STATUS_OK, STATUS_STOPPED,
};
use crate::task::{ActiveSlot, TaskId, TaskPayload};

/// Names of the on-chip memories, by `PtoSimBuffer` index (for messages and env variables).
pub const BUFFER_NAMES: [&str; BUFFER_COUNT] = ["UB", "L1", "L0A", "L0B", "L0C", "BIAS", "FBUF"];

/// Byte sizes of one core's on-chip memories, by `PtoSimBuffer` index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimMemorySizes(pub [u64; BUFFER_COUNT]);

/// Most bytes one on-chip memory may be given through the environment (64 MiB).
const MAX_BUFFER_BYTES: u64 = 64 << 20;

impl SimMemorySizes {
    /// The device's sizes: a2a3 UB 192 KiB, L1 512 KiB, L0A / L0B 64 KiB, L0C 128 KiB;
    /// a5 UB 256 KiB and L0C 256 KiB; BIAS 1 KiB and FBUF 2 KiB on both.
    pub fn for_platform(platform: Platform) -> SimMemorySizes {
        const K: u64 = 1024;
        match platform {
            Platform::A5Sim | Platform::A5 => {
                SimMemorySizes([256 * K, 512 * K, 64 * K, 64 * K, 256 * K, K, 2 * K])
            }
            _ => SimMemorySizes([192 * K, 512 * K, 64 * K, 64 * K, 128 * K, K, 2 * K]),
        }
    }

    /// [`SimMemorySizes::for_platform`] with PTO-ISA's overrides
    /// `PTO_CPU_SIM_{UB,L1,L0A,L0B,L0C}_BYTES` from the environment.
    pub fn resolve(platform: Platform) -> Result<SimMemorySizes, RuntimeError> {
        Self::resolve_with_env(platform, &|name| std::env::var(name).ok())
    }

    /// [`SimMemorySizes::resolve`] with an explicit environment (for tests).
    pub fn resolve_with_env(
        platform: Platform,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<SimMemorySizes, RuntimeError> {
        let mut sizes = Self::for_platform(platform);
        for (i, name) in BUFFER_NAMES.iter().enumerate().take(5) {
            let var = format!("PTO_CPU_SIM_{name}_BYTES");
            let Some(text) = env(&var).filter(|t| !t.trim().is_empty()) else {
                continue;
            };
            match text.trim().parse::<u64>() {
                Ok(v) if (1..=MAX_BUFFER_BYTES).contains(&v) => sizes.0[i] = v,
                _ => {
                    return Err(RuntimeError::InvalidConfig {
                        message: format!(
                            "{var}={text:?}: an on-chip buffer size is a number of bytes between 1 and {MAX_BUFFER_BYTES}"
                        ),
                    })
                }
            }
        }
        Ok(sizes)
    }
}

/// 64 zero bytes, 64-byte aligned: the unit of every buffer handed to kernels.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// `bytes` (rounded up to lines) of zeroes. Allocated zeroed rather than written: the
/// allocator hands out fresh zero pages for buffers this large, so a thread's on-chip
/// memories cost nothing until a kernel touches them (a thread that starts while many
/// others compete for the host's CPUs starts its kernel sooner).
fn lines(bytes: u64) -> Box<[Line]> {
    let n = bytes.div_ceil(64) as usize;
    if n == 0 {
        return Box::new([]);
    }
    let Ok(layout) = std::alloc::Layout::array::<Line>(n) else {
        std::alloc::handle_alloc_error(std::alloc::Layout::new::<Line>());
    };
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Line>();
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: `ptr` is a fresh allocation of `n` Lines from the global allocator with
    // Box's layout for `[Line]`, and all-zero bytes are a valid `Line`.
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) }
}

/// One block of cluster storage.
struct StorageBlock {
    key: u64,
    bytes: u64,
    memory: Box<[Line]>,
}

/// Storage shared by the cores of each cluster for the whole run (the state of TPUSH / TPOP
/// pipes, which persists across tasks on a cluster as on the device).
pub struct ClusterStorage {
    clusters: Box<[Mutex<Vec<StorageBlock>>]>,
}

/// Most bytes of cluster storage one key may ask for (16 MiB).
const MAX_STORAGE_BYTES: u64 = 16 << 20;

impl ClusterStorage {
    /// Empty storage for `n_clusters` clusters.
    pub fn new(n_clusters: usize) -> ClusterStorage {
        ClusterStorage {
            clusters: (0..n_clusters.max(1))
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
        }
    }

    /// The block for `key` in `cluster`: zero-filled on first request, never moved; `None`
    /// for an unknown cluster, a size of 0 or above 16 MiB, or a size other than the first
    /// request's.
    pub fn get(&self, cluster: usize, key: u64, bytes: u64) -> Option<*mut u8> {
        if bytes == 0 || bytes > MAX_STORAGE_BYTES {
            return None;
        }
        let mut blocks = self.clusters.get(cluster)?.lock();
        if let Some(b) = blocks.iter_mut().find(|b| b.key == key) {
            return (b.bytes == bytes).then(|| b.memory.as_mut_ptr().cast::<u8>());
        }
        let mut memory = lines(bytes);
        let ptr = memory.as_mut_ptr().cast::<u8>();
        blocks.push(StorageBlock { key, bytes, memory });
        Some(ptr)
    }
}

/// What an executing thread is doing, for the scheduler-timeout message. Shared between the
/// thread and the run's watchdog. Aligned to two cache lines so that the statuses of two
/// threads, which each writes on every unit, never share a line.
#[repr(align(128))]
pub struct ExecStatus {
    /// Raw task id, or `u64::MAX` when idle.
    pub task: AtomicU64,
    /// Logical core.
    pub core: AtomicUsize,
    /// When the subtask started ([`crate::dfx::coarse_now_ns`]).
    pub since_ns: AtomicU64,
    /// Set once the thread has exited.
    pub exited: AtomicBool,
    /// Units (a subtask, or a gang of them) the thread has entered and left: odd while it is
    /// inside one. Written only by a worker thread (not by gang helpers), read by the run's
    /// monitor to see that a thread has been inside one unit for long.
    pub units: AtomicU64,
    /// The simulation context of the running subtask; only `waiting_on` is read by others.
    context: UnsafeCell<PtoSimContext>,
}

// SAFETY: the atomics are shared; `context` is written only by the owning thread, and other
// threads read only its `waiting_on` field, atomically (see `ExecStatus::waiting_on`).
unsafe impl Sync for ExecStatus {}
// SAFETY: the raw pointers inside `context` point to run-lived data; the struct moves with
// its owner before any kernel runs.
unsafe impl Send for ExecStatus {}

impl Default for ExecStatus {
    fn default() -> ExecStatus {
        ExecStatus::new()
    }
}

impl ExecStatus {
    /// An idle status.
    pub fn new() -> ExecStatus {
        ExecStatus {
            task: AtomicU64::new(u64::MAX),
            core: AtomicUsize::new(0),
            since_ns: AtomicU64::new(0),
            exited: AtomicBool::new(false),
            units: AtomicU64::new(0),
            context: UnsafeCell::new(PtoSimContext {
                abi_version: ABI_VERSION,
                core_type: CORE_AIV,
                block_idx: 0,
                block_num: 1,
                subblock_id: 0,
                subblock_dim: 1,
                core_id: 0,
                cluster_id: 0,
                func_id: -1,
                arch: 0,
                task_id: u64::MAX,
                kernel_name: c"?".as_ptr(),
                memory: [PtoSimMemory {
                    base: std::ptr::null_mut(),
                    size: 0,
                }; BUFFER_COUNT],
                runtime: std::ptr::null_mut(),
                cluster_storage: cluster_storage_callback,
                fault: fault_callback,
                stop: std::ptr::null(),
                waiting_on: std::ptr::null(),
                gm_ranges: std::ptr::null(),
                n_gm_ranges: 0,
                reserved0: 0,
                trace: std::ptr::null_mut(),
            }),
        }
    }

    /// What the running kernel is blocked on, as the PTO-ISA header published it.
    pub fn waiting_on(&self) -> Option<String> {
        if self.task.load(Ordering::Acquire) == u64::MAX {
            return None;
        }
        // SAFETY: `waiting_on` is a properly aligned pointer-sized field that the kernel
        // thread writes atomically; reading it through an AtomicPtr view is a plain atomic load.
        let field = unsafe {
            &*std::ptr::addr_of!((*self.context.get()).waiting_on).cast::<AtomicPtr<c_char>>()
        };
        let p = field.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: the header publishes only NUL-terminated texts that live for the run.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// The subtask [`Executor::run`] is running: its task, the task's payload, where it runs
/// and its kernel's func_id.
#[derive(Clone, Copy)]
struct Subtask<'p> {
    id: TaskId,
    payload: &'p TaskPayload,
    place: Placement,
    func_id: i32,
}

/// Where a subtask runs.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    /// Logical core.
    pub core: usize,
    /// Its cluster.
    pub cluster: usize,
    /// SPMD block.
    pub block: u32,
    /// Index into the payload's active slots.
    pub active_index: u8,
    /// The core's dispatch count for this subtask (swimlane `reg_task_id`, from
    /// [`crate::cores::CoreTable::try_take`]).
    pub reg: u32,
}

/// The per-thread side of kernel execution.
pub struct Executor<'c> {
    chip: &'c Chip,
    status: &'c ExecStatus,
    slot: usize,
    memories: Option<[Box<[Line]>; BUFFER_COUNT]>,
    shared_gm: crate::shared_gm::SharedGmCache,
    /// The trace buffer, when the run predicts device time.
    sink: Option<pto_timing::TraceSink>,
    /// Predictions of the subtasks run here, handed to the chip on drop.
    predicted: Vec<crate::dfx::PredictedRecord>,
}

impl Drop for Executor<'_> {
    fn drop(&mut self) {
        if !self.predicted.is_empty() {
            self.chip.predicted.lock().append(&mut self.predicted);
        }
    }
}

impl<'c> Executor<'c> {
    /// An executor for the calling thread, reporting through `status`; `slot` and `role`
    /// identify the thread to the run's monitor (which is told here that it started).
    pub fn new(
        chip: &'c Chip,
        status: &'c ExecStatus,
        slot: usize,
        role: ThreadRole,
    ) -> Executor<'c> {
        if let Some(m) = &chip.config.monitor {
            m.0.thread_started(slot, role);
        }
        Executor {
            chip,
            status,
            slot,
            memories: None,
            shared_gm: Default::default(),
            sink: chip
                .timing_model
                .as_ref()
                .map(|m| pto_timing::TraceSink::new(m.clone(), pto_timing::sink::DEFAULT_CAPACITY)),
            predicted: Vec::new(),
        }
    }

    /// The thread's status.
    pub fn status(&self) -> &'c ExecStatus {
        self.status
    }

    /// Runs subtask `place` of task `id`. Returns the kernel's func_id.
    ///
    /// Builds the kernel's argument array (tensor pointers, scalars, the two context
    /// pointers), marks the thread busy, and runs the kernel directly
    /// (`Self::run_direct`) or through the simulator's `pto_sim_invoke`
    /// (`Self::run_simulated`).
    pub fn run(&mut self, id: TaskId, payload: &TaskPayload, place: Placement) -> i32 {
        let chip = self.chip;
        let ActiveSlot {
            slot,
            entry,
            invoke,
            call,
        } = payload.active[place.active_index as usize];
        let func_id = payload.kernel_ids[slot as usize];
        let Some(entry) = entry else {
            return func_id;
        };
        let local = LocalContext {
            block_idx: place.block as i32,
            block_num: payload.block_num as i32,
            ..LocalContext::default()
        };
        let global = GlobalContext {
            sub_block_id: chip.topology.sub_block(place.core),
            ..GlobalContext::default()
        };
        let mut args = [0i64; DISPATCH_MAX_ARGS];
        let n_t = payload.tensors.len();
        for (a, t) in args.iter_mut().zip(&payload.tensors) {
            *a = t as *const _ as i64;
        }
        for (a, s) in args[n_t..].iter_mut().zip(&payload.scalars) {
            *a = *s as i64;
        }
        args[LOCAL_CONTEXT_INDEX] = &local as *const LocalContext as i64;
        args[GLOBAL_CONTEXT_INDEX] = &global as *const GlobalContext as i64;
        let status = self.status;
        status.core.store(place.core, Ordering::Relaxed);
        status
            .since_ns
            .store(crate::dfx::coarse_now_ns(), Ordering::Relaxed);
        status.task.store(id.0, Ordering::Release);
        if let Some(m) = &chip.config.monitor {
            m.0.subtask_started(self.slot, id, place.core, func_id, payload);
        }
        let st = Subtask {
            id,
            payload,
            place,
            func_id,
        };
        match invoke {
            None => self.run_direct(st, entry, call, &mut args),
            Some(invoke) => self.run_simulated(st, entry, invoke, &mut args, global.sub_block_id),
        }
        if let Some(m) = &chip.config.monitor {
            m.0.subtask_finished(self.slot);
        }
        status.task.store(u64::MAX, Ordering::Release);
        func_id
    }

    /// Runs a kernel not built over the PTO-ISA header: through `pto_kernel_call` when the
    /// library has one (an uncaught C++ exception is a kernel fault), else its entry
    /// directly. Its predicted timing is "not modelled".
    #[inline]
    fn run_direct(
        &mut self,
        st: Subtask<'_>,
        entry: KernelEntryFn,
        call: Option<KernelCallFn>,
        args: &mut [i64; DISPATCH_MAX_ARGS],
    ) {
        let Subtask {
            id,
            payload,
            place,
            func_id,
        } = st;
        let chip = self.chip;
        if self.sink.is_some() {
            self.predicted.push(crate::dfx::PredictedRecord {
                core: place.core as u32,
                task: id.0,
                func_id,
                timing: pto_timing::SubtaskTiming::Unmodelled(
                    "not modelled: the kernel is not built over the PTO-ISA header (no instructions to time)"
                        .to_string(),
                ),
            });
        }
        if let Some(call) = call {
            let mut message = [0 as c_char; 256];
            // SAFETY: as below; `pto_kernel_call` runs the entry inside a C++ try
            // block and writes at most `message.len()` bytes.
            let rc = unsafe {
                call(
                    entry,
                    args.as_mut_ptr(),
                    message.as_mut_ptr(),
                    message.len(),
                )
            };
            if rc != 0 {
                // SAFETY: snprintf NUL-terminates within the buffer.
                let what = unsafe { CStr::from_ptr(message.as_ptr()) }.to_string_lossy();
                chip.raise(
                    ErrorCode::KernelFault,
                    format!(
                        "{} (block {} of {}): uncaught C++ exception: {what}; {}",
                        subtask_label(chip, id, payload, place.core, func_id),
                        place.block,
                        payload.block_num,
                        describe_arguments(payload)
                    ),
                );
            }
        } else {
            // SAFETY: `entry` is a `kernel_entry` resolved from a library the chip
            // keeps loaded; `args` follows the kernel ABI (tensor pointers into the
            // payload, which outlives the call, then scalars, then the two context
            // pointers).
            unsafe { entry(args.as_mut_ptr()) };
        }
    }

    /// Runs a kernel built over the PTO-ISA header through its library's
    /// `pto_sim_invoke`: fills the thread's simulation context (core, block, memories, the
    /// GM ranges it may touch: the task's tensors, then the process's shared GM), invokes,
    /// records the predicted timing and reports a non-OK status.
    #[inline]
    fn run_simulated(
        &mut self,
        st: Subtask<'_>,
        entry: KernelEntryFn,
        invoke: SimInvokeFn,
        args: &mut [i64; DISPATCH_MAX_ARGS],
        sub_block_id: i32,
    ) {
        let Subtask {
            id,
            payload,
            place,
            func_id,
        } = st;
        let chip = self.chip;
        let status = self.status;
        let n_t = payload.tensors.len();
        // The task's tensors, then the process's shared GM (comm windows on L3).
        let mut ranges = [0u64; 2 * (MAX_TENSOR_ARGS + crate::shared_gm::MAX_SHARED_GM_RANGES)];
        let mut n_ranges = n_t.min(MAX_TENSOR_ARGS);
        for (pair, t) in ranges.chunks_exact_mut(2).zip(&payload.tensors[..n_ranges]) {
            pair[0] = t.buffer.addr;
            pair[1] = t.buffer.addr.saturating_add(t.buffer.size);
        }
        for range in self.shared_gm.ranges() {
            ranges[2 * n_ranges..2 * n_ranges + 2].copy_from_slice(range);
            n_ranges += 1;
        }
        let ctx = status.context.get();
        let memories = self
            .memories
            .get_or_insert_with(|| std::array::from_fn(|i| lines(chip.sim_memory.0[i])));
        let kernel = chip.kernels.get(func_id);
        let core_type = chip.topology.core_type(place.core);
        // SAFETY: only this thread writes the context; the watchdog reads
        // `waiting_on` atomically (see ExecStatus::waiting_on).
        unsafe {
            let c = &mut *ctx;
            c.abi_version = ABI_VERSION;
            c.core_type = if core_type == CoreType::Aic {
                CORE_AIC
            } else {
                CORE_AIV
            };
            c.block_idx = place.block as i32;
            c.block_num = payload.block_num as i32;
            c.subblock_id = sub_block_id;
            c.subblock_dim = if core_type == CoreType::Aic {
                1
            } else {
                payload.aiv_lanes.max(1) as i32
            };
            c.core_id = place.core as i32;
            c.cluster_id = place.cluster as i32;
            c.func_id = func_id;
            c.arch = chip.config.platform.arch_id();
            c.task_id = id.0;
            c.kernel_name = kernel.map_or(c"?".as_ptr(), |k| k.c_name.as_ptr());
            for (m, (buf, &size)) in c
                .memory
                .iter_mut()
                .zip(memories.iter_mut().zip(&chip.sim_memory.0))
            {
                m.base = buf.as_mut_ptr().cast::<u8>();
                m.size = size;
            }
            c.runtime = chip as *const Chip as *mut c_void;
            c.stop = chip.stop_flag();
            c.waiting_on = std::ptr::null();
            c.gm_ranges = ranges.as_ptr();
            c.n_gm_ranges = n_ranges as u32;
            c.trace = self
                .sink
                .as_mut()
                .map_or(std::ptr::null_mut(), |s| s.begin());
        }
        // SAFETY: `invoke` is the header's `pto_sim_invoke` from the kernel's own
        // library; the context and `args` outlive the call.
        let rc = unsafe { invoke(ctx, entry, args.as_mut_ptr()) };
        // SAFETY: as above; clear the pointers into this frame.
        unsafe {
            (*ctx).gm_ranges = std::ptr::null();
            (*ctx).n_gm_ranges = 0;
            (*ctx).trace = std::ptr::null_mut();
        }
        if let Some(sink) = &mut self.sink {
            self.predicted.push(crate::dfx::PredictedRecord {
                core: place.core as u32,
                task: id.0,
                func_id,
                timing: sink.finish(),
            });
        }
        if rc != STATUS_OK {
            self.report_status(id, payload, place, func_id, rc);
        }
    }

    fn report_status(
        &self,
        id: TaskId,
        payload: &TaskPayload,
        place: Placement,
        func_id: i32,
        rc: i32,
    ) {
        let chip = self.chip;
        match rc {
            STATUS_FAULT | STATUS_EXCEPTION => {} // the fault callback has latched the message
            STATUS_STOPPED => {
                if !chip.fatal.is_set() {
                    chip.raise(
                        ErrorCode::KernelFault,
                        format!(
                            "{}: a blocking wait stopped although the run was not stopping",
                            subtask_label(chip, id, payload, place.core, func_id)
                        ),
                    );
                }
            }
            other => chip.raise(
                ErrorCode::KernelFault,
                format!(
                    "{}: pto_sim_invoke returned unknown status {other}",
                    subtask_label(chip, id, payload, place.core, func_id)
                ),
            ),
        }
    }
}

/// `task t5 (kernel 3 'softmax', submitted at orch.cpp:41) on AIV core AIV_6 (cluster 3,
/// block 0)`: how messages name a subtask.
pub fn subtask_label(
    chip: &Chip,
    id: TaskId,
    payload: &TaskPayload,
    core: usize,
    func_id: i32,
) -> String {
    let name = chip.kernels.name(func_id).unwrap_or("?");
    let kind = match chip.topology.core_type(core) {
        CoreType::Aic => "AIC",
        CoreType::Aiv => "AIV",
    };
    format!(
        "task {id} (kernel {func_id} '{name}', func_id {func_id}, submitted at {}) on {kind} core {}",
        payload.site.render(),
        chip.topology.core_label(core)
    )
}

/// `arguments: [0] INPUT FLOAT32 [16, 128] at 0x7f.. (8192 bytes), [3] scalar 0x2a`: a
/// task's arguments, for fault messages.
pub fn describe_arguments(payload: &TaskPayload) -> String {
    let mut parts: Vec<String> = payload
        .tensors
        .iter()
        .zip(&payload.args)
        .enumerate()
        .map(|(i, (t, a))| {
            let shape: Vec<String> = t.shapes[..t.dims()].iter().map(u32::to_string).collect();
            format!(
                "[{i}] {} {} [{}] at 0x{:x} ({} bytes)",
                a.arg_type.name(),
                crate::dtype::name(t.dtype),
                shape.join(", "),
                t.buffer.addr,
                t.buffer.size
            )
        })
        .collect();
    let n = payload.tensors.len();
    parts.extend(
        payload
            .scalars
            .iter()
            .enumerate()
            .map(|(j, s)| format!("[{}] scalar 0x{s:x}", n + j)),
    );
    if parts.is_empty() {
        "arguments: none".to_string()
    } else {
        format!("arguments: {}", parts.join(", "))
    }
}

/// `cluster_storage` of the context: the chip's [`ClusterStorage`].
unsafe extern "C" fn cluster_storage_callback(
    ctx: *mut PtoSimContext,
    key: u64,
    bytes: u64,
) -> *mut c_void {
    let run = || {
        // SAFETY: the header passes back the context the runtime gave it; `runtime` is the
        // chip, alive for the whole run (every executing thread holds it).
        let (chip, cluster) = unsafe { (&*((*ctx).runtime as *const Chip), (*ctx).cluster_id) };
        chip.cluster_storage
            .get(usize::try_from(cluster).unwrap_or(usize::MAX), key, bytes)
            .map_or(std::ptr::null_mut(), |p| p.cast::<c_void>())
    };
    std::panic::catch_unwind(run).unwrap_or(std::ptr::null_mut())
}

/// `fault` of the context: latches a `KernelFault` naming the subtask.
unsafe extern "C" fn fault_callback(ctx: *mut PtoSimContext, message: *const c_char) {
    let run = || {
        // SAFETY: as in `cluster_storage_callback`; `message` is a NUL-terminated text.
        let (chip, c) = unsafe { (&*((*ctx).runtime as *const Chip), &*ctx) };
        let text = if message.is_null() {
            "(no message)".to_string()
        } else {
            // SAFETY: non-null, NUL-terminated (header contract).
            unsafe { CStr::from_ptr(message) }
                .to_string_lossy()
                .into_owned()
        };
        let id = TaskId(c.task_id);
        let core = usize::try_from(c.core_id).unwrap_or(0);
        // SAFETY: the faulting subtask's task is running, so its slot cannot be reclaimed.
        let payload = unsafe { chip.slot(id).payload() };
        chip.raise(
            ErrorCode::KernelFault,
            format!(
                "{} (block {} of {}): {text}; {}",
                subtask_label(chip, id, payload, core, c.func_id),
                c.block_idx,
                c.block_num,
                describe_arguments(payload)
            ),
        );
    };
    let _ = std::panic::catch_unwind(run);
}

/// A kernel name as the context hands it to the header.
pub fn c_name(name: &str) -> CString {
    CString::new(name.replace('\0', "?")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sizes_per_platform_and_env() {
        let a3 = SimMemorySizes::for_platform(Platform::A2a3Sim);
        assert_eq!(a3.0[0], 192 * 1024);
        assert_eq!(
            SimMemorySizes::for_platform(Platform::A5Sim).0[4],
            256 * 1024
        );
        let s = SimMemorySizes::resolve_with_env(Platform::A2a3Sim, &|n| {
            (n == "PTO_CPU_SIM_UB_BYTES").then(|| "524288".to_string())
        })
        .unwrap();
        assert_eq!(s.0[0], 512 * 1024);
        let err = SimMemorySizes::resolve_with_env(Platform::A2a3Sim, &|n| {
            (n == "PTO_CPU_SIM_L0C_BYTES").then(|| "0".to_string())
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("PTO_CPU_SIM_L0C_BYTES"), "{err}");
    }

    #[test]
    fn cluster_storage_is_stable_and_sized() {
        let s = ClusterStorage::new(2);
        let a = s.get(1, 7, 100).unwrap();
        assert_eq!(a as usize % 64, 0);
        assert_eq!(s.get(1, 7, 100), Some(a));
        assert!(s.get(1, 7, 200).is_none());
        assert_ne!(s.get(0, 7, 100), Some(a));
        assert!(s.get(5, 7, 100).is_none());
        assert!(s.get(0, 8, 0).is_none());
        // SAFETY: the block has 100 zeroed bytes.
        assert!(unsafe { std::slice::from_raw_parts(a, 100) }
            .iter()
            .all(|&b| b == 0));
    }
}
