// pto/sim/movement.hpp: tile-to-tile movement and rearrangement: TMOV, TEXTRACT, TINSERT,
// TRESHAPE, TSUBVIEW, TFILLPAD (+ _INPLACE, _EXPAND), TTRANS, TCONCAT.
//
// Moves are logical: element (r, c) of the source lands at (r, c) of the destination in the
// destination's own layout, so every layout conversion (ND <-> Nz, Mat -> Zz/Nz Left, Mat -> Zn
// Right, Acc -> Vec/Mat) is one copy. From an Acc tile the fixpipe converts f32 to f16 / bf16
// (round to nearest even) and may apply ReLU.
#pragma once

#include "pto/sim/memory.hpp"

namespace pto {
namespace sim {

/// Faults unless the window [r0, r0+rows) x [c0, c0+cols) fits the physical shape of `t`.
template <class TileT>
inline void check_window(const TileT& t, size_t r0, size_t c0, size_t rows, size_t cols, const char* op) {
    if (r0 + rows > static_cast<size_t>(TileT::Rows) || c0 + cols > static_cast<size_t>(TileT::Cols)) {
        fatal(std::string(op) + ": the window at (" + std::to_string(r0) + ", " + std::to_string(c0) + ") of " +
              std::to_string(rows) + "x" + std::to_string(cols) + " elements leaves " + tile_name(t));
    }
}

/// True when consecutive columns of a row are contiguous in storage (plain row-major tiles,
/// and fractal tiles whose blocks are row-major inside).
template <class T>
inline constexpr bool runs_along_rows = T::isBoxedLayout ? T::isInnerRowMajor : T::isRowMajor;

/// Elements contiguous in storage from column `c` onward along a row.
template <class T>
inline size_t row_run_left(const T&, size_t c) {
    return T::isBoxedLayout ? T::InnerCols - c % T::InnerCols : T::Cols - c;
}
/// Elements contiguous in storage from row `r` onward along a column.
template <class T>
inline size_t col_run_left(const T&, size_t r) {
    return T::isBoxedLayout ? T::InnerRows - r % T::InnerRows : T::Rows - r;
}

/// Copies `rows x cols` elements from `src` at (sr, sc) to `dst` at (dr, dc), converting
/// Acc values as the fixpipe does and applying ReLU if asked.
template <ReluPreMode Relu, class D, class S>
inline void copy_window(D& dst, S& src, size_t dr, size_t dc, size_t sr, size_t sc, size_t rows, size_t cols,
                        const char* op) {
    using TD = typename D::DType;
    using TS = typename S::DType;
    static_assert(acc_convertible<S::Loc, TS, TD>,
                  "tile move: the element types must match, except Acc f32 -> f16/bf16 (use TCVT to convert "
                  "other types; docs/PTO_ISA.md)");
    if (tracing()) trace_tiles(op, &dst, &src, static_cast<const S*>(nullptr), rows, cols);
    TD* d = tile_data(dst, op);
    const TS* s = tile_data(src, op);
    check_window(dst, dr, dc, rows, cols, op);
    check_window(src, sr, sc, rows, cols, op);
    auto conv = [](TS v) -> TD {
        if constexpr (Relu == ReluPreMode::NormalRelu) v = relu(v);
        if constexpr (std::is_same<TS, TD>::value) {
            return v;
        } else {
            return convert<TD>(v, RoundMode::CAST_RINT, SaturationMode::OFF);
        }
    };
    if (dr == 0 && dc == 0 && sr == 0 && sc == 0 && static_cast<const void*>(d) != static_cast<const void*>(s) &&
        same_plain_layout<D, S>) {
        for_each_offset(rows, cols, [&](size_t id, size_t is) { d[id] = conv(s[is]); }, dst, src);
        return;
    }
    if (static_cast<const void*>(d) == static_cast<const void*>(s) && !std::is_same<D, S>::value) {
        // In-place layout change: go through a copy of the source.
        std::vector<TS> tmp(static_cast<size_t>(S::Numel));
        std::memcpy(tmp.data(), s, S::Bytes);
        for_each_rc<D>(rows, cols, [&](size_t r, size_t c) {
            d[dst.ElementOffset(dr + r, dc + c)] = conv(tmp[src.ElementOffset(sr + r, sc + c)]);
        });
        return;
    }
    if constexpr (runs_along_rows<D> && runs_along_rows<S>) {
        // Both store consecutive columns contiguously (row-major, Nz, Zz): copy runs.
        for (size_t r = 0; r < rows; ++r) {
            for (size_t c = 0; c < cols;) {
                const size_t n = std::min({cols - c, row_run_left(dst, dc + c), row_run_left(src, sc + c)});
                TD* q = d + dst.ElementOffset(dr + r, dc + c);
                const TS* p = s + src.ElementOffset(sr + r, sc + c);
                for (size_t i = 0; i < n; ++i) q[i] = conv(p[i]);
                c += n;
            }
        }
    } else if constexpr (!runs_along_rows<D> && !runs_along_rows<S>) {
        // Both store consecutive rows contiguously (column-major, Zn).
        for (size_t c = 0; c < cols; ++c) {
            for (size_t r = 0; r < rows;) {
                const size_t n = std::min({rows - r, col_run_left(dst, dr + r), col_run_left(src, sr + r)});
                TD* q = d + dst.ElementOffset(dr + r, dc + c);
                const TS* p = s + src.ElementOffset(sr + r, sc + c);
                for (size_t i = 0; i < n; ++i) q[i] = conv(p[i]);
                r += n;
            }
        }
    } else {
        for_each_rc<D>(rows, cols, [&](size_t r, size_t c) {
            d[dst.ElementOffset(dr + r, dc + c)] = conv(s[src.ElementOffset(sr + r, sc + c)]);
        });
    }
}

/// TMOV's region: the smaller of the two valid shapes.
template <ReluPreMode Relu, class D, class S>
inline void move_tile(D& dst, S& src) {
    const size_t rows = std::min(vrows(dst), vrows(src));
    const size_t cols = std::min(vcols(dst), vcols(src));
    copy_window<Relu>(dst, src, 0, 0, 0, 0, rows, cols, "TMOV");
}

} // namespace sim

/// Copies a tile into another memory and/or layout (Mat -> Left/Right/Bias, Acc -> Vec/Mat,
/// Vec -> Vec, ...) over the smaller of the two valid shapes.
template <typename DstTileData, typename SrcTileData>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src) {
    static_assert(is_tile_data_v<DstTileData> && is_tile_data_v<SrcTileData>, "TMOV(dst_tile, src_tile)");
    sim::move_tile<ReluPreMode::NoRelu>(dst, src);
    return {};
}

