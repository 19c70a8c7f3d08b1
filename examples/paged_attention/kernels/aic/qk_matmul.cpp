// Kernel Function: qk_matmul

#include <stdint.h>
#include <stdio.h>

#include "tensor.h"
#include "pto_tile.h"

// --- ptoas-generated code ---
// sij[H, BS] = qi[H, D] @ kj[BS, D]^T; qi is a [1, H, D] view of the query, kj a [1, BS, D]
// view of one key-cache block.
static __aicore__ void qk_matmul(const ChipTensor* qi, const ChipTensor* kj, const ChipTensor* sij) {
    constexpr uint32_t H = 16, BS = 64, D = 128;
    float q_buf[H * D];
    float k_buf[BS * D];
    float s_buf[H * BS];
    pto_tile::TileView qv = pto_tile::tile_view(qi);
    pto_tile::TileView kv = pto_tile::tile_view(kj);
    pto_tile::TileView sv = pto_tile::tile_view(sij);
    if (qv.rows != H || qv.cols != D || kv.rows != BS || kv.cols != D || sv.rows != H || sv.cols != BS) {
        fprintf(stderr, "qk_matmul: unexpected tile shapes\n");
        return;
    }
    pto_tile::load(qv, q_buf);
    pto_tile::load(kv, k_buf);
    pto_tile::matmul(q_buf, k_buf, s_buf, H, BS, D, pto_tile::MATMUL_B_TRANSPOSED);
    pto_tile::store(s_buf, sv);
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    const ChipTensor* qi = kernel_tensor(args, 0);
    const ChipTensor* kj = kernel_tensor(args, 1);
    const ChipTensor* sij = kernel_tensor(args, 2);
    qk_matmul(qi, kj, sij);
}
