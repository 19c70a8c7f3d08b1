// pto/sim/tile.hpp: `Tile`, its physical layouts and its static checks.
//
// A tile is a typed view of a region of one on-chip memory (UB, L1, L0A, L0B, L0C, ...),
// bound by `TASSIGN`. Element (r, c) lives at a fixed element offset given by the tile's
// layout, so tiles of different shapes bound to one address alias exactly as on the device:
//
//   NoneBox, RowMajor      r * Cols + c
//   NoneBox, ColMajor      c * Rows + r
//   Nz (ColMajor+RowMajor) column of fractal blocks after column; inside a block row-major
//   Zn (RowMajor+ColMajor) row of blocks after row; inside a block column-major
//   Zz (RowMajor+RowMajor) row of blocks after row; inside a block row-major
//
// A block is InnerRows x InnerCols: 16 rows x 32 bytes (inner RowMajor) or 32 bytes x 16
// columns (inner ColMajor); SFractalSize 1024 (Acc) is 16 x 16. With CompactMode::Normal the
// pitch between block columns (Nz) / block rows (Zn, Zz) follows the valid extent rounded up
// to a block instead of the physical one.
#pragma once

#include "pto/sim/context.hpp"
#include "pto/sim/numeric.hpp"
#include "pto/sim/trace.hpp"

namespace pto {

/// An on-chip tile: `Rows x Cols` physical elements of `Element_` in memory `Loc_`, of which
/// `RowValid_ x ColValid_` are valid (`DYNAMIC` = set at run time). See the file comment for
/// the layouts. Kernels use the 10- and 11-parameter forms as ptoas writes them.
template <TileType Loc_, typename Element_, int Rows_, int Cols_, BLayout BFractal_ = BLayout::RowMajor,
          int RowValid_ = Rows_, int ColValid_ = Cols_, SLayout SFractal_ = SLayout::NoneBox,
          int SFractalSize_ = TileConfig::fractalABSize, PadValue PadVal_ = PadValue::Null,
          CompactMode Compact_ = CompactMode::Null>
struct Tile {
    using DType = Element_;      ///< element type
    using TileDType = DType*;    ///< what `data()` holds

    static constexpr TileType Loc = Loc_;              ///< memory
    static constexpr int Rows = Rows_;                 ///< physical rows
    static constexpr int Cols = Cols_;                 ///< physical columns
    static constexpr int ValidRow = RowValid_;         ///< static valid rows, or DYNAMIC
    static constexpr int ValidCol = ColValid_;         ///< static valid columns, or DYNAMIC
    static constexpr BLayout BFractal = BFractal_;     ///< block layout
    static constexpr SLayout SFractal = SFractal_;     ///< inner layout
    static constexpr int SFractalSize = SFractalSize_; ///< fractal bytes (512 or 1024)
    static constexpr PadValue PadVal = PadVal_;        ///< pad mode
    static constexpr CompactMode Compact = Compact_;   ///< compact mode
    static constexpr int Numel = Rows * Cols;          ///< physical elements
    static constexpr bool isRowMajor = BFractal == BLayout::RowMajor;     ///< block layout RowMajor
    static constexpr bool isBoxedLayout = SFractal != SLayout::NoneBox;   ///< fractal layout
    static constexpr bool isInnerRowMajor = SFractal == SLayout::RowMajor; ///< inner RowMajor
    static constexpr bool isInnerColMajor = SFractal == SLayout::ColMajor; ///< inner ColMajor
    static constexpr int RowStride = isRowMajor ? Cols : 1; ///< plain layouts: row step
    static constexpr int ColStride = isRowMajor ? 1 : Rows; ///< plain layouts: column step

