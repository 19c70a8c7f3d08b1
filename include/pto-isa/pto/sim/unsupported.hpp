// pto/sim/unsupported.hpp: names of the PTO-ISA API this implementation does not support.
//
// Each is declared so that a kernel using it fails to compile with a static_assert that names
// the instruction and points at docs/PTO_ISA.md, instead of failing to link or silently doing
// nothing. The synchronous distributed ops (pto::comm TPUT, TGET, TNOTIFY, TWAIT, TTEST,
// TBROADCAST, TREDUCE) are in pto/sim/comm.hpp; the asynchronous forms are declared here.
#pragma once

#include "pto/sim/gm_index.hpp"
#include "pto/sim/sort_gather.hpp"

/// Declares `NAME(args...)` as an unsupported instruction.
#define PTO_SIM_UNSUPPORTED(NAME, WHY)                                                            \
    /** NAME: not supported (docs/PTO_ISA.md). */                                                 \
    template <typename... Args>                                                                   \
    PTO_INST RecordEvent NAME(Args&&... args) {                                                   \
        static_assert(sim::always_false<Args...>, #NAME " is not supported: " WHY " (docs/PTO_ISA.md)"); \
        ((void)args, ...);                                                                        \
        return {};                                                                                \
    }

namespace pto {

/// Comparison of TCMP / TCMPS (the instructions are not supported).
enum class CmpMode : uint8_t { EQ = 0, NE = 1, LT = 2, GT = 3, GE = 4, LE = 5 };

PTO_SIM_UNSUPPORTED(TCMP, "its packed predicate-mask format is not modelled")
PTO_SIM_UNSUPPORTED(TCMPS, "its packed predicate-mask format is not modelled")
PTO_SIM_UNSUPPORTED(TSEL, "it consumes TCMP's packed predicate mask")
PTO_SIM_UNSUPPORTED(TSELS, "it consumes TCMP's packed predicate mask")
PTO_SIM_UNSUPPORTED(TSCATTER, "tile scatters are not modelled")
PTO_SIM_UNSUPPORTED(TGATHERB, "byte-offset gathers are not modelled")
PTO_SIM_UNSUPPORTED(TQUANT, "quantisation is not modelled")
PTO_SIM_UNSUPPORTED(TDEQUANT, "dequantisation is not modelled")
PTO_SIM_UNSUPPORTED(TIMG2COL, "convolution tiles are not modelled")
PTO_SIM_UNSUPPORTED(SETFMATRIX, "convolution tiles are not modelled")
PTO_SIM_UNSUPPORTED(TRANDOM, "the random generator is not modelled")
PTO_SIM_UNSUPPORTED(THISTOGRAM, "histograms are not modelled")
PTO_SIM_UNSUPPORTED(TPREFETCH_ASYNC, "asynchronous DMA needs the device's SDMA engine")
PTO_SIM_UNSUPPORTED(TPUT_ASYNC, "asynchronous DMA needs the device's SDMA engine")
PTO_SIM_UNSUPPORTED(TGET_ASYNC, "asynchronous DMA needs the device's SDMA engine")
PTO_SIM_UNSUPPORTED(TPRELU, "not modelled")
PTO_SIM_UNSUPPORTED(TAXPY, "not modelled")
PTO_SIM_UNSUPPORTED(TPARTADD, "not modelled")
PTO_SIM_UNSUPPORTED(TPARTMUL, "not modelled")
PTO_SIM_UNSUPPORTED(TPARTMAX, "not modelled")
PTO_SIM_UNSUPPORTED(TPARTMIN, "not modelled")
PTO_SIM_UNSUPPORTED(TROWARGMAX, "not modelled")
PTO_SIM_UNSUPPORTED(TROWARGMIN, "not modelled")
PTO_SIM_UNSUPPORTED(TCOLARGMAX, "not modelled")
PTO_SIM_UNSUPPORTED(TCOLARGMIN, "not modelled")

namespace comm {
PTO_SIM_UNSUPPORTED(TPUT_ASYNC, "asynchronous DMA sessions (SDMA / URMA) are not modelled; TPUT is synchronous")
PTO_SIM_UNSUPPORTED(TGET_ASYNC, "asynchronous DMA sessions (SDMA / URMA) are not modelled; TGET is synchronous")
} // namespace comm

/// Prints a tile's valid region to stdout (debugging aid).
template <typename TileData>
PTO_INST void TPRINT(TileData& src) {
    const auto* s = sim::tile_data(src, "TPRINT");
    std::printf("%s\n", sim::tile_name(src).c_str());
    for (size_t r = 0; r < sim::vrows(src); ++r) {
        for (size_t c = 0; c < sim::vcols(src); ++c) {
            std::printf(" %10.4f", static_cast<double>(static_cast<sim::calc_t<typename TileData::DType>>(s[src.ElementOffset(r, c)])));
        }
        std::printf("\n");
    }
}

} // namespace pto

#undef PTO_SIM_UNSUPPORTED
