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

__global__ AICORE void kernel_add(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %ta__ssa_v0
  Tile<TileType::Vec, float, 32, 128, BLayout::RowMajor, 32, 128, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v8;
  // pto: %ta__ssa_v0
  uint64_t v9 = 0;
  TASSIGN(v8, v9);
  // pto: %a__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 32, 128> v10 = pto::Shape<1, 1, 1, 32, 128>();
  // pto: %a__ssa_v0_view_pview
  pto::Stride<4096, 4096, 4096, 128, 1> v11 = pto::Stride<4096, 4096, 4096, 128, 1>();
  // pto: %a__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 32, 128>, pto::Stride<4096, 4096, 4096, 128, 1>, pto::Layout::ND> v12 = GlobalTensor<float, pto::Shape<1, 1, 1, 32, 128>, pto::Stride<4096, 4096, 4096, 128, 1>, pto::Layout::ND>(v1, v10, v11);
  TLOAD(v8, v12);
  // pto: %tb__ssa_v0
  Tile<TileType::Vec, float, 32, 128, BLayout::RowMajor, 32, 128, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v13;
  // pto: %tb__ssa_v0
  uint64_t v14 = 16384;
  TASSIGN(v13, v14);
  // pto: %b__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 32, 128> v15 = pto::Shape<1, 1, 1, 32, 128>();
  // pto: %b__ssa_v0_view_pview
  pto::Stride<4096, 4096, 4096, 128, 1> v16 = pto::Stride<4096, 4096, 4096, 128, 1>();
  // pto: %b__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 32, 128>, pto::Stride<4096, 4096, 4096, 128, 1>, pto::Layout::ND> v17 = GlobalTensor<float, pto::Shape<1, 1, 1, 32, 128>, pto::Stride<4096, 4096, 4096, 128, 1>, pto::Layout::ND>(v2, v15, v16);
  TLOAD(v13, v17);
  // pto: %_tmp1__ssa_v0
  Tile<TileType::Vec, float, 32, 128, BLayout::RowMajor, 32, 128, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v18;
  // pto: %_tmp1__ssa_v0
  uint64_t v19 = 32768;
  TASSIGN(v18, v19);
  TADD(v18, v8, v13);
  // pto: %c__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 32, 128> v20 = pto::Shape<1, 1, 1, 32, 128>();
  // pto: %c__ssa_v0_view_pview
  pto::Stride<4096, 4096, 4096, 128, 1> v21 = pto::Stride<4096, 4096, 4096, 128, 1>();
  // pto: %c__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 32, 128>, pto::Stride<4096, 4096, 4096, 128, 1>, pto::Layout::ND> v22 = GlobalTensor<float, pto::Shape<1, 1, 1, 32, 128>, pto::Stride<4096, 4096, 4096, 128, 1>, pto::Layout::ND>(v3, v20, v21);
  TSTORE(v22, v18);
  #endif // __DAV_VEC__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
