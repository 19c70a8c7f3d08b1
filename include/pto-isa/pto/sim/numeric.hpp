// pto/sim/numeric.hpp: element-type traits, pad values and conversions with rounding modes.
#pragma once

#include "pto/sim/bf16.hpp"
#include "pto/sim/types.hpp"

namespace pto {
namespace sim {

/// True for the 16-bit floating-point element types.
template <class T>
inline constexpr bool is_f16_like = std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value;

/// True for every floating-point element type (float, double, half, bfloat16_t).
template <class T>
inline constexpr bool is_float_like = std::is_floating_point<T>::value || is_f16_like<T>;

/// The type element arithmetic is done in: float for the 16-bit floats, else the type itself.
template <class T>
using calc_t = std::conditional_t<is_f16_like<T>, float, T>;

/// Readable name of an element type (for messages).
template <class T>
inline const char* type_name() {
    if (std::is_same<T, float>::value) return "float";
    if (std::is_same<T, double>::value) return "double";
    if (std::is_same<T, half>::value) return "half";
    if (std::is_same<T, bfloat16_t>::value) return "bfloat16_t";
    if (std::is_same<T, int8_t>::value) return "int8_t";
    if (std::is_same<T, uint8_t>::value) return "uint8_t";
    if (std::is_same<T, int16_t>::value) return "int16_t";
    if (std::is_same<T, uint16_t>::value) return "uint16_t";
    if (std::is_same<T, int32_t>::value) return "int32_t";
    if (std::is_same<T, uint32_t>::value) return "uint32_t";
    if (std::is_same<T, int64_t>::value) return "int64_t";
    if (std::is_same<T, uint64_t>::value) return "uint64_t";
    return "<element>";
}

/// A small code per element type, stored in pipe slots to catch producer/consumer mismatches.
template <class T>
constexpr uint16_t type_code() {
    if (std::is_same<T, float>::value) return 1;
    if (std::is_same<T, half>::value) return 2;
    if (std::is_same<T, bfloat16_t>::value) return 3;
    if (std::is_same<T, int8_t>::value) return 4;
    if (std::is_same<T, uint8_t>::value) return 5;
    if (std::is_same<T, int16_t>::value) return 6;
    if (std::is_same<T, uint16_t>::value) return 7;
    if (std::is_same<T, int32_t>::value) return 8;
    if (std::is_same<T, uint32_t>::value) return 9;
    if (std::is_same<T, int64_t>::value) return 10;
    if (std::is_same<T, uint64_t>::value) return 11;
    if (std::is_same<T, double>::value) return 12;
    return 100 + static_cast<uint16_t>(sizeof(T));
}

/// Name of the element type with code `c`.
inline const char* type_code_name(uint16_t c) {
    switch (c) {
    case 1: return "float";
    case 2: return "half";
    case 3: return "bfloat16_t";
    case 4: return "int8_t";
    case 5: return "uint8_t";
    case 6: return "int16_t";
    case 7: return "uint16_t";
    case 8: return "int32_t";
    case 9: return "uint32_t";
    case 10: return "int64_t";
    case 11: return "uint64_t";
    case 12: return "double";
    default: return "<element>";
    }
}

/// Largest finite value of `T`.
template <class T>
inline T max_value() {
    if constexpr (std::is_same<T, half>::value) {
        return static_cast<half>(65504.0f);
    } else if constexpr (std::is_same<T, bfloat16_t>::value) {
        return bfloat16_t::from_bits(0x7f7f);
    } else {
        return std::numeric_limits<T>::max();
    }
}

/// Lowest finite value of `T`.
template <class T>
inline T lowest_value() {
    if constexpr (std::is_same<T, half>::value) {
        return static_cast<half>(-65504.0f);
    } else if constexpr (std::is_same<T, bfloat16_t>::value) {
        return bfloat16_t::from_bits(0xff7f);
    } else {
        return std::numeric_limits<T>::lowest();
    }
}

/// +inf for floating types, the largest value for integers.
template <class T>
inline T plus_inf() {
    if constexpr (std::is_same<T, half>::value) {
        return static_cast<half>(std::numeric_limits<float>::infinity());
    } else if constexpr (std::is_same<T, bfloat16_t>::value) {
        return bfloat16_t::from_bits(0x7f80);
    } else if constexpr (std::numeric_limits<T>::has_infinity) {
        return std::numeric_limits<T>::infinity();
    } else {
        return std::numeric_limits<T>::max();
    }
}

/// -inf for floating types, the lowest value for integers.
template <class T>
inline T minus_inf() {
    if constexpr (std::is_same<T, half>::value) {
        return static_cast<half>(-std::numeric_limits<float>::infinity());
    } else if constexpr (std::is_same<T, bfloat16_t>::value) {
        return bfloat16_t::from_bits(0xff80);
    } else if constexpr (std::numeric_limits<T>::has_infinity) {
        return -std::numeric_limits<T>::infinity();
    } else {
        return std::numeric_limits<T>::lowest();
    }
}

/// The value a pad mode writes: Zero/Null 0, Min -inf (type min for integers), Max +inf.
template <class T>
inline T pad_value(PadValue p) {
    switch (p) {
    case PadValue::Min: return minus_inf<T>();
    case PadValue::Max: return plus_inf<T>();
    default: return static_cast<T>(0);
    }
}

/// `T` converted to a float / integer of the same width for bit copies.
template <size_t N>
struct uint_of_size;
template <>
struct uint_of_size<1> {
    using type = uint8_t; ///< the type
};
template <>
struct uint_of_size<2> {
    using type = uint16_t; ///< the type
};
template <>
struct uint_of_size<4> {
    using type = uint32_t; ///< the type
};
template <>
struct uint_of_size<8> {
    using type = uint64_t; ///< the type
};

/// Float -> bfloat16 with round-to-nearest-even (the fast path of every conversion).
inline bfloat16_t to_bf16_rne(float f) { return bfloat16_t::from_bits(bfloat16_t::round_from_float(f)); }

/// Float -> T for the plain "store a computed value" path: nearest-even for floats, C++
/// conversion (after a float computation) for integers.
template <class T, class F>
inline T from_calc(F v) {
    if constexpr (std::is_same<T, bfloat16_t>::value) {
        return to_bf16_rne(static_cast<float>(v));
    } else {
        return static_cast<T>(v);
    }
}

/// Binary format of a floating destination for the rounding helper.
struct FloatFormat {
    int mantissa_bits; ///< explicit mantissa bits
    int min_exp;       ///< exponent of the smallest normal
    int max_exp;       ///< exponent of the largest finite binade
};

/// The format of `T` (float, half, bfloat16_t).
template <class T>
constexpr FloatFormat float_format() {
    if (std::is_same<T, half>::value) return FloatFormat{10, -14, 15};
    if (std::is_same<T, bfloat16_t>::value) return FloatFormat{7, -126, 127};
    return FloatFormat{23, -126, 127};
}

/// Rounds an integer-valued quotient `m` (any double) to an integer by `mode`.
inline double round_integral(double m, RoundMode mode) {
    switch (mode) {
    case RoundMode::CAST_FLOOR: return std::floor(m);
    case RoundMode::CAST_CEIL: return std::ceil(m);
    case RoundMode::CAST_TRUNC: return std::trunc(m);
    case RoundMode::CAST_ROUND: return std::round(m);
    case RoundMode::CAST_ODD: {
        const double f = std::floor(m);
        if (f == m) return m;
        return std::fmod(f, 2.0) != 0.0 ? f : f + 1.0;
    }
    case RoundMode::CAST_NONE:
    case RoundMode::CAST_RINT:
    default: return std::nearbyint(m);
    }
}

/// Rounds `x` (exact in double) to the nearest value of format `fmt` by `mode`, with IEEE
/// overflow: to infinity when rounding away, else to the largest finite value.
inline double round_to_format(double x, FloatFormat fmt, RoundMode mode) {
    if (std::isnan(x) || std::isinf(x) || x == 0.0) {
        return x;
    }
    int e = std::ilogb(x);
    if (e < fmt.min_exp) {
        e = fmt.min_exp;
    }
    const double quantum = std::ldexp(1.0, e - fmt.mantissa_bits);
    const double r = round_integral(x / quantum, mode) * quantum;
    const double largest = std::ldexp(2.0 - std::ldexp(1.0, -fmt.mantissa_bits), fmt.max_exp);
    if (std::fabs(r) > largest) {
        const bool up = x > 0;
        bool to_inf = true;
        switch (mode) {
        case RoundMode::CAST_FLOOR: to_inf = !up; break;
        case RoundMode::CAST_CEIL: to_inf = up; break;
        case RoundMode::CAST_TRUNC:
        case RoundMode::CAST_ODD: to_inf = false; break;
        default: to_inf = true; break;
        }
        if (to_inf) return up ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
        return up ? largest : -largest;
    }
    return r;
}

/// Source element as an exact double.
template <class S>
inline double to_double(S v) {
    if constexpr (std::is_same<S, bfloat16_t>::value || std::is_same<S, half>::value) {
        return static_cast<double>(static_cast<float>(v));
    } else {
        return static_cast<double>(v);
    }
}

/// Saturates or wraps an integral double into `D`.
template <class D>
inline D to_int(double r, SaturationMode sat) {
    if (std::isnan(r)) {
        return static_cast<D>(0);
    }
    constexpr double lo = static_cast<double>(std::numeric_limits<D>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<D>::max());
    if (sat == SaturationMode::ON || sizeof(D) == 8) {
        if (r <= lo) return std::numeric_limits<D>::lowest();
        if (r >= hi) return std::numeric_limits<D>::max();
        return static_cast<D>(r);
    }
    // Saturation off: two's-complement wrap of the (int64-clamped) integer.
    const double l64 = -9223372036854775808.0;
    int64_t i;
    if (r <= l64) {
        i = std::numeric_limits<int64_t>::lowest();
    } else if (r >= -l64) {
        i = std::numeric_limits<int64_t>::max();
    } else {
        i = static_cast<int64_t>(r);
    }
    using U = typename uint_of_size<sizeof(D)>::type;
    return static_cast<D>(static_cast<U>(static_cast<uint64_t>(i)));
}

/// Converts one element with a rounding mode and a saturation mode (the semantics of TCVT).
///
/// Floating destinations: the exact source value is rounded to the destination format by
/// `mode`; with saturation ON finite overflow and infinities clamp to the largest finite value.
/// Integer destinations: floats are rounded to an integer by `mode`, then saturated (ON, NaN
/// -> 0) or wrapped modulo 2^N (OFF); integer sources are saturated (ON) or wrapped (OFF).
template <class D, class S>
inline D convert(S v, RoundMode mode, SaturationMode sat) {
    if constexpr (is_float_like<D>) {
        if constexpr (std::is_same<D, bfloat16_t>::value && std::is_same<S, float>::value) {
            if (sat == SaturationMode::OFF) {
                uint32_t u;
                std::memcpy(&u, &v, sizeof u);
                const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
                switch (mode) {
                case RoundMode::CAST_NONE:
                case RoundMode::CAST_RINT: return to_bf16_rne(v);
                case RoundMode::CAST_ROUND:
                    return bfloat16_t::from_bits(nan ? static_cast<uint16_t>((u >> 16) | 0x40u)
                                                     : static_cast<uint16_t>((u + 0x8000u) >> 16));
                case RoundMode::CAST_TRUNC:
                    return bfloat16_t::from_bits(static_cast<uint16_t>((u >> 16) | (nan ? 0x40u : 0u)));
                default: break;
                }
            }
        }
        if constexpr (std::is_same<D, half>::value && std::is_same<S, float>::value) {
            if (sat == SaturationMode::OFF && (mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_NONE)) {
                return static_cast<half>(v);
            }
        }
        if constexpr (std::is_same<D, S>::value) {
            if (sat == SaturationMode::OFF) return v;
        }
        double r = round_to_format(to_double(v), float_format<D>(), mode);
        if (sat == SaturationMode::ON && !std::isnan(r)) {
            const double largest = to_double(max_value<D>());
            r = std::min(std::max(r, -largest), largest);
        }
        if constexpr (std::is_same<D, bfloat16_t>::value) {
            return to_bf16_rne(static_cast<float>(r)); // exact: r is representable
        } else {
            return static_cast<D>(r);                   // exact: r is representable
        }
    } else if constexpr (is_float_like<S>) {
        return to_int<D>(round_integral(to_double(v), mode), sat);
    } else {
        const double r = static_cast<double>(v);
        if (sat == SaturationMode::ON) return to_int<D>(r, sat);
        using U = typename uint_of_size<sizeof(D)>::type;
        return static_cast<D>(static_cast<U>(v));
    }
}

} // namespace sim
} // namespace pto
