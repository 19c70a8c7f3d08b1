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

__global__ AICORE void qk(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3, int64_t v4) {
  #if defined(__DAV_CUBE__)
  // pto: %c16_index
  const int64_t v8 = 16;
  // pto: %tq__ssa_v0
  Tile<TileType::Mat, float, 16, 64, BLayout::ColMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v10;
  // pto: %tq__ssa_v0
  uint64_t v11 = 0;
  TASSIGN(v10, v11);
  // pto: %s
  int64_t v12 = (int64_t) ((uint64_t) v4 * (uint64_t) v8);
  // pto: %q__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 64> v13 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %q__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 64, 1> v14 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %q__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v15 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v1 + (v12 * 64), v13, v14);
  TLOAD(v10, v15);
  // pto: %tk__ssa_v0
  Tile<TileType::Mat, float, 64, 16, BLayout::ColMajor, 64, 16, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v16;
  // pto: %tk__ssa_v0
  uint64_t v17 = 4096;
  TASSIGN(v16, v17);
  // pto: %kj__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 64, 16> v18 = pto::Shape<1, 1, 1, 64, 16>();
  // pto: %kj__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 16, 1> v19 = pto::Stride<1024, 1024, 1024, 16, 1>();
  // pto: %kj__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 64, 16>, pto::Stride<1024, 1024, 1024, 16, 1>, pto::Layout::ND> v20 = GlobalTensor<float, pto::Shape<1, 1, 1, 64, 16>, pto::Stride<1024, 1024, 1024, 16, 1>, pto::Layout::ND>(v2, v18, v19);
  TLOAD(v16, v20);
  // pto: %_tmp1__ssa_v0
  Tile<TileType::Left, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v21;
  // pto: %_tmp1__ssa_v0
  uint64_t v22 = 0;
  TASSIGN(v21, v22);
  TMOV(v21, v10);
  // pto: %_tmp2__ssa_v0
  Tile<TileType::Right, float, 64, 16, BLayout::RowMajor, 64, 16, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v23;
  // pto: %_tmp2__ssa_v0
  uint64_t v24 = 0;
  TASSIGN(v23, v24);
  TMOV(v23, v16);
  // pto: %sij__ssa_v0
  Tile<TileType::Acc, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null> v25;
  // pto: %sij__ssa_v0
  uint64_t v26 = 0;
  TASSIGN(v25, v26);
  TMATMUL(v25, v21, v23);
  // pto: %s__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 16> v27 = pto::Shape<1, 1, 1, 16, 16>();
  // pto: %s__ssa_v0_view_pview
  pto::Stride<256, 256, 256, 16, 1> v28 = pto::Stride<256, 256, 256, 16, 1>();
  // pto: %s__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND> v29 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND>(v3, v27, v28);
  TSTORE(v29, v25);
  #endif // __DAV_CUBE__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
