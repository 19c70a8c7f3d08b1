// pto_runtime_abi.h: the C ABI between an orchestration shared object and the PTO runtime.
//
// The runtime hands the orchestration a `PTO2Runtime` whose first field points to a table of
// plain C function pointers (`PTO2RuntimeOps`). Only POD structs and pointers cross this
// boundary: no C++ references, exceptions or varargs. The Rust side mirrors every struct in
// crates/pto-runtime/src/ffi.rs with the same size and field offsets (checked on both sides).
//
// The C++ classes here (`TensorCreateInfo`, `PTO2LaunchSpec`, `CoreTaskPredicate`,
// `TaskOutputTensors`, `MixedKernels`) carry Simpler's names and members; `CoreTaskArgs`,
// built on `PTO2TaskArgsData`, is in pto_orchestration_core.h. Both generations' APIs
// (pto_orchestration_api.h, 2026-08; orchestration_api.h, 2026-09) are spellings over this
// one table: the tensor type is `simpler::tmr::Tensor` (2026-08 calls it `ChipTensor`).
#pragma once

#include "pto_tensor_core.h"

/// Most tensors one task may take.
#define MAX_TENSOR_ARGS 32
/// Most scalars one task may take.
#define MAX_SCALAR_ARGS 16
/// Most runtime-allocated outputs one submit returns.
#define PTO2_MAX_OUTPUTS MAX_TENSOR_ARGS
/// Most tensors of the orchestration's own arguments.
#define CHIP_MAX_TENSOR_ARGS 256
/// Most scalars of the orchestration's own arguments.
#define CHIP_MAX_SCALAR_ARGS 128
/// Task timing slots (`set_task_timing_slot`).
#define NUM_TASK_TIMING_SLOTS 16
/// No timing slot.
#define TASK_TIMING_SLOT_NONE (-1)
/// Kernel id of an inactive slot of a mixed task.
constexpr int32_t INVALID_KERNEL_ID = -1;

/// Scope modes: AUTO scopes infer dependencies through the TensorMap; MANUAL scopes order
/// tasks only by their explicit dependencies.
enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

/// How a task uses a tensor argument.
enum class TensorArgType : uint8_t {
    INPUT = 0,            ///< read an existing tensor
    OUTPUT = 1,           ///< the runtime allocates the tensor (from a TensorCreateInfo)
    INOUT = 2,            ///< read then write an existing tensor
    OUTPUT_EXISTING = 3,  ///< write an existing tensor
    NO_DEP = 4,           ///< existing tensor, creator edge only
};

/// How a task depends on an explicit dependency: WAIT orders it after the producer, RETAIN
/// keeps the producer's slot and output buffers alive until this task completes.
enum DepFlags : uint8_t { DEP_NONE = 0, DEP_WAIT = 1, DEP_RETAIN = 2 };
inline constexpr DepFlags operator|(DepFlags a, DepFlags b) { return (DepFlags)((uint8_t)a | (uint8_t)b); }
inline constexpr DepFlags operator&(DepFlags a, DepFlags b) { return (DepFlags)((uint8_t)a & (uint8_t)b); }
inline DepFlags& operator|=(DepFlags& a, DepFlags b) { return a = a | b; }
/// Whether `f` orders the task after its producer.
inline constexpr bool dep_has_wait(DepFlags f) { return ((uint8_t)f & DEP_WAIT) != 0; }
/// Whether `f` keeps the producer alive until the task completes.
inline constexpr bool dep_has_retain(DepFlags f) { return ((uint8_t)f & DEP_RETAIN) != 0; }

/// Describes a tensor the runtime allocates for a task (`add_output(ci)`, `alloc_tensors`).
/// Referenced by pointer from the task arguments, so it must outlive the submit; one create
/// info may be added twice (two outputs of the same shape).
struct alignas(64) TensorCreateInfo {
    uint64_t initial_value;    ///< element bit pattern broadcast into the buffer when set
    uint8_t has_initial_value;
    DataType dtype;
    bool manual_dep;
    uint8_t _pad0;
    uint32_t ndims;
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint8_t _pad1[28];

