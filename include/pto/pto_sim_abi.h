// pto_sim_abi.h: the C ABI between the PTO runtime and kernels built over the PTO-ISA header.
//
// A kernel that includes <pto/pto-inst.hpp> exports (weak, default visibility)
//
//     extern "C" int pto_sim_invoke(PtoSimContext* ctx, PtoSimKernelEntry entry, int64_t* args);
//
// The runtime looks the symbol up in each kernel shared object when it loads it. When present,
// every subtask runs as `pto_sim_invoke(ctx, kernel_entry, args)` on the executing thread: the
// header binds `ctx` to that thread for the call (core identity, on-chip memories, cross-core
// pipes), runs the entry, and turns a fault raised by the header (a tile outside its buffer, a
// pipe that was stopped) into a return code instead of letting it escape into the runtime.
// Kernels without the header are called directly, as before.
//
// Only POD structs, plain function pointers and integers cross this boundary. The Rust mirror
// is `crates/pto-runtime/src/sim_abi.rs`; sizes and offsets are checked on both sides.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "pto_sim_trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Version of this ABI; the runtime refuses a kernel whose header reports another one.
#define PTO_SIM_ABI_VERSION 1

/// On-chip memories of one core, by `TileType`'s address space.
enum PtoSimBuffer {
    PTO_SIM_UB = 0,    ///< unified buffer (Vec tiles)
    PTO_SIM_L1 = 1,    ///< L1 / cube buffer (Mat tiles)
    PTO_SIM_L0A = 2,   ///< Left tiles
    PTO_SIM_L0B = 3,   ///< Right tiles
    PTO_SIM_L0C = 4,   ///< Acc tiles
    PTO_SIM_BIAS = 5,  ///< Bias tiles
    PTO_SIM_FBUF = 6,  ///< scaling / fixpipe buffer (Scaling tiles)
    PTO_SIM_BUFFER_COUNT = 7,
};

/// One on-chip memory: `size` bytes at `base`, owned by the runtime.
struct PtoSimMemory {
    uint8_t* base;
    uint64_t size;
};

/// What `pto_sim_invoke` returns.
enum PtoSimStatus {
    PTO_SIM_OK = 0,         ///< the entry returned normally
    PTO_SIM_FAULT = 1,      ///< the header reported a fault through `fault` and unwound the kernel
    PTO_SIM_EXCEPTION = 2,  ///< a C++ exception left the kernel; its text went through `fault`
    PTO_SIM_STOPPED = 3,    ///< a blocking wait gave up because the run is stopping (`stop` set)
};

/// Core types as the header sees them.
enum PtoSimCoreType {
    PTO_SIM_CORE_AIC = 0,
    PTO_SIM_CORE_AIV = 1,
};

typedef struct PtoSimContext PtoSimContext;

/// `kernel_entry`'s type.
typedef void (*PtoSimKernelEntry)(int64_t* args);

/// The execution context of one subtask, filled by the runtime before `pto_sim_invoke` and
/// valid until it returns. The header only reads it, except `waiting_on`.
struct PtoSimContext {
    uint32_t abi_version;    ///< PTO_SIM_ABI_VERSION
    int32_t core_type;       ///< PtoSimCoreType of the executing logical core
    int32_t block_idx;       ///< SPMD block index, shared by the cores of a MIX block
    int32_t block_num;       ///< SPMD block count
    int32_t subblock_id;     ///< AIV lane within the cluster (0 or 1); 0 on AIC
    int32_t subblock_dim;    ///< AIV lanes the task uses in this cluster (1 or 2); 1 on AIC
    int32_t core_id;         ///< logical core (swimlane row)
    int32_t cluster_id;      ///< cluster of the core (pipes are per cluster)
    int32_t func_id;         ///< the kernel's func_id
    int32_t arch;            ///< 0 = a2a3, 1 = a5 (on-chip memory sizes, TPUSH/TPOP flavour)
    uint64_t task_id;        ///< raw PTO2TaskId of the task
    const char* kernel_name; ///< name from kernel_config.py (NUL-terminated, never null)
    struct PtoSimMemory memory[PTO_SIM_BUFFER_COUNT];  ///< this core's on-chip memories
    void* runtime;           ///< opaque, passed back to the callbacks

    /// Storage shared by every core of this context's cluster for the whole run, keyed by
    /// `key`: `bytes` bytes, zero-filled on first request, 64-byte aligned, never moved.
    /// A later request for the same key with another size returns null (the header reports
    /// a fault). Thread-safe.
    void* (*cluster_storage)(PtoSimContext* ctx, uint64_t key, uint64_t bytes);
    /// Records a fatal error for this subtask (the runtime names the task, kernel and core).
    /// The header unwinds the kernel after calling it and returns PTO_SIM_FAULT.
    void (*fault)(PtoSimContext* ctx, const char* message);
    /// Non-zero once the run is stopping (fatal error, scheduler timeout, interrupt): every
    /// blocking wait in the header must give up and return PTO_SIM_STOPPED. Read atomically.
    const uint32_t* stop;
    /// What the core is blocked on (a NUL-terminated text that lives as long as the run), or
    /// null. Written atomically by the header, read by the runtime's timeout message.
    const char* waiting_on;
    /// The global memory this subtask may touch: `n_gm_ranges` pairs `[begin, end)` of byte
    /// addresses (the buffers of the task's tensor arguments). TLOAD / TSTORE outside every
    /// range is a fault. `n_gm_ranges == 0` means unknown (no check).
    const uint64_t* gm_ranges;
    uint32_t n_gm_ranges;
    uint32_t reserved0;
    /// The instruction trace of this subtask (pto_sim_trace.h), or null: tracing is off
    /// (the default). Set by the runtime with `--timing predicted`; the header appends.
    PtoSimTrace* trace;
};

#ifdef __cplusplus
}  // extern "C"
#endif

#ifdef __cplusplus
static_assert(sizeof(PtoSimMemory) == 16, "PtoSimMemory layout");
static_assert(offsetof(PtoSimContext, task_id) == 40, "PtoSimContext layout");
static_assert(offsetof(PtoSimContext, kernel_name) == 48, "PtoSimContext layout");
static_assert(offsetof(PtoSimContext, memory) == 56, "PtoSimContext layout");
static_assert(offsetof(PtoSimContext, runtime) == 168, "PtoSimContext layout");
static_assert(offsetof(PtoSimContext, cluster_storage) == 176, "PtoSimContext layout");
static_assert(offsetof(PtoSimContext, waiting_on) == 200, "PtoSimContext layout");
static_assert(offsetof(PtoSimContext, gm_ranges) == 208, "PtoSimContext layout");
static_assert(offsetof(PtoSimContext, trace) == 224, "PtoSimContext layout");
static_assert(sizeof(PtoSimContext) == 232, "PtoSimContext layout");
#endif
