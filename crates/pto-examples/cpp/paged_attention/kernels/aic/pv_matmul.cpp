// Kernel Function: pv_matmul

#include <stdint.h>
#include <stdio.h>

#include "tensor.h"
#include "pto_tile.h"

// --- ptoas-generated code ---
// oi_j[H, D] = pij[H, BS] @ vj[BS, D]; vj is a [1, BS, D] view of one value-cache block.
static __aicore__ void pv_matmul(const ChipTensor* pij, const ChipTensor* vj, const ChipTensor* oi_j) {
    constexpr uint32_t H = 16, BS = 64, D = 128;
    float p_buf[H * BS];
    float v_buf[BS * D];
    float o_buf[H * D];
    pto_tile::TileView pv = pto_tile::tile_view(pij);
    pto_tile::TileView vv = pto_tile::tile_view(vj);
    pto_tile::TileView ov = pto_tile::tile_view(oi_j);
    if (pv.rows != H || pv.cols != BS || vv.rows != BS || vv.cols != D || ov.rows != H || ov.cols != D) {
        fprintf(stderr, "pv_matmul: unexpected tile shapes\n");
        return;
    }
    pto_tile::load(pv, p_buf);
    pto_tile::load(vv, v_buf);
    pto_tile::matmul(p_buf, v_buf, o_buf, H, D, BS);
    pto_tile::store(o_buf, ov);
}
// --- Kernel entry point ---
extern "C" void kernel_entry(int64_t* args) {
    const ChipTensor* pij = kernel_tensor(args, 0);
    const ChipTensor* vj = kernel_tensor(args, 1);
    const ChipTensor* oi_j = kernel_tensor(args, 2);
    pv_matmul(pij, vj, oi_j);
}
