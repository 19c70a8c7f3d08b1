// pto/sim/reduce.hpp: reductions (TROWSUM/MAX/MIN/PROD, TCOLSUM/MAX/MIN/PROD) and broadcasts
// (TROWEXPAND*, TCOLEXPAND*).
//
// A row reduction writes one value per source row into a column vector, normally an [R,1]
// ColMajor tile (element (i, 0)); a [1,R] RowMajor destination (one row, several source rows)
// receives it at (0, i) instead, which is the same memory. Column reductions write (0, j) of a
// row vector. Row broadcasts read the per-row scalar from (i, 0) of their operand (so an
// [R,1] vector and PTO-ISA's "mode 2" [R, 32 bytes] operand both work), or from (0, i) of a
// one-row operand; column broadcasts read (0, j). Sums run left to right in float (16-bit
// floats) or the element type; the scratch tiles of the real API are unused.
#pragma once

#include "pto/sim/convert.hpp"

namespace pto {
namespace sim {

/// Offset of entry `i` of a per-row vector `v` when `n` entries are used.
template <class V>
inline size_t row_vector_offset(const V& v, size_t i, size_t n) {
    if (V::Rows == 1 && n > 1) return v.ElementOffset(0, i);
    return v.ElementOffset(i, 0);
}
/// Faults unless a per-row vector `v` holds `n` entries.
template <class V>
inline void check_row_vector(const V& v, size_t n, const char* op) {
    const bool as_row = V::Rows == 1 && n > 1;
    if (n > static_cast<size_t>(as_row ? V::Cols : V::Rows)) {
        fatal(std::string(op) + ": " + tile_name(v) + " cannot hold " + std::to_string(n) + " per-row values");
    }
}
/// Offset of entry `j` of a per-column vector `v` when `n` entries are used.
template <class V>
inline size_t col_vector_offset(const V& v, size_t j, size_t n) {
    if (V::Cols == 1 && n > 1) return v.ElementOffset(j, 0);
    return v.ElementOffset(0, j);
}
/// Faults unless a per-column vector `v` holds `n` entries.
template <class V>
inline void check_col_vector(const V& v, size_t n, const char* op) {
    const bool as_col = V::Cols == 1 && n > 1;
    if (n > static_cast<size_t>(as_col ? V::Rows : V::Cols)) {
        fatal(std::string(op) + ": " + tile_name(v) + " cannot hold " + std::to_string(n) + " per-column values");
    }
}

/// Reduction kinds.
enum class Reduce { Sum, Max, Min, Prod };

/// Combines an accumulator with a value.
template <Reduce K, class C>
inline C reduce_step(C acc, C v) {
    if constexpr (K == Reduce::Sum) return acc + v;
    if constexpr (K == Reduce::Prod) return acc * v;
    if constexpr (K == Reduce::Max) return v > acc ? v : acc;
    if constexpr (K == Reduce::Min) return v < acc ? v : acc;
}

/// The value of an empty reduction.
template <Reduce K, class T>
inline calc_t<T> reduce_identity() {
    using C = calc_t<T>;
    if constexpr (K == Reduce::Sum) return C(0);
    if constexpr (K == Reduce::Prod) return C(1);
    if constexpr (K == Reduce::Max) return static_cast<C>(minus_inf<T>());
    if constexpr (K == Reduce::Min) return static_cast<C>(plus_inf<T>());
}

/// dst(i) = reduce over j of src(i, j).
template <Reduce K, class D, class S>
inline void row_reduce(D& dst, S& src, const char* op) {
    using T = typename D::DType;
    using C = calc_t<T>;
    static_assert(std::is_same<T, typename S::DType>::value, "row reduction: source and destination need the same element type");
    if (tracing()) trace_tiles(op, &dst, &src, static_cast<const S*>(nullptr), vrows(src), vcols(src));
    T* d = tile_data(dst, op);
    const T* s = tile_data(src, op);
    const size_t rows = vrows(src), cols = vcols(src);
    check_row_vector(dst, rows, op);
    for (size_t r = 0; r < rows; ++r) {
        C acc = cols > 0 ? static_cast<C>(s[src.ElementOffset(r, 0)]) : reduce_identity<K, T>();
        if constexpr (!S::isBoxedLayout && S::isRowMajor) {
            const T* row = s + r * S::Cols;
            for (size_t c = 1; c < cols; ++c) acc = reduce_step<K>(acc, static_cast<C>(row[c]));
        } else {
            for (size_t c = 1; c < cols; ++c) acc = reduce_step<K>(acc, static_cast<C>(s[src.ElementOffset(r, c)]));
        }
        d[row_vector_offset(dst, r, rows)] = from_calc<T>(acc);
    }
}

/// dst(j) = reduce over i of src(i, j).
template <Reduce K, class D, class S>
inline void col_reduce(D& dst, S& src, const char* op) {
    using T = typename D::DType;
    using C = calc_t<T>;
    static_assert(std::is_same<T, typename S::DType>::value, "column reduction: source and destination need the same element type");
    if (tracing()) trace_tiles(op, &dst, &src, static_cast<const S*>(nullptr), vrows(src), vcols(src));
    T* d = tile_data(dst, op);
    const T* s = tile_data(src, op);
    const size_t rows = vrows(src), cols = vcols(src);
    check_col_vector(dst, cols, op);
    if constexpr (!S::isBoxedLayout && S::isRowMajor && !D::isBoxedLayout && D::isRowMajor) {
        if (D::Rows == 1 || cols <= 1) {
            std::vector<C> acc(cols);
            for (size_t c = 0; c < cols; ++c) acc[c] = rows > 0 ? static_cast<C>(s[c]) : reduce_identity<K, T>();
            for (size_t r = 1; r < rows; ++r) {
                const T* row = s + r * S::Cols;
                for (size_t c = 0; c < cols; ++c) acc[c] = reduce_step<K>(acc[c], static_cast<C>(row[c]));
            }
            for (size_t c = 0; c < cols; ++c) d[col_vector_offset(dst, c, cols)] = from_calc<T>(acc[c]);
            return;
        }
    }
    for (size_t c = 0; c < cols; ++c) {
        C acc = rows > 0 ? static_cast<C>(s[src.ElementOffset(0, c)]) : reduce_identity<K, T>();
        for (size_t r = 1; r < rows; ++r) acc = reduce_step<K>(acc, static_cast<C>(s[src.ElementOffset(r, c)]));
        d[col_vector_offset(dst, c, cols)] = from_calc<T>(acc);
    }
}

/// dst(i, j) = f(src0(i, j), v(i)) over dst's valid region (v: per-row vector).
template <class D, class S0, class V, class F>
inline void row_expand(D& dst, S0& src0, V& vec, F f, const char* op) {
    using T = typename D::DType;
    using C = calc_t<T>;
    static_assert(std::is_same<T, typename S0::DType>::value && std::is_same<T, typename V::DType>::value,
                  "row broadcast: all tiles need the same element type");
    if (tracing()) trace_tiles(op, &dst, &src0, &vec, vrows(dst), vcols(dst));
    T* d = tile_data(dst, op);
    const T* s = tile_data(src0, op);
    const T* v = tile_data(vec, op);
    const size_t rows = vrows(dst), cols = vcols(dst);
    check_covers(src0, rows, cols, op);
    check_row_vector(vec, rows, op);
    if constexpr (same_plain_layout<D, S0> && D::isRowMajor) {
        for (size_t r = 0; r < rows; ++r) {
            const C x = static_cast<C>(v[row_vector_offset(vec, r, rows)]);
            T* drow = d + r * D::Cols;
            const T* srow = s + r * D::Cols;
#pragma GCC ivdep
            for (size_t c = 0; c < cols; ++c) drow[c] = from_calc<T>(f(static_cast<C>(srow[c]), x));
        }
    } else {
        for_each_rc<D>(rows, cols, [&](size_t r, size_t c) {
            const C x = static_cast<C>(v[row_vector_offset(vec, r, rows)]);
            d[dst.ElementOffset(r, c)] = from_calc<T>(f(static_cast<C>(s[src0.ElementOffset(r, c)]), x));
        });
    }
}

/// dst(i, j) = f(src0(i, j), v(j)) over dst's valid region (v: per-column vector).
template <class D, class S0, class V, class F>
inline void col_expand(D& dst, S0& src0, V& vec, F f, const char* op) {
    using T = typename D::DType;
    using C = calc_t<T>;
    static_assert(std::is_same<T, typename S0::DType>::value && std::is_same<T, typename V::DType>::value,
                  "column broadcast: all tiles need the same element type");
    if (tracing()) trace_tiles(op, &dst, &src0, &vec, vrows(dst), vcols(dst));
    T* d = tile_data(dst, op);
    const T* s = tile_data(src0, op);
    const T* v = tile_data(vec, op);
    const size_t rows = vrows(dst), cols = vcols(dst);
    check_covers(src0, rows, cols, op);
    check_col_vector(vec, cols, op);
    if constexpr (same_plain_layout<D, S0> && D::isRowMajor && !V::isBoxedLayout && V::isRowMajor) {
        if (V::Rows == 1 || cols <= 1) {
            for (size_t r = 0; r < rows; ++r) {
                T* drow = d + r * D::Cols;
                const T* srow = s + r * D::Cols;
#pragma GCC ivdep
                for (size_t c = 0; c < cols; ++c) drow[c] = from_calc<T>(f(static_cast<C>(srow[c]), static_cast<C>(v[c])));
            }
            return;
        }
    }
    for_each_rc<D>(rows, cols, [&](size_t r, size_t c) {
        const C x = static_cast<C>(v[col_vector_offset(vec, c, cols)]);
        d[dst.ElementOffset(r, c)] = from_calc<T>(f(static_cast<C>(s[src0.ElementOffset(r, c)]), x));
    });
}

} // namespace sim

#define PTO_SIM_ROW_REDUCE(NAME, KIND)                                                               \
    /** Row reduction NAME: dst(i) = reduce_j src(i, j) (`tmp` is unused). */                        \
    template <typename TileDataOut, typename TileDataIn, typename TileDataTmp>                       \
    PTO_INST RecordEvent NAME(TileDataOut& dst, TileDataIn& src, TileDataTmp& tmp) {                 \
        (void)tmp;                                                                                   \
        sim::row_reduce<sim::Reduce::KIND>(dst, src, #NAME);                                         \
        return {};                                                                                   \
    }
PTO_SIM_ROW_REDUCE(TROWSUM, Sum)
PTO_SIM_ROW_REDUCE(TROWMAX, Max)
PTO_SIM_ROW_REDUCE(TROWMIN, Min)
PTO_SIM_ROW_REDUCE(TROWPROD, Prod)
#undef PTO_SIM_ROW_REDUCE

#define PTO_SIM_COL_REDUCE(NAME, KIND)                                                               \
    /** Column reduction NAME: dst(j) = reduce_i src(i, j). */                                       \
    template <typename TileDataOut, typename TileDataIn>                                             \
    PTO_INST RecordEvent NAME(TileDataOut& dst, TileDataIn& src) {                                   \
        sim::col_reduce<sim::Reduce::KIND>(dst, src, #NAME);                                         \
        return {};                                                                                   \
    }
PTO_SIM_COL_REDUCE(TCOLSUM, Sum)
PTO_SIM_COL_REDUCE(TCOLMAX, Max)
PTO_SIM_COL_REDUCE(TCOLMIN, Min)
PTO_SIM_COL_REDUCE(TCOLPROD, Prod)
#undef PTO_SIM_COL_REDUCE

/// Column sum with a scratch tile and the binary-tree flag (both unused on the CPU).
template <typename TileDataOut, typename TileDataIn, typename TileDataTmp>
PTO_INST RecordEvent TCOLSUM(TileDataOut& dst, TileDataIn& src, TileDataTmp& tmp, bool isBinary) {
    (void)tmp, (void)isBinary;
    sim::col_reduce<sim::Reduce::Sum>(dst, src, "TCOLSUM");
    return {};
}

/// Broadcasts a per-row vector: dst(i, j) = src(i).
template <typename TileDataDst, typename TileDataSrc>
PTO_INST RecordEvent TROWEXPAND(TileDataDst& dst, TileDataSrc& src) {
    using T = sim::calc_t<typename TileDataDst::DType>;
    sim::row_expand(dst, dst, src, [](T, T x) { return x; }, "TROWEXPAND");
    return {};
}

/// Broadcasts a per-column vector: dst(i, j) = src(j).
template <typename TileDataDst, typename TileDataSrc>
PTO_INST RecordEvent TCOLEXPAND(TileDataDst& dst, TileDataSrc& src) {
    using T = sim::calc_t<typename TileDataDst::DType>;
    sim::col_expand(dst, dst, src, [](T, T x) { return x; }, "TCOLEXPAND");
    return {};
}

#define PTO_SIM_ROW_EXPAND(NAME, EXPR)                                                                       \
    /** Row broadcast NAME: dst(i, j) = f(src0(i, j), src1(i)). */                                           \
    template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1>                            \
    PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1) {                    \
        using T_ = sim::calc_t<typename TileDataDst::DType>;                                                 \
        sim::row_expand(dst, src0, src1, [](T_ a, T_ b) -> T_ { return EXPR; }, #NAME);                      \
        return {};                                                                                           \
    }                                                                                                        \
    /** NAME with a scratch tile (unused on the CPU). */                                                    \
    template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename TileDataTmp>      \
    PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, TileDataTmp& tmp) {  \
        (void)tmp;                                                                                           \
        return NAME(dst, src0, src1);                                                                        \
    }
PTO_SIM_ROW_EXPAND(TROWEXPANDADD, a + b)
PTO_SIM_ROW_EXPAND(TROWEXPANDSUB, a - b)
PTO_SIM_ROW_EXPAND(TROWEXPANDMUL, a * b)
PTO_SIM_ROW_EXPAND(TROWEXPANDMAX, sim::max_of(a, b))
PTO_SIM_ROW_EXPAND(TROWEXPANDMIN, sim::min_of(a, b))
PTO_SIM_ROW_EXPAND(TROWEXPANDEXPDIF, std::exp(a - b))
#undef PTO_SIM_ROW_EXPAND

/// Row broadcast division: dst(i, j) = src0(i, j) / src1(i).
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1>
PTO_INST RecordEvent TROWEXPANDDIV(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1) {
    using T_ = sim::calc_t<typename TileDataDst::DType>;
    sim::row_expand(dst, src0, src1, [](T_ a, T_ b) -> T_ { return sim::div_of(a, b); }, "TROWEXPANDDIV");
    return {};
}
/// TROWEXPANDDIV with a scratch tile (unused on the CPU).
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1,
          typename TileDataTmp>
PTO_INST RecordEvent TROWEXPANDDIV(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, TileDataTmp& tmp) {
    (void)tmp;
    return TROWEXPANDDIV<PrecisionType>(dst, src0, src1);
}

#define PTO_SIM_COL_EXPAND(NAME, EXPR)                                                                       \
    /** Column broadcast NAME: dst(i, j) = f(src0(i, j), src1(j)). */                                        \
    template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1>                            \
    PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1) {                    \
        using T_ = sim::calc_t<typename TileDataDst::DType>;                                                 \
        sim::col_expand(dst, src0, src1, [](T_ a, T_ b) -> T_ { return EXPR; }, #NAME);                      \
        return {};                                                                                           \
    }
PTO_SIM_COL_EXPAND(TCOLEXPANDADD, a + b)
PTO_SIM_COL_EXPAND(TCOLEXPANDSUB, a - b)
PTO_SIM_COL_EXPAND(TCOLEXPANDMUL, a * b)
PTO_SIM_COL_EXPAND(TCOLEXPANDMAX, sim::max_of(a, b))
PTO_SIM_COL_EXPAND(TCOLEXPANDMIN, sim::min_of(a, b))
PTO_SIM_COL_EXPAND(TCOLEXPANDEXPDIF, std::exp(a - b))
#undef PTO_SIM_COL_EXPAND

/// Column broadcast division: dst(i, j) = src0(i, j) / src1(j).
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1>
PTO_INST RecordEvent TCOLEXPANDDIV(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1) {
    using T_ = sim::calc_t<typename TileDataDst::DType>;
    sim::col_expand(dst, src0, src1, [](T_ a, T_ b) -> T_ { return sim::div_of(a, b); }, "TCOLEXPANDDIV");
    return {};
}

} // namespace pto
