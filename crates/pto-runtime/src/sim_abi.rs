//! The C ABI between the runtime and kernels built over our PTO-ISA header
//! (`include/pto/pto_sim_abi.h`, mirrored field for field; sizes and offsets are pinned
//! below and by the header's own `static_assert`s).
//!
//! A kernel shared object that includes `<pto/pto-inst.hpp>` exports `pto_sim_invoke`; the
//! runtime then runs each subtask as `pto_sim_invoke(ctx, kernel_entry, args)`, with a
//! [`PtoSimContext`] that gives the header the core's identity, its on-chip memories, the
//! cluster's shared storage (TPUSH/TPOP pipes), a fault callback, the run's stop flag and the
//! task's global-memory ranges. See [`crate::exec`] for the side that fills it.

use std::ffi::{c_char, c_void};

use crate::ffi::KernelEntryFn;

/// `PTO_SIM_ABI_VERSION`.
pub const ABI_VERSION: u32 = 1;

/// Number of on-chip memories per core (`PTO_SIM_BUFFER_COUNT`).
pub const BUFFER_COUNT: usize = 7;

/// `PtoSimStatus`: the entry returned normally.
pub const STATUS_OK: i32 = 0;
/// `PtoSimStatus`: the header reported a fault and unwound the kernel.
pub const STATUS_FAULT: i32 = 1;
/// `PtoSimStatus`: a C++ exception left the kernel.
pub const STATUS_EXCEPTION: i32 = 2;
/// `PtoSimStatus`: a blocking wait gave up because the run is stopping.
pub const STATUS_STOPPED: i32 = 3;

/// `PtoSimCoreType::PTO_SIM_CORE_AIC`.
pub const CORE_AIC: i32 = 0;
/// `PtoSimCoreType::PTO_SIM_CORE_AIV`.
pub const CORE_AIV: i32 = 1;

/// `PtoSimMemory`: one on-chip memory.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PtoSimMemory {
    /// First byte.
    pub base: *mut u8,
    /// Capacity in bytes.
    pub size: u64,
}

/// `cluster_storage(ctx, key, bytes)`.
pub type ClusterStorageFn = unsafe extern "C" fn(*mut PtoSimContext, u64, u64) -> *mut c_void;
/// `fault(ctx, message)`.
pub type FaultFn = unsafe extern "C" fn(*mut PtoSimContext, *const c_char);
/// `pto_sim_invoke(ctx, entry, args)`.
pub type SimInvokeFn = unsafe extern "C" fn(*mut PtoSimContext, KernelEntryFn, *mut i64) -> i32;

/// `PtoSimContext`: the execution context of one subtask.
#[repr(C)]
#[derive(Debug)]
pub struct PtoSimContext {
    /// [`ABI_VERSION`].
    pub abi_version: u32,
    /// [`CORE_AIC`] or [`CORE_AIV`].
    pub core_type: i32,
    /// SPMD block index.
    pub block_idx: i32,
    /// SPMD block count.
    pub block_num: i32,
    /// AIV lane in the cluster (0 or 1); 0 on AIC.
    pub subblock_id: i32,
    /// AIV lanes the task uses in this cluster; 1 on AIC.
    pub subblock_dim: i32,
    /// Logical core.
    pub core_id: i32,
    /// Cluster of the core.
    pub cluster_id: i32,
    /// The kernel's func_id.
    pub func_id: i32,
    /// 0 = a2a3, 1 = a5.
    pub arch: i32,
    /// Raw task id.
    pub task_id: u64,
    /// Kernel name (NUL-terminated).
    pub kernel_name: *const c_char,
    /// The core's on-chip memories, by `PtoSimBuffer`.
    pub memory: [PtoSimMemory; BUFFER_COUNT],
    /// Opaque runtime pointer for the callbacks.
    pub runtime: *mut c_void,
    /// Per-cluster shared storage.
    pub cluster_storage: ClusterStorageFn,
    /// Fault report.
    pub fault: FaultFn,
    /// Non-zero once the run is stopping (read atomically by the header).
    pub stop: *const u32,
    /// What the core waits on, or null (written atomically by the header).
    pub waiting_on: *const c_char,
    /// `[begin, end)` byte-address pairs the subtask may load from / store to.
    pub gm_ranges: *const u64,
    /// Number of pairs in `gm_ranges`.
    pub n_gm_ranges: u32,
    /// Reserved (zero).
    pub reserved0: u32,
    /// The subtask's instruction trace (`pto_sim_trace.h`), or null: tracing off.
    pub trace: *mut pto_timing::RawTrace,
}

const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<PtoSimMemory>() == 16);
    assert!(offset_of!(PtoSimContext, task_id) == 40);
    assert!(offset_of!(PtoSimContext, kernel_name) == 48);
    assert!(offset_of!(PtoSimContext, memory) == 56);
    assert!(offset_of!(PtoSimContext, runtime) == 168);
    assert!(offset_of!(PtoSimContext, cluster_storage) == 176);
    assert!(offset_of!(PtoSimContext, waiting_on) == 200);
    assert!(offset_of!(PtoSimContext, gm_ranges) == 208);
    assert!(offset_of!(PtoSimContext, trace) == 224);
    assert!(size_of::<PtoSimContext>() == 232);
};
