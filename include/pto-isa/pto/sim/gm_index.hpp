// pto/sim/gm_index.hpp: MGATHER (GM -> tile through an index tile) and MSCATTER (tile -> GM
// through an index tile), the instructions PTO-ISA runs as SIMT kernels on A5 and as scalar
// walks on A2/A3.
//
// Both take the mode as their first template argument: `Coalesce::Row` moves whole rows
// (`table[idx[r], :]`, the index tile holding one index per valid row of the data tile, read
// in row-major order from its valid region) and `Coalesce::Elem` single elements
// (`table[idx[r, c]]`, the table seen as a flat array over its five dimensions, the index tile
// covering the data tile's valid region). The table's capacity is its row count (the product
// of dimensions 0..3) for Row and its element count for Elem; an index at or past it is
// handled by the OOB policy (an index is read as an unsigned value, so a negative one is out
// of bounds too). `Undefined` promises in-bounds indices: a write or read outside the table
// would touch memory that is not the table's, so the simulator stops the kernel with a fault
// naming the index instead.
//
// Writes run in row-major order of the source, so the last writer wins on a collision, which
// is both A2/A3's sequential behaviour and A5's `ScatterConflict::Last`; `Default` leaves the
// winner unspecified and is served the same way. `Add` / `Max` / `Min` accumulate atomically
// (safe against other blocks writing the same table).
#pragma once

#include "pto/sim/memory.hpp"

