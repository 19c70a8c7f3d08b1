// Kernel Function: kernel_add
// bgemm's C[i, j] += P over PTO-ISA, for the tuning-loop test (tests/tuning.rs): the 64 x 64
// float tile goes through the vector core in chunks of ROWS rows, each chunk loaded (MTE2),
// added (VEC) and stored (MTE3), with the set_flag / wait_flag hand-offs a device kernel
// needs. NBUF is the number of UB buffer pairs: 1 makes chunk i+1's load wait for chunk i's
// store; 2 (double buffering) lets it overlap chunk i's add and store.

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

constexpr int ROWS = 16;
constexpr int NBUF = 1;

constexpr int M = 64;
constexpr int N = 64;
constexpr int LD_P = 64;   // P is a runtime-allocated contiguous 64 x 64 tile
constexpr int LD_C = 256;  // C[i, j] is a view into the 256 x 256 output
constexpr uint32_t CHUNK_BYTES = ROWS * N * sizeof(float);

using Chunk = Tile<TileType::Vec, float, ROWS, N, BLayout::RowMajor, ROWS, N, SLayout::NoneBox, 512, PadValue::Null>;
using GmP = GlobalTensor<float, Shape<1, 1, 1, ROWS, N>, Stride<ROWS * LD_P, ROWS * LD_P, ROWS * LD_P, LD_P, 1>, Layout::ND>;
using GmC = GlobalTensor<float, Shape<1, 1, 1, ROWS, N>, Stride<ROWS * LD_C, ROWS * LD_C, ROWS * LD_C, LD_C, 1>, Layout::ND>;

static __aicore__ void kernel_add(__gm__ float* p, __gm__ float* c) {
#if defined(__DAV_VEC__)
    for (int i = 0; i < M / ROWS; ++i) {
        const int b = i % NBUF;
        const event_t ev = static_cast<event_t>(b);
        Chunk pt;
        Chunk ct;
        TASSIGN(pt, static_cast<uint64_t>(2 * b) * CHUNK_BYTES);
        TASSIGN(ct, static_cast<uint64_t>(2 * b + 1) * CHUNK_BYTES);
        GmP gp(p + i * ROWS * LD_P, Shape<1, 1, 1, ROWS, N>(),
               Stride<ROWS * LD_P, ROWS * LD_P, ROWS * LD_P, LD_P, 1>());
        GmC gc(c + i * ROWS * LD_C, Shape<1, 1, 1, ROWS, N>(),
               Stride<ROWS * LD_C, ROWS * LD_C, ROWS * LD_C, LD_C, 1>());
        if (i >= NBUF) wait_flag(PIPE_MTE3, PIPE_MTE2, ev);  // buffer b's previous store is done
        TLOAD(pt, gp);
        TLOAD(ct, gc);
        set_flag(PIPE_MTE2, PIPE_V, ev);
        wait_flag(PIPE_MTE2, PIPE_V, ev);
        TADD(ct, ct, pt);
        set_flag(PIPE_V, PIPE_MTE3, ev);
        wait_flag(PIPE_V, PIPE_MTE3, ev);
        TSTORE(gc, ct);
        set_flag(PIPE_MTE3, PIPE_MTE2, ev);
    }
    for (int b = 0; b < NBUF; ++b) wait_flag(PIPE_MTE3, PIPE_MTE2, static_cast<event_t>(b));
#endif
}

// --- Kernel entry point ---
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* p_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* c_tensor = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* p = reinterpret_cast<__gm__ float*>(p_tensor->buffer.addr) + p_tensor->start_offset;
    __gm__ float* c = reinterpret_cast<__gm__ float*>(c_tensor->buffer.addr) + c_tensor->start_offset;
    kernel_add(p, c);
}