    TensorCreateInfo() : initial_value(0), has_initial_value(0), dtype(DataType::FLOAT32), manual_dep(false),
                         _pad0(0), ndims(0), shapes{0, 0, 0, 0, 0}, _pad1{} {}
    /// `ndims` (1..5) dimensions of `dt`; the runtime checks the rank at submit.
    TensorCreateInfo(const uint32_t s[], uint32_t n, DataType dt = DataType::FLOAT32, bool manual = false)
        : initial_value(0), has_initial_value(0), dtype(dt), manual_dep(manual), _pad0(0), ndims(n),
          shapes{0, 0, 0, 0, 0}, _pad1{} {
        for (uint32_t i = 0; i < n && i < (uint32_t)MAX_TENSOR_DIMS; ++i) shapes[i] = s[i];
    }
#if PTO_SIMPLER_GENERATION < 202609
    /// Fills the whole allocated buffer with the low bytes of `v` before the producing task
    /// runs (2026-08 only: 2026-09 removed it; write the contents with set_tensor_data or a task).
    template <class T = uint64_t> TensorCreateInfo& set_initial_value(T v) {
        initial_value = to_u64(v);
        has_initial_value = 1;
        return *this;
    }
#endif
    /// Bytes of the buffer the runtime allocates (`numel * elem_size`).
    uint64_t buffer_size_bytes() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims && i < (uint32_t)MAX_TENSOR_DIMS; ++i) n *= shapes[i];
        return n * get_element_size(dtype);
    }
    /// A copy of this create info.
    TensorCreateInfo copy() const { return *this; }
};
static_assert(sizeof(TensorCreateInfo) == 64, "TensorCreateInfo layout");
static_assert(offsetof(TensorCreateInfo, ndims) == 12, "TensorCreateInfo layout");
static_assert(offsetof(TensorCreateInfo, shapes) == 16, "TensorCreateInfo layout");

/// One tensor argument of a task: a pointer to the caller's tensor (or, for OUTPUT, its
/// TensorCreateInfo), read by the runtime at submit.
struct PTO2ArgSlot {
    const void* ref;   ///< `const simpler::tmr::Tensor*`, or `const TensorCreateInfo*` for OUTPUT
    uint8_t type;      ///< TensorArgType
    uint8_t dump;      ///< marked by dump(...)
    uint8_t _pad[6];
};
static_assert(sizeof(PTO2ArgSlot) == 16, "PTO2ArgSlot layout");

/// SPMD launch parameters of a task. a2a3 calls the count `block_num`, a5 `core_num`, and,
/// as in Simpler, each architecture has only its own names: a source that picks the setter
/// by detecting which one exists (SFINAE on `set_block_num` / `set_core_num`) resolves to
/// exactly one, and PyPTO's a5 codegen emits `set_core_num`. On a5 (`PTO_ARCH_A5`, i.e.
/// `--platform a5sim`) the a2a3 names are deleted, so calling one fails to compile with a
/// note that quotes the line below; a source for both switches on a5's include guard
/// (`SRC_A5_RUNTIME_TENSORMAP_AND_RINGBUFFER_RUNTIME_PTO_TYPES_H_`).
class PTO2LaunchSpec {
public:
    PTO2LaunchSpec() : count_(1), require_sync_start_(false), _pad(0) {}
#if defined(PTO_ARCH_A5)
    /// SPMD blocks (>= 1), a5's name.
    void set_core_num(int16_t n) { count_ = n; }
    /// SPMD blocks, a5's name.
    int16_t core_num() const { return count_; }
    void set_block_num(int16_t n) = delete;  // a5 (--platform a5sim) names it set_core_num(n)
    int16_t block_num() const = delete;      // a5 (--platform a5sim) names it core_num()
#else
    /// SPMD blocks (>= 1), a2a3's name.
    void set_block_num(int16_t n) { count_ = n; }
    /// SPMD blocks, a2a3's name.
    int16_t block_num() const { return count_; }
#endif
    /// All blocks must launch at the same time (gang launch); only matters with > 1 block.
    void set_require_sync_start(bool b) { require_sync_start_ = b; }
    bool require_sync_start() const { return require_sync_start_; }

private:
    int16_t count_;
    bool require_sync_start_;
    uint8_t _pad;
};
static_assert(sizeof(PTO2LaunchSpec) == 4, "PTO2LaunchSpec layout");

