// Kernel Function: online_update

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

static __aicore__ void online_update(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3, __gm__ float* v4, __gm__ float* v5, __gm__ float* v6, __gm__ float* v7, int64_t v8, int64_t v9) {
  #if defined(__DAV_VEC__)
  set_mask_norm();
  set_vector_mask(-1, -1);
  // pto: %c0_i64
  const int64_t v10 = 0;
  // pto: %c64_i64
  const int64_t v11 = 64;
  // pto: %c128_i64
  const int64_t v12 = 128;
  // pto: %c192_i64
  const int64_t v13 = 192;
  // pto: %c256_i64
  const int64_t v14 = 256;
  // pto: %c8448_i64
  const int64_t v15 = 8448;
  // pto: %c16640_i64
  const int64_t v16 = 16640;
  // pto: %c16704_i64
  const int64_t v17 = 16704;
  // pto: %c16768_i64
  const int64_t v18 = 16768;
  // pto: %c16832_i64
  const int64_t v19 = 16832;
  // pto: %c16896_i64
  const int64_t v20 = 16896;
  // pto: %c16960_i64
  const int64_t v21 = 16960;
  // pto: %c16_index
  const int64_t v22 = 16;
  // pto: %c128_index
  const int64_t v23 = 128;
  // pto: %c1_index
  const int64_t v24 = 1;
  // pto: %cst
  const float v26 = 0.0f;
  // pto: %mij_pview
  pto::Shape<1, 1, 1, 16, 1> v27 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %mij_pview
  pto::Stride<16, 16, 16, 1, 16> v28 = pto::Stride<16, 16, 16, 1, 16>();
  // pto: %mij_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v29 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v1, v27, v28);
  // pto: %mij_tile
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v30 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
  // pto: %mij_tile
  uint64_t v31 = (uint64_t) v10;
  TASSIGN(v30, v31);
  TLOAD(v30, v29);
  // pto: %lij_pview
  pto::Shape<1, 1, 1, 16, 1> v32 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %lij_pview
  pto::Stride<16, 16, 16, 1, 16> v33 = pto::Stride<16, 16, 16, 1, 16>();
  // pto: %lij_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v34 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v2, v32, v33);
  // pto: %lij_tile
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v35 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
  // pto: %lij_tile
  uint64_t v36 = (uint64_t) v11;
  TASSIGN(v35, v36);
  TLOAD(v35, v34);
  // pto: %oi_new_pview
  pto::Shape<1, 1, 1, 16, 128> v37 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %oi_new_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v38 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %oi_new_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v39 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v3, v37, v38);
  // pto: %oi_new_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v40 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
  // pto: %oi_new_tile
  uint64_t v41 = (uint64_t) v14;
  TASSIGN(v40, v41);
  TLOAD(v40, v39);
  // pto: %mi_pview
  pto::Shape<1, 1, 1, 16, 1> v42 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %mi_pview
  pto::Stride<16, 16, 16, 1, 16> v43 = pto::Stride<16, 16, 16, 1, 16>();
  // pto: %mi_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v44 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v4, v42, v43);
  // pto: %mi_tile
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v45 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
  // pto: %mi_tile
  uint64_t v46 = (uint64_t) v12;
  TASSIGN(v45, v46);
  TLOAD(v45, v44);
  // pto: %li_pview
  pto::Shape<1, 1, 1, 16, 1> v47 = pto::Shape<1, 1, 1, 16, 1>();
  // pto: %li_pview
  pto::Stride<16, 16, 16, 1, 16> v48 = pto::Stride<16, 16, 16, 1, 16>();
  // pto: %li_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN> v49 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 1>, pto::Stride<16, 16, 16, 1, 16>, pto::Layout::DN>(v5, v47, v48);
  // pto: %li_tile
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v50 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
  // pto: %li_tile
  uint64_t v51 = (uint64_t) v13;
  TASSIGN(v50, v51);
  TLOAD(v50, v49);
  // pto: %oi_pview
  pto::Shape<1, 1, 1, 16, 128> v52 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %oi_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v53 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %oi_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v54 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v6, v52, v53);
  // pto: %oi_tile
  Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v55 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
  // pto: %oi_tile
  uint64_t v56 = (uint64_t) v15;
  TASSIGN(v55, v56);
  TLOAD(v55, v54);
  // pto: %dst_pview
  pto::Shape<1, 1, 1, 16, 128> v57 = pto::Shape<1, 1, 1, 16, 128>();
  // pto: %dst_pview
  pto::Stride<2048, 2048, 2048, 128, 1> v58 = pto::Stride<2048, 2048, 2048, 128, 1>();
  // pto: %dst_pview
  GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND> v59 = GlobalTensor<float, pto::Shape<1, 1, 1, 16, 128>, pto::Stride<2048, 2048, 2048, 128, 1>, pto::Layout::ND>(v7, v57, v58);
  // pto: %is_first_cond
  bool v60 = v8 != v10;
  // pto: %is_last_cond
  bool v61 = v9 != v10;
  if (v60) {
    TSTORE(v44, v30);
    TSTORE(v49, v35);
    TSTORE(v54, v40);
    if (v61) {
      // pto: %dst_tile
      Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v62 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
      // pto: %dst_tile
      uint64_t v63 = (uint64_t) v21;
      TASSIGN(v62, v63);
      TROWEXPANDDIV(v62, v40, v35);
      TSTORE(v59, v62);
    } else {
      // pto: %zero_tile
      Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v64 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
      // pto: %zero_tile
      uint64_t v65 = (uint64_t) v21;
      TASSIGN(v64, v65);
      TEXPANDS(v64, v26);
      TSTORE(v59, v64);
    }
  } else {
    // pto: %mi_tile_nd
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v66 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %mi_tile_nd
    uint64_t v67 = (uint64_t) v12;
    TASSIGN(v66, v67);
    // pto: %mij_tile_nd
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v68 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %mij_tile_nd
    uint64_t v69 = (uint64_t) v10;
    TASSIGN(v68, v69);
    // pto: %li_tile_nd
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v70 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %li_tile_nd
    uint64_t v71 = (uint64_t) v13;
    TASSIGN(v70, v71);
    // pto: %lij_tile_nd
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v72 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %lij_tile_nd
    uint64_t v73 = (uint64_t) v11;
    TASSIGN(v72, v73);
    // pto: %mi_new
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v74 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %mi_new
    uint64_t v75 = (uint64_t) v16;
    TASSIGN(v74, v75);
    TMAX(v74, v66, v68);
    // pto: %mi_diff
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v76 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %mi_diff
    uint64_t v77 = (uint64_t) v17;
    TASSIGN(v76, v77);
    TSUB(v76, v66, v74);
    // pto: %alpha
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v78 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %alpha
    uint64_t v79 = (uint64_t) v17;
    TASSIGN(v78, v79);
    TEXP(v78, v76);
    // pto: %mij_diff
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v80 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %mij_diff
    uint64_t v81 = (uint64_t) v18;
    TASSIGN(v80, v81);
    TSUB(v80, v68, v74);
    // pto: %beta
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v82 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %beta
    uint64_t v83 = (uint64_t) v18;
    TASSIGN(v82, v83);
    TEXP(v82, v80);
    // pto: %li_scaled
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v84 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %li_scaled
    uint64_t v85 = (uint64_t) v19;
    TASSIGN(v84, v85);
    TMUL(v84, v78, v70);
    // pto: %lij_scaled
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v86 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %lij_scaled
    uint64_t v87 = (uint64_t) v20;
    TASSIGN(v86, v87);
    TMUL(v86, v82, v72);
    // pto: %li_updated
    Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v88 = Tile<TileType::Vec, float, 1, 16, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v24, v22);
    // pto: %li_updated
    uint64_t v89 = (uint64_t) v19;
    TASSIGN(v88, v89);
    TADD(v88, v84, v86);
    // pto: %alpha_dn
    Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v90 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
    // pto: %alpha_dn
    uint64_t v91 = (uint64_t) v17;
    TASSIGN(v90, v91);
    // pto: %oi_scaled
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v92 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
    // pto: %oi_scaled
    uint64_t v93 = (uint64_t) v21;
    TASSIGN(v92, v93);
    TROWEXPANDMUL(v92, v55, v90);
    // pto: %beta_dn
    Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v94 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
    // pto: %beta_dn
    uint64_t v95 = (uint64_t) v18;
    TASSIGN(v94, v95);
    // pto: %oi_new_scaled
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v96 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
    // pto: %oi_new_scaled
    uint64_t v97 = (uint64_t) v14;
    TASSIGN(v96, v97);
    TROWEXPANDMUL(v96, v40, v94);
    // pto: %oi_updated
    Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v98 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
    // pto: %oi_updated
    uint64_t v99 = (uint64_t) v15;
    TASSIGN(v98, v99);
    TADD(v98, v92, v96);
    // pto: %mi_new_dn
    Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v100 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
    // pto: %mi_new_dn
    uint64_t v101 = (uint64_t) v16;
    TASSIGN(v100, v101);
    // pto: %li_updated_dn
    Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v102 = Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v24);
    // pto: %li_updated_dn
    uint64_t v103 = (uint64_t) v19;
    TASSIGN(v102, v103);
    TSTORE(v44, v100);
    TSTORE(v49, v102);
    if (v61) {
      // pto: %dst_tile
      Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v104 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
      // pto: %dst_tile
      uint64_t v105 = (uint64_t) v21;
      TASSIGN(v104, v105);
      TROWEXPANDDIV(v104, v98, v102);
      TSTORE(v59, v104);
      TSTORE(v54, v98);
    } else {
      // pto: %zero_tile
      Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null> v106 = Tile<TileType::Vec, float, 16, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>(v22, v23);
      // pto: %zero_tile
      uint64_t v107 = (uint64_t) v21;
      TASSIGN(v106, v107);
      TEXPANDS(v106, v26);
      TSTORE(v59, v106);
      TSTORE(v54, v98);
    }
  }
  #endif // __DAV_VEC__

  ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);
  return;
}
// --- Kernel entry point ---
extern "C" __aicore__ __attribute__((always_inline)) void kernel_entry(__gm__ int64_t *args) {
    // Unpack tensor: mij
    __gm__ ChipTensor *mij_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[0]);
    __gm__ float *mij = reinterpret_cast<__gm__ float *>(mij_tensor->buffer.addr) + mij_tensor->start_offset;

    // Unpack tensor: lij
    __gm__ ChipTensor *lij_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[1]);
    __gm__ float *lij = reinterpret_cast<__gm__ float *>(lij_tensor->buffer.addr) + lij_tensor->start_offset;

    // Unpack tensor: oi_new
    __gm__ ChipTensor *oi_new_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[2]);
    __gm__ float *oi_new = reinterpret_cast<__gm__ float *>(oi_new_tensor->buffer.addr) + oi_new_tensor->start_offset;

    // Unpack tensor: mi
    __gm__ ChipTensor *mi_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[3]);
    __gm__ float *mi = reinterpret_cast<__gm__ float *>(mi_tensor->buffer.addr) + mi_tensor->start_offset;

    // Unpack tensor: li
    __gm__ ChipTensor *li_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[4]);
    __gm__ float *li = reinterpret_cast<__gm__ float *>(li_tensor->buffer.addr) + li_tensor->start_offset;

    // Unpack tensor: oi
    __gm__ ChipTensor *oi_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[5]);
    __gm__ float *oi = reinterpret_cast<__gm__ float *>(oi_tensor->buffer.addr) + oi_tensor->start_offset;

    // Unpack tensor: dst
    __gm__ ChipTensor *dst_tensor = reinterpret_cast<__gm__ ChipTensor *>(args[6]);
    __gm__ float *dst = reinterpret_cast<__gm__ float *>(dst_tensor->buffer.addr) + dst_tensor->start_offset;

    // Unpack scalar: is_first
    union {
        uint64_t u64;
        int64_t val;
    } is_first_conv;
    is_first_conv.u64 = args[7];
    int64_t is_first = is_first_conv.val;

    // Unpack scalar: is_last
    union {
        uint64_t u64;
        int64_t val;
    } is_last_conv;
    is_last_conv.u64 = args[8];
    int64_t is_last = is_last_conv.val;

    // Forward to ptoas-generated function
    online_update(mij, lij, oi_new, mi, li, oi, dst, is_first, is_last);
}
