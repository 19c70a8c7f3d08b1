// intrinsic.h: the kernel side of a dispatch, as Simpler's kernels include it.
//
// A kernel is `extern "C" void kernel_entry(__gm__ int64_t* args)`:
//
//     args[0 .. T)      pointers to the task's 128-byte tensor descriptors, in `add_*` order
//                       (2026-08 kernels read them as `ChipTensor*`, 2026-09 as `Tensor*`)
//     args[T .. T+S)    raw 64-bit scalars
//     args[48]          pointer to this dispatch's LocalContext (SPMD block index / count)
//     args[49]          pointer to this core's GlobalContext (AIV sub-block, DMA workspaces)
//
// The accessors below read the two contexts. The argument-less forms (`get_block_idx()`,
// ...) of PTO-ISA come from <pto/pto-inst.hpp>; both may be used in one kernel.
#pragma once

#include <stdint.h>

#ifndef __aicore__
#define __aicore__
#endif
#ifndef __gm__
#define __gm__
#endif

// The tensor.h of this build's generation (the first on the include path).
#include <tensor.h>

/// Slots after the kernel's own arguments that carry the two contexts (2026-08 spells it
/// `PTO2_EXT_PARAMS_COUNT`, 2026-09 `EXT_PARAMS_COUNT`).
#if PTO_SIMPLER_GENERATION >= 202609
static constexpr int32_t EXT_PARAMS_COUNT = 2;
#else
static constexpr int32_t PTO2_EXT_PARAMS_COUNT = 2;
#endif
/// Index of the LocalContext pointer in a kernel's args.
static constexpr int32_t SPMD_LOCAL_CONTEXT_INDEX = 48;
/// Index of the GlobalContext pointer in a kernel's args.
static constexpr int32_t SPMD_GLOBAL_CONTEXT_INDEX = 49;
/// Alias of SPMD_LOCAL_CONTEXT_INDEX (dispatch-payload naming).
static constexpr int32_t PAYLOAD_LOCAL_CONTEXT_INDEX = SPMD_LOCAL_CONTEXT_INDEX;
/// Alias of SPMD_GLOBAL_CONTEXT_INDEX (dispatch-payload naming).
static constexpr int32_t PAYLOAD_GLOBAL_CONTEXT_INDEX = SPMD_GLOBAL_CONTEXT_INDEX;

/// Deferred-completion state of a dispatch. Asynchronous completion needs the device's
/// SDMA / URMA engines; on the simulator every field is zero.
struct AsyncCtx {
    uint64_t completions;  ///< where deferred completions are registered (0: unavailable)
    uint32_t capacity;     ///< entries available at `completions`
    uint32_t count;        ///< entries used
    simpler::tmr::TaskId task_token; ///< the task the completions belong to
};

/// Per-dispatch SPMD context (`args[48]`). a2a3 names the fields `block_idx` / `block_num`,
/// a5 `s_block_idx` / `s_block_num`; both spellings work on every platform.
struct LocalContext {
    union {
        int32_t block_idx;
        int32_t s_block_idx;
    };
    union {
        int32_t block_num;
        int32_t s_block_num;
    };
    AsyncCtx async_ctx;
};

/// Per-core context (`args[49]`).
struct GlobalContext {
    int32_t sub_block_id;         ///< 0 = AIV0, 1 = AIV1 of the cluster; 0 on AIC
    uint64_t dma_workspace[2];    ///< SDMA (0) and URMA (1) workspaces; 0 on the simulator
    uint64_t tracr_aicore_slice;  ///< TraCR per-core trace slice (2026-09); 0: TraCR off (always here)
};

static_assert(sizeof(AsyncCtx) == 24, "AsyncCtx layout");
static_assert(sizeof(LocalContext) == 32, "LocalContext layout");
static_assert(sizeof(GlobalContext) == 32, "GlobalContext layout");

/// This dispatch's SPMD block index, in [0, block_num); shared by the cores of a MIX block.
static __aicore__ inline int32_t get_block_idx(__gm__ int64_t* args) {
    return reinterpret_cast<__gm__ LocalContext*>(args[SPMD_LOCAL_CONTEXT_INDEX])->block_idx;
}
/// The task's SPMD block count.
static __aicore__ inline int32_t get_block_num(__gm__ int64_t* args) {
    return reinterpret_cast<__gm__ LocalContext*>(args[SPMD_LOCAL_CONTEXT_INDEX])->block_num;
}
/// The AIV sub-block (0 or 1) of the executing core within its cluster; 0 on AIC.
static __aicore__ inline int32_t get_sub_block_id(__gm__ int64_t* args) {
    return reinterpret_cast<__gm__ GlobalContext*>(args[SPMD_GLOBAL_CONTEXT_INDEX])->sub_block_id;
}
/// The dispatch's asynchronous-completion context.
static __aicore__ inline __gm__ AsyncCtx* get_async_ctx(__gm__ int64_t* args) {
    return &reinterpret_cast<__gm__ LocalContext*>(args[SPMD_LOCAL_CONTEXT_INDEX])->async_ctx;
}
/// The DMA workspace of `kind` (0 = SDMA, 1 = URMA), or nullptr when the engine is not
/// available (always, on the simulator).
static __aicore__ inline __gm__ void* get_dma_workspace(__gm__ int64_t* args, int32_t kind) {
    if (kind < 0 || kind > 1) return nullptr;
    uint64_t w = reinterpret_cast<__gm__ GlobalContext*>(args[SPMD_GLOBAL_CONTEXT_INDEX])->dma_workspace[kind];
    return reinterpret_cast<__gm__ void*>(static_cast<uintptr_t>(w));
}
/// The TraCR per-core trace slice, or nullptr when TraCR is off (always, on the simulator).
static __aicore__ inline __gm__ int64_t* get_tracr_aicore_slice(__gm__ int64_t* args) {
    uint64_t s = reinterpret_cast<__gm__ GlobalContext*>(args[SPMD_GLOBAL_CONTEXT_INDEX])->tracr_aicore_slice;
    return reinterpret_cast<__gm__ int64_t*>(static_cast<uintptr_t>(s));
}
