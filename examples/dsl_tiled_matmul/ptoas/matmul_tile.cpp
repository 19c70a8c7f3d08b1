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

__global__ AICORE void matmul_tile(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3, int64_t v4, int64_t v5) {
  #if defined(__DAV_CUBE__)
  // pto: %c1_index
  const int64_t v7 = 1;
  // pto: %c64_index
  const int64_t v8 = 64;
  // pto: %c2_index
  const int64_t v10 = 2;
  // pto: %a0__ssa_v0
  Tile<TileType::Mat, float, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v11;
  // pto: %a0__ssa_v0
  uint64_t v12 = 0;
  TASSIGN(v11, v12);
  // pto: %s
  int64_t v13 = (int64_t) ((uint64_t) v4 * (uint64_t) v8);
  // pto: %a__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 64, 64> v14 = pto::Shape<1, 1, 1, 64, 64>();
  // pto: %a__ssa_v0_view_pview
  pto::Stride<8192, 8192, 8192, 128, 1> v15 = pto::Stride<8192, 8192, 8192, 128, 1>();
  // pto: %a__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND> v16 = GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND>(v1 + (v13 * 128), v14, v15);
  TLOAD(v11, v16);
  // pto: %b0__ssa_v0
  Tile<TileType::Mat, float, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v17;
  // pto: %b0__ssa_v0
  uint64_t v18 = 16384;
  TASSIGN(v17, v18);
  // pto: %s_1
  int64_t v19 = (int64_t) ((uint64_t) v5 * (uint64_t) v8);
  // pto: %b__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 64, 64> v20 = pto::Shape<1, 1, 1, 64, 64>();
  // pto: %b__ssa_v0_view_pview
  pto::Stride<8192, 8192, 8192, 128, 1> v21 = pto::Stride<8192, 8192, 8192, 128, 1>();
  // pto: %b__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND> v22 = GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND>(v2 + (v19), v20, v21);
  TLOAD(v17, v22);
  // pto: %_tmp1__ssa_v0
  Tile<TileType::Left, float, 64, 64, BLayout::RowMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v23;
  // pto: %_tmp1__ssa_v0
  uint64_t v24 = 0;
  TASSIGN(v23, v24);
  TMOV(v23, v11);
  // pto: %_tmp2__ssa_v0
  Tile<TileType::Right, float, 64, 64, BLayout::RowMajor, 64, 64, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v25;
  // pto: %_tmp2__ssa_v0
  uint64_t v26 = 0;
  TASSIGN(v25, v26);
  TMOV(v25, v17);
  // pto: %acc__ssa_v0
  Tile<TileType::Acc, float, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null> v27;
  // pto: %acc__ssa_v0
  uint64_t v28 = 0;
  TASSIGN(v27, v28);
  TMATMUL(v27, v23, v25);
  // pto: %acc__ssa_v1
  Tile<TileType::Acc, float, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null> v29 = v27;
  for (int64_t v30 = v7; v30 < v10; v30 += v7) {
    // pto: %ak__ssa_v0
    Tile<TileType::Mat, float, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v31;
    // pto: %ak__ssa_v0
    uint64_t v32 = 0;
    TASSIGN(v31, v32);
    // pto: %s_2
    int64_t v33 = (int64_t) ((uint64_t) v4 * (uint64_t) v8);
    // pto: %s_3
    int64_t v34 = (int64_t) ((uint64_t) v30 * (uint64_t) v8);
    // pto: %a__ssa_v0_view_pview_1
    pto::Shape<1, 1, 1, 64, 64> v35 = pto::Shape<1, 1, 1, 64, 64>();
    // pto: %a__ssa_v0_view_pview_1
    pto::Stride<8192, 8192, 8192, 128, 1> v36 = pto::Stride<8192, 8192, 8192, 128, 1>();
    // pto: %a__ssa_v0_view_pview_1
    GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND> v37 = GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND>(v1 + (v33 * 128 + v34), v35, v36);
    TLOAD(v31, v37);
    // pto: %bk__ssa_v0
    Tile<TileType::Mat, float, 64, 64, BLayout::ColMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v38;
    // pto: %bk__ssa_v0
    uint64_t v39 = 16384;
    TASSIGN(v38, v39);
    // pto: %s_4
    int64_t v40 = (int64_t) ((uint64_t) v30 * (uint64_t) v8);
    // pto: %s_5
    int64_t v41 = (int64_t) ((uint64_t) v5 * (uint64_t) v8);
    // pto: %b__ssa_v0_view_pview_1
    pto::Shape<1, 1, 1, 64, 64> v42 = pto::Shape<1, 1, 1, 64, 64>();
    // pto: %b__ssa_v0_view_pview_1
    pto::Stride<8192, 8192, 8192, 128, 1> v43 = pto::Stride<8192, 8192, 8192, 128, 1>();
    // pto: %b__ssa_v0_view_pview_1
    GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND> v44 = GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND>(v2 + (v40 * 128 + v41), v42, v43);
    TLOAD(v38, v44);
    // pto: %_tmp3__ssa_v0
    Tile<TileType::Left, float, 64, 64, BLayout::RowMajor, 64, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v45;
    // pto: %_tmp3__ssa_v0
    uint64_t v46 = 0;
    TASSIGN(v45, v46);
    TMOV(v45, v31);
    // pto: %_tmp4__ssa_v0
    Tile<TileType::Right, float, 64, 64, BLayout::RowMajor, 64, 64, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v47;
    // pto: %_tmp4__ssa_v0
    uint64_t v48 = 0;
    TASSIGN(v47, v48);
    TMOV(v47, v38);
    TMATMUL_ACC(v29, v29, v45, v47);
  }
  // pto: %s_6
  int64_t v49 = (int64_t) ((uint64_t) v4 * (uint64_t) v8);
  // pto: %s_7
  int64_t v50 = (int64_t) ((uint64_t) v5 * (uint64_t) v8);
  // pto: %c__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 64, 64> v51 = pto::Shape<1, 1, 1, 64, 64>();
  // pto: %c__ssa_v0_view_pview
  pto::Stride<8192, 8192, 8192, 128, 1> v52 = pto::Stride<8192, 8192, 8192, 128, 1>();
  // pto: %c__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND> v53 = GlobalTensor<float, pto::Shape<1, 1, 1, 64, 64>, pto::Stride<8192, 8192, 8192, 128, 1>, pto::Layout::ND>(v3 + (v49 * 128 + v50), v51, v52);
  TSTORE(v53, v29);
  #endif // __DAV_CUBE__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
