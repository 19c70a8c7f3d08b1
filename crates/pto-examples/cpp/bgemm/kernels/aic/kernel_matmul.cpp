// Kernel Function: kernel_matmul

#include <stdint.h>
#include <stdio.h>

#include "tensor.h"
#include "pto_tile.h"

// --- ptoas-generated code ---
// p[64, 64] = a[64, 64] @ b[64, 64]; a and b are strided views into the full matrices.
static __aicore__ void kernel_matmul(const ChipTensor* a, const ChipTensor* b, const ChipTensor* p) {
    constexpr uint32_t M = 64, N = 64, K = 64;
    float a_buf[M * K];
    float b_buf[K * N];
    float p_buf[M * N];
    pto_tile::TileView av = pto_tile::tile_view(a);
    pto_tile::TileView bv = pto_tile::tile_view(b);
    pto_tile::TileView pv = pto_tile::tile_view(p);
    if (av.rows != M || av.cols != K || bv.rows != K || bv.cols != N || pv.rows != M || pv.cols != N) {
        fprintf(stderr, "kernel_matmul: expected 64x64 tiles\n");
        return;
    }
    pto_tile::load(av, a_buf);
    pto_tile::load(bv, b_buf);
    pto_tile::matmul(a_buf, b_buf, p_buf, M, N, K);
    pto_tile::store(p_buf, pv);
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    const ChipTensor* a = kernel_tensor(args, 0);
    const ChipTensor* b = kernel_tensor(args, 1);
    const ChipTensor* p = kernel_tensor(args, 2);
    kernel_matmul(a, b, p);
}