    /// Rows of one fractal block (1 for plain layouts).
    static constexpr int InnerRows =
        SFractalSize == TileConfig::fractalCSize
            ? TileConfig::fixedRowSize
            : (isBoxedLayout ? (isInnerRowMajor ? TileConfig::fixedRowSize
                                                : TileConfig::alignedSize / static_cast<int>(sizeof(DType)))
                             : 1);
    /// Columns of one fractal block (1 for plain layouts).
    static constexpr int InnerCols =
        SFractalSize == TileConfig::fractalCSize
            ? TileConfig::fixedColSize
            : (isBoxedLayout ? (isInnerRowMajor ? TileConfig::alignedSize / static_cast<int>(sizeof(DType))
                                                : TileConfig::fixedColSize)
                             : 1);
    static constexpr int InnerNumel = InnerRows * InnerCols; ///< elements of one block
    /// Bytes the tile spans from its address.
    static constexpr size_t Bytes = static_cast<size_t>(Numel) * sizeof(DType);

    static_assert(Rows > 0 && Cols > 0, "Tile: Rows and Cols must be positive");
    static_assert(ValidRow == DYNAMIC || (ValidRow >= 0 && ValidRow <= Rows),
                  "Tile: ValidRow must be DYNAMIC (-1) or in [0, Rows]");
    static_assert(ValidCol == DYNAMIC || (ValidCol >= 0 && ValidCol <= Cols),
                  "Tile: ValidCol must be DYNAMIC (-1) or in [0, Cols]");
    static_assert(SFractalSize == TileConfig::fractalABSize || SFractalSize == TileConfig::fractalCSize,
                  "Tile: SFractalSize must be 512 or 1024 (MX-scale fractals are not supported, see "
                  "docs/PTO_ISA.md)");
    static_assert(!(isRowMajor && !isBoxedLayout) || (Cols * sizeof(DType)) % TileConfig::alignedSize == 0,
                  "Tile: a RowMajor NoneBox tile needs Cols * sizeof(T) to be a multiple of 32 bytes "
                  "(a [N,1] column vector is a ColMajor tile)");
    static_assert(isRowMajor || isBoxedLayout || (Rows * sizeof(DType)) % TileConfig::alignedSize == 0,
                  "Tile: a ColMajor NoneBox tile needs Rows * sizeof(T) to be a multiple of 32 bytes "
                  "(a [1,N] row vector is a RowMajor tile)");
    static_assert(!isBoxedLayout || Cols % InnerCols == 0,
                  "Tile: a boxed (fractal) tile needs Cols to be a multiple of the fractal's columns");
    static_assert(!isBoxedLayout || Loc == TileType::Vec || Rows == 1 || Rows % InnerRows == 0,
                  "Tile: a boxed (fractal) tile needs Rows to be a multiple of the fractal's rows");
    static_assert(!(isBoxedLayout && !isRowMajor && isInnerColMajor),
                  "Tile: the Nn layout (BLayout::ColMajor with SLayout::ColMajor) does not exist; use Nz, "
                  "Zn or Zz (docs/PTO_ISA.md)");
    static_assert(Compact == CompactMode::Null || Compact == CompactMode::Normal,
                  "Tile: CompactMode::RowPlusOne and CompactMode::RowAlignedPadding are not supported "
                  "(docs/PTO_ISA.md)");

    /// A tile with its static valid shape (dynamic dimensions start at the physical extent).
    Tile() {}

    /// Both valid dimensions dynamic: `(valid_rows, valid_cols)`.
    template <int RM = ValidRow, int CM = ValidCol>
    Tile(std::enable_if_t<RM == DYNAMIC && CM == DYNAMIC, int64_t> vr, int64_t vc) {
        SetValidShape(vr, vc);
    }

    /// Only the valid row count dynamic: `(valid_rows)`.
    template <int RM = ValidRow, int CM = ValidCol>
    explicit Tile(std::enable_if_t<RM == DYNAMIC && CM != DYNAMIC, int64_t> vr) {
        SetValidRow(vr);
    }

    /// Only the valid column count dynamic: `(valid_cols)`.
    template <int RM = ValidRow, int CM = ValidCol>
    explicit Tile(std::enable_if_t<RM != DYNAMIC && CM == DYNAMIC, uint64_t> vc) {
        SetValidCol(static_cast<int64_t>(vc));
    }