/// TMOV with a ReLU pre-mode.
template <typename DstTileData, typename SrcTileData, ReluPreMode reluMode>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src) {
    sim::move_tile<reluMode>(dst, src);
    return {};
}

/// TMOV with an Acc -> Vec mode (only SingleModeVec0 is supported) and a ReLU pre-mode.
template <typename DstTileData, typename SrcTileData, AccToVecMode mode, ReluPreMode reluMode = ReluPreMode::NoRelu>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src) {
    static_assert(mode == AccToVecMode::SingleModeVec0,
                  "TMOV<AccToVecMode>: only SingleModeVec0 is supported (docs/PTO_ISA.md)");
    sim::move_tile<reluMode>(dst, src);
    return {};
}

/// TMOV with a scratch tile (unused on the CPU).
template <typename DstTileData, typename SrcTileData, typename TmpTileData,
          std::enable_if_t<is_tile_data_v<TmpTileData>, int> = 0>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, TmpTileData& tmp) {
    (void)tmp;
    sim::move_tile<ReluPreMode::NoRelu>(dst, src);
    return {};
}

/// TMOV with a fixpipe quantisation scalar: not supported.
template <typename DstTileData, typename SrcTileData, typename Scalar,
          std::enable_if_t<std::is_integral<Scalar>::value, int> = 0>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, Scalar preQuantScalar) {
    static_assert(sim::always_false<DstTileData>,
                  "TMOV(dst, src, preQuantScalar): fixpipe quantisation is not supported (docs/PTO_ISA.md)");
    (void)dst, (void)src, (void)preQuantScalar;
    return {};
}

