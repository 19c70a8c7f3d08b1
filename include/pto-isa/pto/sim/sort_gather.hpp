// pto/sim/sort_gather.hpp: TGATHER (index and mask-pattern forms), TCI, TSORT32, TMRGSORT.
//
// Sorted data is a list of (value, index) pairs of 8 bytes each, stored from the start of a
// row-major row: the value in the first 4 bytes (a half value in the first 2, then 2 zero
// bytes), the uint32 index in the last 4. So a row of N pairs spans 2N float or 4N half
// elements. Sorting is descending by value; equal values keep the smaller index (TSORT32) or
// the earlier list (TMRGSORT) first.
#pragma once

#include "pto/sim/pipe.hpp"

namespace pto {
namespace sim {

/// True when `pat` selects position `i`.
inline bool mask_selects(MaskPattern pat, size_t i) {
    switch (pat) {
    case MaskPattern::P0101: return i % 2 == 0;
    case MaskPattern::P1010: return i % 2 == 1;
    case MaskPattern::P0001: return i % 4 == 0;
    case MaskPattern::P0010: return i % 4 == 1;
    case MaskPattern::P0100: return i % 4 == 2;
    case MaskPattern::P1000: return i % 4 == 3;
    default: return true;
    }
}

/// One sorted (value, index) pair.
struct SortPair {
    float value;    ///< the value (half values widened)
    uint32_t index; ///< its index
};

/// Reads pair `k` of a pair list starting at `base` (element type T).
template <class T>
inline SortPair read_pair(const T* base, size_t k) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(base) + 8 * k;
    T v;
    std::memcpy(&v, p, sizeof(T));
    SortPair out;
    out.value = static_cast<float>(v);
    std::memcpy(&out.index, p + 4, 4);
    return out;
}

/// Writes pair `k` of a pair list starting at `base` (element type T).
template <class T>
inline void write_pair(T* base, size_t k, SortPair pr) {
    unsigned char* p = reinterpret_cast<unsigned char*>(base) + 8 * k;
    std::memset(p, 0, 8);
    const T v = static_cast<T>(pr.value);
    std::memcpy(p, &v, sizeof(T));
    std::memcpy(p + 4, &pr.index, 4);
}

/// Pair capacity of one row of tile type `TileT`.
template <class TileT>
constexpr size_t pairs_per_row() {
    return static_cast<size_t>(TileT::Cols) * sizeof(typename TileT::DType) / 8;
}

/// Checks the tiles of the sort instructions.
template <class TileT>
constexpr void check_sort_tile() {
    static_assert(std::is_same<typename TileT::DType, float>::value || std::is_same<typename TileT::DType, half>::value,
                  "TSORT32 / TMRGSORT: the tiles hold float or half");
    static_assert(TileT::Loc == TileType::Vec && TileT::isRowMajor && !TileT::isBoxedLayout,
                  "TSORT32 / TMRGSORT: the tiles must be plain RowMajor Vec tiles");
}

/// Merges `n` descending pair lists into `out` (capacity `cap` pairs); `exhausted` stops at the
/// first list that runs out. Returns the pairs written; `taken[i]` the pairs taken from list i.
template <class T>
inline size_t merge_lists(const T* const* lists, const size_t* lens, size_t n, T* out, size_t cap, bool exhausted,
                          size_t* taken) {
    std::vector<SortPair> merged;
    for (size_t i = 0; i < n; ++i) taken[i] = 0;
    for (;;) {
        int best = -1;
        SortPair bp{0.0f, 0};
        bool any_done = false;
        for (size_t i = 0; i < n; ++i) {
            if (taken[i] >= lens[i]) {
                any_done = true;
                continue;
            }
            const SortPair p = read_pair(lists[i], taken[i]);
            if (best < 0 || p.value > bp.value) {
                best = static_cast<int>(i);
                bp = p;
            }
        }
        if (best < 0 || (exhausted && any_done) || merged.size() >= cap) break;
        merged.push_back(bp);
        ++taken[best];
    }
    for (size_t k = 0; k < merged.size(); ++k) write_pair(out, k, merged[k]);
    return merged.size();
}

} // namespace sim