    /// Static valid rows.
    template <int RM = ValidRow>
    static constexpr std::enable_if_t<(RM >= 0), unsigned> GetValidRow() {
        return static_cast<unsigned>(RM);
    }
    /// Dynamic valid rows.
    template <int RM = ValidRow>
    std::enable_if_t<RM == DYNAMIC, unsigned> GetValidRow() const {
        return RowMaskInternal;
    }
    /// Static valid columns.
    template <int CM = ValidCol>
    static constexpr std::enable_if_t<(CM >= 0), unsigned> GetValidCol() {
        return static_cast<unsigned>(CM);
    }
    /// Dynamic valid columns.
    template <int CM = ValidCol>
    std::enable_if_t<CM == DYNAMIC, unsigned> GetValidCol() const {
        return ColMaskInternal;
    }

    /// Sets the dynamic valid row count (at most Rows).
    void SetValidRow(int64_t r) {
        static_assert(ValidRow == DYNAMIC, "Tile::SetValidRow: only a DYNAMIC valid row count can be set");
        RowMaskInternal = checked_extent(r, Rows, "valid rows");
    }
    /// Sets the dynamic valid column count (at most Cols).
    void SetValidCol(int64_t c) {
        static_assert(ValidCol == DYNAMIC, "Tile::SetValidCol: only a DYNAMIC valid column count can be set");
        ColMaskInternal = checked_extent(c, Cols, "valid columns");
    }
    /// Sets both dynamic valid counts.
    void SetValidShape(int64_t r, int64_t c) {
        static_assert(ValidRow == DYNAMIC && ValidCol == DYNAMIC,
                      "Tile::SetValidShape: only a tile with DYNAMIC valid rows and columns can be reshaped");
        RowMaskInternal = checked_extent(r, Rows, "valid rows");
        ColMaskInternal = checked_extent(c, Cols, "valid columns");
    }

    /// The bound memory (null before TASSIGN).
    DType*& data() { return data_; }
    /// The bound memory (null before TASSIGN).
    DType* const& data() const { return data_; }

    /// Writes element `offset` of the physical storage (Vec tiles).
    void SetValue(uint32_t offset, DType v) {
        static_assert(Loc == TileType::Vec, "Tile::SetValue: only Vec tiles support scalar access");
        element_at(offset, "Tile::SetValue") = v;
    }
    /// Reads element `offset` of the physical storage (Vec tiles).
    DType GetValue(uint32_t offset) {
        static_assert(Loc == TileType::Vec, "Tile::GetValue: only Vec tiles support scalar access");
        return element_at(offset, "Tile::GetValue");
    }

    /// Element offset of logical (r, c) in the physical storage.
    size_t ElementOffset(size_t r, size_t c) const {
        if constexpr (!isBoxedLayout) {
            return isRowMajor ? r * Cols + c : c * Rows + r;
        } else {
            const size_t br = r / InnerRows, ir = r % InnerRows;
            const size_t bc = c / InnerCols, ic = c % InnerCols;
            const size_t inner = isInnerRowMajor ? ir * InnerCols + ic : ic * InnerRows + ir;
            if constexpr (!isRowMajor) {
                return bc * RowPitch() * InnerCols + br * InnerNumel + inner;
            } else {
                return br * ColPitch() * InnerRows + bc * InnerNumel + inner;
            }
        }
    }

    /// Rows between two block columns of an Nz tile (physical, or valid rounded up to a block
    /// with CompactMode::Normal).
    size_t RowPitch() const {
        if constexpr (Compact == CompactMode::Normal) {
            return (static_cast<size_t>(GetValidRow()) + InnerRows - 1) / InnerRows * InnerRows;
        } else {
            return Rows;
        }
    }
    /// Columns between two block rows of a Zn / Zz tile (see RowPitch).
    size_t ColPitch() const {
        if constexpr (Compact == CompactMode::Normal) {
            return (static_cast<size_t>(GetValidCol()) + InnerCols - 1) / InnerCols * InnerCols;
        } else {
            return Cols;
        }
    }

