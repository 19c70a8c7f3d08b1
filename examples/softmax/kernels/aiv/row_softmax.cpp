// Kernel Function: row_softmax

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

static __aicore__ void row_softmax(__gm__ bfloat16_t* v1, __gm__ float* v2, int64_t v3, int32_t v4, int32_t v5) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %c0_i64
  const int64_t v6 = 0;
  // pto: %c4096_i64
  const int64_t v7 = 4096;
  // pto: %c12288_i64
  const int64_t v8 = 12288;
  // pto: %c20480_i64
  const int64_t v9 = 20480;
  // pto: %c20544_i64
  const int64_t v10 = 20544;
  // pto: %c24576_i64
  const int64_t v11 = 24576;
  // pto: %c16_index
  const int64_t v12 = 16;
  // pto: %c128_index
  const int64_t v13 = 128;
  // pto: %c1_index
  const int64_t v14 = 1;
  // pto: %block
  int64_t v16 = (int64_t) v4;
  // pto: %row0
  int64_t v17 = (int64_t) ((uint64_t) v16 * (uint64_t) v12);
  // pto: %rows_left
  int64_t v18 = (int64_t) ((uint64_t) v3 - (uint64_t) v17);
  // pto: %valid_rows
  int64_t v19 = v18 < v12 ? v18 : v12;
  // pto: %x_pview
  pto::Shape<1, 1, 1, -1, 128> v20 = pto::Shape<1, 1, 1, -1, 128>(1, 1, 1, v19, 128);
  // pto: %x_pview
  pto::Stride<-1, -1, -1, 128, 1> v21 = pto::Stride<-1, -1, -1, 128, 1>(v19 * 128, v19 * 128, v19 * 128, 128, 1);
  // pto: %x_pview
  GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, -1, 128>, pto::Stride<-1, -1, -1, 128, 1>, pto::Layout::ND> v22 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, -1, 128>, pto::Stride<-1, -1, -1, 128, 1>, pto::Layout::ND>(v1 + (v17 * 128), v20, v21);
  // pto: %x_tile
  Tile<TileType::Vec, bfloat16_t, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v23 = Tile<TileType::Vec, bfloat16_t, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v13);
  // pto: %x_tile
  uint64_t v24 = (uint64_t) v6;
  TASSIGN(v23, v24);
  TLOAD(v23, v22);
  // pto: %x_f32
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v25 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v13);
  // pto: %x_f32
  uint64_t v26 = (uint64_t) v7;
  TASSIGN(v25, v26);
  RoundMode v27 = RoundMode::CAST_NONE;
  SaturationMode v28 = SaturationMode::OFF;
  TCVT(v25, v23, v27, v28);
  // pto: %tmp_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v29 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v13);
  // pto: %tmp_tile
  uint64_t v30 = (uint64_t) v8;
  TASSIGN(v29, v30);
  // pto: %row_max
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v31 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v14);
  // pto: %row_max
  uint64_t v32 = (uint64_t) v9;
  TASSIGN(v31, v32);
  TROWMAX(v31, v25, v29);
  // pto: %centered
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v33 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v13);
  // pto: %centered
  uint64_t v34 = (uint64_t) v11;
  TASSIGN(v33, v34);
  TROWEXPANDSUB(v33, v25, v31);
  // pto: %exp_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v35 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v13);
  // pto: %exp_tile
  uint64_t v36 = (uint64_t) v11;
  TASSIGN(v35, v36);
  TEXP(v35, v33);
  // pto: %row_sum
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v37 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v14);
  // pto: %row_sum
  uint64_t v38 = (uint64_t) v10;
  TASSIGN(v37, v38);
  TROWSUM(v37, v35, v29);
  // pto: %y_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v39 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v19, v13);
  // pto: %y_tile
  uint64_t v40 = (uint64_t) v7;
  TASSIGN(v39, v40);
  TROWEXPANDDIV(v39, v35, v37);
  // pto: %y_pview
  pto::Shape<1, 1, 1, -1, 128> v41 = pto::Shape<1, 1, 1, -1, 128>(1, 1, 1, v19, 128);
  // pto: %y_pview
  pto::Stride<-1, -1, -1, 128, 1> v42 = pto::Stride<-1, -1, -1, 128, 1>(v19 * 128, v19 * 128, v19 * 128, 128, 1);
  // pto: %y_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, -1, 128>, pto::Stride<-1, -1, -1, 128, 1>, pto::Layout::ND> v43 = GlobalTensor<float, pto::Shape<1, 1, 1, -1, 128>, pto::Stride<-1, -1, -1, 128, 1>, pto::Layout::ND>(v2 + (v17 * 128), v41, v42);
  TSTORE(v43, v39);
  #endif // __DAV_VEC__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Read logical SPMD block identity from runtime dispatch payload
    int32_t __pypto_spmd_block_idx = get_block_idx(args);
    int32_t __pypto_spmd_block_num = get_block_num(args);

    // Unpack tensor: x
    __gm__ ChipTensor *x_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ bfloat16_t *x = reinterpret_cast<__gm__ bfloat16_t *>(x_tensor->buffer.addr) + x_tensor->start_offset;

    // Unpack tensor: y
    __gm__ ChipTensor *y_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    __gm__ float *y = reinterpret_cast<__gm__ float *>(y_tensor->buffer.addr) + y_tensor->start_offset;

    // Extract dynamic dim: rows
    int64_t rows = static_cast<int64_t>(x_tensor->shapes[0]);

    // Forward to ptoas-generated function
    row_softmax(x, y, rows, __pypto_spmd_block_idx, __pypto_spmd_block_num);
}