namespace pto {

/// How MGATHER / MSCATTER address the table: whole rows or single elements.
enum class Coalesce : uint8_t {
    Row = 0,  ///< `table[idx[r], :]`: one index per row of the data tile
    Elem = 1, ///< `table[idx[r, c]]`: one index per element, the table flattened
};

/// What MSCATTER does with the table's old value.
enum class ScatterAtomicOp : uint8_t {
    None = 0, ///< store
    Add = 1,  ///< atomic add
    Max = 2,  ///< atomic maximum
    Min = 3,  ///< atomic minimum
};

/// MSCATTER's handling of an index outside the table.
enum class ScatterOOB : uint8_t {
    Undefined = 0, ///< the caller promises in-bounds indices (a fault here otherwise)
    Skip = 1,      ///< the write is dropped
    Clamp = 2,     ///< the index becomes capacity - 1
    Wrap = 3,      ///< the index is taken modulo the capacity
};

/// MSCATTER's choice among colliding plain writes (A5's parameter).
enum class ScatterConflict : uint8_t {
    Last = 0,    ///< the source element latest in row-major order wins
    Default = 1, ///< unspecified (here: as Last)
};

/// MGATHER's handling of an index outside the table.
enum class GatherOOB : uint8_t {
    Undefined = 0, ///< the caller promises in-bounds indices (a fault here otherwise)
    Clamp = 1,     ///< the index becomes capacity - 1
    Wrap = 2,      ///< the index is taken modulo the capacity
    Zero = 3,      ///< the destination element (or row) becomes 0
};

namespace sim {

/// Resolves index `i` against `capacity`: `out` is the index to use; false drops the access.
/// `policy` is 0 Undefined, 1 Skip / Zero (drop), 2 Clamp, 3 Wrap.
inline bool resolve_index(uint64_t i, uint64_t capacity, int policy, uint64_t& out, const char* op,
                          const char* kind) {
    if (i < capacity) {
        out = i;
        return true;
    }
    if (capacity == 0 && policy >= 2) {
        fatal(std::string(op) + ": the table is empty, so no index can be clamped or wrapped into it");
    }
    switch (policy) {
    case 1: return false;
    case 2: out = capacity - 1; return true;
    case 3: out = i % capacity; return true;
    default:
        fatal(std::string(op) + ": " + kind + " index " + std::to_string(i) + " is outside the table (" +
              std::to_string(capacity) + (std::string(kind) == "row" ? " rows" : " elements") +
              ") and the OOB policy is Undefined; pick Skip, Clamp or Wrap, or fix the index");
    }
    return false;
}

/// The element offset (in elements from `g.data()`) of row `row` (over dimensions 0..3) and
/// column `col` of table `g`.
template <class GT>
inline int64_t table_row_offset(const GT& g, uint64_t row, uint64_t col) {
    int64_t off = static_cast<int64_t>(col) * g.GetStride(4);
    for (int d = 3; d >= 0; --d) {
        const uint64_t n = static_cast<uint64_t>(g.GetShape(d));
        off += static_cast<int64_t>(row % n) * g.GetStride(d);
        row /= n;
    }
    return off;
}

/// The element offset of flat element `i` of table `g` (row-major over its five dimensions).
template <class GT>
inline int64_t table_flat_offset(const GT& g, uint64_t i) {
    const uint64_t cols = static_cast<uint64_t>(g.GetShape(4));
    return table_row_offset(g, i / cols, i % cols);
}

/// Rows (dimensions 0..3) and elements of table `g`; faults on a negative extent.
template <class GT>
inline void table_capacity(const GT& g, uint64_t& rows, uint64_t& elems, const char* op) {
    rows = 1;
    for (int d = 0; d < 5; ++d) {
        if (g.GetShape(d) < 0) fatal(std::string(op) + ": " + gt_name(g) + " has a negative extent");
        if (d < 4) rows *= static_cast<uint64_t>(g.GetShape(d));
    }
    elems = rows * static_cast<uint64_t>(g.GetShape(4));
}

/// The index tile's `k`-th valid element in row-major order (Row mode's per-row index).
template <class IdxT>
inline uint64_t nth_index(const IdxT& idx, const typename IdxT::DType* ix, size_t k) {
    const size_t cols = vcols(idx);
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<typename IdxT::DType>>(
        ix[idx.ElementOffset(k / cols, k % cols)]));
}

/// Checks that the index tile covers the data tile's valid region (Elem mode).
template <class IdxT>
inline void check_index_covers(const IdxT& idx, size_t rows, size_t cols, const char* op) {
    if (vrows(idx) < rows || vcols(idx) < cols) {
        fatal(std::string(op) + ": Elem mode needs an index per element of the " + std::to_string(rows) + "x" +
              std::to_string(cols) + " valid region; the index " + tile_name(idx) + " has a valid region of " +
              std::to_string(vrows(idx)) + "x" + std::to_string(vcols(idx)));
    }
}

/// Checks an index tile: 32-bit integers (int32_t or uint32_t).
template <class IdxT>
constexpr void check_index_tile() {
    static_assert(std::is_integral<typename IdxT::DType>::value && sizeof(typename IdxT::DType) == 4,
                  "MGATHER / MSCATTER: the index tile holds int32_t or uint32_t");
    static_assert(IdxT::Loc == TileType::Vec, "MGATHER / MSCATTER: the index tile is a Vec tile");
}

/// Applies `op` of MSCATTER to `*p` with `v`.
template <ScatterAtomicOp Op, class T>
inline void scatter_write(T* p, T v) {
    if constexpr (Op == ScatterAtomicOp::None) {
        *p = v;
    } else if constexpr (Op == ScatterAtomicOp::Add) {
        atomic_add(p, v);
    } else {
        atomic_update(p, [v](T old_value, T& next) {
            const auto a = static_cast<calc_t<T>>(old_value);
            const auto b = static_cast<calc_t<T>>(v);
            next = v;
            return Op == ScatterAtomicOp::Max ? b > a : b < a;
        });
    }
}

/// Row mode's shape rules, shared by MGATHER and MSCATTER: one index per row of the tile
/// (`role`: "destination" or "source"), and tile rows no wider than the table's.
template <typename TileIdx, typename GlobalData>
inline void check_row_mode(const char* op, const char* role, TileIdx& idx, size_t rows, size_t cols,
                           GlobalData& table) {
    if (vrows(idx) * vcols(idx) < rows) {
        fatal(std::string(op) + ": Row mode needs one index per " + role + " row (" + std::to_string(rows) +
              "), the index " + tile_name(idx) + " has " + std::to_string(vrows(idx) * vcols(idx)));
    }
    if (cols > static_cast<size_t>(table.GetShape(4))) {
        fatal(std::string(op) + ": the " + role + "'s rows (" + std::to_string(cols) +
              " valid columns) are wider than the table's rows in " + gt_name(table));
    }
}

/// Element mode's index at `(r, c)` of the index tile, read as unsigned.
template <typename TileIdx>
inline uint64_t element_index(TileIdx& idx, const typename TileIdx::DType* ix, size_t r, size_t c) {
    return static_cast<uint64_t>(
        static_cast<std::make_unsigned_t<typename TileIdx::DType>>(ix[idx.ElementOffset(r, c)]));
}

} // namespace sim

/// Gathers from a GM table into `dst` through the index tile `idx`: whole rows
/// (`Coalesce::Row`, the default) or single elements (`Coalesce::Elem`).
template <Coalesce Mode = Coalesce::Row, GatherOOB Oob = GatherOOB::Undefined, typename TileDst, typename GlobalData,
          typename TileIdx, typename... WaitEvents>