/// TMOV_FP (fixpipe quantisation through a Scaling tile): not supported.
template <typename DstTileData, typename SrcTileData, typename FpTileData>
PTO_INST RecordEvent TMOV_FP(DstTileData& dst, SrcTileData& src, FpTileData& fp) {
    static_assert(sim::always_false<DstTileData>, "TMOV_FP: fixpipe quantisation is not supported (docs/PTO_ISA.md)");
    (void)dst, (void)src, (void)fp;
    return {};
}

/// Copies the window of `src` at (indexRow, indexCol) with `dst`'s valid shape into `dst`
/// (Mat -> Left/Right K-slices, Acc -> Mat/Vec, ...).
template <typename DstTileData, typename SrcTileData>
PTO_INST RecordEvent TEXTRACT(DstTileData& dst, SrcTileData& src, uint16_t indexRow = 0, uint16_t indexCol = 0) {
    static_assert(is_tile_data_v<DstTileData> && is_tile_data_v<SrcTileData>, "TEXTRACT(dst_tile, src_tile, row, col)");
    sim::copy_window<ReluPreMode::NoRelu>(dst, src, 0, 0, indexRow, indexCol, sim::vrows(dst), sim::vcols(dst),
                                          "TEXTRACT");
    return {};
}

/// TEXTRACT with a ReLU pre-mode.
template <typename DstTileData, typename SrcTileData, ReluPreMode reluMode>
PTO_INST RecordEvent TEXTRACT(DstTileData& dst, SrcTileData& src, uint16_t indexRow, uint16_t indexCol) {
    sim::copy_window<reluMode>(dst, src, 0, 0, indexRow, indexCol, sim::vrows(dst), sim::vcols(dst), "TEXTRACT");
    return {};
}

/// TEXTRACT with an Acc -> Vec mode (only SingleModeVec0) and a ReLU pre-mode.
template <typename DstTileData, typename SrcTileData, AccToVecMode mode, ReluPreMode reluMode = ReluPreMode::NoRelu>
PTO_INST RecordEvent TEXTRACT(DstTileData& dst, SrcTileData& src, uint16_t indexRow, uint16_t indexCol) {
    static_assert(mode == AccToVecMode::SingleModeVec0,
                  "TEXTRACT<AccToVecMode>: only SingleModeVec0 is supported (docs/PTO_ISA.md)");
    sim::copy_window<reluMode>(dst, src, 0, 0, indexRow, indexCol, sim::vrows(dst), sim::vcols(dst), "TEXTRACT");
    return {};
}

/// TEXTRACT_FP (fixpipe quantisation): not supported.
template <typename DstTileData, typename SrcTileData, typename FpTileData>
PTO_INST RecordEvent TEXTRACT_FP(DstTileData& dst, SrcTileData& src, FpTileData& fp, uint16_t indexRow,
                                 uint16_t indexCol) {
    static_assert(sim::always_false<DstTileData>, "TEXTRACT_FP: fixpipe quantisation is not supported (docs/PTO_ISA.md)");
    (void)dst, (void)src, (void)fp, (void)indexRow, (void)indexCol;
    return {};
}

/// Writes `src`'s valid region into `dst` at (indexRow, indexCol) (Acc -> Mat, ...).
template <typename DstTileData, typename SrcTileData>
PTO_INST RecordEvent TINSERT(DstTileData& dst, SrcTileData& src, uint16_t indexRow, uint16_t indexCol) {
    static_assert(is_tile_data_v<DstTileData> && is_tile_data_v<SrcTileData>, "TINSERT(dst_tile, src_tile, row, col)");
    sim::copy_window<ReluPreMode::NoRelu>(dst, src, indexRow, indexCol, 0, 0, sim::vrows(src), sim::vcols(src),
                                          "TINSERT");
    return {};
}

