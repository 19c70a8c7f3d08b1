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

__global__ AICORE void softmax(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3, __gm__ float* v4, __gm__ float* v5, float v6) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %_tmp1__ssa_v0
  Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v10;
  // pto: %_tmp1__ssa_v0
  uint64_t v11 = 0;
  TASSIGN(v10, v11);
  // pto: %s__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 16> v12 = pto::Shape<1, 1, 1, 16, 16>();
  // pto: %s__ssa_v0_view_pview
  pto::Stride<256, 256, 256, 16, 1> v13 = pto::Stride<256, 256, 256, 16, 1>();
  // pto: %s__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND> v14 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND>(v1, v12, v13);
  TLOAD(v10, v14);
  // pto: %t__ssa_v0
  Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v15;
  // pto: %t__ssa_v0
  uint64_t v16 = 1024;
  TASSIGN(v15, v16);
  TMULS(v15, v10, v6);
  // pto: %m_old__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v17;
  // pto: %m_old__ssa_v0
  uint64_t v18 = 0;
  TASSIGN(v17, v18);
  // pto: %m__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 1> v19 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %m__ssa_v0_view_pview
  pto::Stride<16, 16, 16, 1, 1> v20 = pto::Stride<16, 16, 16, 1, 1>();
  // pto: %m__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND> v21 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND>(v2, v19, v20);
  TLOAD(v17, v21);
  // pto: %_tmp2__ssa_v0_tmp
  Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v22;
  // pto: %_tmp2__ssa_v0_tmp
  uint64_t v23 = 2048;
  TASSIGN(v22, v23);
  // pto: %_tmp2__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v24;
  // pto: %_tmp2__ssa_v0
  uint64_t v25 = 64;
  TASSIGN(v24, v25);
  TROWMAX(v24, v15, v22);
  // pto: %m_new__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v26;
  // pto: %m_new__ssa_v0
  uint64_t v27 = 128;
  TASSIGN(v26, v27);
  TMAX(v26, v17, v24);
  // pto: %_tmp3__ssa_v0
  Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v28;
  // pto: %_tmp3__ssa_v0
  uint64_t v29 = 2048;
  TASSIGN(v28, v29);
  TROWEXPANDSUB(v28, v15, v26);
  // pto: %pij__ssa_v0
  Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v30;
  // pto: %pij__ssa_v0
  uint64_t v31 = 192;
  TASSIGN(v30, v31);
  TEXP(v30, v28);
  // pto: %_tmp4__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v32;
  // pto: %_tmp4__ssa_v0
  uint64_t v33 = 64;
  TASSIGN(v32, v33);
  TSUB(v32, v17, v26);
  // pto: %a__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v34;
  // pto: %a__ssa_v0
  uint64_t v35 = 0;
  TASSIGN(v34, v35);
  TEXP(v34, v32);
  // pto: %_tmp5__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v36;
  // pto: %_tmp5__ssa_v0
  uint64_t v37 = 64;
  TASSIGN(v36, v37);
  // pto: %l__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 1> v38 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %l__ssa_v0_view_pview
  pto::Stride<16, 16, 16, 1, 1> v39 = pto::Stride<16, 16, 16, 1, 1>();
  // pto: %l__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND> v40 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND>(v3, v38, v39);
  TLOAD(v36, v40);
  // pto: %_tmp6__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v41;
  // pto: %_tmp6__ssa_v0
  uint64_t v42 = 1216;
  TASSIGN(v41, v42);
  TMUL(v41, v36, v34);
  // pto: %_tmp7__ssa_v0_tmp
  Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v43;
  // pto: %_tmp7__ssa_v0_tmp
  uint64_t v44 = 1280;
  TASSIGN(v43, v44);
  // pto: %_tmp7__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v45;
  // pto: %_tmp7__ssa_v0
  uint64_t v46 = 64;
  TASSIGN(v45, v46);
  TROWSUM(v45, v30, v43);
  // pto: %l_new__ssa_v0
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, 16, 1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v47;
  // pto: %l_new__ssa_v0
  uint64_t v48 = 1280;
  TASSIGN(v47, v48);
  TADD(v47, v41, v45);
  // pto: %p__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 16> v49 = pto::Shape<1, 1, 1, 16, 16>();
  // pto: %p__ssa_v0_view_pview
  pto::Stride<256, 256, 256, 16, 1> v50 = pto::Stride<256, 256, 256, 16, 1>();
  // pto: %p__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND> v51 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 16>, pto::Stride<256, 256, 256, 16, 1>, pto::Layout::ND>(v4, v49, v50);
  TSTORE(v51, v30);
  // pto: %m__ssa_v0_view_pview_1
  pto::Shape<1, 1, 1, 16, 1> v52 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %m__ssa_v0_view_pview_1
  pto::Stride<16, 16, 16, 1, 1> v53 = pto::Stride<16, 16, 16, 1, 1>();
  // pto: %m__ssa_v0_view_pview_1
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND> v54 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND>(v2, v52, v53);
  TSTORE(v54, v26);
  // pto: %l__ssa_v0_view_pview_1
  pto::Shape<1, 1, 1, 16, 1> v55 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %l__ssa_v0_view_pview_1
  pto::Stride<16, 16, 16, 1, 1> v56 = pto::Stride<16, 16, 16, 1, 1>();
  // pto: %l__ssa_v0_view_pview_1
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND> v57 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND>(v3, v55, v56);
  TSTORE(v57, v47);
  // pto: %alpha__ssa_v0_view_pview
  pto::Shape<1, 1, 1, 16, 1> v58 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %alpha__ssa_v0_view_pview
  pto::Stride<16, 16, 16, 1, 1> v59 = pto::Stride<16, 16, 16, 1, 1>();
  // pto: %alpha__ssa_v0_view_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND> v60 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 1>, pto::Layout::ND>(v5, v58, v59);
  TSTORE(v60, v34);
  #endif // __DAV_VEC__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
