// Kernel Function: kernel_matmul
// bgemm's P = A[i, k] @ B[k, j] (64 x 64 float tiles, views into 256 x 256 matrices) over
// PTO-ISA, for the tuning-loop test (tests/tuning.rs): GM -> L1 (MTE2), L1 -> L0A / L0B
// (MTE1), the cube (TMATMUL), L0C -> GM (FIXP).

#include <cstdint>

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif

#include <pto/pto-inst.hpp>
#include "tensor.h"

using namespace pto;

constexpr int T = 64;
constexpr int LD = 256;  // A and B are views into 256 x 256 matrices
constexpr uint32_t TILE_BYTES = T * T * sizeof(float);

using MatA = Tile<TileType::Mat, float, T, T, BLayout::ColMajor, T, T, SLayout::RowMajor, 512, PadValue::Null>;
using MatB = Tile<TileType::Mat, float, T, T, BLayout::ColMajor, T, T, SLayout::RowMajor, 512, PadValue::Null>;
using Left = Tile<TileType::Left, float, T, T, BLayout::RowMajor, T, T, SLayout::RowMajor, 512, PadValue::Null>;
using Right = Tile<TileType::Right, float, T, T, BLayout::RowMajor, T, T, SLayout::ColMajor, 512, PadValue::Null>;
using Acc = Tile<TileType::Acc, float, T, T, BLayout::ColMajor, T, T, SLayout::RowMajor, 1024, PadValue::Null>;
using GmIn = GlobalTensor<float, Shape<1, 1, 1, T, T>, Stride<T * LD, T * LD, T * LD, LD, 1>, Layout::ND>;
using GmOut = GlobalTensor<float, Shape<1, 1, 1, T, T>, Stride<T * T, T * T, T * T, T, 1>, Layout::ND>;

static __aicore__ void kernel_matmul(__gm__ float* a, __gm__ float* b, __gm__ float* p) {
#if defined(__DAV_CUBE__)
    MatA a1;
    MatB b1;
    TASSIGN(a1, 0);
    TASSIGN(b1, TILE_BYTES);
    GmIn ga(a, Shape<1, 1, 1, T, T>(), Stride<T * LD, T * LD, T * LD, LD, 1>());
    GmIn gb(b, Shape<1, 1, 1, T, T>(), Stride<T * LD, T * LD, T * LD, LD, 1>());
    TLOAD(a1, ga);
    TLOAD(b1, gb);
    set_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE1, EVENT_ID0);
    Left l0a;
    Right l0b;
    TASSIGN(l0a, 0);
    TASSIGN(l0b, 0);
    TEXTRACT(l0a, a1, 0, 0);
    TEXTRACT(l0b, b1, 0, 0);
    set_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    wait_flag(PIPE_MTE1, PIPE_M, EVENT_ID0);
    Acc acc;
    TASSIGN(acc, 0);
    TMATMUL(acc, l0a, l0b);
    set_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    wait_flag(PIPE_M, PIPE_FIX, EVENT_ID0);
    GmOut gp(p, Shape<1, 1, 1, T, T>(), Stride<T * T, T * T, T * T, T, 1>());
    TSTORE(gp, acc);
#endif
}

// --- Kernel entry point ---
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* a_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* b_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ ChipTensor* p_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[2]);
    __gm__ float* a = reinterpret_cast<__gm__ float*>(a_tensor->buffer.addr) + a_tensor->start_offset;
    __gm__ float* b = reinterpret_cast<__gm__ float*>(b_tensor->buffer.addr) + b_tensor->start_offset;
    __gm__ float* p = reinterpret_cast<__gm__ float*>(p_tensor->buffer.addr) + p_tensor->start_offset;
    kernel_matmul(a, b, p);
}
