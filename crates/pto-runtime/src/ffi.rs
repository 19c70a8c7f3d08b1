//! The C ABI shared with orchestration and kernel shared objects.
//!
//! Every `repr(C)` type here mirrors a struct of `include/pto/pto_runtime_abi.h` or
//! `include/pto/tensor.h` field for field; the compile-time assertions at the bottom pin
//! sizes and offsets, and the C++ headers assert the same numbers. This module and
//! [`crate::program`] are the only places that hold raw pointers handed to or from C++.

use std::ffi::{c_char, c_void};

/// Maximum dimensions of a tensor view (`MAX_TENSOR_DIMS`).
pub const MAX_TENSOR_DIMS: usize = 5;
/// Most tensor arguments of one task (`MAX_TENSOR_ARGS`).
pub const MAX_TENSOR_ARGS: usize = 32;
/// Most scalar arguments of one task (`MAX_SCALAR_ARGS`).
pub const MAX_SCALAR_ARGS: usize = 16;
/// Length of a kernel's `args` array (`PTO2_DISPATCH_MAX_ARGS`).
pub const DISPATCH_MAX_ARGS: usize = 50;
/// Index of the `LocalContext` pointer in a kernel's args.
pub const LOCAL_CONTEXT_INDEX: usize = 48;
/// Index of the `GlobalContext` pointer in a kernel's args.
pub const GLOBAL_CONTEXT_INDEX: usize = 49;
/// Kernel id of an inactive slot.
pub const INVALID_KERNEL_ID: i32 = -1;
/// The raw value of an invalid task id.
pub const INVALID_TASK_ID: u64 = u64::MAX;

/// `ChipTensor.buffer`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BufferRef {
    /// Base address.
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
}

/// The 128-byte tensor descriptor (`ChipTensor`).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChipTensor {
    /// The underlying buffer.
    pub buffer: BufferRef,
    /// Raw id of the task that allocated the buffer, or [`INVALID_TASK_ID`].
    pub owner_task_id: u64,
    /// Element offset of the view origin.
    pub start_offset: u64,
    /// Version tag; a newer version on an input forces a conservative overlap.
    pub version: i32,
    /// Number of dimensions.
    pub ndims: u32,
    /// Element type code (Simpler's `DataType`).
    pub dtype: u8,
    /// Untracked by the TensorMap.
    pub manual_dep: bool,
    /// Row-major contiguous view.
    pub is_contiguous: bool,
    /// `AddressSpace`.
    pub address_space: u8,
    /// Extents per dimension.
    pub shapes: [u32; MAX_TENSOR_DIMS],
    /// Elements spanned by the view (0 = not computed).
    pub extent_elem_cache: u64,
    /// Element strides per dimension.
    pub strides: [u32; MAX_TENSOR_DIMS],
    /// Padding to 128 bytes.
    pub pad: [u8; 36],
}

impl ChipTensor {
    /// An all-zero descriptor with an invalid owner.
    pub const fn zeroed() -> ChipTensor {
        ChipTensor {
            buffer: BufferRef { addr: 0, size: 0 },
            owner_task_id: INVALID_TASK_ID,
            start_offset: 0,
            version: 0,
            ndims: 0,
            dtype: 0,
            manual_dep: false,
            is_contiguous: true,
            address_space: 0,
            shapes: [0; MAX_TENSOR_DIMS],
            extent_elem_cache: 0,
            strides: [0; MAX_TENSOR_DIMS],
            pad: [0; 36],
        }
    }

    /// The dimensions in use.
    pub fn dims(&self) -> usize {
        (self.ndims as usize).min(MAX_TENSOR_DIMS)
    }

    /// Number of elements of the view.
    pub fn numel(&self) -> u64 {
        self.shapes[..self.dims()]
            .iter()
            .map(|&s| s as u64)
            .product()
    }

