// pto/sim/types.hpp: the enums and small value types of the PTO-ISA C++ API.
#pragma once

#include "pto/sim/config.hpp"

namespace pto {

/// A dynamic (run-time) extent in `Shape`, `Stride` and `Tile` template arguments.
constexpr int DYNAMIC = -1;

/// Which on-chip memory a tile lives in.
enum class TileType : uint8_t {
    Vec,        ///< unified buffer (UB), vector core
    Mat,        ///< L1, cube core
    Left,       ///< L0A, left matmul operand
    Right,      ///< L0B, right matmul operand
    Acc,        ///< L0C, matmul accumulator
    Bias,       ///< bias table
    Scaling,    ///< fixpipe buffer (FBUF)
    ScaleLeft,  ///< MX scale of the left operand (not supported)
    ScaleRight, ///< MX scale of the right operand (not supported)
    Ctrl,       ///< control-signal tile (not supported)
};

/// Block ("big") layout: how rows / fractal blocks follow each other.
enum class BLayout : uint8_t { RowMajor = 0, ColMajor = 1 };

/// Inner ("small") layout of a fractal block; NoneBox = plain row- or column-major.
enum class SLayout : uint8_t { NoneBox = 0, RowMajor = 1, ColMajor = 2 };

/// What `TFILLPAD` (and `TLOAD` of a padded tile) writes outside the valid region.
enum class PadValue : uint8_t { Null = 0, Zero = 1, Max = 2, Min = 3 };

/// Pitch of a boxed tile whose valid extent is below its physical extent.
enum class CompactMode : uint8_t { Null = 0, Normal = 1, RowPlusOne = 2, RowAlignedPadding = 3 };

/// Layout of a GlobalTensor in GM.
enum class Layout : uint8_t {
    ND = 0,
    DN = 1,
    NZ = 2,
    NC1HWC0 = 3,
    NDC1HWC0 = 4,
    FRACTAL_Z = 5,
    FRACTAL_Z_3D = 6,
    MX_A_ZZ = 7,
    MX_A_ND = 8,
    MX_A_DN = 9,
    MX_B_NN = 10,
    MX_B_ND = 11,
    MX_B_DN = 12,
};

/// Dimension indices of a 5-D GlobalTensor.
struct GlobalTensorDim {
    static constexpr int DIM_0 = 0; ///< outermost
    static constexpr int DIM_1 = 1; ///< second
    static constexpr int DIM_2 = 2; ///< third
    static constexpr int DIM_3 = 3; ///< rows
    static constexpr int DIM_4 = 4; ///< columns
    static constexpr int TOTAL_DIM = 5; ///< number of dimensions
};

/// Rounding of `TCVT`.
enum class RoundMode : uint8_t {
    CAST_NONE = 0,  ///< the default: nearest, ties to even
    CAST_RINT = 1,  ///< nearest, ties to even
    CAST_FLOOR = 2, ///< toward -inf
    CAST_CEIL = 3,  ///< toward +inf
    CAST_ROUND = 4, ///< nearest, ties away from zero
    CAST_TRUNC = 5, ///< toward zero
    CAST_ODD = 6,   ///< round to odd (sticky)
};

/// Saturation of `TCVT`.
enum class SaturationMode : uint8_t { ON = 0, OFF = 1 };

/// Atomic behaviour of `TSTORE`.
enum class AtomicType : uint8_t { AtomicNone = 0, AtomicAdd = 1 };

/// ReLU applied by fixpipe moves and stores.
enum class ReluPreMode : uint8_t { NoRelu = 0, NormalRelu = 1 };

/// Acc -> Vec split modes of `TMOV` / `TEXTRACT` (only SingleModeVec0 is supported).
enum class AccToVecMode : uint8_t { SingleModeVec0 = 0, SingleModeVec1 = 1, DualModeSplitM = 2, DualModeSplitN = 3 };

/// Unit-flag phase of `TSTORE` (accepted, no effect on the CPU).
enum class STPhase : uint8_t { Unspecified = 0, Partial = 1, Final = 2 };

/// Unit-flag phase of `TMATMUL` (accepted, no effect on the CPU).
enum class AccPhase : uint8_t { Unspecified = 0, Partial = 1, Final = 2 };

/// Element selection of the mask-pattern `TGATHER` (pattern read right to left).
enum class MaskPattern : uint8_t {
    P0101 = 1, ///< even elements
    P1010 = 2, ///< odd elements
    P0001 = 3, ///< element 0 of every 4
    P0010 = 4, ///< element 1 of every 4
    P0100 = 5, ///< element 2 of every 4
    P1000 = 6, ///< element 3 of every 4
    P1111 = 7, ///< all elements
};

/// Precision selectors of the math instructions (accepted; results do not depend on them).
enum class DivAlgorithm : uint8_t { DEFAULT = 0, HIGH_PRECISION = 1 };
/// See DivAlgorithm.
enum class ExpAlgorithm : uint8_t { DEFAULT = 0, HIGH_PRECISION = 1 };
/// See DivAlgorithm.
enum class LogAlgorithm : uint8_t { DEFAULT = 0, HIGH_PRECISION = 1 };
/// See DivAlgorithm.
enum class RecipAlgorithm : uint8_t { DEFAULT = 0, HIGH_PRECISION = 1 };
/// See DivAlgorithm.
enum class RsqrtAlgorithm : uint8_t { DEFAULT = 0, HIGH_PRECISION = 1 };
/// See DivAlgorithm.
enum class SqrtAlgorithm : uint8_t { DEFAULT = 0, HIGH_PRECISION = 1 };

/// Cross-core FIFO direction (unscoped, as PTO-ISA declares it).
enum Direction : uint8_t {
    UNDEFINED = 0,
    DIR_C2V = 1,      ///< cube produces, vector consumes
    DIR_V2C = 2,      ///< vector produces, cube consumes
    DIR_BOTH = 3,     ///< both directions over one slot ring
    DIR_V2C_CTRL = 4, ///< control signals (not supported)
};

/// How a tile is split between the two AIV lanes of a cluster (unscoped).
enum TileSplitAxis : uint8_t {
    TILE_NO_SPLIT = 0,       ///< one consumer / producer (AIV0), or a broadcast with IsNoSplit
    TILE_UP_DOWN = 1,        ///< row halves: AIV0 upper, AIV1 lower
    TILE_LEFT_RIGHT = 2,     ///< column halves: AIV0 left, AIV1 right
    TILE_UP_DOWN_ODD = 3,    ///< row halves, AIV0 holds one row more
    TILE_LEFT_RIGHT_ODD = 4, ///< column halves, AIV0 holds one column more
};

/// Consumed-element counts written by the multi-list `TMRGSORT`.
struct MrgSortExecutedNumList {
    uint16_t mrgSortList0; ///< pairs taken from list 0
    uint16_t mrgSortList1; ///< pairs taken from list 1
    uint16_t mrgSortList2; ///< pairs taken from list 2
    uint16_t mrgSortList3; ///< pairs taken from list 3
};

/// The event token every instruction returns (nothing waits on it on the CPU).
struct RecordEvent {};

/// Tile-geometry constants.
namespace TileConfig {
static constexpr int alignedSize = 32;    ///< bytes of a block row
static constexpr int fixedRowSize = 16;   ///< rows of a fractal block
static constexpr int fixedColSize = 16;   ///< columns of an Acc block
static constexpr int fractalABSize = 512; ///< bytes of an L0A/L0B/L1 fractal
static constexpr int fractalCSize = 1024; ///< bytes of an L0C fractal
static constexpr int fractalMxSize = 32;  ///< bytes of an MX-scale fractal (not supported)
} // namespace TileConfig

namespace comm {
/// Operation of `pto::comm::TNOTIFY` (pto/sim/comm.hpp): `signal = value` or `signal += value`.
enum class NotifyOp : uint8_t { AtomicAdd = 0, Set = 1 };
/// Comparison of `pto::comm::TWAIT` / `TTEST` (pto/sim/comm.hpp): `signal <cmp> value`.
enum class WaitCmp : uint8_t { EQ = 0, NE = 1, GT = 2, GE = 3, LT = 4, LE = 5 };
} // namespace comm

namespace sim {
/// `false` for any `T`: makes a `static_assert` depend on a template parameter.
template <class... T>
inline constexpr bool always_false = false;
/// `false` for any value: see always_false.
template <auto... V>
inline constexpr bool always_false_v = false;
} // namespace sim

} // namespace pto
