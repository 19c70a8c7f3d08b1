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

__global__ AICORE void pv_matmul(__gm__ bfloat16_t* v1, __gm__ bfloat16_t* v2, __gm__ float* v3) {
  #if defined(__DAV_CUBE__)
  // pto: %c0_i64
  const int64_t v4 = 0;
  // pto: %c2048_i64
  const int64_t v5 = 2048;
  // pto: %c4096_i64
  const int64_t v6 = 4096;
  // pto: %c16384_i64
  const int64_t v7 = 16384;
  // pto: %c64_index
  const int64_t v9 = 64;
  // pto: %c0_index
  const int64_t v12 = 0;
  // pto: %pij_l1
  Tile<TileType::Mat, bfloat16_t, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v13;
  // pto: %pij_l1
  uint64_t v14 = (uint64_t) v4;
  TASSIGN(v13, v14);
  // pto: %pij_pview
  pto::Shape<1, 1, 1, 16, 128> v15 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %pij_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v16 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %pij_pview
  GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v17 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v1, v15, v16);
  TLOAD(v13, v17);
  // pto: %vj_l1
  Tile<TileType::Mat, bfloat16_t, 128, 128, BLayout::ColMajor, 128, 128, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v18;
  // pto: %vj_l1
  uint64_t v19 = (uint64_t) v6;
  TASSIGN(v18, v19);
  // pto: %vj_pview
  pto::Shape<1, 1, 1, 128, 128> v20 = pto::Shape<1, 1, 1, 128, 128>();
  // pto: %vj_pview
  pto::Stride<16384, 16384, 16384, 128, 1> v21 = pto::Stride<16384, 16384, 16384, 128, 1>();
  // pto: %vj_pview
  GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<16384, 16384, 16384, 128, 1>, pto::Layout::ND> v22 = GlobalTensor<bfloat16_t, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<16384, 16384, 16384, 128, 1>, pto::Layout::ND>(v2, v20, v21);
  TLOAD(v18, v22);
  // pto: %pij_l0a_k0
  Tile<TileType::Left, bfloat16_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v23;
  // pto: %pij_l0a_k0
  uint64_t v24 = (uint64_t) v4;
  TASSIGN(v23, v24);
  TEXTRACT(v23, v13, v12, v12);
  // pto: %vj_l0b_k0
  Tile<TileType::Right, bfloat16_t, 64, 128, BLayout::RowMajor, 64, 128, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v25;
  // pto: %vj_l0b_k0
  uint64_t v26 = (uint64_t) v4;
  TASSIGN(v25, v26);
  TEXTRACT(v25, v18, v12, v12);
  // pto: %oi_l0c
  Tile<TileType::Acc, float, 16, 128, BLayout::ColMajor, 16, 128, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null> v27;
  // pto: %oi_l0c
  uint64_t v28 = (uint64_t) v4;
  TASSIGN(v27, v28);
  TMATMUL(v27, v23, v25);
  // pto: %pij_l0a_k1
  Tile<TileType::Left, bfloat16_t, 16, 64, BLayout::RowMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v29;
  // pto: %pij_l0a_k1
  uint64_t v30 = (uint64_t) v5;
  TASSIGN(v29, v30);
  TEXTRACT(v29, v13, v12, v9);
  // pto: %vj_l0b_k1
  Tile<TileType::Right, bfloat16_t, 64, 128, BLayout::RowMajor, 64, 128, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v31;
  // pto: %vj_l0b_k1
  uint64_t v32 = (uint64_t) v7;
  TASSIGN(v31, v32);
  TEXTRACT(v31, v18, v9, v12);
  TMATMUL_ACC(v27, v27, v29, v31);
  // pto: %oi_new_pview
  pto::Shape<1, 1, 1, 16, 128> v33 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %oi_new_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v34 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %oi_new_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v35 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v3, v33, v34);
  TSTORE(v35, v27);
  #endif // __DAV_CUBE__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