/// Comparison of a predicated task.
enum class PredicateOp : uint8_t { NONE = 0, EQ, NE, GT, LT, GE, LE };

/// The element a predicate reads: `tensor[indices[0..ndims)]`.
struct CorePredicateOperand {
    const simpler::tmr::Tensor* tensor = nullptr;
    uint32_t ndims = 0;
    uint32_t indices[MAX_TENSOR_DIMS] = {};
};

/// Dispatch the task only if `operand OP target` holds when it becomes ready (the element is
/// read then, sign-extended to 64 bits); otherwise it retires without running, like a dummy.
struct CoreTaskPredicate {
    CorePredicateOperand operand;
    PredicateOp op = PredicateOp::NONE;
    int64_t target = 0;
};
static_assert(sizeof(CorePredicateOperand) == 32, "CorePredicateOperand layout");
static_assert(sizeof(CoreTaskPredicate) == 48, "CoreTaskPredicate layout");

/// The flat argument block of one submit. `CoreTaskArgs` (pto_orchestration_api.h) derives
/// from it; the runtime reads it through `submit_task`.
struct PTO2TaskArgsData {
    PTO2ArgSlot tensors[MAX_TENSOR_ARGS];
    uint64_t scalars[MAX_SCALAR_ARGS];
    const void* scalar_sources[MAX_SCALAR_ARGS];  ///< address of each scalar's source (dump)
    uint8_t scalar_dtype[MAX_SCALAR_ARGS];         ///< DataType of each scalar (args dump)
    uint8_t scalar_dump[MAX_SCALAR_ARGS];          ///< bit 0: marked; bit 1: ambiguous source
    uint32_t n_tensors;
    uint32_t n_scalars;
    const simpler::tmr::TaskId* deps;        ///< explicit dependencies (caller's array; outlives the submit)
    const DepFlags* dep_kinds;     ///< per dependency, or null for WAIT | RETAIN
    uint32_t n_deps;
    uint8_t dump_all;              ///< dump() with no arguments
    uint8_t allow_early_resolve_;  ///< set_allow_early_resolve
    uint8_t _pad0[2];
    int32_t timing_slot;           ///< TASK_TIMING_SLOT_NONE or 0..15
    PTO2LaunchSpec launch_spec;    ///< SPMD launch parameters
    CoreTaskPredicate predicate_;  ///< set_predicate
    const char* error_msg;         ///< first latched argument error (static text), or null
    bool has_error;
    uint8_t _pad1[7];
};
static_assert(offsetof(PTO2TaskArgsData, scalars) == 512, "PTO2TaskArgsData layout");
static_assert(offsetof(PTO2TaskArgsData, n_tensors) == 800, "PTO2TaskArgsData layout");
static_assert(offsetof(PTO2TaskArgsData, deps) == 808, "PTO2TaskArgsData layout");
static_assert(offsetof(PTO2TaskArgsData, timing_slot) == 832, "PTO2TaskArgsData layout");
static_assert(offsetof(PTO2TaskArgsData, launch_spec) == 836, "PTO2TaskArgsData layout");
static_assert(offsetof(PTO2TaskArgsData, predicate_) == 840, "PTO2TaskArgsData layout");
static_assert(offsetof(PTO2TaskArgsData, error_msg) == 888, "PTO2TaskArgsData layout");
static_assert(sizeof(PTO2TaskArgsData) == 904, "PTO2TaskArgsData layout");