    /// Elements spanned from the view origin to its last element, plus one (0 when empty).
    pub fn extent(&self) -> u64 {
        let dims = self.dims();
        if self.shapes[..dims].contains(&0) {
            return 0;
        }
        1 + (0..dims)
            .map(|d| (self.shapes[d] as u64 - 1) * self.strides[d] as u64)
            .sum::<u64>()
    }
}

/// `TensorCreateInfo`: a tensor the runtime allocates (64 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct TensorCreateInfo {
    /// Element bit pattern to broadcast into the new buffer.
    pub initial_value: u64,
    /// Whether `initial_value` is set.
    pub has_initial_value: u8,
    /// Element type code.
    pub dtype: u8,
    /// Untracked by the TensorMap.
    pub manual_dep: bool,
    /// Padding.
    pub pad0: u8,
    /// Number of dimensions.
    pub ndims: u32,
    /// Extents.
    pub shapes: [u32; MAX_TENSOR_DIMS],
    /// Padding to 64 bytes.
    pub pad1: [u8; 28],
}

/// `TensorArgType`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorArgType {
    /// Read an existing tensor.
    Input = 0,
    /// Runtime-allocated output.
    Output = 1,
    /// Read then write.
    InOut = 2,
    /// Write an existing tensor.
    OutputExisting = 3,
    /// Creator edge only.
    NoDep = 4,
}

impl TensorArgType {
    /// Decodes the ABI byte.
    pub fn from_raw(raw: u8) -> Option<TensorArgType> {
        Some(match raw {
            0 => TensorArgType::Input,
            1 => TensorArgType::Output,
            2 => TensorArgType::InOut,
            3 => TensorArgType::OutputExisting,
            4 => TensorArgType::NoDep,
            _ => return None,
        })
    }

    /// Simpler's spelling (`INPUT`, `OUTPUT`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TensorArgType::Input => "INPUT",
            TensorArgType::Output => "OUTPUT",
            TensorArgType::InOut => "INOUT",
            TensorArgType::OutputExisting => "OUTPUT_EXISTING",
            TensorArgType::NoDep => "NO_DEP",
        }
    }
}

/// `PTO2ArgSlot`: one tensor argument of a submit: a pointer to the caller's object.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ArgSlot {
    /// `const ChipTensor*`, or `const TensorCreateInfo*` for OUTPUT.
    pub reference: *const c_void,
    /// `TensorArgType` byte (validated on use).
    pub arg_type: u8,
    /// Marked by `dump(...)`.
    pub dump: u8,
    /// Padding.
    pub pad: [u8; 6],
}

/// `PTO2LaunchSpec`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchSpec {
    /// SPMD block count (`block_num` / `core_num`).
    pub count: i16,
    /// All blocks must start together.
    pub require_sync_start: bool,
    /// Padding.
    pub pad: u8,
}

/// `DepFlags` bit: order the task after the producer.
pub const DEP_WAIT: u8 = 1;
/// `DepFlags` bit: keep the producer alive until the task completes.
pub const DEP_RETAIN: u8 = 2;

/// `PredicateOp`.
pub mod predicate_op {
    /// No predicate.
    pub const NONE: u8 = 0;
    /// `==`.
    pub const EQ: u8 = 1;
    /// `!=`.
    pub const NE: u8 = 2;
    /// `>`.
    pub const GT: u8 = 3;
    /// `<`.
    pub const LT: u8 = 4;
    /// `>=`.
    pub const GE: u8 = 5;
    /// `<=`.
    pub const LE: u8 = 6;
}

/// `CorePredicateOperand`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PredicateOperand {
    /// The tensor read (may be null).
    pub tensor: *const ChipTensor,
    /// Indices used.
    pub ndims: u32,
    /// The element's multi-index.
    pub indices: [u32; MAX_TENSOR_DIMS],
}

/// `CoreTaskPredicate`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TaskPredicate {
    /// The element compared.
    pub operand: PredicateOperand,
    /// [`predicate_op`] code.
    pub op: u8,
    /// The value compared against.
    pub target: i64,
}

