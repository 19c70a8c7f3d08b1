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

/// `TensorCreateInfo`: a tensor the runtime allocates.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TensorCreateInfo {
    /// Extents.
    pub shapes: [u32; MAX_TENSOR_DIMS],
    /// Number of dimensions.
    pub ndims: u32,
    /// Element type code.
    pub dtype: u8,
    /// Untracked by the TensorMap.
    pub manual_dep: bool,
    /// Whether `initial_value` is set.
    pub has_initial_value: u8,
    /// Padding.
    pub pad0: u8,
    /// Element bit pattern to broadcast into the new buffer.
    pub initial_value: u64,
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

/// `PTO2ArgSlot`: one tensor argument of a submit (existing tensors by value).
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug)]
pub struct ArgSlot {
    /// Existing tensor (unused for OUTPUT).
    pub tensor: ChipTensor,
    /// Address of the caller's object (for `dump(...)`).
    pub source: *const c_void,
    /// For OUTPUT.
    pub create_info: TensorCreateInfo,
    /// `TensorArgType` byte (validated on use).
    pub arg_type: u8,
    /// Marked by `dump(...)`.
    pub dump: u8,
}

/// `PTO2LaunchSpec`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchSpec {
    /// SPMD block count.
    pub block_num: u32,
    /// All blocks must start together.
    pub require_sync_start: u8,
    /// Early dispatch allowed (recorded only).
    pub allow_early_resolve: u8,
    /// Padding.
    pub pad: [u8; 2],
}

/// Argument errors latched by the C++ side (`PTO2ArgError`).
pub mod arg_error {
    /// No error.
    pub const OK: i32 = 0;
    /// A tensor was added after a scalar.
    pub const TENSOR_AFTER_SCALAR: i32 = 1;
    /// More than `MAX_TENSOR_ARGS` tensors.
    pub const TOO_MANY_TENSORS: i32 = 2;
    /// More than `MAX_SCALAR_ARGS` scalars.
    pub const TOO_MANY_SCALARS: i32 = 3;
    /// `dump(x)` of something not added to the task.
    pub const DUMP_UNKNOWN: i32 = 4;
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
    /// Scalar dump marks.
    pub scalar_dump: [u8; MAX_SCALAR_ARGS],
    /// Scalar element types (`DataType` codes).
    pub scalar_dtype: [u8; MAX_SCALAR_ARGS],
    /// Tensors in use.
    pub n_tensors: u32,
    /// Scalars in use.
    pub n_scalars: u32,
    /// Explicit dependencies (raw task ids).
    pub deps: *const u64,
    /// Number of explicit dependencies.
    pub n_deps: u32,
    /// `dump()` marked the whole task.
    pub dump_all: u8,
    /// Padding.
    pub pad0: [u8; 3],
    /// SPMD launch.
    pub launch_spec: LaunchSpec,
    /// Latched argument error ([`arg_error`]).
    pub error: i32,
    /// Argument index of the latched error.
    pub error_index: u32,
}

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
}

/// `extern "C" void kernel_entry(int64_t* args)`.
pub type KernelEntryFn = unsafe extern "C" fn(*mut i64);
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
    assert!(size_of::<TensorCreateInfo>() == 40);
    assert!(size_of::<ArgSlot>() == 192);
    assert!(offset_of!(ArgSlot, source) == 128);
    assert!(offset_of!(ArgSlot, create_info) == 136);
    assert!(offset_of!(ArgSlot, arg_type) == 176);
    assert!(size_of::<LaunchSpec>() == 8);
    assert!(offset_of!(TaskArgsData, scalars) == 192 * MAX_TENSOR_ARGS);
    assert!(size_of::<MixedKernels>() == 12);
    assert!(offset_of!(TaskOutputTensors, tensors) == 16);
    assert!(offset_of!(RuntimeHandle, context) == 16);
    assert!(size_of::<ChipTaskArgs>() == 24);
    assert!(size_of::<AsyncCtx>() == 24);
    assert!(size_of::<LocalContext>() == 32);
    assert!(offset_of!(LocalContext, async_ctx) == 8);
    assert!(size_of::<GlobalContext>() == 24);
    assert!(offset_of!(GlobalContext, dma_workspace) == 8);
};
