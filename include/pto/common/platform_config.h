// common/platform_config.h: the constants of the platform a kernel or orchestration is built
// for (a2a3 unless the toolchain defines PTO_ARCH_A5, which it does for a5 / a5sim).
#pragma once

#include <stdint.h>

#if defined(PTO_ARCH_A5)
/// Most SPMD blocks (= clusters) of the chip.
constexpr int PLATFORM_MAX_BLOCKDIM = 36;
/// System counter frequency (1 GHz on a5).
constexpr uint64_t PLATFORM_PROF_SYS_CNT_FREQ = 1000000000ull;
#else
/// Most SPMD blocks (= clusters) of the chip.
constexpr int PLATFORM_MAX_BLOCKDIM = 24;
/// System counter frequency (50 MHz on a2a3).
constexpr uint64_t PLATFORM_PROF_SYS_CNT_FREQ = 50000000ull;
#endif
/// AIC cores per block (cluster).
constexpr int PLATFORM_AIC_CORES_PER_BLOCKDIM = 1;
/// AIV cores per block (cluster).
constexpr int PLATFORM_AIV_CORES_PER_BLOCKDIM = 2;