/// TINSERT with a ReLU pre-mode.
template <typename DstTileData, typename SrcTileData, ReluPreMode reluMode>
PTO_INST RecordEvent TINSERT(DstTileData& dst, SrcTileData& src, uint16_t indexRow, uint16_t indexCol) {
    sim::copy_window<reluMode>(dst, src, indexRow, indexCol, 0, 0, sim::vrows(src), sim::vcols(src), "TINSERT");
    return {};
}

/// TINSERT_FP (fixpipe quantisation): not supported.
template <typename DstTileData, typename SrcTileData, typename FpTileData>
PTO_INST RecordEvent TINSERT_FP(DstTileData& dst, SrcTileData& src, FpTileData& fp, uint16_t indexRow,
                                uint16_t indexCol) {
    static_assert(sim::always_false<DstTileData>, "TINSERT_FP: fixpipe quantisation is not supported (docs/PTO_ISA.md)");
    (void)dst, (void)src, (void)fp, (void)indexRow, (void)indexCol;
    return {};
}

/// Rebinds `dst` to `src`'s bytes (a reinterpretation: same memory, same byte size).
template <typename TileDataOut, typename TileDataIn>
PTO_INST RecordEvent TRESHAPE(TileDataOut& dst, TileDataIn& src) {
    static_assert(is_tile_data_v<TileDataOut> && is_tile_data_v<TileDataIn>, "TRESHAPE(dst_tile, src_tile)");
    static_assert(TileDataOut::Loc == TileDataIn::Loc, "TRESHAPE: both tiles must be in the same memory (TileType)");
    static_assert(TileDataOut::Bytes == TileDataIn::Bytes, "TRESHAPE: both tiles must span the same number of bytes");
    static_assert(TileDataOut::isBoxedLayout == TileDataIn::isBoxedLayout,
                  "TRESHAPE: cannot reshape between plain (NoneBox) and boxed (fractal) layouts");
    dst.data_ = reinterpret_cast<typename TileDataOut::DType*>(sim::tile_data(src, "TRESHAPE"));
    return {};
}

/// Binds `dst` to the window of `src` starting at (rowIdx, colIdx) (plain tiles with the same
/// row pitch, or column pitch for column-major tiles).
template <typename TileDataDst, typename TileDataSrc>
PTO_INST RecordEvent TSUBVIEW(TileDataDst& dst, TileDataSrc& src, uint16_t rowIdx, uint16_t colIdx) {
    static_assert(sim::same_plain_layout<TileDataDst, TileDataSrc> && TileDataDst::Loc == TileDataSrc::Loc &&
                      std::is_same<typename TileDataDst::DType, typename TileDataSrc::DType>::value,
                  "TSUBVIEW: only plain tiles of one memory, element type and pitch are supported (docs/PTO_ISA.md)");
    sim::check_window(src, rowIdx, colIdx, TileDataDst::isRowMajor ? TileDataDst::Rows : 1,
                      TileDataDst::isRowMajor ? 1 : TileDataDst::Cols, "TSUBVIEW");
    typename TileDataSrc::DType* s = sim::tile_data(src, "TSUBVIEW");
    const size_t off = src.ElementOffset(rowIdx, colIdx);
    if ((off + TileDataDst::Numel) > static_cast<size_t>(TileDataSrc::Numel)) {
        sim::fatal("TSUBVIEW: the view at (" + std::to_string(rowIdx) + ", " + std::to_string(colIdx) + ") of " +
                   sim::tile_name(dst) + " leaves " + sim::tile_name(src));
    }
    dst.data_ = s + off;
    return {};
}