/// Kernel ids of a task's cluster slots; `INVALID_KERNEL_ID` marks an inactive slot.
struct MixedKernels {
    int32_t aic_kernel_id = INVALID_KERNEL_ID;
    int32_t aiv0_kernel_id = INVALID_KERNEL_ID;
    int32_t aiv1_kernel_id = INVALID_KERNEL_ID;

    /// Bit 0 = AIC, bit 1 = AIV0, bit 2 = AIV1 active.
    uint8_t to_active_mask() const {
        return (uint8_t)((aic_kernel_id != INVALID_KERNEL_ID ? 1 : 0) | (aiv0_kernel_id != INVALID_KERNEL_ID ? 2 : 0) |
                         (aiv1_kernel_id != INVALID_KERNEL_ID ? 4 : 0));
    }
};
static_assert(sizeof(MixedKernels) == 12, "MixedKernels layout");

/// What a submit returns: the task id and the tensors the runtime allocated for it.
///
/// The pointers refer to the task's slot in the runtime; they stay valid until the slot is
/// recycled, which never happens before the enclosing scope ends.
struct TaskOutputTensors {
    simpler::tmr::TaskId task_id_;
    uint32_t count_;
    uint32_t _pad0;
    const simpler::tmr::Tensor* tensors_[PTO2_MAX_OUTPUTS];

    /// The submitted task's id (usable in `set_dependencies`); invalid when the submit failed.
    simpler::tmr::TaskId task_id() const { return task_id_; }
    /// Number of runtime-allocated output tensors.
    uint32_t size() const { return count_; }
    /// Whether the submit allocated no output.
    bool empty() const { return count_ == 0; }
    /// The `i`-th runtime-allocated output tensor, in `add_output(ci)` order (lvalues only:
    /// the reference must not outlive a temporary result).
    const simpler::tmr::Tensor& get_ref(uint32_t i) const&;
    const simpler::tmr::Tensor& get_ref(uint32_t i) const&& = delete;
};

/// Returned by `aicpu_orchestration_config`.
struct PTO2OrchestrationConfig {
    int32_t expected_arg_count;
};

/// Log levels of the runtime (PyPTO's names).
enum PTO2LogLevel : int32_t {
    PTO2_LOG_DEBUG = 10,
    PTO2_LOG_INFO = 20,
    PTO2_LOG_TIMING = 25,
    PTO2_LOG_WARN = 30,
    PTO2_LOG_ERROR = 40,
};

// Error codes (Simpler's numbering; macros, so they work in `#if`).
#define PTO2_ERROR_NONE 0
#define PTO2_ERROR_SCOPE_DEADLOCK 1
#define PTO2_ERROR_HEAP_RING_DEADLOCK 2
#define PTO2_ERROR_FLOW_CONTROL_DEADLOCK 3
#define PTO2_ERROR_DEP_POOL_OVERFLOW 4
#define PTO2_ERROR_INVALID_ARGS 5
#define PTO2_ERROR_REQUIRE_SYNC_START_INVALID 7
#define PTO2_ERROR_TENSOR_WAIT_TIMEOUT 8
#define PTO2_ERROR_EXPLICIT_ORCH_FATAL 9
#define PTO2_ERROR_SCOPE_TASKS_OVERFLOW 10
#define PTO2_ERROR_TENSORMAP_OVERFLOW 11
#define PTO2_ERROR_SCHEDULER_TIMEOUT 100
#define PTO2_ERROR_ASYNC_COMPLETION_INVALID 101
#define PTO2_ERROR_ASYNC_WAIT_OVERFLOW 102
#define PTO2_ERROR_ASYNC_REGISTRATION_FAILED 103
/// This runtime's: a kernel fault detected by the PTO-ISA header.
#define PTO2_ERROR_KERNEL_FAULT 200

