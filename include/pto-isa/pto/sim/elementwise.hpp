// pto/sim/elementwise.hpp: element-wise instructions over the destination's valid region.
//
// Tile-tile (TADD, TSUB, TMUL, TDIV, TMAX, TMIN, TAND, TOR, TXOR, TSHL, TSHR), tile-scalar
// (TADDS, TSUBS, TMULS, TDIVS, TMAXS, TMINS, TANDS, TORS, TXORS, TSHLS, TSHRS, TLRELU),
// unary (TEXP, TLOG, TSQRT, TRSQRT, TRECIP, TABS, TNEG, TRELU, TNOT) and TEXPANDS. Element
// (r, c) of the destination is computed from (r, c) of each source; 16-bit floats compute in
// float and round to nearest even. Plain tiles sharing a layout run as contiguous loops.
#pragma once

#include "pto/sim/movement.hpp"

namespace pto {
namespace sim {

/// Faults unless `src`'s physical shape covers the `rows x cols` region read from it.
template <class S>
inline void check_covers(const S& src, size_t rows, size_t cols, const char* op) {
    if (rows > static_cast<size_t>(S::Rows) || cols > static_cast<size_t>(S::Cols)) {
        fatal(std::string(op) + ": the destination's valid region " + std::to_string(rows) + "x" +
              std::to_string(cols) + " is larger than the source " + tile_name(src));
    }
}

/// dst = f(a, b) element-wise (same element types).
template <class D, class A, class B, class F>
inline void binary(D& dst, A& a, B& b, F f, const char* op) {
    using T = typename D::DType;
    static_assert(std::is_same<T, typename A::DType>::value && std::is_same<T, typename B::DType>::value,
                  "element-wise instruction: all tiles need the same element type (convert with TCVT)");
    if (tracing()) trace_tiles(op, &dst, &a, &b, vrows(dst), vcols(dst));
    T* d = tile_data(dst, op);
    const T* pa = tile_data(a, op);
    const T* pb = tile_data(b, op);
    const size_t rows = vrows(dst), cols = vcols(dst);
    check_covers(a, rows, cols, op);
    check_covers(b, rows, cols, op);
    for_each_offset(
        rows, cols,
        [&](size_t id, size_t ia, size_t ib) {
            d[id] = from_calc<T>(f(static_cast<calc_t<T>>(pa[ia]), static_cast<calc_t<T>>(pb[ib])));
        },
        dst, a, b);
}

/// dst = f(a) element-wise; `f` takes and returns the computation type.
template <class D, class A, class F>
inline void unary(D& dst, A& a, F f, const char* op) {
    using T = typename D::DType;
    static_assert(std::is_same<T, typename A::DType>::value,
                  "element-wise instruction: source and destination need the same element type (convert with TCVT)");
    if (tracing()) trace_tiles(op, &dst, &a, static_cast<const A*>(nullptr), vrows(dst), vcols(dst));
    T* d = tile_data(dst, op);
    const T* pa = tile_data(a, op);
    const size_t rows = vrows(dst), cols = vcols(dst);
    check_covers(a, rows, cols, op);
    for_each_offset(
        rows, cols, [&](size_t id, size_t ia) { d[id] = from_calc<T>(f(static_cast<calc_t<T>>(pa[ia]))); }, dst, a);
}

/// Larger of two values (`a > b ? a : b`).
template <class T>
inline T max_of(T a, T b) {
    return a > b ? a : b;
}
/// Smaller of two values (`a < b ? a : b`).
template <class T>
inline T min_of(T a, T b) {
    return a < b ? a : b;
}

/// Integer division that does not trap: x / 0 = 0 and MIN / -1 = MIN.
template <class T>
inline T div_of(T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        if (b == 0) return 0;
        if (std::is_signed<T>::value && b == static_cast<T>(-1)) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
        return a / b;
    } else {
        return a / b;
    }
}

/// Left shift; counts outside [0, bits) give 0.
template <class T>
inline T shl_of(T a, T n) {
    using U = std::make_unsigned_t<T>;
    const U k = static_cast<U>(n);
    if (k >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<U>(a) << k);
}
/// Right shift (arithmetic for signed types); counts outside [0, bits) give 0 or -1.
template <class T>
inline T shr_of(T a, T n) {
    using U = std::make_unsigned_t<T>;
    const U k = static_cast<U>(n);
    if (k >= sizeof(T) * 8) return (std::is_signed<T>::value && a < 0) ? static_cast<T>(-1) : static_cast<T>(0);
    return static_cast<T>(a >> k);
}

/// Two's-complement negation for integers, sign flip for floats.
template <class T>
inline T neg_of(T a) {
    if constexpr (std::is_integral<T>::value) {
        return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
    } else {
        return -a;
    }
}

/// Absolute value (wrapping for the most negative integer; identity for unsigned types).
template <class T>
inline T abs_of(T a) {
    if constexpr (std::is_unsigned<T>::value) {
        return a;
    } else {
        return a < T(0) ? neg_of(a) : a;
    }
}

} // namespace sim