namespace sim {

/// Copies `src`'s valid region into `dst` (unless both are the same memory) and writes `pad`
/// into every other element of `dst`'s physical shape.
template <class D, class S>
inline void fill_pad(D& dst, S& src, typename D::DType pad, bool copy, const char* op) {
    using TD = typename D::DType;
    using TS = typename S::DType;
    static_assert(sizeof(TD) == sizeof(TS), "TFILLPAD: source and destination need the same element size");
    if (tracing()) trace_tiles(op, &dst, &src, static_cast<const S*>(nullptr), vrows(dst), vcols(dst));
    TD* d = tile_data(dst, op);
    const TS* s = tile_data(src, op);
    const size_t vr = vrows(src), vc = vcols(src);
    check_window(dst, 0, 0, vr, vc, op);
    if (copy && static_cast<const void*>(d) != static_cast<const void*>(s)) {
        for_each_rc<D>(vr, vc, [&](size_t r, size_t c) {
            std::memcpy(d + dst.ElementOffset(r, c), s + src.ElementOffset(r, c), sizeof(TD));
        });
    }
    for_each_rc<D>(D::Rows, D::Cols, [&](size_t r, size_t c) {
        if (r >= vr || c >= vc) d[dst.ElementOffset(r, c)] = pad;
    });
}

} // namespace sim

/// Copies `src`'s valid region into `dst` and fills the rest of `dst` with `dst`'s PadValue
/// (Zero: 0, Min: -inf / type min, Max: +inf / type max). Vec tiles of the same shape.
template <typename DstTileData, typename SrcTileData,
          std::enable_if_t<(DstTileData::Loc == TileType::Vec) && (SrcTileData::Loc == TileType::Vec), int> = 0>
PTO_INST RecordEvent TFILLPAD(DstTileData& dst, SrcTileData& src) {
    static_assert(DstTileData::PadVal != PadValue::Null,
                  "TFILLPAD: the destination tile's PadValue is Null; give it PadValue::Zero, Min or Max");
    static_assert(DstTileData::Rows == SrcTileData::Rows && DstTileData::Cols == SrcTileData::Cols,
                  "TFILLPAD: source and destination need the same Rows and Cols (see TFILLPAD_EXPAND)");
    sim::fill_pad(dst, src, sim::pad_value<typename DstTileData::DType>(DstTileData::PadVal), true, "TFILLPAD");
    return {};
}

/// The Mat form: `TFILLPAD<TileT, PadVal>(dst, src)`, padding with the template's PadValue.
template <typename TileData, PadValue PadVal = PadValue::Zero,
          std::enable_if_t<(TileData::Loc == TileType::Mat), int> = 0>
PTO_INST RecordEvent TFILLPAD(TileData& dst, TileData& src) {
    static_assert(PadVal != PadValue::Null, "TFILLPAD: the PadValue is Null");
    sim::fill_pad(dst, src, sim::pad_value<typename TileData::DType>(PadVal), true, "TFILLPAD");
    return {};
}

/// Fills, in place, every element of `dst` outside `src`'s valid region with `dst`'s PadValue
/// (`dst` and `src` normally view the same memory).
template <typename DstTileData, typename SrcTileData>
PTO_INST RecordEvent TFILLPAD_INPLACE(DstTileData& dst, SrcTileData& src) {
    static_assert(is_tile_data_v<DstTileData> && is_tile_data_v<SrcTileData>, "TFILLPAD_INPLACE(dst_tile, src_tile)");
    static_assert(DstTileData::PadVal != PadValue::Null,
                  "TFILLPAD_INPLACE: the destination tile's PadValue is Null; give it PadValue::Zero, Min or Max");
    static_assert(DstTileData::Rows == SrcTileData::Rows && DstTileData::Cols == SrcTileData::Cols,
                  "TFILLPAD_INPLACE: source and destination need the same Rows and Cols");
    sim::fill_pad(dst, src, sim::pad_value<typename DstTileData::DType>(DstTileData::PadVal), true,
                  "TFILLPAD_INPLACE");
    return {};
}

