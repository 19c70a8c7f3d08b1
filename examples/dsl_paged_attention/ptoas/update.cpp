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

__global__ AICORE void update(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %_tmp1__ssa_v0
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v8;
  // pto: %_tmp1__ssa_v0
  uint64_t v9 = 0;
  TASSIGN(v8, v9);
  // pto: %acc__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 64> v10 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %acc__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 64, 1> v11 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %acc__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v12 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v3, v10, v11);
  TLOAD(v8, v12);
  // pto: %_tmp2__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v13;
  // pto: %_tmp2__ssa_v0
  uint64_t v14 = 4096;
  TASSIGN(v13, v14);
  // pto: %alpha__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 1> v15 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %alpha__ssa_v0_view_pview
  pto::Stride<16, 16, 16, 1, 1> v16 = pto::Stride<16, 16, 16, 1, 1>();
  // pto: %alpha__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND> v17 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND>(v2, v15, v16);
  TLOAD(v13, v17);
  // pto: %scaled__ssa_v0
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v18;
  // pto: %scaled__ssa_v0
  uint64_t v19 = 4160;
  TASSIGN(v18, v19);
  TROWEXPANDMUL(v18, v8, v13);
  // pto: %_tmp3__ssa_v0
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v20;
  // pto: %_tmp3__ssa_v0
  uint64_t v21 = 0;
  TASSIGN(v20, v21);
  // pto: %oj__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 64> v22 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %oj__ssa_v0_view_pview
  pto::Stride<1024, 1024, 1024, 64, 1> v23 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %oj__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v24 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v1, v22, v23);
  TLOAD(v20, v24);
  // pto: %_tmp4__ssa_v0
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, 16, 64, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v25;
  // pto: %_tmp4__ssa_v0
  uint64_t v26 = 8256;
  TASSIGN(v25, v26);
  TADD(v25, v18, v20);
  // pto: %acc__ssa_v0_view_pview_1
  pto::Shape<1, 1, 1, 16, 64> v27 = pto::Shape<1, 1, 1, 16, 64>();
  // pto: %acc__ssa_v0_view_pview_1
  pto::Stride<1024, 1024, 1024, 64, 1> v28 = pto::Stride<1024, 1024, 1024, 64, 1>();
  // pto: %acc__ssa_v0_view_pview_1
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND> v29 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 64>, pto::Stride<1024, 1024, 1024, 64, 1>, pto::Layout::ND>(v3, v27, v28);
  TSTORE(v29, v25);
  #endif // __DAV_VEC__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
