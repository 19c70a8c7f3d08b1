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

__global__ AICORE void pv(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3) {
  #if defined(__DAV_CUBE__)
  // pto: %tp__ssa_v0
  Tile<TileType::Mat, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v8;
  // pto: %tp__ssa_v0
  uint64_t v9 = 0;
  TASSIGN(v8, v9);
  // pto: %p__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 16> v10 = pto::Shape<1, 1, 1, 16, 16>();
  // pto: %p__ssa_v0_view_pview
  pto::Stride<256, 256, 256, 16, 1> v11 = pto::Stride<256, 256, 256, 16, 1>();
  // pto: %p__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND> v12 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND>(v1, v10, v11);
  TLOAD(v8, v12);
  // pto: %tv__ssa_v0
  Tile<TileType::Mat, float, 16, 64, BLayout::ColMajor, 16, 64, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v13;
  // pto: %tv__ssa_v0
  uint64_t v14 = 1024;
  TASSIGN(v13, v14);
  // pto: %vj__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 64> v15 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %vj__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 64, 1> v16 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %vj__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v17 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v2, v15, v16);
  TLOAD(v13, v17);
  // pto: %_tmp1__ssa_v0
  Tile<TileType::Left, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null> v18;
  // pto: %_tmp1__ssa_v0
  uint64_t v19 = 0;
  TASSIGN(v18, v19);
  TMOV(v18, v8);
  // pto: %_tmp2__ssa_v0
  Tile<TileType::Right, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::ColMajor, 512, PadValue::Null, CompactMode::Null> v20;
  // pto: %_tmp2__ssa_v0
  uint64_t v21 = 0;
  TASSIGN(v20, v21);
  TMOV(v20, v13);
  // pto: %oij__ssa_v0
  Tile<TileType::Acc, float, 16, 64, BLayout::ColMajor, 16, 64, SLayout::RowMajor, 1024, PadValue::Null, CompactMode::Null> v22;
  // pto: %oij__ssa_v0
  uint64_t v23 = 0;
  TASSIGN(v22, v23);
  TMATMUL(v22, v18, v20);
  // pto: %o__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 64> v24 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %o__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 64, 1> v25 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %o__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v26 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v3, v24, v25);
  TSTORE(v26, v22);
  #endif // __DAV_CUBE__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
