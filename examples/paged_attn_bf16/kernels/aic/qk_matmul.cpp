// Kernel Function: qk_matmul

#include <cstdint>

#ifndef __gm__
#define __gm__
#endif

#ifndef __aicore__
#if defined(__CPU_SIM)
#define __aicore__
#else
#define __aicore__ [aicore]
#endif
#endif

#include <pto/pto-inst.hpp>
#include "tensor.h"
#include "intrinsic.h"

using namespace pto;

// --- ptoas-generated code ---

// The data pointer of a GlobalTensor view.
template <typename GlobalT>
static __aicore__ inline auto PTOAS__GLOBAL_TENSOR_DATA(GlobalT &view) -> decltype(view.data()) {
    return view.data();
}

// How a kernel drains its pipes before it returns.
enum class PTOAutoSyncTailMode : int {
    kBarrierAll = 0,
    kSetWaitMte3ToSEvent0 = 1,
};

static __aicore__ inline void ptoas_auto_sync_tail(PTOAutoSyncTailMode mode = PTOAutoSyncTailMode::kBarrierAll) {
    if (mode == PTOAutoSyncTailMode::kSetWaitMte3ToSEvent0) {
        set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
        wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
        return;
    }
    pipe_barrier(PIPE_ALL);
}

// Invalidates the data-cache line holding `ptr` before a scalar read of GM.
template <typename Ptr>
static __aicore__ inline void PTOAS__DCCI_SINGLE_CACHE_LINE(Ptr ptr) {
    dcci((__gm__ void *)ptr, cache_line_t::SINGLE_CACHE_LINE);
}

static __aicore__ void qk_matmul(__gm__ bfloat16_t *v1, __gm__ bfloat16_t *v2, __gm__ float *v3) {
#if defined(__DAV_CUBE__)
    // pto: %c0_i64
    const int64_t v4 = 0;
    // pto: %c4096_i64
    const int64_t v5 = 4096;
    // pto: %qi_view
    pto::Shape<1, 1, 1, 16, 128> v6 = pto::Shape<1, 1, 1, 16, 128>();
    // pto: %qi_view
    pto::Stride<2048, 2048, 2048, 128, 1> v7 = pto::Stride<2048, 2048, 2048, 128, 1>();
    // pto: %qi_view
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v8 =
        GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(
            v1, v6, v7
        );
    // pto: %kj_t_view
    pto::Shape<1, 1, 1, 128, 128> v9 = pto::Shape<1, 1, 1, 128, 128>();
    // pto: %kj_t_view
    pto::Stride<16384, 16384, 16384, 1, 128> v10 = pto::Stride<16384, 16384, 16384, 1, 128>();
    // pto: %kj_t_view
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<16384, 16384, 16384, 1, 128>, pto::Layout::DN>
        v11 = GlobalTensor<
            bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<16384, 16384, 16384, 1, 128>, pto::Layout::DN>(
            v2, v9, v10
        );
    // pto: %qi_l1
    Tile<TileType::Mat, bfloat16_t, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 512, PadValue::Null,
         CompactMode::Null>
        v12;
    // pto: %qi_l1
    uint64_t v13 = (uint64_t)v4;
    TASSIGN(v12, v13);
    TLOAD(v12, v8);
    // pto: %kj_l1
    Tile<TileType::Mat, bfloat16_t, 128, 128, BLayout::RowMajor, 128, 128, SLayout::ColMajor, 512, PadValue::Null,
         CompactMode::Null>
        v14;
    // pto: %kj_l1
    uint64_t v15 = (uint64_t)v5;
    TASSIGN(v14, v15);
    TLOAD(v14, v11);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    // pto: %qi_l0a
    Tile<TileType::Left, bfloat16_t, 16, 128, BLayout::RowMajor, 16, 128, SLayout::RowMajor, 512, PadValue::Null,
         CompactMode::Null>
        v16;
    // pto: %qi_l0a
    uint64_t v17 = (uint64_t)v4;
    TASSIGN(v16, v17);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(v16, v12);
    // pto: %kj_l0b
    Tile<TileType::Right, bfloat16_t, 128, 128, BLayout::RowMajor, 128, 128, SLayout::ColMajor, 512, PadValue::Null,
         CompactMode::Null>
        v18;
    // pto: %kj_l0b
    uint64_t v19 = (uint64_t)v4;
    TASSIGN(v18, v19);
    TMOV(v18, v14);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    // pto: %sij_l0c
    Tile<TileType::Acc, float, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 1024, PadValue::Null,
         CompactMode::Null>
        v20;
    // pto: %sij_l0c
    uint64_t v21 = (uint64_t)v4;
    TASSIGN(v20, v21);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    TMATMUL(v20, v16, v18);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    // pto: %sij_view
    pto::Shape<1, 1, 1, 16, 128> v22 = pto::Shape<1, 1, 1, 16, 128>();
    // pto: %sij_view
    pto::Stride<2048, 2048, 2048, 128, 1> v23 = pto::Stride<2048, 2048, 2048, 128, 1>();
    // pto: %sij_view
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v24 =
        GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(
            v3, v22, v23
        );
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(v24, v20);
#endif  // __DAV_CUBE__

    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
    return;
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Unpack tensor: qi
    __gm__ ChipTensor *qi_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ bfloat16_t *qi = reinterpret_cast<__gm__ bfloat16_t *>(qi_tensor->buffer.addr) + qi_tensor->start_offset;

    // Unpack tensor: kj
    __gm__ ChipTensor *kj_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    __gm__ bfloat16_t *kj = reinterpret_cast<__gm__ bfloat16_t *>(kj_tensor->buffer.addr) + kj_tensor->start_offset;

    // Unpack tensor: sij
    __gm__ ChipTensor *sij_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
    __gm__ float *sij = reinterpret_cast<__gm__ float *>(sij_tensor->buffer.addr) + sij_tensor->start_offset;

    // Forward to ptoas-generated function
    qk_matmul(qi, kj, sij);
}
