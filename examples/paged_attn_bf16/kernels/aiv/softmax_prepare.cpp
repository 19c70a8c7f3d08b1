// Kernel Function: softmax_prepare

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

static __aicore__ void softmax_prepare(
    __gm__ float *v1, float v2, int64_t v3, __gm__ bfloat16_t *v4, __gm__ float *v5, __gm__ float *v6
) {
    // pto: %c16
    const int64_t v7 = 16;
    // pto: %c128
    const int64_t v8 = 128;
    // pto: %c1
    const int64_t v9 = 1;
    // pto: %c0_i64
    const int64_t v10 = 0;
    // pto: %c8192_i64
    const int64_t v11 = 8192;
    // pto: %c16384_i64
    const int64_t v12 = 16384;
    // pto: %c24576_i64
    const int64_t v13 = 24576;
    // pto: %c24640_i64
    const int64_t v14 = 24640;
    // pto: %c24704_i64
    const int64_t v15 = 24704;

#if defined(__DAV_VEC__)
    set_mask_norm();
    set_vector_mask(-1, -1);
    // pto: %sij_view
    pto::Shape<1, 1, 1, 16, 128> v16 = pto::Shape<1, 1, 1, 16, 128>();
    // pto: %sij_view
    pto::Stride<2048, 2048, 2048, 128, 1> v17 = pto::Stride<2048, 2048, 2048, 128, 1>();
    // pto: %sij_view
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v18 =
        GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(
            v1, v16, v17
        );
    // pto: %s_tile
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v19 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v3);
    // pto: %s_tile
    uint64_t v20 = (uint64_t)v10;
    TASSIGN(v19, v20);
    TLOAD(v19, v18);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    // pto: %s_padded
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Min,
         CompactMode::Null>
        v21 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Min,
                   CompactMode::Null>(v7, v8);
    // pto: %s_padded
    uint64_t v22 = (uint64_t)v11;
    TASSIGN(v21, v22);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TFILLPAD(v21, v19);
    // pto: %scaled
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v23 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v8);
    // pto: %scaled
    uint64_t v24 = (uint64_t)v10;
    TASSIGN(v23, v24);
    pipe_barrier(PIPE_V);
    TMULS(v23, v21, v2);
    // pto: %tmp_tile
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v25 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v8);
    // pto: %tmp_tile
    uint64_t v26 = (uint64_t)v12;
    TASSIGN(v25, v26);
    // pto: %mi_tile
    Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v27 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v9);
    // pto: %mi_tile
    uint64_t v28 = (uint64_t)v13;
    TASSIGN(v27, v28);
    pipe_barrier(PIPE_V);
    TROWMAX(v27, v23, v25);
    // pto: %sij_centered
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v29 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v8);
    // pto: %sij_centered
    uint64_t v30 = (uint64_t)v11;
    TASSIGN(v29, v30);
    pipe_barrier(PIPE_V);
    TROWEXPANDSUB(v29, v23, v27);
    // pto: %exp_tile
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v31 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v8);
    // pto: %exp_tile
    uint64_t v32 = (uint64_t)v11;
    TASSIGN(v31, v32);
    pipe_barrier(PIPE_V);
    TEXP(v31, v29);
    // pto: %pij_tile_bf16
    Tile<TileType::Vec, bfloat16_t, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v33 = Tile<TileType::Vec, bfloat16_t, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512,
                   PadValue::Null, CompactMode::Null>(v7, v8);
    // pto: %pij_tile_bf16
    uint64_t v34 = (uint64_t)v15;
    TASSIGN(v33, v34);
    RoundMode v35 = RoundMode::CAST_ROUND;
    SaturationMode v36 = SaturationMode::OFF;
    pipe_barrier(PIPE_V);
    TCVT(v33, v31, v35, v36);
    // pto: %pij_tile
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v37 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v8);
    // pto: %pij_tile
    uint64_t v38 = (uint64_t)v10;
    TASSIGN(v37, v38);
    RoundMode v39 = RoundMode::CAST_ROUND;
    SaturationMode v40 = SaturationMode::OFF;
    pipe_barrier(PIPE_V);
    TCVT(v37, v33, v39, v40);
    // pto: %li_tile
    Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
         CompactMode::Null>
        v41 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null,
                   CompactMode::Null>(v7, v9);
    // pto: %li_tile
    uint64_t v42 = (uint64_t)v14;
    TASSIGN(v41, v42);
    pipe_barrier(PIPE_V);
    TROWSUM(v41, v37, v25);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    // pto: %out_pij_view
    pto::Shape<1, 1, 1, 16, 128> v43 = pto::Shape<1, 1, 1, 16, 128>();
    // pto: %out_pij_view
    pto::Stride<2048, 2048, 2048, 128, 1> v44 = pto::Stride<2048, 2048, 2048, 128, 1>();
    // pto: %out_pij_view
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v45 =
        GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(
            v4, v43, v44
        );
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(v45, v33);
    // pto: %out_mi_view
    pto::Shape<1, 1, 1, 16, 1> v46 = pto::Shape<1, 1, 1, 16, 1>();
    // pto: %out_mi_view
    pto::Stride<16, 16, 16, 1, 16> v47 = pto::Stride<16, 16, 16, 1, 16>();
    // pto: %out_mi_view
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v48 =
        GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v5, v46, v47);
    TSTORE(v48, v27);
    // pto: %out_li_view
    pto::Shape<1, 1, 1, 16, 1> v49 = pto::Shape<1, 1, 1, 16, 1>();
    // pto: %out_li_view
    pto::Stride<16, 16, 16, 1, 16> v50 = pto::Stride<16, 16, 16, 1, 16>();
    // pto: %out_li_view
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v51 =
        GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v6, v49, v50);
    TSTORE(v51, v41);
#endif  // __DAV_VEC__

    ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
    return;
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Unpack tensor: sij
    __gm__ ChipTensor *sij_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ float *sij = reinterpret_cast<__gm__ float *>(sij_tensor->buffer.addr) + sij_tensor->start_offset;

    // Unpack tensor: out_pij
    __gm__ ChipTensor *out_pij_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    __gm__ bfloat16_t *out_pij =
        reinterpret_cast<__gm__ bfloat16_t *>(out_pij_tensor->buffer.addr) + out_pij_tensor->start_offset;

    // Unpack tensor: out_mi
    __gm__ ChipTensor *out_mi_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
    __gm__ float *out_mi = reinterpret_cast<__gm__ float *>(out_mi_tensor->buffer.addr) + out_mi_tensor->start_offset;

    // Unpack tensor: out_li
    __gm__ ChipTensor *out_li_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[3]);
    __gm__ float *out_li = reinterpret_cast<__gm__ float *>(out_li_tensor->buffer.addr) + out_li_tensor->start_offset;

    // Unpack scalar: scale
    union {
        uint64_t u64;
        float val;
    } scale_conv;
    scale_conv.u64 = args[4];
    float scale = scale_conv.val;

    // Unpack scalar: valid_len
    union {
        uint64_t u64;
        int64_t val;
    } valid_len_conv;
    valid_len_conv.u64 = args[5];
    int64_t valid_len = valid_len_conv.val;

    // Forward to ptoas-generated function
    softmax_prepare(sij, scale, valid_len, out_pij, out_mi, out_li);
}