/// Index gather: dst(r, c) = src0 at the row-major flat index idx(r, c) (an index outside src0
/// gives 0). `tmp` is unused.
template <typename TileDataD, typename TileDataS0, typename TileDataS1, typename TileDataTmp>
PTO_INST RecordEvent TGATHER(TileDataD& dst, TileDataS0& src0, TileDataS1& src1, TileDataTmp& tmp) {
    using T = typename TileDataD::DType;
    using I = typename TileDataS1::DType;
    static_assert(std::is_same<T, typename TileDataS0::DType>::value, "TGATHER: dst and src need the same element type");
    static_assert(std::is_integral<I>::value && (sizeof(I) == 4 || sizeof(I) == 2),
                  "TGATHER: the index tile holds 16- or 32-bit integers");
    (void)tmp;
    T* d = sim::tile_data(dst, "TGATHER");
    const T* s = sim::tile_data(src0, "TGATHER");
    const I* ix = sim::tile_data(src1, "TGATHER");
    const size_t rows = sim::vrows(dst), cols = sim::vcols(dst);
    sim::check_covers(src1, rows, cols, "TGATHER");
    const int64_t numel = static_cast<int64_t>(TileDataS0::Rows) * TileDataS0::Cols;
    sim::for_each_rc<TileDataD>(rows, cols, [&](size_t r, size_t c) {
        const int64_t flat = static_cast<int64_t>(ix[src1.ElementOffset(r, c)]);
        T v = static_cast<T>(0);
        if (flat >= 0 && flat < numel) {
            v = s[src0.ElementOffset(static_cast<size_t>(flat / TileDataS0::Cols), static_cast<size_t>(flat % TileDataS0::Cols))];
        }
        d[dst.ElementOffset(r, c)] = v;
    });
    return {};
}

/// Index gather without a scratch tile.
template <typename TileDataD, typename TileDataS0, typename TileDataS1,
          std::enable_if_t<is_tile_data_v<TileDataS1>, int> = 0>
PTO_INST RecordEvent TGATHER(TileDataD& dst, TileDataS0& src0, TileDataS1& src1) {
    return TGATHER(dst, src0, src1, dst);
}

/// Mask-pattern gather: the elements of each row of `src` that `maskPattern` selects, packed
/// one after another from the start of `dst`.
template <typename DstTileData, typename SrcTileData, MaskPattern maskPattern>
PTO_INST RecordEvent TGATHER(DstTileData& dst, SrcTileData& src) {
    static_assert(sizeof(typename DstTileData::DType) == sizeof(typename SrcTileData::DType),
                  "TGATHER<MaskPattern>: dst and src need the same element size");
    static_assert(DstTileData::Loc == TileType::Vec && SrcTileData::Loc == TileType::Vec && DstTileData::isRowMajor &&
                      SrcTileData::isRowMajor && !DstTileData::isBoxedLayout && !SrcTileData::isBoxedLayout,
                  "TGATHER<MaskPattern>: dst and src must be plain RowMajor Vec tiles");
    auto* d = sim::tile_data(dst, "TGATHER");
    const auto* s = sim::tile_data(src, "TGATHER");
    const size_t rows = sim::vrows(src), cols = sim::vcols(src);
    size_t k = 0;
    for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < cols; ++c) {
            if (!sim::mask_selects(maskPattern, c)) continue;
            if (k >= static_cast<size_t>(DstTileData::Numel)) {
                sim::fatal("TGATHER<MaskPattern>: the selected elements overflow " + sim::tile_name(dst));
            }
            std::memcpy(d + k, s + src.ElementOffset(r, c), sizeof(*d));
            ++k;
        }
    }
    return {};
}

/// Integer ramp over the valid region in row-major order: start + k (or start - k when
/// `descending` is non-zero).
template <typename TileData, typename T, int descending>
PTO_INST RecordEvent TCI(TileData& dst, T start) {
    using E = typename TileData::DType;
    static_assert(std::is_same<E, T>::value && std::is_integral<E>::value,
                  "TCI<Tile, T, descending>: the tile's element type must be the integer type T");
    E* d = sim::tile_data(dst, "TCI");
    const size_t rows = sim::vrows(dst), cols = sim::vcols(dst);
    for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < cols; ++c) {
            const uint64_t k = r * cols + c;
            const uint64_t v = descending ? static_cast<uint64_t>(start) - k : static_cast<uint64_t>(start) + k;
            d[dst.ElementOffset(r, c)] = static_cast<E>(v);
        }
    }
    return {};
}

