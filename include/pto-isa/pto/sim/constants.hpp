// pto/sim/constants.hpp: the hardware constants of PTO-ISA's <pto/common/constants.hpp> that
// hand-written kernels use to size their tiles (C0_SIZE_BYTE, BLOCK_BYTE_SIZE, ...).
#pragma once

#include <cstdint>

namespace pto {

/// Bytes one vector repeat processes.
constexpr int REPEAT_BYTE = 256;
/// Largest repeat count of one vector instruction.
constexpr int REPEAT_MAX = 255;
/// Bytes of one UB block (the 32-byte alignment unit of NoneBox tiles).
constexpr const int BLOCK_BYTE_SIZE = 32;
/// Largest repeat stride.
constexpr const int REPEAT_STRIDE_MAX = 255;
/// UB blocks one repeat covers.
constexpr const uint64_t BLOCK_MAX_PER_REPEAT = 8;
/// Bits of a vector mask word.
constexpr const uint64_t MASK_LEN = 64;
/// Rows (or 32-byte columns) of one fractal block.
constexpr const int BLOCK_LEN = 16;
/// Bytes of one cube fractal (16 rows x 32 bytes).
constexpr const int CUBE_BLOCK_SIZE = 512;
/// Bytes of one fractal row (C0): a boxed tile's inner dimension is 32 bytes.
constexpr const int C0_SIZE_BYTE = 32;
/// Rows of an Nz fractal.
constexpr const int FRACTAL_NZ_ROW = 16;
/// Elements of an Acc fractal row (16 x 16 blocks).
constexpr const int ACC_C0_SIZE = 16;

} // namespace pto
