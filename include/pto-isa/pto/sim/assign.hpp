// pto/sim/assign.hpp: `TASSIGN`, binding tiles to on-chip memory and GlobalTensors to GM.
//
// A tile is bound to a byte offset in the executing core's memory of its TileType (Vec -> UB,
// Mat -> L1, Left -> L0A, Right -> L0B, Acc -> L0C, Bias -> BIAS, Scaling -> FBUF). As in
// PTO-ISA, an address that already lies inside that memory (a pointer, or an integer holding
// one, e.g. `other.data() + n`) is taken as a pointer. The whole tile (`Rows * Cols` elements)
// must fit: a tile past the end of its memory is a fault naming the kernel, the tile, the
// offset and the capacity.
#pragma once

#include "pto/sim/global_tensor.hpp"

namespace pto {
namespace sim {

/// Binds `tile` to `addr` (offset or in-region pointer) after checking bounds and alignment.
template <class TileT, class AddrT>
inline void assign_tile(TileT& tile, AddrT addr) {
    static_assert(buffer_index(TileT::Loc) >= 0,
                  "TASSIGN: ScaleLeft / ScaleRight / Ctrl tiles are not supported (docs/PTO_ISA.md)");
    const Region reg = region_of(TileT::Loc, "TASSIGN");
    const uint64_t base = reinterpret_cast<uintptr_t>(reg.base);
    uint64_t offset;
    if constexpr (std::is_pointer<AddrT>::value) {
        const uint64_t p = reinterpret_cast<uintptr_t>(addr);
        if (p < base || p >= base + reg.size) {
            fatal("TASSIGN of " + tile_name(tile) + ": pointer " + hex(p) + " is not inside this core's " +
                  reg.name + " (" + std::to_string(reg.size) + " bytes at " + hex(base) + ")");
        }
        offset = p - base;
    } else {
        static_assert(std::is_integral<AddrT>::value || std::is_enum<AddrT>::value,
                      "TASSIGN: the address must be an integer offset or a pointer");
        const uint64_t a = static_cast<uint64_t>(addr);
        offset = (a >= base && a < base + reg.size) ? a - base : a;
    }
    if (offset > reg.size || TileT::Bytes > reg.size - offset) {
        fatal("TASSIGN of " + tile_name(tile) + " at " + reg.name + " offset " + hex(offset) + ": the tile's " +
              std::to_string(TileT::Bytes) + " bytes exceed the " + reg.name + " capacity of " +
              std::to_string(reg.size) + " bytes");
    }
    if (offset % alignof(typename TileT::DType) != 0) {
        fatal("TASSIGN of " + tile_name(tile) + " at " + reg.name + " offset " + hex(offset) +
              ": not aligned to the element size");
    }
    tile.data_ = reinterpret_cast<typename TileT::DType*>(reg.base + offset);
}

} // namespace sim

/// Binds a tile to an on-chip address (byte offset, or pointer into the memory), or a
/// GlobalTensor to a GM pointer.
template <typename T, typename AddrType>
PTO_INST void TASSIGN(T& obj, AddrType addr) {
    if constexpr (is_tile_data_v<T>) {
        sim::assign_tile(obj, addr);
    } else if constexpr (is_global_data_v<T>) {
        static_assert(std::is_pointer<AddrType>::value || std::is_integral<AddrType>::value,
                      "TASSIGN of a GlobalTensor takes a GM pointer");
        obj.data_ = reinterpret_cast<typename T::DType*>(addr);
    } else {
        static_assert(sim::always_false<T>, "TASSIGN: the first argument must be a Tile or a GlobalTensor");
    }
}

/// Binds a tile to a compile-time byte offset.
template <std::size_t Addr, typename T>
PTO_INST std::enable_if_t<is_tile_data_v<T>> TASSIGN(T& obj) {
    sim::assign_tile(obj, static_cast<uint64_t>(Addr));
}

} // namespace pto
