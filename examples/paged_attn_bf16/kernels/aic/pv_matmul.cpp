// Kernel Function: pv_matmul

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

static __aicore__ void pv_matmul(__gm__ bfloat16_t *v1, __gm__ bfloat16_t *v2, __gm__ float *v3) {
#if defined(__DAV_CUBE__)
    // pto: %c0
    const int64_t v4 = 0;
    // pto: %c64
    const int64_t v5 = 64;
    // pto: %c0_i64
    const int64_t v6 = 0;
    // pto: %c2048_i64
    const int64_t v7 = 2048;
    // pto: %c4096_i64
    const int64_t v8 = 4096;
    // pto: %c16384_i64
    const int64_t v9 = 16384;
    // pto: %pij_view
    pto::Shape<1, 1, 1, 16, 128> v10 = pto::Shape<1, 1, 1, 16, 128>();
    // pto: %pij_view
    pto::Stride<2048, 2048, 2048, 128, 1> v11 = pto::Stride<2048, 2048, 2048, 128, 1>();
    // pto: %pij_view
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v12 =
        GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(
            v1, v10, v11
        );
    // pto: %vj_view
    pto::Shape<1, 1, 1, 128, 128> v13 = pto::Shape<1, 1, 1, 128, 128>();
    // pto: %vj_view
    pto::Stride<16384, 16384, 16384, 128, 1> v14 = pto::Stride<16384, 16384, 16384, 128, 1>();
    // pto: %vj_view
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<16384, 16384, 16384, 128, 1>, pto::Layout::ND>
        v15 = GlobalTensor<
            bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<16384, 16384, 16384, 128, 1>, pto::Layout::ND>(
            v2, v13, v14
        );
    // pto: %pij_l1
    Tile<TileType::Mat, bfloat16_t, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 512, PadValue::Null,
         CompactMode::Null>
        v16;
    // pto: %pij_l1
    uint64_t v17 = (uint64_t)v6;
    TASSIGN(v16, v17);
    TLOAD(v16, v12);
    // pto: %vj_l1
    Tile<TileType::Mat, bfloat16_t, 128, 128, BLayout::ColMajor, 128, 128, SLayout::RowMajor, 512, PadValue::Null,
         CompactMode::Null>
        v18;
    // pto: %vj_l1
    uint64_t v19 = (uint64_t)v8;
    TASSIGN(v18, v19);
    TLOAD(v18, v15);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    // pto: %pij_l0a_k0
    Tile<TileType::Left, bfloat16_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null,
         CompactMode::Null>
        v20;
    // pto: %pij_l0a_k0
    uint64_t v21 = (uint64_t)v6;
    TASSIGN(v20, v21);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TEXTRACT(v20, v16, v4, v4);
    // pto: %vj_l0b_k0
    Tile<TileType::Right, bfloat16_t, 64, 128, BLayout::RowMajor, 64, 128, SLayout::ColMajor, 512, PadValue::Null,
         CompactMode::Null>
        v22;
    // pto: %vj_l0b_k0
    uint64_t v23 = (uint64_t)v6;
    TASSIGN(v22, v23);
    TEXTRACT(v22, v18, v4, v4);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    // pto: %oi_l0c
    Tile<TileType::Acc, float, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 1024, PadValue::Null,
         CompactMode::Null>
        v24;
    // pto: %oi_l0c
    uint64_t v25 = (uint64_t)v6;
    TASSIGN(v24, v25);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    TMATMUL(v24, v20, v22);
    // pto: %pij_l0a_k1
    Tile<TileType::Left, bfloat16_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null,
         CompactMode::Null>
        v26;
    // pto: %pij_l0a_k1
    uint64_t v27 = (uint64_t)v7;
    TASSIGN(v26, v27);
    TEXTRACT(v26, v16, v4, v5);
    // pto: %vj_l0b_k1
    Tile<TileType::Right, bfloat16_t, 64, 128, BLayout::RowMajor, 64, 128, SLayout::ColMajor, 512, PadValue::Null,
         CompactMode::Null>
        v28;
    // pto: %vj_l0b_k1
    uint64_t v29 = (uint64_t)v9;
    TASSIGN(v28, v29);
    TEXTRACT(v28, v18, v5, v4);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID1);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID1);
    TMATMUL_ACC(v24, v24, v26, v28);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    // pto: %oi_new_view
    pto::Shape<1, 1, 1, 16, 128> v30 = pto::Shape<1, 1, 1, 16, 128>();
    // pto: %oi_new_view
    pto::Stride<2048, 2048, 2048, 128, 1> v31 = pto::Stride<2048, 2048, 2048, 128, 1>();
    // pto: %oi_new_view
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v32 =
        GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(
            v3, v30, v31
        );
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    TSTORE(v32, v24);
#endif  // __DAV_CUBE__

    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
    return;
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Unpack tensor: pij
    __gm__ ChipTensor *pij_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ bfloat16_t *pij = reinterpret_cast<__gm__ bfloat16_t *>(pij_tensor->buffer.addr) + pij_tensor->start_offset;

    // Unpack tensor: vj
    __gm__ ChipTensor *vj_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    __gm__ bfloat16_t *vj = reinterpret_cast<__gm__ bfloat16_t *>(vj_tensor->buffer.addr) + vj_tensor->start_offset;

    // Unpack tensor: oi_new
    __gm__ ChipTensor *oi_new_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
    __gm__ float *oi_new = reinterpret_cast<__gm__ float *>(oi_new_tensor->buffer.addr) + oi_new_tensor->start_offset;

    // Forward to ptoas-generated function
    pv_matmul(pij, vj, oi_new);
}
