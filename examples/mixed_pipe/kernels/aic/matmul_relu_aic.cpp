// Kernel Function: matmul_relu_aic

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

static __aicore__ void matmul_relu_aic(__gm__ bfloat16_t *v1, __gm__ bfloat16_t *v2, __gm__ float *v3, int32_t v4) {
#if defined(__DAV_CUBE__)
    // pto: %c0
    const int64_t v5 = 0;
    // pto: %c1
    const int64_t v6 = 1;
    // pto: %c4
    const int64_t v7 = 4;
    // pto: %c32
    const int64_t v8 = 32;
    // pto: %c64
    const int64_t v9 = 64;
    // pto: %c128
    const int64_t v10 = 128;
    // pto: %c0_i64
    const int64_t v11 = 0;
    // pto: %c8192_i64
    const int64_t v12 = 8192;
    // pto: %c2v_consumer_buf
    const int32_t v13 = 32768;
    // pto: %v2c_consumer_buf
    const int32_t v14 = 0;
    // pto: %pipe
    auto v15 = TPipe<0, Direction::DIR_C2V, 8192, 2, 2>(v3, v13, v14);
    // pto: %b_view
    pto::Shape<1, 1, 1, 64, 64> v16 = pto::Shape<1, 1, 1, 64, 64>();
    // pto: %b_view
    pto::Stride<4096, 4096, 4096, 64, 1> v17 = pto::Stride<4096, 4096, 4096, 64, 1>();
    // pto: %b_view
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<4096, 4096, 4096, 64, 1>, pto::Layout::ND> v18 =
        GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<4096, 4096, 4096, 64, 1>, pto::Layout::ND>(
            v2, v16, v17
        );
    // pto: %b_l1
    Tile<TileType::Mat, bfloat16_t, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null,
         CompactMode::Null>
        v19;
    // pto: %b_l1
    uint64_t v20 = (uint64_t)v11;
    TASSIGN(v19, v20);
    TLOAD(v19, v18);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    // pto: %b_l0b
    Tile<TileType::Right, bfloat16_t, 64, 64, BLayout::RowMajor, 64, 64, SLayout::ColMajor, 512, PadValue::Null,
         CompactMode::Null>
        v21;
    // pto: %b_l0b
    uint64_t v22 = (uint64_t)v11;
    TASSIGN(v21, v22);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    TMOV(v21, v19);
    // pto: %block_row0
    int64_t v23 = (int64_t)v4 * v10;
    for (size_t v24 = (size_t)v5; v24 < (size_t)v7; v24 += (size_t)v6) {
        // pto: %row0
        int64_t v25 = v23 + (int64_t)v24 * v8;
        // pto: %a_view
        pto::Shape<1, 1, 1, 32, 64> v26 = pto::Shape<1, 1, 1, 32, 64>();
        // pto: %a_view
        pto::Stride<2048, 2048, 2048, 64, 1> v27 = pto::Stride<2048, 2048, 2048, 64, 1>();
        // pto: %a_view
        GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 32, 64>, pto::Stride<2048, 2048, 2048, 64, 1>, pto::Layout::ND> v28 =
            GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 32, 64>, pto::Stride<2048, 2048, 2048, 64, 1>, pto::Layout::ND>(
                v1 + (v5 + v25 * v9), v26, v27
            );
        // pto: %a_l1
        Tile<TileType::Mat, bfloat16_t, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 512, PadValue::Null,
             CompactMode::Null>
            v29;
        // pto: %a_l1
        uint64_t v30 = (uint64_t)v12;
        TASSIGN(v29, v30);
        TLOAD(v29, v28);
        set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID1);
        // pto: %a_l0a
        Tile<TileType::Left, bfloat16_t, 32, 64, BLayout::RowMajor, 32, 64, SLayout::RowMajor, 512, PadValue::Null,
             CompactMode::Null>
            v31;
        // pto: %a_l0a
        uint64_t v32 = (uint64_t)v11;
        TASSIGN(v31, v32);
        wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID1);
        TMOV(v31, v29);
        set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
        // pto: %acc_l0c
        Tile<TileType::Acc, float, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 1024, PadValue::Null,
             CompactMode::Null>
            v33;
        // pto: %acc_l0c
        uint64_t v34 = (uint64_t)v11;
        TASSIGN(v33, v34);
        wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
        TMATMUL(v33, v31, v21);
        set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
        wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
        TPUSH<TPipe<0, Direction::DIR_C2V, 8192, 2, 2>,
              Tile<TileType::Acc, float, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null>,
              TileSplitAxis::TILE_UP_DOWN>(v15, v33);
        set_flag(PIPE_FIX, PIPE_MTE2, EVENT_ID0);
        wait_flag(PIPE_FIX, PIPE_MTE2, EVENT_ID0);
    }