/// TCI with a scratch tile (unused on the CPU).
template <typename TileData, typename TileDataTmp, typename T, int descending>
PTO_INST RecordEvent TCI(TileData& dst, T start, TileDataTmp& tmp) {
    (void)tmp;
    return TCI<TileData, T, descending>(dst, start);
}

namespace sim {
/// TSORT32 over rows; `tail` also sorts the last partial block.
template <class D, class S, class I>
inline void sort32(D& dst, S& src, I& idx, bool tail) {
    using T = typename D::DType;
    check_sort_tile<D>();
    check_sort_tile<S>();
    static_assert(std::is_same<T, typename S::DType>::value, "TSORT32: dst and src need the same element type");
    static_assert(std::is_same<typename I::DType, uint32_t>::value && I::isRowMajor && !I::isBoxedLayout,
                  "TSORT32: the index tile is a plain RowMajor uint32_t tile");
    T* d = tile_data(dst, "TSORT32");
    const T* s = tile_data(src, "TSORT32");
    const uint32_t* ix = tile_data(idx, "TSORT32");
    const size_t rows = vrows(dst), cols = vcols(src);
    const size_t n = tail ? cols : cols / 32 * 32;
    if (n > pairs_per_row<D>()) {
        fatal("TSORT32: " + std::to_string(n) + " sorted pairs do not fit a row of " + tile_name(dst));
    }
    check_covers(src, rows, cols, "TSORT32");
    for (size_t r = 0; r < rows; ++r) {
        const size_t ir = vrows(idx) == 1 ? 0 : r;
        for (size_t b = 0; b < n; b += 32) {
            const size_t nb = std::min<size_t>(32, n - b);
            SortPair items[32];
            for (size_t k = 0; k < nb; ++k) {
                items[k].value = static_cast<float>(s[src.ElementOffset(r, b + k)]);
                items[k].index = ix[idx.ElementOffset(ir, b + k)];
            }
            std::stable_sort(items, items + nb, [](const SortPair& x, const SortPair& y) {
                if (x.value != y.value) return x.value > y.value;
                return x.index < y.index;
            });
            T* row = d + dst.ElementOffset(r, 0);
            for (size_t k = 0; k < nb; ++k) write_pair(row, b + k, items[k]);
        }
    }
}
} // namespace sim

/// Sorts each 32-element block of every row of `src` with the indices of `idx` into
/// (value, index) pairs in `dst` (a partial last block is left out).
template <typename DstTileData, typename SrcTileData, typename IdxTileData>
PTO_INST RecordEvent TSORT32(DstTileData& dst, SrcTileData& src, IdxTileData& idx) {
    sim::sort32(dst, src, idx, false);
    return {};
}

/// TSORT32 that also sorts a partial last block (`tmp` is unused).
template <typename DstTileData, typename SrcTileData, typename IdxTileData, typename TmpTileData>
PTO_INST RecordEvent TSORT32(DstTileData& dst, SrcTileData& src, IdxTileData& idx, TmpTileData& tmp) {
    (void)tmp;
    sim::sort32(dst, src, idx, true);
    return {};
}

/// Single-list merge: row 0 of `src` holds groups of four sorted lists of `blockLen` elements
/// each; every group is merged into one sorted list of `dst`.
template <typename DstTileData, typename SrcTileData>
PTO_INST RecordEvent TMRGSORT(DstTileData& dst, SrcTileData& src, uint32_t blockLen) {
    using T = typename DstTileData::DType;
    sim::check_sort_tile<DstTileData>();
    sim::check_sort_tile<SrcTileData>();
    static_assert(std::is_same<T, typename SrcTileData::DType>::value, "TMRGSORT: dst and src need the same element type");
    T* d = sim::tile_data(dst, "TMRGSORT");
    const T* s = sim::tile_data(src, "TMRGSORT");
    const size_t cols = sim::vcols(src);
    const size_t group = static_cast<size_t>(blockLen) * 4;
    if (blockLen == 0 || (blockLen * sizeof(T)) % 8 != 0 || cols % group != 0) {
        sim::fatal("TMRGSORT: the source's " + std::to_string(cols) + " valid elements are not groups of four lists of " +
                   std::to_string(blockLen) + " elements");
    }
    if (cols > static_cast<size_t>(DstTileData::Cols)) {
        sim::fatal("TMRGSORT: " + sim::tile_name(dst) + " is narrower than the source");
    }
    const size_t pairs_per_list = blockLen * sizeof(T) / 8;
    std::vector<T> out(cols);
    for (size_t g = 0; g < cols; g += group) {
        const T* lists[4];
        size_t lens[4], taken[4];
        for (int i = 0; i < 4; ++i) {
            lists[i] = s + g + i * blockLen;
            lens[i] = pairs_per_list;
        }
        sim::merge_lists(lists, lens, 4, out.data() + g, pairs_per_list * 4, false, taken);
    }
    std::memcpy(d, out.data(), cols * sizeof(T));
    return {};
}