#define PTO_SIM_BINARY(NAME, EXPR, CHECK, CHECKMSG)                                                        \
    /** Element-wise NAME of two tiles. */                                                                 \
    template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1>                          \
    PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1) {                  \
        using T_ = sim::calc_t<typename TileDataDst::DType>;                                               \
        static_assert(CHECK, #NAME ": " CHECKMSG);                                                         \
        sim::binary(dst, src0, src1, [](T_ a, T_ b) -> T_ { return EXPR; }, #NAME);                        \
        return {};                                                                                         \
    }

#define PTO_SIM_ANY true
#define PTO_SIM_INT std::is_integral<typename TileDataDst::DType>::value

PTO_SIM_BINARY(TADD, a + b, PTO_SIM_ANY, "")
PTO_SIM_BINARY(TSUB, a - b, PTO_SIM_ANY, "")
PTO_SIM_BINARY(TMUL, a * b, PTO_SIM_ANY, "")
PTO_SIM_BINARY(TMAX, sim::max_of(a, b), PTO_SIM_ANY, "")
PTO_SIM_BINARY(TMIN, sim::min_of(a, b), PTO_SIM_ANY, "")
PTO_SIM_BINARY(TAND, static_cast<T_>(a & b), PTO_SIM_INT, "needs integer tiles")
PTO_SIM_BINARY(TOR, static_cast<T_>(a | b), PTO_SIM_INT, "needs integer tiles")
PTO_SIM_BINARY(TSHL, sim::shl_of(a, b), PTO_SIM_INT, "needs integer tiles")
PTO_SIM_BINARY(TSHR, sim::shr_of(a, b), PTO_SIM_INT, "needs integer tiles")

/// Element-wise division (`PrecisionType` is accepted and ignored).
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc0,
          typename TileDataSrc1>
PTO_INST RecordEvent TDIV(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1) {
    using T_ = sim::calc_t<typename TileDataDst::DType>;
    sim::binary(dst, src0, src1, [](T_ a, T_ b) -> T_ { return sim::div_of(a, b); }, "TDIV");
    return {};
}

/// Element-wise exclusive or of two integer tiles (`tmp` is unused).
template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename TileDataTmp>
PTO_INST RecordEvent TXOR(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, TileDataTmp& tmp) {
    using T_ = sim::calc_t<typename TileDataDst::DType>;
    static_assert(PTO_SIM_INT, "TXOR: needs integer tiles");
    (void)tmp;
    sim::binary(dst, src0, src1, [](T_ a, T_ b) -> T_ { return static_cast<T_>(a ^ b); }, "TXOR");
    return {};
}

#define PTO_SIM_SCALAR(NAME, EXPR, CHECK, CHECKMSG)                                                         \
    /** Element-wise NAME of a tile and a scalar. */                                                        \
    template <typename TileDataDst, typename TileDataSrc>                                                   \
    PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc& src, typename TileDataSrc::DType scalar) {     \
        using T_ = sim::calc_t<typename TileDataDst::DType>;                                                \
        static_assert(CHECK, #NAME ": " CHECKMSG);                                                          \
        const T_ b = static_cast<T_>(scalar);                                                               \
        sim::unary(dst, src, [b](T_ a) -> T_ { return EXPR; }, #NAME);                                      \
        return {};                                                                                          \
    }

PTO_SIM_SCALAR(TADDS, a + b, PTO_SIM_ANY, "")
PTO_SIM_SCALAR(TSUBS, a - b, PTO_SIM_ANY, "")
PTO_SIM_SCALAR(TMULS, a * b, PTO_SIM_ANY, "")
PTO_SIM_SCALAR(TMAXS, sim::max_of(a, b), PTO_SIM_ANY, "")
PTO_SIM_SCALAR(TMINS, sim::min_of(a, b), PTO_SIM_ANY, "")
PTO_SIM_SCALAR(TANDS, static_cast<T_>(a & b), PTO_SIM_INT, "needs integer tiles")
PTO_SIM_SCALAR(TORS, static_cast<T_>(a | b), PTO_SIM_INT, "needs integer tiles")
PTO_SIM_SCALAR(TSHLS, sim::shl_of(a, b), PTO_SIM_INT, "needs integer tiles")
PTO_SIM_SCALAR(TSHRS, sim::shr_of(a, b), PTO_SIM_INT, "needs integer tiles")
PTO_SIM_SCALAR(TLRELU, (a > T_(0) ? a : a * b), std::is_floating_point<T_>::value, "needs floating-point tiles")

/// Element-wise division by a scalar: dst = src / scalar.
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc>
PTO_INST RecordEvent TDIVS(TileDataDst& dst, TileDataSrc& src, typename TileDataSrc::DType scalar) {
    using T_ = sim::calc_t<typename TileDataDst::DType>;
    const T_ b = static_cast<T_>(scalar);
    sim::unary(dst, src, [b](T_ a) -> T_ { return sim::div_of(a, b); }, "TDIVS");
    return {};
}

/// Element-wise division of a scalar by a tile: dst = scalar / src.
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc>
PTO_INST RecordEvent TDIVS(TileDataDst& dst, typename TileDataDst::DType scalar, TileDataSrc& src) {
    using T_ = sim::calc_t<typename TileDataDst::DType>;
    const T_ b = static_cast<T_>(scalar);
    sim::unary(dst, src, [b](T_ a) -> T_ { return sim::div_of(b, a); }, "TDIVS");
    return {};
}

/// Element-wise exclusive or with a scalar (`tmp` is unused).
template <typename TileDataDst, typename TileDataSrc, typename TileDataTmp>
PTO_INST RecordEvent TXORS(TileDataDst& dst, TileDataSrc& src, typename TileDataSrc::DType scalar, TileDataTmp& tmp) {
    using T_ = sim::calc_t<typename TileDataDst::DType>;
    static_assert(PTO_SIM_INT, "TXORS: needs integer tiles");
    (void)tmp;
    const T_ b = static_cast<T_>(scalar);
    sim::unary(dst, src, [b](T_ a) -> T_ { return static_cast<T_>(a ^ b); }, "TXORS");
    return {};
}

#define PTO_SIM_UNARY(NAME, EXPR, CHECK, CHECKMSG)                                                          \
    /** Element-wise NAME of a tile. */                                                                     \
    template <typename TileDataDst, typename TileDataSrc>                                                   \
    PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc& src) {                                         \
        using T_ = sim::calc_t<typename TileDataDst::DType>;                                                \
        static_assert(CHECK, #NAME ": " CHECKMSG);                                                          \
        sim::unary(dst, src, [](T_ a) -> T_ { return EXPR; }, #NAME);                                       \
        return {};                                                                                          \
    }

#define PTO_SIM_UNARY_PREC(NAME, ALGO, EXPR, CHECK, CHECKMSG)                                               \
    /** Element-wise NAME of a tile (`PrecisionType` is accepted and ignored). */                           \
    template <auto PrecisionType = ALGO::DEFAULT, typename TileDataDst, typename TileDataSrc>               \
    PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc& src) {                                         \
        using T_ = sim::calc_t<typename TileDataDst::DType>;                                                \
        static_assert(CHECK, #NAME ": " CHECKMSG);                                                          \
        sim::unary(dst, src, [](T_ a) -> T_ { return EXPR; }, #NAME);                                       \
        return {};                                                                                          \
    }

#define PTO_SIM_FLOAT std::is_floating_point<T_>::value

PTO_SIM_UNARY_PREC(TEXP, ExpAlgorithm, std::exp(a), PTO_SIM_FLOAT, "needs floating-point tiles")
PTO_SIM_UNARY_PREC(TLOG, LogAlgorithm, std::log(a), PTO_SIM_FLOAT, "needs floating-point tiles")
PTO_SIM_UNARY_PREC(TSQRT, SqrtAlgorithm, std::sqrt(a), PTO_SIM_FLOAT, "needs floating-point tiles")
PTO_SIM_UNARY_PREC(TRSQRT, RsqrtAlgorithm, T_(1) / std::sqrt(a), PTO_SIM_FLOAT, "needs floating-point tiles")
PTO_SIM_UNARY_PREC(TRECIP, RecipAlgorithm, T_(1) / a, PTO_SIM_FLOAT, "needs floating-point tiles")
PTO_SIM_UNARY(TABS, sim::abs_of(a), PTO_SIM_ANY, "")
PTO_SIM_UNARY(TNEG, sim::neg_of(a), PTO_SIM_ANY, "")
PTO_SIM_UNARY(TRELU, sim::relu(a), PTO_SIM_ANY, "")
PTO_SIM_UNARY(TNOT, static_cast<T_>(~a), std::is_integral<T_>::value, "needs integer tiles")

/// TRSQRT with a scratch tile (unused on the CPU).
template <auto PrecisionType = RsqrtAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc,
          typename TileDataTmp, std::enable_if_t<is_tile_data_v<TileDataTmp>, int> = 0>
PTO_INST RecordEvent TRSQRT(TileDataDst& dst, TileDataSrc& src, TileDataTmp& tmp) {
    (void)tmp;
    return TRSQRT<PrecisionType>(dst, src);
}

/// Fills the destination's valid region with `scalar`.
template <typename TileData>
PTO_INST RecordEvent TEXPANDS(TileData& dst, typename TileData::DType scalar) {
    using T = typename TileData::DType;
    if (sim::tracing()) {
        sim::trace_tiles("TEXPANDS", &dst, static_cast<const TileData*>(nullptr),
                         static_cast<const TileData*>(nullptr), sim::vrows(dst), sim::vcols(dst));
    }
    T* d = sim::tile_data(dst, "TEXPANDS");
    sim::for_each_offset(sim::vrows(dst), sim::vcols(dst), [&](size_t id) { d[id] = scalar; }, dst);
    return {};
}

#undef PTO_SIM_BINARY
#undef PTO_SIM_SCALAR
#undef PTO_SIM_UNARY
#undef PTO_SIM_UNARY_PREC
#undef PTO_SIM_ANY
#undef PTO_SIM_INT
#undef PTO_SIM_FLOAT

} // namespace pto