    DType* data_ = nullptr;                                                 ///< bound memory
    unsigned RowMaskInternal = ValidRow == DYNAMIC ? Rows : ValidRow;       ///< dynamic valid rows
    unsigned ColMaskInternal = ValidCol == DYNAMIC ? Cols : ValidCol;       ///< dynamic valid columns

private:
    static unsigned checked_extent(int64_t v, int limit, const char* what) {
        if (v < 0 || v > limit) {
            sim::fatal(std::string("Tile: ") + what + " " + std::to_string(v) + " outside [0, " +
                       std::to_string(limit) + "]");
        }
        return static_cast<unsigned>(v);
    }
    DType& element_at(uint32_t offset, const char* what) {
        if (data_ == nullptr) {
            sim::fatal(std::string(what) + ": the tile was never bound to memory (TASSIGN)");
        }
        if (offset >= static_cast<uint32_t>(Numel)) {
            sim::fatal(std::string(what) + ": element offset " + std::to_string(offset) + " outside the tile's " +
                       std::to_string(Numel) + " elements");
        }
        return data_[offset];
    }
};

/// True for `Tile` types.
template <class T>
struct is_tile : std::false_type {};
/// True for `Tile` types.
template <TileType L, class E, int R, int C, BLayout B, int VR, int VC, SLayout S, int F, PadValue P, CompactMode M>
struct is_tile<Tile<L, E, R, C, B, VR, VC, S, F, P, M>> : std::true_type {};
/// True for `Tile` types.
template <class T>
inline constexpr bool is_tile_data_v = is_tile<std::remove_cv_t<T>>::value;

/// Left operand tile in its a2a3 form (Zz).
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileLeft = Tile<TileType::Left, Element_, Rows_, Cols_, BLayout::RowMajor, RowValid_, ColValid_,
                      SLayout::RowMajor, TileConfig::fractalABSize>;
/// Right operand tile (Zn).
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileRight = Tile<TileType::Right, Element_, Rows_, Cols_, BLayout::RowMajor, RowValid_, ColValid_,
                       SLayout::ColMajor, TileConfig::fractalABSize>;
/// Accumulator tile (Nz, 16x16 blocks).
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileAcc = Tile<TileType::Acc, Element_, Rows_, Cols_, BLayout::ColMajor, RowValid_, ColValid_,
                     SLayout::RowMajor, TileConfig::fractalCSize>;
/// Accumulator tile with CompactMode::Normal.
template <typename Element_, int Rows_, int Cols_, int RowValid_ = Rows_, int ColValid_ = Cols_>
using TileAccCompact = Tile<TileType::Acc, Element_, Rows_, Cols_, BLayout::ColMajor, RowValid_, ColValid_,
                            SLayout::RowMajor, TileConfig::fractalCSize, PadValue::Null, CompactMode::Normal>;

namespace sim {

/// Name of a tile type.
constexpr const char* tile_type_name(TileType t) {
    switch (t) {
    case TileType::Vec: return "Vec";
    case TileType::Mat: return "Mat";
    case TileType::Left: return "Left";
    case TileType::Right: return "Right";
    case TileType::Acc: return "Acc";
    case TileType::Bias: return "Bias";
    case TileType::Scaling: return "Scaling";
    case TileType::ScaleLeft: return "ScaleLeft";
    case TileType::ScaleRight: return "ScaleRight";
    default: return "Ctrl";
    }
}

/// Name of a tile layout ("ND", "DN", "Nz", "Zn", "Zz").
template <class TileT>
inline const char* layout_name() {
    if (!TileT::isBoxedLayout) return TileT::isRowMajor ? "RowMajor" : "ColMajor";
    if (!TileT::isRowMajor) return "Nz";
    return TileT::isInnerColMajor ? "Zn" : "Zz";
}

/// Readable form of a tile type, e.g. `Tile<Vec, float, 16x1, ColMajor, valid 16x1>`.
template <class TileT>
inline std::string tile_name(const TileT& t) {
    std::string s = "Tile<";
    s += tile_type_name(TileT::Loc);
    s += ", ";
    s += type_name<typename TileT::DType>();
    s += ", " + std::to_string(TileT::Rows) + "x" + std::to_string(TileT::Cols) + ", " + layout_name<TileT>();
    s += ", valid " + std::to_string(t.GetValidRow()) + "x" + std::to_string(t.GetValidCol());
    if (TileT::ValidRow == DYNAMIC || TileT::ValidCol == DYNAMIC) s += " (dynamic)";
    if (TileT::SFractalSize != TileConfig::fractalABSize) s += ", fractal " + std::to_string(TileT::SFractalSize);
    if (TileT::PadVal != PadValue::Null) s += ", pad " + std::to_string(static_cast<int>(TileT::PadVal));
    if (TileT::Compact != CompactMode::Null) s += ", compact";
    s += ">";
    return s;
}

/// The tile's memory; a fault if it was never bound.
template <class TileT>
inline typename TileT::DType* tile_data(const TileT& t, const char* op) {
    if (tracing()) trace_seen(op);
    if (t.data_ == nullptr) {
        fatal(std::string(op) + ": " + tile_name(t) + " was never bound to memory (TASSIGN)");
    }
    return t.data_;
}

/// Valid rows of a tile as size_t.
template <class TileT>
inline size_t vrows(const TileT& t) {
    return static_cast<size_t>(t.GetValidRow());
}
/// Valid columns of a tile as size_t.
template <class TileT>
inline size_t vcols(const TileT& t) {
    return static_cast<size_t>(t.GetValidCol());
}

/// True when element (r, c) of every tile type in `Ts` is at the same plain (NoneBox) offset:
/// all row-major with equal Cols, or all column-major with equal Rows.
template <class D, class... Ts>
inline constexpr bool same_plain_layout =
    !D::isBoxedLayout && ((!Ts::isBoxedLayout && Ts::isRowMajor == D::isRowMajor &&
                           (D::isRowMajor ? Ts::Cols == D::Cols : Ts::Rows == D::Rows)) &&
                          ...);

/// Calls `f(r, c)` for every (r, c) of a `rows x cols` region in the storage order of `D`
/// (row by row for row-major and Zz/Zn tiles, column by column otherwise).
template <class D, class F>
inline void for_each_rc(size_t rows, size_t cols, F&& f) {
    if constexpr (D::isRowMajor) {
        for (size_t r = 0; r < rows; ++r) {
            for (size_t c = 0; c < cols; ++c) f(r, c);
        }
    } else {
        for (size_t c = 0; c < cols; ++c) {
            for (size_t r = 0; r < rows; ++r) f(r, c);
        }
    }
}

/// Applies `body(i_dst, i_src...)` (element offsets) over the `rows x cols` region of `dst`
/// and the same logical positions of `srcs`. Plain tiles that share a layout are walked as
/// contiguous rows (or one contiguous run when the region spans whole rows); anything else
/// goes through the layout's offset function.
template <class Body, class D, class... S>
inline void for_each_offset(size_t rows, size_t cols, Body&& body, const D& dst, const S&... srcs) {
    if constexpr (same_plain_layout<D, S...>) {
        constexpr size_t pitch = D::isRowMajor ? D::Cols : D::Rows;
        const size_t outer = D::isRowMajor ? rows : cols;
        const size_t inner = D::isRowMajor ? cols : rows;
        if (inner == pitch) {
            const size_t n = outer * pitch;
#pragma GCC ivdep
            for (size_t i = 0; i < n; ++i) body(i, ((void)sizeof(S), i)...);
        } else {
            for (size_t o = 0; o < outer; ++o) {
                const size_t base = o * pitch;
#pragma GCC ivdep
                for (size_t i = base; i < base + inner; ++i) body(i, ((void)sizeof(S), i)...);
            }
        }
    } else {
        for_each_rc<D>(rows, cols, [&](size_t r, size_t c) {
            body(dst.ElementOffset(r, c), srcs.ElementOffset(r, c)...);
        });
    }
}

} // namespace sim
} // namespace pto
