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
using namespace pto;

template <typename GT>
static AICORE inline auto PTOAS__GLOBAL_TENSOR_DATA(GT &gt) -> decltype(gt.data()) {
  return gt.data();
}

enum class PTOAutoSyncTailMode : int {
  kBarrierAll = 0,
  kSetWaitMte3ToSEvent0 = 1,
};

static AICORE inline void ptoas_auto_sync_tail(
    PTOAutoSyncTailMode mode = PTOAutoSyncTailMode::kBarrierAll) {
  if (mode == PTOAutoSyncTailMode::kSetWaitMte3ToSEvent0) {
    set_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
    wait_flag(PIPE_MTE3, PIPE_S, EVENT_ID0);
  } else {
    pipe_barrier(PIPE_ALL);
  }
}

template <typename P>
static AICORE inline void PTOAS__DCCI_SINGLE_CACHE_LINE(P ptr) {
  dcci((__gm__ void*)ptr, cache_line_t::SINGLE_CACHE_LINE);
}

static __aicore__ void softmax_prepare(__gm__ float* v1, float v2, int64_t v3, __gm__ bfloat16_t* v4, __gm__ float* v5, __gm__ float* v6) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %c0_i64
  const int64_t v7 = 0;
  // pto: %c8192_i64
  const int64_t v8 = 8192;
  // pto: %c16384_i64
  const int64_t v9 = 16384;
  // pto: %c24576_i64
  const int64_t v10 = 24576;
  // pto: %c24640_i64
  const int64_t v11 = 24640;
  // pto: %c24704_i64
  const int64_t v12 = 24704;
  // pto: %c16_index
  const int64_t v13 = 16;
  // pto: %c128_index
  const int64_t v14 = 128;
  // pto: %c1_index
  const int64_t v15 = 1;
  // pto: %s_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v17 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v3);
  // pto: %s_tile
  uint64_t v18 = (uint64_t) v7;
  TASSIGN(v17, v18);
  // pto: %sij_pview
  pto::Shape<1, 1, 1, 16, 128> v19 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %sij_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v20 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %sij_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v21 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v1, v19, v20);
  TLOAD(v17, v21);
  // pto: %s_padded
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Min, CompactMode::Null> v22 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Min, CompactMode::Null>(v13, v14);
  // pto: %s_padded
  uint64_t v23 = (uint64_t) v8;
  TASSIGN(v22, v23);
  TFILLPAD(v22, v17);
  // pto: %scaled
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v24 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v14);
  // pto: %scaled
  uint64_t v25 = (uint64_t) v7;
  TASSIGN(v24, v25);
  TMULS(v24, v22, v2);
  // pto: %tmp_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v26 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v14);
  // pto: %tmp_tile
  uint64_t v27 = (uint64_t) v9;
  TASSIGN(v26, v27);
  // pto: %mi_tile
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v28 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v15);
  // pto: %mi_tile
  uint64_t v29 = (uint64_t) v10;
  TASSIGN(v28, v29);
  TROWMAX(v28, v24, v26);
  // pto: %sij_centered
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v30 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v14);
  // pto: %sij_centered
  uint64_t v31 = (uint64_t) v8;
  TASSIGN(v30, v31);
  TROWEXPANDSUB(v30, v24, v28);
  // pto: %exp_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v32 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v14);
  // pto: %exp_tile
  uint64_t v33 = (uint64_t) v8;
  TASSIGN(v32, v33);
  TEXP(v32, v30);
  // pto: %pij_tile_bf16
  Tile<TileType::Vec, bfloat16_t, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v34 = Tile<TileType::Vec, bfloat16_t, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v14);
  // pto: %pij_tile_bf16
  uint64_t v35 = (uint64_t) v12;
  TASSIGN(v34, v35);
  RoundMode v36 = RoundMode::CAST_ROUND;
  SaturationMode v37 = SaturationMode::OFF;
  TCVT(v34, v32, v36, v37);
  // pto: %pij_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v38 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v14);
  // pto: %pij_tile
  uint64_t v39 = (uint64_t) v7;
  TASSIGN(v38, v39);
  RoundMode v40 = RoundMode::CAST_ROUND;
  SaturationMode v41 = SaturationMode::OFF;
  TCVT(v38, v34, v40, v41);
  // pto: %li_tile
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v42 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v13, v15);
  // pto: %li_tile
  uint64_t v43 = (uint64_t) v11;
  TASSIGN(v42, v43);
  TROWSUM(v42, v38, v26);
  // pto: %out_pij_pview
  pto::Shape<1, 1, 1, 16, 128> v44 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %out_pij_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v45 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %out_pij_pview
  GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v46 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v4, v44, v45);
  TSTORE(v46, v34);
  // pto: %out_mi_pview
  pto::Shape<1, 1, 1, 16, 1> v47 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %out_mi_pview
  pto::Stride<16, 16, 16, 1, 16> v48 = pto::Stride<16, 16, 16, 1, 16>();
  // pto: %out_mi_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v49 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v5, v47, v48);
  TSTORE(v49, v28);
  // pto: %out_li_pview
  pto::Shape<1, 1, 1, 16, 1> v50 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %out_li_pview
  pto::Stride<16, 16, 16, 1, 16> v51 = pto::Stride<16, 16, 16, 1, 16>();
  // pto: %out_li_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v52 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v6, v50, v51);
  TSTORE(v52, v42);
  #endif // __DAV_VEC__

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
