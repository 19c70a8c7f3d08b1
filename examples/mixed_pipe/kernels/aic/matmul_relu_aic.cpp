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

static __aicore__ void matmul_relu_aic(__gm__ bfloat16_t* v1, __gm__ bfloat16_t* v2, __gm__ float* v3, int32_t v4) {
  #if defined(__DAV_CUBE__)
  // pto: %c0_i64
  const int64_t v5 = 0;
  // pto: %c8192_i64
  const int64_t v6 = 8192;
  // pto: %c0_index
  const int64_t v7 = 0;
  // pto: %c1_index
  const int64_t v8 = 1;
  // pto: %c4_index
  const int64_t v9 = 4;
  // pto: %c32_index
  const int64_t v10 = 32;
  // pto: %c128_index
  const int64_t v12 = 128;
  // pto: %c2v_consumer_buf
  const int32_t v14 = 32768;
  // pto: %v2c_consumer_buf
  const int32_t v15 = 0;
  // pto: pto.aic_initialize_pipe
  auto v16 = TPipe<0, Direction::DIR_C2V, 8192, 2, 2, false>((__gm__ void*) v3, (uint32_t) v14, (uint32_t) v15);
  // pto: %b_pview
  pto::Shape<1, 1, 1, 64, 64> v17 = pto::Shape<1, 1, 1, 64, 64>();
  // pto: %b_pview
  pto::Stride<4096, 4096, 4096, 64, 1> v18 = pto::Stride<4096, 4096, 4096, 64, 1>();
  // pto: %b_pview
  GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<4096, 4096, 4096, 64, 1>, pto::Layout::ND> v19 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<4096, 4096, 4096, 64, 1>, pto::Layout::ND>(v2, v17, v18);
  // pto: %b_l1
  Tile<TileType::Mat, bfloat16_t, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v20;
  // pto: %b_l1
  uint64_t v21 = (uint64_t) v5;
  TASSIGN(v20, v21);
  TLOAD(v20, v19);
  // pto: %b_l0b
  Tile<TileType::Right, bfloat16_t, 64, 64, BLayout::RowMajor, 64, 64, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v22;
  // pto: %b_l0b
  uint64_t v23 = (uint64_t) v5;
  TASSIGN(v22, v23);
  TMOV(v22, v20);
  // pto: %block
  int64_t v24 = (int64_t) v4;
  // pto: %block_row0
  int64_t v25 = (int64_t) ((uint64_t) v24 * (uint64_t) v12);
  for (int64_t v26 = v7; v26 < v9; v26 += v8) {
    // pto: %i_rows
    int64_t v27 = (int64_t) ((uint64_t) v26 * (uint64_t) v10);
    // pto: %row0
    int64_t v28 = (int64_t) ((uint64_t) v25 + (uint64_t) v27);
    // pto: %a_pview
    pto::Shape<1, 1, 1, 32, 64> v29 = pto::Shape<1, 1, 1, 32, 64>();
    // pto: %a_pview
    pto::Stride<2048, 2048, 2048, 64, 1> v30 = pto::Stride<2048, 2048, 2048, 64, 1>();
    // pto: %a_pview
    GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 32, 64>, pto::Stride<2048, 2048, 2048, 64, 1>, pto::Layout::ND> v31 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 32, 64>, pto::Stride<2048, 2048, 2048, 64, 1>, pto::Layout::ND>(v1 + (v28 * 64), v29, v30);
    // pto: %a_l1
    Tile<TileType::Mat, bfloat16_t, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v32;
    // pto: %a_l1
    uint64_t v33 = (uint64_t) v6;
    TASSIGN(v32, v33);
    TLOAD(v32, v31);
    // pto: %a_l0a
    Tile<TileType::Left, bfloat16_t, 32, 64, BLayout::RowMajor, 32, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v34;
    // pto: %a_l0a
    uint64_t v35 = (uint64_t) v5;
    TASSIGN(v34, v35);
    TMOV(v34, v32);
    // pto: %acc_l0c
    Tile<TileType::Acc, float, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null> v36;
    // pto: %acc_l0c
    uint64_t v37 = (uint64_t) v5;
    TASSIGN(v36, v37);
    TMATMUL(v36, v34, v22);
    TPUSH<TPipe<0, Direction::DIR_C2V, 8192, 2, 2, false>, Tile<TileType::Acc, float, 32, 64, BLayout::ColMajor, 32, 64, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null>, TileSplitAxis::TILE_UP_DOWN>(v16, v36);
  }
  #endif // __DAV_CUBE__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}

static __aicore__ void matmul_relu_aiv(__gm__ float* v1, __gm__ float* v2, float v3, int32_t v4, int32_t v5) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %c0_i64
  const int64_t v6 = 0;
  // pto: %c4096_i64
  const int64_t v7 = 4096;
  // pto: %c0_index
  const int64_t v8 = 0;
  // pto: %c1_index
  const int64_t v9 = 1;
  // pto: %c4_index
  const int64_t v10 = 4;
  // pto: %c16_index
  const int64_t v11 = 16;
  // pto: %c32_index
  const int64_t v12 = 32;
  // pto: %c64_index
  const int64_t v13 = 64;
  // pto: %c128_index
  const int64_t v14 = 128;
  // pto: %c2v_consumer_buf
  const int32_t v16 = 32768;
  // pto: %v2c_consumer_buf
  const int32_t v17 = 0;
  // pto: pto.aiv_initialize_pipe
  auto v18 = TPipe<0, Direction::DIR_C2V, 8192, 2, 2, false>((__gm__ void*) v2, (uint32_t) v16, (uint32_t) v17);
  // pto: %block
  int64_t v19 = (int64_t) v4;
  // pto: %block_row0
  int64_t v20 = (int64_t) ((uint64_t) v19 * (uint64_t) v14);
  // pto: %lane
  int64_t v21 = (int64_t) v5;
  // pto: %lane_row0
  int64_t v22 = (int64_t) ((uint64_t) v21 * (uint64_t) v11);
  for (int64_t v23 = v8; v23 < v10; v23 += v9) {
    // pto: %acc_half
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v24 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v11, v13);
    TPOP<TPipe<0, Direction::DIR_C2V, 8192, 2, 2, false>, Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>, TileSplitAxis::TILE_UP_DOWN>(v18, v24);
    // pto: %relu_tile
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v25 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v11, v13);
    // pto: %relu_tile
    uint64_t v26 = (uint64_t) v6;
    TASSIGN(v25, v26);
    TRELU(v25, v24);
    TFREE<TPipe<0, Direction::DIR_C2V, 8192, 2, 2, false>, TileSplitAxis::TILE_UP_DOWN>(v18);
    // pto: %scaled_tile
    Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v27 = Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v11, v13);
    // pto: %scaled_tile
    uint64_t v28 = (uint64_t) v7;
    TASSIGN(v27, v28);
    TMULS(v27, v25, v3);
    // pto: %i_rows
    int64_t v29 = (int64_t) ((uint64_t) v23 * (uint64_t) v12);
    // pto: %tile_row0
    int64_t v30 = (int64_t) ((uint64_t) v20 + (uint64_t) v29);
    // pto: %row0
    int64_t v31 = (int64_t) ((uint64_t) v30 + (uint64_t) v22);
    // pto: %c_pview
    pto::Shape<1, 1, 1, 16, 64> v32 = pto::Shape<1, 1, 1, 16, 64>();
    // pto: %c_pview
    pto::Stride<1024, 1024, 1024, 64, 1> v33 = pto::Stride<1024, 1024, 1024, 64, 1>();
    // pto: %c_pview
    GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v34 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v1 + (v31 * 64), v32, v33);
    TSTORE(v34, v27);
  }
  #endif // __DAV_VEC__

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