/// How `submit_task` treats a task without an active kernel.
enum PTO2SubmitKind : uint32_t {
    PTO2_SUBMIT_KERNEL = 0,  ///< rt_submit_*_task: at least one kernel id must be valid
    PTO2_SUBMIT_DUMMY = 1,   ///< rt_submit_dummy_task: dependency-only, no kernel
};

struct PTO2Runtime;

/// The runtime's function table. Every entry is called from the orchestration thread.
struct PTO2RuntimeOps {
    /// Submits a task (`kind`: PTO2SubmitKind). Fills `out`.
    void (*submit_task)(PTO2Runtime* rt, const MixedKernels* kernels, const PTO2TaskArgsData* args, uint32_t kind,
                        const char* file, int32_t line, TaskOutputTensors* out);
    /// Allocates the OUTPUT tensors of `args` without running a kernel. Fills `out`.
    void (*alloc_tensors)(PTO2Runtime* rt, const PTO2TaskArgsData* args, const char* file, int32_t line,
                          TaskOutputTensors* out);
    /// Opens a scope at `file:line`.
    void (*scope_begin)(PTO2Runtime* rt, PTO2ScopeMode mode, const char* file, int32_t line);
    /// Closes the innermost scope.
    void (*scope_end)(PTO2Runtime* rt);
    /// Marks the end of submission (optional; returning from the entry does the same).
    void (*orchestration_done)(PTO2Runtime* rt);
    /// Whether a fatal error has been latched.
    bool (*is_fatal)(PTO2Runtime* rt);
    /// Latches a fatal error; later submits are ignored and the run fails with it.
    void (*report_fatal)(PTO2Runtime* rt, int32_t code, const char* func, const char* message,
                         const char* file, int32_t line);
    /// Writes a log line (already formatted).
    void (*log)(PTO2Runtime* rt, int32_t level, const char* func, const char* message);
    /// Blocking read of one element (waits for its producers); returns the element's bits.
    uint64_t (*get_tensor_data)(PTO2Runtime* rt, const simpler::tmr::Tensor* t, uint32_t ndims, const uint32_t* idx,
                                const char* file, int32_t line);
    /// Blocking write of one element (waits for every task that uses the buffer).
    void (*set_tensor_data)(PTO2Runtime* rt, const simpler::tmr::Tensor* t, uint32_t ndims, const uint32_t* idx,
                            uint64_t bits, const char* file, int32_t line);
    /// Number of clusters (1 AIC + 2 AIV) of the platform.
    int32_t (*available_cluster_count)(PTO2Runtime* rt);
    /// Number of AIV cores of the platform.
    int32_t (*available_aiv_count)(PTO2Runtime* rt);
};

/// The handle the runtime binds into the orchestration (`framework_bind_runtime`).
struct PTO2Runtime {
    const PTO2RuntimeOps* ops;
    PTO2ScopeMode pending_scope_mode;
    uint8_t _pad[7];
    void* context;  ///< runtime-private
};

/// One tensor argument of the orchestration (`orch_args.tensor(i).ref()`).
struct ChipTensorArg {
    const simpler::tmr::Tensor* ptr;
    const simpler::tmr::Tensor& ref() const { return *ptr; }
};

/// The orchestration's arguments, bound by the host from the orchestration signature.
struct ChipTaskArgs {
    uint32_t n_tensors;
    uint32_t n_scalars;
    const simpler::tmr::Tensor* tensors_;
    const uint64_t* scalars_;

    int32_t tensor_count() const { return (int32_t)n_tensors; }
    int32_t scalar_count() const { return (int32_t)n_scalars; }
    ChipTensorArg tensor(uint32_t i) const { return ChipTensorArg{&tensors_[i]}; }
    /// Scalar `i` as its 64-bit slot (`scalar(i)`) or decoded as `T` (`scalar<int32_t>(i)`,
    /// 2026-09's typed read: the low `sizeof(T)` bytes of the slot).
    template <class T = uint64_t> T scalar(uint32_t i) const { return from_u64<T>(scalars_[i]); }
};