/// Like TFILLPAD into a larger destination.
template <typename DstTileData, typename SrcTileData>
PTO_INST RecordEvent TFILLPAD_EXPAND(DstTileData& dst, SrcTileData& src) {
    static_assert(is_tile_data_v<DstTileData> && is_tile_data_v<SrcTileData>, "TFILLPAD_EXPAND(dst_tile, src_tile)");
    static_assert(DstTileData::PadVal != PadValue::Null,
                  "TFILLPAD_EXPAND: the destination tile's PadValue is Null; give it PadValue::Zero, Min or Max");
    static_assert(DstTileData::Rows >= SrcTileData::Rows && DstTileData::Cols >= SrcTileData::Cols,
                  "TFILLPAD_EXPAND: the destination must be at least as large as the source");
    sim::fill_pad(dst, src, sim::pad_value<typename DstTileData::DType>(DstTileData::PadVal), true,
                  "TFILLPAD_EXPAND");
    return {};
}

/// Transposes `src`'s valid region into `dst`: dst(c, r) = src(r, c). `tmp` is unused.
template <typename TileDataDst, typename TileDataSrc, typename TileDataTmp>
PTO_INST RecordEvent TTRANS(TileDataDst& dst, TileDataSrc& src, TileDataTmp& tmp) {
    static_assert(std::is_same<typename TileDataDst::DType, typename TileDataSrc::DType>::value,
                  "TTRANS: source and destination need the same element type");
    (void)tmp;
    if (sim::tracing()) {
        sim::trace_tiles("TTRANS", &dst, &src, static_cast<const TileDataSrc*>(nullptr), sim::vrows(src),
                         sim::vcols(src));
    }
    auto* d = sim::tile_data(dst, "TTRANS");
    const auto* s = sim::tile_data(src, "TTRANS");
    const size_t vr = sim::vrows(src), vc = sim::vcols(src);
    sim::check_window(dst, 0, 0, vc, vr, "TTRANS");
    if (static_cast<const void*>(d) == static_cast<const void*>(s)) {
        sim::fatal("TTRANS: source and destination are the same memory");
    }
    sim::for_each_rc<TileDataSrc>(vr, vc, [&](size_t r, size_t c) { d[dst.ElementOffset(c, r)] = s[src.ElementOffset(r, c)]; });
    return {};
}

/// Concatenates along columns: dst = [src0 | src1] over their valid regions (rows: dst's).
template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1>
PTO_INST RecordEvent TCONCAT(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1) {
    static_assert(std::is_same<typename TileDataDst::DType, typename TileDataSrc0::DType>::value &&
                      std::is_same<typename TileDataDst::DType, typename TileDataSrc1::DType>::value,
                  "TCONCAT: all tiles need the same element type");
    const size_t rows = sim::vrows(dst);
    const size_t c0 = sim::vcols(src0), c1 = sim::vcols(src1);
    if (dst.data_ == src0.data_ || dst.data_ == src1.data_) {
        sim::fatal("TCONCAT: the destination overlaps a source");
    }
    sim::copy_window<ReluPreMode::NoRelu>(dst, src0, 0, 0, 0, 0, rows, c0, "TCONCAT");
    sim::copy_window<ReluPreMode::NoRelu>(dst, src1, 0, c0, 0, 0, rows, c1, "TCONCAT");
    return {};
}

/// TCONCAT with index tiles: not supported.
template <typename DstTile, typename Src0Tile, typename Src1Tile, typename Src0IdxTile, typename Src1IdxTile>
PTO_INST RecordEvent TCONCAT(DstTile& dst, Src0Tile& src0, Src1Tile& src1, Src0IdxTile& i0, Src1IdxTile& i1) {
    static_assert(sim::always_false<DstTile>, "TCONCAT with index tiles is not supported (docs/PTO_ISA.md)");
    (void)dst, (void)src0, (void)src1, (void)i0, (void)i1;
    return {};
}

} // namespace pto