PTO_INST RecordEvent MGATHER(TileDst& dst, GlobalData& table, TileIdx& idx, WaitEvents&... events) {
    static_assert(is_tile_data_v<TileDst> && is_global_data_v<GlobalData> && is_tile_data_v<TileIdx>,
                  "MGATHER(tile, global_tensor, index_tile)");
    using T = typename TileDst::DType;
    static_assert(TileDst::Loc == TileType::Vec, "MGATHER: the destination is a Vec tile (docs/PTO_ISA.md)");
    static_assert(sizeof(T) == sizeof(typename GlobalData::RawDType),
                  "MGATHER copies bits: the tile and the table need the same element size");
    sim::check_index_tile<TileIdx>();
    ((void)events, ...);
    constexpr const char* op = "MGATHER";
    T* d = sim::tile_data(dst, op);
    const typename TileIdx::DType* ix = sim::tile_data(idx, op);
    sim::check_view(table, op);
    uint64_t table_rows = 0, table_elems = 0;
    sim::table_capacity(table, table_rows, table_elems, op);
    const T* g = reinterpret_cast<const T*>(table.data());
    const size_t rows = sim::vrows(dst), cols = sim::vcols(dst);
    const int policy = Oob == GatherOOB::Undefined ? 0 : Oob == GatherOOB::Zero ? 1 : Oob == GatherOOB::Clamp ? 2 : 3;
    if constexpr (Mode == Coalesce::Row) {
        sim::check_row_mode(op, "destination", idx, rows, cols, table);
        for (size_t r = 0; r < rows; ++r) {
            uint64_t row = 0;
            const bool in = sim::resolve_index(sim::nth_index(idx, ix, r), table_rows, policy, row, op, "row");
            for (size_t c = 0; c < cols; ++c) {
                d[dst.ElementOffset(r, c)] = in ? g[sim::table_row_offset(table, row, c)] : static_cast<T>(0);
            }
        }
    } else {
        sim::check_index_covers(idx, rows, cols, op);
        for (size_t r = 0; r < rows; ++r) {
            for (size_t c = 0; c < cols; ++c) {
                const uint64_t i = sim::element_index(idx, ix, r, c);
                uint64_t at = 0;
                const bool in = sim::resolve_index(i, table_elems, policy, at, op, "element");
                d[dst.ElementOffset(r, c)] = in ? g[sim::table_flat_offset(table, at)] : static_cast<T>(0);
            }
        }
    }
    return {};
}

/// Scatters `src` into a GM table through the index tile `idx`: whole rows (`Coalesce::Row`,
/// the default) or single elements (`Coalesce::Elem`), stored or accumulated.
template <Coalesce Mode = Coalesce::Row, ScatterAtomicOp Atomic = ScatterAtomicOp::None,
          ScatterOOB Oob = ScatterOOB::Undefined, ScatterConflict Conflict = ScatterConflict::Last,
          typename GlobalData, typename TileSrc, typename TileIdx, typename... WaitEvents>
PTO_INST RecordEvent MSCATTER(GlobalData& table, TileSrc& src, TileIdx& idx, WaitEvents&... events) {
    static_assert(is_global_data_v<GlobalData> && is_tile_data_v<TileSrc> && is_tile_data_v<TileIdx>,
                  "MSCATTER(global_tensor, tile, index_tile)");
    using T = typename TileSrc::DType;
    static_assert(TileSrc::Loc == TileType::Vec, "MSCATTER: the source is a Vec tile (docs/PTO_ISA.md)");
    static_assert(Atomic == ScatterAtomicOp::None ? sizeof(T) == sizeof(typename GlobalData::RawDType)
                                                  : std::is_same<T, typename GlobalData::RawDType>::value,
                  "MSCATTER: the tile and the table need the same element size (the same type to accumulate)");
    static_assert(Atomic == ScatterAtomicOp::None || sim::is_float_like<T> || std::is_integral<T>::value,
                  "MSCATTER: atomic accumulation needs a float, half, bfloat16_t or integer table");
    sim::check_index_tile<TileIdx>();
    ((void)events, ...);
    constexpr const char* op = "MSCATTER";
    const T* s = sim::tile_data(src, op);
    const typename TileIdx::DType* ix = sim::tile_data(idx, op);
    sim::check_view(table, op);
    uint64_t table_rows = 0, table_elems = 0;
    sim::table_capacity(table, table_rows, table_elems, op);
    T* g = reinterpret_cast<T*>(table.data());
    const size_t rows = sim::vrows(src), cols = sim::vcols(src);
    const int policy = static_cast<int>(Oob);
    if constexpr (Mode == Coalesce::Row) {
        sim::check_row_mode(op, "source", idx, rows, cols, table);
        for (size_t r = 0; r < rows; ++r) {
            uint64_t row = 0;
            if (!sim::resolve_index(sim::nth_index(idx, ix, r), table_rows, policy, row, op, "row")) continue;
            for (size_t c = 0; c < cols; ++c) {
                sim::scatter_write<Atomic>(g + sim::table_row_offset(table, row, c), s[src.ElementOffset(r, c)]);
            }
        }
    } else {
        sim::check_index_covers(idx, rows, cols, op);
        // Row-major order: the last writer in it wins a collision (ScatterConflict::Last).
        for (size_t r = 0; r < rows; ++r) {
            for (size_t c = 0; c < cols; ++c) {
                const uint64_t i = sim::element_index(idx, ix, r, c);
                uint64_t at = 0;
                if (!sim::resolve_index(i, table_elems, policy, at, op, "element")) continue;
                sim::scatter_write<Atomic>(g + sim::table_flat_offset(table, at), s[src.ElementOffset(r, c)]);
            }
        }
    }
    return {};
}

} // namespace pto
