// pto_runtime_abi.h: the C ABI between an orchestration shared object and the PTO runtime.
//
// The runtime hands the orchestration a `PTO2Runtime` whose first field points to a table of
// plain C function pointers (`PTO2RuntimeOps`). Only POD structs and pointers cross this
// boundary: no C++ references, exceptions or varargs. The Rust side mirrors every struct in
// crates/pto-runtime/src/ffi.rs with the same size and field offsets (checked on both sides).
#pragma once

#include "tensor.h"

/// Scope modes: AUTO scopes infer dependencies through the TensorMap; MANUAL scopes use
/// only explicit dependencies (and creator edges).
enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

/// How a task uses a tensor argument.
enum class TensorArgType : uint8_t {
    INPUT = 0,            ///< read an existing tensor
    OUTPUT = 1,           ///< the runtime allocates the tensor (from a TensorCreateInfo)
    INOUT = 2,            ///< read then write an existing tensor
    OUTPUT_EXISTING = 3,  ///< write an existing tensor
    NO_DEP = 4,           ///< existing tensor, creator edge only
};

/// Kernel id of an inactive slot of a mixed task.
#define INVALID_KERNEL_ID (-1)

/// Describes a tensor the runtime allocates for a task (`add_output(ci)`, `alloc_tensors`).
struct TensorCreateInfo {
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint32_t ndims;
    DataType dtype;
    bool manual_dep;
    uint8_t has_initial_value;
    uint8_t _pad0;
    uint64_t initial_value;  ///< element bit pattern broadcast into the buffer when set

    TensorCreateInfo() : shapes{0, 0, 0, 0, 0}, ndims(0), dtype(DataType::FLOAT32), manual_dep(false),
                         has_initial_value(0), _pad0(0), initial_value(0) {}
    TensorCreateInfo(const uint32_t s[], uint32_t n, DataType dt = DataType::FLOAT32, bool manual = false)
        : shapes{0, 0, 0, 0, 0}, ndims(n), dtype(dt), manual_dep(manual), has_initial_value(0), _pad0(0),
          initial_value(0) {
        for (uint32_t i = 0; i < n && i < MAX_TENSOR_DIMS; ++i) shapes[i] = s[i];
    }
    /// Fills the allocated buffer with `v` before the producing task runs.
    template <class T> TensorCreateInfo& set_initial_value(T v) {
        uint64_t bits = 0;
        memcpy(&bits, &v, sizeof(T) < 8 ? sizeof(T) : 8);
        initial_value = bits;
        has_initial_value = 1;
        return *this;
    }
};
static_assert(sizeof(TensorCreateInfo) == 40, "TensorCreateInfo layout");

/// One tensor argument of a task. Existing tensors are copied by value, so views built
/// inline (`p.add_input(x.view(s, o))`) are safe.
struct PTO2ArgSlot {
    ChipTensor tensor;            ///< existing tensor (unused for OUTPUT)
    const void* source;           ///< address of the caller's object, used by dump(...)
    TensorCreateInfo create_info; ///< for OUTPUT
    TensorArgType type;
    uint8_t dump;                 ///< marked by dump(...)
};
static_assert(sizeof(PTO2ArgSlot) == 192, "PTO2ArgSlot layout");
static_assert(offsetof(PTO2ArgSlot, source) == 128, "PTO2ArgSlot layout");
static_assert(offsetof(PTO2ArgSlot, create_info) == 136, "PTO2ArgSlot layout");
static_assert(offsetof(PTO2ArgSlot, type) == 176, "PTO2ArgSlot layout");

/// SPMD launch parameters of a task.
struct PTO2LaunchSpec {
    uint32_t block_num;
    uint8_t require_sync_start;
    uint8_t allow_early_resolve;
    uint8_t _pad[2];

    void set_block_num(uint32_t n) { block_num = n; }
    void set_require_sync_start(bool b) { require_sync_start = b ? 1 : 0; }
};

/// Errors latched while building task arguments; reported at submit.
enum PTO2ArgError : int32_t {
    PTO2_ARG_OK = 0,
    PTO2_ARG_TENSOR_AFTER_SCALAR = 1,
    PTO2_ARG_TOO_MANY_TENSORS = 2,
    PTO2_ARG_TOO_MANY_SCALARS = 3,
    PTO2_ARG_DUMP_UNKNOWN = 4,
};

