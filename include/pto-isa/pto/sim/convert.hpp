// pto/sim/convert.hpp: `TCVT`, element type conversion with a rounding and a saturation mode.
//
// Floating destinations round the exact source value to the destination format (RINT /
// NONE: nearest even, ROUND: nearest away, FLOOR, CEIL, TRUNC, ODD: round to odd); integer
// destinations round floats to an integer the same way and then saturate (ON; NaN -> 0) or
// wrap modulo 2^N (OFF). Without a SaturationMode the conversion does not saturate (OFF).
#pragma once

#include "pto/sim/elementwise.hpp"

namespace pto {
namespace sim {

/// The body of every TCVT form.
template <class D, class S>
inline void convert_tile(D& dst, S& src, RoundMode mode, SaturationMode sat) {
    using TD = typename D::DType;
    using TS = typename S::DType;
    if (tracing()) trace_tiles("TCVT", &dst, &src, static_cast<const S*>(nullptr), vrows(dst), vcols(dst));
    static_assert((is_float_like<TD> || std::is_integral<TD>::value) && (is_float_like<TS> || std::is_integral<TS>::value),
                  "TCVT: converts between float, half, bfloat16_t and integer element types");
    TD* d = tile_data(dst, "TCVT");
    const TS* s = tile_data(src, "TCVT");
    const size_t rows = vrows(dst), cols = vcols(dst);
    check_covers(src, rows, cols, "TCVT");
    // PyPTO's memory planner puts a conversion's source and destination at one address (an
    // f32 accumulator narrowed to bf16 in place). The device streams such a conversion front
    // to back, reading each source element before the write that overlaps it; here the
    // source tile is copied first, so every element is converted from its original value.
    std::vector<TS> snapshot;
    if constexpr (sizeof(TD) != sizeof(TS)) {
        const auto* db = reinterpret_cast<const unsigned char*>(d);
        const auto* sb = reinterpret_cast<const unsigned char*>(s);
        const size_t dn = static_cast<size_t>(D::Rows) * D::Cols * sizeof(TD);
        const size_t sn = static_cast<size_t>(S::Rows) * S::Cols * sizeof(TS);
        if (db < sb + sn && sb < db + dn) {
            snapshot.assign(s, s + static_cast<size_t>(S::Rows) * S::Cols);
            s = snapshot.data();
        }
    }
    if constexpr (std::is_same<TD, bfloat16_t>::value && std::is_same<TS, float>::value) {
        if (sat == SaturationMode::OFF && (mode == RoundMode::CAST_RINT || mode == RoundMode::CAST_NONE)) {
            for_each_offset(rows, cols, [&](size_t id, size_t is) { d[id] = to_bf16_rne(s[is]); }, dst, src);
            return;
        }
    }
    if constexpr (std::is_same<TD, float>::value && is_f16_like<TS>) {
        for_each_offset(rows, cols, [&](size_t id, size_t is) { d[id] = static_cast<float>(s[is]); }, dst, src);
        return;
    }
    for_each_offset(rows, cols, [&](size_t id, size_t is) { d[id] = convert<TD>(s[is], mode, sat); }, dst, src);
}

} // namespace sim

/// Converts `src` into `dst`'s element type with rounding `mode` and saturation `satMode`.
template <typename TileDataD, typename TileDataS>
PTO_INST RecordEvent TCVT(TileDataD& dst, TileDataS& src, RoundMode mode, SaturationMode satMode) {
    sim::convert_tile(dst, src, mode, satMode);
    return {};
}

/// Converts with rounding `mode`, without saturation.
template <typename TileDataD, typename TileDataS>
PTO_INST RecordEvent TCVT(TileDataD& dst, TileDataS& src, RoundMode mode) {
    sim::convert_tile(dst, src, mode, SaturationMode::OFF);
    return {};
}

/// TCVT with a scratch tile (unused on the CPU).
template <typename TileDataD, typename TileDataS, typename TmpTileData,
          std::enable_if_t<is_tile_data_v<TmpTileData>, int> = 0>
PTO_INST RecordEvent TCVT(TileDataD& dst, TileDataS& src, TmpTileData& tmp, RoundMode mode, SaturationMode satMode) {
    (void)tmp;
    sim::convert_tile(dst, src, mode, satMode);
    return {};
}

/// TCVT with a scratch tile (unused on the CPU), without saturation.
template <typename TileDataD, typename TileDataS, typename TmpTileData,
          std::enable_if_t<is_tile_data_v<TmpTileData>, int> = 0>
PTO_INST RecordEvent TCVT(TileDataD& dst, TileDataS& src, TmpTileData& tmp, RoundMode mode) {
    (void)tmp;
    sim::convert_tile(dst, src, mode, SaturationMode::OFF);
    return {};
}

} // namespace pto