/// `PTO2TaskArgsData`: the flat argument block of one submit.
#[repr(C)]
pub struct TaskArgsData {
    /// Tensor arguments.
    pub tensors: [ArgSlot; MAX_TENSOR_ARGS],
    /// Scalar bits.
    pub scalars: [u64; MAX_SCALAR_ARGS],
    /// Addresses of the caller's scalar objects.
    pub scalar_sources: [*const c_void; MAX_SCALAR_ARGS],
    /// Scalar element types (`DataType` codes).
    pub scalar_dtype: [u8; MAX_SCALAR_ARGS],
    /// Scalar dump marks (bit 0 marked, bit 1 ambiguous source).
    pub scalar_dump: [u8; MAX_SCALAR_ARGS],
    /// Tensors in use.
    pub n_tensors: u32,
    /// Scalars in use.
    pub n_scalars: u32,
    /// Explicit dependencies (raw task ids).
    pub deps: *const u64,
    /// Per-dependency `DepFlags`, or null for WAIT | RETAIN.
    pub dep_kinds: *const u8,
    /// Number of explicit dependencies.
    pub n_deps: u32,
    /// `dump()` marked the whole task.
    pub dump_all: u8,
    /// `set_allow_early_resolve`.
    pub allow_early_resolve: u8,
    /// Padding.
    pub pad0: [u8; 2],
    /// `set_task_timing_slot` (-1 = none).
    pub timing_slot: i32,
    /// SPMD launch.
    pub launch_spec: LaunchSpec,
    /// `set_predicate`.
    pub predicate: TaskPredicate,
    /// First latched argument error (static C text) or null.
    pub error_msg: *const c_char,
    /// Whether an error is latched.
    pub has_error: bool,
    /// Padding.
    pub pad1: [u8; 7],
}

impl TaskArgsData {
    /// The ChipTensor of slot `i` (not an OUTPUT slot).
    ///
    /// # Safety
    /// The slot's reference must point to a live ChipTensor (the API contract: the caller's
    /// objects outlive the submit).
    pub unsafe fn tensor(&self, i: usize) -> &ChipTensor {
        // SAFETY: forwarded to the caller.
        unsafe { &*self.tensors[i].reference.cast::<ChipTensor>() }
    }

    /// The TensorCreateInfo of OUTPUT slot `i`.
    ///
    /// # Safety
    /// As [`TaskArgsData::tensor`], for a TensorCreateInfo.
    pub unsafe fn create_info(&self, i: usize) -> &TensorCreateInfo {
        // SAFETY: forwarded to the caller.
        unsafe { &*self.tensors[i].reference.cast::<TensorCreateInfo>() }
    }
}

/// `PTO2SubmitKind::PTO2_SUBMIT_KERNEL`.
pub const SUBMIT_KERNEL: u32 = 0;
/// `PTO2SubmitKind::PTO2_SUBMIT_DUMMY`.
pub const SUBMIT_DUMMY: u32 = 1;

/// `MixedKernels`: kernel ids of the AIC, AIV0 and AIV1 slots.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MixedKernels {
    /// AIC slot.
    pub aic: i32,
    /// AIV0 slot.
    pub aiv0: i32,
    /// AIV1 slot.
    pub aiv1: i32,
}

/// `TaskOutputTensors`.
#[repr(C)]
pub struct TaskOutputTensors {
    /// Raw task id.
    pub task_id: u64,
    /// Outputs in use.
    pub count: u32,
    /// Padding.
    pub pad0: u32,
    /// Pointers to the task's runtime-allocated outputs.
    pub tensors: [*const ChipTensor; MAX_TENSOR_ARGS],
}

/// `PTO2OrchestrationConfig`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OrchestrationConfig {
    /// Number of orchestration arguments (tensors + scalars) the entry expects.
    pub expected_arg_count: i32,
}

