// Kernel Function: kernel_add

#include <stdint.h>
#include <stdio.h>

#include "tensor.h"
#include "pto_tile.h"

// --- ptoas-generated code ---
// c[64, 64] += p[64, 64]; c is a strided view into the output matrix.
static __aicore__ void kernel_add(const ChipTensor* p, const ChipTensor* c) {
    constexpr uint32_t M = 64, N = 64;
    float p_buf[M * N];
    float c_buf[M * N];
    pto_tile::TileView pv = pto_tile::tile_view(p);
    pto_tile::TileView cv = pto_tile::tile_view(c);
    if (pv.rows != M || pv.cols != N || cv.rows != M || cv.cols != N) {
        fprintf(stderr, "kernel_add: expected 64x64 tiles\n");
        return;
    }
    pto_tile::load(pv, p_buf);
    pto_tile::load(cv, c_buf);
    pto_tile::add(c_buf, p_buf, c_buf, M * N);
    pto_tile::store(c_buf, cv);
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    const ChipTensor* p = kernel_tensor(args, 0);
    const ChipTensor* c = kernel_tensor(args, 1);
    kernel_add(p, c);
}