#endif  // __DAV_CUBE__

    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
    return;
}

static __aicore__ void matmul_relu_aiv(__gm__ float *v1, __gm__ float *v2, float v3, int32_t v4, int32_t v5) {
#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    // pto: %c0
    const int64_t v6 = 0;
    // pto: %c1
    const int64_t v7 = 1;
    // pto: %c4
    const int64_t v8 = 4;
    // pto: %c16
    const int64_t v9 = 16;
    // pto: %c32
    const int64_t v10 = 32;
    // pto: %c64
    const int64_t v11 = 64;
    // pto: %c128
    const int64_t v12 = 128;
    // pto: %c0_i64
    const int64_t v13 = 0;
    // pto: %c4096_i64
    const int64_t v14 = 4096;
    // pto: %c2v_consumer_buf
    const int32_t v15 = 32768;
    // pto: %v2c_consumer_buf
    const int32_t v16 = 0;
    // pto: %pipe
    auto v17 = TPipe<0, Direction::DIR_C2V, 8192, 2, 2>(v2, v15, v16);
    // pto: %block_row0
    int64_t v18 = (int64_t)v4 * v12;
    // pto: %lane_row0
    int64_t v19 = (int64_t)v5 * v9;
    for (size_t v20 = (size_t)v6; v20 < (size_t)v8; v20 += (size_t)v7) {
        // pto: %acc_half
        Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
             CompactMode::Null>
            v21 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                       CompactMode::Null>(v9, v11);
        TPOP<TPipe<0, Direction::DIR_C2V, 8192, 2, 2>,
             Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>,
             TileSplitAxis::TILE_UP_DOWN>(v17, v21);
        // pto: %relu_tile
        Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
             CompactMode::Null>
            v22 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                       CompactMode::Null>(v9, v11);
        // pto: %relu_tile
        uint64_t v23 = (uint64_t)v13;
        TASSIGN(v22, v23);
        TRELU(v22, v21);
        TFREE<TPipe<0, Direction::DIR_C2V, 8192, 2, 2>, TileSplitAxis::TILE_UP_DOWN>(v17);
        // pto: %scaled_tile
        Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
             CompactMode::Null>
            v24 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                       CompactMode::Null>(v9, v11);
        // pto: %scaled_tile
        uint64_t v25 = (uint64_t)v14;
        TASSIGN(v24, v25);
        pipe_barrier(PIPE_V);
        TMULS(v24, v22, v3);
        // pto: %row0
        int64_t v26 = v18 + (int64_t)v20 * v10 + v19;
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        // pto: %c_view
        pto::Shape<1, 1, 1, 16, 64> v27 = pto::Shape<1, 1, 1, 16, 64>();
        // pto: %c_view
        pto::Stride<1024, 1024, 1024, 64, 1> v28 = pto::Stride<1024, 1024, 1024, 64, 1>();
        // pto: %c_view
        GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v29 =
            GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(
                v1 + (v6 + v26 * v11), v27, v28
            );
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE(v29, v24);
        set_flag(PIPE_MTE3, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE3, PIPE_V, EVENT_ID0);
    }
#endif  // __DAV_VEC__

    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
    return;
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Read logical SPMD block identity from runtime dispatch payload
    int32_t __pypto_spmd_block_idx = get_block_idx(args);

    // Unpack tensor: a
    __gm__ ChipTensor *a_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ bfloat16_t *a = reinterpret_cast<__gm__ bfloat16_t *>(a_tensor->buffer.addr) + a_tensor->start_offset;

    // Unpack tensor: b
    __gm__ ChipTensor *b_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    __gm__ bfloat16_t *b = reinterpret_cast<__gm__ bfloat16_t *>(b_tensor->buffer.addr) + b_tensor->start_offset;

    // Unpack tensor: __gm_pipe_buffer (this block's shard: 2 slots x 8192 bytes)
    __gm__ ChipTensor *__gm_pipe_buffer_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[3]);
    __gm__ float *__gm_pipe_buffer = reinterpret_cast<__gm__ float *>(__gm_pipe_buffer_tensor->buffer.addr) +
                                     __gm_pipe_buffer_tensor->start_offset + (int64_t)__pypto_spmd_block_idx * 4096;

    // Forward to ptoas-generated function
    matmul_relu_aic(a, b, __gm_pipe_buffer, __pypto_spmd_block_idx);
}
