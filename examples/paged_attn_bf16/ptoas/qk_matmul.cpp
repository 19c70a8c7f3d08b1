#include "pto/pto-inst.hpp"
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

__global__ AICORE void qk_matmul(__gm__ bfloat16_t* v1, __gm__ bfloat16_t* v2, __gm__ float* v3) {
  #if defined(__DAV_CUBE__)
  // pto: %c0_i64
  const int64_t v4 = 0;
  // pto: %c4096_i64
  const int64_t v5 = 4096;
  // pto: %qi_l1
  Tile<TileType::Mat, bfloat16_t, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v10;
  // pto: %qi_l1
  uint64_t v11 = (uint64_t) v4;
  TASSIGN(v10, v11);
  // pto: %qi_pview
  pto::Shape<1, 1, 1, 16, 128> v12 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %qi_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v13 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %qi_pview
  GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v14 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v1, v12, v13);
  TLOAD(v10, v14);
  // pto: %kj_l1
  Tile<TileType::Mat, bfloat16_t, 128, 128, BLayout::RowMajor, 128, 128, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v15;
  // pto: %kj_l1
  uint64_t v16 = (uint64_t) v5;
  TASSIGN(v15, v16);
  // pto: %kj_t_pview
  pto::Shape<1, 1, 1, 128, 128> v17 = pto::Shape<1, 1, 1, 128, 128>();
  // pto: %kj_t_pview
  pto::Stride<128, 128, 128, 1, 128> v18 = pto::Stride<128, 128, 128, 1, 128>();
  // pto: %kj_t_pview
  GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<128, 128, 128, 1, 128>, pto::Layout::DN> v19 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<128, 128, 128, 1, 128>, pto::Layout::DN>(v2, v17, v18);
  TLOAD(v15, v19);
  // pto: %qi_l0a
  Tile<TileType::Left, bfloat16_t, 16, 128, BLayout::RowMajor, 16, 128, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v20;
  // pto: %qi_l0a
  uint64_t v21 = (uint64_t) v4;
  TASSIGN(v20, v21);
  TMOV(v20, v10);
  // pto: %kj_l0b
  Tile<TileType::Right, bfloat16_t, 128, 128, BLayout::RowMajor, 128, 128, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v22;
  // pto: %kj_l0b
  uint64_t v23 = (uint64_t) v4;
  TASSIGN(v22, v23);
  TMOV(v22, v15);
  // pto: %sij_l0c
  Tile<TileType::Acc, float, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null> v24;
  // pto: %sij_l0c
  uint64_t v25 = (uint64_t) v4;
  TASSIGN(v24, v25);
  TMATMUL(v24, v20, v22);
  // pto: %sij_pview
  pto::Shape<1, 1, 1, 16, 128> v26 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %sij_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v27 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %sij_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v28 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v3, v26, v27);
  TSTORE(v28, v24);
  #endif // __DAV_CUBE__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