namespace sim {
/// The multi-list TMRGSORT body.
template <bool Exhausted, class D, class... S>
inline void merge_sort_lists(D& dst, MrgSortExecutedNumList& executed, S&... srcs) {
    using T = typename D::DType;
    check_sort_tile<D>();
    (check_sort_tile<S>(), ...);
    static_assert((std::is_same<T, typename S::DType>::value && ...), "TMRGSORT: all tiles need the same element type");
    T* d = tile_data(dst, "TMRGSORT");
    const T* lists[4] = {};
    size_t lens[4] = {}, taken[4] = {};
    size_t n = 0;
    ((lists[n] = tile_data(srcs, "TMRGSORT"), lens[n] = vcols(srcs) * sizeof(T) / 8, ++n), ...);
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += lens[i];
    const size_t cap = vcols(dst) * sizeof(T) / 8;
    if (!Exhausted && total > cap) {
        fatal("TMRGSORT: " + std::to_string(total) + " merged pairs do not fit " + tile_name(dst));
    }
    std::vector<T> out(static_cast<size_t>(D::Cols));
    const size_t written = merge_lists(lists, lens, n, out.data(), cap, Exhausted, taken);
    std::memcpy(d, out.data(), written * 8);
    executed.mrgSortList0 = static_cast<uint16_t>(taken[0]);
    executed.mrgSortList1 = static_cast<uint16_t>(taken[1]);
    executed.mrgSortList2 = static_cast<uint16_t>(n > 2 ? taken[2] : 0);
    executed.mrgSortList3 = static_cast<uint16_t>(n > 3 ? taken[3] : 0);
}
} // namespace sim

/// Merges four sorted pair lists into `dst`; `executedNumList` receives the pairs taken from
/// each (all of them unless `exhausted`, which stops at the first list that runs out).
template <typename DstTileData, typename TmpTileData, typename Src0TileData, typename Src1TileData,
          typename Src2TileData, typename Src3TileData, bool exhausted>
PTO_INST RecordEvent TMRGSORT(DstTileData& dst, MrgSortExecutedNumList& executedNumList, TmpTileData& tmp,
                              Src0TileData& src0, Src1TileData& src1, Src2TileData& src2, Src3TileData& src3) {
    (void)tmp;
    sim::merge_sort_lists<exhausted>(dst, executedNumList, src0, src1, src2, src3);
    return {};
}

/// Merges three sorted pair lists (see the four-list form).
template <typename DstTileData, typename TmpTileData, typename Src0TileData, typename Src1TileData,
          typename Src2TileData, bool exhausted>
PTO_INST RecordEvent TMRGSORT(DstTileData& dst, MrgSortExecutedNumList& executedNumList, TmpTileData& tmp,
                              Src0TileData& src0, Src1TileData& src1, Src2TileData& src2) {
    (void)tmp;
    sim::merge_sort_lists<exhausted>(dst, executedNumList, src0, src1, src2);
    return {};
}

/// Merges two sorted pair lists (see the four-list form).
template <typename DstTileData, typename TmpTileData, typename Src0TileData, typename Src1TileData, bool exhausted>
PTO_INST RecordEvent TMRGSORT(DstTileData& dst, MrgSortExecutedNumList& executedNumList, TmpTileData& tmp,
                              Src0TileData& src0, Src1TileData& src1) {
    (void)tmp;
    sim::merge_sort_lists<exhausted>(dst, executedNumList, src0, src1);
    return {};
}

} // namespace pto