/// The flat argument block of one submit. `CoreTaskArgs` (C++ API) derives from it.
struct PTO2TaskArgsData {
    PTO2ArgSlot tensors[MAX_TENSOR_ARGS];
    uint64_t scalars[MAX_SCALAR_ARGS];
    const void* scalar_sources[MAX_SCALAR_ARGS];
    uint8_t scalar_dump[MAX_SCALAR_ARGS];
    uint8_t scalar_dtype[MAX_SCALAR_ARGS];  ///< DataType of each scalar (for the args dump)
    uint32_t n_tensors;
    uint32_t n_scalars;
    const PTO2TaskId* deps;
    uint32_t n_deps;
    uint8_t dump_all;
    uint8_t _pad0[3];
    PTO2LaunchSpec launch_spec;
    int32_t error;
    uint32_t error_index;
};

/// Kernel ids of a task's cluster slots; `INVALID_KERNEL_ID` marks an inactive slot.
struct MixedKernels {
    int32_t aic_kernel_id;
    int32_t aiv0_kernel_id;
    int32_t aiv1_kernel_id;
};

/// Most runtime-allocated outputs one submit returns.
#define PTO2_MAX_OUTPUTS MAX_TENSOR_ARGS

/// What a submit returns: the task id and the tensors the runtime allocated for it.
///
/// The pointers refer to the task's slot in the runtime; they stay valid until the slot is
/// recycled, which never happens before the enclosing scope ends.
struct TaskOutputTensors {
    PTO2TaskId task_id_;
    uint32_t count_;
    uint32_t _pad0;
    const ChipTensor* tensors_[PTO2_MAX_OUTPUTS];

    /// The submitted task's id (usable in `set_dependencies`).
    PTO2TaskId task_id() const { return task_id_; }
    /// Number of runtime-allocated output tensors.
    uint32_t size() const { return count_; }
    /// The `i`-th runtime-allocated output tensor, in `add_output(ci)` order.
    const ChipTensor& get_ref(uint32_t i) const;
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

/// Error codes (Simpler's numbering).
enum PTO2ErrorCode : int32_t {
    PTO2_ERROR_NONE = 0,
    PTO2_ERROR_SCOPE_DEADLOCK = 1,
    PTO2_ERROR_HEAP_RING_DEADLOCK = 2,
    PTO2_ERROR_FLOW_CONTROL_DEADLOCK = 3,
    PTO2_ERROR_DEP_POOL_OVERFLOW = 4,
    PTO2_ERROR_INVALID_ARGS = 5,
    PTO2_ERROR_REQUIRE_SYNC_START_INVALID = 7,
    PTO2_ERROR_TENSOR_WAIT_TIMEOUT = 8,
    PTO2_ERROR_EXPLICIT_ORCH_FATAL = 9,
    PTO2_ERROR_SCOPE_TASKS_OVERFLOW = 10,
    PTO2_ERROR_TENSORMAP_OVERFLOW = 11,
    PTO2_ERROR_SCHEDULER_TIMEOUT = 100,
};

struct PTO2Runtime;

/// The runtime's function table. Every entry is called from the orchestration thread.
struct PTO2RuntimeOps {
    /// Submits a task (all kernel ids invalid = dummy task). Fills `out`.
    void (*submit_task)(PTO2Runtime* rt, const MixedKernels* kernels, const PTO2TaskArgsData* args,
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
    uint64_t (*get_tensor_data)(PTO2Runtime* rt, const ChipTensor* t, uint32_t ndims, const uint32_t* idx,
                                const char* file, int32_t line);
    /// Blocking write of one element (waits for every task that uses the buffer).
    void (*set_tensor_data)(PTO2Runtime* rt, const ChipTensor* t, uint32_t ndims, const uint32_t* idx,
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
    const ChipTensor* ptr;
    const ChipTensor& ref() const { return *ptr; }
};

/// The orchestration's arguments, bound by the host from the orchestration signature.
struct ChipTaskArgs {
    uint32_t n_tensors;
    uint32_t n_scalars;
    const ChipTensor* tensors_;
    const uint64_t* scalars_;

    uint32_t tensor_count() const { return n_tensors; }
    uint32_t scalar_count() const { return n_scalars; }
    ChipTensorArg tensor(uint32_t i) const { return ChipTensorArg{&tensors_[i]}; }
    uint64_t scalar(uint32_t i) const { return scalars_[i]; }
};
