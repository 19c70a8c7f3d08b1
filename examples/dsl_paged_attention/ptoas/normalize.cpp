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

__global__ AICORE void normalize(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3, int64_t v4) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %c16_index
  const int64_t v5 = 16;
  // pto: %_tmp1__ssa_v0
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v10;
  // pto: %_tmp1__ssa_v0
  uint64_t v11 = 0;
  TASSIGN(v10, v11);
  // pto: %acc__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 64> v12 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %acc__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 64, 1> v13 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %acc__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v14 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v1, v12, v13);
  TLOAD(v10, v14);
  // pto: %_tmp2__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v15;
  // pto: %_tmp2__ssa_v0
  uint64_t v16 = 4096;
  TASSIGN(v15, v16);
  // pto: %l__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 1> v17 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %l__ssa_v0_view_pview
  pto::Stride<16, 16, 16, 1, 1> v18 = pto::Stride<16, 16, 16, 1, 1>();
  // pto: %l__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND> v19 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND>(v2, v17, v18);
  TLOAD(v15, v19);
  // pto: %o__ssa_v0
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v20;
  // pto: %o__ssa_v0
  uint64_t v21 = 4160;
  TASSIGN(v20, v21);
  TROWEXPANDDIV(v20, v10, v15);
  // pto: %s
  int64_t v22 = (int64_t) ((uint64_t) v4 * (uint64_t) v5);
  // pto: %out__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 64> v23 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %out__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 64, 1> v24 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %out__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v25 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v3 + (v22 * 64), v23, v24);
  TSTORE(v25, v20);
  #endif // __DAV_VEC__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