/// `PTO2RuntimeOps`: the function table the orchestration calls.
#[repr(C)]
pub struct RuntimeOps {
    /// `submit_task`.
    pub submit_task: unsafe extern "C" fn(
        *mut RuntimeHandle,
        *const MixedKernels,
        *const TaskArgsData,
        u32,
        *const c_char,
        i32,
        *mut TaskOutputTensors,
    ),
    /// `alloc_tensors`.
    pub alloc_tensors: unsafe extern "C" fn(
        *mut RuntimeHandle,
        *const TaskArgsData,
        *const c_char,
        i32,
        *mut TaskOutputTensors,
    ),
    /// `scope_begin`.
    pub scope_begin: unsafe extern "C" fn(*mut RuntimeHandle, u8, *const c_char, i32),
    /// `scope_end`.
    pub scope_end: unsafe extern "C" fn(*mut RuntimeHandle),
    /// `orchestration_done`.
    pub orchestration_done: unsafe extern "C" fn(*mut RuntimeHandle),
    /// `is_fatal`.
    pub is_fatal: unsafe extern "C" fn(*mut RuntimeHandle) -> bool,
    /// `report_fatal`.
    pub report_fatal: unsafe extern "C" fn(
        *mut RuntimeHandle,
        i32,
        *const c_char,
        *const c_char,
        *const c_char,
        i32,
    ),
    /// `log`.
    pub log: unsafe extern "C" fn(*mut RuntimeHandle, i32, *const c_char, *const c_char),
    /// `get_tensor_data`.
    pub get_tensor_data: unsafe extern "C" fn(
        *mut RuntimeHandle,
        *const ChipTensor,
        u32,
        *const u32,
        *const c_char,
        i32,
    ) -> u64,
    /// `set_tensor_data`.
    pub set_tensor_data: unsafe extern "C" fn(
        *mut RuntimeHandle,
        *const ChipTensor,
        u32,
        *const u32,
        u64,
        *const c_char,
        i32,
    ),
    /// `available_cluster_count`.
    pub available_cluster_count: unsafe extern "C" fn(*mut RuntimeHandle) -> i32,
    /// `available_aiv_count`.
    pub available_aiv_count: unsafe extern "C" fn(*mut RuntimeHandle) -> i32,
}

/// `PTO2Runtime`: what `framework_bind_runtime` receives.
#[repr(C)]
pub struct RuntimeHandle {
    /// The function table.
    pub ops: *const RuntimeOps,
    /// `PTO2ScopeMode` of the next scope (unused by this runtime; kept for layout).
    pub pending_scope_mode: u8,
    /// Padding.
    pub pad: [u8; 7],
    /// Runtime-private context (the orchestrator state).
    pub context: *mut c_void,
}

/// `ChipTaskArgs`: the orchestration's bound arguments.
#[repr(C)]
pub struct ChipTaskArgs {
    /// Number of tensors.
    pub n_tensors: u32,
    /// Number of scalars.
    pub n_scalars: u32,
    /// Tensor descriptors.
    pub tensors: *const ChipTensor,
    /// Scalar bits.
    pub scalars: *const u64,
}

/// `AsyncCtx`: deferred-completion state of a dispatch (onboard only; zero here).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct AsyncCtx {
    /// Where a kernel registers deferred completions (null on the simulator).
    pub completions: u64,
    /// Capacity of `completions`.
    pub capacity: u32,
    /// Entries used.
    pub count: u32,
    /// The task the completions belong to.
    pub task_token: u64,
}

/// `LocalContext`: per dispatch (`args[48]`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalContext {
    /// SPMD block index (`block_idx`, a5 spells it `s_block_idx`).
    pub block_idx: i32,
    /// SPMD block count (`block_num` / `s_block_num`).
    pub block_num: i32,
    /// Deferred completion (unused on the simulator).
    pub async_ctx: AsyncCtx,
}

/// `GlobalContext`: per core (`args[49]`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct GlobalContext {
    /// AIV sub-block (0 or 1); 0 on AIC.
    pub sub_block_id: i32,
    /// SDMA (0) and URMA (1) workspaces; 0 = unavailable (always, on the simulator).
    pub dma_workspace: [u64; 2],
    /// TraCR per-core trace slice (2026-09's `get_tracr_aicore_slice`); 0 = TraCR off
    /// (always, on the simulator).
    pub tracr_aicore_slice: u64,
}

/// `extern "C" void kernel_entry(int64_t* args)`.
pub type KernelEntryFn = unsafe extern "C" fn(*mut i64);
/// `pto_kernel_call(entry, args, message, capacity)` of `tensor.h`: 0 = returned, 2 = threw.
pub type KernelCallFn = unsafe extern "C" fn(KernelEntryFn, *mut i64, *mut c_char, usize) -> i32;
/// `pto_orchestration_call(entry, args, message, capacity)`: 0 = returned, 2 = threw.
pub type OrchCallFn =
    unsafe extern "C" fn(OrchEntryFn, *const ChipTaskArgs, *mut c_char, usize) -> i32;
/// `aicpu_orchestration_entry(const ChipTaskArgs&)`.
pub type OrchEntryFn = unsafe extern "C" fn(*const ChipTaskArgs);
/// `aicpu_orchestration_config(const ChipTaskArgs&)`.
pub type OrchConfigFn = unsafe extern "C" fn(*const ChipTaskArgs) -> OrchestrationConfig;
/// `framework_bind_runtime(PTO2Runtime*)`.
pub type BindRuntimeFn = unsafe extern "C" fn(*mut RuntimeHandle);

// Layout checks: the same numbers are asserted by the C++ headers.
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<ChipTensor>() == 128);
    assert!(align_of::<ChipTensor>() == 64);
    assert!(offset_of!(ChipTensor, owner_task_id) == 16);
    assert!(offset_of!(ChipTensor, start_offset) == 24);
    assert!(offset_of!(ChipTensor, version) == 32);
    assert!(offset_of!(ChipTensor, ndims) == 36);
    assert!(offset_of!(ChipTensor, dtype) == 40);
    assert!(offset_of!(ChipTensor, shapes) == 44);
    assert!(offset_of!(ChipTensor, extent_elem_cache) == 64);
    assert!(offset_of!(ChipTensor, strides) == 72);
    assert!(size_of::<TensorCreateInfo>() == 64);
    assert!(offset_of!(TensorCreateInfo, ndims) == 12);
    assert!(offset_of!(TensorCreateInfo, shapes) == 16);
    assert!(size_of::<ArgSlot>() == 16);
    assert!(size_of::<LaunchSpec>() == 4);
    assert!(size_of::<PredicateOperand>() == 32);
    assert!(size_of::<TaskPredicate>() == 48);
    assert!(offset_of!(TaskArgsData, scalars) == 512);
    assert!(offset_of!(TaskArgsData, n_tensors) == 800);
    assert!(offset_of!(TaskArgsData, deps) == 808);
    assert!(offset_of!(TaskArgsData, timing_slot) == 832);
    assert!(offset_of!(TaskArgsData, launch_spec) == 836);
    assert!(offset_of!(TaskArgsData, predicate) == 840);
    assert!(offset_of!(TaskArgsData, error_msg) == 888);
    assert!(size_of::<TaskArgsData>() == 904);
    assert!(size_of::<MixedKernels>() == 12);
    assert!(offset_of!(TaskOutputTensors, tensors) == 16);
    assert!(offset_of!(RuntimeHandle, context) == 16);
    assert!(size_of::<ChipTaskArgs>() == 24);
    assert!(size_of::<AsyncCtx>() == 24);
    assert!(size_of::<LocalContext>() == 32);
    assert!(offset_of!(LocalContext, async_ctx) == 8);
    assert!(size_of::<GlobalContext>() == 32);
    assert!(offset_of!(GlobalContext, dma_workspace) == 8);
};
